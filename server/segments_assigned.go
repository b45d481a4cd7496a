package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"strata/coordinator"
	"strata/segment"
)

// assignedSegments serves GET /svc-internal/v1/segments/assigned/{server}: the
// segments the historical named server (host:port) should serve. The poll
// also tells the inventory the historical exists. Until the leader has read
// the historical's announcement (and for svc.coordinator.startDelay after a
// leader change) the answer is 503, and the historical keeps serving what it
// holds. The ETag is a hash of the answer, so a steady cluster answers 304.
func (s *Server) assignedSegments(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["server"]
	now := time.Now()
	s.inv.Seen(name, now)
	cur, err := s.placement.Current(now)
	if errors.Is(err, coordinator.ErrSettling) {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	hold, known := cur.Plan.Hold[name]
	if !known {
		writeError(w, http.StatusServiceUnavailable, "the coordinator has not read this historical's announcement yet; keep serving what is loaded and poll again")
		return
	}
	body, etag := s.assignedBody(cur, name, hold)
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeRawJSON(w, http.StatusOK, body)
}

// assignedAnswer is one historical's encoded assignment under one placement.
type assignedAnswer struct {
	cur  *coordinator.Current
	body []byte
	etag string
}

// assignedBody encodes a historical's assignment once per placement: each
// historical polls several times a second and placements change far less often.
func (s *Server) assignedBody(cur *coordinator.Current, name string, hold []*segment.DataSegment) ([]byte, string) {
	s.assignedMu.Lock()
	defer s.assignedMu.Unlock()
	if a, ok := s.assigned[name]; ok && a.cur == cur {
		return a.body, a.etag
	}
	body := appendSegments(nil, hold)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	if s.assigned == nil || len(s.assigned) > 4096 { // names come from requests: bound the map
		s.assigned = map[string]assignedAnswer{}
	}
	s.assigned[name] = assignedAnswer{cur: cur, body: body, etag: etag}
	return body, etag
}
