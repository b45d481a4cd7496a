package encoding

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// gatherIdx picks a random subset of [0, n) in a random order, with repeats.
func gatherIdx(rng *rand.Rand, n int) []int32 {
	if n == 0 {
		return nil
	}
	idx := make([]int32, rng.IntN(n)+1)
	for k := range idx {
		idx[k] = int32(rng.IntN(n))
	}
	return idx
}

func TestGatherIntsMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func(i int) int64{
		"sorted times": func(i int) int64 { return 1_700_000_000_000 + int64(i)*1000 + int64(rng.IntN(2))*1000 },
		"exponential":  func(int) int64 { return int64(rng.ExpFloat64() * 300) },
		"gcd":          func(int) int64 { return int64(rng.IntN(50)) * 7 },
		"wide":         func(int) int64 { return int64(rng.Uint64()) },
		"constant":     func(int) int64 { return -42 },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 9, 1000, 8192} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = gen(i)
			}
			for _, delta := range []bool{false, true} {
				block := AppendInts(nil, vals, delta)
				idx := gatherIdx(rng, n)
				got, m, err := GatherInts(nil, block, idx)
				if err != nil || m != n {
					t.Fatalf("%s n=%d: n %d, err %v", name, n, m, err)
				}
				for k, i := range idx {
					if got[k] != vals[i] {
						t.Fatalf("%s n=%d delta=%v: row %d = %d, want %d", name, n, delta, i, got[k], vals[i])
					}
				}
			}
		}
	}
}

func TestGatherFloatsMatchDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, decimal := range []bool{false, true} {
		for _, n := range []int{1, 100, 8192} {
			d := make([]float64, n)
			f := make([]float32, n)
			for i := range d {
				if decimal {
					d[i] = float64(rng.IntN(100000)) / 100
				} else {
					d[i] = rng.NormFloat64() * 1e6
				}
				f[i] = float32(d[i])
			}
			idx := gatherIdx(rng, n)
			gd, m, err := GatherFloat64s(nil, AppendFloat64s(nil, d), idx)
			if err != nil || m != n {
				t.Fatalf("float64 n=%d: n %d, err %v", n, m, err)
			}
			all32, err := DecodeFloat32s(nil, AppendFloat32s(nil, f))
			if err != nil {
				t.Fatal(err)
			}
			gf, m, err := GatherFloat32s(nil, AppendFloat32s(nil, f), idx)
			if err != nil || m != n {
				t.Fatalf("float32 n=%d: n %d, err %v", n, m, err)
			}
			for k, i := range idx {
				if math.Float64bits(gd[k]) != math.Float64bits(d[i]) {
					t.Fatalf("float64 decimal=%v: row %d = %v, want %v", decimal, i, gd[k], d[i])
				}
				if math.Float32bits(gf[k]) != math.Float32bits(all32[i]) {
					t.Fatalf("float32 decimal=%v: row %d = %v, want %v", decimal, i, gf[k], all32[i])
				}
			}
		}
	}
}

func TestGatherRejectsBadInput(t *testing.T) {
	block := AppendInts(nil, []int64{1, 2, 3}, false)
	if _, _, err := GatherInts(nil, block, []int32{3}); !errors.Is(err, errPosition) {
		t.Fatalf("position past the block: %v", err)
	}
	if _, _, err := GatherInts(nil, block, []int32{-1}); !errors.Is(err, errPosition) {
		t.Fatalf("negative position: %v", err)
	}
	for cut := range len(block) - 1 {
		if _, _, err := GatherInts(nil, block[:cut], []int32{0}); err == nil {
			t.Fatalf("truncated at %d: no error", cut)
		}
	}
	if _, _, err := GatherInts(nil, []byte{9, 1, 0}, []int32{0}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown encoding: %v", err)
	}
	fb := AppendFloat64s(nil, []float64{1.5, 2.25})
	for cut := range len(fb) - 1 {
		if _, _, err := GatherFloat64s(nil, fb[:cut], []int32{1}); err == nil {
			t.Fatalf("float64 truncated at %d: no error", cut)
		}
	}
}

func FuzzGatherInts(f *testing.F) {
	f.Add(AppendInts(nil, []int64{5, 6, 7, 100}, false), uint16(3))
	f.Add(AppendInts(nil, []int64{1000, 2000, 3000}, true), uint16(2))
	f.Add([]byte{1, 3, 0, 1, 60}, uint16(1))
	f.Fuzz(func(t *testing.T, block []byte, pos uint16) {
		got, n, err := GatherInts(nil, block, []int32{int32(pos)})
		if err != nil {
			return
		}
		all, err := DecodeInts(nil, block)
		if err != nil {
			t.Fatalf("gather accepted a block decode rejects: %v", err)
		}
		if len(all) != n || all[pos] != got[0] {
			t.Fatalf("gather %d (n %d) vs decode %d (n %d)", got[0], n, all[pos], len(all))
		}
	})
}
