package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"strata/protocol"
	"strata/querynode/query"
)

// Causes of a query context's end.
var (
	errCancelled = errors.New("query cancelled")
	errTimeout   = errors.New("query timed out")
	errShutdown  = errors.New("broker shutting down")
)

// Query runs a native query given as its JSON body and returns the query id
// (from the context, or generated) and the rendered JSON result. Errors are
// *Error, ready to be answered to the client.
func (b *Broker) Query(ctx context.Context, body []byte) (string, []byte, *Error) {
	id, out, _, qerr := b.QueryWithContext(ctx, body)
	return id, out, qerr
}

// QueryWithContext is Query, also returning the query's response context
// (what the answer lacks: uncovered intervals, missing segments).
func (b *Broker) QueryWithContext(ctx context.Context, body []byte) (id string, out []byte, rc *ResponseContext, qerr *Error) {
	q, err := parseQuery(body, b.cfg.Name)
	if err != nil {
		return NewUUID(), nil, nil, ErrorFrom(err, b.cfg.Name)
	}
	return b.QueryParsed(ctx, q, body)
}

// QueryParsed is QueryWithContext for a query its caller has already
// parsed: q must be what query.Parse makes of body. The SQL API hands the
// broker the native queries of a reused plan this way, since parsing the
// same JSON again was half of what a short SQL query cost beyond its
// native form. The broker only reads q (changes go to copies, as in
// executeJoin), so one parsed query may serve concurrent calls.
func (b *Broker) QueryParsed(ctx context.Context, q *query.Query, body []byte) (id string, out []byte, rc *ResponseContext, qerr *Error) {
	var err error
	start := time.Now()
	defer func() { b.observe(q, time.Since(start), qerr) }()
	f := factsOf(q)
	id = f.id
	if id == "" {
		id = NewUUID()
	}
	if qerr := authorize(ctx, q); qerr != nil {
		return id, nil, nil, qerr
	}
	var timeout time.Duration
	timeout, qerr = b.timeoutOf(f)
	if qerr != nil {
		return id, nil, nil, qerr
	}
	if b.slots != nil {
		select {
		case b.slots <- struct{}{}:
			defer func() { <-b.slots }()
		default:
			return id, nil, nil, Legacy(CodeCapacity, b.cfg.Name, "Total query capacity exceeded")
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer b.register(id, q.Tables(), cancel)()
	if timeout > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeoutCause(ctx, timeout, errTimeout)
		defer cancelT()
	}
	b.awaitView(ctx)
	if n := q.Context.MaxScatterGatherBytes; n > 0 {
		ctx = context.WithValue(ctx, scatterBytesKey{}, &scatterBytes{limit: n, queryID: id})
	}
	if q.Context.AsOf.Set {
		pq := &pastQuery{asOf: q.Context.AsOf}
		defer pq.release()
		ctx = context.WithValue(ctx, pastKeyCtx{}, pq)
	}
	c := b.completenessOf(q)
	out, err = b.execute(ctx, q, body, &subqueryRows{limit: b.maxSubqueryRows(q)}, c)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return id, nil, nil, b.failure(ctx, id, timeout, err)
	}
	if len(c.rc.MissingSegments) > 0 {
		b.log.Warn("query answered without segments no replica had (returnPartialResults)", "queryId", id, "segments", len(c.rc.MissingSegments))
	}
	return id, out, &c.rc, nil
}

// execute runs q (body is its JSON) and renders its result. Queries on
// tables are scattered to the historicals; inline and query data sources
// are evaluated on the broker (see subquery.go).
func (b *Broker) execute(ctx context.Context, q *nativeQuery, body []byte, rows *subqueryRows, c *completeness) ([]byte, error) {
	if joinToPrepare(q) {
		return b.executeJoin(ctx, q, body, rows, c) // join.go
	}
	if isSubqueryBased(q) {
		return b.executeOverTable(ctx, q, rows, c)
	}
	if pq := pastOf(ctx); pq != nil {
		return b.executePast(ctx, pq, q, body, c)
	}
	// With no segment to read the engine still renders the empty result:
	// [] for most queries, but one row of empty aggregates for a timeseries
	// or an ungrouped groupBy over all time, as Druid answers.
	f := factsOf(q)
	// A replicated sequence read behind earlier answers is waited for and
	// read again, within the query's catch-up budget (catchup.go).
	cu := b.newCatchUp(q)
	defer cu.release()
	rc := c.rc
	for {
		c.rc = rc
		changed := b.view.changes()
		units := b.view.resolve(f)
		reads := readPositions(units)
		if behind := b.view.shown.behind(reads, f); len(behind) > 0 && cu.wait(ctx, changed, behind) {
			continue
		}
		if err := b.checkCoverage(f, c); err != nil {
			return nil, err
		}
		var parts []*partial
		var final []byte
		var lost []lostSegment
		var err error
		fellBack := map[string]map[int32]int64{} // sequences read from another replica after a failure
		if len(units) > 0 {
			parts, final, lost, err = b.scatter(ctx, q, body, units, scatterOpts{finalize: true, fellBack: fellBack})
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		for seq, pos := range fellBack {
			r := reads[seq]
			r.pos = pos
			reads[seq] = r
		}
		behind := b.view.shown.behind(reads, f)
		if len(behind) > 0 && len(fellBack) > 0 && cu.wait(ctx, changed, behind) {
			continue
		}
		if err := b.settleLost(lost, c); err != nil {
			return nil, err
		}
		b.view.shown.record(time.Now(), reads)
		c.rc.RealtimeBehind = behind
		if len(behind) > 0 {
			b.log.Debug("query answered from a replica behind earlier answers (realtimeBehind)", "queryId", f.id, "sequences", len(behind), "records", behind[0].Records)
		}
		if final != nil {
			return final, nil
		}
		return b.merger.mergeAndRender(q, parts)
	}
}

// timeoutOf applies the server default and limit to the context timeout.
func (b *Broker) timeoutOf(f queryFacts) (time.Duration, *Error) {
	var d time.Duration
	switch {
	case f.timeoutMs < 0:
		d = b.cfg.DefaultTimeout
	case f.timeoutMs > 0:
		d = time.Duration(f.timeoutMs) * time.Millisecond
	}
	if max := b.cfg.MaxTimeout; max > 0 {
		// The server default yields to the limit (Druid applies
		// min(default, max)); only a timeout the query asks for is refused.
		if d == 0 || f.timeoutMs < 0 && d > max {
			d = max
		}
		if d > max {
			return 0, Legacy(CodeContextParse, b.cfg.Name, "Configured timeout = %d is more than enforced limit of %d.", d.Milliseconds(), max.Milliseconds())
		}
	}
	return d, nil
}

// failure turns an error into the client error, naming why the query's
// context ended when it did.
func (b *Broker) failure(ctx context.Context, id string, timeout time.Duration, err error) *Error {
	if ctx.Err() != nil {
		switch context.Cause(ctx) {
		case errTimeout:
			return Legacy(CodeTimeout, b.cfg.Name, "Query [%s] timed out after %d ms.", id, timeout.Milliseconds())
		case errShutdown:
			return Legacy(CodeInterrupted, b.cfg.Name, "Query [%s] was interrupted: the broker is shutting down.", id)
		default: // DELETE /svc/v2/{id}, or the client went away
			return Legacy(CodeCancelled, b.cfg.Name, "Query [%s] was cancelled.", id)
		}
	}
	return ErrorFrom(err, b.cfg.Name)
}

// reply is the outcome of one sub-query.
type reply struct {
	srv      *server
	units    []int
	part     *partial
	final    []byte // the final result, when the server finalized
	missing  map[string]bool
	replaced map[string][]protocol.SegmentRef // missing realtime ids → the published segments holding their rows
	err      error
}

// transportError marks a failure to talk to a server (connection refused
// or lost, 502/503): its segments are retried on another replica.
type transportError struct {
	srv *server
	err error
}

func (e *transportError) Error() string { return e.srv.host + ": " + e.err.Error() }

// scatter sends the query's units to their servers and collects the
// partial results, retrying the units of failed servers (or the segments a
// server no longer has) on the remaining replicas. When the first dispatch
// sends every unit to one server and opts.finalize is set (the broker merges
// nothing else), that server finalizes the result itself and scatter returns
// it as final. Units that a server reported missing and
// no remaining replica could read are returned as lost (the caller decides
// whether the query may answer without them); a unit whose every replica
// failed to answer at all fails the query.
func (b *Broker) scatter(ctx context.Context, q *nativeQuery, body []byte, units []unit, opts scatterOpts) (parts []*partial, final []byte, lost []lostSegment, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tried := make([]map[*server]bool, len(units))
	why := make([]string, len(units))   // the last failure per unit
	missing := make([]bool, len(units)) // a server reported the unit missing
	// Every segment the query reads, so that a realtime segment handed off
	// since the last poll is replaced only by published segments not read
	// already (from a historical that loaded them).
	reading := make(map[string]bool, len(units))
	for _, u := range units {
		reading[u.ref.ID] = true
	}
	load := map[*server]int{}
	down := map[*server]bool{} // servers that failed to answer (replicaFailover)
	replies := make(chan reply)
	inflight := 0
	defer func() { // let abandoned senders finish
		if inflight > 0 {
			go func(n int) {
				for range n {
					<-replies
				}
			}(inflight)
		}
	}()
	first := true
	dispatch := func(idx []int) error {
		groups := map[*server][]int{}
		var order []*server
		for _, i := range idx {
			if tried[i] == nil {
				tried[i] = map[*server]bool{}
			}
			var best *server
			for _, s := range units[i].servers {
				if !tried[i][s] && (best == nil || load[s] < load[best]) {
					best = s
				}
			}
			if best == nil {
				if !missing[i] && !opts.lostOnFailure {
					return b.unavailable(units[i], tried[i], why[i])
				}
				lost = append(lost, lostSegment{u: units[i], err: b.unavailable(units[i], tried[i], why[i])})
				continue
			}
			tried[i][best] = true
			load[best]++
			if groups[best] == nil {
				order = append(order, best)
			}
			groups[best] = append(groups[best], i)
		}
		finalize := opts.finalize && first && len(order) == 1
		first = false
		for _, s := range order {
			inflight++
			g := groups[s]
			refs := make([]protocol.SegmentRef, len(g)) // units may grow while the sub-query runs
			for k, i := range g {
				refs[k] = units[i].ref
			}
			go func() { replies <- b.send(ctx, q, body, s, refs, g, finalize) }()
		}
		return nil
	}
	all := make([]int, len(units))
	for i := range all {
		all[i] = i
	}
	if err := dispatch(all); err != nil {
		return nil, nil, nil, err
	}
	for inflight > 0 {
		r := <-replies
		inflight--
		var te *transportError
		switch {
		case r.err == nil && r.final != nil:
			return nil, r.final, nil, nil // the only server had every segment
		case r.err == nil:
			parts = append(parts, r.part)
			var again []int
			// A replica whose server no longer serves it is read elsewhere.
			gone := replicaGone(units, r)
			if len(gone) > 0 {
				_, added := replicaFailover(units, gone, r.srv, down)
				opts.fellBackOn(added)
				for _, u := range added {
					units = append(units, u)
					tried, why, missing = append(tried, nil), append(why, ""), append(missing, false)
					again = append(again, len(units)-1)
				}
			}
			for _, i := range r.units {
				id := units[i].ref.ID
				switch {
				case !r.missing[id] || slices.Contains(gone, i):
				case !units[i].realtime:
					why[i] = r.srv.host + " no longer serves it"
					missing[i] = true
					again = append(again, i)
				default: // published meanwhile: read what replaced it, once
					for _, ref := range r.replaced[id] {
						if reading[ref.ID] {
							continue
						}
						reading[ref.ID] = true
						units = append(units, unit{ref: ref, servers: []*server{r.srv}, realtime: true})
						tried, why, missing = append(tried, nil), append(why, ""), append(missing, false)
						again = append(again, len(units)-1)
					}
				}
			}
			if len(again) > 0 {
				if err := dispatch(again); err != nil {
					return nil, nil, nil, err
				}
			}
		case errors.As(r.err, &te) && ctx.Err() == nil:
			b.log.Warn("sub-query failed; retrying its segments on replicas", "server", r.srv.url, "segments", len(r.units), "error", te.err)
			b.metrics.Load().Retry(q.DataSource, len(r.units))
			for _, i := range r.units {
				why[i] = te.Error()
			}
			retry, added := replicaFailover(units, r.units, r.srv, down)
			opts.fellBackOn(added)
			for _, u := range added {
				units = append(units, u)
				tried, why, missing = append(tried, nil), append(why, ""), append(missing, false)
				retry = append(retry, len(units)-1)
			}
			if err := dispatch(retry); err != nil {
				return nil, nil, nil, err
			}
		default:
			return nil, nil, nil, r.err
		}
	}
	return parts, nil, lost, nil
}

// scatterOpts are what callers choose of scatter's behaviour.
type scatterOpts struct {
	// finalize lets a single server finalize the result: the broker merges
	// nothing else.
	finalize bool
	// lostOnFailure returns the units whose every server failed to answer as
	// lost, like those every server reported missing, instead of failing the
	// query: an asOf query reads them from deep storage.
	lostOnFailure bool
	// fellBack, when set, receives the position of each replicated
	// sequence read from another replica after its replica failed.
	fellBack map[string]map[int32]int64
}

func (o scatterOpts) fellBackOn(added []unit) {
	for _, u := range added {
		if o.fellBack != nil && u.seq != "" {
			o.fellBack[u.seq] = u.pos
		}
	}
}

// unavailable is the error of a unit no server could read.
func (b *Broker) unavailable(u unit, tried map[*server]bool, why string) *Error {
	var names []string
	for s := range tried {
		names = append(names, s.host)
	}
	if why == "" {
		why = "no server holds it"
	}
	return Legacy(CodeUnknown, b.cfg.Name, "segment %s could not be read: %s; no other replica is available (tried: %s)",
		u.ref.ID, why, strings.Join(names, ", "))
}

// viewWait bounds how long a query waits for the broker to know every data
// server, as Druid's broker waits for its server view at start-up; a query
// answered before would miss the segments of servers not heard from yet.
const viewWait = 10 * time.Second

// awaitView waits until every data server has been heard from once, or the
// wait or ctx ends (then the query runs over what is known).
func (b *Broker) awaitView(ctx context.Context) {
	if b.view.initialized() {
		return
	}
	deadline := time.Now().Add(viewWait)
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !b.view.initialized() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scatterBytes counts the bytes a query's sub-queries return against the
// query's maxScatterGatherBytes (a context value, shared by the sub-queries).
type scatterBytes struct {
	limit   int64
	used    atomic.Int64
	queryID string
}

type scatterBytesKey struct{}

// send runs one sub-query on s over refs (the units idx of the query).
func (b *Broker) send(ctx context.Context, q *nativeQuery, body []byte, s *server, refs []protocol.SegmentRef, idx []int, finalize bool) reply {
	r := reply{srv: s, units: idx}
	b.metrics.Load().SubQuery(s.host)
	sq := protocol.SubQuery{Query: json.RawMessage(bytes.TrimSpace(body)), Segments: refs, Finalize: finalize}
	if dl, ok := ctx.Deadline(); ok {
		sq.TimeoutMs = max(time.Until(dl).Milliseconds(), 1)
	}
	payload, err := json.Marshal(sq)
	if err != nil {
		r.err = err
		return r
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+protocol.QueryPath, bytes.NewReader(payload))
	if err != nil {
		r.err = err
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		r.err = b.transport(ctx, s, err)
		return r
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		r.err = b.transport(ctx, s, err)
		return r
	}
	if sg, ok := ctx.Value(scatterBytesKey{}).(*scatterBytes); ok && sg.used.Add(int64(len(data))) > sg.limit {
		r.err = Legacy(CodeResourceLimit, b.cfg.Name, "Query[%s] url[%s] max scatter-gather bytes limit reached.", sg.queryID, s.url+protocol.QueryPath)
		return r
	}
	switch {
	case resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable:
		r.err = &transportError{srv: s, err: fmt.Errorf("HTTP %d", resp.StatusCode)}
		return r
	case resp.StatusCode != http.StatusOK:
		r.err = ParseErrorBody(resp.StatusCode, data, s.host)
		return r
	case finalize && resp.Header.Get(protocol.FinalHeader) == "true":
		r.final = data
		return r
	}
	var res protocol.SubQueryResult
	if err := json.Unmarshal(data, &res); err != nil {
		r.err = Legacy(CodeUnknown, s.host, "bad sub-query response from %s: %v", s.host, err)
		return r
	}
	if r.part, err = b.merger.decode(q, res.Partial); err != nil {
		r.err = ErrorFrom(err, s.host)
		return r
	}
	if len(res.Missing) > 0 {
		r.missing = make(map[string]bool, len(res.Missing))
		for _, id := range res.Missing {
			r.missing[id] = true
		}
	}
	r.replaced = res.Replaced
	return r
}

// transport classifies a failed exchange: the query's own end is not the
// server's fault; anything else is.
func (b *Broker) transport(ctx context.Context, s *server, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &transportError{srv: s, err: err}
}
