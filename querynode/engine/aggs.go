package engine

import (
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/querynode/query"
	"strata/storage/blob"
	"strata/storage/segment"
)

// segAgg aggregates the rows of one segment into an AggState. add folds
// the rows of block b (dense [from,to) when sel is nil, else sel) into
// group g, or, when groups is non-nil, row k of the iteration into
// groups[k]. Groups are created with grow before rows reach them.
type segAgg interface {
	state() *AggState
	grow(n int)
	add(b, from, to int, sel []int32, g int32, groups []int32) error
	finish() error
}

// newSegAggs builds the aggregators of the query over rows drawn from
// universe (needed by filtered aggregators).
func (rc *runCtx) newSegAggs(aggs []*query.Aggregator, universe *roaring.Bitmap) ([]segAgg, error) {
	out := make([]segAgg, len(aggs))
	for i, a := range aggs {
		sa, err := rc.newSegAgg(a, newAggState(a, 0), universe)
		if err != nil {
			return nil, err
		}
		out[i] = sa
	}
	return out, nil
}

func (rc *runCtx) newSegAgg(a *query.Aggregator, st *AggState, universe *roaring.Bitmap) (segAgg, error) {
	if a.Type == "filtered" {
		inner, err := rc.newSegAgg(a.Inner, st, universe)
		if err != nil {
			return nil, err
		}
		bm, err := rc.evalFilter(a.Filter, universe, false)
		if err != nil {
			return nil, err
		}
		return &filteredAgg{rc: rc, inner: inner, bm: bm}, nil
	}
	switch {
	case a.Type == "count":
		return &countAgg{st: st}, nil
	case st.Op == "sum" || st.Op == "min" || st.Op == "max":
		var src numSource
		var err error
		if a.Expression != nil {
			src, err = rc.newExprNum(&query.VirtualColumn{Name: "\x00agg:" + a.Name, Expression: a.Expression})
		} else {
			src, err = rc.num(a.FieldName)
		}
		if err != nil {
			return nil, err
		}
		return &numAgg{rc: rc, st: st, src: src}, nil
	case st.Op == "first" || st.Op == "last" || st.Op == "any":
		return rc.newPairAgg(a, st)
	case st.Kind == query.KindHLL || st.Kind == query.KindTheta:
		return rc.newSketchAgg(a, st)
	case st.Kind == query.KindQuantiles:
		return rc.newQuantilesAgg(a, st)
	}
	return nil, query.Errorf(query.Unsupported, "aggregator type [%s] is not supported", a.Type)
}

type countAgg struct{ st *AggState }

func (c *countAgg) state() *AggState { return c.st }
func (c *countAgg) grow(n int)       { c.st.grow(n) }
func (c *countAgg) finish() error    { return nil }
func (c *countAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	if groups != nil {
		countGrouped(c.st.Longs, groups)
		return nil
	}
	if sel != nil {
		c.st.Longs[g] += int64(len(sel))
	} else {
		c.st.Longs[g] += int64(to - from)
	}
	return nil
}

// dropNulls narrows an iteration to its non-null rows, returning a
// selection (and the matching groups) in the given buffers.
func dropNulls(nulls []uint64, from, to int, sel, groups []int32, bsel, bgroups *[]int32) ([]int32, []int32) {
	s, gs := (*bsel)[:0], (*bgroups)[:0]
	if s == nil {
		// The result must not be nil even when every row is null: a nil
		// selection means "every row of the block".
		s = make([]int32, 0, 64)
	}
	if sel == nil {
		for i := from; i < to; i++ {
			if !bitSet(nulls, i) {
				s = append(s, int32(i))
				if groups != nil {
					gs = append(gs, groups[i-from])
				}
			}
		}
	} else {
		for k, i := range sel {
			if !bitSet(nulls, int(i)) {
				s = append(s, i)
				if groups != nil {
					gs = append(gs, groups[k])
				}
			}
		}
	}
	*bsel, *bgroups = s, gs
	if groups == nil {
		gs = nil
	}
	return s, gs
}

// numAgg is sum, min or max over a numeric source.
type numAgg struct {
	rc       *runCtx
	st       *AggState
	src      numSource
	bs, bg   []int32
	asDouble bool
}

func (a *numAgg) state() *AggState { return a.st }
func (a *numAgg) grow(n int)       { a.st.grow(n) }
func (a *numAgg) finish() error    { return nil }

func (a *numAgg) add(b, from, to int, sel []int32, g0 int32, groups []int32) error {
	nulls, err := a.src.nulls(b)
	if err != nil {
		return err
	}
	if nulls != nil {
		sel, groups = dropNulls(nulls, from, to, sel, groups, &a.bs, &a.bg)
	}
	if sel != nil && len(sel) == 0 || sel == nil && to <= from {
		return nil
	}
	st := a.st
	if g, ok := a.src.(gatherer); ok && sel != nil && sparse(len(sel), a.rc.blockLen(b)) {
		// Few rows of this block pass the filter: read just those, then
		// aggregate them densely (groups stays parallel to sel).
		if st.Kind == query.KindLong {
			vals, err := g.longsAt(b, sel)
			if err != nil {
				return err
			}
			aggregate(st.Longs, st.Null, st.Op, vals, 0, len(vals), nil, g0, groups)
			return nil
		}
		vals, err := g.doublesAt(b, sel)
		if err != nil {
			return err
		}
		aggregate(st.Doubles, st.Null, st.Op, vals, 0, len(vals), nil, g0, groups)
		return nil
	}
	if st.Kind == query.KindLong {
		vals, err := a.src.longs(b)
		if err != nil {
			return err
		}
		aggregate(st.Longs, st.Null, st.Op, vals, from, to, sel, g0, groups)
		return nil
	}
	vals, err := a.src.doubles(b)
	if err != nil {
		return err
	}
	aggregate(st.Doubles, st.Null, st.Op, vals, from, to, sel, g0, groups)
	return nil
}

func aggregate[T number](acc []T, null []bool, op string, vals []T, from, to int, sel []int32, g int32, groups []int32) {
	switch {
	case groups == nil && sel == nil:
		v := vals[from:to]
		switch op {
		case "sum":
			acc[g] += sumDense(v)
		case "min":
			acc[g] = minDense(acc[g], v)
		default:
			acc[g] = maxDense(acc[g], v)
		}
		null[g] = false
	case groups == nil:
		switch op {
		case "sum":
			acc[g] += sumSel(vals, sel)
		case "min":
			acc[g] = minSel(acc[g], vals, sel)
		default:
			acc[g] = maxSel(acc[g], vals, sel)
		}
		null[g] = false
	case sel == nil:
		v := vals[from:to]
		switch op {
		case "sum":
			sumGrouped(acc, null, v, groups)
		case "min":
			minGrouped(acc, null, v, groups)
		default:
			maxGrouped(acc, null, v, groups)
		}
	default:
		switch op {
		case "sum":
			sumSelGrouped(acc, null, vals, sel, groups)
		case "min":
			minSelGrouped(acc, null, vals, sel, groups)
		default:
			maxSelGrouped(acc, null, vals, sel, groups)
		}
	}
}

// filteredAgg passes only the rows of its filter to the inner aggregator.
type filteredAgg struct {
	rc     *runCtx
	inner  segAgg
	bm     *roaring.Bitmap
	bits   []uint64
	bs, bg []int32
}

func (f *filteredAgg) state() *AggState { return f.inner.state() }
func (f *filteredAgg) grow(n int)       { f.inner.grow(n) }
func (f *filteredAgg) finish() error    { return f.inner.finish() }

func (f *filteredAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	if f.bm.IsEmpty() {
		return nil
	}
	start, end := f.rc.data.BlockRows(b)
	if !f.bm.IntersectsWithInterval(uint64(start), uint64(end)) {
		return nil
	}
	f.bits = f.rc.blockBits(f.bm, b, f.bits)
	s, gs := f.bs[:0], f.bg[:0]
	if sel == nil {
		for i := from; i < to; i++ {
			if bitSet(f.bits, i) {
				s = append(s, int32(i))
				if groups != nil {
					gs = append(gs, groups[i-from])
				}
			}
		}
	} else {
		for k, i := range sel {
			if bitSet(f.bits, int(i)) {
				s = append(s, i)
				if groups != nil {
					gs = append(gs, groups[k])
				}
			}
		}
	}
	f.bs, f.bg = s, gs
	if len(s) == 0 {
		return nil
	}
	if groups == nil {
		gs = nil
	}
	return f.inner.add(b, 0, 0, s, g, gs)
}

// pairAgg is first, last or any: the value of the earliest (latest, any)
// row by its time column. On equal times first keeps the earlier row and
// last the later one, as Druid does.
type pairAgg struct {
	rc       *runCtx
	st       *AggState
	times    numSource
	num      numSource
	keys     keySource
	cx       *segment.ComplexColumn
	blobs    segment.Blobs
	cxNulls  *roaring.Bitmap
	maxBytes int
}

func (rc *runCtx) newPairAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	p := &pairAgg{rc: rc, st: st, maxBytes: a.MaxStringBytes}
	var err error
	if p.times, err = rc.num(a.TimeColumn); err != nil {
		return nil, err
	}
	kind, ok := rc.colKind(a.FieldName)
	switch {
	case ok && kind == segment.KindComplex:
		cx, err := rc.data.Complex(a.FieldName)
		if err != nil {
			return nil, err
		}
		if _, isPair := pairKind(cx.Type()); !isPair {
			return nil, query.Invalidf("aggregator [%s]: column [%s] holds %s values, not first/last pairs", a.Name, a.FieldName, cx.Type())
		}
		p.cx = cx
		if p.cxNulls, err = cx.Nulls(); err != nil {
			return nil, err
		}
	case st.Kind == query.KindString:
		if p.keys, err = rc.key(a.FieldName); err != nil {
			return nil, err
		}
	default:
		if p.num, err = rc.num(a.FieldName); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func pairKind(t string) (string, bool) {
	switch t {
	case blob.TypePairLongLong:
		return query.KindLong, true
	case blob.TypePairLongDouble:
		return query.KindDouble, true
	case blob.TypePairLongFloat:
		return query.KindFloat, true
	case blob.TypePairLongString:
		return query.KindString, true
	}
	return "", false
}

func (p *pairAgg) state() *AggState { return p.st }
func (p *pairAgg) grow(n int)       { p.st.grow(n) }
func (p *pairAgg) finish() error    { return nil }

func (p *pairAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	times, err := p.times.longs(b)
	if err != nil {
		return err
	}
	tnulls, err := p.times.nulls(b)
	if err != nil {
		return err
	}
	st := p.st
	var longs []int64
	var doubles []float64
	var nulls []uint64
	var offs, ids []int32
	start, _ := p.rc.data.BlockRows(b)
	switch {
	case p.cx != nil:
		if err := p.cx.Block(b, &p.blobs); err != nil {
			return err
		}
	case p.keys != nil:
		if offs, ids, err = p.keys.ids(b); err != nil {
			return err
		}
	case st.Kind == query.KindLong:
		if longs, err = p.num.longs(b); err != nil {
			return err
		}
	default:
		if doubles, err = p.num.doubles(b); err != nil {
			return err
		}
	}
	if p.num != nil {
		if nulls, err = p.num.nulls(b); err != nil {
			return err
		}
	}
	visit := func(k, i int) error {
		gi := g
		if groups != nil {
			gi = groups[k]
		}
		if bitSet(tnulls, i) {
			return nil
		}
		t := times[i]
		var pr blob.Pair
		if p.cx != nil {
			if p.cxNulls != nil && p.cxNulls.Contains(uint32(start+i)) {
				return nil
			}
			var err error
			if pr, err = blob.DecodePair(p.cx.Type(), p.blobs.At(i)); err != nil {
				return err
			}
			t = pr.Time
		}
		switch st.Op {
		case "first":
			if t >= st.Times[gi] {
				return nil
			}
		case "last":
			if t < st.Times[gi] {
				return nil
			}
		default:
			if st.Times[gi] != math.MaxInt64 {
				return nil
			}
		}
		st.Times[gi] = t
		switch {
		case p.cx != nil:
			st.Null[gi] = pr.Null
			switch st.Kind {
			case query.KindLong:
				st.Longs[gi] = pr.Long
			case query.KindString:
				st.Strs[gi] = chopUTF8(pr.String, p.maxBytes)
			default:
				st.Doubles[gi] = pr.Double
			}
		case p.keys != nil:
			id := int32(-1)
			if offs == nil {
				id = ids[i]
			} else if offs[i+1] > offs[i] {
				id = ids[offs[i]]
			}
			v := Null
			if id >= 0 {
				v = p.keys.value(id)
			}
			s, ok := v.String()
			st.Null[gi] = !ok
			st.Strs[gi] = chopUTF8(s, p.maxBytes)
		default:
			st.Null[gi] = bitSet(nulls, i)
			if longs != nil {
				st.Longs[gi] = longs[i]
			} else {
				st.Doubles[gi] = doubles[i]
			}
		}
		return nil
	}
	if sel == nil {
		for i := from; i < to; i++ {
			if err := visit(i-from, i); err != nil {
				return err
			}
		}
		return nil
	}
	for k, i := range sel {
		if err := visit(k, int(i)); err != nil {
			return err
		}
	}
	return nil
}

// chopUTF8 cuts s to at most n bytes without splitting a character.
func chopUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sketchSink receives the values of a distinct-count aggregator.
type sketchSink interface {
	str(g int32, s string) error
	long(g int32, v int64) error
	dbl(g int32, v float64) error
	blob(g int32, b []byte) error
	grow(n int)
	finish() error
}

type hllSink struct {
	st  *AggState
	lgK int
}

func (h *hllSink) union(g int32) (hll.Union, error) {
	u := h.st.HLL[g]
	if u == nil {
		var err error
		if u, err = hll.NewUnion(h.lgK); err != nil {
			return nil, err
		}
		h.st.HLL[g] = u
	}
	return u, nil
}

func (h *hllSink) str(g int32, s string) error {
	u, err := h.union(g)
	if err != nil {
		return err
	}
	return u.UpdateString(s)
}

func (h *hllSink) long(g int32, v int64) error {
	u, err := h.union(g)
	if err != nil {
		return err
	}
	return u.UpdateInt64(v)
}

func (h *hllSink) dbl(g int32, v float64) error {
	u, err := h.union(g)
	if err != nil {
		return err
	}
	if v == 0 {
		v = 0 // fold -0 into +0, as blob.UpdateHLLDouble does
	}
	return u.UpdateInt64(int64(math.Float64bits(v)))
}

func (h *hllSink) blob(g int32, b []byte) error {
	sk, err := blob.DecodeHLL(b)
	if err != nil {
		return err
	}
	u, err := h.union(g)
	if err != nil {
		return err
	}
	return u.UpdateSketch(sk)
}

func (h *hllSink) grow(n int)    { h.st.grow(n) }
func (h *hllSink) finish() error { return nil }

type thetaSink struct {
	st  *AggState
	lgK uint8
	upd []*theta.QuickSelectUpdateSketch
}

func (t *thetaSink) sketch(g int32) (*theta.QuickSelectUpdateSketch, error) {
	if t.upd[g] == nil {
		sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(t.lgK))
		if err != nil {
			return nil, err
		}
		t.upd[g] = sk
	}
	return t.upd[g], nil
}

func (t *thetaSink) str(g int32, s string) error {
	sk, err := t.sketch(g)
	if err == nil {
		blob.UpdateTheta(sk, s)
	}
	return err
}

func (t *thetaSink) long(g int32, v int64) error {
	sk, err := t.sketch(g)
	if err == nil {
		blob.UpdateTheta(sk, v)
	}
	return err
}

func (t *thetaSink) dbl(g int32, v float64) error {
	sk, err := t.sketch(g)
	if err == nil {
		blob.UpdateTheta(sk, v)
	}
	return err
}

func (t *thetaSink) union(g int32) (*theta.Union, error) {
	if t.st.Theta[g] == nil {
		u, err := newThetaUnion(t.st.spec)
		if err != nil {
			return nil, err
		}
		t.st.Theta[g] = u
	}
	return t.st.Theta[g], nil
}

func (t *thetaSink) blob(g int32, b []byte) error {
	sk, err := blob.DecodeTheta(b)
	if err != nil {
		return err
	}
	u, err := t.union(g)
	if err != nil {
		return err
	}
	return u.Update(sk)
}

func (t *thetaSink) grow(n int) {
	t.st.grow(n)
	t.upd = append(t.upd, make([]*theta.QuickSelectUpdateSketch, n)...)
}

func (t *thetaSink) finish() error {
	for g, sk := range t.upd {
		if sk == nil {
			continue
		}
		u, err := t.union(int32(g))
		if err != nil {
			return err
		}
		if err := u.Update(sk.Compact(false)); err != nil {
			return err
		}
		t.upd[g] = nil
	}
	return nil
}

// sketchAgg feeds a sketch from string ids (deduplicated per group for
// runs of rows going to one group), numbers, or serialized sketches.
type sketchAgg struct {
	rc    *runCtx
	sink  sketchSink
	keys  []keySource
	byRow bool
	num   numSource
	cx    *segment.ComplexColumn
	cxNul *roaring.Bitmap
	blobs segment.Blobs
	// seen[k] marks ids of keys[k] seen for group seenG, flushed when the
	// group changes and at finish.
	seen  [][]uint64
	seenG int32
	dirty bool
}

func (rc *runCtx) newSketchAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	s := &sketchAgg{rc: rc, seenG: -1}
	if st.Kind == query.KindHLL {
		lgK := a.LgK
		if lgK == 0 {
			lgK = 12
		}
		s.sink = &hllSink{st: st, lgK: lgK}
	} else {
		lg := uint8(0)
		for 1<<lg < a.Size {
			lg++
		}
		s.sink = &thetaSink{st: st, lgK: lg}
	}
	if a.Type == "cardinality" {
		for _, d := range a.Fields {
			ks, err := rc.keyFor(d)
			if err != nil {
				return nil, err
			}
			s.keys = append(s.keys, ks)
		}
		s.byRow = a.ByRow && len(a.Fields) > 1
		s.seen = make([][]uint64, len(s.keys))
		return s, nil
	}
	kind, ok := rc.colKind(a.FieldName)
	if !ok {
		return s, nil // missing column: empty sketch
	}
	switch kind {
	case segment.KindComplex:
		cx, err := rc.data.Complex(a.FieldName)
		if err != nil {
			return nil, err
		}
		want := blob.TypeHLL
		if st.Kind == query.KindTheta {
			want = blob.TypeTheta
		}
		if cx.Type() != want {
			return nil, query.Invalidf("aggregator [%s]: column [%s] holds %s values, not %s", a.Name, a.FieldName, cx.Type(), want)
		}
		s.cx = cx
		var err2 error
		if s.cxNul, err2 = cx.Nulls(); err2 != nil {
			return nil, err2
		}
	case segment.KindString:
		if a.Type == "HLLSketchMerge" || a.IsInputThetaSketch {
			return nil, query.Invalidf("aggregator [%s]: column [%s] does not hold sketches", a.Name, a.FieldName)
		}
		ks, err := rc.key(a.FieldName)
		if err != nil {
			return nil, err
		}
		s.keys = []keySource{ks}
		s.seen = make([][]uint64, 1)
	default:
		if a.Type == "hyperUnique" || a.Type == "HLLSketchMerge" || a.IsInputThetaSketch {
			return nil, query.Invalidf("aggregator [%s]: column [%s] does not hold sketches", a.Name, a.FieldName)
		}
		src, err := rc.num(a.FieldName)
		if err != nil {
			return nil, err
		}
		s.num = src
	}
	return s, nil
}

func (s *sketchAgg) state() *AggState {
	if h, ok := s.sink.(*hllSink); ok {
		return h.st
	}
	return s.sink.(*thetaSink).st
}

func (s *sketchAgg) grow(n int) { s.sink.grow(n) }

func (s *sketchAgg) finish() error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.sink.finish()
}

func (s *sketchAgg) flush() error {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	for k, seen := range s.seen {
		for w, word := range seen {
			for word != 0 {
				tz := bits.TrailingZeros64(word)
				word &= word - 1
				id := int32(w*64 + tz)
				v, ok := s.keys[k].value(id).String()
				if ok {
					if err := s.sink.str(s.seenG, v); err != nil {
						return err
					}
				}
			}
			seen[w] = 0
		}
	}
	return nil
}

func (s *sketchAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	rows := blockRows{from: from, to: to, sel: sel, g: g, groups: groups}
	iter, group := rows.each, rows.group
	switch {
	case s.cx != nil:
		return s.rc.eachBlob(s.cx, s.cxNul, &s.blobs, b, rows, s.sink.blob)
	case s.num != nil:
		return eachNumber(s.num, b, rows, s.sink.long, s.sink.dbl)
	case len(s.keys) == 0:
		return nil
	}
	offs := make([][]int32, len(s.keys))
	ids := make([][]int32, len(s.keys))
	for k, ks := range s.keys {
		var err error
		if offs[k], ids[k], err = ks.ids(b); err != nil {
			return err
		}
	}
	if groups == nil && !s.byRow {
		// Mark distinct ids; values are hashed once per group at flush.
		if g != s.seenG {
			if err := s.flush(); err != nil {
				return err
			}
			s.seenG = g
		}
		s.dirty = true
		for k, ks := range s.keys {
			if words := (ks.card() + 63) / 64; len(s.seen[k]) < words {
				s.seen[k] = append(s.seen[k], make([]uint64, words-len(s.seen[k]))...)
			}
			marks, o, id := s.seen[k], offs[k], ids[k]
			if o == nil {
				if sel == nil {
					for _, x := range id[from:to] {
						marks[x>>6] |= 1 << (uint(x) & 63)
					}
				} else {
					for _, i := range sel {
						x := id[i]
						marks[x>>6] |= 1 << (uint(x) & 63)
					}
				}
				continue
			}
			_ = iter(func(_, i int) error {
				for _, x := range id[o[i]:o[i+1]] {
					marks[x>>6] |= 1 << (uint(x) & 63)
				}
				return nil
			})
		}
		return nil
	}
	var row []byte
	return iter(func(k, i int) error {
		gi := group(k)
		row = row[:0]
		for f, ks := range s.keys {
			lo, hi := int32(i), int32(i+1)
			if offs[f] != nil {
				lo, hi = offs[f][i], offs[f][i+1]
			}
			for _, id := range ids[f][lo:hi] {
				v, ok := ks.value(id).String()
				if s.byRow {
					if f > 0 {
						row = append(row, 1)
					}
					if ok {
						row = append(row, v...)
					}
					break
				}
				if ok {
					if err := s.sink.str(gi, v); err != nil {
						return err
					}
				}
			}
		}
		if s.byRow {
			return s.sink.str(gi, string(row))
		}
		return nil
	})
}

// blockRows are the rows of one block an aggregator's add receives: from..to,
// or those listed in sel; each goes to group g, or to groups[k] for the k-th.
type blockRows struct {
	from, to int
	sel      []int32
	g        int32
	groups   []int32
}

// each calls fn(k, i) for each row: k its position among the rows, i its row
// within the block.
func (r blockRows) each(fn func(k, i int) error) error {
	if r.sel == nil {
		for i := r.from; i < r.to; i++ {
			if err := fn(i-r.from, i); err != nil {
				return err
			}
		}
		return nil
	}
	for k, i := range r.sel {
		if err := fn(k, int(i)); err != nil {
			return err
		}
	}
	return nil
}

// group is the group of the k-th row.
func (r blockRows) group(k int) int32 {
	if r.groups != nil {
		return r.groups[k]
	}
	return r.g
}

// eachBlob calls fn with the group and value of each row of block b of a
// complex column that is not null.
func (rc *runCtx) eachBlob(cx *segment.ComplexColumn, nulls *roaring.Bitmap, blobs *segment.Blobs, b int, rows blockRows, fn func(g int32, v []byte) error) error {
	if err := cx.Block(b, blobs); err != nil {
		return err
	}
	start, _ := rc.data.BlockRows(b)
	return rows.each(func(k, i int) error {
		if nulls != nil && nulls.Contains(uint32(start+i)) {
			return nil
		}
		return fn(rows.group(k), blobs.At(i))
	})
}

// eachNumber calls onLong or onDouble, by the column's kind, with the group
// and value of each row of block b whose value is not null.
func eachNumber(src numSource, b int, rows blockRows, onLong func(g int32, v int64) error, onDouble func(g int32, v float64) error) error {
	nulls, err := src.nulls(b)
	if err != nil {
		return err
	}
	if src.kind() == segment.KindLong {
		vals, err := src.longs(b)
		if err != nil {
			return err
		}
		return rows.each(func(k, i int) error {
			if bitSet(nulls, i) {
				return nil
			}
			return onLong(rows.group(k), vals[i])
		})
	}
	vals, err := src.doubles(b)
	if err != nil {
		return err
	}
	return rows.each(func(k, i int) error {
		if bitSet(nulls, i) {
			return nil
		}
		return onDouble(rows.group(k), vals[i])
	})
}
