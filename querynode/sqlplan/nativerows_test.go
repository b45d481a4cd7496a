package sqlplan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"strata/bench/benchsql"
)

// mapRows is how RowsOf read native answers before nativeRows: the whole
// answer decoded into maps. nativeRows must read every answer as it does.
func mapRows(queryType string, result []byte, names []string) ([][]any, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var raw []map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	var rows []map[string]any
	switch queryType {
	case "scan":
		for _, batch := range raw {
			cols, _ := batch["columns"].([]any)
			events, _ := batch["events"].([]any)
			for _, e := range events {
				vals, _ := e.([]any)
				m := map[string]any{}
				for i, c := range cols {
					if i < len(vals) {
						m[fmt.Sprint(c)] = vals[i]
					}
				}
				rows = append(rows, m)
			}
		}
	case "timeseries":
		for _, r := range raw {
			m, _ := r["result"].(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			m[""] = r["timestamp"]
			rows = append(rows, m)
		}
	case "topN":
		for _, r := range raw {
			list, _ := r["result"].([]any)
			for _, e := range list {
				m, _ := e.(map[string]any)
				rows = append(rows, m)
			}
		}
	case "groupBy":
		for _, r := range raw {
			if ev, ok := r["event"].(map[string]any); ok {
				ev[""] = r["timestamp"]
				rows = append(rows, ev)
			} else {
				rows = append(rows, r)
			}
		}
	case "timeBoundary":
		for _, r := range raw {
			m := map[string]any{}
			if res, ok := r["result"].(map[string]any); ok {
				for k, v := range res {
					m["result."+k] = v
				}
			}
			rows = append(rows, m)
		}
		if len(rows) == 0 {
			rows = append(rows, map[string]any{})
		}
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(names))
		for j, n := range names {
			out[i][j] = r[n]
		}
	}
	return out, nil
}

// nativeAnswers are answers of each query type, in the shapes the engine
// writes and in the odd ones JSON allows (null entries, escaped names,
// invalid UTF-8, repeated members, composite values, white space).
var nativeAnswers = []struct {
	queryType, answer string
	names             []string
}{
	{"timeseries", `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"a0":11909,"a1":3557804}},{"timestamp":"2024-01-01T01:00:00.000Z","result":{"a0":1.5e3,"a1":-0.25}}]`, []string{"", "a0", "a1"}},
	{"timeseries", `[{"result":{"a0":null,"x":{"k":[1,"two",{"t":true}]}},"timestamp":1704067200000}]`, []string{"", "a0", "x", "a0"}},
	{"timeseries", `[null,{"timestamp":"t","result":null},{"timestamp":"t","result":{"a0":1},"result":{"a1":2}}]`, []string{"", "a0", "a1"}},
	{"timeseries", "[\n  {\n    \"timestamp\" : \"2024-01-01T00:00:00.000Z\",\n    \"result\" : { \"a\\u0030\" : \"caf\\u00e9\", \"a1\" : [ ] }\n  }\n]\n", []string{"", "a0", "a1"}},
	{"timeseries", `[]`, []string{"", "a0"}},
	{"timeseries", `null`, []string{"", "a0"}},
	{"topN", `[{"timestamp":"2024-01-01T00:00:00.000Z","result":[{"d0":"#ch00","a0":42},{"d0":"#ch01","a0":41},{"d0":null,"a0":0}]}]`, []string{"d0", "a0", ""}},
	{"topN", `[{"timestamp":"t","result":[1,null,{"d0":"a\"b\\c\u00e9"}],"result":[{"d0":"last"}]},{"result":"none"}]`, []string{"d0"}},
	{"topN", "[{\"result\":[{\"d0\":\"\xff\xfe bad utf-8\",\"a0\":1}]}]", []string{"d0", "a0"}},
	{"groupBy", `[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"d1":"#ch00","a0":15566}},{"version":"v1","timestamp":"2024-01-02T00:00:00.000Z","event":{"d1":"#ch01","a0":6828,"":"shadowed"}}]`, []string{"", "d1", "a0"}},
	{"groupBy", `[{"d0":"no event","a0":3,"timestamp":"t"},{"event":5,"d0":"event not an object"},null,{"event":{"d0":"first"},"event":{"a0":2}}]`, []string{"", "d0", "a0", "timestamp", "event"}},
	{"groupBy", `[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"d0":["a","b"],"a0":{"sketch":"AQID"}}}]`, []string{"", "d0", "a0"}},
	{"scan", `[{"segmentId":"s1","columns":["__time","page","added"],"events":[[1704067200000,"Page_1",10],[1704067200001,null,-3]]},{"segmentId":"s2","columns":["__time","page","added"],"events":[[1704067200002,"Page_2"]]}]`, []string{"__time", "page", "added"}},
	{"scan", `[{"events":[[1,2,3],"not a row",[4]],"columns":["a","b","a",7]},{"columns":"x","events":[[1]]},{"events":{}}]`, []string{"a", "b", "7"}},
	{"timeBoundary", `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"minTime":"2024-01-01T00:00:00.000Z","maxTime":"2024-01-07T23:59:59.000Z"}}]`, []string{"result.minTime", "result.maxTime"}},
	{"timeBoundary", `[]`, []string{"result.minTime", "result.maxTime"}},
	{"timeBoundary", `[{"result":{"minTime":"a"},"result":7}]`, []string{"result.minTime"}},
}

// Malformed answers are errors, as they were.
var badAnswers = []string{``, `{}`, `[`, `[{"timestamp":}]`, `[{"result":{"a0":1}]`, `[{"result":{"a0":01}}]`, `[{"result":{"a0":-}}]`,
	`[{"result":{"a0":1.}}]`, `[{"result":{"a0":tru}}]`, `[1]`, `["x"]`, `[{"result":{"a0":"unterminated}}]`, "[{\"result\":{\"a0\":\"ctl\x01\"}}]", `[{"result" {}}]`, `[{} {}]`}

func TestNativeRowsReadAsMapsDid(t *testing.T) {
	for i, c := range nativeAnswers {
		want, err := mapRows(c.queryType, []byte(c.answer), c.names)
		if err != nil {
			t.Fatalf("%d: the reference fails: %v", i, err)
		}
		got, err := nativeRows(c.queryType, []byte(c.answer), c.names)
		if err != nil {
			t.Fatalf("%d %s: %v", i, c.answer, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d %s:\n got %#v\nwant %#v", i, c.answer, got, want)
		}
	}
	for _, qt := range []string{"timeseries", "topN", "groupBy", "scan", "timeBoundary"} {
		for _, bad := range badAnswers {
			if _, err := mapRows(qt, []byte(bad), []string{"a0"}); err == nil {
				continue // the reference reads it (the query type ignores that part)
			}
			if rows, err := nativeRows(qt, []byte(bad), []string{"a0"}); err == nil {
				t.Errorf("%s %q: read as %v, want an error", qt, bad, rows)
			}
		}
	}
}

// FuzzNativeRows: whatever the reference reads, nativeRows reads the same.
func FuzzNativeRows(f *testing.F) {
	for _, c := range nativeAnswers {
		f.Add(c.queryType, c.answer)
	}
	for _, bad := range badAnswers {
		f.Add("groupBy", bad)
	}
	f.Fuzz(func(t *testing.T, queryType, answer string) {
		names := []string{"", "a0", "d0", "result.minTime", "timestamp"}
		got, err := nativeRows(queryType, []byte(answer), names)
		want, werr := mapRows(queryType, []byte(answer), names)
		if werr != nil || !json.Valid([]byte(answer)) {
			return // malformed: an error or rows, never a panic
		}
		if err != nil {
			t.Fatalf("%s %q: %v", queryType, answer, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %q:\n got %#v\nwant %#v", queryType, answer, got, want)
		}
	})
}

// benchAnswers are native answers shaped as the bench queries' (2M rows):
// Q2's 168 hours, Q10's 7 days × 50 channels.
func benchAnswers() map[string][]byte {
	var q10, q2 []string
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := range 7 {
		for c := range 50 {
			q10 = append(q10, fmt.Sprintf(`{"version":"v1","timestamp":"%s","event":{"d1":"#ch%02d","a0":%d}}`, t0.AddDate(0, 0, d).Format("2006-01-02T15:04:05.000Z"), c, 15566+c))
		}
	}
	for h := range 168 {
		q2 = append(q2, fmt.Sprintf(`{"timestamp":"%s","result":{"a0":11909,"a1":%d}}`, t0.Add(time.Duration(h)*time.Hour).Format("2006-01-02T15:04:05.000Z"), 3557804+h))
	}
	return map[string][]byte{"Q2": []byte("[" + strings.Join(q2, ",") + "]"), "Q10": []byte("[" + strings.Join(q10, ",") + "]")}
}

// Reading a native answer allocates little more than the SQL values
// themselves: a few allocations a row. Decoding it into maps first took 28
// a row (Q10: 9837 for 350 rows), 1.2 ms, more than a tenth of the query.
func TestRowsAllocations(t *testing.T) {
	answers := benchAnswers()
	for _, q := range benchsql.Queries {
		answer, ok := answers[q.ID]
		if !ok {
			continue
		}
		p, err := Plan(context.Background(), q.SQL, Request{}, benchCatalog{})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := p.Rows(answer)
		if err != nil {
			t.Fatal(err)
		}
		if q.ID == "Q10" && !reflect.DeepEqual(rows[51], []any{"2024-01-02T00:00:00.000Z", "#ch01", int64(15567)}) {
			t.Fatalf("Q10 row 51: %#v", rows[51])
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := p.Rows(answer); err != nil {
				t.Fatal(err)
			}
		})
		if perRow := allocs / float64(len(rows)); perRow > 10 {
			t.Errorf("%s: %.1f allocations a row (%d rows), want at most 10", q.ID, perRow, len(rows))
		}
	}
}

func BenchmarkRows(b *testing.B) {
	answers := benchAnswers()
	for _, q := range benchsql.Queries {
		answer, ok := answers[q.ID]
		if !ok {
			continue
		}
		p, err := Plan(context.Background(), q.SQL, Request{}, benchCatalog{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q.ID, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Rows(answer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// isUTCMillis is true exactly when printing the parsed time gives the
// string back, so RowsOf may skip parsing it.
func TestIsUTCMillis(t *testing.T) {
	for _, s := range []string{"2024-01-01T00:00:00.000Z", "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z",
		"2024-13-01T00:00:00.000Z", "2024-00-10T00:00:00.000Z", "2024-04-31T00:00:00.000Z", "2024-01-01T24:00:00.000Z",
		"2024-01-01T00:60:00.000Z", "2024-01-01T00:00:60.000Z", "2024-01-01T00:00:00.000+01:00", "2024-01-01T00:00:00Z",
		"2024-01-01 00:00:00.000Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2024-1a-01T00:00:00.000Z"} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		same := err == nil && tm.UTC().Format("2006-01-02T15:04:05.000Z") == s
		if got := isUTCMillis(s); got != same {
			t.Errorf("isUTCMillis(%q) = %v, want %v", s, got, same)
		}
	}
}
