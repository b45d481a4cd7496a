package engine

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/granularity"
	"strata/interval"
	"strata/querynode/query"
)

// queryType is how the engine runs one type of query: the plan that turns
// a segment into a partial result (usually a pipeline: block source →
// filters → sink), the merge of partials, and the rendering of the merged
// partial. A new query type is one more entry in queryTypeOf.
type queryType struct {
	runSegment func(e *Engine, sq *segQuery) (*Partial, error)
	merge      func(e *Engine, q *query.Query, parts []*Partial, out *Partial) error
	finalize   func(e *Engine, q *query.Query, p *Partial) ([]byte, error)
}

// queryTypeOf returns the stages of a query type.
func queryTypeOf(t string) (queryType, bool) {
	switch t {
	case query.Timeseries:
		return queryType{runSegment: runTimeseries, merge: (*Engine).mergeGrouped, finalize: (*Engine).finalizeTimeseries}, true
	case query.TopN:
		return queryType{runSegment: runGrouped, merge: (*Engine).mergeTopN, finalize: (*Engine).finalizeTopN}, true
	case query.GroupBy:
		return queryType{runSegment: runGrouped, merge: (*Engine).mergeGrouped, finalize: (*Engine).finalizeGroupBy}, true
	case query.Search:
		return queryType{runSegment: runSearch, merge: (*Engine).mergeGrouped, finalize: finalizeSearch}, true
	case query.Scan:
		return queryType{runSegment: runScan, merge: mergeScan, finalize: finalizeScan}, true
	case query.TimeBoundary:
		return queryType{runSegment: runTimeBoundary, merge: mergeTimeBoundary, finalize: finalizeTimeBoundary}, true
	case query.DataSourceMetadata:
		return queryType{runSegment: runDataSourceMetadata, merge: mergeDataSourceMetadata, finalize: finalizeDataSourceMetadata}, true
	case query.SegmentMetadata:
		return queryType{runSegment: runSegmentMetadata, merge: mergeSegmentMetadata, finalize: finalizeSegmentMetadata}, true
	}
	return queryType{}, false
}

// segQuery is one query on one segment: what a query type's segment plan
// is built from (the columns it reads, its filters, the rows of its
// intervals). It is used by one goroutine.
type segQuery struct {
	ctx  context.Context
	q    *query.Query
	seg  *Segment
	cols *columns
	filt *filterEval
}

func newSegQuery(ctx context.Context, q *query.Query, s *Segment) *segQuery {
	cols := newColumns(s, q.VirtualColumns)
	return &segQuery{ctx: ctx, q: q, seg: s, cols: cols, filt: &filterEval{ctx: ctx, cols: cols}}
}

// intervals returns the query intervals clipped to the segment's queried
// span.
func (sq *segQuery) intervals() []interval.Interval {
	span := sq.seg.dataInterval()
	var out []interval.Interval
	for _, iv := range sq.q.Intervals {
		if x, ok := iv.Intersect(span); ok {
			out = append(out, x)
		}
	}
	return out
}

// universe returns the rows in the query intervals, as ranges and as a
// bitmap (what filtered aggregators filter).
func (sq *segQuery) universe() (selection, *roaring.Bitmap, error) {
	ranges, err := timeRows(sq.cols.data, sq.intervals())
	if err != nil {
		return selection{}, nil, err
	}
	sel := selection{ranges: ranges}
	return sel, sel.bitmap(), nil
}

// source returns the cursor over the rows of sel.
func (sq *segQuery) source(sel selection) *blockSource {
	return newBlockSource(sq.ctx, sq.cols, sel)
}

// rows plans the head of the query's pipeline: the block source over the
// rows of the query intervals that the index-answered part of the filter
// keeps, then a filterOp for the row filters. It also returns the rows of
// the intervals.
func (sq *segQuery) rows() (Operator, *roaring.Bitmap, error) {
	sel, universe, err := sq.universe()
	if err != nil || sq.q.Filter == nil {
		return sq.source(sel), universe, err
	}
	index, rowFilters, err := sq.filt.split(sq.q.Filter)
	if err != nil {
		return nil, nil, err
	}
	if len(index) > 0 {
		m := universe
		for _, f := range index {
			if m, err = sq.filt.eval(f, m, false); err != nil {
				return nil, nil, err
			}
			if m.IsEmpty() {
				break
			}
		}
		sel = selection{bm: m}
	}
	var op Operator = sq.source(sel)
	if len(rowFilters) > 0 {
		op = &filterOp{in: op, filters: rowFilters}
	}
	return op, universe, nil
}

// selection returns the rows the query selects, filtered, as a whole (for
// plans that read them other than in order: last rows first, several
// passes).
func (sq *segQuery) selection() (selection, *roaring.Bitmap, error) {
	sel, universe, err := sq.universe()
	if err != nil || sq.q.Filter == nil {
		return sel, universe, err
	}
	m, err := sq.filt.eval(sq.q.Filter, universe, false)
	if err != nil {
		return selection{}, nil, err
	}
	return selection{bm: m}, universe, nil
}

// dataStart returns the clipped start of the segment's data within the
// query intervals, or ok=false when they do not overlap.
func (sq *segQuery) dataStart() (int64, bool) {
	b, _ := sq.dataBuckets(granularity.All)
	if len(b) == 0 {
		return 0, false
	}
	return b[0], true
}

// dataBuckets returns the bucket starts a segment contributes for the
// query: the buckets of queryInterval ∩ [minTime, bucketEnd(maxTime)) for
// every query interval (QUERY-SEMANTICS §3.1). With granularity all it is
// the single clipped start.
func (sq *segQuery) dataBuckets(g granularity.Granularity) ([]int64, error) {
	data := sq.cols.data
	if data.NumRows() == 0 {
		return nil, nil
	}
	minT, maxT := data.TimeRange()
	span := sq.seg.dataInterval()
	if isTable(sq.seg) {
		minT, maxT = span.Start, span.End-1
	}
	dataEnd := maxT + 1
	if !g.IsAll() {
		dataEnd = g.Next(g.Bucket(maxT))
	}
	in := interval.Interval{Start: max(minT, span.Start), End: min(dataEnd, span.End)}
	if g.IsAll() {
		in.End = min(maxT+1, span.End)
	}
	var out []int64
	for _, iv := range sq.q.Intervals {
		x, ok := iv.Intersect(in)
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

// aggregates returns the aggregate stage of the query's aggregators over
// rows drawn from universe.
func (sq *segQuery) aggregates(universe *roaring.Bitmap) (aggregates, error) {
	return sq.cols.newSegAggs(sq.filt, sq.q.Aggregations, universe)
}

// aggregates is the aggregate stage: it folds batches into the grouped
// partial state of the query's aggregators (segAgg, the boundary with the
// aggregator implementations), all of a batch's rows into one group or
// each into its own.
type aggregates []segAgg

// grow makes room for n more groups.
func (as aggregates) grow(n int) {
	for _, a := range as {
		a.grow(n)
	}
}

// add folds the rows of b into group g, or, when groups is non-nil, the
// k-th row into groups[k].
func (as aggregates) add(b Batch, g int32, groups []int32) error {
	for _, a := range as {
		if err := a.add(b.Block, b.From, b.To, b.Sel, g, groups); err != nil {
			return err
		}
	}
	return nil
}

// states finishes the aggregators and returns their states.
func (as aggregates) states() ([]*AggState, error) {
	out := make([]*AggState, 0, len(as))
	for _, a := range as {
		if err := a.finish(); err != nil {
			return nil, err
		}
		out = append(out, a.state())
	}
	return out, nil
}
