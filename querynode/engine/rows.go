package engine

import (
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/interval"
)

// rowRange is a half-open range of segment rows.
type rowRange struct{ lo, hi int }

// selection is a set of segment rows: ranges (rows are sorted by time, so
// query intervals select ranges) or, after filtering, a bitmap.
type selection struct {
	ranges []rowRange
	bm     *roaring.Bitmap
}

func (s selection) bitmap() *roaring.Bitmap {
	if s.bm != nil {
		return s.bm
	}
	bm := roaring.New()
	for _, r := range s.ranges {
		bm.AddRange(uint64(r.lo), uint64(r.hi))
	}
	return bm
}

func (s selection) empty() bool {
	if s.bm != nil {
		return s.bm.IsEmpty()
	}
	for _, r := range s.ranges {
		if r.hi > r.lo {
			return false
		}
	}
	return true
}

// queryIntervals returns the query intervals clipped to the segment's
// queried span.
func (rc *runCtx) queryIntervals() []interval.Interval {
	span := rc.seg.dataInterval()
	var out []interval.Interval
	for _, iv := range rc.q.Intervals {
		if x, ok := iv.Intersect(span); ok {
			out = append(out, x)
		}
	}
	return out
}

// timeRows maps intervals to the row ranges holding their times.
func (rc *runCtx) timeRows(ivs []interval.Interval) ([]rowRange, error) {
	var out []rowRange
	for _, iv := range ivs {
		lo, err := rc.firstRowAtOrAfter(iv.Start)
		if err != nil {
			return nil, err
		}
		hi, err := rc.firstRowAtOrAfter(iv.End)
		if err != nil {
			return nil, err
		}
		if hi > lo {
			out = append(out, rowRange{lo, hi})
		}
	}
	return out, nil
}

// firstRowAtOrAfter returns the first row whose time is >= t (NumRows when
// none), using the time column's block statistics to find the block.
func (rc *runCtx) firstRowAtOrAfter(t int64) (int, error) {
	n := rc.data.NumRows()
	if n == 0 {
		return 0, nil
	}
	minT, maxT := rc.data.TimeRange()
	if t <= minT {
		return 0, nil
	}
	if t > maxT {
		return n, nil
	}
	tc := rc.data.Time()
	nb := tc.NumBlocks()
	b := sort.Search(nb, func(b int) bool { return tc.BlockStats(b).MaxLong >= t })
	if b == nb {
		return n, nil
	}
	times, err := tc.Longs(b, nil)
	if err != nil {
		return 0, err
	}
	start, _ := rc.data.BlockRows(b)
	return start + sort.Search(len(times), func(i int) bool { return times[i] >= t }), nil
}

// blockFn receives the selected rows of one block: the dense block-relative
// range [from, to) when sel is nil, else the block-relative rows in sel.
type blockFn func(b int, from, to int, sel []int32) error

// forBlocks walks the selection block by block, checking for cancellation
// between blocks.
func (rc *runCtx) forBlocks(s selection, fn blockFn) error {
	rpb := rc.rpb
	if s.bm == nil {
		for _, r := range s.ranges {
			for lo := r.lo; lo < r.hi; {
				if err := rc.checkCancel(); err != nil {
					return err
				}
				b := lo / rpb
				start, end := rc.data.BlockRows(b)
				hi := min(end, r.hi)
				if err := fn(b, lo-start, hi-start, nil); err != nil {
					return err
				}
				lo = hi
			}
		}
		return nil
	}
	it := s.bm.ManyIterator()
	buf := make([]uint32, 4096)
	pending := buf[:it.NextMany(buf)]
	var sel []int32
	for len(pending) > 0 {
		if err := rc.checkCancel(); err != nil {
			return err
		}
		b := int(pending[0]) / rpb
		start, end := rc.data.BlockRows(b)
		sel = sel[:0]
		for len(pending) > 0 {
			k := 0
			for k < len(pending) && int(pending[k]) < end {
				sel = append(sel, int32(int(pending[k])-start))
				k++
			}
			pending = pending[k:]
			if len(pending) > 0 {
				break
			}
			pending = buf[:it.NextMany(buf)]
		}
		var err error
		if len(sel) == end-start {
			err = fn(b, 0, end-start, nil)
		} else {
			err = fn(b, 0, 0, sel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
