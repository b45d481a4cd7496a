package engine

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/storage/segment"
)

// Batch is a set of rows of one column block: the dense block-relative
// range [From, To) when Sel is nil, else the block-relative rows listed in
// Sel, ascending. Column values are read by block index through the
// segment's columns (each block decoded once and cached), so a batch
// carries no values itself. A batch is valid until the next call to Next
// of the operator that produced it.
type Batch struct {
	Block    int
	From, To int
	Sel      []int32
}

// Len is the number of rows; zero marks the end of an operator's output.
func (b Batch) Len() int {
	if b.Sel != nil {
		return len(b.Sel)
	}
	return max(b.To-b.From, 0)
}

// narrowed returns b restricted to the rows in sel (a subset of b's rows, in
// order): b itself when sel holds every row, so dense batches stay dense.
func (b Batch) narrowed(sel []int32) Batch {
	if len(sel) == b.Len() {
		return b
	}
	if sel == nil {
		return Batch{Block: b.Block}
	}
	return Batch{Block: b.Block, Sel: sel}
}

// Operator yields batches of rows, as CockroachDB's colexecop.Operator:
// Init prepares it (again, to run it once more), Next returns the next
// non-empty batch, or an empty one at the end. Operators work a block at a
// time; nothing is called per row through an interface.
type Operator interface {
	Init() error
	Next() (Batch, error)
}

// rowFilter is a filter evaluated on the rows of a batch (a numeric range,
// an expression, a column comparison...): refine returns the rows of b that
// match, as a batch of the same block. The result may share the filter's
// buffers and is valid until its next call.
type rowFilter interface {
	refine(b Batch) (Batch, error)
}

// sink is the last stage of a segment's pipeline: it consumes batches
// (aggregating, grouping or collecting rows). A sink returns errStop when it
// needs no more rows.
type sink interface {
	consume(b Batch) error
}

// sinkFunc adapts a function to sink.
type sinkFunc func(b Batch) error

func (f sinkFunc) consume(b Batch) error { return f(b) }

// drain runs op to its end (or until s returns errStop) into s.
func drain(op Operator, s sink) error {
	if err := op.Init(); err != nil {
		return err
	}
	for {
		b, err := op.Next()
		if err != nil {
			return err
		}
		if b.Len() == 0 {
			return nil
		}
		if err := s.consume(b); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
}

type stopError struct{}

func (stopError) Error() string { return "stop" }

// errStop is returned by a sink that has all the rows it needs.
var errStop error = stopError{}

// blockSource is the cursor of a segment: it yields the rows of a selection
// block by block, as dense ranges where it can, checking for cancellation
// between blocks.
type blockSource struct {
	ctx  context.Context
	data *segment.Segment
	rpb  int
	sel  selection
	// over ranges: the range and the next row in it
	ri, lo int
	// over a bitmap: rows read from it but not yet returned
	it      roaring.ManyIntIterable
	buf     []uint32
	pending []uint32
	out     []int32
}

func newBlockSource(ctx context.Context, cols *columns, sel selection) *blockSource {
	return &blockSource{ctx: ctx, data: cols.data, rpb: cols.rpb, sel: sel}
}

func (s *blockSource) Init() error {
	s.ri, s.lo = 0, 0
	if len(s.sel.ranges) > 0 {
		s.lo = s.sel.ranges[0].lo
	}
	if s.sel.bm != nil {
		if s.buf == nil {
			s.buf = make([]uint32, 4096)
		}
		s.it = s.sel.bm.ManyIterator()
		s.pending = s.buf[:s.it.NextMany(s.buf)]
	}
	return nil
}

func (s *blockSource) Next() (Batch, error) {
	if s.sel.bm != nil {
		return s.nextOfBitmap()
	}
	for s.ri < len(s.sel.ranges) {
		r := s.sel.ranges[s.ri]
		if s.lo >= r.hi {
			if s.ri++; s.ri < len(s.sel.ranges) {
				s.lo = s.sel.ranges[s.ri].lo
			}
			continue
		}
		if err := ctxErr(s.ctx); err != nil {
			return Batch{}, err
		}
		b := s.lo / s.rpb
		start, end := s.data.BlockRows(b)
		hi := min(end, r.hi)
		out := Batch{Block: b, From: s.lo - start, To: hi - start}
		s.lo = hi
		return out, nil
	}
	return Batch{}, nil
}

// nextOfBitmap gathers the next block's rows of the bitmap: a dense batch
// when they are the whole block.
func (s *blockSource) nextOfBitmap() (Batch, error) {
	if len(s.pending) == 0 {
		return Batch{}, nil
	}
	if err := ctxErr(s.ctx); err != nil {
		return Batch{}, err
	}
	b := int(s.pending[0]) / s.rpb
	start, end := s.data.BlockRows(b)
	sel := s.out[:0]
	for len(s.pending) > 0 {
		k := 0
		for k < len(s.pending) && int(s.pending[k]) < end {
			sel = append(sel, int32(int(s.pending[k])-start))
			k++
		}
		s.pending = s.pending[k:]
		if len(s.pending) > 0 {
			break
		}
		s.pending = s.buf[:s.it.NextMany(s.buf)]
	}
	s.out = sel
	if len(sel) == end-start {
		return Batch{Block: b, From: 0, To: end - start}, nil
	}
	return Batch{Block: b, Sel: sel}, nil
}

// filterOp passes on the rows of its input's batches that every row filter
// matches; filters run in order, each on the rows the previous one left.
type filterOp struct {
	in      Operator
	filters []rowFilter
}

func (f *filterOp) Init() error { return f.in.Init() }

func (f *filterOp) Next() (Batch, error) {
	for {
		b, err := f.in.Next()
		if err != nil || b.Len() == 0 {
			return b, err
		}
		for _, rf := range f.filters {
			if b, err = rf.refine(b); err != nil {
				return Batch{}, err
			}
			if b.Len() == 0 {
				break
			}
		}
		if b.Len() > 0 {
			return b, nil
		}
	}
}

// collectRows drains op into a bitmap of segment rows.
func collectRows(op Operator, data *segment.Segment) (*roaring.Bitmap, error) {
	out := roaring.New()
	var buf []uint32
	err := drain(op, sinkFunc(func(b Batch) error {
		start, _ := data.BlockRows(b.Block)
		if b.Sel == nil {
			out.AddRange(uint64(start+b.From), uint64(start+b.To))
			return nil
		}
		buf = buf[:0]
		for _, i := range b.Sel {
			buf = append(buf, uint32(start+int(i)))
		}
		out.AddMany(buf)
		return nil
	}))
	return out, err
}
