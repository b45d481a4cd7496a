package sqlplan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// sketchCatalog serves "sk", a rolled-up table with stored sketch columns.
type sketchCatalog struct{}

func (sketchCatalog) Table(_ context.Context, schema, name string) (*Table, error) {
	if name != "sk" || (schema != "" && schema != "druid") {
		return nil, nil
	}
	return &Table{
		Columns:    []Column{{"__time", "TIMESTAMP"}, {"page", "VARCHAR"}, {"h", tHLLSketch}, {"th", tThetaSketch}},
		DataSource: json.RawMessage(`{"type":"table","name":"sk"}`),
	}, nil
}

// A sketch estimate over a stored sketch column row by row (no
// aggregation) is refused as unsupported, saying why and what works: the
// native expression layer reads no complex column, so there is no
// hll_sketch_estimate/theta_sketch_estimate expression to plan it onto.
// The estimate over the merged column plans (HLLSketchMerge, or thetaSketch
// reading sketches).
func TestSketchEstimateOfAStoredColumn(t *testing.T) {
	for sql, agg := range map[string]string{
		`SELECT page, HLL_SKETCH_ESTIMATE(h) FROM sk`:   "HLL_SKETCH_ESTIMATE(DS_HLL(h))",
		`SELECT THETA_SKETCH_ESTIMATE(th) AS n FROM sk`: "THETA_SKETCH_ESTIMATE(DS_THETA(th))",
	} {
		_, err := Plan(context.Background(), sql, Request{}, sketchCatalog{})
		pe, ok := err.(*Error)
		if !ok || pe.Category != CategoryUnsupported || !strings.Contains(pe.Msg, "complex") || !strings.Contains(pe.Msg, agg) {
			t.Errorf("%s: %v, want unsupported, naming complex columns and %s", sql, err, agg)
		}
	}
	for sql, part := range map[string]string{
		`SELECT page, HLL_SKETCH_ESTIMATE(DS_HLL(h)) FROM sk GROUP BY page`: `"type":"HLLSketchMerge"`,
		`SELECT THETA_SKETCH_ESTIMATE(DS_THETA(th)) FROM sk`:                `"isInputThetaSketch":true`,
	} {
		p, err := Plan(context.Background(), sql, Request{}, sketchCatalog{})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		has(t, p.Native, part)
	}
}
