package engine

import (
	"encoding/base64"
	"math"
	"sort"
	"strings"
	"testing"

	"strata/aggregate/quantiles"
)

// quantilesDoublesSketch over a stored sketch column (merged) and over the
// numeric column (built at query time), with every post-aggregator.
func TestQuantilesSketch(t *testing.T) {
	rows := genRows(6000, 2, 31)
	segs := buildSegments(t, rows, 256)
	prices := make([]float64, len(rows))
	for i, r := range rows {
		prices[i] = r.price
	}
	sort.Float64s(prices)
	n := float64(len(prices))
	// rankOf is the exact normalized rank of v (fraction of values <= v).
	rankOf := func(v float64) float64 {
		return float64(sort.Search(len(prices), func(i int) bool { return prices[i] > v })) / n
	}

	access := func(f string) string { return `"field":{"type":"fieldAccess","fieldName":"` + f + `"}` }
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"aggregations":[
		{"type":"quantilesDoublesSketch","name":"stored","fieldName":"price_q"},
		{"type":"quantilesDoublesSketch","name":"built","fieldName":"price","k":256},
		{"type":"quantilesDoublesSketch","name":"none","fieldName":"no_such_column"}],
		"postAggregations":[
		{"type":"quantilesDoublesSketchToQuantile","name":"median",`+access("stored")+`,"fraction":0.5},
		{"type":"quantilesDoublesSketchToQuantiles","name":"qs",`+access("built")+`,"fractions":[0,0.1,0.99,1]},
		{"type":"quantilesDoublesSketchToRank","name":"rank",`+access("stored")+`,"value":500},
		{"type":"quantilesDoublesSketchToCDF","name":"cdf",`+access("stored")+`,"splitPoints":[250,500,750]},
		{"type":"quantilesDoublesSketchToHistogram","name":"hist",`+access("built")+`,"numBins":5},
		{"type":"quantilesDoublesSketchToHistogram","name":"split",`+access("built")+`,"splitPoints":[100,900]},
		{"type":"quantilesDoublesSketchToString","name":"str",`+access("stored")+`},
		{"type":"quantilesDoublesSketchToQuantile","name":"emptyq",`+access("none")+`,"fraction":0.5}]}`))
	r := obj(obj(res[0])["result"])
	for _, k := range []string{"stored", "built"} {
		if got, _ := num(r[k]); got != n {
			t.Errorf("%s finalizes to %v, want the count %v", k, r[k], n)
		}
	}
	if got, _ := num(r["none"]); got != 0 {
		t.Errorf("sketch of a missing column: %v, want 0", r["none"])
	}
	const eps = 0.02 // rank error bound of k=128 at 99% confidence is about 1.7%
	if m, _ := num(r["median"]); math.Abs(rankOf(m)-0.5) > eps {
		t.Errorf("median %v has rank %v", m, rankOf(m))
	}
	qs := r["qs"].([]any)
	q0, _ := num(qs[0])
	q3, _ := num(qs[3])
	if q0 != prices[0] || q3 != prices[len(prices)-1] {
		t.Errorf("quantiles 0 and 1 = %v %v, want min %v max %v", q0, q3, prices[0], prices[len(prices)-1])
	}
	for i, f := range []float64{0.1, 0.99} {
		if v, _ := num(qs[i+1]); math.Abs(rankOf(v)-f) > eps {
			t.Errorf("quantile %v = %v has rank %v", f, v, rankOf(v))
		}
	}
	if got, _ := num(r["rank"]); math.Abs(got-rankOf(500)) > eps {
		t.Errorf("rank(500) = %v, exact %v", got, rankOf(500))
	}
	cdf := r["cdf"].([]any)
	if len(cdf) != 4 {
		t.Fatalf("cdf %v", cdf)
	}
	for i, s := range []float64{250, 500, 750, math.Inf(1)} {
		if got, _ := num(cdf[i]); math.Abs(got-rankOf(s)) > eps {
			t.Errorf("cdf[%d] = %v, exact %v", i, got, rankOf(s))
		}
	}
	for _, h := range []string{"hist", "split"} {
		total := 0.0
		for _, c := range r[h].([]any) {
			v, _ := num(c)
			total += v
		}
		if math.Abs(total-n) > 1e-6*n {
			t.Errorf("%s counts sum to %v, want %v", h, total, n)
		}
	}
	if len(r["hist"].([]any)) != 5 || len(r["split"].([]any)) != 3 {
		t.Errorf("histogram bins: %v %v", r["hist"], r["split"])
	}
	if s, _ := r["str"].(string); !strings.Contains(s, "6000") {
		t.Errorf("toString %q does not give n", s)
	}
	if r["emptyq"] != "NaN" {
		t.Errorf("quantile of an empty sketch = %v, want NaN", r["emptyq"])
	}

	// Unfinalized, each group's sketch comes back serialized, holding the
	// group's values.
	res = arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"dimensions":["channel"],
		"aggregations":[{"type":"quantilesDoublesSketch","name":"q","fieldName":"price_q"}],"context":{"finalize":false}}`))
	counts := map[string]int64{}
	for _, row := range rows {
		counts[derefOr(row.channel)]++
	}
	for _, row := range res {
		ev := obj(obj(row)["event"])
		b, err := base64.StdEncoding.DecodeString(ev["q"].(string))
		if err != nil {
			t.Fatal(err)
		}
		sk, err := quantiles.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		key := "\x00"
		if c, ok := ev["channel"].(string); ok {
			key = c
		}
		if sk.N() != counts[key] {
			t.Errorf("channel %q: sketch n %d, want %d", key, sk.N(), counts[key])
		}
	}
}

func TestQuantilesBadSpecs(t *testing.T) {
	segs := buildSegments(t, genRows(100, 1, 32), 64)
	for _, q := range []string{
		`{"type":"quantilesDoublesSketch","name":"q","fieldName":"price","k":100}`,
		`{"type":"quantilesDoublesSketch","name":"q","fieldName":"page"}`,
		`{"type":"quantilesDoublesSketch","name":"q","fieldName":"users_theta"}`,
	} {
		_, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
			"intervals":["2024-01-01/2024-01-03"],"aggregations":[`+q+`]}`)
		if err == nil {
			t.Errorf("%s: accepted", q)
		}
	}
	for _, p := range []string{
		`{"type":"quantilesDoublesSketchToQuantile","name":"x","field":{"type":"fieldAccess","fieldName":"q"},"fraction":1.5}`,
		`{"type":"quantilesDoublesSketchToQuantiles","name":"x","field":{"type":"fieldAccess","fieldName":"q"}}`,
		`{"type":"quantilesDoublesSketchToCDF","name":"x","field":{"type":"fieldAccess","fieldName":"q"},"splitPoints":[3,2]}`,
		`{"type":"quantilesDoublesSketchToHistogram","name":"x","field":{"type":"fieldAccess","fieldName":"q"},"numBins":1}`,
		`{"type":"quantilesDoublesSketchToRank","name":"x","field":{"type":"fieldAccess","fieldName":"c"},"value":1}`,
	} {
		_, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
			"intervals":["2024-01-01/2024-01-03"],"aggregations":[{"type":"count","name":"c"},
			{"type":"quantilesDoublesSketch","name":"q","fieldName":"price"}],"postAggregations":[`+p+`]}`)
		if err == nil {
			t.Errorf("%s: accepted", p)
		}
	}
}
