package engine

import (
	"sort"
	"strconv"
	"time"

	"strata/aggregate/quantiles"
	"strata/interval"
	"strata/javacompat"
	"strata/querynode/query"
)

// resultRow is one grouped result row with its values materialised.
type resultRow struct {
	time int64
	dims []Value
	aggs []Value
	post []Value
	// raw holds unfinalized renderings of sketch aggregators (finalize=false).
	raw []Value
	// quant holds the quantiles sketches of quantilesDoublesSketch
	// aggregators, for the post-aggregators that read them.
	quant []*quantiles.Sketch
	// states and at are the aggregators' states and the row's group in
	// them, for post-aggregators that read more than the finalized value
	// (stddev).
	states []*AggState
	at     int
}

// rowSchema maps output names to the slots of a resultRow.
type rowSchema struct {
	q     *query.Query
	index map[string]slot
	dims  []*query.DimensionSpec
	aggs  []*query.Aggregator
	posts []*query.PostAggregator
	// fixed holds the values of grouping aggregators, by aggregator index,
	// for the subtotal being finalized (setSubtotal).
	fixed map[int]Value
}

type slot struct {
	kind uint8 // 0 dim, 1 agg, 2 post, 3 time
	i    int
}

func newSchema(q *query.Query, dims []*query.DimensionSpec, aggs []*query.Aggregator) *rowSchema {
	s := &rowSchema{q: q, index: map[string]slot{"__time": {3, 0}}, dims: dims, aggs: aggs, posts: q.PostAggregations}
	for i, d := range dims {
		s.index[d.OutputName] = slot{0, i}
	}
	for i, a := range aggs {
		s.index[a.Name] = slot{1, i}
	}
	for i, p := range s.posts {
		s.index[p.Name] = slot{2, i}
	}
	s.setSubtotal(nil)
	return s
}

func (s *rowSchema) get(r *resultRow, name string) Value {
	sl, ok := s.index[name]
	if !ok {
		return Null
	}
	switch sl.kind {
	case 0:
		return r.dims[sl.i]
	case 1:
		return r.aggs[sl.i]
	case 2:
		if sl.i < len(r.post) {
			return r.post[sl.i]
		}
		return Null
	}
	return Long(r.time)
}

// rows materialises the grouped rows of p (aggregators finalized,
// post-aggregators computed).
func (s *rowSchema) rows(p *Partial, idx []int) ([]*resultRow, error) {
	if idx == nil {
		idx = make([]int, p.Len())
		for i := range idx {
			idx[i] = i
		}
	}
	out := make([]*resultRow, 0, len(idx))
	finalize := s.q.Context.Finalize
	for _, i := range idx {
		r := &resultRow{time: p.Times[i], dims: make([]Value, len(p.Dims)), aggs: make([]Value, len(p.Aggs)), states: p.Aggs, at: i}
		for k, d := range p.Dims {
			r.dims[k] = d.Value(i)
		}
		for k, a := range p.Aggs {
			v, err := aggValue(a, i, true)
			if err != nil {
				return nil, err
			}
			r.aggs[k] = v
			if f, ok := s.fixed[k]; ok {
				r.aggs[k] = f
			}
			if a.Kind == query.KindQuantiles && len(s.posts) > 0 {
				if r.quant == nil {
					r.quant = make([]*quantiles.Sketch, len(p.Aggs))
				}
				if r.quant[k], err = a.QuantilesSketch(i); err != nil {
					return nil, err
				}
			}
			if a.IsSketch() && (!finalize || keepsSketch(s.aggs[k])) {
				if r.raw == nil {
					r.raw = make([]Value, len(p.Aggs))
				}
				if r.raw[k], err = aggValue(a, i, false); err != nil {
					return nil, err
				}
			}
		}
		if err := s.computePost(r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// keepsSketch reports whether a sketch aggregator answers its sketch even
// in a finalized result: Druid's shouldFinalize false (DS_HLL, DS_THETA and
// DS_QUANTILES_SKETCH plan so). Its post-aggregators still read the sketch.
func keepsSketch(a *query.Aggregator) bool {
	b := a.Base()
	switch b.Type {
	case "HLLSketchBuild", "HLLSketchMerge", "thetaSketch", "quantilesDoublesSketch", "quantilesDoublesSketchMerge":
		return !b.ShouldFinalize
	}
	return false
}

func (s *rowSchema) computePost(r *resultRow) error {
	if len(s.posts) == 0 {
		return nil
	}
	r.post = make([]Value, 0, len(s.posts))
	env := &rowEnv{schema: s, row: r}
	for _, p := range s.posts {
		v, err := evalPostAgg(p, env)
		if err != nil {
			return err
		}
		r.post = append(r.post, v)
	}
	return nil
}

// jsonWriter builds a result body.
type jsonWriter struct {
	b   []byte
	q   *query.Query
	loc *time.Location
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }
func (w *jsonWriter) key(k string) {
	w.b = javacompat.AppendJSONString(w.b, k)
	w.b = append(w.b, ':')
}
func (w *jsonWriter) value(v Value) { w.b = v.AppendJSON(w.b) }

// timestamp writes a result timestamp: ISO-8601 in the granularity's zone,
// or epoch millis with serializeDateTimeAsLong.
func (w *jsonWriter) timestamp(ms int64) {
	if w.q.Context.SerializeDateTimeAsLong {
		w.b = strconv.AppendInt(w.b, ms, 10)
		return
	}
	w.b = append(w.b, '"')
	w.b = interval.AppendMillis(w.b, ms, w.loc)
	w.b = append(w.b, '"')
}

// fields writes "name":value pairs of a row's aggregators and
// post-aggregators (after its dimensions when withDims).
func (w *jsonWriter) fields(s *rowSchema, r *resultRow, withDims bool) {
	first := true
	sep := func() {
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
	}
	if withDims {
		for i, d := range s.dims {
			sep()
			w.key(d.OutputName)
			w.value(r.dims[i])
		}
	}
	for i, a := range s.aggs {
		sep()
		w.key(a.Name)
		if r.raw != nil && r.raw[i].K == KObject {
			w.value(r.raw[i])
		} else {
			w.value(r.aggs[i])
		}
	}
	for i, p := range s.posts {
		sep()
		w.key(p.Name)
		w.value(r.post[i])
	}
}

func newWriter(q *query.Query) *jsonWriter {
	w := &jsonWriter{q: q, loc: time.UTC, b: make([]byte, 0, 1024)}
	if q.Granularity != nil {
		w.loc = q.Granularity.Zone()
	}
	return w
}

// Finalize renders a merged partial as Druid's JSON result array.
func (e *Engine) Finalize(q *query.Query, p *Partial) ([]byte, error) {
	qt, ok := queryTypeOf(q.Type)
	if !ok {
		return nil, query.Invalidf("unknown query type %q", q.Type)
	}
	return qt.finalize(e, q, p)
}

func (e *Engine) finalizeTimeseries(q *query.Query, p *Partial) ([]byte, error) {
	var idx []int
	for i := range p.Len() {
		if q.Context.SkipEmptyBuckets && (len(p.Matched) <= i || !p.Matched[i]) {
			continue
		}
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return p.Times[idx[a]] < p.Times[idx[b]] })
	if q.Descending {
		for i, j := 0, len(idx)-1; i < j; i, j = i+1, j-1 {
			idx[i], idx[j] = idx[j], idx[i]
		}
	}
	s := newSchema(q, nil, q.Aggregations)
	rows, err := s.rows(p, idx)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 && allTime(q) && !q.Context.SkipEmptyBuckets {
		// Nothing matched at all: Druid still answers one row of empty
		// aggregates at the start of the first interval.
		empty, err := emptyRow(q, s)
		if err != nil {
			return nil, err
		}
		rows = append(rows, empty)
	}
	var total *resultRow
	if q.Context.GrandTotal {
		if total, err = grandTotal(q, s, p, idx); err != nil {
			return nil, err
		}
	}
	if q.Limit < int64(len(rows)) {
		rows = rows[:q.Limit]
	}
	w := newWriter(q)
	w.raw("[")
	for i, r := range rows {
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"timestamp":`)
		w.timestamp(r.time)
		w.raw(`,"result":{`)
		w.fields(s, r, false)
		w.raw("}}")
	}
	if total != nil {
		if len(rows) > 0 {
			w.raw(",")
		}
		w.raw(`{"timestamp":null,"result":{`)
		w.fields(s, total, false)
		w.raw("}}")
	}
	w.raw("]")
	return w.b, nil
}

func emptyRow(q *query.Query, s *rowSchema) (*resultRow, error) {
	ts := int64(0)
	if len(q.Intervals) > 0 {
		ts = q.Intervals[0].Start
	}
	tmp := &Partial{Times: []int64{ts}}
	for _, a := range q.Aggregations {
		tmp.Aggs = append(tmp.Aggs, newAggState(a, 1))
	}
	rows, err := s.rows(tmp, nil)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

func grandTotal(q *query.Query, s *rowSchema, p *Partial, idx []int) (*resultRow, error) {
	tmp := &Partial{Times: []int64{0}}
	for _, a := range q.Aggregations {
		tmp.Aggs = append(tmp.Aggs, newAggState(a, 1))
	}
	for _, i := range idx {
		for k, a := range tmp.Aggs {
			if err := a.Combine(0, p.Aggs[k], i); err != nil {
				return nil, err
			}
		}
	}
	rows, err := s.rows(tmp, nil)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// topNOrder returns the comparator of rows i, j of p by the topN metric
// (best first). Aggregator metrics are read from the states directly;
// post-aggregator metrics need the rows materialised.
func topNOrder(q *query.Query, p *Partial) (func(i, j int) int, error) {
	m := q.TopN.Metric
	invert := false
	for m.Type == "inverted" {
		invert = !invert
		m = m.Delegate
	}
	var cmp func(i, j int) int
	if m.Type == "dimension" {
		ord := m.Ordering
		cmp = func(i, j int) int { return compareValues(p.Dims[0].Value(i), p.Dims[0].Value(j), ord, false) }
	} else {
		vals, err := metricValues(q, p, m.Metric)
		if err != nil {
			return nil, err
		}
		// Numeric metrics sort descending; nulls last.
		cmp = func(i, j int) int { return -compareValues(vals[i], vals[j], query.Lexicographic, true) }
	}
	if invert {
		inner := cmp
		cmp = func(i, j int) int { return -inner(i, j) }
	}
	return cmp, nil
}

// metricValues returns the value of an aggregator or post-aggregator for
// every row of p.
func metricValues(q *query.Query, p *Partial, name string) ([]Value, error) {
	vals := make([]Value, p.Len())
	for k, a := range q.Aggregations {
		if a.Name != name || k >= len(p.Aggs) {
			continue
		}
		for i := range vals {
			v, err := aggValue(p.Aggs[k], i, true)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return vals, nil
	}
	var dims []*query.DimensionSpec
	if q.TopN != nil {
		dims = []*query.DimensionSpec{q.TopN.Dimension}
	} else if q.GroupBy != nil {
		dims = q.GroupBy.Dimensions
	}
	s := newSchema(q, dims, q.Aggregations)
	rows, err := s.rows(p, nil)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		vals[i] = s.get(r, name)
	}
	return vals, nil
}

func (e *Engine) finalizeTopN(q *query.Query, p *Partial) ([]byte, error) {
	m := q.TopN.Metric
	for m.Type == "inverted" {
		m = m.Delegate
	}
	if m.Type == "dimension" && m.PreviousStop != nil {
		var keep []int
		for i := range p.Len() {
			if compareValues(p.Dims[0].Value(i), Str(*m.PreviousStop), m.Ordering, false) > 0 {
				keep = append(keep, i)
			}
		}
		p = p.gather(keep)
	}
	if err := pruneTopN(q, p, q.TopN.Threshold); err != nil {
		return nil, err
	}
	order, err := topNOrder(q, p)
	if err != nil {
		return nil, err
	}
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
	s := newSchema(q, []*query.DimensionSpec{q.TopN.Dimension}, q.Aggregations)
	w := newWriter(q)
	w.raw("[")
	for ti, t := range times {
		idx := byTime[t]
		sort.SliceStable(idx, func(a, b int) bool { return order(idx[a], idx[b]) < 0 })
		if len(idx) > q.TopN.Threshold {
			idx = idx[:q.TopN.Threshold]
		}
		rows, err := s.rows(p, idx)
		if err != nil {
			return nil, err
		}
		if ti > 0 {
			w.raw(",")
		}
		w.raw(`{"timestamp":`)
		w.timestamp(t)
		w.raw(`,"result":[`)
		for i, r := range rows {
			if i > 0 {
				w.raw(",")
			}
			w.raw("{")
			w.fields(s, r, true)
			w.raw("}")
		}
		w.raw("]}")
	}
	w.raw("]")
	return w.b, nil
}
