package server

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"strata/audit"
)

// The control plane's past (issue 17): the state machine's tables at any
// moment, what changed between two moments, and the state digest replicas
// compare. Each control node answers from its own history (its archive, log
// and snapshots), so the digest of one node can be checked against another's.

// replaySlots bounds the replays run at once: each rebuilds a state from a
// snapshot and the log, which costs a core for a while.
var replaySlots = make(chan struct{}, 2)

func withReplaySlot(w http.ResponseWriter, r *http.Request, fn func()) {
	select {
	case replaySlots <- struct{}{}:
		defer func() { <-replaySlots }()
		fn()
	case <-r.Context().Done():
		writeError(w, http.StatusServiceUnavailable, "request ended while waiting for a replay slot")
	}
}

// auditMoment reads a moment parameter (a Raft index or an ISO-8601 time);
// on failure it has answered 400.
func (s *Server) auditMoment(w http.ResponseWriter, r *http.Request, h *audit.History, name string) (uint64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		writeError(w, http.StatusBadRequest, "parameter "+name+" is required: a Raft index or an ISO-8601 time")
		return 0, false
	}
	at, err := h.ParseAt(v)
	if err != nil {
		writeAuditError(w, name, err)
		return 0, false
	}
	return at, true
}

// writeAuditError answers a history failure: a moment that cannot be served
// is the caller's (400), a damaged archive the node's (500).
func writeAuditError(w http.ResponseWriter, name string, err error) {
	if errors.Is(err, audit.ErrBadAt) {
		writeError(w, http.StatusBadRequest, name+": "+err.Error())
		return
	}
	writeError(w, http.StatusInternalServerError, err.Error())
}

// auditState serves GET /svc/coordinator/v1/audit/state?at=[&dataSource=].
func (s *Server) auditState(w http.ResponseWriter, r *http.Request) {
	h := s.node.History()
	at, ok := s.auditMoment(w, r, h, "at")
	if !ok {
		return
	}
	ds := r.URL.Query().Get("dataSource")
	withReplaySlot(w, r, func() {
		v, err := h.ViewAt(at)
		if err != nil {
			writeAuditError(w, "at", err)
			return
		}
		if ds != "" {
			v = v.Only(ds)
		}
		writeJSON(w, http.StatusOK, v)
	})
}

// auditDiff serves GET /svc/coordinator/v1/audit/diff?from=&to=[&dataSource=].
func (s *Server) auditDiff(w http.ResponseWriter, r *http.Request) {
	h := s.node.History()
	from, ok := s.auditMoment(w, r, h, "from")
	if !ok {
		return
	}
	to, ok := s.auditMoment(w, r, h, "to")
	if !ok {
		return
	}
	if from > to {
		writeError(w, http.StatusBadRequest, "from is after to")
		return
	}
	ds := r.URL.Query().Get("dataSource")
	withReplaySlot(w, r, func() {
		a, err := h.ViewAt(from)
		if err == nil {
			var b audit.View
			if b, err = h.ViewAt(to); err == nil {
				if ds != "" {
					a, b = a.Only(ds), b.Only(ds)
				}
				writeJSON(w, http.StatusOK, audit.DiffViews(a, b))
				return
			}
		}
		writeAuditError(w, "from/to", err)
	})
}

// digestResponse is a node's state digest at an index, with the control
// nodes it knows so that a verifier can ask each of them.
type digestResponse struct {
	Node         string        `json:"node"`
	audit.Digest               // index, bytes, sha256, tables
	LastIndex    uint64        `json:"lastIndex"` // the newest committed index this node holds
	ControlNodes []controlNode `json:"controlNodes"`
}

type controlNode struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// auditDigest serves GET /svc/coordinator/v1/audit/digest[?at=]; without
// at, the digest of the newest committed index this node holds.
func (s *Server) auditDigest(w http.ResponseWriter, r *http.Request) {
	h := s.node.History()
	last, err := h.Log().LastIndex()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	at := last
	if r.URL.Query().Has("at") {
		var ok bool
		if at, ok = s.auditMoment(w, r, h, "at"); !ok {
			return
		}
	}
	withReplaySlot(w, r, func() {
		st, idx, err := h.StateAt(at)
		if err != nil {
			writeAuditError(w, "at", err)
			return
		}
		d, err := audit.DigestOf(st, idx)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		resp := digestResponse{Node: s.node.ID(), Digest: d, LastIndex: last}
		for id, url := range s.node.ControlNodes() {
			resp.ControlNodes = append(resp.ControlNodes, controlNode{ID: id, URL: url})
		}
		slices.SortFunc(resp.ControlNodes, func(a, b controlNode) int { return strings.Compare(a.ID, b.ID) })
		writeJSON(w, http.StatusOK, resp)
	})
}
