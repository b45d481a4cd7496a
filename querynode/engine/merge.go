package engine

import (
	"container/heap"
	"encoding/binary"
	"hash/maphash"
	"math"
	"sort"
	"sync"

	"strata/querynode/query"
)

// Merge combines partial results of the same query (from segments or data
// servers) into one partial. It is a pure function of its inputs, which it
// does not modify.
func (e *Engine) Merge(q *query.Query, parts []*Partial) (*Partial, error) {
	out := &Partial{Type: q.Type}
	if qt, ok := queryTypeOf(q.Type); ok {
		if err := qt.merge(e, q, parts, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mergeTopN merges grouped partials and keeps each bucket's top rows.
func (e *Engine) mergeTopN(q *query.Query, parts []*Partial, out *Partial) error {
	if err := e.mergeGrouped(q, parts, out); err != nil {
		return err
	}
	return pruneTopN(q, out, max(q.TopN.Threshold, q.Context.MinTopNThreshold))
}

// allTime reports whether rows of every time merge into one bucket.
func allTime(q *query.Query) bool { return q.Granularity == nil || q.Granularity.IsAll() }

// parallelMergeRows is the row count from which grouped merges use all
// cores.
var parallelMergeRows = 1 << 16

// mergeSpec describes how the grouped rows of partials are keyed.
type mergeSpec struct {
	aggs       []*query.Aggregator
	nd         int
	all        bool
	direct     bool // one string dimension, one bucket: the value is the key
	hasMatched bool
	budget     int64
}

// key returns the merge key of row i of p (valid until the next call).
func (m *mergeSpec) key(p *Partial, i int, buf []byte) ([]byte, string, bool) {
	if m.direct {
		if p.Dims[0].Null[i] {
			return buf, "", true
		}
		return buf, p.Dims[0].Strs[i], false
	}
	buf = buf[:0]
	if !m.all {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(p.Times[i]))
	}
	for _, d := range p.Dims {
		buf = appendKey(buf, d, i)
	}
	return buf, "", false
}

func (e *Engine) mergeGrouped(q *query.Query, parts []*Partial, out *Partial) error {
	m := &mergeSpec{aggs: q.Aggregations, all: allTime(q), hasMatched: q.Type == query.Timeseries, budget: e.groupByBudget(q)}
	if q.Type == query.Search {
		m.aggs = []*query.Aggregator{searchCountAgg}
	}
	total := 0
	for _, p := range parts {
		if len(p.Dims) > 0 {
			m.nd = len(p.Dims)
		}
		total += p.Len()
	}
	for _, p := range parts {
		if p.Len() == 0 {
			continue
		}
		if len(p.Dims) != m.nd {
			return query.Errorf(query.Internal, "partials disagree on the number of dimensions")
		}
		if len(p.Aggs) != len(m.aggs) {
			return query.Errorf(query.Internal, "partials disagree on the number of aggregators")
		}
	}
	m.direct = m.all && m.nd == 1
	for _, p := range parts {
		if m.direct && p.Len() > 0 && p.Dims[0].Type != "STRING" {
			m.direct = false
		}
	}
	if m.sortedInputs(q, parts) {
		if total >= parallelMergeRows && e.opts.Parallelism > 1 && m.all {
			return m.mergeSortedParallel(parts, e.opts.Parallelism, out)
		}
		return m.mergeSorted(parts, out)
	}
	shards := 1
	if total >= parallelMergeRows {
		shards = e.opts.Parallelism
	}
	if shards == 1 {
		if err := m.mergeShard(parts, nil, 0, total, out); err != nil {
			return err
		}
	} else {
		// Rows are spread over shards by key hash; each shard merges its
		// rows on its own core, then the shards are concatenated.
		assign := make([][]uint8, len(parts))
		seed := maphash.MakeSeed()
		var wg sync.WaitGroup
		for pi, p := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := make([]uint8, p.Len())
				var buf []byte
				for i := range a {
					b, s, null := m.key(p, i, buf)
					buf = b
					var h uint64
					switch {
					case null:
					case m.direct:
						h = maphash.String(seed, s)
					default:
						h = maphash.Bytes(seed, b)
					}
					a[i] = uint8(h % uint64(shards))
				}
				assign[pi] = a
			}()
		}
		wg.Wait()
		outs := make([]*Partial, shards)
		errs := make([]error, shards)
		for si := range shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer recoverInto(&errs[si])
				outs[si] = &Partial{Type: out.Type}
				errs[si] = m.mergeShard(parts, assign, uint8(si), total/shards, outs[si])
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		*out = *concatPartials(out.Type, outs)
	}
	if len(out.Aggs) == 0 {
		for _, a := range m.aggs {
			out.Aggs = append(out.Aggs, newAggState(a, 0))
		}
	}
	if out.Dims == nil {
		for _, d := range queryDims(q) {
			out.Dims = append(out.Dims, newDimCol(d.OutputType))
		}
	}
	if m.all && len(out.Times) > 0 {
		// One time bucket: every row carries the earliest time.
		t := out.Times[0]
		for _, x := range out.Times {
			t = min(t, x)
		}
		for i := range out.Times {
			out.Times[i] = t
		}
	}
	return nil
}

// mergeShard merges the rows assigned to shard (all rows when assign is
// nil) into out.
func (m *mergeSpec) mergeShard(parts []*Partial, assign [][]uint8, shard uint8, size int, out *Partial) error {
	for _, a := range m.aggs {
		out.Aggs = append(out.Aggs, newAggState(a, 0))
	}
	index := make(map[string]int32, min(size, 1<<20))
	nullSlot := int32(-1)
	var buf []byte
	var used int64
	for pi, p := range parts {
		if out.Dims == nil && m.nd > 0 && len(p.Dims) == m.nd {
			for _, d := range p.Dims {
				out.Dims = append(out.Dims, newDimCol(d.Type))
			}
		}
		for i := range p.Len() {
			if assign != nil && assign[pi][i] != shard {
				continue
			}
			b, s, null := m.key(p, i, buf)
			buf = b
			var at int32
			var ok bool
			switch {
			case null:
				at, ok = nullSlot, nullSlot >= 0
			case m.direct:
				at, ok = index[s]
			default:
				at, ok = index[string(b)]
			}
			if !ok {
				at = int32(len(out.Times))
				switch {
				case null:
					nullSlot = at
				case m.direct:
					index[s] = at
				default:
					index[string(b)] = at
				}
				out.Times = append(out.Times, p.Times[i])
				for k, d := range p.Dims {
					out.Dims[k].Append(d.Value(i))
				}
				for _, a := range out.Aggs {
					a.Grow(1)
				}
				if m.hasMatched {
					out.Matched = append(out.Matched, false)
				}
				used += int64(len(b)+len(s)) + rowOverhead(m.nd, len(m.aggs))
				if m.budget > 0 && used > m.budget {
					return resourceLimit()
				}
			} else if m.all && p.Times[i] < out.Times[at] {
				out.Times[at] = p.Times[i]
			}
			for k, a := range out.Aggs {
				if err := a.Combine(int(at), p.Aggs[k], i); err != nil {
					return err
				}
			}
			if m.hasMatched && len(p.Matched) > i && p.Matched[i] {
				out.Matched[at] = true
			}
		}
	}
	return nil
}

// concatPartials appends the rows of grouped partials with the same shape.
func concatPartials(typ string, ps []*Partial) *Partial {
	out := &Partial{Type: typ}
	for _, p := range ps {
		out.Times = append(out.Times, p.Times...)
		out.Matched = append(out.Matched, p.Matched...)
		if out.Dims == nil {
			for _, d := range p.Dims {
				out.Dims = append(out.Dims, newDimCol(d.Type))
			}
		}
		for k, d := range p.Dims {
			o := out.Dims[k]
			o.Strs = append(o.Strs, d.Strs...)
			o.Longs = append(o.Longs, d.Longs...)
			o.Doubles = append(o.Doubles, d.Doubles...)
			o.Null = append(o.Null, d.Null...)
		}
		if out.Aggs == nil {
			for _, a := range p.Aggs {
				out.Aggs = append(out.Aggs, a.Empty())
			}
		}
		for k, a := range p.Aggs {
			o := out.Aggs[k]
			o.Longs = append(o.Longs, a.Longs...)
			o.Doubles = append(o.Doubles, a.Doubles...)
			o.Strs = append(o.Strs, a.Strs...)
			o.Null = append(o.Null, a.Null...)
			o.Times = append(o.Times, a.Times...)
			o.HLL = append(o.HLL, a.HLL...)
			o.Theta = append(o.Theta, a.Theta...)
			o.Quant = append(o.Quant, a.Quant...)
			o.M2 = append(o.M2, a.M2...)
			o.Arrs = append(o.Arrs, a.Arrs...)
			o.Sizes = append(o.Sizes, a.Sizes...)
		}
	}
	if len(out.Matched) == 0 {
		out.Matched = nil
	}
	return out
}

func rowOverhead(dims, aggs int) int64 { return int64(48 + 24*dims + 24*aggs) }

func resourceLimit() error {
	return query.Errorf(query.ResourceLimit, "Not enough merge buffer memory to execute this query: too many groups. "+
		"Try increasing the context parameter maxMergingDictionarySize, or reduce the number of groups.")
}

// groupByBudget is the byte bound of groupBy grouping state (0 = none).
func (e *Engine) groupByBudget(q *query.Query) int64 {
	if q.Type != query.GroupBy {
		return 0
	}
	if q.Context.MaxMergingDictionarySize > 0 {
		return q.Context.MaxMergingDictionarySize
	}
	return e.opts.MaxGroupByBytes
}

// appendKey appends a self-delimiting encoding of row i of d.
func appendKey(key []byte, d *DimCol, i int) []byte {
	if d.Null[i] {
		return append(key, 0)
	}
	switch d.Type {
	case "LONG":
		key = append(key, 1)
		return binary.LittleEndian.AppendUint64(key, uint64(d.Longs[i]))
	case "DOUBLE", "FLOAT":
		key = append(key, 2)
		return binary.LittleEndian.AppendUint64(key, math.Float64bits(d.Doubles[i]))
	}
	key = append(key, 3)
	key = binary.AppendUvarint(key, uint64(len(d.Strs[i])))
	return append(key, d.Strs[i]...)
}

// gather keeps rows idx of p, in that order.
func (p *Partial) gather(idx []int) *Partial {
	out := &Partial{Type: p.Type, SortedKeys: p.SortedKeys}
	for _, i := range idx {
		out.Times = append(out.Times, p.Times[i])
		if p.Matched != nil {
			out.Matched = append(out.Matched, p.Matched[i])
		}
	}
	for _, d := range p.Dims {
		out.Dims = append(out.Dims, d.gather(idx))
	}
	for _, a := range p.Aggs {
		out.Aggs = append(out.Aggs, a.Gather(idx))
	}
	return out
}

// pruneTopN keeps, per time bucket, the best n rows by the topN metric.
func pruneTopN(q *query.Query, p *Partial, n int) error {
	order, err := topNOrder(q, p)
	if err != nil {
		return err
	}
	byBucket := map[int64][]int{}
	var times []int64
	for i, t := range p.Times {
		if _, ok := byBucket[t]; !ok {
			times = append(times, t)
		}
		byBucket[t] = append(byBucket[t], i)
	}
	needed := false
	for _, rows := range byBucket {
		if len(rows) > n {
			needed = true
		}
	}
	if !needed {
		return nil
	}
	var keep []int
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	for _, t := range times {
		rows := byBucket[t]
		for _, k := range selectTop(len(rows), n, func(a, b int) int { return order(rows[a], rows[b]) }) {
			keep = append(keep, rows[k])
		}
	}
	*p = *p.gather(keep)
	return nil
}

// queryDims lists the grouping columns of a grouped query's partials.
func queryDims(q *query.Query) []*query.DimensionSpec {
	switch {
	case q.TopN != nil:
		return []*query.DimensionSpec{q.TopN.Dimension}
	case q.GroupBy != nil:
		return q.GroupBy.Dimensions
	case q.Search != nil:
		return []*query.DimensionSpec{{OutputType: "STRING"}, {OutputType: "STRING"}}
	}
	return nil
}

// sortedInputs reports whether every partial is a sorted groupBy partial
// on one string dimension, so that mergeSorted applies.
func (m *mergeSpec) sortedInputs(q *query.Query, parts []*Partial) bool {
	if q.GroupBy == nil || m.nd != 1 {
		return false
	}
	for _, p := range parts {
		if p.Len() > 0 && (!p.SortedKeys || p.Dims[0].Type != "STRING") {
			return false
		}
	}
	return true
}

// mergeSorted merges sorted partials k ways by (time, value), combining
// equal keys; no hashing, sequential access. The output is sorted too.
func (m *mergeSpec) mergeSorted(parts []*Partial, out *Partial) error {
	for _, a := range m.aggs {
		out.Aggs = append(out.Aggs, newAggState(a, 0))
	}
	out.Dims = []*DimCol{newDimCol("STRING")}
	out.SortedKeys = true
	if m.soleSorted(parts, out) {
		return nil
	}
	// Room for every input row (an upper bound of the output) avoids
	// regrowing the output columns.
	total := 0
	for _, p := range parts {
		total += p.Len()
	}
	out.Times = make([]int64, 0, total)
	dim := out.Dims[0]
	dim.Strs, dim.Null = make([]string, 0, total), make([]bool, 0, total)
	h := &cursorHeap{all: m.all}
	for _, p := range parts {
		if p.Len() > 0 {
			c := &cursor{p: p}
			c.load()
			h.cs = append(h.cs, c)
		}
	}
	heap.Init(h)
	var used int64
	last := -1
	var lastKey cursor
	for len(h.cs) > 0 {
		c := h.cs[0]
		p, i := c.p, c.i
		if last < 0 || h.cmp(c, &lastKey) != 0 {
			last = len(out.Times)
			lastKey = *c
			out.Times = append(out.Times, p.Times[i])
			dim.Strs = append(dim.Strs, c.s)
			dim.Null = append(dim.Null, c.null)
			for _, a := range out.Aggs {
				a.Grow(1)
			}
			used += int64(len(c.s)) + rowOverhead(1, len(m.aggs))
			if m.budget > 0 && used > m.budget {
				return resourceLimit()
			}
		} else if m.all && p.Times[i] < out.Times[last] {
			out.Times[last] = p.Times[i]
		}
		for k, a := range out.Aggs {
			if err := a.Combine(last, p.Aggs[k], i); err != nil {
				return err
			}
		}
		if c.i++; c.i < p.Len() {
			c.load()
		} else {
			last := len(h.cs) - 1
			h.cs[0] = h.cs[last]
			h.cs = h.cs[:last]
		}
		h.down()
	}
	return nil
}

// soleSorted handles the merge of a single sorted partial whose keys are
// already distinct (what a data server sends a broker): the output shares
// its columns, with a copy of the row times (which the caller rewrites).
// It reports false, leaving out alone, when that does not apply.
func (m *mergeSpec) soleSorted(parts []*Partial, out *Partial) bool {
	var only *Partial
	for _, p := range parts {
		if p.Len() == 0 {
			continue
		}
		if only != nil {
			return false
		}
		only = p
	}
	if only == nil || len(only.Aggs) != len(m.aggs) {
		return false
	}
	d := only.Dims[0]
	h := &cursorHeap{all: m.all}
	var prev, cur cursor
	var used int64
	for i := range only.Len() {
		cur = cursor{t: only.Times[i], null: d.Null[i], s: d.Strs[i]}
		if i > 0 && h.cmp(&prev, &cur) >= 0 {
			return false
		}
		prev = cur
		used += int64(len(cur.s)) + rowOverhead(1, len(m.aggs))
	}
	if m.budget > 0 && used > m.budget {
		return false // mergeSorted reports the limit
	}
	for k, a := range only.Aggs {
		if a.Kind != out.Aggs[k].Kind || a.Op != out.Aggs[k].Op {
			return false
		}
	}
	out.Times = append([]int64(nil), only.Times...)
	out.Dims = only.Dims
	out.Aggs = only.Aggs
	return true
}

// mergeSortedParallel merges sorted partials of one time bucket on n
// cores: pivot values from the largest partial cut every partial into n
// key ranges, each range is merged on its own, and the sorted results are
// concatenated (ranges are disjoint and in key order).
func (m *mergeSpec) mergeSortedParallel(parts []*Partial, n int, out *Partial) error {
	big := parts[0]
	for _, p := range parts {
		if p.Len() > big.Len() {
			big = p
		}
	}
	nonEmpty := 0
	for _, p := range parts {
		if p.Len() > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 2 {
		return m.mergeSorted(parts, out) // maybe nothing to merge
	}
	// Pivots: non-null values of big at even quantiles, strictly
	// increasing; range r holds keys in [pivot r-1, pivot r).
	var pivots []string
	d := big.Dims[0]
	for r := 1; r < n; r++ {
		i := big.Len() * r / n
		if d.Null[i] || len(pivots) > 0 && d.Strs[i] <= pivots[len(pivots)-1] {
			continue
		}
		pivots = append(pivots, d.Strs[i])
	}
	ranges := make([][]*Partial, len(pivots)+1)
	for _, p := range parts {
		if p.Len() == 0 {
			continue
		}
		lo := 0
		for r := range ranges {
			hi := p.Len()
			if r < len(pivots) {
				pv := pivots[r]
				pd := p.Dims[0]
				hi = lo + sort.Search(p.Len()-lo, func(k int) bool { return !pd.Null[lo+k] && pd.Strs[lo+k] >= pv })
			}
			if hi > lo {
				ranges[r] = append(ranges[r], p.slice(lo, hi))
			}
			lo = hi
		}
	}
	outs := make([]*Partial, len(ranges))
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for r := range ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recoverInto(&errs[r])
			outs[r] = &Partial{Type: out.Type}
			errs[r] = m.mergeSorted(ranges[r], outs[r])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	*out = *concatPartials(out.Type, outs)
	out.SortedKeys = true
	// Each range checked the budget alone; the whole must fit too.
	var used int64
	for _, v := range out.Dims[0].Strs {
		used += int64(len(v)) + rowOverhead(1, len(m.aggs))
	}
	if m.budget > 0 && used > m.budget {
		return resourceLimit()
	}
	return nil
}

// slice returns a view of rows [lo, hi) of a grouped partial.
func (p *Partial) slice(lo, hi int) *Partial {
	out := &Partial{Type: p.Type, SortedKeys: p.SortedKeys, Times: p.Times[lo:hi]}
	if p.Matched != nil {
		out.Matched = p.Matched[lo:hi]
	}
	for _, d := range p.Dims {
		out.Dims = append(out.Dims, &DimCol{Type: d.Type, Strs: sliceRows(d.Strs, p.Len(), lo, hi),
			Longs: sliceRows(d.Longs, p.Len(), lo, hi), Doubles: sliceRows(d.Doubles, p.Len(), lo, hi), Null: d.Null[lo:hi]})
	}
	for _, a := range p.Aggs {
		n := p.Len()
		out.Aggs = append(out.Aggs, a.Slice(n, lo, hi))
	}
	return out
}

// sliceRows cuts rows [lo, hi) of a column of n rows (nil when the column
// is unused).
func sliceRows[T any](x []T, n, lo, hi int) []T {
	if len(x) != n {
		return nil
	}
	return x[lo:hi]
}

// cursor is a position in a sorted partial with its key cached.
type cursor struct {
	p    *Partial
	i    int
	t    int64
	null bool
	s    string
}

func (c *cursor) load() {
	c.t, c.null, c.s = c.p.Times[c.i], c.p.Dims[0].Null[c.i], c.p.Dims[0].Strs[c.i]
}

type cursorHeap struct {
	cs  []*cursor
	all bool
}

func (h *cursorHeap) cmp(a, b *cursor) int {
	if !h.all && a.t != b.t {
		return cmpOrdered(a.t, b.t)
	}
	switch {
	case a.null || b.null: // nulls first
		return cmpBool(b.null, a.null)
	case a.s < b.s:
		return -1
	case a.s > b.s:
		return 1
	}
	return 0
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// down restores the heap order after the top cursor changed (heap.Fix
// without the interface calls: this is the merge's inner loop).
func (h *cursorHeap) down() {
	cs := h.cs
	i, n := 0, len(cs)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h.cmp(cs[r], cs[l]) < 0 {
			j = r
		}
		if h.cmp(cs[j], cs[i]) >= 0 {
			return
		}
		cs[i], cs[j] = cs[j], cs[i]
		i = j
	}
}

func (h *cursorHeap) Len() int           { return len(h.cs) }
func (h *cursorHeap) Less(i, j int) bool { return h.cmp(h.cs[i], h.cs[j]) < 0 }
func (h *cursorHeap) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *cursorHeap) Push(x any)         { h.cs = append(h.cs, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	c := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return c
}
