package engine

import (
	"sort"

	"strata/querynode/query"
	"strata/storage/segment"
)

// searchDims returns the dimensions a search looks at: the query's, or
// every string dimension of the segment.
func (rc *runCtx) searchDims() []*query.DimensionSpec {
	if len(rc.q.Search.Dimensions) > 0 {
		return rc.q.Search.Dimensions
	}
	var out []*query.DimensionSpec
	for _, c := range rc.data.Columns() {
		if c.Role == segment.RoleDimension && c.Kind == segment.KindString {
			out = append(out, &query.DimensionSpec{Type: "default", Dimension: c.Name, OutputName: c.Name, OutputType: "STRING"})
		}
	}
	return out
}

// runSearch counts, per time bucket and dimension, the rows holding each
// value that matches the search spec.
func (rc *runCtx) runSearch() (*Partial, error) {
	q := rc.q
	p := &Partial{Type: q.Type, Dims: []*DimCol{newDimCol("STRING"), newDimCol("STRING")}}
	count := newAggState(searchCountAgg, 0)
	p.Aggs = []*AggState{count}
	start, overlaps := rc.dataStart()
	if !overlaps {
		return p, nil
	}
	starts := []int64{start}
	sel, _, err := rc.querySelection()
	if err != nil {
		return nil, err
	}
	times, err := rc.num(timeColumn)
	if err != nil {
		return nil, err
	}
	for _, d := range rc.searchDims() {
		ks, err := rc.keyFor(d)
		if err != nil {
			return nil, err
		}
		var counts []int64
		var touched []int32
		bucket := int64(0)
		started := false
		flush := func() {
			for _, id := range touched {
				v := ks.value(id)
				if s, ok := v.String(); ok && q.Search.Query.Matches(s) {
					p.Times = append(p.Times, bucket)
					p.Dims[0].Append(Str(d.OutputName))
					p.Dims[1].Append(Str(s))
					count.Grow(1)
					count.Longs[len(count.Longs)-1] = counts[id]
				}
				counts[id] = 0
			}
			touched = touched[:0]
		}
		err = rc.forBlocks(sel, func(b, from, to int, s []int32) error {
			var ts []int64
			if !q.Granularity.IsAll() {
				if ts, err = times.longs(b); err != nil {
					return err
				}
			}
			offs, ids, err := ks.ids(b)
			if err != nil {
				return err
			}
			return bucketRuns(q.Granularity, starts[0], ts, from, to, s, func(bk int64, from, to int, s []int32) error {
				if !started || bk != bucket {
					if started {
						flush()
					}
					bucket, started = bk, true
				}
				if c := ks.card(); len(counts) < c {
					counts = append(counts, make([]int64, c-len(counts))...)
				}
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
							touched = append(touched, id)
						}
						counts[id]++
					}
				}
				if s == nil {
					for i := from; i < to; i++ {
						visit(i)
					}
				} else {
					for _, i := range s {
						visit(int(i))
					}
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
		if started {
			flush()
		}
	}
	for i := range count.Null {
		count.Null[i] = false
	}
	return p, nil
}

func finalizeSearch(q *query.Query, p *Partial) ([]byte, error) {
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
