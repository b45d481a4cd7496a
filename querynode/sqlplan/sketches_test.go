package sqlplan

import "testing"

func init() {
	planSeeds = append(planSeeds,
		"SELECT APPROX_QUANTILE_DS(added, 0.5, 64), DS_GET_QUANTILES(DS_QUANTILES_SKETCH(delta), 0.1, 0.9), DS_CDF(DS_QUANTILES_SKETCH(delta), 1, 2) FROM wiki GROUP BY page",
		"SELECT HLL_SKETCH_ESTIMATE(DS_HLL(page, 10, 'HLL_6'), TRUE), THETA_SKETCH_ESTIMATE(DS_THETA(page, 64)) FROM wiki HAVING DS_RANK(DS_QUANTILES_SKETCH(added), 1) > 0",
	)
}

// The sketch functions plan as Druid plans them: the aggregator under a
// hidden name, the function as a post-aggregator reading it.
func TestPlanSketches(t *testing.T) {
	for _, c := range []struct {
		sql   string
		parts []string
	}{
		{`SELECT APPROX_QUANTILE_DS(added, 0.25) AS q FROM wiki`,
			[]string{`{"fieldName":"added","k":128,"name":"a0:agg","type":"quantilesDoublesSketch"}`,
				`{"field":{"fieldName":"a0:agg","type":"fieldAccess"},"fraction":0.25,"name":"a0","type":"quantilesDoublesSketchToQuantile"}`}},
		{`SELECT DS_GET_QUANTILE(DS_QUANTILES_SKETCH(added + 1, 64), 0.5) AS q FROM wiki ORDER BY 1`,
			[]string{`"k":64,"name":"a0","shouldFinalize":false,"type":"quantilesDoublesSketch"`, `"expression":"(\"added\" + 1)"`,
				`{"field":{"fieldName":"a0","type":"fieldAccess"},"fraction":0.5,"name":"p0","type":"quantilesDoublesSketchToQuantile"}`}},
		{`SELECT page, HLL_SKETCH_ESTIMATE(DS_HLL(channel)) AS n FROM wiki GROUP BY page ORDER BY n DESC`,
			[]string{`{"fieldName":"channel","lgK":12,"name":"a0","round":true,"shouldFinalize":false,"tgtHllType":"HLL_4","type":"HLLSketchBuild"}`,
				`{"field":{"fieldName":"a0","type":"fieldAccess"},"name":"p0","type":"HLLSketchEstimate"}`, `"dimension":"p0"`}},
		{`SELECT THETA_SKETCH_ESTIMATE(DS_THETA(page) FILTER (WHERE added > 1)) FROM wiki`,
			[]string{`"aggregator":{"fieldName":"page","name":"a0","shouldFinalize":false,"size":16384,"type":"thetaSketch"}`}},
	} {
		p, _ := plan(t, c.sql, nil)
		has(t, p.Native, c.parts...)
	}
	// An estimate in ORDER BY and the select list is one post-aggregator.
	p, m := plan(t, `SELECT page, HLL_SKETCH_ESTIMATE(DS_HLL(channel)) FROM wiki GROUP BY page ORDER BY HLL_SKETCH_ESTIMATE(DS_HLL(channel))`, nil)
	if pas, _ := m["postAggregations"].([]any); len(pas) != 1 {
		t.Errorf("post-aggregators %v:\n%s", pas, p.Native)
	}
}
