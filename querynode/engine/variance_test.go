package engine

import (
	"math"
	"testing"
)

// The variance aggregator and stddev post-aggregator per group agree with
// a two-pass computation over the generated rows; a group without values
// (channel's missing added values) gives null.
func TestVarianceAgainstIndependentComputation(t *testing.T) {
	rows := genRows(3000, 2, 77)
	segs := buildSegments(t, rows, 256)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"dimensions":["channel"],
		"aggregations":[
			{"type":"variance","name":"vs","fieldName":"added","inputType":"long"},
			{"type":"variance","name":"vp","fieldName":"price","inputType":"double","estimator":"population"},
			{"type":"filtered","filter":{"type":"selector","dimension":"page","value":"no such page"},
			 "aggregator":{"type":"variance","name":"none","fieldName":"price"}}],
		"postAggregations":[
			{"type":"stddev","name":"sdp","fieldName":"vs","estimator":"population"},
			{"type":"stddev","name":"sds","fieldName":"vs"}]}`))
	type acc struct{ added, price []float64 }
	by := map[string]*acc{}
	for _, r := range rows {
		k := derefOr(r.channel)
		if by[k] == nil {
			by[k] = &acc{}
		}
		if r.added != nil {
			by[k].added = append(by[k].added, float64(*r.added))
		}
		by[k].price = append(by[k].price, r.price)
	}
	variance := func(xs []float64, pop bool) float64 {
		var sum, m2 float64
		for _, x := range xs {
			sum += x
		}
		mean := sum / float64(len(xs))
		for _, x := range xs {
			m2 += (x - mean) * (x - mean)
		}
		if pop {
			return m2 / float64(len(xs))
		}
		return m2 / float64(len(xs)-1)
	}
	if len(res) != len(by) {
		t.Fatalf("%d groups, want %d", len(res), len(by))
	}
	for _, row := range res {
		ev := obj(obj(row)["event"])
		key := "\x00"
		if c, ok := ev["channel"].(string); ok {
			key = c
		}
		a := by[key]
		checkNum(t, key+" vs", ev["vs"], f64p(variance(a.added, false)))
		checkNum(t, key+" vp", ev["vp"], f64p(variance(a.price, true)))
		checkNum(t, key+" sdp", ev["sdp"], f64p(math.Sqrt(variance(a.added, true))))
		checkNum(t, key+" sds", ev["sds"], f64p(math.Sqrt(variance(a.added, false))))
		if ev["none"] != nil {
			t.Errorf("%s: variance of no values = %v, want null", key, ev["none"])
		}
	}
}

func TestVarianceBadSpecs(t *testing.T) {
	segs := buildSegments(t, genRows(100, 1, 32), 64)
	for _, q := range []string{
		`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],"aggregations":[{"type":"variance","name":"v"}]}`,
		`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],"aggregations":[{"type":"variance","name":"v","fieldName":"added","inputType":"int"}]}`,
		`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],"aggregations":[{"type":"variance","name":"v","fieldName":"added","inputType":"variance"}]}`,
		`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],"aggregations":[{"type":"count","name":"c"}],
			"postAggregations":[{"type":"stddev","name":"s","fieldName":"c"}]}`,
	} {
		if _, err := runRaw(segs, q); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
}
