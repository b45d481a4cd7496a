package engine

import (
	"sort"

	"strata/granularity"
	"strata/querynode/query"
)

// maxZeroFill bounds the buckets one segment may zero-fill.
const maxZeroFill = 5_000_000

// bucketRuns splits the rows of a batch into runs of one time bucket each
// (rows are sorted by time). times is the block's __time. fn gets the
// bucket start (allStart for granularity all) and the run.
func bucketRuns(g granularity.Granularity, allStart int64, times []int64, b Batch, fn func(bucket int64, run Batch) error) error {
	if g.IsAll() {
		return fn(allStart, b)
	}
	n := b.Len()
	sel, from := b.Sel, b.From
	at := func(k int) int64 {
		if sel != nil {
			return times[sel[k]]
		}
		return times[from+k]
	}
	for k := 0; k < n; {
		bk := g.Bucket(at(k))
		next := g.Next(bk)
		end := k + sort.Search(n-k, func(j int) bool { return at(k+j) >= next })
		var err error
		if sel != nil {
			err = fn(bk, Batch{Block: b.Block, Sel: sel[k:end]})
		} else {
			err = fn(bk, Batch{Block: b.Block, From: from + k, To: from + end})
		}
		if err != nil {
			return err
		}
		k = end
	}
	return nil
}

// runTimeseries aggregates the rows of each time bucket: block source →
// row filters → timeseriesSink.
func runTimeseries(_ *Engine, sq *segQuery) (*Partial, error) {
	q := sq.q
	p := &Partial{Type: q.Type}
	buckets, err := sq.dataBuckets(q.Granularity)
	if err != nil || len(buckets) == 0 {
		return p, err
	}
	rows, universe, err := sq.rows()
	if err != nil {
		return nil, err
	}
	aggs, err := sq.aggregates(universe)
	if err != nil {
		return nil, err
	}
	times, err := sq.cols.num(timeColumn)
	if err != nil {
		return nil, err
	}
	s := &timeseriesSink{gran: q.Granularity, buckets: buckets, times: times, aggs: aggs, matched: make([]bool, len(buckets))}
	aggs.grow(len(buckets))
	s.addRun = s.run
	if err := drain(rows, s); err != nil {
		return nil, err
	}
	if p.Aggs, err = aggs.states(); err != nil {
		return nil, err
	}
	p.Times, p.Matched = buckets, s.matched
	return p, nil
}

// timeseriesSink aggregates each batch's rows into the group of their time
// bucket (one group per bucket).
type timeseriesSink struct {
	gran    granularity.Granularity
	buckets []int64
	times   numSource
	aggs    aggregates
	matched []bool
	addRun  func(bucket int64, run Batch) error
}

func (s *timeseriesSink) consume(b Batch) error {
	var ts []int64
	if !s.gran.IsAll() {
		var err error
		if ts, err = s.times.longs(b.Block); err != nil {
			return err
		}
	}
	return bucketRuns(s.gran, s.buckets[0], ts, b, s.addRun)
}

func (s *timeseriesSink) run(bucket int64, run Batch) error {
	bi := sort.Search(len(s.buckets), func(j int) bool { return s.buckets[j] >= bucket })
	if bi == len(s.buckets) || s.buckets[bi] != bucket {
		return query.Errorf(query.Internal, "row bucket %d outside the query buckets", bucket)
	}
	s.matched[bi] = true
	return s.aggs.add(run, int32(bi), nil)
}

const timeColumn = "__time"
