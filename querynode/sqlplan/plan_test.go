package sqlplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// testCatalog serves one datasource, "wiki".
type testCatalog struct{}

func (testCatalog) Table(_ context.Context, schema, name string) (*Table, error) {
	if name != "wiki" || (schema != "" && schema != "druid") {
		return nil, nil
	}
	return &Table{
		Columns: []Column{{"__time", "TIMESTAMP"}, {"page", "VARCHAR"}, {"channel", "VARCHAR"},
			{"added", "BIGINT"}, {"delta", "DOUBLE"}},
		DataSource: json.RawMessage(`{"type":"table","name":"wiki"}`),
	}, nil
}

func plan(t *testing.T, src string, ctx map[string]any) (*Planned, map[string]any) {
	t.Helper()
	p, err := Plan(context.Background(), src, Request{Context: ctx}, testCatalog{})
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	var m map[string]any
	if err := json.Unmarshal(p.Native, &m); err != nil {
		t.Fatal(err)
	}
	return p, m
}

func has(t *testing.T, native json.RawMessage, parts ...string) {
	t.Helper()
	s := string(native)
	for _, part := range parts {
		if !strings.Contains(s, part) {
			t.Errorf("native query lacks %s:\n%s", part, s)
		}
	}
}

func TestPlanQueryTypes(t *testing.T) {
	for _, c := range []struct {
		sql, queryType string
		parts          []string
	}{
		{`SELECT __time, page FROM wiki WHERE channel = 'en' ORDER BY __time DESC LIMIT 5 OFFSET 2`, "scan",
			[]string{`"columns":["__time","page"]`, `"order":"descending"`, `"limit":5`, `"offset":2`, `{"dimension":"channel","type":"selector","value":"en"}`}},
		{`SELECT COUNT(*), SUM(added), AVG(delta) FROM wiki WHERE __time >= TIMESTAMP '2016-06-27 00:00:00' AND __time < '2016-06-28'`, "timeseries",
			[]string{`"intervals":["2016-06-27T00:00:00.000Z/2016-06-28T00:00:00.000Z"]`, `"type":"longSum"`, `"fn":"quotient"`, `"granularity":"all"`}},
		{`SELECT FLOOR(__time TO HOUR) AS h, COUNT(*) FROM wiki GROUP BY 1`, "timeseries",
			[]string{`"period":"PT1H"`, `"skipEmptyBuckets":true`}},
		{`SELECT page, SUM(added) AS s FROM wiki GROUP BY page ORDER BY s DESC LIMIT 10`, "topN",
			[]string{`"threshold":10`, `"metric":{"metric":"a0","type":"numeric"}`}},
		{`SELECT page, SUM(added) AS s FROM wiki GROUP BY page ORDER BY s DESC LIMIT 10`, "groupBy",
			[]string{`"limitSpec"`, `"direction":"descending"`}},
		{`SELECT channel, COUNT(*) FROM wiki GROUP BY channel HAVING COUNT(*) > 10 ORDER BY 2 LIMIT 3 OFFSET 1`, "groupBy",
			[]string{`"having":{"filter":{"expression":"(\"a0\" \u003e 10)"`, `"offset":1`}},
		{`SELECT MIN(__time), MAX(__time) FROM wiki`, "timeBoundary", nil},
		{`SELECT MAX(__time) FROM wiki`, "timeBoundary", []string{`"bound":"maxTime"`}},
		{`SELECT UPPER(page) AS p, COUNT(DISTINCT channel) FROM wiki GROUP BY 1`, "groupBy",
			[]string{`"expression":"upper(\"page\")"`, `"type":"cardinality"`}},
		{`SELECT TIME_FLOOR(__time, 'P1D') d, EARLIEST(page, 100), LATEST_BY(added, __time), ANY_VALUE(delta) FROM wiki GROUP BY 1`, "timeseries",
			[]string{`"stringFirst"`, `"longLast"`, `"doubleAny"`, `"timeColumn":"__time"`}},
		{`SELECT c, COUNT(*) FROM (SELECT channel AS c, COUNT(*) AS n FROM wiki GROUP BY channel) GROUP BY c`, "groupBy",
			[]string{`"type":"query"`}},
		{`SELECT CASE WHEN added > 10 THEN 'big' ELSE 'small' END, COALESCE(page, 'x'), NULLIF(channel, ''), CAST(added AS DOUBLE) FROM wiki`, "scan",
			[]string{`case_searched(`, `coalesce(`, `if((`, `cast(\"added\", 'DOUBLE')`}},
		{`SELECT APPROX_COUNT_DISTINCT_DS_HLL(page), APPROX_COUNT_DISTINCT_DS_THETA(page), COUNT(page) FROM wiki`, "timeseries",
			[]string{`"HLLSketchBuild"`, `"thetaSketch"`, `"filtered"`}},
	} {
		ctx := map[string]any{}
		if c.queryType == "groupBy" && strings.Contains(c.sql, "LIMIT 10") {
			ctx["useApproximateTopN"] = false
		}
		p, m := plan(t, c.sql, ctx)
		if m["queryType"] != c.queryType {
			t.Errorf("%s: queryType %v, want %s\n%s", c.sql, m["queryType"], c.queryType, p.Native)
			continue
		}
		has(t, p.Native, c.parts...)
	}
}

func TestPlanErrors(t *testing.T) {
	for _, c := range []struct{ sql, category, msg string }{
		{`SELECT FROM wiki`, CategoryInvalidInput, "(line [1], column [8])"},
		{`SELECT nope FROM wiki`, CategoryInvalidInput, "Column 'nope' not found in any table (line [1], column [8])"},
		{`SELECT * FROM nowhere`, CategoryInvalidInput, "Object 'nowhere' not found (line [1], column [15])"},
		{`SELECT COUNT(*) FROM (SELECT page FROM wiki ORDER BY page LIMIT 2)`, CategoryUnsupported, "non-time column"},
		{`SELECT * FROM wiki a JOIN wiki b ON a.page < b.page`, CategoryUnsupported, "join condition is not supported"},
		{`SELECT page FROM wiki INTERSECT SELECT page FROM wiki`, CategoryUnsupported, "INTERSECT is not supported"},
		{`SELECT page FROM wiki UNION SELECT page FROM wiki`, CategoryUnsupported, "UNION is not supported (only UNION ALL"},
		{`SELECT page FROM wiki UNION ALL SELECT page FROM wiki ORDER BY 1`, CategoryUnsupported, "over UNION ALL are not supported"},
		{`SELECT page FROM wiki UNION ALL SELECT page, added FROM wiki`, CategoryInvalidInput, "Column count mismatch"},
		{`SELECT * FROM (SELECT page FROM wiki UNION ALL SELECT page FROM wiki)`, CategoryUnsupported, "UNION is not supported"},
		{`SELECT page, COUNT(*) FROM wiki GROUP BY channel`, CategoryInvalidInput, "not being grouped"},
		{`SELECT TDIGEST_GENERATE_SKETCH(added) FROM wiki`, CategoryUnsupported, "not supported"},
		{`SELECT page FROM wiki WHERE page = ?`, CategoryInvalidInput, "No value bound for parameter"},
		{`SELECT w.page FROM wiki AS x`, CategoryInvalidInput, "Table 'w' not found for column 'page'"},
	} {
		_, err := Plan(context.Background(), c.sql, Request{}, testCatalog{})
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want *Error", c.sql, err)
			continue
		}
		if pe.Category != c.category || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %s %q, want %s containing %q", c.sql, pe.Category, pe.Msg, c.category, c.msg)
		}
	}
}

func TestPlanExactCountDistinct(t *testing.T) {
	p, m := plan(t, `SELECT channel, COUNT(DISTINCT page) AS n FROM wiki WHERE added > 1 GROUP BY channel ORDER BY n DESC`,
		map[string]any{"useApproximateCountDistinct": false})
	if m["queryType"] != "groupBy" {
		t.Fatalf("%s", p.Native)
	}
	has(t, p.Native, `"dataSource":{"query":{"dataSource":{"type":"table","name":"wiki"}`, `"outputName":"d1"`, `"notnull(\"d1\")"`)
	if _, err := Plan(context.Background(), `SELECT COUNT(DISTINCT page), SUM(added) FROM wiki`,
		Request{Context: map[string]any{"useApproximateCountDistinct": false}}, testCatalog{}); err == nil || !strings.Contains(err.Error(), "one aggregate") {
		t.Fatalf("mixed exact distinct: %v", err)
	}
}

func TestPlanSetAndParameters(t *testing.T) {
	p, err := Plan(context.Background(), "SET sqlTimeZone = 'America/Los_Angeles'; SET priority = 5;\nSELECT page FROM wiki WHERE page = ? AND added > ?",
		Request{Parameters: []Param{{Type: "VARCHAR", Value: "Main"}, {Type: "BIGINT", Value: float64(3)}}}, testCatalog{})
	if err != nil {
		t.Fatal(err)
	}
	has(t, p.Native, `"priority":5`, `"sqlTimeZone":"America/Los_Angeles"`, `"value":"Main"`, `"lower":3`)
}

func TestRowsFromNative(t *testing.T) {
	p, _ := plan(t, `SELECT FLOOR(__time TO DAY) AS d, COUNT(*) AS n, AVG(delta) a FROM wiki GROUP BY 1`, nil)
	rows, err := p.Rows([]byte(`[{"timestamp":"2016-06-27T00:00:00.000Z","result":{"a0":3,"a1":1.5}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != "2016-06-27T00:00:00.000Z" || rows[0][1] != int64(3) || rows[0][2] != 1.5 {
		t.Fatalf("rows %v", rows)
	}
	p, _ = plan(t, `SELECT __time, page FROM wiki`, nil)
	rows, err = p.Rows([]byte(`[{"segmentId":"x","columns":["__time","page"],"events":[[1466985600000,"A"],[1466985600001,null]]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0][0] != "2016-06-27T00:00:00.000Z" || rows[0][1] != "A" || rows[1][1] != nil {
		t.Fatalf("rows %v", rows)
	}
}

func TestSubtotalSets(t *testing.T) {
	got := subtotalSets("ROLLUP", []string{"p"}, []string{"a", "b"})
	if fmt.Sprint(got) != "[[p a b] [p a] [p]]" {
		t.Errorf("ROLLUP: %v", got)
	}
	got = subtotalSets("CUBE", nil, []string{"a", "b"})
	if fmt.Sprint(got) != "[[a b] [a] [b] []]" {
		t.Errorf("CUBE: %v", got)
	}
	_, m := plan(t, `SELECT channel, page, COUNT(*) FROM wiki GROUP BY ROLLUP(channel, page)`, nil)
	if m["queryType"] != "groupBy" || fmt.Sprint(m["subtotalsSpec"]) != "[[d0 d1] [d0] []]" {
		t.Errorf("ROLLUP query: %v %v", m["queryType"], m["subtotalsSpec"])
	}
}
