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
