package msq

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/expr"
	"strata/storage/segment"
)

// segColumn reads one column of a segment block by block.
type segColumn struct {
	kind    Type
	num     *segment.NumericColumn
	str     *segment.StringColumn
	cx      *segment.ComplexColumn
	nulls   *roaring.Bitmap
	dict    []expr.Value // string values by dictionary id, looked up once
	longs   []int64
	doubles []float64
	ids     []int32
	offs    []int32
	blobs   segment.Blobs
	absent  bool
}

// readSegment calls fn with every row of seg whose time lies in clip, as
// values of sig's columns (columns the segment lacks read as null). Strings
// alias the segment and stay valid while it is open.
func readSegment(ctx context.Context, seg *segment.Segment, sig Signature, clip [2]int64, fn func(row []expr.Value) error) (int64, error) {
	cols := make([]*segColumn, len(sig))
	timeIdx := -1
	for i, c := range sig {
		sc := &segColumn{kind: c.Type}
		cols[i] = sc
		if c.Name == segment.TimeColumn {
			timeIdx = i
			continue
		}
		info, ok := seg.Column(c.Name)
		if !ok {
			sc.absent = true
			continue
		}
		var err error
		switch info.Kind {
		case segment.KindLong, segment.KindFloat, segment.KindDouble:
			if sc.num, err = seg.Numeric(c.Name); err != nil {
				return 0, err
			}
			if info.HasNulls {
				if sc.nulls, err = sc.num.Nulls(); err != nil {
					return 0, err
				}
			}
		case segment.KindString:
			if sc.str, err = seg.Strings(c.Name); err != nil {
				return 0, err
			}
			d, err := sc.str.Dictionary()
			if err != nil {
				return 0, err
			}
			sc.dict = make([]expr.Value, d.Len())
			for id := range sc.dict {
				if d.IsNull(id) {
					sc.dict[id] = expr.Null
				} else {
					sc.dict[id] = expr.String(d.Value(id))
				}
			}
		case segment.KindComplex:
			if sc.cx, err = seg.Complex(c.Name); err != nil {
				return 0, err
			}
			if info.HasNulls {
				if sc.nulls, err = sc.cx.Nulls(); err != nil {
					return 0, err
				}
			}
		}
	}
	row := make([]expr.Value, len(sig))
	var times []int64
	var n int64
	rpb := seg.RowsPerBlock()
	for b := range seg.NumBlocks() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		var err error
		if times, err = seg.Time().Longs(b, times); err != nil {
			return n, err
		}
		// Skip blocks entirely outside the clip interval (rows are time-sorted).
		if len(times) == 0 || times[len(times)-1] < clip[0] || times[0] >= clip[1] {
			continue
		}
		for _, sc := range cols {
			if err := sc.load(b); err != nil {
				return n, err
			}
		}
		for r, t := range times {
			if t < clip[0] || t >= clip[1] {
				continue
			}
			global := uint32(b*rpb + r)
			for i, sc := range cols {
				if i == timeIdx {
					row[i] = expr.Long(t)
					continue
				}
				row[i] = sc.value(r, global)
			}
			n++
			if err := fn(row); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (sc *segColumn) load(b int) error {
	var err error
	switch {
	case sc.absent:
	case sc.num != nil:
		if sc.num.Kind() == segment.KindLong {
			sc.longs, err = sc.num.Longs(b, sc.longs)
		} else {
			sc.doubles, err = sc.num.Doubles(b, sc.doubles)
		}
	case sc.str != nil:
		if sc.str.MultiValue() {
			sc.offs, sc.ids, err = sc.str.BlockMultiIDs(b, sc.offs[:0], sc.ids[:0])
		} else {
			sc.ids, err = sc.str.BlockIDs(b, sc.ids[:0])
		}
	case sc.cx != nil:
		err = sc.cx.Block(b, &sc.blobs)
	}
	return err
}

func (sc *segColumn) value(r int, global uint32) expr.Value {
	switch {
	case sc.absent:
		return expr.NullOf(sc.kind.exprType())
	case sc.num != nil:
		if sc.nulls != nil && sc.nulls.Contains(global) {
			return expr.NullOf(sc.kind.exprType())
		}
		if sc.num.Kind() == segment.KindLong {
			return castTo(expr.Long(sc.longs[r]), sc.kind)
		}
		return castTo(expr.Double(sc.doubles[r]), sc.kind)
	case sc.str != nil:
		if !sc.str.MultiValue() {
			return sc.dict[sc.ids[r]]
		}
		lo, hi := sc.offs[r], sc.offs[r+1]
		switch hi - lo {
		case 0:
			return expr.Null
		case 1:
			return sc.dict[sc.ids[lo]]
		}
		elems := make([]expr.Value, hi-lo)
		for i := range elems {
			elems[i] = sc.dict[sc.ids[lo+int32(i)]]
		}
		return expr.Array(expr.TypeStringArray, elems)
	case sc.cx != nil:
		if sc.nulls != nil && sc.nulls.Contains(global) {
			return expr.Null
		}
		return expr.String(string(sc.blobs.At(r)))
	}
	return expr.Null
}
