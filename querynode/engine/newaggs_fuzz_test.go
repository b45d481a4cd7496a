package engine

import (
	"context"
	"encoding/json"
	"testing"

	"strata/querynode/query"
)

// FuzzPartialNewAggregators decodes partials of a groupBy with the
// variance, grouping, bitwise and sketch aggregators (and the
// post-aggregators reading their states, and subtotals), merges and
// finalizes them: a bad partial is an error, never a panic.
func FuzzPartialNewAggregators(f *testing.F) {
	q, err := query.Parse([]byte(`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-03"],
		"dimensions":["channel"],"subtotalsSpec":[["channel"],[]],
		"aggregations":[{"type":"variance","name":"v","fieldName":"price"},{"type":"grouping","name":"g","groupings":["channel"]},
			{"type":"expression","name":"x","fields":["added"],"initialValue":"-1","fold":"bitwiseAnd(\"__acc\", \"added\")"},
			{"type":"HLLSketchBuild","name":"h","fieldName":"user"},{"type":"thetaSketch","name":"t","fieldName":"user"}],
		"postAggregations":[{"type":"stddev","name":"sd","fieldName":"v"},
			{"type":"HLLSketchEstimateWithBounds","name":"hb","field":{"type":"HLLSketchUnion","fields":[{"type":"fieldAccess","fieldName":"h"},{"type":"fieldAccess","fieldName":"h"}]}},
			{"type":"thetaSketchEstimate","name":"te","field":{"type":"thetaSketchSetOp","func":"NOT","fields":[{"type":"fieldAccess","fieldName":"t"},{"type":"fieldAccess","fieldName":"t"}]},"errorBoundsStdDev":2}]}`))
	if err != nil {
		f.Fatal(err)
	}
	e := New(Options{})
	for _, s := range buildSegments(f, genRows(200, 2, 3), 64) {
		p, err := e.RunSegment(context.Background(), q, s)
		if err != nil {
			f.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Partial
		if json.Unmarshal(b, &p) != nil || p.Attach(q) != nil {
			return
		}
		m, err := e.Merge(q, []*Partial{&p, &p})
		if err != nil {
			return
		}
		_, _ = e.Finalize(q, m)
	})
}
