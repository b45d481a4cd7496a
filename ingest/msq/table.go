package msq

import (
	"context"

	"strata/aggregate"
	"strata/expr"
	"strata/querynode/engine"
	"strata/storage/segment"
)

// segColumn reads one column of a segment through the engine's cursor,
// block by block.
type segColumn struct {
	name    string
	kind    Type
	stored  segment.Kind
	absent  bool
	isTime  bool
	dict    []expr.Value // string values by dictionary id, looked up once
	longs   []int64
	doubles []float64
	nulls   []uint64
	ids     []int32
	offs    []int32
}

// readSegment calls fn with every row of seg whose time lies in clip, as
// values of sig's columns (columns the segment lacks read as null). It reads
// through the query engine's cursor (engine.SegmentCursor), as native
// queries do. Strings alias the segment and stay valid while it is open.
func readSegment(ctx context.Context, seg *segment.Segment, sig Signature, clip [2]int64, fn func(row []expr.Value) error) (int64, error) {
	cur, err := engine.NewSegmentCursor(ctx, seg, clip[0], clip[1])
	if err != nil {
		return 0, err
	}
	cols := make([]*segColumn, len(sig))
	for i, c := range sig {
		sc := &segColumn{name: c.Name, kind: c.Type}
		cols[i] = sc
		if c.Name == segment.TimeColumn {
			sc.isTime = true
			continue
		}
		kind, ok := cur.Kind(c.Name)
		if !ok {
			sc.absent = true
			continue
		}
		sc.stored = kind
		if sc.stored == segment.KindString {
			n, value, err := cur.Dictionary(c.Name)
			if err != nil {
				return 0, err
			}
			sc.dict = make([]expr.Value, n)
			for id := range sc.dict {
				if s, ok := value(int32(id)); ok {
					sc.dict[id] = expr.String(s)
				} else {
					sc.dict[id] = expr.Null
				}
			}
		}
	}
	row := make([]expr.Value, len(sig))
	var n int64
	for {
		ok, err := cur.Next()
		if err != nil || !ok {
			return n, err
		}
		times, err := cur.Times()
		if err != nil {
			return n, err
		}
		for _, sc := range cols {
			if err := sc.load(cur); err != nil {
				return n, err
			}
		}
		err = cur.Each(func(r int) error {
			for i, sc := range cols {
				if sc.isTime {
					row[i] = expr.Long(times[r])
					continue
				}
				v, err := sc.value(cur, r)
				if err != nil {
					return err
				}
				row[i] = v
			}
			n++
			return fn(row)
		})
		if err != nil {
			return n, err
		}
	}
}

// load reads the column's arrays of the cursor's current block.
func (sc *segColumn) load(cur *engine.SegmentCursor) error {
	var err error
	switch {
	case sc.absent || sc.isTime:
	case sc.stored == segment.KindLong:
		sc.longs, sc.nulls, err = cur.Longs(sc.name)
	case sc.stored == segment.KindFloat || sc.stored == segment.KindDouble:
		sc.doubles, sc.nulls, err = cur.Doubles(sc.name)
	case sc.stored == segment.KindString:
		sc.offs, sc.ids, err = cur.StringIDs(sc.name)
	}
	return err
}

// value is the column's value at position r of the current block.
func (sc *segColumn) value(cur *engine.SegmentCursor, r int) (expr.Value, error) {
	switch {
	case sc.absent:
		return expr.NullOf(sc.kind.exprType()), nil
	case sc.stored == segment.KindLong:
		if aggregate.BitSet(sc.nulls, r) {
			return expr.NullOf(sc.kind.exprType()), nil
		}
		return castTo(expr.Long(sc.longs[r]), sc.kind), nil
	case sc.stored == segment.KindFloat || sc.stored == segment.KindDouble:
		if aggregate.BitSet(sc.nulls, r) {
			return expr.NullOf(sc.kind.exprType()), nil
		}
		return castTo(expr.Double(sc.doubles[r]), sc.kind), nil
	case sc.stored == segment.KindString:
		if sc.offs == nil {
			return sc.dict[sc.ids[r]], nil
		}
		lo, hi := sc.offs[r], sc.offs[r+1]
		switch hi - lo {
		case 0:
			return expr.Null, nil
		case 1:
			return sc.dict[sc.ids[lo]], nil
		}
		elems := make([]expr.Value, hi-lo)
		for i := range elems {
			elems[i] = sc.dict[sc.ids[lo+int32(i)]]
		}
		return expr.Array(expr.TypeStringArray, elems), nil
	case sc.stored == segment.KindComplex:
		b, ok, err := cur.Blob(sc.name, r)
		if err != nil || !ok {
			return expr.Null, err
		}
		return expr.String(string(b)), nil
	}
	return expr.Null, nil
}
