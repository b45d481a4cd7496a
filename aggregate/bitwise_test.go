package aggregate

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Bitwise folds: one-value and block adds, and partial states merged
// through the wire form, all give the fold of every value from the
// initial value; no value is null.
func TestBitwiseFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		op   string
		init int64
	}{{OpBitAnd, -1}, {OpBitOr, 0}, {OpBitXor, 0}, {OpBitAnd, 0}} {
		spec := &Spec{Kind: KindLong, Op: c.op, BitInit: c.init}
		vals := make([]int64, 1+r.IntN(100))
		want := c.init
		for i := range vals {
			vals[i] = r.Int64N(1<<20) | 1<<40
			want = bitFold(c.op, want, vals[i])
		}
		one := New(spec, 1)
		for _, v := range vals {
			_ = one.AddLong(0, v)
		}
		block := New(spec, 1)
		block.AddLongs(vals, Rows{From: 0, To: len(vals)})
		cut := r.IntN(len(vals) + 1)
		merged := New(spec, 1)
		for _, part := range [][]int64{vals[:cut], vals[cut:]} {
			p := New(spec, 1)
			for _, v := range part {
				_ = p.AddDouble(0, float64(v))
			}
			raw, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back State
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			back.Bind(spec)
			if err := merged.Combine(0, &back, 0); err != nil {
				t.Fatal(err)
			}
		}
		for name, s := range map[string]*State{"one": one, "block": block, "merged": merged} {
			got, _ := s.Result(0, true)
			if got.Kind != ResultLong || got.Long != want {
				t.Errorf("%s from %d, %s: %v, want %d", c.op, c.init, name, got, want)
			}
		}
		if got, _ := New(spec, 1).Result(0, true); got.Kind != ResultNull {
			t.Errorf("%s of nothing: %v, want null", c.op, got)
		}
	}
}
