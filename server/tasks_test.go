package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"strata/cluster"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/interval"
	"strata/overlord"
	"strata/props"
)

const ip = "/svc/indexer/v1"

// tkControl starts a one-node control plane whose workers time out after hb.
func tkControl(t *testing.T, hb string) (*httptest.Server, *cluster.Node) {
	t.Helper()
	p := props.Defaults()
	p.Set("svc.worker.heartbeatTimeout", hb)
	return single(t, p)
}

// tkWorker is an in-process middle manager with a real listener.
type tkWorker struct {
	mm   *middlemanager.Worker
	ts   *httptest.Server
	host string
	url  string
}

func startTkWorker(t *testing.T, control string, capacity int, category string) *tkWorker {
	t.Helper()
	dir := t.TempDir()
	ts := httptest.NewUnstartedServer(nil)
	host := ts.Listener.Addr().String()
	mm, err := middlemanager.New(middlemanager.Config{Host: host, Capacity: capacity, Category: category, Version: "1",
		DataDir: dir, Overlords: []string{control}, HeartbeatPeriod: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := props.Defaults()
	middlemanager.Attach(p, mm)
	s, err := New(Options{Roles: []string{RoleMiddleManager}, Props: p})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	mm.Start()
	w := &tkWorker{mm: mm, ts: ts, host: host, url: ts.URL}
	t.Cleanup(func() { w.kill(); middlemanager.Detach(p) })
	return w
}

// kill stops the worker as a process exit would: no more heartbeats or reports.
func (w *tkWorker) kill() {
	w.mm.Stop()
	w.ts.Close()
}

type tkStatus struct {
	ID                 string  `json:"id"`
	GroupID            string  `json:"groupId"`
	Type               string  `json:"type"`
	CreatedTime        string  `json:"createdTime"`
	QueueInsertionTime string  `json:"queueInsertionTime"`
	StatusCode         string  `json:"statusCode"`
	Status             string  `json:"status"`
	RunnerStatusCode   string  `json:"runnerStatusCode"`
	Duration           int64   `json:"duration"`
	DataSource         string  `json:"dataSource"`
	ErrorMsg           *string `json:"errorMsg"`
	Location           struct {
		Host    *string `json:"host"`
		Port    int     `json:"port"`
		TLSPort int     `json:"tlsPort"`
	} `json:"location"`
}

func taskStatusOf(t *testing.T, base, id string) tkStatus {
	t.Helper()
	code, body, _ := call(t, "GET", base+ip+"/task/"+url.PathEscape(id)+"/status", "", "")
	var out struct {
		Task   string   `json:"task"`
		Status tkStatus `json:"status"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Task != id {
		t.Fatalf("status of %s: %d %s", id, code, body)
	}
	return out.Status
}

func submitTask(t *testing.T, base, spec string) string {
	t.Helper()
	code, body, _ := call(t, "POST", base+ip+"/task", "application/json", spec)
	var out struct {
		Task string `json:"task"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Task == "" {
		t.Fatalf("submit %s: %d %s", spec, code, body)
	}
	return out.Task
}

func waitStatus(t *testing.T, base, id, status string, d time.Duration) tkStatus {
	t.Helper()
	var st tkStatus
	eventually.True(t, id+" to be "+status, func() bool {
		st = taskStatusOf(t, base, id)
		if st.Status != "RUNNING" && st.Status != status {
			msg := ""
			if st.ErrorMsg != nil {
				msg = *st.ErrorMsg
			}
			t.Fatalf("task %s ended %s (%s), want %s", id, st.Status, msg, status)
		}
		return st.Status == status
	}, eventually.Within(d))
	return st
}

// assignmentRounds waits until n's overlord has finished two more assignment
// rounds: every task pending at the call was considered for a worker, so a
// check afterwards that one was not assigned is exact, not a guess after a
// fixed sleep.
func assignmentRounds(t *testing.T, n *cluster.Node) {
	t.Helper()
	o := overlord.For(n)
	if o == nil {
		t.Fatal("no overlord attached")
	}
	from := o.Rounds()
	eventually.True(t, "two more assignment rounds", func() bool { return o.Rounds() >= from+2 })
}

// waitStarted waits until the task's worker confirmed the start.
func waitStarted(t *testing.T, n *cluster.Node, id string) string {
	t.Helper()
	var worker string
	eventually.True(t, id+" to start", func() bool {
		started := false
		n.FSM().Read(func(s *fsm.State) {
			if r, ok := s.Task(id); ok {
				started, worker = r.StartedMs != 0 && r.Active(), r.Worker
			}
		})
		return started
	})
	return worker
}

func listIDs(t *testing.T, url string) []string {
	t.Helper()
	code, body, _ := call(t, "GET", url, "", "")
	var list []tkStatus
	if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	ids := []string{}
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestNoopTaskLifecycle(t *testing.T) {
	ts, n := tkControl(t, "10s")
	// No worker yet: the task is stored and pending.
	id := submitTask(t, ts.URL, `{"type":"noop","runTime":300,"context":{"x":1}}`)
	if !strings.HasPrefix(id, "noop_none_") {
		t.Fatalf("generated id %q", id)
	}
	st := taskStatusOf(t, ts.URL, id)
	if st.Status != "RUNNING" || st.StatusCode != "RUNNING" || st.RunnerStatusCode != "PENDING" || st.Duration != -1 ||
		st.Location.Host != nil || st.Location.Port != -1 || st.Location.TLSPort != -1 || st.ErrorMsg != nil ||
		st.DataSource != "none" || st.GroupID != id || st.Type != "noop" || st.QueueInsertionTime != st.CreatedTime {
		t.Fatalf("pending status %+v", st)
	}
	if ids := listIDs(t, ts.URL+ip+"/pendingTasks"); len(ids) != 1 || ids[0] != id {
		t.Fatalf("pendingTasks %v", ids)
	}
	for _, path := range []string{"/waitingTasks", "/runningTasks", "/completeTasks", "/tasks?state=running"} {
		if ids := listIDs(t, ts.URL+ip+path); len(ids) != 0 {
			t.Fatalf("%s %v", path, ids)
		}
	}
	code, body, _ := call(t, "GET", ts.URL+ip+"/task/"+id, "", "")
	var got struct {
		Task    string         `json:"task"`
		Payload map[string]any `json:"payload"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || got.Payload["id"] != id || got.Payload["groupId"] != id ||
		got.Payload["dataSource"] != "none" || got.Payload["runTime"] != 300.0 || got.Payload["context"] == nil {
		t.Fatalf("GET task: %d %s", code, body)
	}
	expectText(t, "GET", ts.URL+ip+"/task/"+id+"/reports", 404, "No task reports were found for this task. The task may not exist, or it may not have completed yet.")
	expectText(t, "GET", ts.URL+ip+"/task/"+id+"/log", 404, "No log was found for this task. The task may not exist, or it may not have begun running yet.")

	// A worker arrives: the task runs there and succeeds.
	w := startTkWorker(t, ts.URL, 2, "")
	worker := waitStarted(t, n, id)
	if worker != w.host {
		t.Fatalf("ran on %s, want %s", worker, w.host)
	}
	if ids := listIDs(t, ts.URL+ip+"/runningTasks"); len(ids) != 1 || ids[0] != id {
		t.Fatalf("runningTasks %v", ids)
	}
	st = waitStatus(t, ts.URL, id, "SUCCESS", 5*time.Second)
	if st.RunnerStatusCode != "NONE" || st.Duration < 250 || st.Location.Host == nil || *st.Location.Host != "127.0.0.1" ||
		fmt.Sprintf("127.0.0.1:%d", st.Location.Port) != w.host || st.QueueInsertionTime != "1970-01-01T00:00:00.000Z" {
		t.Fatalf("complete status %+v", st)
	}
	if ids := listIDs(t, ts.URL+ip+"/completeTasks"); len(ids) != 1 || ids[0] != id {
		t.Fatalf("completeTasks %v", ids)
	}
	code, body, h := call(t, "GET", ts.URL+ip+"/task/"+id+"/log", "", "")
	if code != 200 || !strings.Contains(body, "Running noop task["+id+"]") || !strings.Contains(body, "Woke up!") ||
		h.Get("Content-Type") != "text/plain; charset=UTF-8" {
		t.Fatalf("log: %d %q", code, body)
	}
	// The worker is listed with its record; its slot is free again.
	code, body, _ = call(t, "GET", ts.URL+ip+"/workers", "", "")
	var workers []map[string]any
	if code != 200 || json.Unmarshal([]byte(body), &workers) != nil || len(workers) != 1 {
		t.Fatalf("workers: %d %s", code, body)
	}
	wk := workers[0]["worker"].(map[string]any)
	if wk["host"] != w.host || wk["scheme"] != "http" || wk["ip"] != "127.0.0.1" || wk["capacity"] != 2.0 || wk["version"] != "1" ||
		wk["category"] != "_default_worker_category" || workers[0]["currCapacityUsed"] != 0.0 || workers[0]["blacklistedUntil"] != nil ||
		workers[0]["lastCompletedTaskTime"] == nil || len(workers[0]["runningTasks"].([]any)) != 0 {
		t.Fatalf("worker record %s", body)
	}
	n.FSM().Read(func(s *fsm.State) {
		if e := s.Audit(fsm.AuditQuery{Type: "task", Limit: 5}); len(e) != 1 || e[0].Key != "none" || !strings.Contains(e[0].Payload, id) {
			t.Fatalf("audit %+v", e)
		}
	})
}

func expectText(t *testing.T, method, url string, code int, want string) {
	t.Helper()
	gotCode, got, h := call(t, method, url, "", "")
	if gotCode != code || got != want || (want != "" && !strings.HasPrefix(h.Get("Content-Type"), "text/plain")) {
		t.Fatalf("%s %s: got %d %q (%s), want %d %q", method, url, gotCode, got, h.Get("Content-Type"), code, want)
	}
}

func TestTaskCapacityIsRespected(t *testing.T) {
	ts, n := tkControl(t, "10s")
	w := startTkWorker(t, ts.URL, 1, "")
	a := submitTask(t, ts.URL, `{"type":"noop","id":"cap-a","runTime":400}`)
	b := submitTask(t, ts.URL, `{"type":"noop","id":"cap-b","runTime":100}`)
	waitStarted(t, n, a)
	if st := taskStatusOf(t, ts.URL, b); st.RunnerStatusCode != "PENDING" {
		t.Fatalf("second task %+v while the only slot is taken", st)
	}
	eventually.True(t, "the second task to run", func() bool {
		if len(w.mm.TaskIDs()) > 1 {
			t.Fatal("the worker ran more tasks than its capacity")
		}
		return taskStatusOf(t, ts.URL, b).Status == "SUCCESS"
	})
	if st := taskStatusOf(t, ts.URL, a); st.Status != "SUCCESS" {
		t.Fatalf("first task %+v", st)
	}
}

func TestSelectStrategiesPickWorkers(t *testing.T) {
	ts, n := tkControl(t, "10s")
	w1 := startTkWorker(t, ts.URL, 4, "hot")
	w2 := startTkWorker(t, ts.URL, 4, "cold")
	eventually.True(t, "both workers", func() bool {
		_, body, _ := call(t, "GET", ts.URL+ip+"/workers", "", "")
		return strings.Count(body, `"host"`) == 2
	})
	setStrategy := func(s string) {
		t.Helper()
		if code, body, _ := call(t, "POST", ts.URL+ip+"/worker", "application/json", `{"selectStrategy":`+s+`}`); code != 200 {
			t.Fatalf("set strategy: %d %s", code, body)
		}
	}
	long := func(id, ds string) string {
		return submitTask(t, ts.URL, fmt.Sprintf(`{"type":"noop","id":%q,"dataSource":%q,"runTime":60000}`, id, ds))
	}
	// fillCapacity keeps using the busiest worker.
	setStrategy(`{"type":"fillCapacity"}`)
	first := waitStarted(t, n, long("f1", "wiki"))
	if second := waitStarted(t, n, long("f2", "wiki")); second != first {
		t.Fatalf("fillCapacity put f2 on %s, f1 on %s", second, first)
	}
	// equalDistribution picks the least used worker.
	setStrategy(`{"type":"equalDistribution"}`)
	other := w1.host
	if first == w1.host {
		other = w2.host
	}
	if got := waitStarted(t, n, long("e1", "wiki")); got != other {
		t.Fatalf("equalDistribution put e1 on %s, want %s", got, other)
	}
	// A strong affinity pins a datasource to its worker even when the other is emptier.
	setStrategy(fmt.Sprintf(`{"type":"equalDistribution","affinityConfig":{"affinity":{"pinned":[%q]},"strong":true}}`, first))
	if got := waitStarted(t, n, long("a1", "pinned")); got != first {
		t.Fatalf("affinity put a1 on %s, want %s", got, first)
	}
	// A category spec sends noop tasks to the cold worker.
	setStrategy(`{"type":"equalDistributionWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":"cold"}},"strong":true}}`)
	if got := waitStarted(t, n, long("c1", "wiki")); got != w2.host {
		t.Fatalf("category put c1 on %s, want %s", got, w2.host)
	}
	// The strong category waits when the cold worker is full.
	for i := 2; ; i++ {
		var used int
		n.FSM().Read(func(s *fsm.State) { used = s.WorkerLoad(w2.host) })
		if used == 4 {
			break
		}
		waitStarted(t, n, long(fmt.Sprintf("c%d", i), "wiki"))
	}
	long("c-wait", "wiki")
	assignmentRounds(t, n)
	if st := taskStatusOf(t, ts.URL, "c-wait"); st.RunnerStatusCode != "PENDING" {
		t.Fatalf("strong category with a full category: %+v", st)
	}
	if code, body, _ := call(t, "POST", ts.URL+ip+"/datasources/wiki/shutdownAllTasks", "", ""); code != 200 || body != `{"dataSource":"wiki"}` {
		t.Fatalf("shutdownAllTasks: %d %s", code, body)
	}
	expectText(t, "POST", ts.URL+ip+"/datasources/wiki/shutdownAllTasks", 404, "")
}

func TestTaskShutdownCancelsTheRun(t *testing.T) {
	ts, n := tkControl(t, "10s")
	w := startTkWorker(t, ts.URL, 2, "")
	id := submitTask(t, ts.URL, `{"type":"noop","id":"long one","runTime":60000}`)
	waitStarted(t, n, id)
	if got := w.mm.TaskIDs(); len(got) != 1 || got[0] != id {
		t.Fatalf("worker tasks %v", got)
	}
	path := ts.URL + ip + "/task/long%20one/shutdown"
	if code, body, _ := call(t, "POST", path, "", ""); code != 200 || body != `{"task":"long one"}` {
		t.Fatalf("shutdown: %d %s", code, body)
	}
	st := taskStatusOf(t, ts.URL, "long one")
	if st.Status != "FAILED" || st.ErrorMsg == nil || *st.ErrorMsg != "Shutdown request from user" || st.RunnerStatusCode != "NONE" {
		t.Fatalf("after shutdown %+v", st)
	}
	eventually.True(t, "the worker to cancel the task", func() bool { return len(w.mm.TaskIDs()) == 0 })
	_, body, _ := call(t, "GET", ts.URL+ip+"/task/long%20one/log", "", "")
	if !strings.Contains(body, "Interrupted: Shutdown request from user") {
		t.Fatalf("log after shutdown: %q", body)
	}
	// Shutting down a finished task is a no-op that still answers 200; an
	// unknown task is a 404 (TestTaskShutdownOfUnknownTaskIs404).
	if code, _, _ := call(t, "POST", path, "", ""); code != 200 {
		t.Fatalf("%s: %d", path, code)
	}
	if st := taskStatusOf(t, ts.URL, "long one"); *st.ErrorMsg != "Shutdown request from user" {
		t.Fatalf("status changed: %+v", st)
	}
}

func TestTasksOfADeadWorkerFail(t *testing.T) {
	ts, n := tkControl(t, "800ms")
	w := startTkWorker(t, ts.URL, 2, "")
	id := submitTask(t, ts.URL, `{"type":"noop","runTime":60000}`)
	waitStarted(t, n, id)
	killed := time.Now()
	w.kill()
	st := waitStatus(t, ts.URL, id, "FAILED", 5*time.Second)
	if st.ErrorMsg == nil || !strings.Contains(*st.ErrorMsg, "worker "+w.host+" disappeared") {
		t.Fatalf("status %+v", st)
	}
	if since := time.Since(killed); since < 700*time.Millisecond {
		t.Fatalf("failed after %s, before the heartbeat timeout", since)
	}
	if _, body, _ := call(t, "GET", ts.URL+ip+"/workers", "", ""); body != "[]" {
		t.Fatalf("dead worker still listed: %s", body)
	}
}

// segJSON builds a segment document for the internal publish endpoint.
func segJSON(ds, day, version string) string {
	iv, _ := interval.Parse(day + "/P1D")
	return fmt.Sprintf(`{"dataSource":%q,"interval":"%s/P1D","version":%q,"loadSpec":%s,`+
		`"dimensions":"page","metrics":"count","shardSpec":{"type":"numbered","partitionNum":0,"partitions":1},"binaryVersion":9,"size":10}`,
		ds, day, version, loadSpecOf(ds, interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), version, 0))
}

func TestKillTaskWaitsForIngestionLock(t *testing.T) {
	ts, n := tkControl(t, "10s")
	w := startTkWorker(t, ts.URL, 3, "")
	segs := []string{segJSON("wiki", "2024-01-01", "v1"), segJSON("wiki", "2024-01-02", "v1"), segJSON("wiki", "2024-01-04", "v1")}
	if code, body, _ := call(t, "POST", ts.URL+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"wiki","segments":[`+strings.Join(segs, ",")+`]}`); code != 200 {
		t.Fatalf("publish: %d %s", code, body)
	}
	if code, body, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/datasources/wiki/markUnused", "application/json",
		`{"interval":"2024-01-01/2024-01-03"}`); code != 200 {
		t.Fatalf("markUnused: %d %s", code, body)
	}
	// An "ingestion" holds a lock over the first days of January.
	ing := submitTask(t, ts.URL, `{"type":"noop","id":"ingest","dataSource":"wiki","runTime":60000}`)
	waitStarted(t, n, ing)
	act := func(task, action, iv string) (int, string) {
		code, body, _ := call(t, "POST", ts.URL+middlemanager.PathTaskAction, "application/json",
			fmt.Sprintf(`{"taskId":%q,"worker":%q,"action":{"type":%q,"interval":%q}}`, task, w.host, action, iv))
		return code, body
	}
	if code, body := act(ing, "lockAcquire", "2024-01-01/2024-01-10"); code != 200 || !strings.Contains(body, `"version":"`) {
		t.Fatalf("lock: %d %s", code, body)
	}
	other := submitTask(t, ts.URL, `{"type":"noop","id":"other","dataSource":"wiki","runTime":60000}`)
	waitStarted(t, n, other)
	if code, body := act(other, "lockAcquire", "2024-01-05/2024-01-06"); code != 409 || !strings.Contains(body, "task ingest holds") {
		t.Fatalf("overlapping lock: %d %s", code, body)
	}
	if code, body := act(other, "killSegments", "2024-01-01/2024-01-03"); code != 409 || !strings.Contains(body, "holds no lock") {
		t.Fatalf("kill without a lock: %d %s", code, body)
	}
	if code, body := act("ingest", "lockAcquire", "garbage"); code != 400 {
		t.Fatalf("bad interval: %d %s", code, body)
	}
	if code, body, _ := call(t, "POST", ts.URL+middlemanager.PathTaskAction, "application/json",
		`{"taskId":"ingest","worker":"elsewhere:1","action":{"type":"lockRelease"}}`); code != 409 {
		t.Fatalf("action from the wrong worker: %d %s", code, body)
	}
	// The kill waits for the ingestion's lock.
	kill := submitTask(t, ts.URL, `{"type":"kill","dataSource":"wiki","interval":"2024-01-01/2024-01-03","markAsUnused":false,"batchSize":null,"limit":null}`)
	if !strings.HasPrefix(kill, "kill_wiki_") || !strings.Contains(kill, "_2024-01-01T00:00:00.000Z_2024-01-03T00:00:00.000Z_") {
		t.Fatalf("kill id %q", kill)
	}
	if ids := listIDs(t, ts.URL+ip+"/waitingTasks"); len(ids) != 1 || ids[0] != kill {
		t.Fatalf("waitingTasks %v", ids)
	}
	assignmentRounds(t, n)
	if st := taskStatusOf(t, ts.URL, kill); st.RunnerStatusCode != "WAITING" {
		t.Fatalf("kill ran while the lock was held: %+v", st)
	}
	if code, _, _ := call(t, "POST", ts.URL+ip+"/task/ingest/shutdown", "", ""); code != 200 {
		t.Fatal("shutdown ingest")
	}
	waitStatus(t, ts.URL, kill, "SUCCESS", 5*time.Second)
	code, body, _ := call(t, "GET", ts.URL+ip+"/task/"+kill+"/reports", "", "")
	want := `{"killUnusedSegments":{"type":"killUnusedSegments","taskId":"` + kill + `","payload":{"numSegmentsKilled":2,"numBatchesProcessed":1}}}`
	if code != 200 || body != want {
		t.Fatalf("reports: %d %s\nwant %s", code, body, want)
	}
	n.FSM().Read(func(s *fsm.State) {
		if segs := s.Segments("wiki"); len(segs) != 1 {
			t.Fatalf("segments left: %d", len(segs))
		}
		e := s.Audit(fsm.AuditQuery{Type: fsm.AuditSegmentKill, Limit: 1})
		if len(e) != 1 || !strings.Contains(e[0].Payload, kill) {
			t.Fatalf("kill audit %+v", e)
		}
		if locks := s.DataSourceLocks("wiki"); len(locks) != 0 {
			t.Fatalf("locks left %+v", locks)
		}
	})
	// Now the other task may lock what the kill held.
	if code, body := act(other, "lockAcquire", "2024-01-01/2024-01-06"); code != 200 {
		t.Fatalf("lock after the kill: %d %s", code, body)
	}
	if code, body := act(other, "lockRelease", ""); code != 200 || body != `{"released":1}` {
		t.Fatalf("release: %d %s", code, body)
	}
}

func TestTaskEndpointErrors(t *testing.T) {
	ts, _ := tkControl(t, "10s")
	submitTask(t, ts.URL, `{"type":"noop","id":"dup","runTime":1}`)
	cases := []struct {
		method, path, ctype, body string
		status                    int
		msg                       string
	}{
		{"POST", ip + "/task", "text/plain", `{"type":"noop"}`, 415, "application/json"},
		{"POST", ip + "/task", "application/json", `{"type":`, 400, "JSON object"},
		{"POST", ip + "/task", "application/json", `[1]`, 400, "JSON object"},
		{"POST", ip + "/task", "application/json", `null`, 400, "JSON object"},
		{"POST", ip + "/task", "application/json", `{"id":"x"}`, 400, "missing type id"},
		{"POST", ip + "/task", "application/json", `{"type":"index_magic"}`, 400, "Could not resolve type id 'index_magic'"},
		{"POST", ip + "/task", "application/json", `{"type":7}`, 400, `"type" must be a string`},
		{"POST", ip + "/task", "application/json", `{"type":"noop","id":"a/b"}`, 400, "'/'"},
		{"POST", ip + "/task", "application/json", `{"type":"noop","id":".hidden"}`, 400, "'.'"},
		{"POST", ip + "/task", "application/json", `{"type":"noop","id":"dup"}`, 400, "Task[dup] already exists!"},
		{"POST", ip + "/task", "application/json", `{"type":"noop","runTime":-1}`, 400, "runTime"},
		{"POST", ip + "/task", "application/json", `{"type":"noop","runTime":"soon"}`, 400, "noop task"},
		{"POST", ip + "/task", "application/json", `{"type":"kill","dataSource":"wiki"}`, 400, "interval is required"},
		{"POST", ip + "/task", "application/json", `{"type":"kill","dataSource":"wiki","interval":"2024/2025","limit":5}`, 400, "limit"},
		{"POST", ip + "/task", "application/json", `{"type":"kill","interval":"2024/2025"}`, 400, "dataSource is required"},
		{"POST", ip + "/task", "application/json", `{"type":"noop","dataSource":"a/b"}`, 400, "'/'"},
		{"GET", ip + "/task/dup/log?offset=abc", "", "", 400, "offset"},
		{"GET", ip + "/tasks?max=-1", "", "", 400, "max"},
		{"GET", ip + "/completeTasks?n=x", "", "", 400, "n"},
		{"GET", ip + "/tasks?createdTimeInterval=yesterday", "", "", 400, "createdTimeInterval"},
		{"POST", ip + "/taskStatus", "application/json", `{"a":1}`, 400, "array"},
		{"POST", ip + "/taskStatus", "text/plain", `["dup"]`, 415, "application/json"},
		{"POST", ip + "/worker/nope:1/enable", "", "", 404, "not registered"},
		{"POST", ip + "/worker/nope:1/disable", "", "", 404, "not registered"},
		{"POST", middlemanager.PathHeartbeat, "application/json", `{"host":"nope:1"}`, 404, "not registered"},
		{"POST", middlemanager.PathRegister, "application/json", `{"host":"nope","capacity":1}`, 400, "host:port"},
		{"POST", middlemanager.PathTaskStatus, "application/json", `{"id":"dup","worker":"nope:1","status":"SUCCESS"}`, 409, "never handed"},
		{"POST", middlemanager.PathTaskStatus, "application/json", `{"id":"zzz","worker":"nope:1","status":"SUCCESS"}`, 404, "does not exist"},
		{"POST", middlemanager.PathTaskAction, "application/json", `{"taskId":"zzz","worker":"nope:1","action":{"type":"lockAcquire"}}`, 404, "does not exist"},
		{"POST", middlemanager.PathWorkerEnabled, "application/json", `{"host":"nope:1","enabled":false}`, 404, "not registered"},
		{"POST", middlemanager.PathTaskStatus, "application/json", `nope`, 400, "invalid request body"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			code, body, _ := call(t, c.method, ts.URL+c.path, c.ctype, c.body)
			var e ErrorBody
			if code != c.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, c.msg) {
				t.Errorf("%s %s %s: got %d %s, want %d with %q", c.method, c.path, c.body, code, body, c.status, c.msg)
			}
		})
	}
	expect404 := func(path, want string) {
		t.Helper()
		if code, body, _ := call(t, "GET", ts.URL+ip+path, "", ""); code != 404 || body != want {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	expect404("/task/nope", `{"task":"nope","payload":null}`)
	expect404("/task/nope/status", `{"task":"nope","status":null}`)
	expectText(t, "GET", ts.URL+ip+"/tasks?state=Bogus", 400, "Invalid state : Bogus, valid values are: [pending, waiting, running, complete]")
	if code, body, _ := call(t, "POST", ts.URL+ip+"/taskStatus", "application/json", `[]`); code != 400 || body != "No TaskIds provided." {
		t.Fatalf("empty taskStatus: %d %s", code, body)
	}
	code, body, _ := call(t, "POST", ts.URL+ip+"/taskStatus", "application/json", `["dup","nope"]`)
	if code != 200 || body != `{"dup":{"id":"dup","status":"RUNNING","duration":-1,"errorMsg":null,"location":{"host":null,"port":-1,"tlsPort":-1}}}` {
		t.Fatalf("taskStatus: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+ip+"/totalWorkerCapacity", "", ""); code != 200 ||
		body != `{"currentClusterCapacity":0,"maximumCapacityWithAutoScale":-1,"usedClusterCapacity":0}` {
		t.Fatalf("totalWorkerCapacity: %d %s", code, body)
	}
}

func TestTaskListsAndFilters(t *testing.T) {
	ts, _ := tkControl(t, "10s")
	startTkWorker(t, ts.URL, 4, "")
	var ids []string
	for i, spec := range []string{
		`{"type":"noop","id":"l1","dataSource":"a","runTime":1}`,
		`{"type":"noop","id":"l2","dataSource":"b","runTime":1}`,
		`{"type":"kill","id":"l3","dataSource":"a","interval":"2024/2025"}`,
	} {
		ids = append(ids, submitTask(t, ts.URL, spec))
		waitStatus(t, ts.URL, ids[i], "SUCCESS", 5*time.Second)
	}
	submitTask(t, ts.URL, `{"type":"noop","id":"l4","dataSource":"a","runTime":60000}`)
	check := func(path string, want ...string) {
		t.Helper()
		if got := listIDs(t, ts.URL+ip+path); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	check("/tasks", "l3", "l2", "l1", "l4")
	check("/tasks?state=COMPLETE", "l3", "l2", "l1")
	check("/tasks?datasource=a", "l3", "l1", "l4")
	check("/tasks?type=kill", "l3")
	check("/tasks?max=1", "l3", "l4")
	check("/tasks?state=complete&max=2&datasource=a", "l3", "l1")
	check("/completeTasks?n=2", "l3", "l2")
	check("/tasks?createdTimeInterval=2000-01-01_2000-01-02", "l3", "l2", "l1", "l4")
	time.Sleep(5 * time.Millisecond)
	check("/tasks?createdTimeInterval=2000-01-01T00:00:00.000Z/2000-01-01T00:00:00.001Z", "l4")
}

func TestWorkerEndpointsAndEnablement(t *testing.T) {
	ts, n := tkControl(t, "10s")
	w := startTkWorker(t, ts.URL, 2, "")
	eventually.True(t, "registration", func() bool {
		_, body, _ := call(t, "GET", ts.URL+ip+"/workers", "", "")
		return strings.Contains(body, w.host)
	})
	wp := w.url + "/svc/worker/v1"
	if code, body, _ := call(t, "GET", wp+"/enabled", "", ""); code != 200 || body != `{"`+w.host+`":true}` {
		t.Fatalf("enabled: %d %s", code, body)
	}
	if code, body, _ := call(t, "POST", wp+"/disable", "", ""); code != 200 || body != `{"`+w.host+`":"disabled"}` {
		t.Fatalf("disable: %d %s", code, body)
	}
	if _, body, _ := call(t, "GET", ts.URL+ip+"/workers", "", ""); !strings.Contains(body, `"version":""`) {
		t.Fatalf("disabled worker listed as %s", body)
	}
	// A disabled worker gets no new tasks.
	id := submitTask(t, ts.URL, `{"type":"noop","id":"logged","runTime":50}`)
	assignmentRounds(t, n)
	if st := taskStatusOf(t, ts.URL, id); st.RunnerStatusCode != "PENDING" {
		t.Fatalf("assigned to a disabled worker: %+v", st)
	}
	// The overlord's enable reaches the worker through its heartbeat.
	if code, body, _ := call(t, "POST", ts.URL+ip+"/worker/"+w.host+"/enable", "", ""); code != 200 || body != `{"`+w.host+`":"enabled"}` {
		t.Fatalf("enable: %d %s", code, body)
	}
	waitStatus(t, ts.URL, id, "SUCCESS", 5*time.Second)
	eventually.True(t, "the worker to see it is enabled", w.mm.Enabled)
	if code, body, _ := call(t, "POST", ts.URL+ip+"/worker/"+w.host+"/disable", "", ""); code != 200 || body != `{"`+w.host+`":"disabled"}` {
		t.Fatalf("overlord disable: %d %s", code, body)
	}
	eventually.True(t, "the worker to see it is disabled", func() bool { return !w.mm.Enabled() })
	if code, body, _ := call(t, "POST", wp+"/enable", "", ""); code != 200 || body != `{"`+w.host+`":"enabled"}` {
		t.Fatalf("worker enable: %d %s", code, body)
	}
	n.FSM().Read(func(s *fsm.State) {
		if rec, _ := s.Worker(w.host); !rec.Enabled {
			t.Fatal("worker enable not recorded")
		}
	})

	// Log offsets: 0 = all, > 0 = from that byte, < 0 = the tail.
	_, full, _ := call(t, "GET", wp+"/task/logged/log", "", "")
	if !strings.Contains(full, "Woke up!") || len(full) < 40 {
		t.Fatalf("log %q", full)
	}
	for _, c := range []struct {
		q    string
		want string
	}{
		{"?offset=0", full}, {"?offset=10", full[10:]}, {"?offset=-20", full[len(full)-20:]},
		{"?offset=-100000", full}, {fmt.Sprintf("?offset=%d", len(full)+5), ""},
	} {
		if code, body, _ := call(t, "GET", wp+"/task/logged/log"+c.q, "", ""); code != 200 || body != c.want {
			t.Errorf("worker log%s: %d %q", c.q, code, body)
		}
		if code, body, _ := call(t, "GET", ts.URL+ip+"/task/logged/log"+c.q, "", ""); code != 200 || body != c.want {
			t.Errorf("overlord log%s: %d %q", c.q, code, body)
		}
	}
	expectText(t, "GET", wp+"/task/nope/log", 404, "")
	if code, _, _ := call(t, "GET", wp+"/task/logged/log?offset=x", "", ""); code != 400 {
		t.Fatalf("bad offset: %d", code)
	}
	if code, body, _ := call(t, "GET", wp+"/tasks", "", ""); code != 200 || body != "[]" {
		t.Fatalf("tasks: %d %s", code, body)
	}
	if code, body, _ := call(t, "POST", wp+"/task/whatever/shutdown", "", ""); code != 200 || body != `{"task":"whatever"}` {
		t.Fatalf("worker shutdown: %d %s", code, body)
	}
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"id":"x","type":"nope"}`, 400},
		{`{"id":"a/b","type":"noop"}`, 400},
		{`{`, 400},
	} {
		if code, body, _ := call(t, "POST", w.url+middlemanager.PathRun, "application/json", c.body); code != c.status {
			t.Errorf("run %s: %d %s", c.body, code, body)
		}
	}
}

func TestWorkerEndpointsWithoutOverlord(t *testing.T) {
	w := startTkWorker(t, "http://127.0.0.1:1", 1, "")
	if code, body, _ := call(t, "POST", w.url+"/svc/worker/v1/disable", "", ""); code != 500 || body != "" {
		t.Fatalf("disable without an overlord: %d %q", code, body)
	}
	if !w.mm.Enabled() {
		t.Fatal("a failed disable changed the local state")
	}
	// A process with the role but no worker answers 503.
	s, err := New(Options{Roles: []string{RoleMiddleManager}, Props: props.Defaults()})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/svc/worker/v1/tasks", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("no worker: %d", rec.Code)
	}
}

// liveReportRunner publishes a live report, waits to be released, and ends with
// its final report.
type liveReportRunner struct{ release chan struct{} }

func (l liveReportRunner) Run(ctx context.Context, t middlemanager.Task, env middlemanager.Env) (middlemanager.Report, error) {
	if err := env.PublishReport(ctx, middlemanager.Report(`{"live":{"rows":1}}`)); err != nil {
		return nil, err
	}
	if err := env.PublishReport(ctx, middlemanager.Report(`[]`)); err == nil {
		return nil, fmt.Errorf("a non-object report was published")
	}
	select {
	case <-l.release:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return middlemanager.Report(`{"final":{"rows":2}}`), nil
}

var liveRelease = make(chan struct{})

func init() { middlemanager.Register("test_live_report", liveReportRunner{release: liveRelease}) }

func TestLiveAndFinalReports(t *testing.T) {
	ts, n := tkControl(t, "10s")
	startTkWorker(t, ts.URL, 1, "")
	id := submitTask(t, ts.URL, `{"type":"test_live_report","id":"rep","dataSource":"wiki"}`)
	waitStarted(t, n, id)
	eventually.True(t, "the live report", func() bool {
		code, body, _ := call(t, "GET", ts.URL+ip+"/task/rep/reports", "", "")
		return code == 200 && body == `{"live":{"rows":1}}`
	})
	close(liveRelease)
	waitStatus(t, ts.URL, id, "SUCCESS", 5*time.Second)
	if code, body, _ := call(t, "GET", ts.URL+ip+"/task/rep/reports", "", ""); code != 200 || body != `{"final":{"rows":2}}` {
		t.Fatalf("final report: %d %s", code, body)
	}
}
