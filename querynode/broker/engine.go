package broker

// Every call into the query engine (packages querynode/query and
// querynode/engine) is in this file, so a change of the engine's API is a
// one-file fix.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"strata/interval"
	"strata/querynode/engine"
	"strata/querynode/query"
	"strata/storage/segment"
)

// nativeQuery is a parsed native query.
type nativeQuery = query.Query

// parseQuery parses a native query body. Bodies that are not JSON fail
// with the legacy "Json parse failed" code, as Druid's query endpoint does.
func parseQuery(body []byte, host string) (*nativeQuery, error) {
	if t := bytes.TrimSpace(body); len(t) > 0 && !json.Valid(t) {
		var v any
		err := json.Unmarshal(t, &v)
		return nil, Legacy(CodeJSONParse, host, "%v", err)
	}
	q, err := query.Parse(body)
	if err != nil {
		return nil, ErrorFrom(err, host)
	}
	return q, nil
}

// queryFacts are the members of a parsed query the broker plans with.
type queryFacts struct {
	id          string
	timeoutMs   int64 // -1: server default, 0: none
	dataSources []string
	intervals   []interval.Interval
	specific    []specificSegment // {"type":"segments"} intervals
}

type specificSegment struct {
	interval  interval.Interval
	version   string
	partition int32
}

func factsOf(q *nativeQuery) queryFacts {
	f := queryFacts{id: q.Context.QueryID, timeoutMs: q.Context.Timeout, dataSources: q.DataSources, intervals: q.Intervals}
	if f.timeoutMs < 0 {
		f.timeoutMs = -1
	}
	for _, s := range q.Segments {
		f.specific = append(f.specific, specificSegment{interval: s.Interval, version: s.Version, partition: int32(s.Partition)})
	}
	return f
}

// condense sorts intervals and merges overlapping and abutting ones.
func condense(ivs []interval.Interval) []interval.Interval { return query.Condense(ivs) }

// ErrorFrom classifies any error of the query path as a client error.
func ErrorFrom(err error, host string) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	qe := query.AsError(err)
	switch qe.Kind {
	case query.InvalidInput:
		// Druid raises these two as legacy bad-query exceptions.
		for _, code := range []string{CodeJSONParse, CodeContextParse} {
			if strings.HasPrefix(qe.Message, code) {
				return Legacy(code, host, "%s", strings.TrimLeft(strings.TrimPrefix(qe.Message, code), ": "))
			}
		}
		return InvalidInput("%s", qe.Message)
	case query.ResourceLimit:
		return Legacy(CodeResourceLimit, host, "%s", qe.Message)
	case query.Timeout:
		return Legacy(CodeTimeout, host, "%s", qe.Message)
	case query.Cancelled:
		return Legacy(CodeCancelled, host, "%s", qe.Message)
	case query.Unsupported:
		return Legacy(CodeUnsupported, host, "%s", qe.Message)
	}
	return Legacy(CodeUnknown, host, "%s", qe.Message)
}

// partial is a data server's partial result, decoded and bound to its query.
type partial = engine.Partial

// merger merges partial results and renders the final JSON.
type merger struct {
	e *engine.Engine
}

func newMerger() *merger { return &merger{e: engine.New(engine.Options{})} }

func (m *merger) decode(q *nativeQuery, raw json.RawMessage) (*partial, error) {
	var p engine.Partial
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, query.Errorf(query.Internal, "cannot decode a partial result: %v", err)
	}
	if err := p.Attach(q); err != nil {
		return nil, err
	}
	return &p, nil
}

func (m *merger) mergeAndRender(q *nativeQuery, parts []*partial) ([]byte, error) {
	p, err := m.e.Merge(q, parts)
	if err != nil {
		return nil, err
	}
	return m.e.Finalize(q, p)
}

// localRead is a segment file the broker reads itself (an asOf query's
// segment that no data server holds), with the timeline piece it
// contributes.
type localRead struct {
	id   string
	data *segment.Segment
	clip interval.Interval
}

// runLocal runs q over segment files on the broker and returns the partial
// result, as a historical's sub-query computes it: a segment whose piece is
// narrower than what the query intervals select from it is clipped.
func (m *merger) runLocal(ctx context.Context, q *nativeQuery, reads []localRead) (*partial, error) {
	segs := make([]*engine.Segment, len(reads))
	for i, r := range reads {
		s := engine.NewSegment(r.id, r.data)
		siv := interval.Interval{Start: r.data.Interval().Start, End: r.data.Interval().End}
		for _, qi := range q.Intervals {
			if x, ok := qi.Intersect(siv); ok && !r.clip.Contains(x) {
				s.Clip = r.clip
				break
			}
		}
		segs[i] = s
	}
	return m.e.Run(ctx, q, segs)
}

// Inline and query data sources (subquery.go).

// table is a table of rows an outer query reads: an inline data source or
// a subquery's result.
type table = query.InlineTable

// isSubqueryBased reports whether q reads an inline or query data source.
func isSubqueryBased(q *nativeQuery) bool { return q.IsSubqueryBased() }

// innerQuery returns the inner query of a query data source and its JSON
// (nil when q reads an inline data source).
func innerQuery(q *nativeQuery) (*nativeQuery, []byte) { return q.SubQuery, q.SubQueryJSON }

// inlineTable returns the rows of an inline data source (nil otherwise).
func inlineTable(q *nativeQuery) *table { return q.Inline }

// contextMaxSubqueryRows is the maxSubqueryRows of the query context.
func contextMaxSubqueryRows(q *nativeQuery) (int64, bool) {
	if p := q.Context.MaxSubqueryRows; p != nil {
		return *p, true
	}
	return 0, false
}

func isGroupBy(q *nativeQuery) bool { return q.Type == query.GroupBy }

// resultTable reads a rendered result as the table an outer query reads.
func resultTable(q *nativeQuery, out []byte) (*table, error) { return engine.ResultTable(q, out) }

// runOnTable runs q with the engine over a table materialized as a
// temporary in-memory segment, and renders the result.
func (m *merger) runOnTable(ctx context.Context, q *nativeQuery, t *table) ([]byte, error) {
	s, err := engine.TableSegment(t)
	if err != nil {
		return nil, err
	}
	var segs []*engine.Segment
	if s != nil {
		segs = append(segs, s)
	}
	q = engine.OverTable(q, t)
	p, err := m.e.Run(ctx, q, segs)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.e.Finalize(q, p)
}

// resourceLimit is a "Resource limit exceeded" error (400).
func resourceLimit(format string, args ...any) error {
	return query.Errorf(query.ResourceLimit, format, args...)
}
