package engine

import (
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/interval"
	"strata/storage/segment"
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

// timeRows maps intervals to the row ranges of data holding their times.
func timeRows(data *segment.Segment, ivs []interval.Interval) ([]rowRange, error) {
	var out []rowRange
	for _, iv := range ivs {
		lo, err := firstRowAtOrAfter(data, iv.Start)
		if err != nil {
			return nil, err
		}
		hi, err := firstRowAtOrAfter(data, iv.End)
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
func firstRowAtOrAfter(data *segment.Segment, t int64) (int, error) {
	n := data.NumRows()
	if n == 0 {
		return 0, nil
	}
	minT, maxT := data.TimeRange()
	if t <= minT {
		return 0, nil
	}
	if t > maxT {
		return n, nil
	}
	tc := data.Time()
	nb := tc.NumBlocks()
	b := sort.Search(nb, func(b int) bool { return tc.BlockStats(b).MaxLong >= t })
	if b == nb {
		return n, nil
	}
	times, err := tc.Longs(b, nil)
	if err != nil {
		return 0, err
	}
	start, _ := data.BlockRows(b)
	return start + sort.Search(len(times), func(i int) bool { return times[i] >= t }), nil
}
