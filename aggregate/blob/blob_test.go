package blob

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/quantiles"
)

func TestPairRoundTrip(t *testing.T) {
	cases := []struct {
		typ string
		p   Pair
	}{
		{TypePairLongLong, Pair{Time: -5, Long: math.MinInt64}},
		{TypePairLongLong, Pair{Time: 7, Null: true}},
		{TypePairLongDouble, Pair{Time: 1, Double: math.Inf(-1)}},
		{TypePairLongFloat, Pair{Time: 2, Double: 1.5}},
		{TypePairLongString, Pair{Time: 3, String: "héllo"}},
		{TypePairLongString, Pair{Time: 3, String: ""}},
		{TypePairLongString, Pair{Time: 4, Null: true}},
	}
	for _, c := range cases {
		b, err := AppendPair(nil, c.typ, c.p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodePair(c.typ, b)
		if err != nil || got != c.p {
			t.Fatalf("%s %+v: got %+v, %v", c.typ, c.p, got, err)
		}
		if _, err := DecodePair(c.typ, b[:len(b)-1]); err == nil && c.typ != TypePairLongString {
			t.Fatalf("%s: truncated pair accepted", c.typ)
		}
	}
	if _, err := DecodePair(TypePairLongLong, []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad flags: %v", err)
	}
	if _, err := AppendPair(nil, TypeHLL, Pair{}); err == nil {
		t.Fatal("pair of a sketch type accepted")
	}
	if v, ok := Version(TypeTheta); !ok || v != 1 {
		t.Fatal("theta version")
	}
}

func TestSketchDecode(t *testing.T) {
	sk, _ := hll.NewHllSketch(12, hll.TgtHllTypeHll4)
	for i := range 10000 {
		UpdateHLLString(sk, string(rune('a'+i%26))+string(rune(i)))
	}
	UpdateHLLDouble(sk, math.Copysign(0, -1))
	b, _ := sk.ToCompactSlice()
	got, err := DecodeHLL(b)
	if err != nil {
		t.Fatal(err)
	}
	e1, _ := got.GetEstimate()
	e2, _ := sk.GetEstimate()
	if e1 != e2 {
		t.Fatalf("estimate %g, want %g", e1, e2)
	}
	ub, _ := sk.ToUpdatableSlice()
	if _, err := DecodeHLL(ub); err != nil {
		t.Fatalf("updatable image rejected: %v", err)
	}
	th, _ := theta.NewQuickSelectUpdateSketch()
	for i := range 1000 {
		UpdateTheta(th, int64(i))
		UpdateTheta(th, int64(i)) // duplicates are not errors
	}
	UpdateTheta(th, "")
	tb, _ := th.CompactOrdered().MarshalBinary()
	tg, err := DecodeTheta(tb)
	if err != nil || tg.Estimate() != 1000 {
		t.Fatalf("theta: %v %v", tg, err)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, b[:len(b)/2], tb[:len(tb)-3]} {
		if _, err := DecodeHLL(bad); err == nil && len(bad) < len(b) {
			t.Errorf("hll garbage %x accepted", bad)
		}
		if _, err := DecodeTheta(bad); err == nil && len(bad) < len(tb) {
			t.Errorf("theta garbage %x accepted", bad)
		}
	}
}

func TestQuantilesDecode(t *testing.T) {
	sk, _ := quantiles.New(64)
	for i := range 1000 {
		sk.Update(float64(i))
	}
	b, _ := sk.MarshalBinary()
	got, err := DecodeQuantiles(b)
	if err != nil || got.N() != 1000 || got.K() != 64 || got.Max() != 999 {
		t.Fatalf("quantiles: %v %v", got, err)
	}
	// Druid stores an empty sketch as zero bytes.
	if e, err := DecodeQuantiles(nil); err != nil || !e.IsEmpty() {
		t.Fatalf("zero bytes: %v %v", e, err)
	}
	if _, err := DecodeQuantiles(b[:len(b)-5]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated sketch: %v", err)
	}
}

func FuzzDecodeBlobs(f *testing.F) {
	sk, _ := hll.NewHllSketch(10, hll.TgtHllTypeHll8)
	sk.UpdateInt64(1)
	b, _ := sk.ToCompactSlice()
	f.Add(b)
	p, _ := AppendPair(nil, TypePairLongString, Pair{Time: 1, String: "x"})
	f.Add(p)
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeHLL(b)
		DecodeTheta(b)
		DecodeQuantiles(b)
		for _, typ := range []string{TypePairLongLong, TypePairLongDouble, TypePairLongFloat, TypePairLongString} {
			DecodePair(typ, b)
		}
	})
}

func TestHLLImagesAllModes(t *testing.T) {
	// Every mode and type, compact and updatable, must pass the header
	// check; truncated or extended compact images must not.
	for _, tgt := range []hll.TgtHllType{hll.TgtHllTypeHll4, hll.TgtHllTypeHll6, hll.TgtHllTypeHll8} {
		for _, n := range []int{0, 3, 100, 5000} {
			sk, _ := hll.NewHllSketch(11, tgt)
			for i := range n {
				sk.UpdateInt64(int64(i))
			}
			cb, _ := sk.ToCompactSlice()
			ub, _ := sk.ToUpdatableSlice()
			for _, img := range [][]byte{cb, ub} {
				got, err := DecodeHLL(img)
				if err != nil {
					t.Fatalf("type %v, %d values, %d bytes: %v", tgt, n, len(img), err)
				}
				e1, _ := got.GetEstimate()
				e2, _ := sk.GetEstimate()
				if e1 != e2 {
					t.Fatalf("type %v, %d values: estimate %g, want %g", tgt, n, e1, e2)
				}
			}
			if _, err := DecodeHLL(cb[:len(cb)-1]); err == nil && len(cb) > 8 {
				t.Fatalf("type %v, %d values: truncated compact image accepted", tgt, n)
			}
			if _, err := DecodeHLL(append(append([]byte{}, cb...), 0, 0, 0, 0)); err == nil {
				t.Fatalf("type %v, %d values: extended compact image accepted", tgt, n)
			}
		}
	}
}
