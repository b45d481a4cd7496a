package server

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"strata/querynode/sqlplan"
)

// sqlJSONValues are values of every kind a SQL row holds, and strings and
// floats at each of encoding/json's special cases.
var sqlJSONValues = []any{
	nil, true, false, int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
	"", "plain", "#ch07", "2024-01-01T00:00:00.000Z", `quote " and \ backslash`, "tab\tnew\nline\r", "\x00\x01\x1f ctl",
	"<b>&amp;</b>", "café", "日本語", "line\u2028sep\u2029", "bad \xff\xfe utf-8", "\x7f del",
	0.0, math.Copysign(0, -1), 1.5, -2.25, 0.1, 1e-6, 9.99e-7, 1e-7, 1.234e-10, 1e20, 1e21, 123456789012345678901234.0,
	math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, 3367.0, 2222.2,
	[]any{"a", nil, int64(1)}, map[string]any{"k": []any{1.5}}, json.Number("42"), json.Number("1.5e3"), float32(1.25), 7,
}

// Rows are written exactly as json.Marshal wrote them.
func TestAppendJSONAsMarshal(t *testing.T) {
	values := append([]any{}, sqlJSONValues...)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		values = append(values, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	for _, v := range values {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			continue // jsonRow writes these as strings first
		}
		want, werr := json.Marshal(v)
		got, ok := appendJSONValue(nil, v)
		if ok != (werr == nil) || (ok && string(got) != string(want)) {
			t.Errorf("%#v: got %s (%v), want %s (%v)", v, got, ok, want, werr)
		}
	}
	row := append([]any{}, sqlJSONValues...)
	names := make([]string, len(row))
	o := make(orderedObject, len(row))
	for i, v := range row {
		names[i] = string(rune('a'+i%26)) + "<é>\"" + string(rune('0'+i/26))
		o[i] = kv{names[i], v}
	}
	if got, ok := appendJSONRow(nil, row); !ok || string(got) != string(mustJSON(row)) {
		t.Errorf("array row:\n got %s\nwant %s", got, mustJSON(row))
	}
	if got, ok := appendJSONObjectRow(nil, jsonKeys(names), row); !ok || string(got) != string(mustJSON(o)) {
		t.Errorf("object row:\n got %s\nwant %s", got, mustJSON(o))
	}
	// A value json.Marshal refuses makes the row fail, as mustJSON's null.
	if _, ok := appendJSONRow(nil, []any{"a", make(chan int)}); ok {
		t.Error("a channel value was written")
	}
}

// benchRows are rows shaped as bench Q10's answer: 7 days × 50 channels.
func benchRows() ([]sqlplan.Column, [][]any) {
	cols := []sqlplan.Column{{Name: "d", Type: "TIMESTAMP"}, {Name: "channel", Type: "VARCHAR"}, {Name: "c", Type: "BIGINT"}}
	var rows [][]any
	for d := range 7 {
		for c := range 50 {
			rows = append(rows, []any{"2024-01-0" + string(rune('1'+d)) + "T00:00:00.000Z", "#ch" + string(rune('0'+c/10)) + string(rune('0'+c%10)), int64(15566 + c)})
		}
	}
	return cols, rows
}

// Writing a result allocates about one buffer a row: json.Marshal took 13
// allocations a row in the object format (Q10: 4574 for 350 rows).
func TestRenderSQLAllocations(t *testing.T) {
	cols, rows := benchRows()
	for _, format := range []string{"object", "array", "objectLines", "arrayLines"} {
		allocs := testing.AllocsPerRun(10, func() { renderSQL(sqlRequest{ResultFormat: format}, cols, rows) })
		if perRow := allocs / float64(len(rows)); perRow > 2 {
			t.Errorf("%s: %.1f allocations a row, want at most 2", format, perRow)
		}
	}
}

func BenchmarkRenderSQL(b *testing.B) {
	cols, rows := benchRows()
	for _, format := range []string{"object", "array", "csv"} {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				renderSQL(sqlRequest{ResultFormat: format}, cols, rows)
			}
		})
	}
}
