package server

import (
	"encoding/json"
	"testing"
	"time"
)

// The overlord leader stamps a SQL task's CURRENT_TIMESTAMP when it accepts
// the statement, into the task's payload, so the worker that runs it (later,
// or again after a retry) computes CURRENT_TIMESTAMP and CURRENT_DATE from
// that one instant rather than from its own clock.
func TestSQLTaskCarriesItsCurrentTimestamp(t *testing.T) {
	ts, _ := single(t, nil)
	before := time.Now().UnixMilli()
	body, _ := json.Marshal(map[string]string{"query": `INSERT INTO t SELECT CURRENT_TIMESTAMP AS __time, page FROM TABLE(EXTERN('{"type":"inline","data":"x"}',
'{"type":"csv","columns":["page"]}')) EXTEND (page VARCHAR) PARTITIONED BY DAY`})
	code, got, _ := call(t, "POST", ts.URL+"/svc/v2/sql/task", "application/json", string(body))
	after := time.Now().UnixMilli()
	var ok struct{ TaskID string }
	if code != 200 || json.Unmarshal([]byte(got), &ok) != nil || ok.TaskID == "" {
		t.Fatalf("submit: %d %s", code, got)
	}
	code, got, _ = call(t, "GET", ts.URL+"/svc/indexer/v1/task/"+ok.TaskID, "", "")
	var task struct {
		Payload struct {
			Now *int64 `json:"sqlCurrentTimestamp"`
		} `json:"payload"`
	}
	if code != 200 || json.Unmarshal([]byte(got), &task) != nil {
		t.Fatalf("task: %d %s", code, got)
	}
	if n := task.Payload.Now; n == nil || *n < before || *n > after {
		t.Errorf("sqlCurrentTimestamp %v, want one between %d and %d: %s", n, before, after, got)
	}
}
