package encoding

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// Micro benchmarks of each encoding on data shaped like the bench data set
// (8192-value blocks). b.SetBytes is the decoded size, so MB/s compare.

const blockN = 8192

func zipfIDs(n, card int, s float64) []uint32 {
	rng := rand.New(rand.NewPCG(1, uint64(card)))
	z := rand.NewZipf(rand.New(rand.NewPCG(2, 2)), s, 1, uint64(card-1))
	_ = rng
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(z.Uint64())
	}
	return out
}

func BenchmarkUnpack(b *testing.B) {
	for _, width := range []int{1, 6, 17, 20, 33} {
		vals := make([]uint64, blockN)
		rng := rand.New(rand.NewPCG(1, 1))
		for i := range vals {
			vals[i] = rng.Uint64() & (1<<uint(width) - 1)
		}
		packed := Pack(nil, vals, width)
		b.Run(fmt.Sprintf("width=%d", width), func(b *testing.B) {
			dst := make([]int32, blockN)
			dst64 := make([]int64, blockN)
			b.SetBytes(blockN * 4)
			for range b.N {
				if width <= 31 {
					Unpack(dst, packed, blockN, width)
				} else {
					Unpack(dst64, packed, blockN, width)
				}
			}
		})
	}
}

func BenchmarkPack(b *testing.B) {
	ids := zipfIDs(blockN, 100_000, 1.1)
	b.SetBytes(blockN * 4)
	var dst []byte
	for range b.N {
		dst = Pack(dst[:0], ids, 17)
	}
}

func benchInts() map[string][]int64 {
	rng := rand.New(rand.NewPCG(3, 3))
	ts := make([]int64, blockN)
	t := int64(1_704_067_200_000)
	for i := range ts {
		t += 1000 * int64(rng.IntN(2))
		ts[i] = t
	}
	added := make([]int64, blockN)
	for i := range added {
		added[i] = int64(-math.Log(1-rng.Float64()) * 300)
	}
	return map[string][]int64{"timestamps": ts, "exponential": added}
}

func BenchmarkEncodeInts(b *testing.B) {
	for name, vals := range benchInts() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(blockN * 8)
			var dst []byte
			for range b.N {
				dst = AppendInts(dst[:0], vals, true)
			}
			b.ReportMetric(float64(len(dst))/blockN, "bytes/value")
		})
	}
}

func BenchmarkDecodeInts(b *testing.B) {
	for name, vals := range benchInts() {
		enc := AppendInts(nil, vals, true)
		b.Run(name, func(b *testing.B) {
			dst := make([]int64, blockN)
			b.SetBytes(blockN * 8)
			for range b.N {
				DecodeInts(dst, enc)
			}
		})
	}
}

func benchPrices() []float64 {
	rng := rand.New(rand.NewPCG(4, 4))
	p := make([]float64, blockN)
	for i := range p {
		p[i] = math.Round(math.Exp(rng.Float64()*6)*100) / 100
	}
	return p
}

func BenchmarkFloat64s(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	random := make([]float64, blockN)
	for i := range random {
		random[i] = rng.NormFloat64()
	}
	for name, vals := range map[string][]float64{"decimal-prices": benchPrices(), "raw-random": random} {
		enc := AppendFloat64s(nil, vals)
		b.Run("encode/"+name, func(b *testing.B) {
			b.SetBytes(blockN * 8)
			var dst []byte
			for range b.N {
				dst = AppendFloat64s(dst[:0], vals)
			}
			b.ReportMetric(float64(len(dst))/blockN, "bytes/value")
		})
		b.Run("decode/"+name, func(b *testing.B) {
			dst := make([]float64, blockN)
			b.SetBytes(blockN * 8)
			for range b.N {
				DecodeFloat64s(dst, enc)
			}
		})
	}
}

func BenchmarkCodecs(b *testing.B) {
	ids := zipfIDs(blockN, 100_000, 1.1)
	raw := Pack(nil, ids, 17)
	for _, c := range []Codec{CodecLZ4, CodecZstd} {
		comp, _ := Compress(c, nil, raw)
		b.Run("compress/"+c.String(), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			var dst []byte
			for range b.N {
				dst, _ = Compress(c, dst[:0], raw)
			}
			b.ReportMetric(float64(len(comp))/float64(len(raw)), "ratio")
		})
		b.Run("decompress/"+c.String(), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			dst := make([]byte, len(raw))
			for range b.N {
				Decompress(c, dst, comp, len(raw))
			}
		})
	}
}

func BenchmarkDict(b *testing.B) {
	vals := make([]string, 200_000)
	for i := range vals {
		vals[i] = fmt.Sprintf("user%07d", i*5)
	}
	sort.Strings(vals)
	enc := AppendDict(nil, vals, false)
	d, _ := OpenDict(enc)
	b.Run("open-validate", func(b *testing.B) {
		for range b.N {
			OpenDict(enc)
		}
		b.ReportMetric(float64(len(enc))/float64(len(vals)), "bytes/value")
	})
	b.Run("value", func(b *testing.B) {
		var buf []byte
		for i := range b.N {
			buf = d.AppendValue(buf[:0], i%len(vals))
		}
	})
	b.Run("find", func(b *testing.B) {
		for i := range b.N {
			d.Find(vals[(i*7919)%len(vals)])
		}
	})
}

func BenchmarkPosting(b *testing.B) {
	const rows = 1 << 20
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{3, 300, 30_000} {
		set := map[uint32]bool{}
		for len(set) < n {
			set[rng.Uint32N(rows)] = true
		}
		list := make([]uint32, 0, n)
		for r := range set {
			list = append(list, r)
		}
		sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
		enc := AppendPostingList(nil, list)
		b.Run(fmt.Sprintf("list/%d", n), func(b *testing.B) {
			for range b.N {
				DecodePosting(enc, rows)
			}
			b.ReportMetric(float64(len(enc))/float64(n), "bytes/row")
		})
	}
	dense := roaring.New()
	for r := uint32(0); r < rows; r++ {
		if rng.IntN(5) == 0 {
			dense.Add(r)
		}
	}
	enc, _ := AppendPostingBitmap(nil, dense)
	b.Run("roaring/20%", func(b *testing.B) {
		for range b.N {
			DecodePosting(enc, rows)
		}
		b.ReportMetric(float64(len(enc))/float64(dense.GetCardinality()), "bytes/row")
	})
}
