package jsonenc

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// values are of every kind Append writes itself, at encoding/json's special
// cases, and some it leaves to json.Marshal.
var values = []any{
	nil, true, false, 0, -7, int64(math.MaxInt64), int64(math.MinInt64),
	"", "plain", "#ch07", `quote " and \ backslash`, "tab\tnew\nline\r", "\x00\x01\x1f ctl", "<b>&amp;</b>", "café",
	"日本語", "line\u2028sep\u2029", "bad \xff\xfe utf-8", "\x7f del",
	0.0, math.Copysign(0, -1), 1.5, -2.25, 0.1, 1e-6, 9.99e-7, 1e-7, 1.234e-10, 1e20, 1e21, 123456789012345678901234.0,
	math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, 2222.2,
	map[string]any{"b": 1, "a": []any{"x", nil, 2.5}, "": map[string]string{"z": "y", "<": ">"}, "é": nil},
	map[string]any(nil), map[string]string(nil), []any(nil), []string(nil), [][]any(nil), []map[string]any(nil),
	[]any{}, []string{"a", "b&c"}, [][]any{{0}, {}}, []map[string]any{{"k": true}, nil},
	json.RawMessage(`{"type": "table",  "name":"wiki"}`), json.RawMessage(`["<x>"]`), json.RawMessage(nil),
	json.Number("42"), float32(1.25), uint8(3), struct{ A int }{1}, []int{1, 2},
}

func same(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, err := Append([]byte("prefix"), v)
	if (err == nil) != (werr == nil) || (err == nil && string(got) != "prefix"+string(want)) {
		t.Errorf("%#v:\n got %s (%v)\nwant %s (%v)", v, got, err, want, werr)
	}
}

func TestAppendAsMarshal(t *testing.T) {
	for _, v := range values {
		same(t, v)
	}
	same(t, values)
	same(t, map[string]any{"all": values})
	for _, bad := range []any{math.NaN(), math.Inf(1), []any{1, math.Inf(-1)}, map[string]any{"c": make(chan int)}, json.RawMessage(`{"a":`)} {
		if _, err := Append(nil, bad); err == nil {
			t.Errorf("%#v: no error", bad)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		same(t, math.Float64frombits(r.Uint64()))
		same(t, r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, v := range values {
		if s, ok := v.(string); ok {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		same(t, s)
		same(t, map[string]any{s: []any{s}})
		same(t, json.RawMessage(s))
	})
}
