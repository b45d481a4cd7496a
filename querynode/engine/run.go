package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"strata/querynode/query"
	"strata/storage/segment"
)

// Options configure an Engine.
type Options struct {
	// DefaultTimeout applies when the query context has no timeout
	// (Druid's default is 300 s). Zero means 300 s.
	DefaultTimeout time.Duration
	// MaxGroupByBytes bounds the estimated memory of groupBy grouping
	// state; the context key maxMergingDictionarySize overrides it. Zero
	// means 1 GiB.
	MaxGroupByBytes int64
	// Parallelism is the number of segments processed at once; zero means
	// GOMAXPROCS.
	Parallelism int
}

// Engine runs queries. It is safe for concurrent use.
type Engine struct {
	opts Options
}

// New returns an Engine.
func New(opts Options) *Engine {
	if opts.DefaultTimeout == 0 {
		opts.DefaultTimeout = 300 * time.Second
	}
	if opts.MaxGroupByBytes == 0 {
		opts.MaxGroupByBytes = 1 << 30
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	return &Engine{opts: opts}
}

// WithTimeout derives the context a query runs under from its context
// "timeout" (0 = none, absent = the engine default).
func (e *Engine) WithTimeout(ctx context.Context, q *query.Query) (context.Context, context.CancelFunc) {
	switch t := q.Context.Timeout; {
	case t == 0:
		return context.WithCancel(ctx)
	case t > 0:
		return context.WithTimeout(ctx, time.Duration(t)*time.Millisecond)
	}
	return context.WithTimeout(ctx, e.opts.DefaultTimeout)
}

// Execute runs q over the segments and renders the result, applying the
// query's timeout.
func (e *Engine) Execute(ctx context.Context, q *query.Query, segs []*Segment) ([]byte, error) {
	ctx, cancel := e.WithTimeout(ctx, q)
	defer cancel()
	p, err := e.Run(ctx, q, segs)
	if err != nil {
		return nil, err
	}
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return e.Finalize(q, p)
}

// runSegmentSafely is RunSegment on a worker goroutine: a panic there would
// end the whole process, so it becomes the query's error instead.
func (e *Engine) runSegmentSafely(ctx context.Context, q *query.Query, seg *Segment) (p *Partial, err error) {
	defer recoverInto(&err)
	if q.HasJoins() {
		return e.runJoinedSegment(ctx, q, seg)
	}
	return e.RunSegment(ctx, q, seg)
}

// runSegmentTimed is runSegmentSafely telling timer (when not nil) how long
// the segment waited since queued and how long it took.
func (e *Engine) runSegmentTimed(ctx context.Context, q *query.Query, seg *Segment, timer SegmentTimer, queued time.Time) (*Partial, error) {
	if timer == nil {
		return e.runSegmentSafely(ctx, q, seg)
	}
	start := time.Now()
	p, err := e.runSegmentSafely(ctx, q, seg)
	timer.Segment(start.Sub(queued), time.Since(start))
	return p, err
}

// recoverInto turns a panic of the goroutine into *err. It is deferred by
// every goroutine the engine starts.
func recoverInto(err *error) {
	if v := recover(); v != nil {
		*err = query.Errorf(query.Internal, "internal error while running the query: %v", v)
	}
}

// Run executes q on every segment (in parallel) and merges the partials.
func (e *Engine) Run(ctx context.Context, q *query.Query, segs []*Segment) (*Partial, error) {
	return e.RunTimed(ctx, q, segs, nil)
}

// SegmentTimer is told of each segment a query reads: how long it waited
// for one of the Parallelism workers since the query started, and how long
// reading it took (a data server's query/wait/time and query/segment/time).
type SegmentTimer interface {
	Segment(wait, took time.Duration)
}

// RunTimed is Run telling timer (when not nil) of every segment read.
func (e *Engine) RunTimed(ctx context.Context, q *query.Query, segs []*Segment, timer SegmentTimer) (*Partial, error) {
	if q.JoinsKeepRight() {
		return e.runKeepingRight(ctx, q, segs, timer) // join.go
	}
	if q.HasJoins() && rewriteJoins {
		// A join on unique keys runs as lookups, without joined rows
		// (joinlookup.go).
		if lq, ok, err := joinAsLookups(q); err != nil {
			return nil, err
		} else if ok {
			q = lq
		}
	}
	parts := make([]*Partial, len(segs))
	errs := make([]error, len(segs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	next := make(chan int)
	var queued time.Time
	if timer != nil {
		queued = time.Now()
	}
	for range min(e.opts.Parallelism, len(segs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				parts[i], errs[i] = e.runSegmentTimed(ctx, q, segs[i], timer, queued)
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	for i := range segs {
		next <- i
	}
	close(next)
	wg.Wait()
	var damaged *CorruptError
	for _, err := range errs {
		if ce := (*CorruptError)(nil); errors.As(err, &ce) {
			if damaged == nil {
				damaged = &CorruptError{}
			}
			damaged.Segments = append(damaged.Segments, ce.Segments...)
			damaged.Errs = append(damaged.Errs, ce.Errs...)
		}
	}
	if damaged != nil {
		return nil, damaged
	}
	for _, err := range errs {
		if err != nil && query.AsError(err).Kind != query.Cancelled {
			return nil, query.AsError(err)
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, query.AsError(err)
		}
	}
	// A segment whose join left no row has no partial.
	return e.Merge(q, slices.DeleteFunc(parts, func(p *Partial) bool { return p == nil }))
}

// RunSegment executes q on one segment, returning its partial result.
func (e *Engine) RunSegment(ctx context.Context, q *query.Query, s *Segment) (p *Partial, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if qt, ok := queryTypeOf(q.Type); ok {
		p, err = qt.runSegment(e, newSegQuery(ctx, q, s))
	} else {
		err = query.Invalidf("unknown query type %q", q.Type)
	}
	if errors.Is(err, segment.ErrCorrupt) {
		return nil, &CorruptError{Segments: []string{s.ID}, Errs: []error{err}}
	}
	if err != nil {
		return nil, query.AsError(err)
	}
	return p, nil
}

// CorruptError is the error of a query that read damaged bytes of segment
// files (a checksum or structure check failed): the segments, and what was
// found in each. It is kept apart from other failures so that a data server
// can drop its copies and let the query be answered from replicas; the
// damaged bytes were not used.
type CorruptError struct {
	Segments []string
	Errs     []error
}

func (e *CorruptError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("damaged segment file (%s): %s", strings.Join(e.Segments, ", "), strings.Join(msgs, "; "))
}

// Unwrap lets errors.Is find segment.ErrCorrupt.
func (e *CorruptError) Unwrap() []error { return e.Errs }
