package query

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseInlineDataSource(t *testing.T) {
	q, err := Parse([]byte(`{"queryType":"scan","intervals":["1970/2100"],"dataSource":{"type":"inline",
		"columnNames":["__time","page","n"],"columnTypes":["long","STRING",null],"rows":[[0,"a",1],[1000,null,2.5]]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !q.IsSubqueryBased() || q.DataSource != "" || len(q.DataSources) != 0 || q.SubQuery != nil {
		t.Fatalf("parsed %+v", q)
	}
	in := q.Inline
	if strings.Join(in.ColumnNames, ",") != "__time,page,n" || strings.Join(in.ColumnTypes, ",") != "LONG,STRING," {
		t.Errorf("columns %v types %q", in.ColumnNames, in.ColumnTypes)
	}
	if len(in.Rows) != 2 || in.Rows[1][1] != nil || in.Rows[1][2] != json.Number("2.5") || in.Rows[0][1] != "a" {
		t.Errorf("rows %v", in.Rows)
	}
	q, err = Parse([]byte(`{"queryType":"timeBoundary","dataSource":{"type":"inline","columnNames":["a"],"rows":[]}}`))
	if err != nil || q.Inline.ColumnTypes != nil || len(q.Inline.Rows) != 0 {
		t.Fatalf("without types: %+v %v", q, err)
	}
}

func TestParseQueryDataSource(t *testing.T) {
	inner := `{"queryType":"groupBy","dataSource":"wiki","intervals":["2024/2025"],"granularity":"day","dimensions":["page"],"aggregations":[{"type":"count","name":"c"}]}`
	mid := `{"queryType":"groupBy","dataSource":{"type":"query","query":` + inner + `},"intervals":["2024/2025"],"granularity":"all","dimensions":["page"],"aggregations":[{"type":"longSum","name":"s","fieldName":"c"}]}`
	q, err := Parse([]byte(`{"queryType":"timeseries","dataSource":{"type":"query","query":` + mid + `},"intervals":["2024/2025"],"granularity":"all",
		"aggregations":[{"type":"longMax","name":"m","fieldName":"s"}],"context":{"maxSubqueryRows":"7"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.SubQuery == nil || q.SubQuery.SubQuery == nil || q.SubQuery.SubQuery.DataSource != "wiki" || q.DataSource != "" {
		t.Fatalf("parsed %+v", q)
	}
	if string(q.SubQueryJSON) != mid || string(q.SubQuery.SubQueryJSON) != inner {
		t.Errorf("inner JSON %s", q.SubQueryJSON)
	}
	if q.Context.MaxSubqueryRows == nil || *q.Context.MaxSubqueryRows != 7 || q.SubQuery.Context.MaxSubqueryRows != nil {
		t.Errorf("maxSubqueryRows %v", q.Context.MaxSubqueryRows)
	}
	// Nesting is bounded.
	deep := inner
	for range MaxSubqueryDepth + 1 {
		deep = `{"queryType":"scan","intervals":["2024/2025"],"dataSource":{"type":"query","query":` + deep + `}}`
	}
	if _, err := Parse([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestParseDataSourceErrors(t *testing.T) {
	const iv = `"intervals":["2024/2025"]`
	gb := `{"queryType":"groupBy","dataSource":"w",` + iv + `,"granularity":"all","dimensions":["a"]}`
	cases := []struct {
		body string
		kind ErrorKind
		msg  string
	}{
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","rows":[]}}`, InvalidInput, "[columnNames]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"]}}`, InvalidInput, "[rows]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a","a"],"rows":[]}}`, InvalidInput, "duplicate column name [a]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"],"rows":[[1,2]]}}`, InvalidInput, "row 0 has 2 values"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"],"rows":[{"a":1}]}}`, InvalidInput, "row 0 must be an array"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"],"rows":"x"}}`, InvalidInput, "array of arrays"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"],"columnTypes":["LONG","LONG"],"rows":[]}}`, InvalidInput, "same length"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"],"columnTypes":["BLOB"],"rows":[]}}`, InvalidInput, "unknown column type [BLOB]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"inline","columnNames":["a"],"columnTypes":["COMPLEX<json>"],"rows":[]}}`, Unsupported, "COMPLEX<json>"},
		{`{"queryType":"segmentMetadata","dataSource":{"type":"inline","columnNames":["a"],"rows":[]}}`, Unsupported, "segmentMetadata queries over a dataSource of type [inline]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"query"}}`, InvalidInput, "[query]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"query","query":[1]}}`, InvalidInput, "query object"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"query","query":{"queryType":"nope"}}}`, InvalidInput, "Could not resolve type id 'nope'"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"query","query":{"queryType":"timeBoundary","dataSource":"w"}}}`, Unsupported, "timeBoundary query cannot be used as a subquery"},
		{`{"queryType":"dataSourceMetadata","dataSource":{"type":"query","query":` + gb + `}}`, Unsupported, "type [query]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"lookup","lookup":"x"}}`, InvalidInput, "Lookup [x] not found"},
		{`{"queryType":"segmentMetadata","dataSource":{"type":"lookup","lookup":"x"}}`, Unsupported, "type [lookup]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":{"type":"join"}}`, InvalidInput, "join dataSource: missing required property [left]"},
		{`{"queryType":"segmentMetadata","dataSource":{"type":"join"}}`, Unsupported, "segmentMetadata queries over a dataSource of type [join]"},
		{`{"queryType":"scan",` + iv + `,"dataSource":"w","context":{"maxSubqueryRows":"lots"}}`, InvalidInput, "maxSubqueryRows"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.body))
		if err == nil {
			t.Errorf("%s: no error", c.body)
			continue
		}
		e := AsError(err)
		if e.Kind != c.kind || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: got %v %q, want %v containing %q", c.body, e.Kind, e.Message, c.kind, c.msg)
		}
	}
}
