package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"strata/auth"
	"strata/commands"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/ingest/sqltask"
	"strata/querynode/broker"
	"strata/querynode/query"
)

// structuredError is Druid's newer error shape (ADMIN-API §1.2, shape E).
type structuredError struct {
	Error        string            `json:"error"`
	ErrorCode    string            `json:"errorCode"`
	Persona      string            `json:"persona"`
	Category     string            `json:"category"`
	ErrorMessage string            `json:"errorMessage"`
	Context      map[string]string `json:"context"`
}

func writeInvalidInput(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, structuredError{Error: "svcException", ErrorCode: "invalidInput", Persona: "USER",
		Category: "INVALID_INPUT", ErrorMessage: msg, Context: map[string]string{}})
}

// sqlTaskFieldKinds names what each request field must be, for errors.
var sqlTaskFieldKinds = map[string]string{"query": "a string", "context": "an object", "parameters": "an array"}

// describeJSONSyntax words a JSON decoding error for users (no Go types).
func describeJSONSyntax(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	}
	return "the body must be a JSON object with a \"query\" string"
}

// sqlSourceExists reports whether a datasource has at least one used segment,
// which is what the msq planner asks of a datasource a statement reads.
func (s *Server) sqlSourceExists(ds string) bool {
	found := false
	s.node.FSM().Read(func(st *fsm.State) { found = st.UsedIndex().Timeline(ds) != nil })
	return found
}

// submitSQL implements POST /svc/v2/sql/task: the statement is checked before any
// task exists (syntax errors and datasources read but missing come back as 400
// invalidInput with line and column), then a query_controller task is submitted.
// resultFormat, header, typesHeader and sqlTypesHeader are accepted and ignored,
// as Druid does.
func (t *taskAPI) submitSQL(w http.ResponseWriter, r *http.Request) {
	body, ok := t.s.readJSONBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Query      *string         `json:"query"`
		Context    map[string]any  `json:"context"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			writeInvalidInput(w, fmt.Sprintf("Malformed SQL task request: field %q must be %s, got %s", te.Field, sqlTaskFieldKinds[te.Field], te.Value))
			return
		}
		writeInvalidInput(w, "Malformed SQL task request: "+describeJSONSyntax(err))
		return
	}
	if req.Query == nil || *req.Query == "" {
		writeInvalidInput(w, "Query must be specified: the request needs a non-empty \"query\"")
		return
	}
	// Druid's broker validates the tables a statement reads before it creates a
	// task; a missing one is a 400 with the message the task would fail with.
	// READ on every datasource the statement reads, checked as it is read so
	// that a table the caller may not read is never reported missing or
	// present (403 either way).
	var forbidden error
	exists := func(ds string) bool {
		if err := auth.Check(r.Context(), auth.Resource{Type: auth.Datasource, Name: ds}, auth.Read); err != nil {
			if forbidden == nil {
				forbidden = err
			}
			return true
		}
		return t.s.sqlSourceExists(ds)
	}
	_, err := sqltask.Check(*req.Query, exists)
	if forbidden != nil {
		writeAuthError(w, forbidden)
		return
	}
	if err != nil {
		writeInvalidInput(w, err.Error())
		return
	}
	if at, ok, err := sqltask.AsOf(*req.Query, req.Context); err != nil {
		writeInvalidInput(w, err.Error())
		return
	} else if ok {
		if _, err := query.ParseAsOf(at); err != nil {
			writeInvalidInput(w, query.AsError(err).Message)
			return
		}
	}
	id := "query-" + broker.NewUUID()
	// This is the leader: it stamps CURRENT_TIMESTAMP once, so the worker
	// (and a retry) computes the statement at the moment it was accepted.
	task := map[string]any{"type": sqltask.TaskType, "id": id, "sqlQuery": *req.Query, "sqlQueryContext": req.Context,
		"sqlCurrentTimestamp": time.Now().UnixMilli()}
	if len(req.Parameters) > 0 && string(req.Parameters) != "null" {
		task["sqlParameters"] = req.Parameters
	}
	payload, _ := json.Marshal(task)
	parsed, locks, err := middlemanager.ParseTask(payload, time.Now())
	if err != nil {
		writeInvalidInput(w, err.Error())
		return
	}
	// WRITE on the datasource it writes (a SELECT writes none), then READ on
	// EXTERNAL for each input-source type and the input policy.
	if parsed.DataSource != sqltask.SelectDataSource {
		if err := auth.Check(r.Context(), auth.Resource{Type: auth.Datasource, Name: parsed.DataSource}, auth.Write); err != nil {
			writeAuthError(w, err)
			return
		}
	}
	if err := checkTaskInputs(r.Context(), parsed); err != nil {
		if isAuthError(err) {
			writeAuthError(w, err)
		} else {
			writeInvalidInput(w, err.Error())
		}
		return
	}
	cmd := commands.SubmitTask{ID: parsed.ID, Type: parsed.Type, GroupID: parsed.GroupID, DataSource: parsed.DataSource, Payload: parsed.Payload}
	for _, iv := range locks {
		cmd.Locks = append(cmd.Locks, iv.String())
	}
	if _, ok := t.s.propose(w, r, cmd); !ok {
		return
	}
	t.o.Submitted()
	writeJSON(w, http.StatusOK, map[string]string{"taskId": id, "state": "RUNNING"})
}
