package engine

import (
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/aggregate"
	"strata/aggregate/blob"
	"strata/querynode/query"
	"strata/storage/segment"
)

// AggState is the state of one aggregator over the rows of a partial
// result; the aggregate package holds the one implementation of every
// aggregator, which the types below feed from a segment's columns.
type AggState = aggregate.State

// aggSpec is what the aggregate package needs of an aggregator spec.
func aggSpec(a *query.Aggregator) *aggregate.Spec {
	b := a.Base()
	s := &aggregate.Spec{Kind: a.ValueKind(), Op: a.Op(), LgK: b.LgK, TgtHllType: b.TgtHllType, Round: b.Round,
		Size: b.Size, K: b.K, MaxStringBytes: b.MaxStringBytes, Population: b.Population, BitInit: b.BitInit}
	if b.Type == "count" {
		s.Op = aggregate.OpCount
	}
	if b.Type == "grouping" {
		s.Op = aggregate.OpMax // a long that nothing folds into
	}
	if ag := b.Array; ag != nil {
		s.Elem, s.MaxSizeBytes = ag.Elem, ag.MaxSizeBytes
		if ag.Finalize != nil {
			s.Finalize, s.FinalizeIdentifier = ag.Finalize.Expr, ag.FinalizeIdentifier()
		}
	}
	return s
}

func newAggState(a *query.Aggregator, n int) *AggState { return aggregate.New(aggSpec(a), n) }

// aggValue returns the result value of row i of an aggregator's state;
// finalize turns sketches into estimates (else they are returned
// serialized, base64).
func aggValue(s *AggState, i int, finalize bool) (Value, error) {
	// The simple kinds are read off the state's arrays here: topN ranks
	// every group by this value, and the general path costs a call and a
	// larger result per group.
	switch s.Kind {
	case aggregate.KindLong:
		if s.Null[i] {
			return Null, nil
		}
		return Long(s.Longs[i]), nil
	case aggregate.KindDouble:
		if s.Null[i] {
			return Null, nil
		}
		return Double(s.Doubles[i]), nil
	}
	r, err := s.Result(i, finalize)
	if err != nil {
		return Null, err
	}
	switch r.Kind {
	case aggregate.ResultLong:
		return Long(r.Long), nil
	case aggregate.ResultDouble:
		return Double(r.Double), nil
	case aggregate.ResultFloat:
		return Float(float32(r.Double)), nil
	case aggregate.ResultString:
		return Str(r.Str), nil
	case aggregate.ResultSketch:
		return Value{K: KObject, S: b64(r.Sketch)}, nil
	case aggregate.ResultArray:
		return arrayValue(r.Arr), nil
	}
	return Null, nil
}

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
// universe (filtered aggregators evaluate their filters with filt).
func (rc *columns) newSegAggs(filt *filterEval, aggs []*query.Aggregator, universe *roaring.Bitmap) ([]segAgg, error) {
	out := make([]segAgg, len(aggs))
	for i, a := range aggs {
		sa, err := rc.newSegAgg(filt, a, newAggState(a, 0), universe)
		if err != nil {
			return nil, err
		}
		out[i] = sa
	}
	return out, nil
}

func (rc *columns) newSegAgg(filt *filterEval, a *query.Aggregator, st *AggState, universe *roaring.Bitmap) (segAgg, error) {
	if a.Type == "filtered" {
		inner, err := rc.newSegAgg(filt, a.Inner, st, universe)
		if err != nil {
			return nil, err
		}
		bm, err := filt.eval(a.Filter, universe, false)
		if err != nil {
			return nil, err
		}
		return &filteredAgg{rc: rc, inner: inner, bm: bm}, nil
	}
	switch {
	case a.Type == "count":
		return &countAgg{st: st}, nil
	case a.Type == "grouping":
		return &groupingAgg{st: st}, nil
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
	case st.Kind == query.KindVariance:
		return rc.newFoldAgg(a, st)
	case st.Kind == query.KindHLL || st.Kind == query.KindTheta:
		return rc.newSketchAgg(a, st)
	case st.Kind == query.KindQuantiles:
		return rc.newQuantilesAgg(a, st)
	case aggregate.IsBitOp(st.Op):
		return rc.newFoldAgg(a, st)
	case st.Kind == query.KindArray:
		return rc.newArrayAgg(a, st)
	}
	return nil, query.Errorf(query.Unsupported, "aggregator type [%s] is not supported", a.Type)
}

type countAgg struct{ st *AggState }

func (c *countAgg) state() *AggState { return c.st }
func (c *countAgg) grow(n int)       { c.st.Grow(n) }
func (c *countAgg) finish() error    { return nil }
func (c *countAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	c.st.AddCount(aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups})
	return nil
}

// numAgg is sum, min or max over a numeric source.
type numAgg struct {
	rc     *columns
	st     *AggState
	src    numSource
	bs, bg []int32
}

func (a *numAgg) state() *AggState { return a.st }
func (a *numAgg) grow(n int)       { a.st.Grow(n) }
func (a *numAgg) finish() error    { return nil }

func (a *numAgg) add(b, from, to int, sel []int32, g0 int32, groups []int32) error {
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g0, Groups: groups}
	nulls, err := a.src.nulls(b)
	if err != nil {
		return err
	}
	if nulls != nil {
		rows = rows.Keep(nulls, true, &a.bs, &a.bg)
	}
	if rows.Len() == 0 {
		return nil
	}
	st := a.st
	if g, ok := a.src.(gatherer); ok && rows.Sel != nil && sparse(len(rows.Sel), a.rc.blockLen(b)) {
		// Few rows of this block pass the filter: read just those, then
		// aggregate them densely (groups stays parallel to sel).
		dense := aggregate.Rows{From: 0, To: len(rows.Sel), G: g0, Groups: rows.Groups}
		if st.Kind == query.KindLong {
			vals, err := g.longsAt(b, rows.Sel)
			if err != nil {
				return err
			}
			st.AddLongs(vals, dense)
			return nil
		}
		vals, err := g.doublesAt(b, rows.Sel)
		if err != nil {
			return err
		}
		st.AddDoubles(vals, dense)
		return nil
	}
	if st.Kind == query.KindLong {
		vals, err := a.src.longs(b)
		if err != nil {
			return err
		}
		st.AddLongs(vals, rows)
		return nil
	}
	vals, err := a.src.doubles(b)
	if err != nil {
		return err
	}
	st.AddDoubles(vals, rows)
	return nil
}

// filteredAgg passes only the rows of its filter to the inner aggregator.
type filteredAgg struct {
	rc     *columns
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
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}.Keep(f.bits, false, &f.bs, &f.bg)
	if len(rows.Sel) == 0 {
		return nil
	}
	return f.inner.add(b, 0, 0, rows.Sel, g, rows.Groups)
}

// pairAgg is first, last or any: the value of the earliest (latest, any)
// row by its time column. On equal times first keeps the earlier row and
// last the later one, as Druid does.
type pairAgg struct {
	rc       *columns
	st       *AggState
	times    numSource
	num      numSource
	keys     keySource
	cx       *segment.ComplexColumn
	blobs    segment.Blobs
	cxNulls  *roaring.Bitmap
	maxBytes int
}

func (rc *columns) newPairAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
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
func (p *pairAgg) grow(n int)       { p.st.Grow(n) }
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
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}
	switch {
	case p.cx != nil:
		if err := p.cx.Block(b, &p.blobs); err != nil {
			return err
		}
		start, _ := p.rc.data.BlockRows(b)
		return rows.Each(func(k, i int) error {
			if aggregate.BitSet(tnulls, i) || p.cxNulls != nil && p.cxNulls.Contains(uint32(start+i)) {
				return nil
			}
			pr, err := blob.DecodePair(p.cx.Type(), p.blobs.At(i))
			if err != nil {
				return err
			}
			st.OfferPair(rows.Group(k), pr)
			return nil
		})
	case p.keys != nil:
		offs, ids, err := p.keys.ids(b)
		if err != nil {
			return err
		}
		st.AddFirstIDs(times, tnulls, offs, ids, keyDict{p.keys}, rows)
		return nil
	}
	nulls, err := p.num.nulls(b)
	if err != nil {
		return err
	}
	if st.Kind == query.KindLong {
		longs, err := p.num.longs(b)
		if err != nil {
			return err
		}
		st.AddFirstLongs(times, tnulls, longs, nulls, rows)
		return nil
	}
	doubles, err := p.num.doubles(b)
	if err != nil {
		return err
	}
	st.AddFirstDoubles(times, tnulls, doubles, nulls, rows)
	return nil
}

// keyDict is a string source's dictionary as the aggregate package reads
// it.
type keyDict struct{ ks keySource }

func (d keyDict) Card() int                     { return d.ks.card() }
func (d keyDict) Value(id int32) (string, bool) { return d.ks.value(id).String() }

// sketchAgg feeds a sketch from string ids (deduplicated per group for
// runs of rows going to one group), numbers, or serialized sketches.
type sketchAgg struct {
	rc    *columns
	st    *AggState
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

func (rc *columns) newSketchAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	s := &sketchAgg{rc: rc, st: st, seenG: -1}
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
			// A query data source's sketches, base64 strings.
			typ := blob.TypeHLL
			if a.IsInputThetaSketch {
				typ = blob.TypeTheta
			}
			return rc.newStringSketchAgg(a, st, typ)
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

func (s *sketchAgg) state() *AggState { return s.st }
func (s *sketchAgg) grow(n int)       { s.st.Grow(n) }

func (s *sketchAgg) finish() error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.st.Finish()
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
					if err := s.st.AddString(s.seenG, v); err != nil {
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
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}
	iter, group := rows.Each, rows.Group
	switch {
	case s.cx != nil:
		return s.rc.eachBlob(s.cx, s.cxNul, &s.blobs, b, rows, s.st.MergeIntermediate)
	case s.num != nil:
		return eachNumber(s.num, b, rows, s.st.AddLong, s.st.AddDouble)
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
					if err := s.st.AddString(gi, v); err != nil {
						return err
					}
				}
			}
		}
		if s.byRow {
			return s.st.AddString(gi, string(row))
		}
		return nil
	})
}

// eachBlob calls fn with the group and value of each row of block b of a
// complex column that is not null.
func (rc *columns) eachBlob(cx *segment.ComplexColumn, nulls *roaring.Bitmap, blobs *segment.Blobs, b int, rows aggregate.Rows, fn func(g int32, typ string, v []byte) error) error {
	if err := cx.Block(b, blobs); err != nil {
		return err
	}
	start, _ := rc.data.BlockRows(b)
	return rows.Each(func(k, i int) error {
		if nulls != nil && nulls.Contains(uint32(start+i)) {
			return nil
		}
		return fn(rows.Group(k), cx.Type(), blobs.At(i))
	})
}

// eachNumber calls onLong or onDouble, by the column's kind, with the group
// and value of each row of block b whose value is not null.
func eachNumber(src numSource, b int, rows aggregate.Rows, onLong func(g int32, v int64) error, onDouble func(g int32, v float64) error) error {
	nulls, err := src.nulls(b)
	if err != nil {
		return err
	}
	if src.kind() == segment.KindLong {
		vals, err := src.longs(b)
		if err != nil {
			return err
		}
		return rows.Each(func(k, i int) error {
			if aggregate.BitSet(nulls, i) {
				return nil
			}
			return onLong(rows.Group(k), vals[i])
		})
	}
	vals, err := src.doubles(b)
	if err != nil {
		return err
	}
	return rows.Each(func(k, i int) error {
		if aggregate.BitSet(nulls, i) {
			return nil
		}
		return onDouble(rows.Group(k), vals[i])
	})
}
