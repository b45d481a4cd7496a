package quantiles

import (
	"math/rand/v2"
	"testing"
)

func benchSketch(b *testing.B, k, n int, seed uint64) *Sketch {
	s, err := New(k)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	for range n {
		s.Update(rng.Float64())
	}
	return s
}

func BenchmarkUpdate(b *testing.B) {
	s, _ := New(DefaultK)
	vals := make([]float64, 1<<16)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range vals {
		vals[i] = rng.Float64()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Update(vals[i&(len(vals)-1)])
	}
}

// BenchmarkMerge merges two sketches of 1e5 values each into a copy of the
// first (so each iteration starts from the same state; the copy is timed):
// both k=128 (Merge), then k=256 into k=128 (MergeDownsample).
func BenchmarkMerge(b *testing.B) {
	benchMerge(b, 128)
}

func BenchmarkMergeDownsample(b *testing.B) {
	benchMerge(b, 256)
}

func benchMerge(b *testing.B, otherK int) {
	x := benchSketch(b, 128, 100_000, 1)
	y := benchSketch(b, otherK, 100_000, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := x.Copy()
		if err := c.Merge(y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuantile is a query on a sketch whose sorted view is cached.
func BenchmarkQuantile(b *testing.B) {
	s := benchSketch(b, 128, 1_000_000, 3)
	_, _ = s.Quantile(0.5)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Quantile(float64(i%100) / 100); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuantileFresh includes building the sorted view (first query after
// an update), the cost a query pays once per sketch.
func BenchmarkQuantileFresh(b *testing.B) {
	s := benchSketch(b, 128, 1_000_000, 3)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.view.Store(nil)
		if _, err := s.Quantile(0.5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalBinary(b *testing.B) {
	s := benchSketch(b, 128, 1_000_000, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	s := benchSketch(b, 128, 1_000_000, 4)
	buf, _ := s.MarshalBinary()
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
