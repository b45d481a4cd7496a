package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"strata/querynode/query"
	"strata/storage/segment"
)

func mustParse(t testing.TB, q string) *query.Query {
	t.Helper()
	pq, err := query.Parse([]byte(q))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return pq
}

func TestTableSegmentTypes(t *testing.T) {
	q := mustParse(t, `{"queryType":"scan","intervals":["1970/2100"],"dataSource":{"type":"inline",
		"columnNames":["s","l","d","mv","none","__time","typed"],"columnTypes":[null,null,null,null,null,null,"LONG"],
		"rows":[["x",1,1,["a","b"],null,"2024-01-02T00:00:00Z","5"],[7,null,2.5,[],null,86400000,"x"],[null,3,"NaN",null,null,null,6.9]]}}`)
	s, err := TableSegment(q.Inline)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]segment.Kind{"s": segment.KindString, "l": segment.KindLong, "d": segment.KindDouble, "mv": segment.KindString,
		"none": segment.KindString, "typed": segment.KindLong}
	for name, k := range want {
		ci, ok := s.Data.Column(name)
		if !ok || ci.Kind != k {
			t.Errorf("column %s: %+v, want kind %v", name, ci, k)
		}
	}
	if ci, _ := s.Data.Column("mv"); !ci.MultiValue {
		t.Errorf("mv is not multi-value")
	}
	if lo, hi := s.Data.TimeRange(); lo != 0 || hi != 1704153600000 {
		t.Errorf("time range %d..%d", lo, hi)
	}
	out, err := New(Options{}).Execute(context.Background(), OverTable(q, q.Inline), []*Segment{s})
	if err != nil {
		t.Fatal(err)
	}
	// "x" in a LONG column is null, 6.9 truncates; an empty array reads as
	// null, as the segment stores it.
	got := string(out)
	for _, part := range []string{
		`"columns":["__time","s","l","d","mv","none","typed"]`,
		`{"__time":0,"s":null,"l":3,"d":"NaN","mv":null,"none":null,"typed":6}`,
		`{"__time":86400000,"s":"7","l":null,"d":2.5,"mv":null,"none":null,"typed":null}`,
		`{"__time":1704153600000,"s":"x","l":1,"d":1.0,"mv":["a","b"],"none":null,"typed":5}`,
	} {
		if !strings.Contains(got, part) {
			t.Errorf("scan result lacks %s:\n%s", part, got)
		}
	}
	if strings.Contains(got, rowColumn) {
		t.Errorf("hidden row column is visible: %s", got)
	}
	if s, err := TableSegment(&query.InlineTable{ColumnNames: []string{"a"}}); s != nil || err != nil {
		t.Errorf("empty table: %v %v", s, err)
	}
	if _, err := TableSegment(&query.InlineTable{ColumnNames: []string{"__time"}, Rows: [][]any{{"yesterday"}}}); err == nil {
		t.Errorf("bad __time accepted")
	}
}

func TestResultTableShapes(t *testing.T) {
	cases := []struct {
		q, result string
		cols      string
		rows      string
	}{
		{`{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"day","dimensions":["p"],"aggregations":[{"type":"count","name":"c"}]}`,
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"p":"a","c":2}},{"version":"v1","timestamp":"2024-01-02T00:00:00.000-01:00","event":{"p":null,"c":1}}]`,
			"__time,p,c", "[1704067200000 a 2] [1704157200000 <nil> 1]"},
		{`{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"all","dimensions":["p"],"aggregations":[{"type":"count","name":"c"}],"context":{"resultAsArray":true}}`,
			`[["a",2],["b",1]]`, "__time,p,c", "[1704067200000 a 2] [1704067200000 b 1]"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"day","aggregations":[{"type":"count","name":"c"}],"context":{"serializeDateTimeAsLong":true}}`,
			`[{"timestamp":5,"result":{"c":3}}]`, "__time,c", "[5 3]"},
		{`{"queryType":"topN","dataSource":"w","intervals":["2024/2025"],"granularity":"all","dimension":"p","metric":"c","threshold":2,"aggregations":[{"type":"count","name":"c"}]}`,
			`[{"timestamp":"1970-01-01T00:00:00.010Z","result":[{"p":"a","c":3},{"p":"b","c":1}]}]`, "__time,p,c", "[10 a 3] [10 b 1]"},
		{`{"queryType":"scan","dataSource":"w","intervals":["2024/2025"]}`,
			`[{"segmentId":"s1","columns":["__time","p"],"events":[{"__time":7,"p":"a"}]},{"segmentId":"s2","columns":["q","__time"],"events":[{"q":1,"__time":8}]}]`,
			"__time,p,q", "[7 a <nil>] [8 <nil> 1]"},
		{`{"queryType":"scan","dataSource":"w","intervals":["2024/2025"],"resultFormat":"compactedList"}`,
			`[{"segmentId":"s1","columns":["p","__time"],"events":[["a",7],["b",9]]}]`, "__time,p", "[7 a] [9 b]"},
	}
	for _, c := range cases {
		tb, err := ResultTable(mustParse(t, c.q), []byte(c.result))
		if err != nil {
			t.Errorf("%s: %v", c.result, err)
			continue
		}
		var rows []string
		for _, r := range tb.Rows {
			rows = append(rows, fmt.Sprint(r))
		}
		if strings.Join(tb.ColumnNames, ",") != c.cols || strings.Join(rows, " ") != c.rows || tb.ColumnTypes[0] != "LONG" {
			t.Errorf("%s: columns %v rows %v", c.result, tb.ColumnNames, rows)
		}
	}
	gb := mustParse(t, cases[0].q)
	for _, bad := range []string{`{}`, `[1]`, `[{"timestamp":"soon","event":{}}]`, `[{"timestamp":0}]`} {
		if _, err := ResultTable(gb, []byte(bad)); err == nil {
			t.Errorf("result %s accepted", bad)
		}
	}
}

// A groupBy over the rows of a groupBy, read back from the rendered inner
// result, gives what the single groupBy gives on the segments.
func TestTableRoundTrip(t *testing.T) {
	segs := buildSegments(t, genRows(3000, 4, 7), 512)
	inner := `{"queryType":"groupBy","dataSource":"test","intervals":["2024-01-01/2024-01-05"],"granularity":"day",
		"dimensions":["channel","user"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"n"}]}`
	out, err := runRaw(segs, inner)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := ResultTable(mustParse(t, inner), out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := TableSegment(tb)
	if err != nil {
		t.Fatal(err)
	}
	outer := `{"queryType":"groupBy","dataSource":"test","intervals":["2024-01-02/2024-01-04"],"granularity":"all",
		"dimensions":["channel"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"longSum","name":"n","fieldName":"n"}]}`
	got, err := runRaw([]*Segment{s}, outer)
	if err != nil {
		t.Fatal(err)
	}
	want, err := runRaw(segs, strings.Replace(outer, `{"type":"longSum","name":"n","fieldName":"n"}`, `{"type":"count","name":"n"}`, 1))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("over the table:\n%s\nover the segments:\n%s", got, want)
	}
	var rows []json.RawMessage
	if json.Unmarshal(got, &rows) != nil || len(rows) < 5 {
		t.Errorf("too few groups to mean anything: %s", got)
	}
}

// BenchmarkSubqueryTable measures what a broker does with a 100,000-row
// subquery result (the default maxSubqueryRows): read the rendered rows,
// materialize them as a segment and run an outer groupBy over it.
func BenchmarkSubqueryTable(b *testing.B) {
	inner := mustParse(b, `{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"day",
		"dimensions":["user","page"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`)
	outer := mustParse(b, `{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"all",
		"dimensions":["user"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"pages"}]}`)
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 100_000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"version":"v1","timestamp":"2024-01-%02dT00:00:00.000Z","event":{"user":"u%04d","page":"p%d","added":%d}}`,
			1+i%28, i%5000, i%97, i%1000)
	}
	sb.WriteString("]")
	result := []byte(sb.String())
	e := New(Options{})
	b.SetBytes(int64(len(result)))
	b.ResetTimer()
	for b.Loop() {
		t, err := ResultTable(inner, result)
		if err != nil {
			b.Fatal(err)
		}
		s, err := TableSegment(t)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Execute(context.Background(), outer, []*Segment{s}); err != nil {
			b.Fatal(err)
		}
	}
}
