package aggregate

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// twoPass is the textbook variance of xs, computed independently.
func twoPass(xs []float64, population bool) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var m2 float64
	for _, x := range xs {
		m2 += (x - mean) * (x - mean)
	}
	if population {
		return m2 / float64(len(xs))
	}
	return m2 / float64(len(xs)-1)
}

// near allows the rounding of the running sums (Druid's formula), far below
// what a sum of squares would lose at these magnitudes.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// Folding values one by one, merging partial states split anywhere (also
// through the wire form), and the estimators all agree with the two-pass
// variance; no value gives null, one value 0.
func TestVariance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, pop := range []bool{false, true} {
		spec := &Spec{Kind: KindVariance, Population: pop}
		for trial := range 50 {
			// Values far from 0 with a small spread: a sum-of-squares
			// formula would lose them to cancellation.
			n := 2 + r.IntN(200)
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = 1e9 + r.NormFloat64()*3
				if trial%2 == 0 {
					xs[i] = math.Round(xs[i])
				}
			}
			want := twoPass(xs, pop)
			one := New(spec, 1)
			for _, x := range xs {
				if x == math.Trunc(x) {
					_ = one.AddLong(0, int64(x))
				} else {
					_ = one.AddDouble(0, x)
				}
			}
			got, _ := one.Result(0, true)
			if got.Kind != ResultDouble || !near(got.Double, want) {
				t.Fatalf("pop=%v n=%d: one state %v, want %v", pop, n, got, want)
			}
			// Three partial states, the middle one through JSON, merged.
			cut1, cut2 := r.IntN(n+1), r.IntN(n+1)
			cut1, cut2 = min(cut1, cut2), max(cut1, cut2)
			merged := New(spec, 1)
			for _, part := range [][]float64{xs[:cut1], xs[cut1:cut2], xs[cut2:]} {
				p := New(spec, 1)
				for _, x := range part {
					_ = p.AddDouble(0, x)
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
			got, _ = merged.Result(0, true)
			if !near(got.Double, want) || merged.Longs[0] != int64(n) {
				t.Fatalf("pop=%v n=%d cuts %d,%d: merged %v (count %d), want %v", pop, n, cut1, cut2, got, merged.Longs[0], want)
			}
		}
		s := New(spec, 3)
		_ = s.AddDouble(1, 5)
		if r, _ := s.Result(0, true); r.Kind != ResultNull {
			t.Errorf("no values: %v, want null", r)
		}
		if r, _ := s.Result(1, true); r.Kind != ResultDouble || r.Double != 0 {
			t.Errorf("one value: %v, want 0", r)
		}
	}
	// Grouped states gather, slice and truncate their sums of squares with
	// the rest.
	s := New(&Spec{Kind: KindVariance}, 3)
	for g, vals := range [][]float64{{1, 2}, {10, 30}, {7}} {
		for _, v := range vals {
			_ = s.AddDouble(int32(g), v)
		}
	}
	g := s.Gather([]int{1, 0})
	if v, _ := g.Variance(0, false); v != 200 || len(g.M2) != 2 {
		t.Errorf("gathered variance %v, m2 %v", v, g.M2)
	}
	if v, _ := s.Slice(3, 1, 3).Variance(0, true); v != 100 {
		t.Errorf("sliced population variance %v, want 100", v)
	}
	s.Truncate(1)
	if len(s.M2) != 1 {
		t.Errorf("truncated m2 %v", s.M2)
	}
}

// Decoding checks a variance state's columns before anything combines it.
func TestVarianceWireRejects(t *testing.T) {
	for _, raw := range []string{
		`{"kind":"VARIANCE","longs":"AQ==","doubles":[1],"null":[false]}`,                     // no m2
		`{"kind":"VARIANCE","op":"sum","longs":"AQ==","doubles":[1],"m2":[0],"null":[false]}`, // an op
		`{"kind":"VARIANCE","longs":"fw==","doubles":[1],"m2":[0],"null":[false]}`,            // a negative count
		`{"kind":"VARIANCE","longs":"AA==","doubles":[0],"m2":[0],"null":[false]}`,            // no count, not null
	} {
		var s State
		if err := json.Unmarshal([]byte(raw), &s); err == nil {
			t.Errorf("%s: decoded", raw)
		}
	}
}

func FuzzUnmarshalVariance(f *testing.F) {
	s := New(&Spec{Kind: KindVariance}, 3)
	_ = s.AddDouble(0, 1.5)
	_ = s.AddLong(0, 7)
	_ = s.AddDouble(2, -3)
	raw, err := json.Marshal(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"kind":"VARIANCE","longs":"AQ==","doubles":["NaN"],"m2":["Infinity"],"null":[false]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if err := json.Unmarshal(data, &s); err != nil || s.Kind != KindVariance {
			return
		}
		s.Bind(&Spec{Kind: KindVariance})
		into := New(s.Spec(), 1)
		for i := range s.Groups() {
			if _, err := s.Result(i, true); err != nil {
				t.Fatal(err)
			}
			if err := into.Combine(0, &s, i); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := into.Result(0, true); err != nil {
			t.Fatal(err)
		}
	})
}
