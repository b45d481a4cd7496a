package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"strata/commands"
	"strata/ingest/middlemanager"
)

type workerHandler func(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker)

// withWorker finds the worker this process runs (it is started next to the
// HTTP server, so a request may come first).
func (s *Server) withWorker(h workerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		mm := middlemanager.Attached(s.props)
		if mm == nil {
			writeError(w, http.StatusServiceUnavailable, "the middle manager of this process is not running")
			return
		}
		h(w, r, mm)
	}
}

func workerEnabled(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker) {
	writeJSONPlain(w, http.StatusOK, map[string]bool{mm.Host(): mm.Enabled()})
}

func workerTasks(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker) {
	writeJSONPlain(w, http.StatusOK, mm.TaskIDs())
}

// workerTaskLog streams a task's log: 404 empty when there is none, 500 empty
// on an I/O error (ADMIN-API §3).
func workerTaskLog(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker) {
	offset, ok := parseOffset(w, r)
	if !ok {
		return
	}
	rc, err := mm.OpenLog(mux.Vars(r)["taskId"], offset)
	if errors.Is(err, middlemanager.ErrNoLog) {
		writeEmpty(w, http.StatusNotFound)
		return
	}
	if err != nil {
		writeEmpty(w, http.StatusInternalServerError)
		return
	}
	streamLog(w, rc)
}

// workerShutdown answers 200 for tasks this worker does not run too.
func workerShutdown(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker) {
	id := mux.Vars(r)["taskId"]
	mm.Shutdown(id, commands.ShutdownByUser)
	writeJSONPlain(w, http.StatusOK, map[string]string{"task": id})
}

// workerSetEnabled records the change with the overlord leader; 500 empty when
// that fails.
func workerSetEnabled(enabled bool) workerHandler {
	word := "disabled"
	if enabled {
		word = "enabled"
	}
	return func(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker) {
		if err := mm.SetEnabled(r.Context(), enabled); err != nil {
			writeEmpty(w, http.StatusInternalServerError)
			return
		}
		writeJSONPlain(w, http.StatusOK, map[string]string{mm.Host(): word})
	}
}

// workerRun takes a task the overlord assigned.
func (s *Server) workerRun(w http.ResponseWriter, r *http.Request, mm *middlemanager.Worker) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var t middlemanager.Task
	if err := json.Unmarshal(body, &t); err != nil {
		writeError(w, http.StatusBadRequest, "invalid task: "+err.Error())
		return
	}
	switch err := mm.Run(t); {
	case err == nil:
		writeJSONPlain(w, http.StatusOK, map[string]string{"task": t.ID})
	case errors.Is(err, middlemanager.ErrAtCapacity):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, middlemanager.ErrStopping):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, middlemanager.ErrUnknownType), commands.ValidateTaskID(t.ID) != nil:
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}
