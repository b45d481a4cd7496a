package server

import (
	"net/http"

	"strata/commands"
	"strata/fsm"
)

// getWorkerConfig answers 200 with an empty body when nothing was ever set (Druid
// synthesises no default; the runner then uses equalDistribution).
func (s *Server) getWorkerConfig(w http.ResponseWriter, r *http.Request) {
	var cfg commands.WorkerBehaviorConfig
	var set bool
	s.node.FSM().Read(func(st *fsm.State) { cfg, set = st.WorkerConfig() })
	if !set {
		writeEmpty(w, http.StatusOK)
		return
	}
	writeJSON(w, http.StatusOK, cfg)
}

func (s *Server) postWorkerConfig(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	cfg, unknown, err := commands.ParseWorkerBehaviorConfig(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.logUnknownFields(r, unknown)
	if _, ok := s.propose(w, r, commands.SetWorkerConfig{Config: cfg}); ok {
		writeEmpty(w, http.StatusOK)
	}
}

// workers lists the live middle managers (spec 2.4; tasks.go).
func (s *Server) workers(w http.ResponseWriter, r *http.Request) {
	s.listWorkers(w, r)
}

// scaling answers 200 with an empty body when no autoscaler has produced events.
func (s *Server) scaling(w http.ResponseWriter, r *http.Request) {
	writeEmpty(w, http.StatusOK)
}
