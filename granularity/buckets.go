package granularity

import (
	"iter"

	"strata/interval"
)

// Iter yields the start of every bucket overlapping iv, in order; the
// first may begin before iv.Start. An empty iv yields nothing, except for
// all, which yields iv.Start once (Druid uses the interval itself as the
// single bucket).
func Iter(g Granularity, iv interval.Interval) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		if g.IsAll() {
			yield(iv.Start)
			return
		}
		if iv.Start >= iv.End {
			return
		}
		end := min(iv.End, interval.MaxInstant)
		for b := g.Bucket(iv.Start); b < end; {
			if !yield(b) {
				return
			}
			n := g.Next(b)
			if n <= b { // saturated at the end of time
				return
			}
			b = n
		}
	}
}

// Buckets returns the bucket starts overlapping iv (see Iter). Callers
// must bound iv for fine granularities: none yields one per millisecond.
func Buckets(g Granularity, iv interval.Interval) []int64 {
	var out []int64
	for b := range Iter(g, iv) {
		out = append(out, b)
	}
	return out
}

// CountBuckets counts the buckets overlapping iv, stopping at limit
// (a negative limit means no limit), so callers can refuse huge zero-fills.
func CountBuckets(g Granularity, iv interval.Interval, limit int) int {
	n := 0
	for range Iter(g, iv) {
		n++
		if limit >= 0 && n >= limit {
			break
		}
	}
	return n
}
