package server

import (
	"errors"
	"fmt"
	"net/http"

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
	// A moment that is the state now (a time after the newest command, as
	// a dashboard's "now" is) is read from the live state, not replayed.
	live := false
	s.node.FSM().Read(func(st *fsm.State) {
		if st.Index() == index {
			live = true
			out.Segments = appendUsed(out.Segments, st, dss)
		}
	})
	if !live {
		st, at, err := h.StateAt(index)
		if err != nil {
			s.pastError(w, asOf, err)
			return
		}
		out.Index = at
		out.Segments = appendUsed(out.Segments, st, dss)
	}
	writeJSONPlain(w, http.StatusOK, out)
}

// appendUsed appends the used segments of the datasources that are visible
// somewhere (not fully overshadowed) in st.
func appendUsed(out []*segmeta.DataSegment, st *fsm.State, dss []string) []*segmeta.DataSegment {
	seen := map[string]bool{}
	for _, ds := range dss {
		if seen[ds] {
			continue
		}
		seen[ds] = true
		for _, rec := range st.Segments(ds) {
			if rec.Used && !st.IsOvershadowed(rec.Segment) {
				out = append(out, rec.Segment)
			}
		}
	}
	return out
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
