package server

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"sync"
	"sync/atomic"

	"strata/auth"
	"strata/querynode/query"
	"strata/querynode/sqlplan"
)

// planCache keeps planned SQL statements for reuse by the same statement.
// Lexing, parsing and planning cost a statement 35-55 µs of CPU, which on a
// 0.5 ms query was most of what SQL cost beyond the same native query
// (make bench-query). An entry is used only while everything the plan was
// made from is unchanged: its key holds the SQL text, the request's context
// and parameters and the caller's identity; the broker's view (datasources,
// their columns and so their SQL types) must be the version it was planned
// with; and every DATASOURCE READ check planning made is made again. What
// planning read live is never cached: the results of IN (subquery)
// subqueries it ran, INFORMATION_SCHEMA, sys and lookup tables, and the
// clock (CURRENT_TIMESTAMP, CURRENT_DATE). Lookups the plan names are
// resolved when its native query runs, not in the plan.
type planCache struct {
	mu      sync.Mutex
	entries map[planKey]*cachedPlan
	hits    atomic.Int64 // plans reused (tests)
}

// Bounds on what is kept: at most maxCachedPlans statements, each at most
// maxCachedSQL bytes of SQL.
const (
	maxCachedPlans = 512
	maxCachedSQL   = 16 << 10
)

type planKey struct {
	sql, context, params, caller string
}

type cachedPlan struct {
	planned *sqlplan.Planned
	// id is the sqlQueryId the plan was made with, a UUID this server drew:
	// it occurs in the natives only where the statement's id goes.
	id      string
	version <-chan struct{} // the broker view's version it was planned from
	tables  []string        // the druid-schema tables planning looked up, in order
	// parsed are the natives as query.Parse makes them, handed to the
	// broker on reuse instead of being parsed again (nil: not kept, see
	// parseNatives).
	parsed []*query.Query
}

// statement is a planned SQL statement ready to run: its plan, and when
// the plan was reused, its natives already parsed (else nil).
type statement struct {
	*sqlplan.Planned
	parsed []*query.Query
}

// sqlPlan plans req.Query, or reuses its plan. generatedID is the
// sqlQueryId this server drew for the request (qctx holds it); a request
// that names its own id is planned afresh, as its id might occur anywhere
// in the plan.
func (s *Server) sqlPlan(ctx context.Context, req sqlRequest, qctx map[string]any, generatedID string, run func(context.Context, []byte) ([]byte, error)) (statement, error) {
	cat := &sqlCatalog{s: s}
	key, cacheable := planKeyOf(ctx, req, generatedID)
	if !cacheable {
		planned, err := sqlplan.Plan(ctx, req.Query, sqlplan.Request{Context: qctx, Parameters: req.Parameters, Run: run}, cat)
		return statement{Planned: planned}, err
	}
	version := s.opts.Broker.ViewVersion() // before planning: a change during it makes the entry stale
	if e := s.sqlPlans.get(key, version); e != nil {
		for _, t := range e.tables {
			if err := checkTableRead(ctx, t); err != nil {
				return statement{}, err
			}
		}
		s.sqlPlans.hits.Add(1)
		return e.withID(generatedID), nil
	}
	rec := &recordingCatalog{sqlCatalog: cat}
	var ranSubquery atomic.Bool
	recRun := func(ctx context.Context, native []byte) ([]byte, error) {
		ranSubquery.Store(true)
		return run(ctx, native)
	}
	planned, err := sqlplan.Plan(ctx, req.Query, sqlplan.Request{Context: qctx, Parameters: req.Parameters, Run: recRun}, rec)
	if err != nil {
		return statement{}, err
	}
	if tables, live := rec.result(); !live && !ranSubquery.Load() && !planned.ReadsClock && !planned.Explain {
		s.sqlPlans.put(key, &cachedPlan{planned: planned, id: generatedID, version: version, tables: tables, parsed: parseNatives(planned.Natives, generatedID)})
	}
	return statement{Planned: planned}, nil
}

// parseNatives parses a plan's natives for reuse, or returns nil when a
// reused run could not be handed them: a native the broker would refuse
// (its error is the broker's to give, on each run), or one whose statement
// id (a server-drawn UUID) occurs anywhere but as a value of its top-level
// context, the only place withID puts the new id into a parsed query.
func parseNatives(natives []json.RawMessage, id string) []*query.Query {
	parsed := make([]*query.Query, len(natives))
	for i, n := range natives {
		q, err := query.Parse(n)
		if err != nil {
			return nil
		}
		inContext := 0
		for _, v := range q.Context.Raw {
			if v == id {
				inContext++
			}
		}
		if bytes.Count(n, []byte(id)) != inContext {
			return nil
		}
		parsed[i] = q
	}
	return parsed
}

// planKeyOf is req's cache key, and whether it may be cached at all.
func planKeyOf(ctx context.Context, req sqlRequest, generatedID string) (planKey, bool) {
	if generatedID == "" || len(req.Query) > maxCachedSQL {
		return planKey{}, false
	}
	// Most statements have neither context nor parameters: their keys
	// skip two marshals (an absent context plans as an empty one does).
	var qctx, params []byte
	var err error
	if len(req.Context) > 0 {
		if qctx, err = json.Marshal(req.Context); err != nil { // map keys sorted: equal contexts, equal keys
			return planKey{}, false
		}
	}
	if len(req.Parameters) > 0 {
		if params, err = json.Marshal(req.Parameters); err != nil {
			return planKey{}, false
		}
	}
	caller := ""
	if id := auth.IdentityFrom(ctx); id != nil {
		caller = id.Authenticator + "\x00" + id.Name
		if id.Internal {
			caller += "\x00internal"
		}
	}
	return planKey{sql: req.Query, context: string(qctx), params: string(params), caller: caller}, true
}

func (c *planCache) get(k planKey, version <-chan struct{}) *cachedPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[k]
	if e == nil {
		return nil
	}
	if e.version != version {
		delete(c.entries, k)
		return nil
	}
	return e
}

func (c *planCache) put(k planKey, e *cachedPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[planKey]*cachedPlan{}
	}
	if _, ok := c.entries[k]; !ok && len(c.entries) >= maxCachedPlans {
		for old := range c.entries { // any one: statements are reused or not
			delete(c.entries, old)
			break
		}
	}
	c.entries[k] = e
}

// withID is the cached plan for the statement whose sqlQueryId is id.
func (e *cachedPlan) withID(id string) statement {
	p := *e.planned // RowsOf only reads the rest
	p.Natives = make([]json.RawMessage, len(e.planned.Natives))
	for i, n := range e.planned.Natives {
		p.Natives[i] = bytes.ReplaceAll(n, []byte(e.id), []byte(id))
	}
	p.Native = p.Natives[0]
	p.Context = maps.Clone(e.planned.Context)
	for k, v := range p.Context {
		if v == e.id {
			p.Context[k] = id
		}
	}
	p.Resources = append([]string(nil), e.planned.Resources...)
	st := statement{Planned: &p}
	if e.parsed != nil {
		st.parsed = make([]*query.Query, len(e.parsed))
		for i, q := range e.parsed {
			st.parsed[i] = queryWithID(q, e.id, id)
		}
	}
	return st
}

// queryWithID is q with the context values that were old (the statement
// id it was planned with) now id. The rest is shared with q: the broker
// only reads a query.
func queryWithID(q *query.Query, old, id string) *query.Query {
	c := *q
	if c.Context.QueryID == old {
		c.Context.QueryID = id
	}
	c.Context.Raw = maps.Clone(q.Context.Raw)
	for k, v := range c.Context.Raw {
		if v == old {
			c.Context.Raw[k] = id
		}
	}
	return &c
}

// recordingCatalog is the SQL catalog, noting what planning looked up.
type recordingCatalog struct {
	*sqlCatalog
	mu     sync.Mutex
	tables []string // druid-schema tables, in the order asked
	live   bool     // a table of another schema (INFORMATION_SCHEMA, sys, lookup)
}

func (c *recordingCatalog) Table(ctx context.Context, schema, name string) (*sqlplan.Table, error) {
	c.mu.Lock()
	if schema == "" || schema == "druid" {
		c.tables = append(c.tables, name)
	} else {
		c.live = true
	}
	c.mu.Unlock()
	return c.sqlCatalog.Table(ctx, schema, name)
}

func (c *recordingCatalog) result() ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables, c.live
}

func (c *planCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
