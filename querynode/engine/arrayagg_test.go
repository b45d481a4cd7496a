package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"strata/querynode/query"
)

// TestArrayAggAgainstRows checks the expression aggregator's ARRAY_AGG
// form against the rows themselves: per channel, every value of added
// (nulls included), in some order.
func TestArrayAggAgainstRows(t *testing.T) {
	rows := genRows(3000, 3, 41)
	segs := buildSegments(t, rows, 200)
	want := map[string][]string{}
	for _, r := range rows {
		ch := "null"
		if r.channel != nil {
			ch = *r.channel
		}
		v := "null"
		if r.added != nil {
			v = jsonText(*r.added)
		}
		want[ch] = append(want[ch], v)
	}
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel"],
		"aggregations":[{"type":"expression","name":"all","fields":["added"],"initialValue":"ARRAY<LONG>[]","fold":"array_append(\"__acc\", \"added\")","combine":"array_concat(\"__acc\", \"all\")","maxSizeBytes":1000000}],
		"postAggregations":[{"type":"expression","name":"n","expression":"array_length(\"all\")"}]}`))
	if len(res) != len(want) {
		t.Fatalf("%d groups, want %d", len(res), len(want))
	}
	for _, r := range res {
		ev := obj(obj(r)["event"])
		ch := "null"
		if s, ok := ev["channel"].(string); ok {
			ch = s
		}
		var got []string
		for _, v := range arr(ev["all"]) {
			got = append(got, jsonText(v))
		}
		slices.Sort(got)
		w := slices.Sorted(slices.Values(want[ch]))
		if !slices.Equal(got, w) {
			t.Errorf("channel %s: got %d values, want %d", ch, len(got), len(w))
		}
		checkNum(t, "n", ev["n"], f64p(float64(len(w))))
	}
}

// TestArrayAggMaxSize checks that a query whose array outgrows maxSizeBytes
// fails as a resource limit, as Druid fails it.
func TestArrayAggMaxSize(t *testing.T) {
	segs := buildSegments(t, genRows(500, 1, 42), 100)
	_, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],
		"aggregations":[{"type":"expression","name":"all","fields":["page"],"fold":"array_append(\"__acc\", \"page\")","combine":"array_concat(\"__acc\", \"all\")"}]}`)
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Kind != query.ResourceLimit || !strings.Contains(qe.Message, "max [1024]") {
		t.Fatalf("got %v, want a resource limit at the default 1024 bytes", err)
	}
	if _, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],
		"aggregations":[{"type":"expression","name":"x","fields":["page"],"fold":"\"__acc\" + 1"}]}`); err == nil {
		t.Fatal("a general fold expression ran")
	}
}

// TestGroupByNoDimsEmptyHaving checks that the row of empty aggregates a
// groupBy without dimensions answers over no data goes through the having
// spec like any row, as Druid adds it before post-processing: Druid SQL's
// COUNT(*) over an ARRAY_AGG subquery that matched nothing and a filter
// its null row fails answers 0 (qaAggFuncs' float cases).
func TestGroupByNoDimsEmptyHaving(t *testing.T) {
	segs := buildSegments(t, genRows(100, 1, 15), 64)
	for _, c := range []struct {
		having string
		rows   int
	}{
		{`{"type":"filter","filter":{"type":"expression","expression":"(!array_contains(\"a\", 99999)) || 0"}}`, 0},
		{`{"type":"filter","filter":{"type":"expression","expression":"isnull(\"a\")"}}`, 1},
		{`{"type":"greaterThan","aggregation":"c","value":0}`, 0},
	} {
		res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
			"intervals":["2030-01-01/2030-01-02"],"dimensions":[],"aggregations":[{"type":"count","name":"c"},
			{"type":"expression","name":"a","fields":["added"],"fold":"array_append(__acc, added)"}],"having":`+c.having+`}`))
		if len(res) != c.rows {
			t.Errorf("having %s: got %v, want %d rows", c.having, res, c.rows)
		}
	}
}
