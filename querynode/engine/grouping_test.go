package engine

import "testing"

// Each subtotal's rows carry the grouping id of that subtotal: a bit per
// grouping (the first highest), 1 when the subtotal does not group by it;
// groupings name dimensions by output name or by input column.
func TestGroupingAggregator(t *testing.T) {
	segs := buildSegments(t, genRows(500, 1, 5), 64)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],
		"dimensions":[{"type":"default","dimension":"channel","outputName":"c"},{"type":"default","dimension":"user","outputName":"u"}],
		"aggregations":[{"type":"count","name":"n"},
			{"type":"grouping","name":"g","groupings":["c","u"]},
			{"type":"grouping","name":"gi","groupings":["user","channel"]}],
		"subtotalsSpec":[["c","u"],["c"],["u"],[]],
		"having":{"type":"greaterThan","aggregation":"n","value":0}}`))
	// g's and gi's bits are mirrored; a dimension a subtotal leaves out is
	// null in its rows; each subtotal counts every row once.
	pair := map[int64]int64{0: 0, 1: 2, 2: 1, 3: 3}
	rowsOf, total := map[int64]int{}, map[int64]float64{}
	for _, r := range res {
		ev := obj(obj(r)["event"])
		g, _ := num(ev["g"])
		gi, _ := num(ev["gi"])
		if w, ok := pair[int64(g)]; !ok || w != int64(gi) {
			t.Fatalf("grouping %v with %v", ev["g"], ev["gi"])
		}
		if (int64(g)&1 == 1 && ev["u"] != nil) || (int64(g)&2 == 2 && ev["c"] != nil) {
			t.Fatalf("row %v: a dimension its grouping %v leaves out has a value", ev, g)
		}
		n, _ := num(ev["n"])
		rowsOf[int64(g)]++
		total[int64(g)] += n
	}
	for g := range int64(4) {
		if total[g] != 500 {
			t.Errorf("subtotal with grouping %d counts %v rows, want 500", g, total[g])
		}
	}
	if rowsOf[3] != 1 || rowsOf[0] <= rowsOf[1] {
		t.Errorf("rows per grouping %v", rowsOf)
	}
	// Without subtotals every dimension is grouped: 0.
	res = arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],
		"aggregations":[{"type":"grouping","name":"g","groupings":["channel"]}]}`))
	if g, ok := num(obj(obj(res[0])["result"])["g"]); !ok || g != 0 {
		t.Errorf("grouping without subtotals: %v", res[0])
	}
	for _, bad := range []string{`{"type":"grouping","name":"g"}`, `{"type":"grouping","name":"g","groupings":[]}`,
		`{"type":"grouping","name":"g","groupings":["a","a"]}`} {
		if _, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],"aggregations":[`+bad+`]}`); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// The limitSpec orders and limits the rows of all subtotals together, as
// Druid's has since 0.18 (and SQL's ORDER BY/LIMIT over GROUPING SETS
// must): the grand total, counting every row, comes first by count.
func TestSubtotalsLimitSpecOverAllRows(t *testing.T) {
	segs := buildSegments(t, genRows(500, 1, 5), 64)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimensions":["channel"],
		"aggregations":[{"type":"count","name":"n"},{"type":"grouping","name":"g","groupings":["channel"]}],
		"subtotalsSpec":[["channel"],[]],
		"limitSpec":{"type":"default","limit":3,"columns":[{"dimension":"n","direction":"descending","dimensionOrder":"numeric"}]}}`))
	if len(res) != 3 {
		t.Fatalf("%d rows, want 3: %v", len(res), res)
	}
	var last float64 = 1 << 30
	for i, r := range res {
		ev := obj(obj(r)["event"])
		n, _ := num(ev["n"])
		if n > last {
			t.Errorf("row %d: count %v after %v, want descending", i, n, last)
		}
		last = n
		g, _ := num(ev["g"])
		if (i == 0) != (g == 1) || (i == 0 && n != 500) {
			t.Errorf("row %d: %v; want the grand total (500 rows, grouping 1) first only", i, ev)
		}
	}
	// Offset and limit without columns cut the concatenation.
	res = arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimensions":["channel"],"aggregations":[{"type":"count","name":"n"}],
		"subtotalsSpec":[[],["channel"]],"limitSpec":{"type":"default","limit":2}}`))
	if len(res) != 2 {
		t.Fatalf("%d rows, want 2: %v", len(res), res)
	}
	if n, _ := num(obj(obj(res[0])["event"])["n"]); n != 500 {
		t.Errorf("first row %v, want the grand total", res[0])
	}
	// Columns without a limit: every row, ordered.
	res = arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimensions":["channel"],"aggregations":[{"type":"count","name":"n"}],
		"subtotalsSpec":[["channel"],[]],"limitSpec":{"type":"default","columns":[{"dimension":"n","direction":"descending","dimensionOrder":"numeric"}]}}`))
	if n, _ := num(obj(obj(res[0])["event"])["n"]); n != 500 || len(res) < 3 {
		t.Errorf("ordered without a limit: %v", res)
	}
}
