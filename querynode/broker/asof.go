package broker

// Time travel: a query whose context has asOf (a Raft log index or an ISO
// time) reads the segment timeline as it was at that moment. The broker asks
// the control-plane leader for the segments that were used then
// (PastTimelinePath, rebuilt from the Raft history), builds their timeline
// with the same visibility rules as the live one, and reads each visible
// segment where a data server serves exactly that segment id; the others
// (old versions no historical holds any more) it reads itself from deep
// storage, through a bounded on-disk cache (package segcache).
//
// The broker reads them itself rather than asking a historical to: a
// historical's cache is the coordinator's assignment and everything in it is
// announced, so an old version loaded there would enter every broker's live
// view; the broker already runs the engine over data it holds (subqueries),
// and the sub-query protocol stays as it is.
//
// One query reads one moment: the first timeline it fetches pins the log
// index, and its subqueries and every datasource it reads use that index, so
// an ISO time that resolves differently halfway cannot mix two states.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"strata/interval"
	"strata/protocol"
	"strata/querynode/query"
	"strata/querynode/segcache"
	"strata/segmeta"
)

// PastTimelines reads the used segments of datasources at a past moment
// from the control plane.
type PastTimelines interface {
	UsedAt(ctx context.Context, asOf query.AsOf, dataSources []string) (*protocol.PastTimeline, error)
}

// HTTPPastTimelines asks the control nodes at URLs (any of them: followers
// redirect to the leader) over PastTimelinePath.
type HTTPPastTimelines struct {
	URLs   []string
	Client *http.Client
}

// UsedAt implements PastTimelines. A moment the control plane refuses (400)
// is the query's invalid input; a control plane that cannot be reached or
// answers otherwise makes the query unavailable.
func (h *HTTPPastTimelines) UsedAt(ctx context.Context, asOf query.AsOf, dataSources []string) (*protocol.PastTimeline, error) {
	v := url.Values{"asOf": {asOf.String()}, "dataSource": dataSources}
	var errs []string
	for _, base := range h.URLs {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+protocol.PastTimelinePath+"?"+v.Encode(), nil)
		if err != nil {
			return nil, err
		}
		resp, err := h.Client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			errs = append(errs, err.Error())
			continue
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
		resp.Body.Close()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		switch resp.StatusCode {
		case http.StatusOK:
			var pt protocol.PastTimeline
			if err := json.Unmarshal(body, &pt); err != nil {
				return nil, fmt.Errorf("bad timeline from %s: %w", base, err)
			}
			return &pt, nil
		case http.StatusBadRequest:
			var e struct {
				Error string `json:"error"`
			}
			msg := string(body)
			if json.Unmarshal(body, &e) == nil && e.Error != "" {
				msg = e.Error
			}
			return nil, InvalidInput("asOf %s: %s", asOf, msg)
		}
		errs = append(errs, fmt.Sprintf("%s: HTTP %d: %.200s", base, resp.StatusCode, body))
	}
	if len(errs) == 0 {
		errs = append(errs, "no control node configured (svc.broker.coordinatorUrls)")
	}
	return nil, pastUnavailable(asOf, strings.Join(errs, "; "))
}

// pastUnavailable is a 503: the query is valid, but the timeline of its
// moment cannot be read now.
func pastUnavailable(asOf query.AsOf, why string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: codeStructured, ErrorCode: "asOfUnavailable",
		Persona: personaOperator, Category: categoryUnavailable,
		Message: fmt.Sprintf("cannot read the segment timeline as of %s from the control plane: %s", asOf, why)}
}

// pastTimelines caches the timelines of datasources at log indexes (they
// never change) and the resolutions of stable times to indexes.
type pastTimelines struct {
	mu    sync.Mutex
	times map[int64]uint64
	tls   map[pastKey]*segmeta.Timeline // an empty timeline: no segment then
	order []pastKey                     // insertion order, to bound tls
}

type pastKey struct {
	index uint64
	ds    string
}

// maxPastTimelines bounds the cached timelines; the oldest go first.
const maxPastTimelines = 256

func (p *pastTimelines) get(index uint64, ds string) *segmeta.Timeline {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tls[pastKey{index, ds}]
}

func (p *pastTimelines) put(index uint64, ds string, tl *segmeta.Timeline) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tls == nil {
		p.tls, p.times = map[pastKey]*segmeta.Timeline{}, map[int64]uint64{}
	}
	k := pastKey{index, ds}
	if _, ok := p.tls[k]; ok {
		return
	}
	p.tls[k] = tl
	p.order = append(p.order, k)
	for len(p.order) > maxPastTimelines {
		delete(p.tls, p.order[0])
		p.order = p.order[1:]
	}
}

func (p *pastTimelines) indexAt(ms int64) (uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.times[ms]
	return i, ok
}

func (p *pastTimelines) putTime(ms int64, index uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.times == nil {
		p.tls, p.times = map[pastKey]*segmeta.Timeline{}, map[int64]uint64{}
	}
	if len(p.times) >= maxPastTimelines {
		clear(p.times)
	}
	p.times[ms] = index
}

// pastQuery is the time travel of one query (outermost query and
// subqueries): its moment, the log index it resolved to, and the cached
// segment files it holds until it ends.
type pastQuery struct {
	asOf    query.AsOf
	mu      sync.Mutex
	pinned  bool   // index is known: from asOf, the cache, or the first timeline read
	index   uint64 // the log index the query reads at
	handles []*segcache.Handle
}

type pastKeyCtx struct{}

func pastOf(ctx context.Context) *pastQuery {
	pq, _ := ctx.Value(pastKeyCtx{}).(*pastQuery)
	return pq
}

// release unpins the cached files the query read.
func (pq *pastQuery) release() {
	pq.mu.Lock()
	hs := pq.handles
	pq.handles = nil
	pq.mu.Unlock()
	for _, h := range hs {
		h.Release()
	}
}

// timelinesAt returns the timelines of the datasources at the query's
// moment (nil for one without segments then), pinning the moment's index.
func (b *Broker) timelinesAt(ctx context.Context, pq *pastQuery, dss []string) (map[string]*segmeta.Timeline, error) {
	if b.cfg.PastTimelines == nil {
		return nil, Legacy(CodeUnsupported, b.cfg.Name, "asOf: this broker has no control node to read past timelines from (svc.broker.coordinatorUrls)")
	}
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if !pq.pinned {
		if !pq.asOf.ByTime {
			pq.index, pq.pinned = pq.asOf.Index, true
		} else if i, ok := b.past.indexAt(pq.asOf.TimeMs); ok {
			pq.index, pq.pinned = i, true // a time resolved before, stably
		}
	}
	out := make(map[string]*segmeta.Timeline, len(dss))
	var missing []string
	for _, ds := range dss {
		if _, seen := out[ds]; seen {
			continue
		}
		var tl *segmeta.Timeline
		if pq.pinned {
			tl = b.past.get(pq.index, ds)
		}
		if tl == nil {
			missing = append(missing, ds)
			out[ds] = nil
			continue
		}
		out[ds] = tl
	}
	if len(missing) == 0 {
		return nonEmpty(out), nil
	}
	asOf := pq.asOf
	if pq.pinned {
		asOf = query.AsOf{Index: pq.index, Set: true}
	}
	pt, err := b.cfg.PastTimelines.UsedAt(ctx, asOf, missing)
	if err != nil {
		var qe *Error
		if errors.As(err, &qe) || ctx.Err() != nil {
			return nil, err
		}
		return nil, pastUnavailable(pq.asOf, err.Error())
	}
	if pq.pinned && pt.Index != pq.index {
		return nil, pastUnavailable(pq.asOf, fmt.Sprintf("asked for log index %d, the control plane answered %d", pq.index, pt.Index))
	}
	if !pq.pinned && pt.Stable {
		b.past.putTime(pq.asOf.TimeMs, pt.Index)
	}
	pq.index, pq.pinned = pt.Index, true
	byDS := map[string][]*segmeta.DataSegment{}
	for _, s := range pt.Segments {
		if s != nil {
			byDS[s.DataSource] = append(byDS[s.DataSource], s)
		}
	}
	for _, ds := range missing {
		tl := segmeta.NewTimeline(ds)
		if _, err := tl.Add(byDS[ds]); err != nil {
			return nil, pastUnavailable(pq.asOf, fmt.Sprintf("the segments of %s at log index %d do not form a timeline: %v", ds, pt.Index, err))
		}
		// The state at a log index never changes, whatever moment led to
		// it; only the resolution of a time that is not stable is not kept.
		b.past.put(pt.Index, ds, tl)
		out[ds] = tl
	}
	return nonEmpty(out), nil
}

// nonEmpty maps datasources without segments to nil, as the live index does.
func nonEmpty(m map[string]*segmeta.Timeline) map[string]*segmeta.Timeline {
	for ds, tl := range m {
		if tl != nil && tl.Len() == 0 {
			m[ds] = nil
		}
	}
	return m
}

// pastRead is a visible segment of the past timeline that no data server
// serves: the broker reads it from deep storage.
type pastRead struct {
	seg  *segmeta.DataSegment
	clip interval.Interval
}

// resolvePast finds the query's visible segments in the past timelines:
// units for those a data server serves now (the same segment id is the same
// data), and reads of deep storage for the rest. Realtime rows are not part
// of any past timeline.
func (v *view) resolvePast(f queryFacts, tls map[string]*segmeta.Timeline) ([]unit, []pastRead) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var units []unit
	var reads []pastRead
	add := func(seg *segmeta.DataSegment, clip interval.Interval) {
		if e := v.entries[seg.ID()]; e != nil && len(e.servers) > 0 {
			units = append(units, unit{ref: protocol.SegmentRef{ID: e.id, Interval: clip.String()}, servers: e.servers, seg: e.seg})
			return
		}
		reads = append(reads, pastRead{seg: seg, clip: clip})
	}
	for _, ds := range f.dataSources {
		visitVisible(f, tls[ds], add)
	}
	return units, reads
}

// executePast runs a query over tables at its asOf moment.
func (b *Broker) executePast(ctx context.Context, pq *pastQuery, q *nativeQuery, body []byte, c *completeness) ([]byte, error) {
	f := factsOf(q)
	tls, err := b.timelinesAt(ctx, pq, f.dataSources)
	if err != nil {
		return nil, err
	}
	units, reads := b.view.resolvePast(f, tls)
	if err := b.checkCoverageIn(f, c, func(ds string) *segmeta.Timeline { return tls[ds] }); err != nil {
		return nil, err
	}
	var parts []*partial
	var final []byte
	var lost []lostSegment
	if len(units) > 0 {
		// With reads of its own the broker merges: no server finalizes.
		parts, final, lost, err = b.scatter(ctx, q, body, units, scatterOpts{finalize: len(reads) == 0, lostOnFailure: true})
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		if final != nil {
			return final, nil
		}
	}
	// A segment every server dropped since the view was read, or that no
	// server could answer for, is in deep storage all the same.
	for _, l := range lost {
		clip, err := interval.Parse(l.u.ref.Interval)
		if err != nil || l.u.seg == nil {
			return nil, l.err
		}
		reads = append(reads, pastRead{seg: l.u.seg, clip: clip})
	}
	if len(reads) > 0 {
		p, err := b.readPast(ctx, pq, q, reads)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return b.merger.mergeAndRender(q, parts)
}

// readPast reads segments from deep storage through the cache and runs q
// over them on the broker.
func (b *Broker) readPast(ctx context.Context, pq *pastQuery, q *nativeQuery, reads []pastRead) (*partial, error) {
	if b.cache == nil {
		ids := make([]string, len(reads))
		for i, r := range reads {
			ids[i] = r.seg.ID().String()
		}
		return nil, Legacy(CodeUnsupported, b.cfg.Name, "asOf %s needs segments no data server holds [%s], and this broker has no deep storage to read them from (svc.storage.*, svc.broker.asOfCache.*)",
			pq.asOf, strings.Join(ids, ", "))
	}
	segs := make([]*segmeta.DataSegment, len(reads))
	for i, r := range reads {
		segs[i] = r.seg
	}
	hs, err := b.cache.Acquire(ctx, segs)
	if err != nil {
		return nil, b.pastReadError(ctx, pq, err)
	}
	pq.mu.Lock()
	pq.handles = append(pq.handles, hs...)
	pq.mu.Unlock()
	byID := make(map[string]*segcache.Handle, len(hs))
	for _, h := range hs {
		byID[h.ID()] = h
	}
	specs := make([]localRead, len(reads))
	for i, r := range reads {
		h := byID[r.seg.ID().String()]
		specs[i] = localRead{id: h.ID(), data: h.Segment(), clip: r.clip}
	}
	return b.merger.runLocal(ctx, q, specs)
}

// pastReadError turns a failure to read from deep storage into the query's
// error: a killed segment is named (404: that data is gone for good, a retry
// cannot help), a query larger than the cache is a resource limit.
func (b *Broker) pastReadError(ctx context.Context, pq *pastQuery, err error) error {
	var gone *segcache.GoneError
	var budget *segcache.BudgetError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &gone):
		return &Error{Status: http.StatusNotFound, Code: codeStructured, ErrorCode: "segmentKilled", Persona: personaUser,
			Category: "NOT_FOUND", Context: map[string]string{"segment": gone.ID, "asOf": pq.asOf.String()},
			Message: fmt.Sprintf("asOf %s: segment %s was used then but has been killed since: its file is gone from deep storage, so the data as of that moment cannot be read", pq.asOf, gone.ID)}
	case errors.As(err, &budget):
		return Legacy(CodeResourceLimit, b.cfg.Name, "asOf %s: the %d segments no data server holds need %d bytes, more than the broker's asOf cache (svc.broker.asOfCache.maxSize, %d bytes); query a shorter interval",
			pq.asOf, budget.Segments, budget.Need, budget.Max)
	}
	return Legacy(CodeUnknown, b.cfg.Name, "asOf %s: %v", pq.asOf, err)
}
