package granularity

import (
	"math/rand"
	"testing"
)

// benchTimes returns sorted timestamps a few seconds apart (as rows in a
// segment) and shuffled ones (worst case for the bucket cache).
func benchTimes(b *testing.B) (sorted, shuffled []int64) {
	base := ms(b, "2013-01-01T00:00:00Z")
	sorted = make([]int64, 4096)
	for i := range sorted {
		sorted[i] = base + int64(i)*7919 // ~9 hours in total
	}
	r := rand.New(rand.NewSource(1))
	shuffled = make([]int64, 4096)
	for i := range shuffled {
		shuffled[i] = base + r.Int63n(365*86400000)
	}
	return sorted, shuffled
}

func BenchmarkBucket(b *testing.B) {
	sorted, shuffled := benchTimes(b)
	grans := []struct {
		name string
		g    Granularity
	}{
		{"hour", Hour},
		{"day", Day},
		{"month", Month},
		{"quarter", Quarter},
		{"period-P1D-LA", parse(b, `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`)},
		{"period-PT1H-LA", parse(b, `{"type":"period","period":"PT1H","timeZone":"America/Los_Angeles"}`)},
		{"period-P1M-LA", parse(b, `{"type":"period","period":"P1M","timeZone":"America/Los_Angeles"}`)},
	}
	for _, gc := range grans {
		for _, order := range []struct {
			name string
			ts   []int64
		}{{"sorted", sorted}, {"random", shuffled}} {
			b.Run(gc.name+"/"+order.name, func(b *testing.B) {
				g, ts := gc.g, order.ts
				var sink int64
				for i := 0; i < b.N; i++ {
					sink += g.Bucket(ts[i&4095])
				}
				_ = sink
			})
		}
	}
}

func BenchmarkFormatBucket(b *testing.B) {
	g := parse(b, `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`)
	at := ms(b, "2013-08-31T07:00:00Z")
	buf := make([]byte, 0, 64)
	for i := 0; i < b.N; i++ {
		buf = AppendBucket(buf[:0], g, at)
	}
}
