package server

import (
	"strings"
	"testing"
	"time"

	"strata/fsm"
	"strata/internal/eventually"
)

// With a middle manager in the cluster, the coordinator's kill DELETE starts an
// api-issued kill task: it shows up in the task APIs and does the deletion.
func TestKillDeleteStartsKillTask(t *testing.T) {
	ts, n := tkControl(t, "10s")
	startTkWorker(t, ts.URL, 2, "")
	eventually.True(t, "the worker to register", func() bool {
		workers := 0
		n.FSM().Read(func(s *fsm.State) { workers = len(s.Workers()) })
		return workers > 0
	})
	segs := []string{segJSON("wiki", "2024-01-01", "v1"), segJSON("wiki", "2024-01-05", "v1")}
	if code, body, _ := call(t, "POST", ts.URL+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"wiki","segments":[`+strings.Join(segs, ",")+`]}`); code != 200 {
		t.Fatalf("publish: %d %s", code, body)
	}
	if code, body, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/datasources/wiki/markUnused", "application/json",
		`{"interval":"2024-01-01/2024-01-02"}`); code != 200 {
		t.Fatalf("markUnused: %d %s", code, body)
	}
	if code, body, _ := call(t, "DELETE", ts.URL+"/svc/coordinator/v1/datasources/wiki/intervals/2024-01-01_2024-01-03", "", ""); code != 200 || body != "" {
		t.Fatalf("kill: %d %q", code, body)
	}
	ids := listIDs(t, ts.URL+"/svc/indexer/v1/tasks?type=kill")
	if len(ids) != 1 || !strings.HasPrefix(ids[0], "api-issued_kill_wiki_") {
		t.Fatalf("kill tasks %v", ids)
	}
	waitStatus(t, ts.URL, ids[0], "SUCCESS", 10*time.Second)
	n.FSM().Read(func(s *fsm.State) {
		if got := len(s.Segments("wiki")); got != 1 {
			t.Fatalf("%d segments left, want 1 (the used one outside the interval)", got)
		}
		if len(s.PendingFileDeletions()) != 1 {
			t.Fatalf("pending deletions %v", s.PendingFileDeletions())
		}
	})
}
