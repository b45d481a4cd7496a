package quantiles

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// sortedView is the retained items in ascending order with cumulative weights,
// as DataSketches' DoublesSketchSortedView (including its min/max insertion).
type sortedView struct {
	items []float64
	cum   []int64 // cum[i] = total weight of items[0..i]
	n     int64
}

// sorted returns the (cached) sorted view of a non-empty sketch.
func (s *Sketch) sorted() *sortedView {
	if v := s.view.Load(); v != nil {
		return v
	}
	v := s.buildView()
	s.view.Store(v)
	return v
}

func (s *Sketch) buildView() *sortedView {
	r := s.numRetained()
	items := make([]float64, r)
	w := make([]int64, r)
	runs := make([]int, 0, 66) // start offsets of sorted runs
	pos := 0
	weight := int64(1)
	for lvl, b := 0, s.bitPattern; b != 0; lvl, b = lvl+1, b>>1 {
		weight <<= 1
		if b&1 == 0 {
			continue
		}
		runs = append(runs, pos)
		copy(items[pos:], s.level(lvl))
		for i := pos; i < pos+s.k; i++ {
			w[i] = weight
		}
		pos += s.k
	}
	if len(s.base) > 0 {
		runs = append(runs, pos)
		copy(items[pos:], s.base)
		sortFloats(items[pos:], nil)
		for i := pos; i < r; i++ {
			w[i] = 1
		}
	}
	items, w = mergeRuns(items, w, append(runs, r))

	var total int64
	for i := range w {
		total += w[i]
		w[i] = total
	}
	return includeMinMax(items, w, s.minV, s.maxV, s.n)
}

// mergeRuns merges the sorted runs bounded by offsets (the last offset is the
// end) pairwise until one run remains, carrying weights along.
func mergeRuns(items []float64, w []int64, offs []int) ([]float64, []int64) {
	if len(offs) <= 2 {
		return items, w
	}
	ti := make([]float64, len(items))
	tw := make([]int64, len(w))
	for len(offs) > 2 {
		next := offs[:0:0]
		for i := 0; i+1 < len(offs); i += 2 {
			lo, mid := offs[i], offs[i+1]
			next = append(next, lo)
			if i+2 >= len(offs) { // odd run out: copy as is
				copy(ti[lo:mid], items[lo:mid])
				copy(tw[lo:mid], w[lo:mid])
				continue
			}
			hi := offs[i+2]
			a, b, d := lo, mid, lo
			for a < mid && b < hi {
				if items[b] < items[a] {
					ti[d], tw[d] = items[b], w[b]
					b++
				} else {
					ti[d], tw[d] = items[a], w[a]
					a++
				}
				d++
			}
			copy(ti[d:], items[a:mid])
			copy(tw[d:], w[a:mid])
			d += mid - a
			copy(ti[d:hi], items[b:hi])
			copy(tw[d:hi], w[b:hi])
		}
		next = append(next, offs[len(offs)-1])
		offs = next
		items, ti = ti, items
		w, tw = tw, w
	}
	return items, w
}

// includeMinMax makes the exact min and max the first and last entries, as
// DataSketches 5+ does (IncludeMinMax): the min gets cumulative weight 1, the
// max gets n and the previous last entry n-1.
func includeMinMax(items []float64, cum []int64, minV, maxV float64, n int64) *sortedView {
	adjLow := items[0] != minV
	adjHigh := items[len(items)-1] != maxV
	if adjLow {
		items = slices.Insert(items, 0, minV)
		cum = slices.Insert(cum, 0, 1)
	}
	if adjHigh {
		last := cum[len(cum)-1]
		cum[len(cum)-1] = last - 1
		items = append(items, maxV)
		cum = append(cum, last)
	}
	return &sortedView{items: items, cum: cum, n: n}
}

// tailRounding mirrors DataSketches' QuantilesUtil.tailRoundingFactor: for
// n <= 1e7, rank*n is rounded to 7 decimals before ceil so that e.g.
// 0.3*10 selects the 3rd item, not the 4th.
const tailRounding = 1e7

func (v *sortedView) quantile(rank float64) float64 {
	nr := rank * float64(v.n)
	if float64(v.n) <= tailRounding {
		nr = math.Floor(nr*tailRounding+0.5) / tailRounding
	}
	target := int64(math.Ceil(nr))
	i := sort.Search(len(v.cum), func(i int) bool { return v.cum[i] >= target })
	if i == len(v.cum) {
		i--
	}
	return v.items[i]
}

func (v *sortedView) rank(x float64) float64 {
	i := sort.Search(len(v.items), func(i int) bool { return v.items[i] > x }) - 1
	if i < 0 {
		return 0
	}
	return float64(v.cum[i]) / float64(v.n)
}

func checkRank(r float64) error {
	if !(r >= 0 && r <= 1) {
		return fmt.Errorf("quantiles: normalized rank must be in [0, 1], got %v", r)
	}
	return nil
}

// Quantile returns the approximate quantile at normalized rank in [0,1] with
// INCLUSIVE search criteria (the smallest retained item whose cumulative
// rank is >= rank): rank 0 gives Min and rank 1 gives Max. NaN when empty.
func (s *Sketch) Quantile(rank float64) (float64, error) {
	if err := checkRank(rank); err != nil {
		return math.NaN(), err
	}
	if s.n == 0 {
		return math.NaN(), nil
	}
	return s.sorted().quantile(rank), nil
}

// Quantiles returns Quantile for each rank.
func (s *Sketch) Quantiles(ranks []float64) ([]float64, error) {
	for _, r := range ranks {
		if err := checkRank(r); err != nil {
			return nil, err
		}
	}
	if s.n == 0 {
		return nans(len(ranks)), nil
	}
	out := make([]float64, len(ranks))
	v := s.sorted()
	for i, r := range ranks {
		out[i] = v.quantile(r)
	}
	return out, nil
}

// Rank returns the approximate normalized rank of x, INCLUSIVE (the fraction
// of values <= x). NaN when empty or when x is NaN.
func (s *Sketch) Rank(x float64) float64 {
	if s.n == 0 || x != x {
		return math.NaN()
	}
	return s.sorted().rank(x)
}

var errSplits = errors.New("quantiles: split points must be finite and strictly increasing")

// CDF returns len(split)+1 cumulative fractions: entry i is the INCLUSIVE rank
// of split[i] and the last entry is 1. split must be finite and strictly
// increasing. Entries are NaN when empty.
func (s *Sketch) CDF(split []float64) ([]float64, error) {
	for i, x := range split {
		if math.IsNaN(x) || math.IsInf(x, 0) || (i > 0 && !(split[i-1] < x)) {
			return nil, errSplits
		}
	}
	if s.n == 0 {
		return nans(len(split) + 1), nil
	}
	out := make([]float64, len(split)+1)
	v := s.sorted()
	for i, x := range split {
		out[i] = v.rank(x)
	}
	out[len(split)] = 1
	return out, nil
}

// PMF returns len(split)+1 fractions: the mass in (-inf, split[0]],
// (split[0], split[1]], ..., (split[last], +inf); they sum to 1. NaN entries
// when empty.
func (s *Sketch) PMF(split []float64) ([]float64, error) {
	out, err := s.CDF(split)
	if err != nil || s.n == 0 {
		return out, err
	}
	for i := len(out) - 1; i > 0; i-- {
		out[i] -= out[i-1]
	}
	return out, nil
}

// nans is what an empty sketch answers: NaN in every position.
func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
