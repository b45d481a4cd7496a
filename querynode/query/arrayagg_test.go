package query

import (
	"strings"
	"testing"
)

// TestParseArrayAgg checks the "expression" aggregator forms of ARRAY_AGG
// and STRING_AGG, Druid's defaults, and the errors of the forms this engine
// does not run.
func TestParseArrayAgg(t *testing.T) {
	a, err := ParseAggregator([]byte(`{"type":"expression","name":"a0","fields":["x"],"accumulatorIdentifier":"__acc",
		"initialValue":"ARRAY<LONG>[]","initialCombineValue":"ARRAY<LONG>[]","isNullUnlessAggregated":true,
		"shouldAggregateNullInputs":true,"shouldCombineAggregateNullInputs":false,
		"fold":"array_set_add(\"__acc\", \"x\")","combine":"array_set_add_all(\"__acc\", \"a0\")","maxSizeBytes":4096,
		"finalize":"if(array_length(o) == 0, null, array_to_string(o, ','))"}`))
	if err != nil {
		t.Fatal(err)
	}
	ag := a.Array
	if a.ValueKind() != KindArray || a.Op() != "arraySet" || ag.Field != "x" || !ag.Distinct || ag.Elem != "LONG" || ag.MaxSizeBytes != 4096 || ag.Finalize == nil {
		t.Errorf("parsed %+v %+v", a, ag)
	}
	// Defaults: __acc, "[]" (element type from the values), 1024 bytes, no combine.
	a, err = ParseAggregator([]byte(`{"type":"expression","name":"b","fields":["y"],"fold":"array_append(__acc, y)"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Op() != "arrayAppend" || a.Array.Elem != "" || a.Array.MaxSizeBytes != 1024 {
		t.Errorf("defaults %+v", a.Array)
	}
	for _, c := range []struct{ spec, msg string }{
		{`{"type":"expression","name":"a","fields":["x"],"fold":"__acc + x"}`, "only the array_append and array_set_add folds"},
		{`{"type":"expression","name":"a","fields":["x"],"fold":"array_append(__acc, y)"}`, "only the array_append"},
		{`{"type":"expression","name":"a","fields":["x"],"fold":"array_append(__acc, x)","combine":"array_set_add_all(__acc, a)"}`, "only the array_append"},
		{`{"type":"expression","name":"a","fields":["x","y"],"fold":"array_append(__acc, x)"}`, "only one input field"},
		{`{"type":"expression","name":"a","fields":["x"],"fold":"array_append(__acc, x)","initialValue":"0"}`, "only an empty array"},
		{`{"type":"expression","name":"a","fields":["x"],"fold":"array_append(__acc, x)","maxSizeBytes":0}`, "maxSizeBytes out of range"},
		{`{"type":"expression","name":"a","fields":["x"],"fold":"array_append(__acc, x)","finalize":"if("}`, "Invalid expression"},
		{`{"type":"expression","name":"a","fields":["x"]}`, "fold"},
	} {
		if _, err := ParseAggregator([]byte(c.spec)); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %q", c.spec, err, c.msg)
		}
	}
}
