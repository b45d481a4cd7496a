package msq

import (
	"context"
	"errors"
	"io"

	"strata/expr"
	"strata/ingest/input"
)

// scanRanges runs a scan stage over one large local file in parallel, when
// the file can be divided (fileRanges): each decoder reads byte ranges,
// applies the branch's operators and the stage's output operators and
// encodes the rows of each range per output partition; the worker appends
// the encoded rows to its partitions in file order, so partitions, frames
// and counters come out as with a single reader. It reports false, having
// done nothing, when the file cannot be divided.
func (x *executor) scanRanges(ctx context.Context, st *stage, sp *split, wc *workerCounters, out *outWriter) (bool, error) {
	es := st.inputs[sp.branch].src.(*externalSource)
	src := fileSource{split: *sp.ext, format: es.format, cols: es.cols, sys: es.src.SystemFields()}
	ranges, err := fileRanges(ctx, src)
	if err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, newFault(CodeUnknownError, "cannot read %s: %v", sp.ext.URI, err).with("message", err.Error())
	}
	if ranges == nil {
		return false, nil
	}
	ops := st.inputs[sp.branch].ops
	work := func() rangeWork[scanRange] {
		ow := newOutWriter(x, st, nil)
		var emit func(row []expr.Value, enc *encodedRows) error
		if pe := newProjectEncoder(st, ops, ow); pe != nil {
			emit = pe.write
		} else {
			branch := newOpRunner(ops)
			emit = func(row []expr.Value, enc *encodedRows) error {
				out, keep, err := branch.apply(row)
				if err != nil || !keep {
					return err
				}
				ow.enc = enc
				return ow.emit(out)
			}
		}
		row := make([]expr.Value, len(es.cols))
		return func(rg input.Range, res *scanRange) rangeSpan {
			return scanOneRange(ctx, src, rg, res, emit, row)
		}
	}
	newRes := func() *scanRange {
		return &scanRange{buf: make([]byte, 0, int(rangeSize(len(es.cols)))+rangeSlack), enc: encodedRows{byKey: map[int64]*encodedPart{}}}
	}
	rr := newRangeRunner(ranges, work, newRes)
	defer rr.Close()
	in := wc.input(sp.branch, es)
	var counted int64
	for {
		it, err := rr.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return true, err
		}
		res := it.res
		for _, pe := range res.perrs {
			pe.Record += it.base
			if err := x.parseError(st, wc, pe.Error()); err != nil {
				return true, err
			}
		}
		for _, p := range res.enc.order {
			if err := out.pw.writeEncoded(p); err != nil {
				return true, err
			}
		}
		wc.mu.Lock()
		in.rows += res.rows
		in.bytes += it.rg.End - counted
		wc.mu.Unlock()
		counted = it.rg.End
		if it.err != nil {
			if ctx.Err() != nil {
				return true, ctx.Err()
			}
			return true, it.err
		}
	}
	wc.mu.Lock()
	in.files++
	wc.mu.Unlock()
	return true, nil
}

// scanRange is the output of one range: its rows encoded per partition and
// its parse errors (numbered within the range).
type scanRange struct {
	buf   []byte // input buffer, reused
	enc   encodedRows
	perrs []*input.ParseError
	rows  int64 // rows read (before filters)
}

// scanOneRange reads one range through the stage's operators (emit) into res.
func scanOneRange(ctx context.Context, src fileSource, rg input.Range, res *scanRange, emit func([]expr.Value, *encodedRows) error, row []expr.Value) rangeSpan {
	res.enc.reset()
	res.perrs, res.rows = res.perrs[:0], 0
	fr, err := rangeReader(ctx, src, rg, res.buf, false)
	if err != nil {
		return rangeSpan{first: -1, stop: -1, err: newFault(CodeUnknownError, "cannot read %s: %v", src.split.URI, err).with("message", err.Error())}
	}
	defer fr.Close()
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return spanOf(fr, err)
			}
		}
		err := fr.Next(row)
		if err == io.EOF {
			return spanOf(fr, nil)
		}
		if err != nil {
			var pe *input.ParseError
			if errors.As(err, &pe) {
				res.perrs = append(res.perrs, pe)
				continue
			}
			return spanOf(fr, newFault(CodeCannotParseExternalData, "%s: %v", src.split.URI, err))
		}
		res.rows++
		if err := emit(row, &res.enc); err != nil {
			return spanOf(fr, err)
		}
	}
}

// projectEncoder runs the common scan of an ingestion, a branch that is one
// projection writing to time chunks (or to a single partition), without
// building the projected row: its expressions are evaluated in column order
// as the projection would, then the columns are encoded straight from the
// input row or the expressions' values.
type projectEncoder struct {
	proj  []*compiled
	vals  []expr.Value // values of the expression columns
	timeJ int          // output column of __time with time chunks; -1 otherwise
	ow    *outWriter
	b     rowBindings
}

// newProjectEncoder returns the encoder of a stage and branch that fit, or nil.
func newProjectEncoder(st *stage, ops []rowOp, ow *outWriter) *projectEncoder {
	if len(ops) != 1 || ops[0].filter != nil || len(st.outOps) > 0 {
		return nil
	}
	e := &projectEncoder{proj: ops[0].project, vals: make([]expr.Value, len(ops[0].project)), timeJ: -1, ow: ow}
	switch st.part.kind {
	case partSingle:
	case partChunk:
		e.timeJ = st.part.gen.timeCol
	default:
		return nil
	}
	return e
}

func (e *projectEncoder) write(row []expr.Value, enc *encodedRows) error {
	e.b.row = row
	for j, c := range e.proj {
		if c.col < 0 {
			v, err := c.eval(&e.b)
			if err != nil {
				return err
			}
			e.vals[j] = v
		}
	}
	var key int64
	if e.timeJ >= 0 {
		tv := e.vals[e.timeJ]
		if c := e.proj[e.timeJ]; c.col >= 0 {
			tv = row[c.col]
		}
		var err error
		if key, err = e.ow.chunkOf(tv); err != nil {
			return err
		}
	}
	p := enc.part(key)
	for j, c := range e.proj {
		v := &e.vals[j]
		if c.col >= 0 {
			v = &row[c.col]
		}
		p.data = appendValueMarking(p.data, v, j, &p.arrays)
	}
	p.ends = append(p.ends, len(p.data))
	return nil
}

// encodedRows holds the output rows of one range, encoded per partition
// (in the order the partitions first appear), until the worker appends
// them to its partitions.
type encodedRows struct {
	byKey map[int64]*encodedPart
	order []*encodedPart
	last  *encodedPart
}

// encodedPart is the rows of one partition: ends[i] is where row i ends in
// data; arrays marks the columns that held arrays.
type encodedPart struct {
	key    int64
	data   []byte
	ends   []int
	arrays []bool
}

func (e *encodedRows) reset() {
	for _, p := range e.order {
		p.data, p.ends = p.data[:0], p.ends[:0]
		clear(p.arrays)
	}
	e.order, e.last = e.order[:0], nil
}

func (e *encodedRows) write(key int64, row []expr.Value) {
	p := e.part(key)
	p.data = appendRowMarking(p.data, row, &p.arrays)
	p.ends = append(p.ends, len(p.data))
}

// part returns the rows of partition key.
func (e *encodedRows) part(key int64) *encodedPart {
	p := e.last
	if p == nil || p.key != key {
		p = e.byKey[key]
		if p == nil {
			p = &encodedPart{key: key}
			e.byKey[key] = p
		}
		if len(p.ends) == 0 { // first row of the partition in this range
			e.order = append(e.order, p)
		}
		e.last = p
	}
	return p
}
