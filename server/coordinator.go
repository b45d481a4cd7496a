package server

import (
	"net/http"

	"strata/commands"
	"strata/fsm"
)

func (s *Server) getCoordinatorConfig(w http.ResponseWriter, r *http.Request) {
	var cfg commands.CoordinatorDynamicConfig
	s.node.FSM().Read(func(st *fsm.State) { cfg = st.CoordinatorConfig() })
	writeJSON(w, http.StatusOK, cfg)
}

// postCoordinatorConfig merges a partial config: type errors are caught here, the
// merge and bound checks run in the FSM against the committed current value, so
// concurrent partial updates never lose each other's fields.
func (s *Server) postCoordinatorConfig(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	patch, unknown, err := commands.ParseCoordinatorConfigPatch(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.logUnknownFields(r, unknown)
	// Reject out-of-bounds values before they reach the log when we can tell now.
	var cur commands.CoordinatorDynamicConfig
	s.node.FSM().Read(func(st *fsm.State) { cur = st.CoordinatorConfig() })
	if _, err := patch.Apply(cur); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if _, ok := s.propose(w, r, commands.SetCoordinatorConfig{Patch: patch}); ok {
		writeEmpty(w, http.StatusOK)
	}
}

// unknownFieldsMsg is the log message of a config request with fields Strata
// does not know: Druid ignores them, and so does Strata, but a misspelt field
// then changes nothing, so the names are logged.
const unknownFieldsMsg = "ignored unknown fields of a config request"

// logUnknownFields warns about the fields of a config request that were
// ignored, with the endpoint and the client's address.
func (s *Server) logUnknownFields(r *http.Request, fields []string) {
	if len(fields) > 0 {
		s.log.Warn(unknownFieldsMsg, "path", r.URL.Path, "fields", fields, "client", clientIP(r))
	}
}
