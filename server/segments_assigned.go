package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"strata/coordinator"
	"strata/fsm"
	"strata/interval"
	"strata/rules"
	"strata/segmeta"
)

// assignedSegments serves GET /svc-internal/v1/segments/assigned/{serverName}: the
// segments the historical named server (host:port) should serve. The poll
// also tells the inventory the historical exists. Until the leader has read
// the historical's announcement (and for svc.coordinator.startDelay after a
// leader change) the answer is 503, and the historical keeps serving what it
// holds. The ETag is a hash of the answer, so a steady cluster answers 304.
func (s *Server) assignedSegments(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["serverName"]
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
func (s *Server) assignedBody(cur *coordinator.Current, name string, hold []*segmeta.DataSegment) ([]byte, string) {
	s.assignedMu.Lock()
	defer s.assignedMu.Unlock()
	if a, ok := s.assigned[name]; ok && a.cur == cur {
		return a.body, a.etag
	}
	body := appendAssigned(nil, hold, cur.Plan.KeepOnly)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	if s.assigned == nil || len(s.assigned) > 4096 { // names come from requests: bound the map
		s.assigned = map[string]assignedAnswer{}
	}
	s.assigned[name] = assignedAnswer{cur: cur, body: body, etag: etag}
	return body, etag
}

// handoffComplete serves GET /datasources/{dataSourceName}/handoffComplete?interval=&partitionNumber=&version=,
// which a streaming task polls after publishing: true once a historical serves
// the segment (or a segment of the same partition with an equal or newer
// version whose interval covers it), or when the first retention rule matching
// the interval is not a load rule, since such a segment is never loaded.
func (s *Server) handoffComplete(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	iv, err := interval.Parse(q.Get("interval"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "interval: "+err.Error()+" (e.g. interval=2024-01-01T00:00:00Z/2024-01-02T00:00:00Z)")
		return
	}
	part, err := strconv.ParseInt(q.Get("partitionNumber"), 10, 32)
	if err != nil {
		writeError(w, http.StatusBadRequest, "partitionNumber must be an integer, got "+strconv.Quote(q.Get("partitionNumber")))
		return
	}
	version := q.Get("version")
	if version == "" {
		writeError(w, http.StatusBadRequest, "version is required")
		return
	}
	ds := mux.Vars(r)["dataSourceName"]
	loads := false
	s.node.FSM().Read(func(st *fsm.State) {
		own, _ := st.Rules(ds)
		if rule, ok := rules.Match(own, st.DefaultRules(), iv, time.Now().UnixMilli()); ok {
			loads = rule.Kind() == rules.Load
		}
	})
	done := !loads
	for _, srv := range s.servers() {
		if done {
			break
		}
		if !srv.Reachable {
			continue
		}
		for id := range srv.Segments {
			if id.DataSource == ds && id.PartitionNum == int32(part) && id.Interval.Contains(iv) && id.Version >= version {
				done = true
				break
			}
		}
	}
	writeRawJSON(w, http.StatusOK, strconv.AppendBool(nil, done))
}

// appendAssigned appends a historical's hold list as a JSON array of
// segments, those kept only for a handover marked "keepOnly":true.
func appendAssigned(dst []byte, hold []*segmeta.DataSegment, keepOnly map[segmeta.ID]bool) []byte {
	dst = slices.Grow(dst, 2+len(hold)*segmentJSONSize)
	dst = append(dst, '[')
	for i, seg := range hold {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		dst = seg.AppendJSONFields(dst)
		if keepOnly[seg.ID()] {
			dst = append(dst, `,"keepOnly":true`...)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
