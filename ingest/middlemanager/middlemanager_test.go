package middlemanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
)

type panicRunner struct{}

func (panicRunner) Run(context.Context, Task, Env) (Report, error) { panic("kaboom") }

type failRunner struct{}

func (failRunner) Run(_ context.Context, _ Task, env Env) (Report, error) {
	env.Logf("about to fail")
	return nil, errors.New("bad things")
}

type reportRunner struct{}

func (reportRunner) Run(_ context.Context, t Task, env Env) (Report, error) {
	if strings.Contains(string(t.Payload), "invalid") {
		return Report(`[1]`), nil
	}
	return Report(`{"r":{"ok":true}}`), nil
}

func init() {
	Register("test_panic", panicRunner{})
	Register("test_fail", failRunner{})
	Register("test_report", reportRunner{})
}

func TestParseTask(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 10e6, time.UTC)
	task, locks, err := ParseTask([]byte(`{"type":"noop","runTime":5,"context":{"a":1}}`), now)
	if err != nil || locks != nil {
		t.Fatal(err, locks)
	}
	if !strings.HasPrefix(task.ID, "noop_none_") || !strings.HasSuffix(task.ID, "_2024-05-06T07:08:09.010Z") || len(task.ID) != len("noop_none_abcdefgh_2024-05-06T07:08:09.010Z") {
		t.Fatalf("generated id %q", task.ID)
	}
	var payload map[string]any
	json.Unmarshal(task.Payload, &payload)
	if task.GroupID != task.ID || task.DataSource != "none" || payload["id"] != task.ID || payload["groupId"] != task.ID ||
		payload["dataSource"] != "none" || payload["type"] != "noop" || payload["runTime"] != 5.0 || payload["context"] == nil {
		t.Fatalf("task %+v payload %s", task, task.Payload)
	}
	task, locks, err = ParseTask([]byte(`{"type":"kill","id":"k1","groupId":"g","dataSource":"wiki","interval":"2024-01-01/P1D"}`), now)
	if err != nil || task.ID != "k1" || task.GroupID != "g" || len(locks) != 1 || locks[0] != (interval.Interval{Start: 1704067200000, End: 1704153600000}) {
		t.Fatalf("kill %+v %v %v", task, locks, err)
	}
	task, _, _ = ParseTask([]byte(`{"type":"kill","dataSource":"wiki","interval":"2024-01-01/2024-01-02"}`), now)
	if !strings.HasPrefix(task.ID, "kill_wiki_") || !strings.HasSuffix(task.ID, "_2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z_2024-05-06T07:08:09.010Z") {
		t.Fatalf("kill id %q", task.ID)
	}
	for _, c := range []struct{ body, msg string }{
		{`nope`, "JSON object"},
		{`null`, "JSON object"},
		{`{}`, "missing type id"},
		{`{"type":"hadoop"}`, "Could not resolve type id 'hadoop'"},
		{`{"type":"noop","id":5}`, `"id" must be a string`},
		{`{"type":"noop","groupId":[]}`, `"groupId" must be a string`},
		{`{"type":"noop","dataSource":" "}`, "dataSource"},
		{`{"type":"noop","id":""}`, ""}, // an empty id gets one generated
		{`{"type":"noop","id":"x\ny"}`, "whitespace"},
		{`{"type":"noop","isReadyResult":"NO"}`, "isReadyResult"},
		{`{"type":"noop","isReadyTime":-1}`, "isReadyTime"},
		{`{"type":"kill","dataSource":"wiki","interval":"2024-01-01/2024-01-01"}`, "empty"},
		{`{"type":"kill","dataSource":"wiki","interval":"x"}`, "kill task"},
		{`{"type":"kill","dataSource":"wiki","interval":"2024/2025","batchSize":0}`, "batchSize"},
		{`{"type":"kill","dataSource":"wiki","interval":"2024/2025","limit":0}`, "limit must be > 0"},
		{`{"type":"kill","dataSource":"wiki","interval":"2024/2025","maxUsedStatusLastUpdatedTime":"2024"}`, "not supported"},
		{`{"type":"kill","dataSource":"wiki","interval":"2024/2025","versions":["v1"]}`, "versions"},
	} {
		t.Run(c.body, func(t *testing.T) {
			_, _, err := ParseTask([]byte(c.body), now)
			if c.msg == "" {
				if err != nil {
					t.Errorf("%s: %v", c.body, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s: error %v, want %q", c.body, err, c.msg)
			}
		})
	}
}

func FuzzParseTask(f *testing.F) {
	for _, s := range []string{`{"type":"noop"}`, `{"type":"kill","dataSource":"w","interval":"2024/2025"}`, `{"type":"noop","id":"a b"}`, `[]`, `{"type":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		task, _, err := ParseTask(b, time.Unix(0, 0))
		if err != nil {
			return
		}
		if task.ID == "" || task.DataSource == "" || !json.Valid(task.Payload) {
			t.Fatalf("accepted %q as %+v", b, task)
		}
	})
}

func newTestWorker(t *testing.T, capacity int) *Worker {
	t.Helper()
	w, err := New(Config{Host: "127.0.0.1:9", Capacity: capacity, DataDir: t.TempDir(), Overlords: []string{"http://127.0.0.1:1"},
		Client: nil, HeartbeatPeriod: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func noop(id string, ms int) Task {
	return Task{ID: id, Type: "noop", DataSource: "none", Payload: json.RawMessage(`{"runTime":` + itoa(ms) + `}`)}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// finished waits for a task to end and returns its unacknowledged status (the
// overlord is unreachable in these tests, so nothing acknowledges it).
func finished(t *testing.T, w *Worker, id string) StatusReport {
	t.Helper()
	var st StatusReport
	eventually.True(t, "task "+id+" to finish", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		var ok bool
		st, ok = w.unacked[id]
		return ok
	})
	return st
}

func TestWorkerRunsTasks(t *testing.T) {
	w := newTestWorker(t, 2)
	if err := w.Run(Task{ID: "x", Type: "nope"}); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
	if err := w.Run(Task{ID: "a/b", Type: "noop"}); err == nil {
		t.Fatal("invalid id accepted")
	}
	for _, id := range []string{"n1", "n2"} {
		if err := w.Run(noop(id, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(noop("n1", 5000)); err != nil {
		t.Fatalf("re-assigning a running task: %v", err)
	}
	if err := w.Run(noop("n3", 1)); !errors.Is(err, ErrAtCapacity) {
		t.Fatalf("over capacity: %v", err)
	}
	if ids := w.TaskIDs(); strings.Join(ids, ",") != "n1,n2" {
		t.Fatalf("running %v", ids)
	}
	if !w.Shutdown("n1", "Shutdown request from user") || w.Shutdown("zzz", "x") {
		t.Fatal("Shutdown result")
	}
	if st := finished(t, w, "n1"); st.Status != "FAILED" || st.ErrorMsg != "Shutdown request from user" || st.Worker != "127.0.0.1:9" ||
		st.Location == nil || st.Location.Port != 9 {
		t.Fatalf("shut down %+v", st)
	}
	if err := w.Run(noop("n1", 1)); err != nil {
		t.Fatalf("a finished task assigned again: %v", err)
	}
	if len(w.TaskIDs()) != 1 {
		t.Fatalf("a finished task ran twice: %v", w.TaskIDs())
	}
	w.Shutdown("n2", "stop")
	finished(t, w, "n2")
	run := func(id, typ, payload string) {
		t.Helper()
		if err := w.Run(Task{ID: id, Type: typ, DataSource: "d", Payload: json.RawMessage(payload)}); err != nil {
			t.Fatal(err)
		}
	}
	run("p", "test_panic", `{}`)
	run("f", "test_fail", `{}`)
	if st := finished(t, w, "p"); st.Status != "FAILED" || !strings.Contains(st.ErrorMsg, "panicked: kaboom") {
		t.Fatalf("panic %+v", st)
	}
	if st := finished(t, w, "f"); st.Status != "FAILED" || st.ErrorMsg != "bad things" {
		t.Fatalf("fail %+v", st)
	}
	run("r", "test_report", `{}`)
	run("bad-report", "test_report", `{"invalid":1}`)
	if st := finished(t, w, "r"); st.Status != "SUCCESS" || string(st.Report) != `{"r":{"ok":true}}` {
		t.Fatalf("report %+v", st)
	}
	if st := finished(t, w, "bad-report"); st.Status != "FAILED" || !strings.Contains(st.ErrorMsg, "invalid report") {
		t.Fatalf("bad report %+v", st)
	}
	// The log of a failed task holds the runner's lines.
	rc, err := w.OpenLog("f", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(b), "about to fail") || !strings.Contains(string(b), "Task[f] failed: bad things") {
		t.Fatalf("log %q", b)
	}
	// Stop cancels what runs and refuses new work.
	if err := w.Run(noop("late", 5000)); err != nil {
		t.Fatal(err)
	}
	w.Stop()
	<-w.Done()
	if st := finished(t, w, "late"); st.Status != "FAILED" || st.ErrorMsg != "middle manager is stopping" {
		t.Fatalf("stopped %+v", st)
	}
	if err := w.Run(noop("after", 1)); !errors.Is(err, ErrStopping) {
		t.Fatalf("run after stop: %v", err)
	}
}

func TestOpenLogOffsets(t *testing.T) {
	w := newTestWorker(t, 1)
	content := "0123456789abcdefghij"
	dir := w.taskDir("t1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "log"), []byte(content), 0o644)
	for _, c := range []struct {
		off  int64
		want string
	}{{0, content}, {5, content[5:]}, {-3, "hij"}, {-100, content}, {20, ""}, {500, ""}} {
		t.Run(fmt.Sprintf("offset %d", c.off), func(t *testing.T) {
			rc, err := w.OpenLog("t1", c.off)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if string(b) != c.want {
				t.Errorf("%q, want %q", b, c.want)
			}
		})
	}
	for _, id := range []string{"missing", "../etc", ""} {
		if _, err := w.OpenLog(id, 0); !errors.Is(err, ErrNoLog) {
			t.Errorf("%q: %v", id, err)
		}
	}
	long := strings.Repeat("x", 300)
	if d := filepath.Base(w.taskDir(long)); len(d) > 100 || !strings.HasPrefix(d, "task-") {
		t.Fatalf("long id dir %q", d)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{Host: "nohost", Capacity: 1, DataDir: "/tmp", Overlords: []string{"http://x"}},
		{Host: "h:1", Capacity: 0, DataDir: "/tmp", Overlords: []string{"http://x"}},
		{Host: "h:1", Capacity: 1, DataDir: "/tmp"},
		{Host: "h:1", Capacity: 1, Overlords: []string{"http://x"}},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

func TestActWithoutOverlord(t *testing.T) {
	w := newTestWorker(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := w.act(ctx, "t", Action{Type: ActionLockAcquire, Interval: "2024/2025"}); err == nil {
		t.Fatal("an action without an overlord succeeded")
	}
	if IsConflict(errors.New("x")) || !IsConflict(&ActionError{Status: 409}) {
		t.Fatal("IsConflict")
	}
	if _, err := (Env{}).Act(ctx, Action{}); err == nil {
		t.Fatal("Env without actions")
	}
}

// TestTaskTheOverlordEndedStops: a task whose RUNNING status the leader
// refuses as already complete (409) stops at once. The chaos suite saw a
// middle manager restarted during an assignment run a task the overlord had
// failed, beside the task started in its place: its rows were counted twice.
func TestTaskTheOverlordEndedStops(t *testing.T) {
	ov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathTaskStatus {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"task t1 is already complete (FAILED)"}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer ov.Close()
	w, err := New(Config{Host: "127.0.0.1:9", Capacity: 1, DataDir: t.TempDir(), Overlords: []string{ov.URL}, HeartbeatPeriod: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	if err := w.Run(noop("t1", 600000)); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the task the overlord ended to stop", func() bool { return len(w.TaskIDs()) == 0 })
}
