package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSQLArrayAggregates runs ARRAY_AGG, STRING_AGG and array functions
// through SQL and through the native queries Druid plans them onto (written
// by hand), on a real broker and historical: the SQL rows must be want
// (arrays as JSON arrays: sqlStringifyArrays false), and every scalar of
// want must be in the native answer.
func TestSQLArrayAggregates(t *testing.T) {
	b := sqlCluster(t, nil)
	const ds = `"dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	for _, c := range []aggCase{
		{`SELECT ARRAY_AGG(DISTINCT page) AS p, STRING_AGG(DISTINCT page, '|') AS s, ARRAY_LENGTH(ARRAY_AGG(added)) AS n FROM wiki`,
			`{"queryType":"timeseries",` + ds + `,"aggregations":[
			  {"type":"expression","name":"p","fields":["page"],"initialValue":"ARRAY<STRING>[]","fold":"array_set_add(\"__acc\", \"page\")","combine":"array_set_add_all(\"__acc\", \"p\")"},
			  {"type":"filtered","filter":{"type":"not","field":{"type":"null","column":"page"}},"aggregator":{"type":"expression","name":"s","fields":["page"],"fold":"array_set_add(\"__acc\", \"page\")","combine":"array_set_add_all(\"__acc\", \"s\")","finalize":"if(array_length(o) == 0, null, array_to_string(o, '|'))"}},
			  {"type":"expression","name":"a","fields":["added"],"initialValue":"ARRAY<LONG>[]","fold":"array_append(\"__acc\", \"added\")","combine":"array_concat(\"__acc\", \"a\")"}],
			  "postAggregations":[{"type":"expression","name":"n","expression":"array_length(\"a\")"}]}`,
			`[[["a","b","c"],"a|b|c",5]]`},
		{`SELECT page, ARRAY_AGG(DISTINCT added) AS a, ARRAY_CONTAINS(ARRAY_AGG(added), 100) AS has FROM wiki GROUP BY page`,
			`{"queryType":"groupBy",` + ds + `,"dimensions":["page"],"aggregations":[
			  {"type":"expression","name":"a","fields":["added"],"initialValue":"ARRAY<LONG>[]","fold":"array_set_add(\"__acc\", \"added\")","combine":"array_set_add_all(\"__acc\", \"a\")"}]}`,
			`[["a",[1,100,10000],true],["b",[10],false],["c",[1000],false]]`},
		{`SELECT COUNT(*) AS n FROM (SELECT page, ARRAY_AGG(added) AS a FROM wiki GROUP BY page) WHERE ARRAY_LENGTH(a) > 1`,
			`{"queryType":"groupBy",` + ds + `,"dimensions":["page"],"aggregations":[
			  {"type":"expression","name":"a","fields":["added"],"fold":"array_append(\"__acc\", \"added\")","combine":"array_concat(\"__acc\", \"a\")"}],
			  "having":{"type":"filter","filter":{"type":"expression","expression":"array_length(\"a\") > 1"}},"postAggregations":[{"type":"expression","name":"one","expression":"1"}]}`,
			`[[1]]`},
		{`SELECT ARRAY[1, 2] AS a, ARRAY_TO_STRING(ARRAY['x', 'y'], '-') AS s`,
			`{"queryType":"timeseries","dataSource":{"type":"inline","columnNames":["ZERO"],"columnTypes":["LONG"],"rows":[[0]]},"granularity":"all","intervals":["1970/2100"],
			  "postAggregations":[{"type":"expression","name":"a","expression":"array(1, 2)"},{"type":"expression","name":"s","expression":"array_to_string(array('x', 'y'), '-')"}]}`,
			`[[[1,2],"x-y"]]`},
	} {
		body := `{"resultFormat":"array","context":{"sqlStringifyArrays":false},"query":` + strings.TrimSpace(string(mustJSON(c.sql))) + `}`
		code, got, _ := sqlCall(t, b, body)
		if code != 200 || got != c.want {
			t.Errorf("%s:\n got %d %s\nwant %s", c.sql, code, got, c.want)
		}
		ncode, nbody, _ := b.query(t, c.native)
		if ncode != 200 {
			t.Errorf("native %s: %d %s", c.native, ncode, nbody)
			continue
		}
		var rows, answer any
		if err := json.Unmarshal([]byte(c.want), &rows); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(nbody), &answer); err != nil {
			t.Fatal(err)
		}
		have := scalars(answer)
		for _, v := range scalars(rows) {
			if _, isBool := v.(bool); isBool {
				continue // a SQL boolean is a 1/0 expression result natively
			}
			if !slices.ContainsFunc(have, func(h any) bool { return sameScalar(h, v) }) {
				t.Errorf("native %s:\n answer %s lacks %v of the SQL rows %s", c.native, nbody, v, c.want)
			}
		}
	}
	// An array past maxSizeBytes fails the statement with Druid's error.
	code, got, _ := sqlCall(t, b, `{"query":"SELECT ARRAY_AGG(page, 10) FROM wiki"}`)
	if code != 400 || !strings.Contains(got, "larger than max [10]") {
		t.Errorf("maxSizeBytes: got %d %s", code, got)
	}
}
