package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"strata/audit"
	"strata/fsm"
	"strata/protocol"
	"strata/querynode/query"
	"strata/segmeta"
)

// maxTimelineDataSources bounds the datasources one past-timeline request
// names (a query's union members).
const maxTimelineDataSources = 1000

// pastTimeline serves GET /svc-internal/v1/timeline (protocol.PastTimelinePath):
// the used segments of the named datasources as they were at a past moment,
// for brokers answering queries with the context key asOf. The state is
// rebuilt from the node's Raft history (audit.History.StateAt: the nearest
// snapshot, archived or live, then the log). Fully overshadowed segments are
// left out: they are visible nowhere, and the broker builds the timeline of
// the rest with the same rules.
func (s *Server) pastTimeline(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	dss := q["dataSource"]
	if len(dss) == 0 {
		writeError(w, http.StatusBadRequest, "dataSource is required (one or more)")
		return
	}
	if len(dss) > maxTimelineDataSources {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("at most %d datasources per request, got %d", maxTimelineDataSources, len(dss)))
		return
	}
	asOf, err := query.ParseAsOf(q.Get("asOf"))
	if err != nil {
		writeError(w, http.StatusBadRequest, query.AsError(err).Message)
		return
	}
	h := s.node.History()
	index, err := h.ParseAt(asOf.String())
	if err != nil {
		s.pastError(w, asOf, err)
		return
	}
	out := protocol.PastTimeline{Index: index, Segments: []*segmeta.DataSegment{},
		// Leader stamps never go back, so a time before the newest one
		// applied resolves to the same index forever.
		Stable: !asOf.ByTime || asOf.TimeMs < s.node.FSM().LastTime()}
	byDS, missing := s.past.get(index, dss)
	if len(missing) > 0 {
		// A moment that is the state now (a time after the newest command,
		// as a dashboard's "now" is) is read from the live state; an older
		// one is rebuilt from the history.
		live := false
		s.node.FSM().Read(func(st *fsm.State) {
			if st.Index() == index {
				live = true
				s.past.put(index, usedIn(st, missing), byDS)
			}
		})
		if !live {
			st, _, err := h.StateAt(index)
			if err != nil {
				s.pastError(w, asOf, err)
				return
			}
			s.pastReplays.Add(1)
			s.past.put(index, usedIn(st, missing), byDS)
		}
	}
	seen := map[string]bool{}
	for _, ds := range dss {
		if !seen[ds] {
			seen[ds] = true
			out.Segments = append(out.Segments, byDS[ds]...)
		}
	}
	writeJSONPlain(w, http.StatusOK, out)
}

// usedIn returns the used segments of each datasource that are visible
// somewhere (not fully overshadowed) in st.
func usedIn(st *fsm.State, dss []string) map[string][]*segmeta.DataSegment {
	out := make(map[string][]*segmeta.DataSegment, len(dss))
	for _, ds := range dss {
		list := []*segmeta.DataSegment{}
		for _, rec := range st.Segments(ds) {
			if rec.Used && !st.IsOvershadowed(rec.Segment) {
				list = append(list, rec.Segment)
			}
		}
		out[ds] = list
	}
	return out
}

// pastCache keeps the used segments of datasources at log indexes, which
// never change, so that brokers asking for a moment already rebuilt cost no
// replay. It holds at most maxPastCacheSegments segments; the oldest entries
// go first.
type pastCache struct {
	mu       sync.Mutex
	m        map[pastKey][]*segmeta.DataSegment
	order    []pastKey
	segments int
}

type pastKey struct {
	index uint64
	ds    string
}

const maxPastCacheSegments = 1 << 20

// get returns what is cached of the datasources at index, in a new map, and
// the datasources it lacks.
func (c *pastCache) get(index uint64, dss []string) (map[string][]*segmeta.DataSegment, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]*segmeta.DataSegment, len(dss))
	var missing []string
	for _, ds := range dss {
		if _, done := out[ds]; done || slices.Contains(missing, ds) {
			continue
		}
		if segs, ok := c.m[pastKey{index, ds}]; ok {
			out[ds] = segs
		} else {
			missing = append(missing, ds)
		}
	}
	return out, missing
}

// put caches the datasources' segments at index and adds them to into.
func (c *pastCache) put(index uint64, segs, into map[string][]*segmeta.DataSegment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[pastKey][]*segmeta.DataSegment{}
	}
	for ds, list := range segs {
		into[ds] = list
		k := pastKey{index, ds}
		if _, ok := c.m[k]; ok || len(list) > maxPastCacheSegments {
			continue
		}
		c.m[k] = list
		c.order = append(c.order, k)
		c.segments += len(list)
	}
	for c.segments > maxPastCacheSegments {
		old := c.order[0]
		c.order = c.order[1:]
		c.segments -= len(c.m[old])
		delete(c.m, old)
	}
}

// pastError answers a moment the history cannot resolve (400) or a failure
// to read the history (500).
func (s *Server) pastError(w http.ResponseWriter, asOf query.AsOf, err error) {
	if errors.Is(err, audit.ErrBadAt) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.log.Error("cannot rebuild a past state for a time-travel query", "asOf", asOf.String(), "error", err)
	writeError(w, http.StatusInternalServerError, "cannot rebuild the state as of "+asOf.String()+": "+err.Error())
}
