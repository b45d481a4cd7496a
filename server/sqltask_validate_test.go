package server

import (
	"encoding/json"
	"slices"
	"testing"
)

// sqlTaskIDs lists the ids of all tasks the overlord knows.
func sqlTaskIDs(t *testing.T, url string) []string {
	t.Helper()
	code, body, _ := call(t, "GET", url+"/svc/indexer/v1/tasks", "", "")
	var list []struct {
		ID string `json:"id"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("task list: %d %s", code, body)
	}
	ids := []string{}
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// A statement reading a datasource without used segments is refused before
// any task exists, with the message the task itself would fail with.
func TestSQLTaskMissingTableIsRefused(t *testing.T) {
	ts, _ := single(t, nil)
	url := ts.URL + "/svc/v2/sql/task"
	for _, c := range []struct{ query, msg string }{
		{`REPLACE INTO wiki OVERWRITE ALL SELECT __time, page FROM nosuchds PARTITIONED BY DAY`,
			`Object 'nosuchds' not found (line [1], column [58])`},
		// wiki_edits has no segments yet.
		{`INSERT INTO wiki SELECT __time, page FROM druid.wiki_edits PARTITIONED BY DAY`,
			`Object 'wiki_edits' not found (line [1], column [43])`},
	} {
		t.Run(c.query, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"query": c.query})
			code, got, _ := call(t, "POST", url, "application/json", string(body))
			var e structuredError
			if code != 400 || json.Unmarshal([]byte(got), &e) != nil {
				t.Fatalf("%s: %d %s", c.query, code, got)
			}
			want := structuredError{Error: "svcException", ErrorCode: "invalidInput", Persona: "USER", Category: "INVALID_INPUT",
				ErrorMessage: c.msg, Context: map[string]string{}}
			if e.Error != want.Error || e.ErrorCode != want.ErrorCode || e.Persona != want.Persona || e.Category != want.Category ||
				e.ErrorMessage != want.ErrorMessage || e.Context == nil || len(e.Context) != 0 {
				t.Errorf("%s: %s", c.query, got)
			}
		})
	}
	if ids := sqlTaskIDs(t, ts.URL); len(ids) != 0 {
		t.Fatalf("refused statements created tasks %v", ids)
	}

	// Once the datasources have used segments, statements reading them (or a
	// CTE shadowing a missing name, or only EXTERN) become tasks.
	publishFixture(t, ts.URL)
	var created []string
	for _, q := range []string{
		`INSERT INTO wiki SELECT __time, page FROM druid.wiki_edits PARTITIONED BY DAY`,
		`REPLACE INTO wiki OVERWRITE ALL WITH nosuchds AS (SELECT __time, page FROM wiki_edits)
SELECT * FROM nosuchds UNION ALL SELECT __time, a AS page FROM other PARTITIONED BY DAY`,
		`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time, page FROM TABLE(EXTERN('{"type":"inline","data":"x"}',
'{"type":"csv","columns":["ts","page"]}')) EXTEND (ts VARCHAR, page VARCHAR) PARTITIONED BY DAY`,
	} {
		body, _ := json.Marshal(map[string]string{"query": q})
		code, got, _ := call(t, "POST", url, "application/json", string(body))
		var ok struct{ TaskID, State string }
		if code != 200 || json.Unmarshal([]byte(got), &ok) != nil || ok.TaskID == "" || ok.State != "RUNNING" {
			t.Fatalf("%s: %d %s", q, code, got)
		}
		created = append(created, ok.TaskID)
	}
	ids := sqlTaskIDs(t, ts.URL)
	slices.Sort(ids)
	slices.Sort(created)
	if !slices.Equal(ids, created) {
		t.Errorf("tasks %v, want %v", ids, created)
	}
}
