package server

import "testing"

// Druid's scalar functions that were refused before (bitwise, calendar
// TIMESTAMPDIFF, IPv4, PI, Base64), answered by a real broker and
// historical and compared with the native queries they plan onto. wiki's
// rows: 2024-01-01T01:00 a 1, 02:00 b 10, 03:00 a 100, 2024-01-02T01:00 c
// 1000, 05:00 a 10000.
func TestSQLScalarFunctions(t *testing.T) {
	b := sqlCluster(t, nil)
	vc := func(expr, typ string) string {
		return `"virtualColumns":[{"type":"expression","name":"v0","expression":"` + expr + `","outputType":"` + typ + `"}]`
	}
	checkAgainstNative(t, b, []aggCase{
		// added & 12: 1 → 0, 10 → 8, 100 → 4, 1000 → 8, 10000 → 0.
		{`SELECT BITWISE_AND(added, 12) AS b, COUNT(*) AS c FROM wiki GROUP BY 1 ORDER BY 1`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],` + vc(`bitwiseAnd(\"added\", 12)`, "LONG") + `,
				"dimensions":[{"type":"default","dimension":"v0","outputName":"b","outputType":"LONG"}],"aggregations":[{"type":"count","name":"c"}]}`,
			`[[0,2],[4,1],[8,2]]`},
		// Whole months to 2024-03-01T03:00: two from each time on Jan 1 up to
		// 03:00, one from Jan 2 (its day and hour are past the 1st, 03:00).
		{`SELECT TIMESTAMPDIFF(MONTH, __time, TIMESTAMP '2024-03-01 03:00:00') AS m, COUNT(*) AS c FROM wiki GROUP BY 1 ORDER BY 1`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],` + vc(`subtract_months(1709262000000, \"__time\", 'UTC')`, "LONG") + `,
				"dimensions":[{"type":"default","dimension":"v0","outputName":"m","outputType":"LONG"}],"aggregations":[{"type":"count","name":"c"}]}`,
			`[[1,2],[2,3]]`},
		{`SELECT TIMESTAMPDIFF(YEAR, TIMESTAMP '2021-01-01 02:00:00', __time) AS y, COUNT(*) AS c FROM wiki GROUP BY 1 ORDER BY 1`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],` + vc(`div(subtract_months(\"__time\", 1609466400000, 'UTC'), 12)`, "LONG") + `,
				"dimensions":[{"type":"default","dimension":"v0","outputName":"y","outputType":"LONG"}],"aggregations":[{"type":"count","name":"c"}]}`,
			`[[2,1],[3,4]]`},
		// 10 * 2^24 + 1 is 10.0.0.1.
		{`SELECT IPV4_STRINGIFY(added * 16777216 + 1) AS ip, IPV4_PARSE(IPV4_STRINGIFY(added * 16777216 + 1)) AS m FROM wiki WHERE page = 'b'`,
			`{"queryType":"scan","dataSource":"wiki","intervals":["2024/2025"],"filter":{"type":"selector","dimension":"page","value":"b"},
				"virtualColumns":[{"type":"expression","name":"ip","expression":"ipv4_stringify(((\"added\" * 16777216) + 1))","outputType":"STRING"},
					{"type":"expression","name":"m","expression":"ipv4_parse(ipv4_stringify(((\"added\" * 16777216) + 1)))","outputType":"LONG"}],
				"columns":["ip","m"],"resultFormat":"compactedList"}`,
			`[["10.0.0.1",167772161]]`},
	})
	for _, c := range []struct{ sql, want string }{
		{`SELECT ROUND(PI, 4) AS p, DECODE_BASE64_UTF8('aGVsbG8=') AS d, HUMAN_READABLE_BINARY_BYTE_FORMAT(SUM(added) * 1024) AS h FROM wiki`,
			`[[3.1416,"hello","10.85 MiB"]]`},
		// Only 10 * 2^24 + 1 is in 10.0.0.0/8; 1000 * 2^24 + 1 is no IPv4 address.
		{`SELECT COUNT(*) AS c FROM wiki WHERE IPV4_MATCH(added * 16777216 + 1, '10.0.0.0/8')`, `[[1]]`},
		// From 2024-01-01T01:00 to 07-01T00:00 is an hour short of six
		// months: five, one whole quarter.
		{`SELECT page, TIMESTAMPDIFF(QUARTER, __time, TIMESTAMP '2024-07-01 00:00:00') AS q FROM wiki WHERE added = 1`, `[["a",1]]`},
	} {
		code, body, _ := sqlCall(t, b, `{"resultFormat":"array","query":`+string(mustJSON(c.sql))+`}`)
		if code != 200 || body != c.want {
			t.Errorf("%s:\n got %d %s\nwant %s", c.sql, code, body, c.want)
		}
	}
}
