package msq

import (
	"context"
	"errors"
	"io"
	"sync"
	"unsafe"

	"strata/expr"
	"strata/ingest/input"
)

// prefetcher decodes the rows of one external file on goroutines of its own,
// so that parsing runs on other cores than the worker's operators and output.
// Rows come out in file order, parse errors in their place among them.
//
// An undivided file is decoded by one goroutine a batch at a time. A large
// local file whose format can read byte ranges is decoded by several
// (rangeRunner), each range's rows encoded as in frames until the consumer
// gets to them; record numbers of parse errors then still count from the
// start of the file.
//
// A reader's values may alias its buffers until its next call: readers that
// can are asked to keep them (input.FileReader.KeepValues); for the others
// the decoding goroutine copies the string bytes of each row into an arena
// that belongs to the batch. A batch is reused only once the consumer asks
// for the one after it.
type prefetcher struct {
	ncols int
	// An undivided file.
	fr   *input.FileReader
	full chan *rowBatch
	free chan *rowBatch
	done chan struct{}
	wg   sync.WaitGroup
	cur  *rowBatch
	next int
	// A file read in ranges.
	rr     *rangeRunner[rowRange]
	rng    *rowRange
	rngEnd int64 // where the current range ends
	rngErr error // the error that ended it early
	base   int64 // records before the current range
	nbytes int64 // bytes of the ranges consumed
	types  []expr.Type
	row    []expr.Value
	at     int // offset of the next row in rng.data
	ri     int // next row of the range
	ei     int // next parse error of the range
	// Both.
	end error // io.EOF or the error that stopped reading
}

// rowBatch is a run of decoded rows; errs[i] is the parse error of record i
// (rows[i] is then unused).
type rowBatch struct {
	vals  []expr.Value
	errs  []error
	n     int
	arena []byte
	end   error // set on the last batch
}

// rowRange is the rows of one byte range, encoded, and its parse errors
// (each after the rows before it).
type rowRange struct {
	buf  []byte // input buffer, reused
	data []byte
	n    int
	errs []rowError
}

type rowError struct {
	at  int // rows before the error
	err *input.ParseError
}

const (
	prefetchRows    = 512
	prefetchBatches = 4
)

func newBatch(ncols int) *rowBatch {
	return &rowBatch{vals: make([]expr.Value, prefetchRows*ncols), errs: make([]error, prefetchRows)}
}

// newPrefetcher decodes an opened file on one goroutine.
func newPrefetcher(fr *input.FileReader, ncols int) *prefetcher {
	p := &prefetcher{
		ncols: ncols,
		fr:    fr,
		full:  make(chan *rowBatch, prefetchBatches),
		free:  make(chan *rowBatch, prefetchBatches+1),
		done:  make(chan struct{}),
	}
	for range prefetchBatches + 1 {
		p.free <- newBatch(ncols)
	}
	own := !fr.KeepValues()
	p.wg.Add(1)
	go p.decode(fr, ncols, own)
	return p
}

// openPrefetcher reads a file in parallel ranges when it can be divided, or
// whole otherwise.
func openPrefetcher(ctx context.Context, src fileSource) (*prefetcher, error) {
	ranges, err := fileRanges(ctx, src)
	if err != nil {
		return nil, err
	}
	if ranges == nil {
		fr, err := input.Open(ctx, src.split, src.format, src.cols, src.sys)
		if err != nil {
			return nil, err
		}
		return newPrefetcher(fr, len(src.cols)), nil
	}
	ncols := len(src.cols)
	p := &prefetcher{ncols: ncols, types: make([]expr.Type, ncols), row: make([]expr.Value, ncols)}
	for i, c := range src.cols {
		p.types[i] = fromInputKind(c.Kind).exprType()
	}
	work := func() rangeWork[rowRange] {
		row := make([]expr.Value, ncols)
		return func(rg input.Range, res *rowRange) rangeSpan {
			return decodeRowRange(ctx, src, rg, res, row)
		}
	}
	size := int(rangeSize(ncols)) + rangeSlack
	p.rr = newRangeRunner(ranges, work, func() *rowRange { return &rowRange{buf: make([]byte, 0, size)} })
	return p, nil
}

// rangeSlack is room in a range's buffer for the record that straddles
// its end.
const rangeSlack = 128 << 10

// decodeRowRange decodes the rows of one range into res.
func decodeRowRange(ctx context.Context, src fileSource, rg input.Range, res *rowRange, row []expr.Value) rangeSpan {
	res.data, res.n, res.errs = res.data[:0], 0, res.errs[:0]
	fr, err := rangeReader(ctx, src, rg, res.buf, false)
	if err != nil {
		return rangeSpan{first: -1, stop: -1, err: err}
	}
	defer fr.Close()
	for {
		err := fr.Next(row)
		switch {
		case err == nil:
			res.data = appendRow(res.data, row)
			res.n++
			continue
		case err == io.EOF:
			return spanOf(fr, nil)
		}
		var pe *input.ParseError
		if !errors.As(err, &pe) {
			return spanOf(fr, err)
		}
		res.errs = append(res.errs, rowError{at: res.n, err: pe})
	}
}

func (p *prefetcher) decode(fr *input.FileReader, ncols int, own bool) {
	defer p.wg.Done()
	for {
		var b *rowBatch
		select {
		case b = <-p.free:
		case <-p.done:
			return
		}
		b.n, b.arena, b.end = 0, b.arena[:0], nil
		for b.n < prefetchRows {
			row := b.vals[b.n*ncols : (b.n+1)*ncols]
			err := fr.Next(row)
			if err != nil {
				var pe *input.ParseError
				if !errors.As(err, &pe) {
					b.end = err
					break
				}
			} else if own {
				b.arena = ownStrings(row, b.arena)
			}
			b.errs[b.n] = err
			b.n++
		}
		select {
		case p.full <- b:
		case <-p.done:
			return
		}
		if b.end != nil {
			return
		}
	}
}

// Next returns the next row or the parse error of the next record; at the
// end it returns io.EOF or the error that stopped reading. The row is valid
// until the next call.
func (p *prefetcher) Next(ctx context.Context, ncols int) ([]expr.Value, error) {
	if p.rr != nil {
		return p.nextInRange(ctx)
	}
	for p.cur == nil || p.next >= p.cur.n {
		if p.end != nil {
			return nil, p.end
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p.cur != nil {
			p.end = p.cur.end
			p.free <- p.cur
			p.cur = nil
			continue
		}
		select {
		case p.cur = <-p.full:
			p.next = 0
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	i := p.next
	p.next++
	if err := p.cur.errs[i]; err != nil {
		return nil, err
	}
	return p.cur.vals[i*ncols : (i+1)*ncols], nil
}

// nextInRange returns the next row or parse error of a file read in ranges.
func (p *prefetcher) nextInRange(ctx context.Context) ([]expr.Value, error) {
	for {
		if p.end != nil {
			return nil, p.end
		}
		if r := p.rng; r != nil {
			if p.ei < len(r.errs) && r.errs[p.ei].at == p.ri {
				pe := r.errs[p.ei].err
				p.ei++
				pe.Record += p.base
				return nil, pe
			}
			if p.ri < r.n {
				rest, err := decodeRow(p.row, p.types, r.data[p.at:])
				if err != nil {
					return nil, err
				}
				p.at = len(r.data) - len(rest)
				p.ri++
				return p.row, nil
			}
			if p.rngErr != nil {
				p.end = p.rngErr // after the rows before it
				continue
			}
			p.nbytes = p.rngEnd
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		it, err := p.rr.Next(ctx)
		if err != nil {
			p.end = err
			continue
		}
		p.rng, p.base, p.rngEnd, p.rngErr = it.res, it.base, it.rg.End, it.err
		p.at, p.ri, p.ei = 0, 0, 0
	}
}

// Bytes is the number of bytes of the file read so far: the compressed bytes
// of an undivided file, the bytes of the ranges read otherwise.
func (p *prefetcher) Bytes() int64 {
	if p.fr != nil {
		return p.fr.Bytes()
	}
	return p.nbytes
}

// Close stops the decoding goroutines, waits for them and closes the file.
func (p *prefetcher) Close() {
	if p.rr != nil {
		p.rr.Close()
		return
	}
	close(p.done)
	p.wg.Wait()
	p.fr.Close()
}

// ownStrings copies the string payloads of row into arena and points the
// values at the copies. The arena may grow into a new array; the strings
// already made keep the old one alive, so none of them move.
func ownStrings(row []expr.Value, arena []byte) []byte {
	for j, v := range row {
		switch v.Type() {
		case expr.TypeString:
			if v.IsNull() {
				continue
			}
			var s string
			s, arena = arenaString(arena, v.Str())
			row[j] = expr.String(s)
		case expr.TypeStringArray:
			if v.IsNull() {
				continue
			}
			src := v.Elems()
			elems := make([]expr.Value, len(src))
			for k, e := range src {
				if e.Type() == expr.TypeString && !e.IsNull() {
					var s string
					s, arena = arenaString(arena, e.Str())
					e = expr.String(s)
				}
				elems[k] = e
			}
			row[j] = expr.Array(expr.TypeStringArray, elems)
		}
	}
	return arena
}

func arenaString(arena []byte, s string) (string, []byte) {
	if len(s) == 0 {
		return "", arena
	}
	if cap(arena)-len(arena) < len(s) {
		// A fresh array: strings in the old one must stay where they are.
		arena = make([]byte, 0, max(64<<10, len(s)))
	}
	start := len(arena)
	arena = append(arena, s...)
	return unsafe.String(&arena[start], len(s)), arena
}
