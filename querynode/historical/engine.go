package historical

// Every call into the query engine (packages querynode/query and
// querynode/engine) is in this file, so a change of the engine's API is a
// one-file fix.

import (
	"context"
	"encoding/json"

	"strata/interval"
	"strata/querynode/engine"
	"strata/querynode/query"
	"strata/storage/segment"
)

// nativeQuery is a parsed native query.
type nativeQuery = query.Query

// parseQuery parses a native query body (errors are *query.Error with kind
// InvalidInput or Unsupported).
func parseQuery(body []byte) (*nativeQuery, error) { return query.Parse(body) }

// queryEngine runs sub-queries over loaded segments.
type queryEngine struct {
	e *engine.Engine
}

func newQueryEngine(parallelism int) *queryEngine {
	return &queryEngine{e: engine.New(engine.Options{Parallelism: parallelism})}
}

// engineSegment is the engine's handle of a loaded segment; it carries the
// per-segment caches (dictionaries) shared by all queries.
type engineSegment = engine.Segment

func newEngineSegment(id string, data *segment.Segment) *engineSegment {
	return engine.NewSegment(id, data)
}

// readSpec is one segment to read, with the timeline piece it contributes.
type readSpec struct {
	seg  *engineSegment
	clip interval.Interval
}

// run executes q over the segments and returns the merged partial as JSON,
// or with final the query's final result, made exactly as a broker makes it
// from a single partial (merge, then finalize). A piece that covers everything the query intervals select from the
// segment reuses the shared handle; a narrower piece (a partly
// overshadowed segment) gets a clipped handle of its own.
func (qe *queryEngine) run(ctx context.Context, q *nativeQuery, specs []readSpec, final bool, timer segmentTimer) (json.RawMessage, error) {
	segs := make([]*engine.Segment, 0, len(specs))
	for _, sp := range specs {
		s := sp.seg
		if needsClip(q.Intervals, s.Data.Interval(), sp.clip) {
			c := engine.NewSegment(s.ID, s.Data)
			c.Clip = sp.clip
			s = c
		}
		segs = append(segs, s)
	}
	p, err := qe.e.RunTimed(ctx, q, segs, timer)
	if err != nil {
		return nil, err
	}
	if final {
		if p, err = qe.e.Merge(q, []*engine.Partial{p}); err != nil {
			return nil, err
		}
		return qe.e.Finalize(q, p)
	}
	return json.Marshal(p)
}

// segmentTimer is told of each segment a sub-query reads (metrics.go).
type segmentTimer = engine.SegmentTimer

// needsClip reports whether reading the segment under the query intervals
// would include rows outside clip.
func needsClip(qivs []interval.Interval, segIv segment.Interval, clip interval.Interval) bool {
	siv := interval.Interval{Start: segIv.Start, End: segIv.End}
	for _, qi := range qivs {
		if x, ok := qi.Intersect(siv); ok && !clip.Contains(x) {
			return true
		}
	}
	return false
}

// corruptError is the engine's error for a query that met damaged segment
// files: the segments, by id.
type corruptError = engine.CorruptError

// queryError classifies an engine failure for the HTTP layer.
func queryError(err error) *query.Error { return query.AsError(err) }

// cancelledError and timeoutError are what a sub-query reports when its
// context ends.
func cancelledError(msg string) error { return query.Errorf(query.Cancelled, "%s", msg) }
func timeoutError(msg string) error   { return query.Errorf(query.Timeout, "%s", msg) }
