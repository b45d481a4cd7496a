package server

import "testing"

// sqlOuterLimit caps what a SQL query answers, as Druid's does: Grafana's
// Druid plugin sends 2000 with each query so that a dashboard never pulls a
// whole table. A query's own smaller LIMIT stands; a UNION ALL, whose parts
// are separate native queries, is capped as a whole; a value that is not a
// count is a 400.
func TestSQLOuterLimitCapsRows(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, c := range []struct{ body, want string }{
		{`{"query":"SELECT page FROM wiki ORDER BY __time","resultFormat":"array","context":{"sqlOuterLimit":2}}`,
			`[["a"],["b"]]`},
		{`{"query":"SELECT page FROM wiki ORDER BY __time LIMIT 1","resultFormat":"array","context":{"sqlOuterLimit":2}}`,
			`[["a"]]`},
		{`{"queryType":"sql","query":"SELECT page, COUNT(*) AS n FROM wiki GROUP BY page ORDER BY page","resultFormat":"array","header":true,"context":{"sqlOuterLimit":2}}`,
			`[["page","n"],["a",3],["b",1]]`},
		{`{"query":"SELECT page FROM wiki WHERE page = 'a' UNION ALL SELECT page FROM wiki WHERE page = 'b'","resultFormat":"array","context":{"sqlOuterLimit":"2"}}`,
			`[["a"],["a"]]`},
		{`{"query":"SET sqlOuterLimit = 1; SELECT page FROM wiki ORDER BY __time","resultFormat":"array"}`,
			`[["a"]]`},
	} {
		if code, body, _ := sqlCall(t, b, c.body); code != 200 || body != c.want {
			t.Errorf("%s: %d %s, want %s", c.body, code, body, c.want)
		}
	}
	if code, body, _ := sqlCall(t, b, `{"query":"SELECT page FROM wiki","context":{"sqlOuterLimit":-1}}`); code != 400 {
		t.Errorf("sqlOuterLimit -1: %d %s, want 400", code, body)
	}
}
