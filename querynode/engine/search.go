package engine

import (
	"sort"

	"strata/querynode/query"
	"strata/storage/segment"
)

// searchDims returns the dimensions a search looks at: the query's, or
// every string dimension of the segment.
func searchDims(sq *segQuery) []*query.DimensionSpec {
	if len(sq.q.Search.Dimensions) > 0 {
		return sq.q.Search.Dimensions
	}
	var out []*query.DimensionSpec
	for _, c := range sq.cols.data.Columns() {
		if c.Role == segment.RoleDimension && c.Kind == segment.KindString {
			out = append(out, &query.DimensionSpec{Type: "default", Dimension: c.Name, OutputName: c.Name, OutputType: "STRING"})
		}
	}
	return out
}

// runSearch counts, per time bucket and dimension, the rows holding each
// value that matches the search spec: one pass of a searchSink per
// dimension over the filtered rows (found once).
func runSearch(_ *Engine, sq *segQuery) (*Partial, error) {
	q := sq.q
	p := &Partial{Type: q.Type, Dims: []*DimCol{newDimCol("STRING"), newDimCol("STRING")}}
	count := newAggState(searchCountAgg, 0)
	p.Aggs = []*AggState{count}
	start, overlaps := sq.dataStart()
	if !overlaps {
		return p, nil
	}
	sel, _, err := sq.selection()
	if err != nil {
		return nil, err
	}
	times, err := sq.cols.num(timeColumn)
	if err != nil {
		return nil, err
	}
	src := sq.source(sel)
	for _, d := range searchDims(sq) {
		ks, err := sq.cols.keyFor(d)
		if err != nil {
			return nil, err
		}
		s := &searchSink{q: q, p: p, count: count, dim: d.OutputName, ks: ks, times: times, allStart: start}
		s.addRun = s.run
		if err := drain(src, s); err != nil {
			return nil, err
		}
		if s.started {
			s.flush()
		}
	}
	for i := range count.Null {
		count.Null[i] = false
	}
	return p, nil
}

// searchSink counts the rows of each value of one dimension per time
// bucket, appending the matching values' counts to the partial at the end
// of each bucket.
type searchSink struct {
	q        *query.Query
	p        *Partial
	count    *AggState
	dim      string
	ks       keySource
	times    numSource
	allStart int64
	addRun   func(bucket int64, run Batch) error
	// the current block's ids
	offs, ids []int32
	counts    []int64
	touched   []int32
	bucket    int64
	started   bool
}

func (s *searchSink) consume(b Batch) error {
	var ts []int64
	var err error
	if !s.q.Granularity.IsAll() {
		if ts, err = s.times.longs(b.Block); err != nil {
			return err
		}
	}
	if s.offs, s.ids, err = s.ks.ids(b.Block); err != nil {
		return err
	}
	return bucketRuns(s.q.Granularity, s.allStart, ts, b, s.addRun)
}

func (s *searchSink) run(bk int64, r Batch) error {
	if !s.started || bk != s.bucket {
		if s.started {
			s.flush()
		}
		s.bucket, s.started = bk, true
	}
	if c := s.ks.card(); len(s.counts) < c {
		s.counts = append(s.counts, make([]int64, c-len(s.counts))...)
	}
	offs, ids, counts := s.offs, s.ids, s.counts
	visit := func(i int) {
		lo, hi := int32(i), int32(i+1)
		if offs != nil {
			lo, hi = offs[i], offs[i+1]
		}
		for _, id := range ids[lo:hi] {
			if id < 0 {
				continue
			}
			if counts[id] == 0 {
				s.touched = append(s.touched, id)
			}
			counts[id]++
		}
	}
	if r.Sel == nil {
		for i := r.From; i < r.To; i++ {
			visit(i)
		}
	} else {
		for _, i := range r.Sel {
			visit(int(i))
		}
	}
	return nil
}

// flush appends the current bucket's matching values with their counts.
func (s *searchSink) flush() {
	p := s.p
	for _, id := range s.touched {
		v := s.ks.value(id)
		if str, ok := v.String(); ok && s.q.Search.Query.Matches(str) {
			p.Times = append(p.Times, s.bucket)
			p.Dims[0].Append(Str(s.dim))
			p.Dims[1].Append(Str(str))
			s.count.Grow(1)
			s.count.Longs[len(s.count.Longs)-1] = s.counts[id]
		}
		s.counts[id] = 0
	}
	s.touched = s.touched[:0]
}

func finalizeSearch(_ *Engine, q *query.Query, p *Partial) ([]byte, error) {
	byTime := map[int64][]int{}
	var times []int64
	for i, t := range p.Times {
		if _, ok := byTime[t]; !ok {
			times = append(times, t)
		}
		byTime[t] = append(byTime[t], i)
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	if q.Descending {
		sort.Slice(times, func(a, b int) bool { return times[a] > times[b] })
	}
	ord := q.Search.Sort
	w := newWriter(q)
	w.raw("[")
	for ti, t := range times {
		idx := byTime[t]
		sort.SliceStable(idx, func(a, b int) bool {
			va, vb := p.Dims[1].Value(idx[a]), p.Dims[1].Value(idx[b])
			if c := compareValues(va, vb, ord, false); c != 0 {
				return c < 0
			}
			da, _ := p.Dims[0].Value(idx[a]).String()
			db, _ := p.Dims[0].Value(idx[b]).String()
			return da < db
		})
		if int64(len(idx)) > q.Limit {
			idx = idx[:q.Limit]
		}
		if ti > 0 {
			w.raw(",")
		}
		if allTime(q) && len(q.Intervals) > 0 {
			// Like groupBy, search reports granularity "all" at the interval start,
			// not at the earliest matching row (MANIFEST §6).
			t = q.Intervals[0].Start
		}
		w.raw(`{"timestamp":`)
		w.timestamp(t)
		w.raw(`,"result":[`)
		for k, i := range idx {
			if k > 0 {
				w.raw(",")
			}
			w.raw(`{"dimension":`)
			w.value(p.Dims[0].Value(i))
			w.raw(`,"value":`)
			w.value(p.Dims[1].Value(i))
			w.raw(`,"count":`)
			v, err := aggValue(p.Aggs[0], i, true)
			if err != nil {
				return nil, err
			}
			w.value(v)
			w.raw("}")
		}
		w.raw("]}")
	}
	w.raw("]")
	return w.b, nil
}
