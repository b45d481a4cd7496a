package engine

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/aggregate"
	"strata/interval"
	"strata/storage/segment"
)

// SegmentCursor is the engine's cursor for readers outside the engine: the
// block source every native query reads through, over the rows of a
// segment whose time lies in [start, end), with the engine's column
// readers for their values. SQL ingestion reads segments through it, so
// native queries and SQL see the same rows and values.
type SegmentCursor struct {
	cols  *columns
	src   *blockSource
	batch Batch
	times numSource
	cx    map[string]*cursorBlobs
}

// cursorBlobs is a complex column with its current block.
type cursorBlobs struct {
	col   *segment.ComplexColumn
	nulls *roaring.Bitmap
	b     int
	start int
	blobs segment.Blobs
}

// NewSegmentCursor returns a cursor over the rows of data whose time lies
// in [start, end), positioned before the first batch.
func NewSegmentCursor(ctx context.Context, data *segment.Segment, start, end int64) (*SegmentCursor, error) {
	cols := newColumns(NewSegment("", data), nil)
	ranges, err := timeRows(data, []interval.Interval{{Start: start, End: end}})
	if err != nil {
		return nil, err
	}
	times, err := cols.num(segment.TimeColumn)
	if err != nil {
		return nil, err
	}
	src := newBlockSource(ctx, cols, selection{ranges: ranges})
	if err := src.Init(); err != nil {
		return nil, err
	}
	return &SegmentCursor{cols: cols, src: src, times: times, cx: map[string]*cursorBlobs{}}, nil
}

// Next moves to the next batch of rows (all in one block); false at the
// end.
func (c *SegmentCursor) Next() (bool, error) {
	b, err := c.src.Next()
	if err != nil {
		return false, err
	}
	c.batch = b
	return b.Len() > 0, nil
}

// Each calls fn with the position in its block of each row of the batch,
// in order.
func (c *SegmentCursor) Each(fn func(i int) error) error {
	r := aggregate.Rows{From: c.batch.From, To: c.batch.To, Sel: c.batch.Sel}
	return r.Each(func(_, i int) error { return fn(i) })
}

// Times returns the time column of the batch's block.
func (c *SegmentCursor) Times() ([]int64, error) { return c.times.longs(c.batch.Block) }

// Kind returns the stored kind of a column; ok is false when the segment
// has no such column.
func (c *SegmentCursor) Kind(name string) (segment.Kind, bool) { return c.cols.colKind(name) }

// Longs returns a numeric column of the batch's block as longs, with its
// null rows (nil when none).
func (c *SegmentCursor) Longs(name string) ([]int64, []uint64, error) {
	src, err := c.cols.num(name)
	if err != nil {
		return nil, nil, err
	}
	vals, err := src.longs(c.batch.Block)
	if err != nil {
		return nil, nil, err
	}
	nulls, err := src.nulls(c.batch.Block)
	return vals, nulls, err
}

// Doubles returns a numeric column of the batch's block as doubles, with
// its null rows (nil when none).
func (c *SegmentCursor) Doubles(name string) ([]float64, []uint64, error) {
	src, err := c.cols.num(name)
	if err != nil {
		return nil, nil, err
	}
	vals, err := src.doubles(c.batch.Block)
	if err != nil {
		return nil, nil, err
	}
	nulls, err := src.nulls(c.batch.Block)
	return vals, nulls, err
}

// StringIDs returns the dictionary ids of a string column's rows in the
// batch's block: offs is nil for a single-valued column (row i has id
// ids[i]); otherwise row i holds ids[offs[i]:offs[i+1]].
func (c *SegmentCursor) StringIDs(name string) (offs, ids []int32, err error) {
	ks, err := c.cols.key(name)
	if err != nil {
		return nil, nil, err
	}
	return ks.ids(c.batch.Block)
}

// Dictionary returns a string column's values by id; ok is false for the
// null id.
func (c *SegmentCursor) Dictionary(name string) (n int, value func(id int32) (string, bool), err error) {
	ks, err := c.cols.key(name)
	if err != nil {
		return 0, nil, err
	}
	return ks.card(), func(id int32) (string, bool) { return ks.value(id).String() }, nil
}

// Blob returns the value of a complex column at position i of the batch's
// block; ok is false for a null.
func (c *SegmentCursor) Blob(name string, i int) (v []byte, ok bool, err error) {
	cb := c.cx[name]
	if cb == nil {
		col, err := c.cols.data.Complex(name)
		if err != nil {
			return nil, false, err
		}
		nulls, err := col.Nulls()
		if err != nil {
			return nil, false, err
		}
		cb = &cursorBlobs{col: col, nulls: nulls, b: -1}
		c.cx[name] = cb
	}
	if b := c.batch.Block; cb.b != b {
		if err := cb.col.Block(b, &cb.blobs); err != nil {
			return nil, false, err
		}
		cb.b = b
		cb.start, _ = c.cols.data.BlockRows(b)
	}
	if cb.nulls != nil && cb.nulls.Contains(uint32(cb.start+i)) {
		return nil, false, nil
	}
	return cb.blobs.At(i), true, nil
}
