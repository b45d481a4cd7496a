package engine

import (
	"testing"
)

// TestDictExprKeyAgrees: string expressions of one dictionary column give
// the same groups and filters evaluated once per dictionary value as row
// by row: nulls in and out, several values mapping to one, values mapping
// to null, a multi-value column (row by row still), a numeric one.
func TestDictExprKeyAgrees(t *testing.T) {
	segs := buildSegments(t, genRows(3000, 3, 21), 256)
	iv := `"intervals":["2024-01-01/2024-02-01"]`
	for _, expr := range []string{
		`upper(channel)`,
		`substring(page, 0, 6)`,
		`nvl(channel, 'none')`,
		`if(channel == '#ch1', null, concat(channel, '!'))`,
		`case_searched(strlen(page) > 7, 'long', 'short')`,
		`concat(tags, '-')`,
		`concat(added, '')`,
	} {
		q := `{"queryType":"groupBy","dataSource":"test",` + iv + `,"granularity":"all",
			"virtualColumns":[{"type":"expression","name":"v","expression":` + strconvQuote(expr) + `,"outputType":"STRING"}],
			"filter":{"type":"not","field":{"type":"selector","dimension":"v","value":"#CH2"}},
			"dimensions":["v"],"aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"a","fieldName":"added"}]}`
		dictExprKeys = false
		want, err := runRaw(segs, q)
		dictExprKeys = true
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got, err := runRaw(segs, q)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\nonce per value %s\nrow by row %s", expr, got, want)
		}
	}
}
