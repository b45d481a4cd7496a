package encoding

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestPackUnpackAllWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for width := 0; width <= 64; width++ {
		for _, n := range []int{0, 1, 7, 8, 255, 256, 257, 1000} {
			vals := make([]uint64, n)
			for i := range vals {
				vals[i] = rng.Uint64()
				if width < 64 {
					vals[i] &= (1 << uint(width)) - 1
				}
			}
			packed := Pack([]byte{0xAA}, vals, width) // non-empty prefix: appends
			if packed[0] != 0xAA || len(packed) != 1+PackedLen(n, width) {
				t.Fatalf("width %d n %d: bad length %d", width, n, len(packed))
			}
			got, err := Unpack[uint64](nil, packed[1:], n, width)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, vals) {
				t.Fatalf("width %d n %d: round trip mismatch", width, n)
			}
			for i := 0; i < n; i += 1 + n/13 {
				if g := Get(packed[1:], i, width); g != vals[i] {
					t.Fatalf("width %d: Get(%d) = %d, want %d", width, i, g, vals[i])
				}
			}
			if n > 0 && width > 0 {
				if _, err := Unpack[uint64](nil, packed[1:len(packed)-1], n, width); err == nil {
					t.Fatalf("width %d n %d: short input accepted", width, n)
				}
			}
		}
	}
}

func TestIntsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := map[string][]int64{
		"empty":    {},
		"one":      {42},
		"const":    slices.Repeat([]int64{-7}, 1000),
		"extremes": {math.MinInt64, math.MaxInt64, 0, -1, 1, math.MinInt64},
		"gcd1000":  {1000, 5000, 3000, 1_000_000, 2000},
	}
	sorted := make([]int64, 5000)
	t0 := int64(1_704_067_200_000)
	for i := range sorted {
		t0 += 1000 * rng.Int64N(3)
		sorted[i] = t0
	}
	cases["timestamps"] = sorted
	random := make([]int64, 3000)
	for i := range random {
		random[i] = rng.Int64N(1<<40) - 1<<39
	}
	cases["random"] = random
	for name, vals := range cases {
		for _, delta := range []bool{false, true} {
			enc := AppendInts(nil, vals, delta)
			got, err := DecodeInts(nil, enc)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !slices.Equal(got, vals) && !(len(vals) == 0 && len(got) == 0) {
				t.Fatalf("%s delta=%v: mismatch", name, delta)
			}
		}
	}
	// Sorted timestamps with a common step pack into very few bits.
	if enc := AppendInts(nil, sorted, true); len(enc) > len(sorted)/3 {
		t.Fatalf("timestamps: %d bytes for %d values", len(enc), len(sorted))
	}
	if enc := AppendInts(nil, cases["const"], false); len(enc) > 16 {
		t.Fatalf("constant block takes %d bytes", len(enc))
	}
}

func TestFloatsRoundTripBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	prices := make([]float64, 4096)
	for i := range prices {
		prices[i] = math.Round(math.Exp(rng.Float64()*6)*100) / 100
	}
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
		math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1, 0.2, 0.30000000000000004, 1e-300}
	random := make([]float64, 1000)
	for i := range random {
		random[i] = rng.NormFloat64() * 1e9
	}
	for name, vals := range map[string][]float64{"prices": prices, "special": special, "random": random, "empty": {}} {
		enc := AppendFloat64s(nil, vals)
		got, err := DecodeFloat64s(nil, enc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(vals) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(vals))
		}
		for i := range vals {
			if math.Float64bits(got[i]) != math.Float64bits(vals[i]) {
				t.Fatalf("%s[%d]: %v (%x), want %v (%x)", name, i, got[i], math.Float64bits(got[i]), vals[i], math.Float64bits(vals[i]))
			}
		}
		f32 := make([]float32, len(vals))
		for i, v := range vals {
			f32[i] = float32(v)
		}
		g32, err := DecodeFloat32s(nil, AppendFloat32s(nil, f32))
		if err != nil {
			t.Fatalf("%s float32: %v", name, err)
		}
		for i := range f32 {
			if math.Float32bits(g32[i]) != math.Float32bits(f32[i]) {
				t.Fatalf("%s float32[%d]: %v, want %v", name, i, g32[i], f32[i])
			}
		}
	}
	// Two-decimal prices take about two bytes each, not eight.
	if enc := AppendFloat64s(nil, prices); enc[0] != Float64Decimal || len(enc) > 2*len(prices)+32 {
		t.Fatalf("prices: encoding %d, %d bytes", enc[0], len(enc))
	}
}

func TestCodecs(t *testing.T) {
	src := bytes.Repeat([]byte("strata segment block "), 500)
	for _, c := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		comp, err := Compress(c, []byte{1, 2}, src)
		if err != nil {
			t.Fatal(err)
		}
		if c != CodecNone && len(comp) > len(src)/4 {
			t.Fatalf("%v: %d bytes", c, len(comp))
		}
		got, err := Decompress(c, nil, comp[2:], len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%v: round trip: %v", c, err)
		}
		if _, err := Decompress(c, nil, comp[2:], len(src)-1); err == nil {
			t.Fatalf("%v: wrong raw length accepted", c)
		}
		if c != CodecNone {
			bad := bytes.Clone(comp[2:])
			bad[len(bad)/2] ^= 0xff
			if got, err := Decompress(c, nil, bad, len(src)); err == nil && bytes.Equal(got, src) {
				t.Fatalf("%v: damage produced the original", c)
			}
		}
	}
	if ChooseCodec(src) == CodecNone {
		t.Fatal("repetitive data should be compressed")
	}
	noise := make([]byte, 8192)
	nr := rand.New(rand.NewPCG(1, 1))
	for i := range noise {
		noise[i] = byte(nr.Uint32())
	}
	if c := ChooseCodec(noise); c != CodecNone {
		t.Fatalf("random data: chose %v", c)
	}
}

func TestDict(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	set := map[string]bool{"": true, "a": true, "ab": true, "abc": true, "b": true}
	for len(set) < 1000 {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = "abcxyz\x00\xff"[rng.IntN(8)]
		}
		set[string(b)] = true
	}
	var vals []string
	for s := range set {
		vals = append(vals, s)
	}
	sort.Strings(vals)
	for _, hasNull := range []bool{false, true} {
		d, err := OpenDict(AppendDict(nil, vals, hasNull))
		if err != nil {
			t.Fatal(err)
		}
		base := 0
		if hasNull {
			base = 1
			if !d.IsNull(0) || d.Value(0) != "" {
				t.Fatal("null id")
			}
		}
		if d.Len() != len(vals)+base {
			t.Fatalf("len %d", d.Len())
		}
		for i, v := range vals {
			if got := d.Value(i + base); got != v {
				t.Fatalf("Value(%d) = %q, want %q", i+base, got, v)
			}
			if id, ok := d.Find(v); !ok || id != i+base {
				t.Fatalf("Find(%q) = %d %v, want %d", v, id, ok, i+base)
			}
		}
		for _, probe := range []string{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "aa", "abd"} {
			id, ok := d.Find(probe)
			want := sort.SearchStrings(vals, probe)
			if ok || id != want+base {
				t.Fatalf("Find(%q) = %d %v, want insertion point %d", probe, id, ok, want+base)
			}
		}
		n := 0
		d.ForEach(func(id int, v []byte) bool {
			if string(v) != vals[id-base] {
				t.Fatalf("ForEach id %d", id)
			}
			n++
			return true
		})
		if n != len(vals) {
			t.Fatalf("ForEach visited %d", n)
		}
	}
	if _, err := OpenDict(AppendDict(nil, []string{"b", "a"}, false)); err == nil {
		t.Fatal("unsorted dictionary accepted")
	}
	if _, err := OpenDict(AppendDict(nil, []string{"a", "a"}, false)); err == nil {
		t.Fatal("duplicate values accepted")
	}
	d, err := OpenDict(AppendDict(nil, nil, false))
	if err != nil || d.Len() != 0 {
		t.Fatalf("empty dictionary: %v", err)
	}
	if id, ok := d.Find("x"); ok || id != 0 {
		t.Fatal("Find in empty dictionary")
	}
}

func TestPostings(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 2, 255, 256, 257, 5000} {
		set := map[uint32]bool{}
		for len(set) < n {
			set[rng.Uint32N(1<<22)] = true
		}
		rows := make([]uint32, 0, n)
		for r := range set {
			rows = append(rows, r)
		}
		slices.Sort(rows)
		list := AppendPostingList(nil, rows)
		bm := roaring.BitmapOf(rows...)
		bmEnc, err := AppendPostingBitmap(nil, bm)
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range [][]byte{list, bmEnc} {
			got, err := DecodePosting(enc, 1<<22)
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			if !slices.Equal(got.ToArray(), rows) && n > 0 {
				t.Fatalf("n=%d: mismatch", n)
			}
			if n > 0 {
				if _, err := DecodePosting(enc, int(rows[n-1])); err == nil {
					t.Fatalf("n=%d: row beyond the row count accepted", n)
				}
			}
			if c, _ := PostingCardinality(enc); c != n {
				t.Fatalf("n=%d: cardinality %d", n, c)
			}
			if n > 1 {
				if _, err := DecodePosting(enc[:len(enc)-1], 1<<22); err == nil {
					t.Fatalf("n=%d: truncated posting accepted", n)
				}
			}
		}
	}
	if _, err := DecodePosting([]byte{3, 1, 2, 3}, 100); err == nil {
		t.Fatal("garbage roaring posting accepted")
	}
}

// TestAppendPostingRows checks that the direct roaring posting is byte for
// byte what the roaring library writes after RunOptimize, for sparse,
// dense (bitmap containers), run-heavy and mixed row sets, and that
// appending keeps what dst held (also over stale bytes in its capacity).
func TestAppendPostingRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	gen := map[string]func() []uint32{
		"empty": func() []uint32 { return nil },
		"one":   func() []uint32 { return []uint32{7} },
		"sparse": func() []uint32 {
			return randomRows(rng, 3000, 1<<22)
		},
		"dense": func() []uint32 { // bitmap containers
			return randomRows(rng, 150_000, 1<<18)
		},
		"runs": func() []uint32 {
			var rows []uint32
			for r := uint32(0); r < 300_000; r += 1000 {
				for k := uint32(0); k < 400; k++ {
					rows = append(rows, r+k)
				}
			}
			return rows
		},
		"mixed": func() []uint32 { // a container of runs among others
			rows := randomRows(rng, 2000, 1<<16)
			for r := uint32(2 << 16); r < 2<<16+5000; r++ {
				rows = append(rows, r)
			}
			for _, r := range randomRows(rng, 9000, 1<<16) {
				rows = append(rows, 3<<16+r)
			}
			return rows
		},
	}
	for name, g := range gen {
		rows := g()
		bm := RowsToBitmap(rows)
		bm.RunOptimize()
		want, err := AppendPostingBitmap([]byte("prefix"), bm)
		if err != nil {
			t.Fatal(err)
		}
		dst := bytes.Repeat([]byte{0xff}, 1<<20)[:6] // stale bytes beyond len
		copy(dst, "prefix")
		got, err := AppendPostingRows(dst, rows)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes differ from the library's %d", name, len(got), len(want))
		}
		dec, err := DecodePosting(got[6:], 1<<22)
		if err != nil || !slices.Equal(dec.ToArray(), rows) && len(rows) > 0 {
			t.Fatalf("%s: does not decode to the rows: %v", name, err)
		}
	}
}

func randomRows(rng *rand.Rand, n int, limit uint32) []uint32 {
	set := map[uint32]bool{}
	for len(set) < n {
		set[rng.Uint32N(limit)] = true
	}
	rows := make([]uint32, 0, n)
	for r := range set {
		rows = append(rows, r)
	}
	slices.Sort(rows)
	return rows
}

func TestCorruptErrorsWrapSentinel(t *testing.T) {
	_, err := DecodeInts(nil, []byte{9, 1})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown encoding: %v", err)
	}
	_, err = DecodeFloat64s(nil, []byte{Float64Raw, 10, 1, 2})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short raw block: %v", err)
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder: none may panic.
func FuzzDecode(f *testing.F) {
	f.Add(AppendInts(nil, []int64{1, 5, 9, 1 << 40}, true))
	f.Add(AppendInts(nil, []int64{3, 3, 3}, false))
	f.Add(AppendFloat64s(nil, []float64{1.25, 3.5}))
	f.Add(AppendFloat32s(nil, []float32{1.25, float32(math.Pi)}))
	f.Add(AppendDict(nil, []string{"a", "ab", "b"}, true))
	f.Add(AppendPostingList(nil, []uint32{1, 7, 300}))
	bm, _ := AppendPostingBitmap(nil, roaring.BitmapOf(1, 2, 3, 1<<20))
	f.Add(bm)
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeInts(nil, b)
		DecodeFloat64s(nil, b)
		DecodeFloat32s(nil, b)
		if d, err := OpenDict(b); err == nil {
			for id := 0; id < d.Len(); id++ {
				v := d.Value(id)
				d.Find(v)
			}
			d.ForEach(func(int, []byte) bool { return true })
		}
		DecodePosting(b, 1<<16)
		PostingCardinality(b)
		DecodeBitmap(b)
		for _, c := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
			Decompress(c, nil, b, 1024)
		}
		if len(b) > 0 {
			Unpack[int32](nil, b[1:], len(b)%100, int(b[0]%70))
		}
	})
}
