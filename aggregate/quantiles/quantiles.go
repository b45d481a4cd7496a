// Package quantiles implements Apache DataSketches' classic quantiles
// DoublesSketch (the low-discrepancy mergeable quantiles sketch of Agarwal et
// al., as in DataSketches-java UpdateDoublesSketch / DoublesUnion /
// CompactDoublesSketch), which backs Druid's quantilesDoublesSketch
// aggregator. The serialized form is DataSketches' (family 8, serVer 3), so
// sketches written by Druid can be read here and vice versa.
//
// Layout: a base buffer of up to 2k unsorted items of weight 1, and levels of
// exactly k sorted items, level i holding items of weight 2^(i+1). Level i is
// in use iff bit i of n/(2k) is set. When the base buffer fills it is sorted
// and zipped (every other item, random odd/even offset) into level 0, with a
// binary carry propagating upwards through occupied levels.
//
// A Sketch is not safe for concurrent mutation; concurrent read-only queries
// (Quantile, Rank, CDF, PMF, MarshalBinary, ...) are safe.
package quantiles

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
)

// DefaultK is DataSketches' default k (about 1.7% normalized rank error).
const DefaultK = 128

const (
	minK = 2
	maxK = 1 << 15
	// maxN bounds n (decoded or merged) far beyond any real stream so that
	// n never overflows int64.
	maxN = 1 << 62

	// rngSeed seeds every sketch's zip PRNG. DataSketches uses a shared
	// java.util.Random; a fixed per-sketch seed instead makes results
	// reproducible run to run for the same input order.
	rngSeed = 0x9E3779B97F4A7C15
)

// Sketch is a classic quantiles DoublesSketch.
type Sketch struct {
	k          int
	n          int64
	minV, maxV float64 // NaN while empty
	// base holds n % 2k unsorted items; its capacity grows by doubling up to 2k
	// so that many small sketches stay small.
	base []float64
	// levels holds totalLevels*k items; level i is levels[i*k:(i+1)*k] and is
	// valid iff bit i of bitPattern is set.
	levels     []float64
	bitPattern uint64 // always n / (2k)
	// sortTmp is the radix sort's scratch for the base buffer, allocated at
	// the first flush (so small sketches never pay for it).
	sortTmp []uint64
	rng     uint64 // xorshift64* state for the zip offsets
	// view caches the sorted view for queries; cleared by every mutation.
	view atomic.Pointer[sortedView]
}

// New returns an empty sketch; k must be a power of 2 in [2, 32768].
func New(k int) (*Sketch, error) {
	if err := checkK(k); err != nil {
		return nil, err
	}
	return newSketch(k), nil
}

func newSketch(k int) *Sketch {
	return &Sketch{k: k, minV: math.NaN(), maxV: math.NaN(), rng: rngSeed}
}

func checkK(k int) error {
	if k < minK || k > maxK || k&(k-1) != 0 {
		return fmt.Errorf("quantiles: k must be a power of 2 in [%d, %d], got %d", minK, maxK, k)
	}
	return nil
}

// K returns the sketch's accuracy parameter.
func (s *Sketch) K() int { return s.k }

// N returns the number of values the sketch has seen.
func (s *Sketch) N() int64 { return s.n }

// IsEmpty reports whether no value has been seen.
func (s *Sketch) IsEmpty() bool { return s.n == 0 }

// Min returns the smallest value seen, NaN when empty.
func (s *Sketch) Min() float64 { return s.minV }

// Max returns the largest value seen, NaN when empty.
func (s *Sketch) Max() float64 { return s.maxV }

// numRetained is the number of items physically held.
func (s *Sketch) numRetained() int {
	return len(s.base) + bits.OnesCount64(s.bitPattern)*s.k
}

func (s *Sketch) level(i int) []float64 { return s.levels[i*s.k : (i+1)*s.k] }

func (s *Sketch) invalidate() {
	if s.view.Load() != nil {
		s.view.Store(nil)
	}
}

// Update adds one value. NaN is ignored, as in DataSketches.
func (s *Sketch) Update(v float64) {
	if v != v {
		return
	}
	if s.n == 0 {
		s.minV, s.maxV = v, v
	} else {
		if v > s.maxV {
			s.maxV = v
		}
		if v < s.minV {
			s.minV = v
		}
	}
	if len(s.base) == cap(s.base) {
		s.growBase()
	}
	s.base = append(s.base, v)
	s.n++
	if len(s.base) == 2*s.k {
		s.flushBase()
	}
	s.invalidate()
}

// growBase doubles the base buffer's capacity, capped at 2k.
func (s *Sketch) growBase() {
	c := max(2*cap(s.base), 2*minK)
	c = min(c, 2*s.k)
	nb := make([]float64, len(s.base), c)
	copy(nb, s.base)
	s.base = nb
}

// ensureLevels makes room for every level needed once the sketch holds n items.
func (s *Sketch) ensureLevels(n int64) {
	need := bits.Len64(uint64(n/(2*int64(s.k)))) * s.k
	if len(s.levels) < need {
		nl := make([]float64, need)
		copy(nl, s.levels)
		s.levels = nl
	}
}

// flushBase sorts the full base buffer and carries it into the levels; the
// base buffer then serves as the 2k scratch space for the carry.
func (s *Sketch) flushBase() {
	s.ensureLevels(s.n)
	if s.sortTmp == nil {
		s.sortTmp = make([]uint64, 2*s.k)
	}
	sortFloats(s.base, s.sortTmp)
	end := bits.TrailingZeros64(^s.bitPattern) // lowest empty level
	s.zip2(s.base, s.level(end))
	s.carry(0, end, s.base)
	s.bitPattern++
	s.base = s.base[:0]
}

// carry merges the occupied levels [from, end) into level end, which already
// holds the incoming k items, using scratch (2k items).
func (s *Sketch) carry(from, end int, scratch []float64) {
	dst := s.level(end)
	for lvl := from; lvl < end; lvl++ {
		mergeSorted(s.level(lvl), dst, scratch)
		s.zip2(scratch, dst)
	}
}

// propagate adds one sorted block of k items at level start (a merge carry).
func (s *Sketch) propagate(start int, block, scratch []float64) {
	end := start + bits.TrailingZeros64(^(s.bitPattern >> uint(start)))
	copy(s.level(end), block)
	s.carry(start, end, scratch)
	s.bitPattern += 1 << uint(start)
}

// zip2 keeps every other item of the sorted 2k-item in, starting at a random
// offset of 0 or 1, writing k items to out.
func (s *Sketch) zip2(in, out []float64) {
	off := int(s.rand() >> 63)
	for i := range out {
		out[i] = in[2*i+off]
	}
}

// rand is xorshift64*: tiny, fast and deterministic per sketch.
func (s *Sketch) rand() uint64 {
	x := s.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	s.rng = x
	return x * 2685821657736338717
}

// mergeSorted merges the sorted a and b into dst (len(a)+len(b) items).
func mergeSorted(a, b, dst []float64) {
	i, j, d := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[d] = b[j]
			j++
		} else {
			dst[d] = a[i]
			i++
		}
		d++
	}
	d += copy(dst[d:], a[i:])
	copy(dst[d:], b[j:])
}

// Merge folds o into s with DataSketches DoublesUnion semantics (s plays the
// union's gadget); o is not modified and a nil or empty o is a no-op. The rule:
//   - o in exact mode (N < 2*o.K): o's items are streamed into s; s keeps its k.
//   - s.K <= o.K: o's levels are merged into s, downsampled to s.K if larger.
//   - s.K > o.K and s empty: s becomes a copy of o (takes the smaller k).
//   - s.K > o.K and s non-empty: s is downsampled to o.K, then o is merged in.
//
// So the result's k is min(s.K(), o.K()) except that an exact-mode o never
// lowers s's k (it is just a list of values, as DoublesUnion treats it).
// All valid k are powers of 2, so any two sketches merge; the only error is
// a combined N beyond 2^62.
func (s *Sketch) Merge(o *Sketch) error {
	if o == nil || o.n == 0 {
		return nil
	}
	if s.n > maxN-o.n {
		return fmt.Errorf("quantiles: merged n would exceed %d", int64(maxN))
	}
	if o == s {
		o = s.Copy()
	}
	defer s.invalidate()
	switch {
	case o.n < 2*int64(o.k):
		for _, v := range o.base {
			s.Update(v)
		}
	case s.k <= o.k:
		s.mergeFrom(o)
	case s.n == 0:
		s.become(o.Copy())
	default:
		t := newSketch(o.k)
		t.rng = s.rng
		t.mergeFrom(s)
		t.mergeFrom(o)
		s.become(t)
	}
	return nil
}

// become replaces s's contents with t's (t is discarded).
func (s *Sketch) become(t *Sketch) {
	s.k, s.n, s.minV, s.maxV = t.k, t.n, t.minV, t.maxV
	s.base, s.levels, s.bitPattern, s.rng = t.base, t.levels, t.bitPattern, t.rng
	s.sortTmp = nil
}

// mergeFrom merges src into s, where src.k is s.k times a power of 2
// (DataSketches' mergeInto / downSamplingMergeInto).
func (s *Sketch) mergeFrom(src *Sketch) {
	if src.n == 0 {
		return
	}
	down := src.k / s.k
	lgDown := bits.TrailingZeros(uint(down))
	nFinal := s.n + src.n
	for _, v := range src.base {
		s.Update(v)
	}
	s.ensureLevels(nFinal)
	scratch := make([]float64, 2*s.k)
	var block []float64
	if down > 1 {
		block = make([]float64, s.k)
	}
	for lvl, b := 0, src.bitPattern; b != 0; lvl, b = lvl+1, b>>1 {
		if b&1 == 0 {
			continue
		}
		in := src.level(lvl)
		if down > 1 {
			// Keep every down-th item from a random offset: k items of
			// weight 2^(lvl+1)*down, i.e. target level lvl+lgDown.
			off := int((s.rand() >> 32) % uint64(down))
			for i := range block {
				block[i] = in[off+i*down]
			}
			in = block
		}
		s.propagate(lvl+lgDown, in, scratch)
	}
	s.n = nFinal
	if s.minV != s.minV || src.minV < s.minV {
		s.minV = src.minV
	}
	if s.maxV != s.maxV || src.maxV > s.maxV {
		s.maxV = src.maxV
	}
}

// Copy returns an independent deep copy (including the PRNG state).
func (s *Sketch) Copy() *Sketch {
	c := &Sketch{
		k: s.k, n: s.n, minV: s.minV, maxV: s.maxV,
		bitPattern: s.bitPattern, rng: s.rng,
		levels: slices.Clone(s.levels),
	}
	if len(s.base) > 0 {
		c.base = make([]float64, len(s.base), cap(s.base))
		copy(c.base, s.base)
	}
	c.view.Store(s.view.Load()) // the view is immutable, so sharing is safe
	return c
}

// normalizedRankError is DataSketches' empirical 99%-confidence single-sided
// (pmf=false) or double-sided (pmf=true) normalized rank error for k.
func normalizedRankError(k int, pmf bool) float64 {
	if pmf {
		return 1.854 / math.Pow(float64(k), 0.9657)
	}
	return 1.576 / math.Pow(float64(k), 0.9726)
}

// String returns a short human summary, like DataSketches' toString().
func (s *Sketch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Quantiles DoublesSketch SUMMARY:\n")
	fmt.Fprintf(&b, "   Empty                 : %t\n", s.IsEmpty())
	fmt.Fprintf(&b, "   Estimation Mode       : %t\n", s.n >= 2*int64(s.k))
	fmt.Fprintf(&b, "   K                     : %d\n", s.k)
	fmt.Fprintf(&b, "   N                     : %d\n", s.n)
	fmt.Fprintf(&b, "   Levels (Total, Valid) : %d, %d\n", bits.Len64(s.bitPattern), bits.OnesCount64(s.bitPattern))
	fmt.Fprintf(&b, "   Level Bit Pattern     : %b\n", s.bitPattern)
	fmt.Fprintf(&b, "   Base Buffer Count     : %d\n", len(s.base))
	fmt.Fprintf(&b, "   Retained Items        : %d\n", s.numRetained())
	fmt.Fprintf(&b, "   Compact Storage Bytes : %d\n", s.compactSize())
	fmt.Fprintf(&b, "   Normalized Rank Error : %.3f%%\n", 100*normalizedRankError(s.k, false))
	fmt.Fprintf(&b, "   Min Item              : %v\n", s.minV)
	fmt.Fprintf(&b, "   Max Item              : %v\n", s.maxV)
	fmt.Fprintf(&b, "### END SKETCH SUMMARY\n")
	return b.String()
}
