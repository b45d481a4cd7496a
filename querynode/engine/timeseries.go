package engine

import (
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/granularity"
	"strata/interval"
	"strata/querynode/query"
)

// maxZeroFill bounds the buckets one segment may zero-fill.
const maxZeroFill = 5_000_000

// dataStart returns the clipped start of the segment's data within the
// query intervals, or ok=false when they do not overlap.
func (rc *runCtx) dataStart() (int64, bool) {
	b, _ := rc.dataBuckets(granularity.All)
	if len(b) == 0 {
		return 0, false
	}
	return b[0], true
}

// dataBuckets returns the bucket starts a segment contributes for the
// query: the buckets of queryInterval ∩ [minTime, bucketEnd(maxTime)) for
// every query interval (QUERY-SEMANTICS §3.1). With granularity all it is
// the single clipped start.
func (rc *runCtx) dataBuckets(g granularity.Granularity) ([]int64, error) {
	if rc.data.NumRows() == 0 {
		return nil, nil
	}
	minT, maxT := rc.data.TimeRange()
	span := rc.seg.dataInterval()
	if isTable(rc.seg) {
		minT, maxT = span.Start, span.End-1
	}
	dataEnd := maxT + 1
	if !g.IsAll() {
		dataEnd = g.Next(g.Bucket(maxT))
	}
	data := interval.Interval{Start: max(minT, span.Start), End: min(dataEnd, span.End)}
	if g.IsAll() {
		data.End = min(maxT+1, span.End)
	}
	var out []int64
	for _, iv := range rc.q.Intervals {
		x, ok := iv.Intersect(data)
		if !ok {
			continue
		}
		if g.IsAll() {
			return []int64{x.Start}, nil
		}
		if granularity.CountBuckets(g, x, maxZeroFill+1) > maxZeroFill {
			return nil, query.Errorf(query.ResourceLimit, "Too many time buckets: granularity is too fine for the query intervals")
		}
		for b := range granularity.Iter(g, x) {
			if len(out) == 0 || b > out[len(out)-1] {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// querySelection returns the rows in the query intervals, filtered.
func (rc *runCtx) querySelection() (selection, *roaring.Bitmap, error) {
	ranges, err := rc.timeRows(rc.queryIntervals())
	if err != nil {
		return selection{}, nil, err
	}
	sel := selection{ranges: ranges}
	universe := sel.bitmap()
	if rc.q.Filter == nil {
		return sel, universe, nil
	}
	m, err := rc.evalFilter(rc.q.Filter, universe, false)
	if err != nil {
		return selection{}, nil, err
	}
	return selection{bm: m}, universe, nil
}

// bucketRuns splits the selected rows of a block into runs of one time
// bucket each (rows are sorted by time). times is the block's __time. fn
// gets the bucket start (allStart for granularity all) and the run.
func bucketRuns(g granularity.Granularity, allStart int64, times []int64, from, to int, sel []int32,
	fn func(bucket int64, from, to int, sel []int32) error) error {
	if g.IsAll() {
		return fn(allStart, from, to, sel)
	}
	n := to - from
	if sel != nil {
		n = len(sel)
	}
	at := func(k int) int64 {
		if sel != nil {
			return times[sel[k]]
		}
		return times[from+k]
	}
	for k := 0; k < n; {
		b := g.Bucket(at(k))
		next := g.Next(b)
		end := k + sort.Search(n-k, func(j int) bool { return at(k+j) >= next })
		var err error
		if sel != nil {
			err = fn(b, 0, 0, sel[k:end])
		} else {
			err = fn(b, from+k, from+end, nil)
		}
		if err != nil {
			return err
		}
		k = end
	}
	return nil
}

func (rc *runCtx) runTimeseries() (*Partial, error) {
	q := rc.q
	p := &Partial{Type: q.Type}
	buckets, err := rc.dataBuckets(q.Granularity)
	if err != nil || len(buckets) == 0 {
		return p, err
	}
	sel, universe, err := rc.querySelection()
	if err != nil {
		return nil, err
	}
	aggs, err := rc.newSegAggs(q.Aggregations, universe)
	if err != nil {
		return nil, err
	}
	for _, a := range aggs {
		a.grow(len(buckets))
	}
	p.Times = buckets
	p.Matched = make([]bool, len(buckets))
	times, err := rc.num(timeColumn)
	if err != nil {
		return nil, err
	}
	err = rc.forBlocks(sel, func(b, from, to int, s []int32) error {
		var ts []int64
		if !q.Granularity.IsAll() {
			if ts, err = times.longs(b); err != nil {
				return err
			}
		}
		return bucketRuns(q.Granularity, buckets[0], ts, from, to, s, func(bucket int64, from, to int, s []int32) error {
			bi := sort.Search(len(buckets), func(j int) bool { return buckets[j] >= bucket })
			if bi == len(buckets) || buckets[bi] != bucket {
				return query.Errorf(query.Internal, "row bucket %d outside the query buckets", bucket)
			}
			p.Matched[bi] = true
			for _, a := range aggs {
				if err := a.add(b, from, to, s, int32(bi), nil); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	for _, a := range aggs {
		if err := a.finish(); err != nil {
			return nil, err
		}
		p.Aggs = append(p.Aggs, a.state())
	}
	return p, nil
}

const timeColumn = "__time"
