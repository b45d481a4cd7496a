package engine

import (
	"slices"
	"strconv"

	"strata/querynode/query"
)

// groupByOrder builds the comparator of Druid's default limit spec over
// row indices: time first (unless granularity all, or after the columns
// with sortByDimsFirst), then the limitSpec columns, or all dimensions
// when none are given. val resolves an output name to its accessor.
func groupByOrder(q *query.Query, s *rowSchema, timeAt func(int) int64, val func(name string) func(int) Value) func(a, b int) int {
	g := q.GroupBy
	granular := !allTime(q)
	dimType := map[string]string{}
	for _, d := range s.dims {
		dimType[d.OutputName] = d.OutputType
	}
	type col struct {
		get     func(int) Value
		ord     query.Ordering
		desc    bool
		numeric bool
	}
	var cols []col
	if g.LimitSpec != nil && len(g.LimitSpec.Columns) > 0 {
		for _, c := range g.LimitSpec.Columns {
			typ, isDim := dimType[c.Dimension]
			numeric := !isDim || typ != "STRING" || c.Ordering == query.Numeric
			cols = append(cols, col{get: val(c.Dimension), ord: c.Ordering, desc: c.Descending, numeric: numeric})
		}
	} else {
		for _, d := range s.dims {
			cols = append(cols, col{get: val(d.OutputName), ord: query.Lexicographic, numeric: d.OutputType != "STRING"})
		}
	}
	byCols := func(a, b int) int {
		for _, c := range cols {
			x := compareValues(c.get(a), c.get(b), c.ord, c.numeric)
			if c.desc {
				x = -x
			}
			if x != 0 {
				return x
			}
		}
		return 0
	}
	if !granular {
		return byCols
	}
	return func(a, b int) int {
		if q.Context.SortByDimsFirst {
			if x := byCols(a, b); x != 0 {
				return x
			}
			return cmpOrdered(timeAt(a), timeAt(b))
		}
		if x := cmpOrdered(timeAt(a), timeAt(b)); x != 0 {
			return x
		}
		return byCols(a, b)
	}
}

// orderUsesPost reports whether the groupBy ordering reads post-aggregators.
func orderUsesPost(q *query.Query) bool {
	if q.GroupBy.LimitSpec == nil {
		return false
	}
	for _, c := range q.GroupBy.LimitSpec.Columns {
		for _, p := range q.PostAggregations {
			if p.Name == c.Dimension {
				return true
			}
		}
	}
	return false
}

func (e *Engine) finalizeGroupBy(q *query.Query, p *Partial) ([]byte, error) {
	s := newSchema(q, q.GroupBy.Dimensions, q.Aggregations)
	if len(q.GroupBy.SubtotalsSpec) == 0 {
		rows, err := e.groupByRows(q, s, p)
		if err != nil {
			return nil, err
		}
		return renderGroupBy(q, s, rows), nil
	}
	// Subtotals: the results of grouping by each listed subset of the
	// dimensions (the others null), one after the other. The limitSpec
	// orders and limits them all together (Druid >= 0.18), so each subset
	// is computed without it.
	each := q
	if q.GroupBy.LimitSpec != nil {
		g := *q.GroupBy
		g.LimitSpec = nil
		cp := *q
		cp.GroupBy = &g
		each = &cp
	}
	var all []*resultRow
	for _, subset := range q.GroupBy.SubtotalsSpec {
		sub := &Partial{Type: p.Type, Times: p.Times, Aggs: p.Aggs, Matched: p.Matched}
		for k, d := range q.GroupBy.Dimensions {
			if slices.Contains(subset, d.OutputName) {
				sub.Dims = append(sub.Dims, p.Dims[k])
				continue
			}
			nulls := newDimCol(p.Dims[k].Type)
			for range p.Len() {
				nulls.Append(Null)
			}
			sub.Dims = append(sub.Dims, nulls)
		}
		merged, err := e.Merge(q, []*Partial{sub})
		if err != nil {
			return nil, err
		}
		s.setSubtotal(subset)
		rows, err := e.groupByRows(each, s, merged)
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return renderGroupBy(q, s, limitRows(q, s, all)), nil
}

// groupByRows orders, filters (having) and limits the rows of a merged
// groupBy partial.
func (e *Engine) groupByRows(q *query.Query, s *rowSchema, p *Partial) ([]*resultRow, error) {
	g := q.GroupBy
	var offset, limit int64 = 0, query.Unlimited
	if g.LimitSpec != nil {
		offset, limit = g.LimitSpec.Offset, g.LimitSpec.Limit
	}
	var rows []*resultRow
	var err error
	if g.Having == nil && !orderUsesPost(q) {
		// Order on the partial's columns; materialise only the rows kept.
		keep := p.Len()
		if limit < int64(p.Len())-offset {
			keep = int(offset + limit)
		}
		aggVals := map[string][]Value{}
		val := func(name string) func(int) Value {
			sl, ok := s.index[name]
			switch {
			case !ok:
				return func(int) Value { return Null }
			case sl.kind == 0:
				return p.Dims[sl.i].Value
			case sl.kind == 1:
				vals := aggVals[name]
				if vals == nil {
					vals = make([]Value, p.Len())
					for i := range vals {
						v, verr := aggValue(p.Aggs[sl.i], i, true)
						if verr != nil {
							err = verr
						}
						vals[i] = v
					}
					aggVals[name] = vals
				}
				return func(i int) Value { return vals[i] }
			}
			return func(i int) Value { return Long(p.Times[i]) }
		}
		cmp := groupByOrder(q, s, func(i int) int64 { return p.Times[i] }, val)
		if err != nil {
			return nil, err
		}
		idx := selectTop(p.Len(), keep, cmp)
		if int64(len(idx)) <= offset {
			idx = []int{}
		} else {
			idx = idx[offset:]
		}
		if rows, err = s.rows(p, idx); err != nil {
			return nil, err
		}
	} else {
		if rows, err = s.rows(p, nil); err != nil {
			return nil, err
		}
		if g.Having != nil {
			kept := rows[:0]
			for _, r := range rows {
				ok, err := matchHaving(g.Having, func(n string) Value { return s.get(r, n) })
				if err != nil {
					return nil, err
				}
				if ok {
					kept = append(kept, r)
				}
			}
			rows = kept
		}
		cmp := groupByOrder(q, s, func(i int) int64 { return rows[i].time },
			func(name string) func(int) Value { return func(i int) Value { return s.get(rows[i], name) } })
		sorted := make([]*resultRow, 0, len(rows))
		for k, i := range selectTop(len(rows), len(rows), cmp) {
			if int64(k) >= offset && int64(len(sorted)) < limit {
				sorted = append(sorted, rows[i])
			}
		}
		rows = sorted
	}
	if p.Len() == 0 && len(g.Dimensions) == 0 && allTime(q) && offset == 0 && limit > 0 {
		// No dimensions, no data: one row of empty aggregates (Druid ≥ 28),
		// which the having spec filters like any row (Druid adds it before
		// post-processing).
		r, err := emptyRow(q, s)
		if err != nil {
			return nil, err
		}
		keep := true
		if g.Having != nil {
			if keep, err = matchHaving(g.Having, func(n string) Value { return s.get(r, n) }); err != nil {
				return nil, err
			}
		}
		if keep {
			rows = append(rows, r)
		}
	}
	if allTime(q) {
		ts := universalTimestamp(q)
		for _, r := range rows {
			r.time = ts
		}
	}
	return rows, nil
}

func renderGroupBy(q *query.Query, s *rowSchema, rows []*resultRow) []byte {
	w := newWriter(q)
	w.raw("[")
	for i, r := range rows {
		if i > 0 {
			w.raw(",")
		}
		if q.Context.ResultAsArray {
			w.raw("[")
			first := true
			sep := func() {
				if !first {
					w.raw(",")
				}
				first = false
			}
			if !allTime(q) {
				sep()
				w.b = strconv.AppendInt(w.b, r.time, 10)
			}
			for _, v := range r.dims {
				sep()
				w.value(v)
			}
			for k, v := range r.aggs {
				sep()
				if r.raw != nil && r.raw[k].K == KObject {
					v = r.raw[k]
				}
				w.value(v)
			}
			for _, v := range r.post {
				sep()
				w.value(v)
			}
			w.raw("]")
			continue
		}
		w.raw(`{"version":"v1","timestamp":`)
		w.timestamp(r.time)
		w.raw(`,"event":{`)
		w.fields(s, r, true)
		w.raw("}}")
	}
	w.raw("]")
	return w.b
}

// universalTimestamp is the timestamp of a groupBy's rows over all time: the
// start of the first interval (epoch without intervals), or the context's
// fudgeTimestamp.
func universalTimestamp(q *query.Query) int64 {
	if q.Context.FudgeTimestamp != nil {
		return *q.Context.FudgeTimestamp
	}
	if len(q.Intervals) > 0 {
		return q.Intervals[0].Start
	}
	return 0
}
