package msq

import (
	"context"
	"io"
	"runtime"
	"sync"

	"strata/ingest/input"
)

// rangeBytes is the size of the byte ranges of a file decoded in parallel
// (a variable for tests).
var rangeBytes int64 = 1 << 20

// rangeRunner decodes the byte ranges of one file (input.Ranges) on several
// goroutines, each range into a result of type R, and hands the results back
// in file order.
//
// Ranges begin at line starts, which need not be record starts (a JSON
// object may span lines). A range's result is used only if the reader of the
// range before stopped exactly where the range's first record begins.
// Otherwise the results from there on are dropped and the rest of the file
// is decoded by a single goroutine, each range from where the reader of the
// range before stopped ("chained"), which is what a single reader of the
// whole file does.
type rangeRunner[R any] struct {
	ranges  []input.Range
	owner   []int // range → decoder
	decs    []*rangeDecoder[R]
	work    func() rangeWork[R]
	newRes  func() *R
	done    chan struct{}
	wg      sync.WaitGroup
	chained bool
	next    int   // the range handed out next
	stop    int64 // where the reader of the range before stopped
	base    int64 // records of the ranges before
	last    *rangeOut[R]
}

// rangeWork decodes one range into res; each decoder has its own.
type rangeWork[R any] func(rg input.Range, res *R) rangeSpan

// rangeSpan tells where a range's reader began and stopped.
type rangeSpan struct {
	first, stop int64 // file offsets of the first record and of the first one not read; -1 when unknown
	records     int64 // records read, parse errors included
	err         error // the error that ended the range early, nil when it was read to its end
}

type rangeOut[R any] struct {
	res  *R
	rg   input.Range
	span rangeSpan
	dec  *rangeDecoder[R]
}

// rangeDecoder is one goroutine with its own results: a decoder never waits
// for results that another decoder's output holds.
type rangeDecoder[R any] struct {
	out  chan *rangeOut[R]
	free chan *R
	made int
}

// rangeResults is how many results a decoder may have ahead.
const rangeResults = 3

// rangeItem is a result handed out: the result res of range rg, the number
// of records before it in the file, and the error that ended it early.
type rangeItem[R any] struct {
	res  *R
	rg   input.Range
	base int64
	err  error
}

// newRangeRunner starts decoding ranges with one decoder per core; work
// makes a decoder's decoding function, newRes a fresh result.
func newRangeRunner[R any](ranges []input.Range, work func() rangeWork[R], newRes func() *R) *rangeRunner[R] {
	r := &rangeRunner[R]{ranges: ranges, work: work, newRes: newRes, owner: make([]int, len(ranges))}
	n := min(runtime.GOMAXPROCS(0), len(ranges))
	for i := range ranges {
		r.owner[i] = i % n
	}
	r.start(n)
	return r
}

// start runs n decoders on the ranges from r.next on.
func (r *rangeRunner[R]) start(n int) {
	r.done = make(chan struct{})
	r.decs = make([]*rangeDecoder[R], n)
	for i := range r.decs {
		d := &rangeDecoder[R]{out: make(chan *rangeOut[R], rangeResults), free: make(chan *R, rangeResults)}
		r.decs[i] = d
		var mine []int
		for j := r.next; j < len(r.ranges); j++ {
			if r.owner[j] == i {
				mine = append(mine, j)
			}
		}
		r.wg.Add(1)
		go r.decode(d, mine)
	}
}

func (r *rangeRunner[R]) decode(d *rangeDecoder[R], mine []int) {
	defer r.wg.Done()
	work := r.work()
	var stop int64 // chained: where the reader of the range before stopped
	for k, j := range mine {
		var res *R
		select {
		case res = <-d.free:
		default:
			if d.made < rangeResults {
				d.made++
				res = r.newRes()
			} else {
				select {
				case res = <-d.free:
				case <-r.done:
					return
				}
			}
		}
		rg := r.ranges[j]
		if r.chained && k > 0 {
			rg.Start = stop
		}
		span := work(rg, res)
		select {
		case d.out <- &rangeOut[R]{res: res, rg: rg, span: span, dec: d}:
		case <-r.done:
			return
		}
		if span.err != nil {
			return
		}
		stop = span.stop
	}
}

// Next returns the result of the next range, valid until the following
// call, or io.EOF after the last one.
func (r *rangeRunner[R]) Next(ctx context.Context) (rangeItem[R], error) {
	if r.last != nil {
		r.last.dec.free <- r.last.res
		r.last = nil
	}
	for {
		if r.next == len(r.ranges) {
			return rangeItem[R]{}, io.EOF
		}
		var o *rangeOut[R]
		select {
		case o = <-r.decs[r.owner[r.next]].out:
		case <-ctx.Done():
			return rangeItem[R]{}, ctx.Err()
		}
		if r.next > 0 && o.span.first >= 0 && o.span.first != r.stop {
			// The range began inside a record of the one before.
			r.restart()
			continue
		}
		r.last = o
		it := rangeItem[R]{res: o.res, rg: o.rg, base: r.base, err: o.span.err}
		r.stop, r.base = o.span.stop, r.base+o.span.records
		r.next++
		return it, nil
	}
}

// restart stops the decoders and decodes the ranges from r.next on with
// one goroutine, chained, the first from where the last range handed out
// stopped.
func (r *rangeRunner[R]) restart() {
	close(r.done)
	r.wg.Wait()
	r.ranges[r.next].Start = r.stop
	for j := r.next; j < len(r.ranges); j++ {
		r.owner[j] = 0
	}
	r.chained = true
	r.start(1)
}

// Close stops the decoders and waits for them.
func (r *rangeRunner[R]) Close() {
	close(r.done)
	r.wg.Wait()
}

// rangeReader opens the reader of one range of a file, reading into buf
// (keep: values stay valid until the buffer is reused).
func rangeReader(ctx context.Context, src fileSource, rg input.Range, buf []byte, keep bool) (*input.FileReader, error) {
	fr, err := input.OpenRange(ctx, src.split, src.format, src.cols, src.sys, rg)
	if err != nil {
		return nil, err
	}
	if keep {
		fr.KeepValues()
	}
	fr.UseBuffer(buf)
	return fr, nil
}

// spanOf reads the span of a finished range reader.
func spanOf(fr *input.FileReader, err error) rangeSpan {
	s := rangeSpan{first: -1, stop: -1, records: fr.Records(), err: err}
	if first, stop, ok := fr.Span(); ok {
		s.first, s.stop = first, stop
	} else if first, ok := fr.First(); ok {
		s.first = first
	}
	return s
}

// fileSource is what decoders need to open ranges of a file.
type fileSource struct {
	split  input.Split
	format input.Format
	cols   []input.Column
	sys    []string
}

// fileRanges divides a split for parallel decoding; nil when it cannot be
// divided or there is a single core. Ranges are smaller for wide rows, so
// that a range's rows stay small in memory even when its records are tiny
// (a record of nulls takes a byte per column).
func fileRanges(ctx context.Context, src fileSource) ([]input.Range, error) {
	if runtime.GOMAXPROCS(0) < 2 {
		return nil, nil
	}
	return input.Ranges(ctx, src.split, src.format, rangeSize(len(src.cols)))
}

func rangeSize(ncols int) int64 {
	return max(rangeBytes/int64(max(1, (ncols+15)/16)), 1)
}
