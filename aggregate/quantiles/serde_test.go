package quantiles

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// le builds little-endian byte vectors: bytes are taken as is, uint16/int64
// and float64 values are encoded.
func le(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case []byte:
			b = append(b, v...)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		case float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		default:
			panic(p)
		}
	}
	return b
}

// equalSketch compares logical state: the base buffer as a multiset (the
// serialized form sorts it) and the valid levels.
func equalSketch(a, b *Sketch) bool {
	if a.k != b.k || a.n != b.n || a.bitPattern != b.bitPattern {
		return false
	}
	if a.n > 0 && (a.minV != b.minV || a.maxV != b.maxV) {
		return false
	}
	ab, bb := slices.Clone(a.base), slices.Clone(b.base)
	slices.Sort(ab)
	slices.Sort(bb)
	if !slices.Equal(ab, bb) {
		return false
	}
	for lvl, p := 0, a.bitPattern; p != 0; lvl, p = lvl+1, p>>1 {
		if p&1 != 0 && !slices.Equal(a.level(lvl), b.level(lvl)) {
			return false
		}
	}
	return true
}

func TestMarshalEmpty(t *testing.T) {
	b, err := mustNew(t, 128).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// preLongs 1, serVer 3, family 8, flags EMPTY|COMPACT|READ_ONLY|ORDERED, k=128.
	if want := "0103081e80000000"; hex.EncodeToString(b) != want {
		t.Fatalf("empty = %x, want %s", b, want)
	}
	b, _ = mustNew(t, 32768).MarshalBinary()
	if want := "0103081e00800000"; hex.EncodeToString(b) != want {
		t.Fatalf("empty k=32768 = %x, want %s", b, want)
	}
}

func TestMarshalSmallCompact(t *testing.T) {
	s := mustNew(t, 128)
	for _, v := range []float64{3, 1, 2} {
		s.Update(v)
	}
	b, _ := s.MarshalBinary()
	want := le([]byte{2, 3, 8, 0x1a}, uint16(128), []byte{0, 0}, int64(3), 1.0, 3.0, 1.0, 2.0, 3.0)
	if !bytes.Equal(b, want) {
		t.Fatalf("got  %x\nwant %x", b, want)
	}
}

// Byte vectors laid out as DataSketches-java writes them (PreambleUtil /
// DoublesByteArrayImpl): k=2, n=5, values 1..5 where the zip kept {2, 4} in
// level 0 and 5 is left in the base buffer.
func TestDecodeKnownVectors(t *testing.T) {
	compact := le([]byte{2, 3, 8, 0x1a}, uint16(2), []byte{0, 0}, int64(5), 1.0, 5.0,
		5.0,      // base buffer (1 item)
		2.0, 4.0) // level 0
	updatable := le([]byte{2, 3, 8, 0}, uint16(2), []byte{0, 0}, int64(5), 1.0, 5.0,
		5.0, 99.0, 99.0, 99.0, // 2k base buffer slots, only the first is live
		2.0, 4.0) // level 0
	serVer2 := le([]byte{2, 2, 8, 0}, uint16(2), []byte{0, 0}, int64(5), 1.0, 5.0, 5.0, 2.0, 4.0)
	serVer1 := le([]byte{5, 1, 8, 0}, uint16(2), []byte{0, 0}, int64(5), 1.0, 5.0, int64(0),
		5.0, 99.0, 99.0, 99.0, 2.0, 4.0)
	for name, b := range map[string][]byte{"compact": compact, "updatable": updatable, "serVer2": serVer2, "serVer1": serVer1} {
		s, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.K() != 2 || s.N() != 5 || s.Min() != 1 || s.Max() != 5 {
			t.Fatalf("%s: k=%d n=%d min=%v max=%v", name, s.K(), s.N(), s.Min(), s.Max())
		}
		// Sorted view: min 1 (inserted, cum 1), 2 (cum 2), 4 (cum 4), 5 (cum 5).
		for x, want := range map[float64]float64{0: 0, 1: 0.2, 3: 0.4, 4: 0.8, 5: 1} {
			if r := s.Rank(x); r != want {
				t.Fatalf("%s: Rank(%v) = %v, want %v", name, x, r, want)
			}
		}
		for r, want := range map[float64]float64{0: 1, 0.2: 1, 0.3: 2, 0.5: 4, 0.8: 4, 0.9: 5, 1: 5} {
			if q, _ := s.Quantile(r); q != want {
				t.Fatalf("%s: Quantile(%v) = %v, want %v", name, r, q, want)
			}
		}
		out, _ := s.MarshalBinary()
		if !bytes.Equal(out, compact) {
			t.Fatalf("%s: re-marshal = %x, want %x", name, out, compact)
		}
	}

	// Empty forms: compact (8 bytes), heap updatable (flags EMPTY only) and
	// direct updatable (preLongs 2, 32 bytes).
	for _, b := range [][]byte{
		le([]byte{1, 3, 8, 0x1e}, uint16(64), []byte{0, 0}),
		le([]byte{1, 3, 8, 0x04}, uint16(64), []byte{0, 0}),
		le([]byte{2, 3, 8, 0x04}, uint16(64), []byte{0, 0}, int64(0), 0.0, 0.0),
		le([]byte{1, 2, 8, 0x04}, uint16(64), []byte{0, 0}),
	} {
		s, err := Decode(b)
		if err != nil || !s.IsEmpty() || s.K() != 64 {
			t.Fatalf("empty %x: %v %v", b, s, err)
		}
	}
}

// An updatable image with an unused level between valid ones: k=2, n=8
// (bit pattern 10b): level 0 slots are garbage, level 1 holds {3, 7}.
func TestDecodeUpdatableGapLevel(t *testing.T) {
	b := le([]byte{2, 3, 8, 0}, uint16(2), []byte{0, 0}, int64(8), 0.0, 7.0,
		99.0, 99.0, 99.0, 99.0, // base slots (empty)
		-5.0, 123.0, // level 0, unused
		3.0, 7.0) // level 1
	s, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.bitPattern != 2 || len(s.base) != 0 || !slices.Equal(s.level(1), []float64{3, 7}) {
		t.Fatalf("decoded %v %v %v", s.bitPattern, s.base, s.levels)
	}
	out, _ := s.MarshalBinary()
	want := le([]byte{2, 3, 8, 0x1a}, uint16(2), []byte{0, 0}, int64(8), 0.0, 7.0, 3.0, 7.0)
	if !bytes.Equal(out, want) {
		t.Fatalf("got %x want %x", out, want)
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, k := range []int{2, 16, 128, 1024} {
		for _, n := range []int{0, 1, 5, 2*k - 1, 2 * k, 2*k + 1, 7*k + 3, 20000} {
			s := mustNew(t, k)
			for range n {
				s.Update(rng.NormFloat64() * 100)
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != s.compactSize() {
				t.Fatalf("size %d != %d", len(b), s.compactSize())
			}
			d, err := Decode(b)
			if err != nil {
				t.Fatalf("k=%d n=%d: %v", k, n, err)
			}
			if !equalSketch(s, d) {
				t.Fatalf("k=%d n=%d: round trip differs", k, n)
			}
			q1, _ := s.Quantiles([]float64{0, 0.1, 0.5, 0.9, 1})
			q2, _ := d.Quantiles([]float64{0, 0.1, 0.5, 0.9, 1})
			for i := range q1 {
				if q1[i] != q2[i] && !(math.IsNaN(q1[i]) && math.IsNaN(q2[i])) {
					t.Fatalf("k=%d n=%d quantiles differ: %v %v", k, n, q1, q2)
				}
			}
			// A decoded sketch keeps working: update and merge into it.
			d.Update(1)
			if err := d.Merge(s); err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, d)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	s := mustNew(t, 4)
	for i := range 30 {
		s.Update(float64(i))
	}
	good, _ := s.MarshalBinary()
	if _, err := Decode(good); err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := Decode(good[:n]); err == nil {
			t.Fatalf("truncated to %d accepted", n)
		}
	}
	mut := func(f func(b []byte)) []byte {
		b := slices.Clone(good)
		f(b)
		return b
	}
	put := func(b []byte, off int, v float64) { binary.LittleEndian.PutUint64(b[off:], math.Float64bits(v)) }
	cases := map[string][]byte{
		"family":          mut(func(b []byte) { b[2] = 7 }),
		"serVer 0":        mut(func(b []byte) { b[1] = 0 }),
		"serVer 4":        mut(func(b []byte) { b[1] = 4 }),
		"big endian":      mut(func(b []byte) { b[3] |= 1 }),
		"unknown flag":    mut(func(b []byte) { b[3] |= 0x20 }),
		"preLongs 1":      mut(func(b []byte) { b[0] = 1 }),
		"preLongs 3":      mut(func(b []byte) { b[0] = 3 }),
		"k 0":             mut(func(b []byte) { b[4], b[5] = 0, 0 }),
		"k 3":             mut(func(b []byte) { b[4] = 3 }),
		"k 65535":         mut(func(b []byte) { b[4], b[5] = 0xff, 0xff }),
		"negative n":      mut(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<63) }),
		"n too big":       mut(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<62+1) }),
		"n vs length":     mut(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<62-1) }),
		"NaN min":         mut(func(b []byte) { put(b, 16, math.NaN()) }),
		"min > max":       mut(func(b []byte) { put(b, 16, 100) }),
		"NaN item":        mut(func(b []byte) { put(b, 40, math.NaN()) }),
		"item above max":  mut(func(b []byte) { put(b, len(b)-8, 1000) }),
		"unsorted level":  mut(func(b []byte) { put(b, len(b)-16, 29) }),
		"serVer2 compact": mut(func(b []byte) { b[1] = 2 }), // v2 must not set COMPACT
	}
	for name, b := range cases {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// A sparse compact image (one high level) is valid; merging two of them
// must report the n overflow instead of wrapping.
func TestDecodeHugeN(t *testing.T) {
	b := le([]byte{2, 3, 8, 0x1a}, uint16(2), []byte{0, 0}, int64(1<<62), 1.0, 2.0, 1.0, 2.0)
	s, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if q, _ := s.Quantile(0.5); q != 1 {
		t.Fatalf("median %v", q)
	}
	if err := s.Merge(s.Copy()); err == nil {
		t.Fatal("n overflow not reported")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(le([]byte{1, 3, 8, 0x1e}, uint16(128), []byte{0, 0}))
	f.Add(le([]byte{2, 3, 8, 0x1a}, uint16(2), []byte{0, 0}, int64(1<<62), 1.0, 2.0, 1.0, 2.0))
	f.Add(le([]byte{2, 3, 8, 0}, uint16(2), []byte{0, 0}, int64(5), 1.0, 5.0, 5.0, 99.0, 99.0, 99.0, 2.0, 4.0))
	f.Add(le([]byte{5, 1, 8, 0}, uint16(2), []byte{0, 0}, int64(5), 1.0, 5.0, int64(0), 5.0, 9.0, 9.0, 9.0, 2.0, 4.0))
	for _, n := range []int{3, 9, 40, 300} {
		s, _ := New(4)
		for i := range n {
			s.Update(float64(i % 13))
		}
		b, _ := s.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			return
		}
		out, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decode(out)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !equalSketch(s, d) {
			t.Fatal("re-decoded sketch differs")
		}
		// Queries and mutation must not panic on anything accepted.
		_, _ = s.Quantiles([]float64{0, 0.5, 1})
		_ = s.Rank(0)
		_, _ = s.PMF([]float64{0, 1})
		_ = s.String()
		s.Update(0.5)
		_ = s.Merge(d)
	})
}
