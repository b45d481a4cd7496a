package aggregate

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// sketchOf builds the serialized sketch of a kind over the strings
// "v<lo>" .. "v<hi-1>".
func sketchOf(t testing.TB, kind string, lo, hi int) []byte {
	t.Helper()
	s := New(&Spec{Kind: kind}, 1)
	for i := lo; i < hi; i++ {
		if err := s.AddString(0, "v"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Result(0, false)
	if err != nil {
		t.Fatal(err)
	}
	return r.Sketch
}

// Small sets stay exact in both sketches, so unions, intersections and
// differences must count exactly the sets' sizes.
func TestSketchOps(t *testing.T) {
	a, b := sketchOf(t, KindHLL, 0, 60), sketchOf(t, KindHLL, 40, 100)
	u, err := HLLUnion([][]byte{a, b, nil}, 12, "HLL_8")
	if err != nil {
		t.Fatal(err)
	}
	est, lo, hi, err := HLLBounds(u, 2)
	if err != nil || math.Round(est) != 100 || lo > est || hi < est {
		t.Errorf("HLL union: %v [%v, %v] %v, want 100", est, lo, hi, err)
	}
	if s, err := HLLSummary(u); err != nil || !strings.Contains(s, "Estimate") || !strings.Contains(s, "HLL_8") {
		t.Errorf("summary %q %v", s, err)
	}
	if e, err := HLLEstimate(nil); err != nil || e != 0 {
		t.Errorf("empty HLL: %v %v", e, err)
	}
	if _, _, _, err := HLLBounds(u, 4); err == nil {
		t.Error("numStdDev 4 accepted")
	}

	x, y, z := sketchOf(t, KindTheta, 0, 60), sketchOf(t, KindTheta, 40, 100), sketchOf(t, KindTheta, 50, 55)
	for _, c := range []struct {
		op   string
		in   [][]byte
		want float64
	}{
		{ThetaUnion, [][]byte{x, y}, 100},
		{ThetaIntersect, [][]byte{x, y}, 20},
		{ThetaIntersect, [][]byte{x, y, z}, 5},
		{ThetaNot, [][]byte{x, y}, 40},
		{ThetaNot, [][]byte{y, x, z}, 40},
		{ThetaUnion, [][]byte{nil, z}, 5},
	} {
		out, err := ThetaSetOp(c.op, 16384, c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		est, lo, hi, err := ThetaBounds(out, 1)
		if err != nil || est != c.want || lo > est || hi < est {
			t.Errorf("%s of %d sketches: %v [%v, %v] %v, want %v", c.op, len(c.in), est, lo, hi, err, c.want)
		}
	}
	if _, err := ThetaSetOp("XOR", 16, [][]byte{x}); err == nil {
		t.Error("XOR accepted")
	}
	if _, err := ThetaSetOp(ThetaUnion, 16, [][]byte{[]byte("not a sketch")}); err == nil {
		t.Error("garbage accepted")
	}
}

// Corrupt sketch bytes are errors, never panics.
func FuzzSketchOps(f *testing.F) {
	f.Add(sketchOf(f, KindHLL, 0, 10))
	f.Add(sketchOf(f, KindTheta, 0, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = HLLUnion([][]byte{b}, 12, "HLL_4")
		_, _ = HLLSummary(b)
		_, _, _, _ = HLLBounds(b, 1)
		for _, op := range []string{ThetaUnion, ThetaIntersect, ThetaNot} {
			_, _ = ThetaSetOp(op, 16, [][]byte{b, b})
		}
		_, _, _, _ = ThetaBounds(b, 2)
	})
}
