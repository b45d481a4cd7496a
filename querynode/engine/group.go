package engine

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// grouper assigns rows to groups of (time bucket, dimension values) using
// dictionary ids: a flat slot table for one dimension or a small id space,
// a map of packed ids otherwise. Multi-value rows explode into one
// (row, group) pair per value combination.
//
// It is the sink of groupBy and topN pipelines (block source → row
// filters → grouper): each batch is split into time-bucket runs, its rows
// assigned groups, and the aggregate stage folds them in.
type grouper struct {
	sq     *segQuery
	keys   []keySource
	aggs   aggregates
	budget int64
	p      *Partial
	gkeys  [][]int32 // per dimension, the id of each group
	alloc  int       // groups the aggregators have room for
	bucket int64
	// single dimension: slot[id+1] is the group of id (-1 none)
	slot    []int32
	touched []int32
	// several dimensions: flat table or map
	strides []int
	flat    []int32
	packed  map[uint64]int32
	byBytes map[string]int32
	widths  []uint
	keyBuf  []byte
	ids     []int32 // current combination
	// per-run output
	sel    []int32
	groups []int32
	// the time column (read when granularity is not all), and the start of
	// the only bucket when it is
	times    numSource
	allStart int64
	addRun   func(bucket int64, run Batch) error
}

func runGrouped(e *Engine, sq *segQuery) (*Partial, error) {
	q := sq.q
	dims := queryDims(q)
	p := &Partial{Type: q.Type}
	// Only buckets with rows are emitted: the clipped start (the bucket of
	// granularity all) is all that is needed.
	start, overlaps := sq.dataStart()
	if !overlaps {
		for _, d := range dims {
			p.Dims = append(p.Dims, newDimCol(d.OutputType))
		}
		for _, a := range q.Aggregations {
			p.Aggs = append(p.Aggs, newAggState(a, 0))
		}
		return p, nil
	}
	rows, universe, err := sq.rows()
	if err != nil {
		return nil, err
	}
	g := &grouper{sq: sq, budget: e.groupByBudget(q), p: p, bucket: -1 << 63, allStart: start}
	for _, d := range dims {
		ks, err := sq.cols.keyFor(d)
		if err != nil {
			return nil, err
		}
		g.keys = append(g.keys, ks)
		g.gkeys = append(g.gkeys, nil)
	}
	if g.aggs, err = sq.aggregates(universe); err != nil {
		return nil, err
	}
	g.setup()
	if g.times, err = sq.cols.num(timeColumn); err != nil {
		return nil, err
	}
	g.addRun = g.bucketRun
	if err := drain(rows, g); err != nil {
		return nil, err
	}
	return g.partial()
}

func (g *grouper) consume(b Batch) error {
	var ts []int64
	if gran := g.sq.q.Granularity; !gran.IsAll() {
		var err error
		if ts, err = g.times.longs(b.Block); err != nil {
			return err
		}
	}
	return bucketRuns(g.sq.q.Granularity, g.allStart, ts, b, g.addRun)
}

func (g *grouper) bucketRun(bucket int64, run Batch) error {
	if bucket != g.bucket {
		g.newBucket(bucket)
	}
	return g.run(run)
}

// partial returns the groups as the segment's partial: aggregates
// finished, topN's groups pruned early, dimension values materialised.
func (g *grouper) partial() (*Partial, error) {
	q, p := g.sq.q, g.p
	n := len(p.Times)
	states, err := g.aggs.states()
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		st.Truncate(n)
		p.Aggs = append(p.Aggs, st)
	}
	keep := g.earlyTopN()
	if keep == nil {
		if keep = g.sortedOrder(); keep != nil {
			p.SortedKeys = true
		}
	}
	if keep != nil {
		// Keep (or reorder) rows before materialising values.
		*p = *p.gather(keep)
		for k, ids := range g.gkeys {
			kept := make([]int32, len(keep))
			for j, i := range keep {
				kept[j] = ids[i]
			}
			g.gkeys[k] = kept
		}
	}
	for k, d := range queryDims(q) {
		col := newDimCol(d.OutputType)
		col.Null = make([]bool, 0, len(g.gkeys[k]))
		if col.Type == "STRING" {
			col.Strs = make([]string, 0, len(g.gkeys[k]))
		}
		ks := g.keys[k]
		for _, id := range g.gkeys[k] {
			if id < 0 {
				col.Append(Null)
			} else {
				col.Append(ks.value(id))
			}
		}
		p.Dims = append(p.Dims, col)
	}
	if q.TopN != nil {
		if err := pruneTopN(q, p, max(q.TopN.Threshold, q.Context.MinTopNThreshold)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// setup picks the grouping structure.
func (g *grouper) setup() {
	if len(g.keys) <= 1 {
		return
	}
	static := true
	product := 1
	total := uint(0)
	for _, ks := range g.keys {
		switch ks.(type) {
		case *physKey, *missingKey:
		default:
			static = false
		}
		w := uint(bits.Len(uint(ks.card() + 1)))
		if !static {
			w = 32
		}
		g.widths = append(g.widths, w)
		total += w
		if product <= 1<<22 {
			product *= ks.card() + 1
		}
	}
	if static && !g.anyMulti() && product <= 1<<22 {
		g.strides = make([]int, len(g.keys))
		s := 1
		for i := len(g.keys) - 1; i >= 0; i-- {
			g.strides[i] = s
			s *= g.keys[i].card() + 1
		}
		g.flat = make([]int32, product)
		for i := range g.flat {
			g.flat[i] = -1
		}
		return
	}
	if total <= 64 {
		g.packed = map[uint64]int32{}
		return
	}
	g.byBytes = map[string]int32{}
}

func (g *grouper) anyMulti() bool {
	for _, ks := range g.keys {
		if pk, ok := ks.(*physKey); ok && pk.multi {
			return true
		}
	}
	return false
}

// newBucket starts a time bucket: groups of other buckets are not reused.
func (g *grouper) newBucket(b int64) {
	g.bucket = b
	switch {
	case g.flat != nil:
		for _, i := range g.touched {
			g.flat[i] = -1
		}
		g.touched = g.touched[:0]
	case g.packed != nil:
		clear(g.packed)
	case g.byBytes != nil:
		clear(g.byBytes)
	default:
		for _, i := range g.touched {
			g.slot[i] = -1
		}
		g.touched = g.touched[:0]
	}
}

// newGroup appends a group for the current bucket and ids.
func (g *grouper) newGroup(ids []int32) (int32, error) {
	n := len(g.p.Times)
	if n >= g.alloc {
		grow := max(1024, g.alloc)
		for _, a := range g.aggs {
			a.grow(grow)
		}
		g.alloc += grow
		if g.budget > 0 && int64(g.alloc)*rowOverhead(len(g.keys), len(g.aggs)) > g.budget {
			return 0, resourceLimit()
		}
	}
	g.p.Times = append(g.p.Times, g.bucket)
	for k, id := range ids {
		g.gkeys[k] = append(g.gkeys[k], id)
	}
	return int32(n), nil
}

// run groups the rows of one bucket run and aggregates them.
func (g *grouper) run(r Batch) error {
	if err := ctxErr(g.sq.ctx); err != nil {
		return err
	}
	b, from, to, sel := r.Block, r.From, r.To, r.Sel
	if len(g.keys) == 0 {
		if len(g.p.Times) == 0 || g.p.Times[len(g.p.Times)-1] != g.bucket {
			if _, err := g.newGroup(nil); err != nil {
				return err
			}
		}
		return g.aggs.add(r, int32(len(g.p.Times)-1), nil)
	}
	offs := make([][]int32, len(g.keys))
	ids := make([][]int32, len(g.keys))
	multi := false
	for k, ks := range g.keys {
		var err error
		if offs[k], ids[k], err = ks.ids(b); err != nil {
			return err
		}
		multi = multi || offs[k] != nil
	}
	n := to - from
	if sel != nil {
		n = len(sel)
	}
	g.groups = resize(g.groups, n)
	var err error
	switch {
	case !multi && len(g.keys) == 1:
		err = g.assignSingle(ids[0], from, sel)
	case !multi && g.flat != nil:
		err = g.assignFlat(ids, from, sel)
	default:
		return g.assignGeneral(b, offs, ids, from, to, sel)
	}
	if err != nil {
		return err
	}
	return g.aggs.add(r, -1, g.groups)
}

func (g *grouper) assignSingle(ids []int32, from int, sel []int32) error {
	if need := g.keys[0].card() + 1; len(g.slot) < need {
		old := len(g.slot)
		g.slot = append(g.slot, make([]int32, need-old)...)
		for i := old; i < need; i++ {
			g.slot[i] = -1
		}
	}
	slot := g.slot
	var one [1]int32
	for k := range g.groups {
		var id int32
		if sel != nil {
			id = ids[sel[k]]
		} else {
			id = ids[from+k]
		}
		s := slot[id+1]
		if s < 0 {
			one[0] = id
			var err error
			if s, err = g.newGroup(one[:]); err != nil {
				return err
			}
			slot[id+1] = s
			g.touched = append(g.touched, id+1)
		}
		g.groups[k] = s
	}
	return nil
}

func (g *grouper) assignFlat(ids [][]int32, from int, sel []int32) error {
	cur := make([]int32, len(g.keys))
	for k := range g.groups {
		i := from + k
		if sel != nil {
			i = int(sel[k])
		}
		at := 0
		for d := range g.keys {
			id := ids[d][i]
			cur[d] = id
			at += int(id+1) * g.strides[d]
		}
		s := g.flat[at]
		if s < 0 {
			var err error
			if s, err = g.newGroup(cur); err != nil {
				return err
			}
			g.flat[at] = s
			g.touched = append(g.touched, int32(at))
		}
		g.groups[k] = s
	}
	return nil
}

// lookup finds or creates the group of the id combination in g.ids.
func (g *grouper) lookup() (int32, error) {
	if g.packed != nil {
		var key uint64
		for d, id := range g.ids {
			key = key<<g.widths[d] | uint64(uint32(id+1))
		}
		if s, ok := g.packed[key]; ok {
			return s, nil
		}
		s, err := g.newGroup(g.ids)
		if err == nil {
			g.packed[key] = s
		}
		return s, err
	}
	if g.byBytes == nil {
		g.byBytes = map[string]int32{}
	}
	g.keyBuf = g.keyBuf[:0]
	for _, id := range g.ids {
		g.keyBuf = binary.LittleEndian.AppendUint32(g.keyBuf, uint32(id+1))
	}
	if s, ok := g.byBytes[string(g.keyBuf)]; ok {
		return s, nil
	}
	s, err := g.newGroup(g.ids)
	if err == nil {
		g.byBytes[string(g.keyBuf)] = s
	}
	return s, err
}

// assignGeneral handles multi-value dimensions and large id spaces: each
// row yields one (row, group) pair per combination of its values.
func (g *grouper) assignGeneral(b int, offs, ids [][]int32, from, to int, sel []int32) error {
	if len(g.keys) == 1 && g.packed == nil && g.byBytes == nil {
		g.packed = map[uint64]int32{}
		g.widths = []uint{32}
	}
	g.sel, g.groups = g.sel[:0], g.groups[:0]
	g.ids = resize(g.ids, len(g.keys))
	var rec func(d, row int) error
	rec = func(d, row int) error {
		if d == len(g.keys) {
			s, err := g.lookup()
			if err != nil {
				return err
			}
			g.sel = append(g.sel, int32(row))
			g.groups = append(g.groups, s)
			return nil
		}
		if offs[d] == nil {
			g.ids[d] = ids[d][row]
			return rec(d+1, row)
		}
		lo, hi := offs[d][row], offs[d][row+1]
		if lo == hi {
			g.ids[d] = -1
			return rec(d+1, row)
		}
		for _, id := range ids[d][lo:hi] {
			g.ids[d] = id
			if err := rec(d+1, row); err != nil {
				return err
			}
		}
		return nil
	}
	if sel == nil {
		for i := from; i < to; i++ {
			if err := rec(0, i); err != nil {
				return err
			}
		}
	} else {
		for _, i := range sel {
			if err := rec(0, int(i)); err != nil {
				return err
			}
		}
	}
	return g.aggs.add(Batch{Block: b, Sel: g.sel}, -1, g.groups)
}

// earlyTopN returns the rows a topN keeps per bucket when its metric is an
// aggregator (nil when all rows are kept or the metric needs values).
func (g *grouper) earlyTopN() []int {
	q := g.sq.q
	if q.TopN == nil {
		return nil
	}
	m := q.TopN.Metric
	for m.Type == "inverted" {
		m = m.Delegate
	}
	isAgg := false
	for _, a := range q.Aggregations {
		isAgg = isAgg || (m.Type == "numeric" && a.Name == m.Metric)
	}
	k := max(q.TopN.Threshold, q.Context.MinTopNThreshold)
	if !isAgg || len(g.p.Times) <= k {
		return nil
	}
	order, err := topNOrder(q, g.p)
	if err != nil {
		return nil
	}
	var keep []int
	for lo := 0; lo < len(g.p.Times); {
		hi := lo
		for hi < len(g.p.Times) && g.p.Times[hi] == g.p.Times[lo] {
			hi++
		}
		for _, i := range selectTop(hi-lo, k, func(a, b int) int { return order(lo+a, lo+b) }) {
			keep = append(keep, lo+i)
		}
		lo = hi
	}
	return keep
}

// sortedOrder returns the order that sorts a groupBy partial on one
// dictionary-encoded string dimension by (time, value): dictionary ids are
// in value order, so sorting ids suffices. Sorted partials merge without
// hashing (see mergeSorted). It returns nil when that does not apply.
func (g *grouper) sortedOrder() []int {
	q := g.sq.q
	if q.GroupBy == nil || len(g.keys) != 1 || q.GroupBy.Dimensions[0].OutputType != "STRING" {
		return nil
	}
	if _, ok := g.keys[0].(*physKey); !ok {
		return nil
	}
	n := len(g.p.Times)
	out := make([]int, 0, n)
	if n > 0 && g.p.Times[0] == g.p.Times[n-1] && len(g.touched) == n && len(g.slot) <= 8*n {
		// One bucket grouped through the slot table (indexed by id+1):
		// reading it in id order lists the groups sorted, no sort needed.
		for _, s := range g.slot {
			if s >= 0 {
				out = append(out, int(s))
			}
		}
		return out
	}
	keys := make([]uint64, 0, n)
	ids := g.gkeys[0]
	for lo := 0; lo < n; {
		hi := lo
		for hi < n && g.p.Times[hi] == g.p.Times[lo] {
			hi++
		}
		keys = keys[:0]
		for i := lo; i < hi; i++ {
			keys = append(keys, uint64(uint32(ids[i]+1))<<32|uint64(i))
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, int(uint32(k)))
		}
		lo = hi
	}
	return out
}
