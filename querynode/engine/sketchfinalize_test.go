package engine

import (
	"encoding/base64"
	"testing"

	"github.com/apache/datasketches-go/hll"

	"strata/aggregate/quantiles"
)

// An aggregator with shouldFinalize false answers its sketch (base64) even
// when the query finalizes, as Druid's do; post-aggregators still read it,
// and the other aggregators of the query stay finalized.
func TestShouldFinalizeFalseAnswersTheSketch(t *testing.T) {
	rows := genRows(2000, 2, 71)
	segs := buildSegments(t, rows, 256)
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],
		"aggregations":[
			{"type":"HLLSketchBuild","name":"h","fieldName":"user","shouldFinalize":false},
			{"type":"HLLSketchBuild","name":"hf","fieldName":"user"},
			{"type":"quantilesDoublesSketch","name":"q","fieldName":"price","shouldFinalize":false},
			{"type":"thetaSketch","name":"th","fieldName":"user","shouldFinalize":false}],
		"postAggregations":[
			{"type":"HLLSketchEstimate","name":"he","field":{"type":"fieldAccess","fieldName":"h"},"round":true},
			{"type":"quantilesDoublesSketchToQuantile","name":"med","field":{"type":"fieldAccess","fieldName":"q"},"fraction":0.5}]}`))
	r := obj(obj(res[0])["result"])
	users := map[string]bool{}
	for _, row := range rows {
		users[row.user] = true
	}
	hb, err := base64.StdEncoding.DecodeString(asString(r["h"]))
	if err != nil {
		t.Fatalf("h = %v, want a base64 sketch: %v", r["h"], err)
	}
	sk, err := hll.NewHllSketchFromSlice(hb, true)
	if err != nil {
		t.Fatal(err)
	}
	est, _ := sk.GetEstimate()
	if est < float64(len(users))*0.95 || est > float64(len(users))*1.05 {
		t.Errorf("h estimates %v, want about %d", est, len(users))
	}
	if _, ok := num(r["hf"]); !ok {
		t.Errorf("hf = %v, want the finalized estimate", r["hf"])
	}
	if he, _ := num(r["he"]); he < float64(len(users))*0.95 || he > float64(len(users))*1.05 {
		t.Errorf("he = %v, want about %d", r["he"], len(users))
	}
	qb, err := base64.StdEncoding.DecodeString(asString(r["q"]))
	if err != nil {
		t.Fatalf("q = %v, want a base64 sketch: %v", r["q"], err)
	}
	q, err := quantiles.Decode(qb)
	if err != nil || q.N() != int64(len(rows)) {
		t.Fatalf("q sketch: n %v, err %v; want n %d", q, err, len(rows))
	}
	if _, ok := num(r["med"]); !ok {
		t.Errorf("med = %v", r["med"])
	}
	if _, err := base64.StdEncoding.DecodeString(asString(r["th"])); err != nil || asString(r["th"]) == "" {
		t.Errorf("th = %v, want a base64 sketch", r["th"])
	}
}

func asString(v any) string { s, _ := v.(string); return s }
