package server

import (
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"

	"strata/commands"
	"strata/fsm"
	"strata/javacompat"
	"strata/rules"
)

// allRules answers {"_default": [...], "<ds>": [...]} for every datasource with
// rules set.
func (s *Server) allRules(w http.ResponseWriter, r *http.Request) {
	b := []byte{'{'}
	s.node.FSM().Read(func(st *fsm.State) {
		for i, ds := range st.RulesKeys() {
			if i > 0 {
				b = append(b, ',')
			}
			b = javacompat.AppendJSONString(b, ds)
			b = append(b, ':')
			b = append(b, st.RulesJSON(ds)...)
		}
	})
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

// dataSourceRules answers a datasource's rules ([] if none, even for an unknown
// datasource); ?full appends the cluster defaults, the order they are matched in.
func (s *Server) dataSourceRules(w http.ResponseWriter, r *http.Request) {
	ds := mux.Vars(r)["dataSourceName"]
	var own []rules.Rule
	var defaults []rules.Rule
	s.node.FSM().Read(func(st *fsm.State) {
		own, _ = st.Rules(ds)
		if flag(r, "full") && ds != fsm.DefaultRulesKey {
			defaults = st.DefaultRules()
		}
	})
	all := append(append([]rules.Rule{}, own...), defaults...)
	writeRawJSON(w, http.StatusOK, rules.AppendJSON(nil, all))
}

func (s *Server) dataSourceRulesHistory(w http.ResponseWriter, r *http.Request) {
	s.history(fsm.AuditRules, mux.Vars(r)["dataSourceName"])(w, r)
}

// setRules replaces a datasource's rules ("_default": the cluster defaults).
// Invalid rules are refused here with the parser's message, and with Strata's
// own checks (rules.Strict); the FSM checks them again against the parser.
func (s *Server) setRules(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	if _, err := rules.Parse(body); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	unknown, err := rules.Strict(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.logUnknownFields(r, unknown)
	cmd := commands.SetRules{DataSource: mux.Vars(r)["dataSourceName"], Rules: json.RawMessage(body)}
	if _, ok := s.propose(w, r, cmd); ok {
		writeEmpty(w, http.StatusOK)
	}
}
