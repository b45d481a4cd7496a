package server

import (
	"errors"
	"net/http"

	"strata/audit"
	"strata/fsm"
)

// auditLog serves GET /svc/coordinator/v1/audit: every command of the log
// (the archive and the live log), newest first, filtered and paged
// (audit.ParseQuery names the parameters), each with its author, comment,
// client IP, a summary and the command with its secrets redacted. Like the
// other audit endpoints, any control node answers from its own log, up to
// the entries it has applied, so the listing works while there is no leader.
func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) {
	q, err := audit.ParseQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	h := s.node.History()
	var applied uint64
	s.node.FSM().Read(func(st *fsm.State) { applied = st.Index() })
	page, err := audit.List(audit.Source{Log: h.Log(), UpTo: applied, Names: audit.StateNames(s.node.FSM().Read), IndexAt: h.IndexAt}, q)
	switch {
	case errors.Is(err, audit.ErrBadQuery):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "reading the log: "+err.Error())
	default:
		// Unescaped, so that "<redacted>" and specs read as written.
		writeJSONPlain(w, http.StatusOK, page)
	}
}
