package msq

import (
	"context"
	"errors"
	"sync"
	"unsafe"

	"strata/expr"
	"strata/msq/input"
)

// prefetcher decodes the rows of one external file on a goroutine of its own,
// a batch at a time, so that parsing runs on one core while the worker's
// operators and output run on another. Rows come out in file order, parse
// errors in their place among them.
//
// A reader's values may alias its buffers until its next call: readers that
// can are asked to keep them (input.FileReader.KeepValues); for the others
// the decoding goroutine copies the string bytes of each row into an arena
// that belongs to the batch. A batch is reused only once the consumer asks
// for the one after it.
type prefetcher struct {
	full chan *rowBatch
	free chan *rowBatch
	done chan struct{}
	wg   sync.WaitGroup
	cur  *rowBatch
	next int
	end  error // io.EOF or the error that stopped reading
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

const (
	prefetchRows    = 512
	prefetchBatches = 4
)

func newPrefetcher(fr *input.FileReader, ncols int) *prefetcher {
	p := &prefetcher{
		full: make(chan *rowBatch, prefetchBatches),
		free: make(chan *rowBatch, prefetchBatches+1),
		done: make(chan struct{}),
	}
	for range prefetchBatches + 1 {
		p.free <- &rowBatch{vals: make([]expr.Value, prefetchRows*ncols), errs: make([]error, prefetchRows)}
	}
	own := !fr.KeepValues()
	p.wg.Add(1)
	go p.decode(fr, ncols, own)
	return p
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
	for p.cur == nil || p.next >= p.cur.n {
		if p.cur != nil {
			p.end = p.cur.end
			p.free <- p.cur
			p.cur = nil
		}
		if p.end != nil {
			return nil, p.end
		}
		if err := ctx.Err(); err != nil {
			return nil, err
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

// Close stops the decoding goroutine and waits for it, so that the file can
// be closed afterwards.
func (p *prefetcher) Close() {
	close(p.done)
	p.wg.Wait()
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
