package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/interval"
)

func submitCmd(id, ds string, locks ...string) commands.SubmitTask {
	payload, _ := json.Marshal(map[string]string{"type": "noop", "id": id})
	return commands.SubmitTask{ID: id, Type: "noop", DataSource: ds, Payload: payload, Locks: locks}
}

func wantKind(t *testing.T, what string, res Result, kind Kind, contains string) {
	t.Helper()
	if KindOf(res.Err) != kind || !strings.Contains(errString(res.Err), contains) {
		t.Fatalf("%s: got %+v, want kind %d containing %q", what, res, kind, contains)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func mustOK(t *testing.T, what string, res Result) Result {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("%s: %v", what, res.Err)
	}
	return res
}

func taskOf(t *testing.T, f *FSM, id string) TaskRecord {
	t.Helper()
	var out TaskRecord
	f.Read(func(s *State) {
		r, ok := s.Task(id)
		if !ok {
			t.Fatalf("task %s missing", id)
		}
		out = *r
	})
	return out
}

func TestTaskLifecycle(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "register", a.apply(commands.RegisterWorker{Host: "mm1:8091", Capacity: 1, Version: "0"}))
	res := mustOK(t, "submit t1", a.apply(submitCmd("t1", "wiki")))
	if r := res.Value.(SubmitResult); r.ID != "t1" || r.RunnerStatus != commands.RunnerPending {
		t.Fatalf("submit result %+v", r)
	}
	mustOK(t, "submit t2", a.apply(submitCmd("t2", "wiki")))
	rec := taskOf(t, a.f, "t1")
	if rec.Status != "RUNNING" || rec.RunnerStatus != "PENDING" || rec.DurationMs != -1 || rec.GroupID != "t1" ||
		rec.Location != (commands.TaskLocation{Port: -1, TLSPort: -1}) || rec.CreatedMs != 2000 || rec.Payload != `{"id":"t1","type":"noop"}` {
		t.Fatalf("submitted record %+v", rec)
	}
	mustOK(t, "assign t1", a.apply(commands.AssignTask{ID: "t1", Worker: "mm1:8091"}))
	wantKind(t, "assign t2 over capacity", a.apply(commands.AssignTask{ID: "t2", Worker: "mm1:8091"}), KindConflict, "at capacity")
	wantKind(t, "assign t1 again", a.apply(commands.AssignTask{ID: "t1", Worker: "mm1:8091"}), KindConflict, "not pending")
	rec = taskOf(t, a.f, "t1")
	if rec.RunnerStatus != "RUNNING" || rec.Worker != "mm1:8091" || rec.Location != (commands.TaskLocation{Host: "mm1", Port: 8091, TLSPort: -1}) {
		t.Fatalf("assigned record %+v", rec)
	}
	loc := &commands.TaskLocation{Host: "mm1", Port: 8100, TLSPort: -1}
	mustOK(t, "running", a.apply(commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: "RUNNING", Location: loc}))
	mustOK(t, "success", a.apply(commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: "SUCCESS", Report: json.RawMessage(`{"r": 1}`)}))
	rec = taskOf(t, a.f, "t1")
	if rec.Status != "SUCCESS" || rec.RunnerStatus != "NONE" || rec.DurationMs != 1000 || rec.Report != `{"r":1}` || rec.Location.Port != 8100 {
		t.Fatalf("completed record %+v", rec)
	}
	wantKind(t, "update after completion", a.apply(commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: "FAILED"}), KindConflict, "already complete")
	// The freed slot takes the next task.
	mustOK(t, "assign t2", a.apply(commands.AssignTask{ID: "t2", Worker: "mm1:8091"}))
	a.f.Read(func(s *State) {
		w, _ := s.Worker("mm1:8091")
		if w.LastCompletedMs != 8000 || w.Category != commands.DefaultWorkerCategory || w.Scheme != "http" || !w.Enabled {
			t.Fatalf("worker %+v", w)
		}
		if s.WorkerLoad("mm1:8091") != 1 || len(s.WorkerTasks("mm1:8091")) != 1 || s.WorkerTasks("mm1:8091")[0].ID != "t2" {
			t.Fatalf("worker tasks %v", s.WorkerTasks("mm1:8091"))
		}
		if act := s.ActiveTasks(); len(act) != 1 || act[0].ID != "t2" {
			t.Fatalf("active %v", act)
		}
		var done []string
		s.EachCompleteTask(func(r *TaskRecord) bool { done = append(done, r.ID); return true })
		if strings.Join(done, ",") != "t1" {
			t.Fatalf("complete %v", done)
		}
		if e := s.Audit(AuditQuery{Type: AuditTask, Limit: 10}); len(e) != 2 || e[1].Key != "wiki" || e[1].Payload != `{"id":"t1","type":"noop"}` {
			t.Fatalf("audit %+v", e)
		}
	})
	// A report can still be attached after the end, once.
	mustOK(t, "late report", a.apply(commands.TaskStatusUpdate{ID: "t2", Worker: "mm1:8091", Status: "FAILED", ErrorMsg: "boom"}))
	mustOK(t, "report after end", a.apply(commands.TaskStatusUpdate{ID: "t2", Worker: "mm1:8091", Status: "FAILED", Report: json.RawMessage(`{"x":2}`)}))
	if rec = taskOf(t, a.f, "t2"); rec.ErrorMsg != "boom" || rec.Report != `{"x":2}` || !rec.ReportFinal {
		t.Fatalf("late report %+v", rec)
	}
	wantKind(t, "second report after end", a.apply(commands.TaskStatusUpdate{ID: "t2", Worker: "mm1:8091", Status: "FAILED", Report: json.RawMessage(`{"x":3}`)}), KindConflict, "already complete")
}

// A task shut down while it runs ends at once with its last live report; the
// final report its worker sends afterwards (the Canceled error report)
// replaces that live one, and a live report arriving even later does not.
func TestFinalReportReplacesLiveAfterShutdown(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "register", a.apply(commands.RegisterWorker{Host: "mm1:8091", Capacity: 1, Version: "0"}))
	mustOK(t, "submit", a.apply(submitCmd("q", "wiki")))
	mustOK(t, "assign", a.apply(commands.AssignTask{ID: "q", Worker: "mm1:8091"}))
	mustOK(t, "live", a.apply(commands.TaskStatusUpdate{ID: "q", Worker: "mm1:8091", Status: "RUNNING", Report: json.RawMessage(`{"status":"RUNNING"}`)}))
	mustOK(t, "shutdown", a.apply(commands.ShutdownTask{ID: "q"}))
	if rec := taskOf(t, a.f, "q"); rec.Status != "FAILED" || rec.Report != `{"status":"RUNNING"}` || rec.ReportFinal {
		t.Fatalf("after shutdown %+v", rec)
	}
	wantKind(t, "late live report", a.apply(commands.TaskStatusUpdate{ID: "q", Worker: "mm1:8091", Status: "RUNNING", Report: json.RawMessage(`{"status":"RUNNING","n":2}`)}), KindConflict, "already complete")
	mustOK(t, "final", a.apply(commands.TaskStatusUpdate{ID: "q", Worker: "mm1:8091", Status: "FAILED", Report: json.RawMessage(`{"status":"FAILED","errorCode":"Canceled"}`)}))
	if rec := taskOf(t, a.f, "q"); rec.Report != `{"status":"FAILED","errorCode":"Canceled"}` || !rec.ReportFinal || rec.ErrorMsg == "" {
		t.Fatalf("final report %+v", rec)
	}
}

func TestTaskCommandsRejectInvalidInput(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "register", a.apply(commands.RegisterWorker{Host: "mm1:8091", Capacity: 2}))
	mustOK(t, "register off", a.apply(commands.RegisterWorker{Host: "mm2:8091", Capacity: 2}))
	mustOK(t, "disable", a.apply(commands.SetWorkerEnabled{Host: "mm2:8091"}))
	mustOK(t, "submit", a.apply(submitCmd("t1", "wiki")))
	mustOK(t, "submit", a.apply(submitCmd("done", "wiki")))
	mustOK(t, "shutdown", a.apply(commands.ShutdownTask{ID: "done"}))
	before := snapshotBytes(t, a.f)

	bad := submitCmd("x", "wiki")
	bad.Payload = json.RawMessage(`[1]`)
	cases := []struct {
		name string
		cmd  commands.Command
		kind Kind
		msg  string
	}{
		{"empty id", submitCmd("", "wiki"), KindInvalid, "must not be empty"},
		{"slash id", submitCmd("a/b", "wiki"), KindInvalid, "'/'"},
		{"dot id", submitCmd(".a", "wiki"), KindInvalid, "'.'"},
		{"tab id", submitCmd("a\tb", "wiki"), KindInvalid, "whitespace"},
		{"no type", commands.SubmitTask{ID: "x", DataSource: "wiki", Payload: json.RawMessage(`{}`)}, KindInvalid, "no type"},
		{"no datasource", submitCmd("x", " "), KindInvalid, "dataSource"},
		{"payload not object", bad, KindInvalid, "JSON object"},
		{"duplicate", submitCmd("t1", "wiki"), KindInvalid, "Task[t1] already exists!"},
		{"bad lock", submitCmd("x", "wiki", "2024-01-01"), KindInvalid, "lock interval"},
		{"empty lock", submitCmd("x", "wiki", "2024-01-01/2024-01-01"), KindInvalid, "empty"},
		{"assign unknown task", commands.AssignTask{ID: "nope", Worker: "mm1:8091"}, KindNotFound, "does not exist"},
		{"assign unknown worker", commands.AssignTask{ID: "t1", Worker: "mm9:1"}, KindNotFound, "not registered"},
		{"assign disabled worker", commands.AssignTask{ID: "t1", Worker: "mm2:8091"}, KindConflict, "disabled"},
		{"assign complete task", commands.AssignTask{ID: "done", Worker: "mm1:8091"}, KindConflict, "not pending"},
		{"status unknown task", commands.TaskStatusUpdate{ID: "nope", Worker: "mm1:8091", Status: "RUNNING"}, KindNotFound, "does not exist"},
		{"status bad value", commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: "DONE"}, KindInvalid, "invalid task status"},
		{"status unassigned", commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: "RUNNING"}, KindConflict, "never handed"},
		{"status bad report", commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: "RUNNING", Report: json.RawMessage(`"x"`)}, KindInvalid, "JSON object"},
		{"shutdown unknown", commands.ShutdownTask{ID: "nope"}, KindNotFound, "does not exist"},
		{"lock unknown task", commands.AcquireLock{TaskID: "nope", Interval: "2024/2025"}, KindNotFound, "does not exist"},
		{"lock bad interval", commands.AcquireLock{TaskID: "t1", Interval: "yesterday"}, KindInvalid, "lock interval"},
		{"lock complete task", commands.AcquireLock{TaskID: "done", Interval: "2024/2025"}, KindConflict, "already complete"},
		{"release unknown task", commands.ReleaseLock{TaskID: "nope"}, KindNotFound, "does not exist"},
		{"release bad interval", commands.ReleaseLock{TaskID: "t1", Interval: "x"}, KindInvalid, "lock interval"},
		{"register no port", commands.RegisterWorker{Host: "mm3", Capacity: 1}, KindInvalid, "host:port"},
		{"register bad port", commands.RegisterWorker{Host: "mm3:0", Capacity: 1}, KindInvalid, "1..65535"},
		{"register capacity", commands.RegisterWorker{Host: "mm3:1", Capacity: 0}, KindInvalid, "capacity"},
		{"register scheme", commands.RegisterWorker{Host: "mm3:1", Capacity: 1, Scheme: "ftp"}, KindInvalid, "scheme"},
		{"enable unknown", commands.SetWorkerEnabled{Host: "mm9:1", Enabled: true}, KindNotFound, "not registered"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantKind(t, c.name, a.apply(c.cmd), c.kind, c.msg) })
	}
	// Rejected commands change nothing but the applied index.
	after := snapshotBytes(t, a.f)
	if !bytes.Equal(stripHeader(t, before), stripHeader(t, after)) {
		t.Fatal("a rejected command changed the state")
	}
}

// stripHeader drops the snapshot header frame (it carries the applied index).
func stripHeader(t *testing.T, b []byte) []byte {
	t.Helper()
	n, k := uvarint(b)
	return b[k+int(n):]
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

func TestTaskLocks(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "register", a.apply(commands.RegisterWorker{Host: "mm1:8091", Capacity: 5}))
	for _, id := range []string{"ing1", "ing2", "ing3"} {
		mustOK(t, "submit "+id, a.apply(submitCmd(id, "wiki")))
	}
	sameGroup := submitCmd("ing1-sub", "wiki")
	sameGroup.GroupID = "ing1"
	mustOK(t, "submit same group", a.apply(sameGroup))

	res := mustOK(t, "lock", a.apply(commands.AcquireLock{TaskID: "ing1", Interval: "2024-01-01/2024-01-03"}))
	v1 := res.Value.(LockResult)
	if v1.Interval != "2024-01-01T00:00:00.000Z/2024-01-03T00:00:00.000Z" || v1.Version != interval.FormatMillis(6000) {
		t.Fatalf("lock result %+v", v1)
	}
	// Re-acquiring is idempotent.
	if again := mustOK(t, "relock", a.apply(commands.AcquireLock{TaskID: "ing1", Interval: "2024-01-01/2024-01-03"})).Value.(LockResult); again != v1 {
		t.Fatalf("relock %+v", again)
	}
	wantKind(t, "overlap", a.apply(commands.AcquireLock{TaskID: "ing2", Interval: "2024-01-02/2024-01-05"}), KindConflict, "task ing1 holds 2024-01-01T00:00:00.000Z/2024-01-03T00:00:00.000Z")
	// The same group shares the chunk (and its version); other datasources and abutting chunks are free.
	if shared := mustOK(t, "same group", a.apply(commands.AcquireLock{TaskID: "ing1-sub", Interval: "2024-01-01/2024-01-03"})).Value.(LockResult); shared.Version != v1.Version {
		t.Fatalf("same group version %s, want %s", shared.Version, v1.Version)
	}
	mustOK(t, "abutting", a.apply(commands.AcquireLock{TaskID: "ing2", Interval: "2024-01-03/2024-01-04"}))

	// A kill declaring an overlapping chunk waits; later tasks that can lock do not.
	mustOK(t, "submit kill", a.apply(submitCmd("kill1", "wiki", "2024-01-02/2024-01-04")))
	mustOK(t, "submit kill other ds", a.apply(submitCmd("kill2", "other", "2024-01-02/2024-01-04")))
	if r := taskOf(t, a.f, "kill1"); r.RunnerStatus != "WAITING" {
		t.Fatalf("kill1 %s", r.RunnerStatus)
	}
	if r := taskOf(t, a.f, "kill2"); r.RunnerStatus != "PENDING" {
		t.Fatalf("kill2 %s", r.RunnerStatus)
	}
	wantKind(t, "assign waiting", a.apply(commands.AssignTask{ID: "kill1", Worker: "mm1:8091"}), KindConflict, "not pending")
	// ing1 ends: its group member still holds the chunk, so the kill keeps waiting.
	mustOK(t, "assign ing1", a.apply(commands.AssignTask{ID: "ing1", Worker: "mm1:8091"}))
	mustOK(t, "ing1 done", a.apply(commands.TaskStatusUpdate{ID: "ing1", Worker: "mm1:8091", Status: "SUCCESS"}))
	if r := taskOf(t, a.f, "kill1"); r.RunnerStatus != "WAITING" {
		t.Fatalf("kill1 after ing1: %s", r.RunnerStatus)
	}
	mustOK(t, "release sub", a.apply(commands.ReleaseLock{TaskID: "ing1-sub"}))
	if r := taskOf(t, a.f, "kill1"); r.RunnerStatus != "WAITING" { // ing2 still holds 01-03/01-04
		t.Fatalf("kill1 after sub release: %s", r.RunnerStatus)
	}
	if n := mustOK(t, "release ing2", a.apply(commands.ReleaseLock{TaskID: "ing2", Interval: "2024-01-03/2024-01-04"})).Value.(int); n != 1 {
		t.Fatalf("released %d", n)
	}
	a.f.Read(func(s *State) {
		r, _ := s.Task("kill1")
		if r.RunnerStatus != "PENDING" {
			t.Fatalf("kill1 after releases: %s", r.RunnerStatus)
		}
		locks := s.TaskLocks("kill1")
		if len(locks) != 1 || locks[0].Version <= v1.Version {
			t.Fatalf("kill1 locks %+v (versions must increase past %s)", locks, v1.Version)
		}
		iv, _ := interval.Parse("2024-01-02/2024-01-03")
		if !s.LockCovers("kill1", iv) || s.LockCovers("ing2", iv) {
			t.Fatal("LockCovers")
		}
		if ls := s.DataSourceLocks("wiki"); len(ls) != 1 || ls[0].TaskID != "kill1" {
			t.Fatalf("wiki locks %+v", ls)
		}
	})
	wantKind(t, "ingestion now refused", a.apply(commands.AcquireLock{TaskID: "ing3", Interval: "2024-01-03/2024-01-10"}), KindConflict, "task kill1 holds")
	// Shutting the kill down releases its lock.
	if r := mustOK(t, "shutdown kill", a.apply(commands.ShutdownTask{ID: "kill1"})).Value.(ShutdownResult); !r.WasActive || r.Worker != "" {
		t.Fatalf("shutdown %+v", r)
	}
	mustOK(t, "ingestion locks", a.apply(commands.AcquireLock{TaskID: "ing3", Interval: "2024-01-03/2024-01-10"}))
}

func TestLockVersionsStrictlyIncrease(t *testing.T) {
	f := New(nil)
	ix := uint64(0)
	apply := func(ms int64, cmd commands.Command) Result {
		ix++
		return f.Apply(entry(t, ix, ms, cmd, "x")).(Result)
	}
	apply(1000, submitCmd("a", "wiki"))
	apply(1000, submitCmd("b", "wiki"))
	va := mustOK(t, "a", apply(5000, commands.AcquireLock{TaskID: "a", Interval: "2024/2025"})).Value.(LockResult).Version
	mustOK(t, "release", apply(5000, commands.ReleaseLock{TaskID: "a"}))
	vb := mustOK(t, "b", apply(5000, commands.AcquireLock{TaskID: "b", Interval: "2024/2025"})).Value.(LockResult).Version
	if va != interval.FormatMillis(5000) || vb != interval.FormatMillis(5001) {
		t.Fatalf("versions %s then %s", va, vb)
	}
}

func TestShutdownAndLostTasks(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "register", a.apply(commands.RegisterWorker{Host: "mm1:8091", Capacity: 3, Scheme: "https"}))
	for _, id := range []string{"p", "r1", "r2", "r3"} {
		mustOK(t, id, a.apply(submitCmd(id, "wiki")))
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		mustOK(t, "assign", a.apply(commands.AssignTask{ID: id, Worker: "mm1:8091"}))
	}
	if loc := taskOf(t, a.f, "r1").Location; loc != (commands.TaskLocation{Host: "mm1", Port: -1, TLSPort: 8091}) {
		t.Fatalf("https location %+v", loc)
	}
	if r := mustOK(t, "shutdown pending", a.apply(commands.ShutdownTask{ID: "p"})).Value.(ShutdownResult); !r.WasActive || r.Worker != "" {
		t.Fatalf("%+v", r)
	}
	if rec := taskOf(t, a.f, "p"); rec.Status != "FAILED" || rec.ErrorMsg != commands.ShutdownByUser || rec.DurationMs != 0 || rec.RunnerStatus != "NONE" {
		t.Fatalf("shut down pending %+v", rec)
	}
	if r := mustOK(t, "shutdown running", a.apply(commands.ShutdownTask{ID: "r1", Reason: "because"})).Value.(ShutdownResult); r.Worker != "mm1:8091" {
		t.Fatalf("%+v", r)
	}
	if rec := taskOf(t, a.f, "r1"); rec.ErrorMsg != "because" || rec.DurationMs <= 0 {
		t.Fatalf("shut down running %+v", rec)
	}
	if r := mustOK(t, "shutdown again", a.apply(commands.ShutdownTask{ID: "r1"})).Value.(ShutdownResult); r.WasActive {
		t.Fatalf("%+v", r)
	}
	// The worker comes back running only r3: r2 was lost with the old process.
	res := mustOK(t, "re-register", a.apply(commands.RegisterWorker{Host: "mm1:8091", Capacity: 3, Running: []string{"r3"}}))
	if lost := res.Value.(RegisterResult).Lost; len(lost) != 1 || lost[0] != "r2" {
		t.Fatalf("lost %v", lost)
	}
	if rec := taskOf(t, a.f, "r2"); rec.Status != "FAILED" || !strings.Contains(rec.ErrorMsg, "restarted") {
		t.Fatalf("lost task %+v", rec)
	}
	if rec := taskOf(t, a.f, "r3"); rec.Status != "RUNNING" {
		t.Fatalf("kept task %+v", rec)
	}
}

// taskLog touches every task command, including rejected ones.
func taskLog(t *testing.T) []*raft.Log {
	cmds := []commands.Command{
		commands.RegisterWorker{Host: "mm1:8091", Capacity: 2, Category: "hot", Version: "1", IP: "10.0.0.5"},
		commands.RegisterWorker{Host: "mm2:8091", Capacity: 1},
		submitCmd("a", "wiki"),
		submitCmd("b", "wiki"),
		submitCmd("c", "logs"),
		commands.AssignTask{ID: "a", Worker: "mm1:8091"},
		commands.AssignTask{ID: "b", Worker: "mm2:8091"},
		commands.AcquireLock{TaskID: "a", Interval: "2024-01-01/2024-02-01"},
		submitCmd("k", "wiki", "2024-01-15/2024-01-16"),
		commands.AcquireLock{TaskID: "b", Interval: "2024-01-10/2024-01-20"}, // rejected
		commands.TaskStatusUpdate{ID: "a", Worker: "mm1:8091", Status: "RUNNING", Report: json.RawMessage(`{"live":{"rows":1}}`)},
		commands.SetWorkerEnabled{Host: "mm2:8091", Enabled: false},
		commands.TaskStatusUpdate{ID: "a", Worker: "mm1:8091", Status: "SUCCESS"},
		commands.ShutdownTask{ID: "c"},
		commands.ReleaseLock{TaskID: "k", Interval: "2024-01-15/2024-01-16"},
		commands.SubmitTask{ID: "bad/id"}, // rejected
	}
	var out []*raft.Log
	for i, c := range cmds {
		out = append(out, entry(t, uint64(i+1), int64(i+1)*1000, c, "ops"))
	}
	return out
}

func TestTaskSnapshotDeterminism(t *testing.T) {
	f1, f2 := New(nil), New(nil)
	for _, l := range taskLog(t) {
		f1.Apply(l)
	}
	f2.ApplyBatch(taskLog(t))
	s1, s2 := snapshotBytes(t, f1), snapshotBytes(t, f2)
	if !bytes.Equal(s1, s2) {
		t.Fatal("same log, different snapshots")
	}
	r := restore(t, s1)
	if !bytes.Equal(snapshotBytes(t, r), s1) {
		t.Fatal("snapshot → restore → snapshot differs")
	}
	// The restored state behaves like the original: indexes, waiting order and
	// the lock clock were rebuilt.
	next := []commands.Command{
		commands.TaskStatusUpdate{ID: "b", Worker: "mm2:8091", Status: "FAILED", ErrorMsg: "x"},
		submitCmd("k2", "wiki", "2024-01-01/2024-01-02"),
		commands.AcquireLock{TaskID: "k", Interval: "2024-03-01/2024-03-02"},
		commands.AssignTask{ID: "k", Worker: "mm1:8091"},
	}
	for i, c := range next {
		l := entry(t, uint64(100+i), int64(100+i)*1000, c, "ops")
		r1, r2 := f1.Apply(l).(Result), r.Apply(l).(Result)
		if errString(r1.Err) != errString(r2.Err) {
			t.Fatalf("command %d: original %v, restored %v", i, r1.Err, r2.Err)
		}
	}
	if !bytes.Equal(snapshotBytes(t, f1), snapshotBytes(t, r)) {
		t.Fatal("original and restored states diverged")
	}
	r.Read(func(s *State) {
		if w, _ := s.Worker("mm1:8091"); w.Category != "hot" || w.IP != "10.0.0.5" || s.WorkerLoad("mm1:8091") != 1 {
			t.Fatalf("restored worker %+v load %d", w, s.WorkerLoad("mm1:8091"))
		}
		if rec, _ := s.Task("a"); rec.Report != `{"live":{"rows":1}}` || rec.Status != "SUCCESS" {
			t.Fatalf("restored task %+v", rec)
		}
		if s.TaskCount() != 5 { // a, b, c, k and k2
			t.Fatalf("tasks %d", s.TaskCount())
		}
	})
}

func TestTaskSnapshotRejectsDuplicates(t *testing.T) {
	f := New(nil)
	for _, l := range taskLog(t) {
		f.Apply(l)
	}
	b := snapshotBytes(t, f)
	// Duplicate the first task record inside the tasks table: restore must fail.
	rec, _ := json.Marshal(taskOf(t, f, "a"))
	i := bytes.Index(b, rec)
	if i < 0 {
		t.Fatal("task record not found in snapshot")
	}
	tbl := []byte(`{"table":"tasks","records":4}`)
	j := bytes.Index(b, tbl)
	if j < 0 {
		t.Fatal("tasks table header not found")
	}
	frame := binary.AppendUvarint(nil, uint64(len(rec)))
	start := i - len(frame)
	hdr := []byte(`{"table":"tasks","records":5}`)
	var out []byte
	out = append(out, b[:j-1]...)
	out = binary.AppendUvarint(out, uint64(len(hdr)))
	out = append(out, hdr...)
	out = append(out, b[j+len(tbl):start]...)
	out = append(out, b[start:i+len(rec)]...) // the first record, once more
	out = append(out, b[start:]...)
	g := New(nil)
	if err := g.Restore(nopCloser{bytes.NewReader(out)}); err == nil || !strings.Contains(err.Error(), "duplicated") {
		t.Fatalf("restore of duplicated record: %v", err)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// BenchmarkTaskLifecycle applies submit, assign, start and completion of one task
// per iteration, with 10,000 complete tasks and 200 running ones in the state.
func BenchmarkTaskLifecycle(b *testing.B) {
	f := New(nil)
	ix := uint64(0)
	apply := func(cmd commands.Command) {
		ix++
		data, err := commands.Encode(cmd, int64(ix), commands.Audit{})
		if err != nil {
			b.Fatal(err)
		}
		if res := f.Apply(&raft.Log{Index: ix, Type: raft.LogCommand, Data: data}).(Result); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
	for w := 0; w < 20; w++ {
		apply(commands.RegisterWorker{Host: "mm" + tkItoa(w) + ":8091", Capacity: 20})
	}
	payload := json.RawMessage(`{"type":"noop","runTime":1}`)
	lifecycle := func(id string, w int, finish bool) {
		host := "mm" + tkItoa(w%20) + ":8091"
		apply(commands.SubmitTask{ID: id, Type: "noop", DataSource: "wiki", Payload: payload})
		apply(commands.AssignTask{ID: id, Worker: host})
		apply(commands.TaskStatusUpdate{ID: id, Worker: host, Status: "RUNNING"})
		if finish {
			apply(commands.TaskStatusUpdate{ID: id, Worker: host, Status: "SUCCESS"})
		}
	}
	for i := 0; i < 10000; i++ {
		lifecycle("done-"+tkItoa(i), i, true)
	}
	for i := 0; i < 200; i++ {
		lifecycle("run-"+tkItoa(i), i, false)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lifecycle("bench-"+tkItoa(i), i, true)
	}
}

func tkItoa(i int) string { return strconv.Itoa(i) }
