package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"strata/auth"
	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/interval"
	"strata/overlord"
	"strata/streaming"
)

// supervisorHooks are what the supervisor runtime injects into the server: its
// status reports and a hook that makes it re-evaluate at once after a change.
// Both are optional; they may be set while the server runs.
type supervisorHooks struct {
	mu     sync.RWMutex
	status streaming.StatusSource
	kick   func()
}

// SetSupervisorStatus sets where supervisor status comes from (the runtime on
// the overlord leader); nil shows every supervisor as PENDING.
func (s *Server) SetSupervisorStatus(src streaming.StatusSource) {
	s.sup.mu.Lock()
	s.sup.status = src
	s.sup.mu.Unlock()
}

// SetSupervisorKick sets the hook called after every successful supervisor
// change, so that the runtime reacts without waiting for its next period.
func (s *Server) SetSupervisorKick(fn func()) {
	s.sup.mu.Lock()
	s.sup.kick = fn
	s.sup.mu.Unlock()
}

func (s *Server) kickSupervisors() {
	s.sup.mu.RLock()
	fn := s.sup.kick
	s.sup.mu.RUnlock()
	if fn != nil {
		fn()
	}
}

// supervisorStatus is the runtime status of rec, or PENDING (healthy) with a
// payload built from the spec when the runtime does not run it (yet).
func (s *Server) supervisorStatus(rec *fsm.SupervisorRecord) streaming.Status {
	return s.runtimeStatus(rec, func(src streaming.StatusSource) (streaming.Status, bool) { return src.Status(rec.ID) })
}

// freshSupervisorStatus is supervisorStatus with the lag measured anew when
// it is stale, for the status report.
func (s *Server) freshSupervisorStatus(ctx context.Context, rec *fsm.SupervisorRecord) streaming.Status {
	return s.runtimeStatus(rec, func(src streaming.StatusSource) (streaming.Status, bool) { return src.FreshStatus(ctx, rec.ID) })
}

func (s *Server) runtimeStatus(rec *fsm.SupervisorRecord, get func(streaming.StatusSource) (streaming.Status, bool)) streaming.Status {
	s.sup.mu.RLock()
	src := s.sup.status
	s.sup.mu.RUnlock()
	if src != nil {
		if st, ok := get(src); ok {
			return st
		}
	}
	p := pendingPayload{
		DataSource: rec.DataSource, ActiveTasks: []any{}, PublishingTasks: []any{}, RecentErrors: []any{},
		Suspended: rec.Suspended, Healthy: true, State: streaming.StatePending, DetailedState: streaming.StatePending,
	}
	if spec, err := streaming.ParseStoredSupervisorSpec(rec.Spec); err == nil {
		p.Stream, p.Replicas, p.DurationSeconds = spec.Topic, spec.Replicas, int64(spec.TaskDuration/time.Second)
	}
	b, _ := json.Marshal(p) // plain fields always encode
	return streaming.Status{State: p.State, DetailedState: p.DetailedState, Healthy: true, Payload: b}
}

// pendingPayload is the status payload of a supervisor the runtime has not
// started: what the spec says, and no tasks, offsets or lag yet.
type pendingPayload struct {
	DataSource         string  `json:"dataSource"`
	Stream             string  `json:"stream"`
	Partitions         int     `json:"partitions"`
	Replicas           int     `json:"replicas"`
	DurationSeconds    int64   `json:"durationSeconds"`
	ActiveTasks        []any   `json:"activeTasks"`
	PublishingTasks    []any   `json:"publishingTasks"`
	LatestOffsets      any     `json:"latestOffsets"`
	MinimumLag         any     `json:"minimumLag"`
	AggregateLag       any     `json:"aggregateLag"`
	OffsetsLastUpdated *string `json:"offsetsLastUpdated"`
	Suspended          bool    `json:"suspended"`
	Healthy            bool    `json:"healthy"`
	State              string  `json:"state"`
	DetailedState      string  `json:"detailedState"`
	RecentErrors       []any   `json:"recentErrors"`
}

// activeSupervisor looks up the supervisor named by the path; on failure it
// has answered 404.
func (s *Server) activeSupervisor(w http.ResponseWriter, r *http.Request) (*fsm.SupervisorRecord, bool) {
	id := mux.Vars(r)["supervisorId"]
	var rec *fsm.SupervisorRecord
	var ok bool
	s.node.FSM().Read(func(st *fsm.State) { rec, ok = st.Supervisor(id) })
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("[%s] does not exist", id))
	}
	return rec, ok
}

func (s *Server) supervisorList() []*fsm.SupervisorRecord {
	var recs []*fsm.SupervisorRecord
	s.node.FSM().Read(func(st *fsm.State) { recs = st.Supervisors() })
	return recs
}

// supervisorItem is one element of the GET list with ?full, ?state=true or
// ?system (fields of the unselected flags are left out).
type supervisorItem struct {
	ID            string          `json:"id"`
	State         string          `json:"state"`
	DetailedState string          `json:"detailedState"`
	Healthy       bool            `json:"healthy"`
	Spec          json.RawMessage `json:"spec,omitempty"`
	SpecString    *string         `json:"specString,omitempty"`
	Type          *string         `json:"type,omitempty"`
	Source        *string         `json:"source,omitempty"`
	Suspended     bool            `json:"suspended"`
}

// listSupervisors: ids by default; ?full, ?system (presence flags) and
// ?state=true add state, and the spec (full) or its string form (system). The
// ids come sorted, which is one valid order of Druid's unordered set.
func (s *Server) listSupervisors(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	full, system := q.Has("full"), q.Has("system")
	withState := strings.EqualFold(q.Get("state"), "true")
	recs := slices.DeleteFunc(s.supervisorList(), func(rec *fsm.SupervisorRecord) bool { return !readable(r, rec.DataSource) })
	if !full && !system && !withState {
		ids := make([]string, len(recs))
		for i, rec := range recs {
			ids[i] = rec.ID
		}
		writeJSON(w, http.StatusOK, ids)
		return
	}
	out := make([]supervisorItem, len(recs))
	for i, rec := range recs {
		st := s.supervisorStatus(rec)
		it := supervisorItem{ID: rec.ID, State: st.State, DetailedState: st.DetailedState, Healthy: st.Healthy, Suspended: rec.Suspended}
		if full {
			it.Spec = rec.Spec
		}
		if system {
			specString, typ, source := string(rec.Spec), specType(rec.Spec), "stream"
			it.SpecString, it.Type, it.Source = &specString, &typ, &source
		}
		out[i] = it
	}
	writeJSON(w, http.StatusOK, out)
}

// specType is the spec's "type" (the stream platform, "kafka").
func specType(spec json.RawMessage) string {
	var v struct {
		Type string `json:"type"`
	}
	json.Unmarshal(spec, &v) // stored specs are JSON objects; a failure leaves ""
	return v.Type
}

func (s *Server) getSupervisor(w http.ResponseWriter, r *http.Request) {
	if rec, ok := s.activeSupervisor(w, r); ok {
		writeJSON(w, http.StatusOK, rec.Spec)
	}
}

// supervisorRuntime serves a body the supervisor runtime computes:
// /{supervisorId}/stats (the reading tasks' row counts by task group and task, with
// per-second moving averages) and /{supervisorId}/parseErrors (the parse exceptions
// they saved, newest first). A supervisor that does not run here answers
// empty.
func (s *Server) supervisorRuntime(pick func(streaming.Status) json.RawMessage, empty string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec, ok := s.activeSupervisor(w, r)
		if !ok {
			return
		}
		body := pick(s.supervisorStatus(rec))
		if body == nil {
			body = json.RawMessage(empty)
		}
		writeRawJSON(w, http.StatusOK, body)
	}
}

func (s *Server) supervisorStatusReport(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.activeSupervisor(w, r)
	if !ok {
		return
	}
	st := s.freshSupervisorStatus(r.Context(), rec)
	payload := st.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	writeJSON(w, http.StatusOK, struct {
		ID             string          `json:"id"`
		GenerationTime string          `json:"generationTime"`
		Payload        json.RawMessage `json:"payload"`
	}{rec.ID, interval.FormatMillis(time.Now().UnixMilli()), payload})
}

// supervisorHealth answers 200 {"healthy":true} or 503 {"healthy":false}.
func (s *Server) supervisorHealth(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["supervisorId"]
	var rec *fsm.SupervisorRecord
	var ok bool
	s.node.FSM().Read(func(st *fsm.State) { rec, ok = st.Supervisor(id) })
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("[%s] does not exist or health check not implemented", id))
		return
	}
	healthy := s.supervisorStatus(rec).Healthy
	status := http.StatusOK
	if !healthy {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]bool{"healthy": healthy})
}

// postSupervisor creates or updates a supervisor: the spec is validated and
// normalized, and its new version replaces the running one.
func (s *Server) postSupervisor(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	spec, err := streaming.ParseSupervisorSpec(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// WRITE on the spec's datasource, and on the datasource of the
	// supervisor it replaces (the same id may have named another).
	dataSources := []string{spec.DataSource}
	if auth.Enabled(r.Context()) {
		s.node.FSM().Read(func(st *fsm.State) {
			if rec, ok := st.Supervisor(spec.ID); ok && rec.DataSource != spec.DataSource {
				dataSources = append(dataSources, rec.DataSource)
			}
		})
	}
	for _, ds := range dataSources {
		if err := auth.Check(r.Context(), auth.Resource{Type: auth.Datasource, Name: ds}, auth.Write); err != nil {
			writeAuthError(w, err)
			return
		}
	}
	if strings.EqualFold(r.URL.Query().Get("skipRestartIfUnmodified"), "true") {
		var rec *fsm.SupervisorRecord
		s.node.FSM().Read(func(st *fsm.State) { rec, _ = st.Supervisor(spec.ID) })
		if rec != nil && bytes.Equal(rec.Spec, spec.Normalized) {
			writeJSON(w, http.StatusOK, map[string]string{"id": spec.ID})
			return
		}
	}
	cmd := commands.SetSupervisor{ID: spec.ID, DataSource: spec.DataSource, Spec: spec.Normalized, Suspended: spec.Suspended}
	if _, ok := s.propose(w, r, cmd); !ok {
		return
	}
	s.kickSupervisors()
	writeJSON(w, http.StatusOK, map[string]string{"id": spec.ID})
}

// flipSuspended builds the command storing rec with "suspended" set to v.
func flipSuspended(rec *fsm.SupervisorRecord, v bool) (commands.SetSupervisor, error) {
	spec, err := streaming.ParseStoredSupervisorSpec(rec.Spec)
	if err != nil {
		return commands.SetSupervisor{}, fmt.Errorf("the stored spec of supervisor [%s] no longer parses: %v; POST a new spec", rec.ID, err)
	}
	return commands.SetSupervisor{ID: rec.ID, DataSource: rec.DataSource, Spec: spec.WithSuspended(v), Suspended: v}, nil
}

// setSuspended suspends (v) or resumes (!v) one supervisor and answers with
// the spec of the new version.
func (s *Server) setSuspended(v bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec, ok := s.activeSupervisor(w, r)
		if !ok {
			return
		}
		if rec.Suspended == v {
			state := "running"
			if v {
				state = "suspended"
			}
			writeError(w, http.StatusBadRequest, fmt.Sprintf("[%s] is already %s", rec.ID, state))
			return
		}
		cmd, err := flipSuspended(rec, v)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if _, ok := s.propose(w, r, cmd); !ok {
			return
		}
		s.kickSupervisors()
		writeJSON(w, http.StatusOK, cmd.Spec)
	}
}

// setAllSuspended suspends or resumes every supervisor not yet in that state.
func (s *Server) setAllSuspended(v bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		changed := false
		defer func() {
			if changed { // also when a later change failed
				s.kickSupervisors()
			}
		}()
		for _, rec := range s.supervisorList() {
			if rec.Suspended == v {
				continue
			}
			cmd, err := flipSuspended(rec, v)
			if err != nil {
				writeError(w, http.StatusInternalServerError, err.Error())
				return
			}
			if _, ok := s.propose(w, r, cmd); !ok {
				return
			}
			changed = true
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "success"})
	}
}

// resetSupervisor deletes the stored offsets of the supervisor's datasource:
// its tasks are replaced and read from the earliest or latest offset.
func (s *Server) resetSupervisor(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.activeSupervisor(w, r)
	if !ok {
		return
	}
	if !s.killSupervisorTasks(w, rec.DataSource) {
		return
	}
	if _, ok := s.propose(w, r, commands.ResetSupervisorOffsets{DataSource: rec.DataSource}); !ok {
		return
	}
	s.kickSupervisors()
	writeJSON(w, http.StatusOK, map[string]string{"id": rec.ID})
}

// resetSupervisorOffsets overwrites the stored offsets of the partitions the
// body lists (ADMIN-API §10): {"type":"kafka","partitions":{"type":"end",
// "stream":"t","partitionOffsetMap":{"0":100}}}, with Druid's aliases "topic"
// and "partitionSequenceNumberMap".
func (s *Server) resetSupervisorOffsets(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var probe struct {
		Type       string `json:"type"`
		Partitions *struct {
			Type string `json:"type"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		writeError(w, http.StatusBadRequest, "invalid resetOffsets body: "+err.Error())
		return
	}
	rec, ok := s.activeSupervisor(w, r)
	if !ok {
		return
	}
	typ := specType(rec.Spec)
	switch {
	case probe.Type == "":
		writeError(w, http.StatusBadRequest, fmt.Sprintf("resetOffsets needs \"type\": %q for supervisor [%s]", typ, rec.ID))
		return
	case probe.Type != typ:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("metadata of type [%s] does not match supervisor [%s] of type [%s]", probe.Type, rec.ID, typ))
		return
	case probe.Partitions == nil:
		writeError(w, http.StatusBadRequest, "resetOffsets needs \"partitions\": {\"type\":\"end\",\"stream\":...,\"partitionOffsetMap\":{...}}")
		return
	case probe.Partitions.Type != "end" && probe.Partitions.Type != "start":
		writeError(w, http.StatusBadRequest, fmt.Sprintf("partitions type must be \"end\" or \"start\", got %q", probe.Partitions.Type))
		return
	}
	stream, offsets, err := fsm.ParseKafkaMetadata(string(body))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(offsets) == 0 {
		writeError(w, http.StatusBadRequest, "resetOffsets lists no partition offsets")
		return
	}
	if spec, err := streaming.ParseStoredSupervisorSpec(rec.Spec); err == nil && spec.Topic != stream {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("stream [%s] is not the stream [%s] of supervisor [%s]", stream, spec.Topic, rec.ID))
		return
	}
	if !s.killSupervisorTasks(w, rec.DataSource) {
		return
	}
	cmd := commands.ResetSupervisorOffsets{DataSource: rec.DataSource, Offsets: json.RawMessage(fsm.KafkaMetadataJSON(stream, offsets))}
	if _, ok := s.propose(w, r, cmd); !ok {
		return
	}
	s.kickSupervisors()
	writeJSON(w, http.StatusOK, map[string]string{"id": rec.ID})
}

// terminateSupervisor stops a supervisor for good (a tombstone in its
// history); the FSM answers 404 for an unknown or terminated id.
func (s *Server) terminateSupervisor(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["supervisorId"]
	if _, ok := s.propose(w, r, commands.TerminateSupervisor{ID: id}); !ok {
		return
	}
	s.kickSupervisors()
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}

func (s *Server) terminateAllSupervisors(w http.ResponseWriter, r *http.Request) {
	changed := false
	defer func() {
		if changed {
			s.kickSupervisors()
		}
	}()
	for _, rec := range s.supervisorList() {
		_, err := s.node.Propose(commands.TerminateSupervisor{ID: rec.ID}, auditFrom(r), s.proposeT)
		switch {
		case err == nil:
			changed = true
		case fsm.KindOf(err) == fsm.KindNotFound: // terminated meanwhile: fine
		case errors.Is(err, cluster.ErrNotLeader):
			s.notLeader(w, r)
			return
		default:
			writeError(w, http.StatusServiceUnavailable, "the change could not be committed: "+err.Error()+"; retry")
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "success"})
}

// allSupervisorHistory maps every id ever used (terminated ones too) to its
// versions, newest first; with ?states=true, to its versions and state
// timeline (supervisorHistoryJSON).
func (s *Server) allSupervisorHistory(w http.ResponseWriter, r *http.Request) {
	withStates, ok := statesFlag(w, r)
	if !ok {
		return
	}
	versions := map[string][]fsm.SupervisorVersion{}
	withTimeline := map[string]supervisorHistoryJSON{}
	s.node.FSM().Read(func(st *fsm.State) {
		for _, id := range st.SupervisorIDsWithHistory() {
			ds := id // a terminated supervisor's id names its datasource
			if rec, ok := st.Supervisor(id); ok {
				ds = rec.DataSource
			}
			if !readable(r, ds) {
				continue
			}
			if withStates {
				withTimeline[id] = supervisorHistoryOf(st, id)
			} else {
				versions[id] = st.SupervisorHistory(id)
			}
		}
	})
	if withStates {
		writeJSON(w, http.StatusOK, withTimeline)
		return
	}
	writeJSON(w, http.StatusOK, versions)
}

// statesFlag reads the history endpoints' ?states= (true or false); on a bad
// value it has answered 400.
func statesFlag(w http.ResponseWriter, r *http.Request) (bool, bool) {
	v := r.URL.Query()
	if !v.Has("states") {
		return false, true
	}
	b, err := strconv.ParseBool(v.Get("states"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("states must be true or false, got %q", v.Get("states")))
		return false, false
	}
	return b, true
}

// supervisorHistory serves GET /supervisor/{id}/history: Druid's list of
// spec versions, newest first. With ?states=true the answer is an object
// holding those versions and the supervisor's runtime state timeline
// (supervisorHistoryJSON), also newest first.
func (s *Server) supervisorHistory(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["supervisorId"]
	withStates, ok := statesFlag(w, r)
	if !ok {
		return
	}
	var out supervisorHistoryJSON
	s.node.FSM().Read(func(st *fsm.State) { out = supervisorHistoryOf(st, id) })
	switch {
	case len(out.Versions) == 0:
		writeError(w, http.StatusNotFound, fmt.Sprintf("No history for [%s].", id))
	case withStates:
		writeJSON(w, http.StatusOK, out)
	default:
		writeJSON(w, http.StatusOK, out.Versions)
	}
}

// supervisorHistoryOf reads id's spec versions and state timeline.
func supervisorHistoryOf(st *fsm.State, id string) supervisorHistoryJSON {
	states := st.SupervisorStates(id)
	out := supervisorHistoryJSON{ID: id, Versions: st.SupervisorHistory(id), States: make([]supervisorStateJSON, len(states))}
	for i, c := range states {
		out.States[i] = supervisorStateJSON{
			Time: interval.FormatMillis(c.TimeMs), State: c.State, DetailedState: c.DetailedState,
			Healthy: !strings.HasPrefix(c.State, "UNHEALTHY_"), Index: c.Index, SpecIndex: c.SpecIndex,
		}
	}
	return out
}

// supervisorHistoryJSON is the answer of /supervisor/{id}/history?states=true.
type supervisorHistoryJSON struct {
	ID       string                  `json:"id"`
	Versions []fsm.SupervisorVersion `json:"versions"` // Druid's history, newest first
	States   []supervisorStateJSON   `json:"states"`   // newest first
}

// supervisorStateJSON is one change of a supervisor's runtime state: the
// state it entered and when (leader time), the Raft index of the change and
// of the spec version whose runtime computed it.
type supervisorStateJSON struct {
	Time          string `json:"time"`
	State         string `json:"state"`
	DetailedState string `json:"detailedState"`
	Healthy       bool   `json:"healthy"`
	Index         uint64 `json:"index"`
	SpecIndex     uint64 `json:"specIndex"`
}

// killSupervisorTasks ends the running index_kafka tasks of a datasource
// before a reset changes its offsets. They end FAILED and the FSM refuses a
// publish by an ended task, so none can store the offsets it started from
// over the reset ones; the supervisor starts new tasks from the new offsets.
func (s *Server) killSupervisorTasks(w http.ResponseWriter, ds string) bool {
	o := overlord.For(s.node)
	if o == nil {
		writeUnavailable(w, "the overlord is not running on this node; retry")
		return false
	}
	var ids []string
	s.node.FSM().Read(func(st *fsm.State) {
		for _, t := range st.ActiveTasks() {
			if t.Type == streaming.TaskType && t.DataSource == ds {
				ids = append(ids, t.ID)
			}
		}
	})
	for _, id := range ids {
		if _, err := o.ShutdownFor(id, streaming.ResetShutdownReason, overlord.SupervisorAudit); err != nil {
			writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("stopping task %s before the reset: %v; nothing was reset, retry", id, err))
			return false
		}
	}
	return true
}
