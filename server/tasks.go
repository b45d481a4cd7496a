package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"strata/auth"
	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/interval"
	"strata/overlord"
)

// taskAPI serves the overlord's task endpoints (ADMIN-API §11) and the
// internal endpoints its workers call.
type taskAPI struct {
	s *Server
	o *overlord.Overlord
}

// overlordError maps an error of the overlord (or of a command it proposed) to HTTP.
func (t *taskAPI) overlordError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, overlord.ErrNotReady):
		writeUnavailable(w, err.Error())
	case errors.Is(err, overlord.ErrUnknownWorker):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, cluster.ErrNotLeader):
		t.s.notLeader(w, r)
	case fsm.KindOf(err) == fsm.KindInvalid:
		writeError(w, http.StatusBadRequest, err.Error())
	case fsm.KindOf(err) == fsm.KindNotFound:
		writeError(w, http.StatusNotFound, err.Error())
	case fsm.KindOf(err) == fsm.KindConflict:
		writeError(w, http.StatusConflict, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "the change could not be committed: "+err.Error()+"; retry")
	}
}

// ---- task status objects (ADMIN-API §11.1) ----

type locationJSON struct {
	Host    *string `json:"host"`
	Port    int     `json:"port"`
	TLSPort int     `json:"tlsPort"`
}

func location(l commands.TaskLocation) locationJSON {
	out := locationJSON{Port: l.Port, TLSPort: l.TLSPort}
	if l.Host != "" {
		h := l.Host
		out.Host = &h
	}
	return out
}

func nullableString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// taskStatusPlus is Druid's TaskStatusPlus.
type taskStatusPlus struct {
	ID                 string       `json:"id"`
	GroupID            string       `json:"groupId"`
	Type               string       `json:"type"`
	CreatedTime        string       `json:"createdTime"`
	QueueInsertionTime string       `json:"queueInsertionTime"`
	StatusCode         string       `json:"statusCode"`
	Status             string       `json:"status"`
	RunnerStatusCode   string       `json:"runnerStatusCode"`
	Duration           int64        `json:"duration"`
	Location           locationJSON `json:"location"`
	DataSource         string       `json:"dataSource"`
	ErrorMsg           *string      `json:"errorMsg"`
}

func statusPlus(r *fsm.TaskRecord) taskStatusPlus {
	// Druid reads complete tasks from storage, where the queue insertion time is unknown (epoch).
	queued := interval.FormatMillis(0)
	if r.Active() {
		queued = interval.FormatMillis(r.CreatedMs)
	}
	return taskStatusPlus{
		ID: r.ID, GroupID: r.GroupID, Type: r.Type, CreatedTime: interval.FormatMillis(r.CreatedMs), QueueInsertionTime: queued,
		StatusCode: r.Status, Status: r.Status, RunnerStatusCode: r.RunnerStatus, Duration: r.DurationMs,
		Location: location(r.Location), DataSource: r.DataSource, ErrorMsg: nullableString(r.ErrorMsg),
	}
}

// taskStatus is Druid's TaskStatus (the values of POST /taskStatus).
type taskStatus struct {
	ID       string       `json:"id"`
	Status   string       `json:"status"`
	Duration int64        `json:"duration"`
	ErrorMsg *string      `json:"errorMsg"`
	Location locationJSON `json:"location"`
}

func (t *taskAPI) lookup(id string) *fsm.TaskRecord {
	var rec *fsm.TaskRecord
	t.s.node.FSM().Read(func(st *fsm.State) { rec, _ = st.Task(id) })
	return rec
}

// ---- handlers ----

func (t *taskAPI) submit(w http.ResponseWriter, r *http.Request) {
	body, ok := t.s.readJSONBody(w, r)
	if !ok {
		return
	}
	task, locks, err := middlemanager.ParseTask(body, time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// Druid's TaskResourceFilter: a task writes its datasource.
	if err := auth.Check(r.Context(), auth.Resource{Type: auth.Datasource, Name: task.DataSource}, auth.Write); err != nil {
		writeAuthError(w, err)
		return
	}
	// READ on EXTERNAL for each input-source type, and the input policy.
	if err := checkTaskInputs(r.Context(), task); err != nil {
		if isAuthError(err) {
			writeAuthError(w, err)
		} else {
			writeError(w, http.StatusBadRequest, err.Error())
		}
		return
	}
	cmd := commands.SubmitTask{ID: task.ID, Type: task.Type, GroupID: task.GroupID, DataSource: task.DataSource, Payload: task.Payload}
	for _, iv := range locks {
		cmd.Locks = append(cmd.Locks, iv.String())
	}
	if _, ok := t.s.propose(w, r, cmd); !ok {
		return
	}
	t.o.Submitted()
	writeJSONPlain(w, http.StatusOK, map[string]string{"task": task.ID})
}

func (t *taskAPI) get(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["taskId"]
	rec := t.lookup(id)
	out := struct {
		Task    string          `json:"task"`
		Payload json.RawMessage `json:"payload"`
	}{id, json.RawMessage("null")}
	if rec == nil {
		writeJSONPlain(w, http.StatusNotFound, out)
		return
	}
	out.Payload = json.RawMessage(rec.Payload)
	writeJSONPlain(w, http.StatusOK, out)
}

func (t *taskAPI) status(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["taskId"]
	rec := t.lookup(id)
	out := struct {
		Task   string          `json:"task"`
		Status *taskStatusPlus `json:"status"`
	}{Task: id}
	if rec == nil {
		writeJSONPlain(w, http.StatusNotFound, out)
		return
	}
	sp := statusPlus(rec)
	out.Status = &sp
	writeJSONPlain(w, http.StatusOK, out)
}

func (t *taskAPI) reports(w http.ResponseWriter, r *http.Request) {
	rec := t.lookup(mux.Vars(r)["taskId"])
	if rec == nil || rec.Report == "" {
		writeText(w, http.StatusNotFound, "No task reports were found for this task. The task may not exist, or it may not have completed yet.")
		return
	}
	writeRawJSON(w, http.StatusOK, []byte(rec.Report))
}

// parseOffset reads the log offset parameter (default 0).
func parseOffset(w http.ResponseWriter, r *http.Request) (int64, bool) {
	raw := r.URL.Query().Get("offset")
	if raw == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid offset %q: expected an integer (bytes; negative counts from the end)", raw))
		return 0, false
	}
	return n, true
}

// streamLog copies a log to the client as Druid does: text/plain, raw bytes.
func streamLog(w http.ResponseWriter, rc io.ReadCloser) {
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	io.Copy(w, rc)
}

func (t *taskAPI) taskLog(w http.ResponseWriter, r *http.Request) {
	offset, ok := parseOffset(w, r)
	if !ok {
		return
	}
	rc, err := t.o.TaskLog(r.Context(), mux.Vars(r)["taskId"], offset)
	if errors.Is(err, overlord.ErrNoLog) {
		writeText(w, http.StatusNotFound, "No log was found for this task. The task may not exist, or it may not have begun running yet.")
		return
	}
	if err != nil {
		writeEmpty(w, http.StatusInternalServerError)
		return
	}
	streamLog(w, rc)
}

// shutdown stops an active task. A task the overlord never had (or no longer
// keeps) is Druid's documented 404, not its baseline code's 200, so that a
// mistyped id is not taken for a stopped task; shutting down a finished task
// stays a no-op answering 200, so a retried shutdown succeeds.
func (t *taskAPI) shutdown(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["taskId"]
	rec := t.lookup(id)
	if rec == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Cannot find task with id [%s]", id))
		return
	}
	if rec.Active() {
		if _, err := t.o.Shutdown(id, auditFrom(r)); err != nil {
			t.overlordError(w, r, err)
			return
		}
	}
	writeJSONPlain(w, http.StatusOK, map[string]string{"task": id})
}

func (t *taskAPI) shutdownAll(w http.ResponseWriter, r *http.Request) {
	ds, ok := dataSourceParam(w, r)
	if !ok {
		return
	}
	var ids []string
	t.s.node.FSM().Read(func(st *fsm.State) {
		for _, rec := range st.ActiveTasks() {
			if rec.DataSource == ds {
				ids = append(ids, rec.ID)
			}
		}
	})
	if len(ids) == 0 {
		writeEmpty(w, http.StatusNotFound)
		return
	}
	for _, id := range ids {
		if _, err := t.o.Shutdown(id, auditFrom(r)); err != nil {
			t.overlordError(w, r, err)
			return
		}
	}
	writeJSONPlain(w, http.StatusOK, map[string]string{"dataSource": ds})
}

func (t *taskAPI) multiStatus(w http.ResponseWriter, r *http.Request) {
	body, ok := t.s.readJSONBody(w, r)
	if !ok {
		return
	}
	var ids []string
	if err := json.Unmarshal(body, &ids); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON array of task ids: "+err.Error())
		return
	}
	if len(ids) == 0 {
		writeText(w, http.StatusBadRequest, "No TaskIds provided.")
		return
	}
	out := map[string]taskStatus{}
	t.s.node.FSM().Read(func(st *fsm.State) {
		for _, id := range ids {
			if rec, ok := st.Task(id); ok && readable(r, rec.DataSource) {
				out[id] = taskStatus{ID: id, Status: rec.Status, Duration: rec.DurationMs, ErrorMsg: nullableString(rec.ErrorMsg), Location: location(rec.Location)}
			}
		}
	})
	writeJSONPlain(w, http.StatusOK, out)
}

// list serves /tasks and its per-state shortcuts (ADMIN-API §11.2): complete
// tasks first, newest first (limited by max and by createdTimeInterval, else
// by svc.indexer.storage.recentlyFinishedThreshold), then active tasks in
// submission order.
func (t *taskAPI) list(fixed string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		state := fixed
		if fixed == "" {
			state = strings.ToLower(q.Get("state"))
			switch state {
			case "", "pending", "waiting", "running", "complete":
			default:
				writeText(w, http.StatusBadRequest, fmt.Sprintf("Invalid state : %s, valid values are: [pending, waiting, running, complete]", q.Get("state")))
				return
			}
		}
		maxParam := "max"
		if fixed == "complete" {
			maxParam = "n"
		}
		maxComplete := -1
		if raw := q.Get(maxParam); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid %s %q: expected a non-negative integer", maxParam, raw))
				return
			}
			maxComplete = n
		}
		window := t.s.settings.RecentlyFinished
		if raw := q.Get("createdTimeInterval"); raw != "" {
			iv, err := interval.ParsePath(raw)
			if err != nil {
				writeError(w, http.StatusBadRequest, "invalid createdTimeInterval: "+err.Error())
				return
			}
			window = time.Duration(iv.Duration()) * time.Millisecond
		}
		since := time.Now().Add(-window).UnixMilli()
		ds, typ := q.Get("datasource"), q.Get("type")
		match := func(rec *fsm.TaskRecord) bool {
			return (ds == "" || rec.DataSource == ds) && (typ == "" || rec.Type == typ) && readable(r, rec.DataSource)
		}
		out := []taskStatusPlus{}
		t.s.node.FSM().Read(func(st *fsm.State) {
			if state == "" || state == "complete" {
				st.EachCompleteTask(func(rec *fsm.TaskRecord) bool {
					if maxComplete >= 0 && len(out) >= maxComplete {
						return false
					}
					if rec.CreatedMs >= since && match(rec) {
						out = append(out, statusPlus(rec))
					}
					return true
				})
			}
			if state == "complete" {
				return
			}
			for _, rec := range st.ActiveTasks() {
				if match(rec) && (state == "" || strings.EqualFold(rec.RunnerStatus, state)) {
					out = append(out, statusPlus(rec))
				}
			}
		})
		writeJSONPlain(w, http.StatusOK, out)
	}
}

func (t *taskAPI) setWorkerEnabled(enabled bool) http.HandlerFunc {
	word := "disabled"
	if enabled {
		word = "enabled"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		host := mux.Vars(r)["host"]
		if err := t.o.SetWorkerEnabled(host, enabled, auditFrom(r)); err != nil {
			t.overlordError(w, r, err)
			return
		}
		writeJSONPlain(w, http.StatusOK, map[string]string{host: word})
	}
}

// ---- workers ----

type workerJSON struct {
	Scheme   string `json:"scheme"`
	Host     string `json:"host"`
	IP       string `json:"ip"`
	Capacity int    `json:"capacity"`
	Version  string `json:"version"`
	Category string `json:"category"`
}

// workerRecordJSON is spec 2.4.
type workerRecordJSON struct {
	Worker                        workerJSON `json:"worker"`
	CurrCapacityUsed              int        `json:"currCapacityUsed"`
	CurrParallelIndexCapacityUsed int        `json:"currParallelIndexCapacityUsed"`
	AvailabilityGroups            []string   `json:"availabilityGroups"`
	RunningTasks                  []string   `json:"runningTasks"`
	LastCompletedTaskTime         string     `json:"lastCompletedTaskTime"`
	BlacklistedUntil              *string    `json:"blacklistedUntil"`
}

// listWorkers serves GET /svc/indexer/v1/workers: the workers heard from
// within the heartbeat timeout. As in Druid, a disabled worker shows an empty
// version.
func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) {
	o := overlord.For(s.node)
	if o == nil {
		writeUnavailable(w, overlord.ErrNotReady.Error())
		return
	}
	infos, err := o.Workers()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	out := make([]workerRecordJSON, 0, len(infos))
	for _, wi := range infos {
		rec := workerRecordJSON{
			Worker: workerJSON{Scheme: wi.Worker.Scheme, Host: wi.Worker.Host, IP: wi.Worker.IP, Capacity: wi.Worker.Capacity,
				Version: wi.Worker.Version, Category: wi.Worker.Category},
			CurrCapacityUsed:   len(wi.Running),
			AvailabilityGroups: []string{},
			RunningTasks:       []string{},
		}
		if !wi.Worker.Enabled {
			rec.Worker.Version = ""
		}
		for _, t := range wi.Running {
			rec.RunningTasks = append(rec.RunningTasks, t.ID)
			rec.AvailabilityGroups = append(rec.AvailabilityGroups, t.ID) // a task's default availability group is its id
			if t.Type == "index_parallel" {
				rec.CurrParallelIndexCapacityUsed++
			}
		}
		last := wi.Worker.LastCompletedMs
		if last == 0 {
			last = wi.Worker.RegisteredMs
		}
		rec.LastCompletedTaskTime = interval.FormatMillis(last)
		out = append(out, rec)
	}
	writeJSONPlain(w, http.StatusOK, out)
}

func (t *taskAPI) totalCapacity(w http.ResponseWriter, r *http.Request) {
	infos, err := t.o.Workers()
	if err != nil {
		t.overlordError(w, r, err)
		return
	}
	current, used, largest := 0, 0, 0
	for _, wi := range infos {
		current += wi.Worker.Capacity
		used += len(wi.Running)
		largest = max(largest, wi.Worker.Capacity)
	}
	maxAuto := -1
	var cfg commands.WorkerBehaviorConfig
	t.s.node.FSM().Read(func(st *fsm.State) { cfg, _ = st.WorkerConfig() })
	if len(cfg.AutoScaler) > 0 && string(cfg.AutoScaler) != "null" && largest > 0 {
		var as struct {
			MaxNumWorkers int `json:"maxNumWorkers"`
		}
		if json.Unmarshal(cfg.AutoScaler, &as) == nil {
			maxAuto = as.MaxNumWorkers * largest
		}
	}
	writeJSONPlain(w, http.StatusOK, map[string]int{
		"currentClusterCapacity": current, "maximumCapacityWithAutoScale": maxAuto, "usedClusterCapacity": used,
	})
}

// ---- internal endpoints (workers → leader) ----

// decodeInternal reads a JSON body of an internal endpoint.
func (t *taskAPI) decodeInternal(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := t.s.readJSONBody(w, r)
	if !ok {
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return false
	}
	return true
}

func (t *taskAPI) register(w http.ResponseWriter, r *http.Request) {
	var reg middlemanager.Registration
	if !t.decodeInternal(w, r, &reg) {
		return
	}
	reply, err := t.o.Register(reg, auditFrom(r))
	if err != nil {
		t.overlordError(w, r, err)
		return
	}
	writeJSONPlain(w, http.StatusOK, reply)
}

func (t *taskAPI) heartbeat(w http.ResponseWriter, r *http.Request) {
	var hb middlemanager.Heartbeat
	if !t.decodeInternal(w, r, &hb) {
		return
	}
	reply, err := t.o.Heartbeat(hb)
	if err != nil {
		t.overlordError(w, r, err)
		return
	}
	writeJSONPlain(w, http.StatusOK, reply)
}

func (t *taskAPI) reportStatus(w http.ResponseWriter, r *http.Request) {
	var st middlemanager.StatusReport
	if !t.decodeInternal(w, r, &st) {
		return
	}
	if err := t.o.ReportStatus(st); err != nil {
		t.overlordError(w, r, err)
		return
	}
	writeJSONPlain(w, http.StatusOK, map[string]string{"task": st.ID})
}

func (t *taskAPI) action(w http.ResponseWriter, r *http.Request) {
	var req middlemanager.ActionRequest
	if !t.decodeInternal(w, r, &req) {
		return
	}
	v, err := t.o.Act(req)
	if err != nil {
		t.overlordError(w, r, err)
		return
	}
	writeJSONPlain(w, http.StatusOK, v)
}

func (t *taskAPI) workerSetsEnabled(w http.ResponseWriter, r *http.Request) {
	var req middlemanager.EnableRequest
	if !t.decodeInternal(w, r, &req) {
		return
	}
	if err := t.o.SetWorkerEnabled(req.Host, req.Enabled, auditFrom(r)); err != nil {
		t.overlordError(w, r, err)
		return
	}
	writeJSONPlain(w, http.StatusOK, map[string]bool{req.Host: req.Enabled})
}
