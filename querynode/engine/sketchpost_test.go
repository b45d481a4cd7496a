package engine

import (
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"strata/aggregate/blob"
)

// Unions, set operations, bounds and summaries of the sketches of a
// query's aggregators, against exact counts of the generated users (few
// enough that the sketches stay exact).
func TestSketchPostAggregators(t *testing.T) {
	rows := genRows(2000, 2, 91)
	segs := buildSegments(t, rows, 256)
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if r.channel != nil && *r.channel == "#ch1" {
			inA[r.user] = true
		}
		if r.channel != nil && *r.channel == "#ch2" {
			inB[r.user] = true
		}
	}
	union, both, onlyA := len(inA), 0, 0
	for u := range inB {
		if inA[u] {
			both++
		} else {
			union++
		}
	}
	onlyA = len(inA) - both
	filtered := func(name, typ, ch string) string {
		return `{"type":"filtered","filter":{"type":"selector","dimension":"channel","value":"` + ch + `"},"aggregator":{"type":"` + typ + `","name":"` + name + `","fieldName":"user"}}`
	}
	fa := func(n string) string { return `{"type":"fieldAccess","fieldName":"` + n + `"}` }
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-03"],
		"aggregations":[`+filtered("ha", "HLLSketchBuild", "#ch1")+`,`+filtered("hb", "HLLSketchBuild", "#ch2")+`,`+
		filtered("ta", "thetaSketch", "#ch1")+`,`+filtered("tb", "thetaSketch", "#ch2")+`],
		"postAggregations":[
			{"type":"HLLSketchUnion","name":"hu","fields":[`+fa("ha")+`,`+fa("hb")+`],"lgK":12,"tgtHllType":"HLL_8"},
			{"type":"HLLSketchEstimate","name":"hue","field":`+fa("hu")+`,"round":true},
			{"type":"HLLSketchEstimate","name":"hue2","field":{"type":"HLLSketchUnion","fields":[`+fa("ha")+`,`+fa("hb")+`]}},
			{"type":"HLLSketchEstimateWithBounds","name":"hb3","field":`+fa("ha")+`,"numStdDev":3},
			{"type":"HLLSketchToString","name":"hs","field":`+fa("ha")+`},
			{"type":"thetaSketchEstimate","name":"ti","field":{"type":"thetaSketchSetOp","func":"INTERSECT","fields":[`+fa("ta")+`,`+fa("tb")+`]}},
			{"type":"thetaSketchEstimate","name":"tn","field":{"type":"thetaSketchSetOp","func":"NOT","fields":[`+fa("ta")+`,`+fa("tb")+`]}},
			{"type":"thetaSketchSetOp","name":"tu","func":"UNION","size":1024,"fields":[`+fa("ta")+`,`+fa("tb")+`]},
			{"type":"thetaSketchEstimate","name":"tub","field":`+fa("tu")+`,"errorBoundsStdDev":2}]}`))
	r := obj(obj(res[0])["result"])
	want := func(name string, got any, n int) {
		if f, ok := num(got); !ok || math.Round(f) != float64(n) {
			t.Errorf("%s = %v, want %d", name, got, n)
		}
	}
	want("hue", r["hue"], union)
	want("hue2", r["hue2"], union)
	want("ti", r["ti"], both)
	want("tn", r["tn"], onlyA)
	bounds := arr(r["hb3"])
	if len(bounds) != 3 {
		t.Fatalf("hb3 = %v", r["hb3"])
	}
	est, _ := num(bounds[0])
	lo, _ := num(bounds[1])
	hi, _ := num(bounds[2])
	if math.Round(est) != float64(len(inA)) || lo > est || hi < est {
		t.Errorf("hb3 = %v, want about %d within its bounds", bounds, len(inA))
	}
	if s, _ := r["hs"].(string); !strings.Contains(s, "Estimate") {
		t.Errorf("hs = %q", r["hs"])
	}
	b, err := base64.StdEncoding.DecodeString(asString(r["tu"]))
	if err != nil {
		t.Fatalf("tu = %v", r["tu"])
	}
	if sk, err := blob.DecodeTheta(b); err != nil || math.Round(sk.Estimate()) != float64(union) {
		t.Errorf("tu sketch: %v %v, want %d", sk, err, union)
	}
	tub := obj(r["tub"])
	want("tub.estimate", tub["estimate"], union)
	if n, _ := num(tub["numStdDev"]); n != 2 || tub["lowBound"] == nil || tub["highBound"] == nil {
		t.Errorf("tub = %v", r["tub"])
	}
	// A field that is no sketch of the kind is the query's error.
	if _, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-03"],
		"aggregations":[{"type":"count","name":"c"},`+filtered("ta", "thetaSketch", "#ch1")+`],
		"postAggregations":[{"type":"HLLSketchUnion","name":"u","fields":[`+fa("c")+`,`+fa("ta")+`]}]}`); err == nil {
		t.Error("a union of a count and a theta sketch answered")
	}
}

// Merging sketches from a string column reads base64 sketches (a query
// data source's); other strings are the query's error, never a count of
// the strings.
func TestSketchMergeOfStrings(t *testing.T) {
	segs := buildSegments(t, genRows(200, 1, 4), 64)
	for _, agg := range []string{
		`{"type":"HLLSketchMerge","name":"h","fieldName":"page"}`,
		`{"type":"thetaSketch","name":"h","fieldName":"page","isInputThetaSketch":true}`,
		`{"type":"quantilesDoublesSketch","name":"h","fieldName":"page"}`,
	} {
		if _, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-02"],"aggregations":[`+agg+`]}`); err == nil {
			t.Errorf("%s over page names: no error", agg)
		}
	}
}
