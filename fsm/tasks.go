package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"strata/commands"
	"strata/interval"
)

// TaskRecord is one task's row. Records are immutable once stored (a change
// stores a new record), so readers and snapshots may hold them while Apply goes on.
type TaskRecord struct {
	Seq          uint64                `json:"seq"` // Raft index of the submission: a total order
	ID           string                `json:"id"`
	Type         string                `json:"type"`
	GroupID      string                `json:"groupId"`
	DataSource   string                `json:"dataSource"`
	Payload      string                `json:"payload"`         // task JSON, compact
	Locks        []string              `json:"locks,omitempty"` // time chunks needed before start
	CreatedMs    int64                 `json:"created"`
	Status       string                `json:"status"`       // RUNNING, SUCCESS, FAILED
	RunnerStatus string                `json:"runnerStatus"` // WAITING, PENDING, RUNNING, NONE
	Worker       string                `json:"worker,omitempty"`
	Location     commands.TaskLocation `json:"location"`
	AssignedMs   int64                 `json:"assigned,omitempty"`
	StartedMs    int64                 `json:"started,omitempty"` // the worker confirmed the start
	DurationMs   int64                 `json:"duration"`          // -1 until complete
	ErrorMsg     string                `json:"errorMsg,omitempty"`
	Report       string                `json:"report,omitempty"` // compact JSON, "" when none
	// ReportFinal is set once the task's final report (sent with its end) is
	// stored; until then Report may be a live one a later final replaces.
	ReportFinal bool `json:"reportFinal,omitempty"`

	locks []interval.Interval // Locks, parsed
}

// Active reports whether the task has not completed.
func (r *TaskRecord) Active() bool { return r.Status == commands.TaskRunning }

// TaskLock is a task's exclusive lock on a time chunk of a datasource. Tasks of
// one group share locks; Version (the leader time of acquisition, ISO) is what
// segments created under the lock are versioned with.
type TaskLock struct {
	TaskID     string `json:"taskId"`
	GroupID    string `json:"groupId"`
	DataSource string `json:"dataSource"`
	Start      int64  `json:"start"`
	End        int64  `json:"end"`
	Version    string `json:"version"`
}

// Interval returns the locked interval.
func (l TaskLock) Interval() interval.Interval { return interval.Interval{Start: l.Start, End: l.End} }

// WorkerRecord is a registered middle manager. Whether it is alive is not FSM
// state: the leader tracks heartbeats in memory.
type WorkerRecord struct {
	Host            string `json:"host"` // host:port
	Scheme          string `json:"scheme"`
	IP              string `json:"ip"`
	Capacity        int    `json:"capacity"`
	Category        string `json:"category"`
	Version         string `json:"version"`
	Enabled         bool   `json:"enabled"`
	RegisteredMs    int64  `json:"registered"`
	LastCompletedMs int64  `json:"lastCompleted,omitempty"`
}

// tasksTable holds tasks, their locks and the workers that run them.
type tasksTable struct {
	tasks     map[string]*TaskRecord
	order     []string                       // ids in submission order (append-only)
	active    map[string]*TaskRecord         // tasks not complete
	byWorker  map[string]map[string]struct{} // worker → active tasks handed to it
	waiting   []string                       // ids with runner status WAITING, in submission order
	locks     map[string][]TaskLock          // datasource → locks
	lockClock int64                          // last lock version (epoch ms): versions strictly increase
	workers   map[string]*WorkerRecord
}

func (t *tasksTable) init() {
	if t.tasks == nil {
		t.tasks = map[string]*TaskRecord{}
		t.active = map[string]*TaskRecord{}
		t.byWorker = map[string]map[string]struct{}{}
		t.locks = map[string][]TaskLock{}
		t.workers = map[string]*WorkerRecord{}
	}
}

// put stores a (new) record and keeps the indexes in step.
func (t *tasksTable) put(r *TaskRecord) {
	t.tasks[r.ID] = r
	if r.Active() {
		t.active[r.ID] = r
	} else {
		delete(t.active, r.ID)
	}
	if r.Worker != "" {
		set := t.byWorker[r.Worker]
		if r.Active() && r.RunnerStatus == commands.RunnerRunning {
			if set == nil {
				set = map[string]struct{}{}
				t.byWorker[r.Worker] = set
			}
			set[r.ID] = struct{}{}
		} else if set != nil {
			delete(set, r.ID)
			if len(set) == 0 {
				delete(t.byWorker, r.Worker)
			}
		}
	}
}

// AuditTask is the audit type of task submissions.
const AuditTask = "task"

// SubmitResult is the result of SubmitTask.
type SubmitResult struct {
	ID           string
	RunnerStatus string
}

func validDataSource(ds string) error {
	switch {
	case strings.TrimSpace(ds) == "":
		return fmt.Errorf("dataSource must not be empty")
	case strings.ContainsRune(ds, '/'):
		return fmt.Errorf("dataSource %q must not contain '/'", ds)
	}
	return nil
}

func compactObject(raw json.RawMessage, what string) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", fmt.Errorf("%s is not valid JSON: %v", what, err)
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return "", fmt.Errorf("%s must be a JSON object", what)
	}
	return buf.String(), nil
}

func applySubmitTask(s *State, m Meta, c commands.SubmitTask) (any, error) {
	t := &s.tasks
	t.init()
	if err := commands.ValidateTaskID(c.ID); err != nil {
		return nil, Invalid("%v", err)
	}
	if strings.TrimSpace(c.Type) == "" {
		return nil, Invalid("task %s has no type", c.ID)
	}
	if err := validDataSource(c.DataSource); err != nil {
		return nil, Invalid("task %s: %v", c.ID, err)
	}
	group := c.GroupID
	if group == "" {
		group = c.ID
	}
	payload, err := compactObject(c.Payload, "task payload")
	if err != nil {
		return nil, Invalid("task %s: %v", c.ID, err)
	}
	if t.tasks[c.ID] != nil {
		return nil, Invalid("Task[%s] already exists!", c.ID)
	}
	rec := &TaskRecord{
		Seq: m.Index, ID: c.ID, Type: c.Type, GroupID: group, DataSource: c.DataSource, Payload: payload,
		CreatedMs: m.TimeMs, Status: commands.TaskRunning, RunnerStatus: commands.RunnerWaiting,
		Location: commands.TaskLocation{Port: -1, TLSPort: -1}, DurationMs: -1,
	}
	for _, raw := range c.Locks {
		iv, err := interval.Parse(raw)
		if err != nil {
			return nil, Invalid("task %s: lock interval: %v", c.ID, err)
		}
		if iv.IsEmpty() {
			return nil, Invalid("task %s: lock interval %s is empty", c.ID, iv)
		}
		rec.locks = append(rec.locks, iv)
		rec.Locks = append(rec.Locks, iv.String())
	}
	if t.tryLockAll(rec, m) {
		rec.RunnerStatus = commands.RunnerPending
	} else {
		t.waiting = append(t.waiting, rec.ID)
	}
	t.put(rec)
	t.order = append(t.order, rec.ID)
	s.audit.add(m, c.DataSource, AuditTask, payload)
	return SubmitResult{ID: rec.ID, RunnerStatus: rec.RunnerStatus}, nil
}

// tryLockAll acquires every lock rec declares, or none when one is taken.
func (t *tasksTable) tryLockAll(rec *TaskRecord, m Meta) bool {
	for _, iv := range rec.locks {
		if t.lockConflict(rec.DataSource, rec.GroupID, iv) != nil {
			return false
		}
	}
	for _, iv := range rec.locks {
		t.addLock(rec, iv, m)
	}
	return true
}

// lockConflict returns a lock of another group overlapping iv whose holder is
// still active, or nil.
func (t *tasksTable) lockConflict(ds, group string, iv interval.Interval) *TaskLock {
	for i := range t.locks[ds] {
		l := &t.locks[ds][i]
		if l.GroupID == group || !l.Interval().Overlaps(iv) {
			continue
		}
		if h := t.tasks[l.TaskID]; h == nil || !h.Active() {
			continue // a finished holder no longer counts
		}
		return l
	}
	return nil
}

// addLock records a lock of rec on iv (no conflict check) and returns it. A
// task re-acquiring the same chunk gets its lock back; a chunk its group
// already locks shares that version; otherwise the version is the leader time,
// bumped past the previous version so that versions strictly increase.
func (t *tasksTable) addLock(rec *TaskRecord, iv interval.Interval, m Meta) TaskLock {
	version := ""
	for _, l := range t.locks[rec.DataSource] {
		if l.Start == iv.Start && l.End == iv.End && l.GroupID == rec.GroupID {
			if l.TaskID == rec.ID {
				return l
			}
			version = l.Version
		}
	}
	if version == "" {
		ms := m.TimeMs
		if ms <= t.lockClock {
			ms = t.lockClock + 1
		}
		t.lockClock = ms
		version = interval.FormatMillis(ms)
	}
	l := TaskLock{TaskID: rec.ID, GroupID: rec.GroupID, DataSource: rec.DataSource, Start: iv.Start, End: iv.End, Version: version}
	// Kept sorted, the order a restored snapshot has, so that every scan sees
	// the same order on every node.
	ls := append(t.locks[rec.DataSource], l)
	slices.SortFunc(ls, compareLocks)
	t.locks[rec.DataSource] = ls
	return l
}

// releaseLocks removes rec's locks on iv (all of them when iv is nil).
func (t *tasksTable) releaseLocks(rec *TaskRecord, iv *interval.Interval) int {
	old := t.locks[rec.DataSource]
	kept := make([]TaskLock, 0, len(old))
	for _, l := range old {
		if l.TaskID == rec.ID && (iv == nil || (l.Start == iv.Start && l.End == iv.End)) {
			continue
		}
		kept = append(kept, l)
	}
	n := len(old) - len(kept)
	if len(kept) == 0 {
		delete(t.locks, rec.DataSource)
	} else {
		t.locks[rec.DataSource] = kept
	}
	return n
}

// promoteWaiting makes waiting tasks whose locks are now free pending, in
// submission order.
func (t *tasksTable) promoteWaiting(m Meta) {
	if len(t.waiting) == 0 {
		return
	}
	kept := make([]string, 0, len(t.waiting))
	for _, id := range t.waiting {
		rec := t.tasks[id]
		if rec == nil || !rec.Active() || rec.RunnerStatus != commands.RunnerWaiting {
			continue
		}
		if t.tryLockAll(rec, m) {
			n := *rec
			n.RunnerStatus = commands.RunnerPending
			t.put(&n)
			continue
		}
		kept = append(kept, id)
	}
	t.waiting = kept
}

// complete ends an active task: its worker slot and locks are freed and waiting
// tasks get another chance at their locks.
func (t *tasksTable) complete(rec *TaskRecord, status, errMsg string, report string, m Meta) *TaskRecord {
	n := *rec
	n.Status, n.RunnerStatus, n.ErrorMsg = status, commands.RunnerNone, errMsg
	if report != "" {
		n.Report, n.ReportFinal = report, true
	}
	start := n.StartedMs
	if start == 0 {
		start = n.AssignedMs
	}
	n.DurationMs = 0
	if start != 0 && m.TimeMs > start {
		n.DurationMs = m.TimeMs - start
	}
	t.put(&n)
	if w := t.workers[n.Worker]; w != nil {
		wc := *w
		wc.LastCompletedMs = m.TimeMs
		t.workers[n.Worker] = &wc
	}
	if i := slices.Index(t.waiting, n.ID); i >= 0 {
		t.waiting = slices.Delete(slices.Clone(t.waiting), i, i+1)
	}
	t.releaseLocks(&n, nil)
	t.promoteWaiting(m)
	return &n
}

func (t *tasksTable) task(id string) (*TaskRecord, error) {
	if err := commands.ValidateTaskID(id); err != nil {
		return nil, Invalid("%v", err)
	}
	rec := t.tasks[id]
	if rec == nil {
		return nil, NotFound("task %s does not exist", id)
	}
	return rec, nil
}

// splitHost parses host:port.
func splitHost(hostPort string) (string, int, error) {
	h, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", 0, fmt.Errorf("worker host %q is not host:port: %v", hostPort, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 || h == "" {
		return "", 0, fmt.Errorf("worker host %q needs a host and a port in 1..65535", hostPort)
	}
	return h, port, nil
}

func applyAssignTask(s *State, m Meta, c commands.AssignTask) (any, error) {
	t := &s.tasks
	t.init()
	rec, err := t.task(c.ID)
	if err != nil {
		return nil, err
	}
	if !rec.Active() || rec.RunnerStatus != commands.RunnerPending {
		return nil, Conflict("task %s is %s/%s, not pending", c.ID, rec.Status, rec.RunnerStatus)
	}
	w := t.workers[c.Worker]
	if w == nil {
		return nil, NotFound("worker %s is not registered", c.Worker)
	}
	if !w.Enabled {
		return nil, Conflict("worker %s is disabled", c.Worker)
	}
	if used := len(t.byWorker[c.Worker]); used >= w.Capacity {
		return nil, Conflict("worker %s is at capacity (%d of %d slots used)", c.Worker, used, w.Capacity)
	}
	host, port, err := splitHost(c.Worker)
	if err != nil {
		return nil, Invalid("%v", err)
	}
	n := *rec
	n.RunnerStatus, n.Worker, n.AssignedMs = commands.RunnerRunning, c.Worker, m.TimeMs
	n.Location = commands.TaskLocation{Host: host, Port: port, TLSPort: -1}
	if w.Scheme == "https" {
		n.Location.Port, n.Location.TLSPort = -1, port
	}
	t.put(&n)
	return &n, nil
}

func applyTaskStatusUpdate(s *State, m Meta, c commands.TaskStatusUpdate) (any, error) {
	t := &s.tasks
	t.init()
	rec, err := t.task(c.ID)
	if err != nil {
		return nil, err
	}
	switch c.Status {
	case commands.TaskRunning, commands.TaskSuccess, commands.TaskFailed:
	default:
		return nil, Invalid("invalid task status %q: expected RUNNING, SUCCESS or FAILED", c.Status)
	}
	report := ""
	if len(c.Report) > 0 && string(c.Report) != "null" {
		if report, err = compactObject(c.Report, "task report"); err != nil {
			return nil, Invalid("task %s: %v", c.ID, err)
		}
	}
	if rec.Worker == "" {
		return nil, Conflict("task %s was never handed to a worker", c.ID)
	}
	if rec.Worker != c.Worker {
		return nil, Conflict("task %s is assigned to worker %s, not %s", c.ID, rec.Worker, c.Worker)
	}
	if !rec.Active() {
		// The final report may still arrive after the end: a task shut down
		// is ended at once, and its worker reports how it stopped (the
		// Canceled error report) afterwards. It replaces a live report, once;
		// a live report arriving late does not replace anything.
		if report != "" && (rec.Report == "" || !rec.ReportFinal && c.Status != commands.TaskRunning) {
			n := *rec
			n.Report, n.ReportFinal = report, c.Status != commands.TaskRunning
			t.put(&n)
			return &n, nil
		}
		return nil, Conflict("task %s is already complete (%s)", c.ID, rec.Status)
	}
	if c.Status != commands.TaskRunning {
		return t.complete(rec, c.Status, c.ErrorMsg, report, m), nil
	}
	n := *rec
	if n.StartedMs == 0 {
		n.StartedMs = m.TimeMs
	}
	if c.Location != nil && c.Location.Host != "" {
		n.Location = *c.Location
	}
	if report != "" {
		n.Report = report
	}
	t.put(&n)
	return &n, nil
}

// ShutdownResult is the result of ShutdownTask.
type ShutdownResult struct {
	WasActive bool
	Worker    string // the worker that was running it, if any
}

func applyShutdownTask(s *State, m Meta, c commands.ShutdownTask) (any, error) {
	t := &s.tasks
	t.init()
	rec, err := t.task(c.ID)
	if err != nil {
		return nil, err
	}
	if !rec.Active() {
		return ShutdownResult{}, nil
	}
	reason := c.Reason
	if reason == "" {
		reason = commands.ShutdownByUser
	}
	worker := ""
	if rec.RunnerStatus == commands.RunnerRunning {
		worker = rec.Worker
	}
	t.complete(rec, commands.TaskFailed, reason, "", m)
	return ShutdownResult{WasActive: true, Worker: worker}, nil
}

// LockResult is the result of AcquireLock.
type LockResult struct {
	Interval string `json:"interval"`
	Version  string `json:"version"`
}

func applyAcquireLock(s *State, m Meta, c commands.AcquireLock) (any, error) {
	t := &s.tasks
	t.init()
	rec, err := t.task(c.TaskID)
	if err != nil {
		return nil, err
	}
	if !rec.Active() {
		return nil, Conflict("task %s is already complete (%s) and cannot lock", c.TaskID, rec.Status)
	}
	iv, err := interval.Parse(c.Interval)
	if err != nil {
		return nil, Invalid("lock interval: %v", err)
	}
	if iv.IsEmpty() {
		return nil, Invalid("lock interval %s is empty", iv)
	}
	if l := t.lockConflict(rec.DataSource, rec.GroupID, iv); l != nil {
		return nil, Conflict("cannot lock %s of %s for task %s: task %s holds %s (version %s)",
			iv, rec.DataSource, rec.ID, l.TaskID, l.Interval(), l.Version)
	}
	l := t.addLock(rec, iv, m)
	return LockResult{Interval: iv.String(), Version: l.Version}, nil
}

func applyReleaseLock(s *State, m Meta, c commands.ReleaseLock) (any, error) {
	t := &s.tasks
	t.init()
	rec, err := t.task(c.TaskID)
	if err != nil {
		return nil, err
	}
	var only *interval.Interval
	if c.Interval != "" {
		iv, err := interval.Parse(c.Interval)
		if err != nil {
			return nil, Invalid("lock interval: %v", err)
		}
		only = &iv
	}
	n := t.releaseLocks(rec, only)
	t.promoteWaiting(m)
	return n, nil
}

// RegisterResult is the result of RegisterWorker.
type RegisterResult struct {
	Lost []string // tasks assigned to the worker that it no longer runs (now FAILED)
}

// MaxWorkerCapacity bounds a worker's task slots.
const MaxWorkerCapacity = 100000

func applyRegisterWorker(s *State, m Meta, c commands.RegisterWorker) (any, error) {
	t := &s.tasks
	t.init()
	if _, _, err := splitHost(c.Host); err != nil {
		return nil, Invalid("%v", err)
	}
	if c.Capacity < 1 || c.Capacity > MaxWorkerCapacity {
		return nil, Invalid("worker %s: capacity %d is outside 1..%d", c.Host, c.Capacity, MaxWorkerCapacity)
	}
	scheme := c.Scheme
	if scheme == "" {
		scheme = "http"
	}
	if scheme != "http" && scheme != "https" {
		return nil, Invalid("worker %s: scheme %q must be http or https", c.Host, scheme)
	}
	category := c.Category
	if category == "" {
		category = commands.DefaultWorkerCategory
	}
	w := &WorkerRecord{Host: c.Host, Scheme: scheme, IP: c.IP, Capacity: c.Capacity, Category: category,
		Version: c.Version, Enabled: true, RegisteredMs: m.TimeMs}
	if old := t.workers[c.Host]; old != nil {
		w.LastCompletedMs = old.LastCompletedMs
	}
	t.workers[c.Host] = w
	running := map[string]bool{}
	for _, id := range c.Running {
		running[id] = true
	}
	var lost []string
	for id := range t.byWorker[c.Host] {
		if !running[id] {
			lost = append(lost, id)
		}
	}
	slices.Sort(lost)
	for _, id := range lost {
		t.complete(t.tasks[id], commands.TaskFailed,
			fmt.Sprintf("middle manager %s restarted and no longer runs this task", c.Host), "", m)
	}
	return RegisterResult{Lost: lost}, nil
}

func applySetWorkerEnabled(s *State, m Meta, c commands.SetWorkerEnabled) (any, error) {
	t := &s.tasks
	t.init()
	w := t.workers[c.Host]
	if w == nil {
		return nil, NotFound("worker %s is not registered", c.Host)
	}
	n := *w
	n.Enabled = c.Enabled
	t.workers[c.Host] = &n
	return &n, nil
}

// ---- reads ----

// Task returns one task.
func (s *State) Task(id string) (*TaskRecord, bool) {
	r, ok := s.tasks.tasks[id]
	return r, ok
}

// TaskCount is the number of stored tasks.
func (s *State) TaskCount() int { return len(s.tasks.tasks) }

func bySeq(a, b *TaskRecord) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// ActiveTasks returns the tasks not complete, in submission order.
func (s *State) ActiveTasks() []*TaskRecord {
	out := make([]*TaskRecord, 0, len(s.tasks.active))
	for _, r := range s.tasks.active {
		out = append(out, r)
	}
	slices.SortFunc(out, bySeq)
	return out
}

// EachCompleteTask calls fn with complete tasks, newest submission first, until
// fn returns false.
func (s *State) EachCompleteTask(fn func(*TaskRecord) bool) {
	order := s.tasks.order
	for i := len(order) - 1; i >= 0; i-- {
		r := s.tasks.tasks[order[i]]
		if r.Active() {
			continue
		}
		if !fn(r) {
			return
		}
	}
}

// WorkerTasks returns the active tasks handed to a worker, in submission order.
func (s *State) WorkerTasks(host string) []*TaskRecord {
	set := s.tasks.byWorker[host]
	out := make([]*TaskRecord, 0, len(set))
	for id := range set {
		out = append(out, s.tasks.tasks[id])
	}
	slices.SortFunc(out, bySeq)
	return out
}

// WorkerLoad is the number of a worker's slots in use.
func (s *State) WorkerLoad(host string) int { return len(s.tasks.byWorker[host]) }

// Worker returns one registered worker.
func (s *State) Worker(host string) (*WorkerRecord, bool) {
	w, ok := s.tasks.workers[host]
	return w, ok
}

// Workers returns the registered workers sorted by host.
func (s *State) Workers() []*WorkerRecord {
	out := make([]*WorkerRecord, 0, len(s.tasks.workers))
	for _, w := range s.tasks.workers {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *WorkerRecord) int { return strings.Compare(a.Host, b.Host) })
	return out
}

// TaskLocks returns the locks a task holds, sorted by interval.
func (s *State) TaskLocks(taskID string) []TaskLock {
	r := s.tasks.tasks[taskID]
	if r == nil {
		return nil
	}
	var out []TaskLock
	for _, l := range s.tasks.locks[r.DataSource] {
		if l.TaskID == taskID {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, compareLocks)
	return out
}

// DataSourceLocks returns the locks on a datasource, sorted by interval and task.
func (s *State) DataSourceLocks(ds string) []TaskLock {
	out := slices.Clone(s.tasks.locks[ds])
	slices.SortFunc(out, compareLocks)
	return out
}

// LockCovers reports whether the task holds one lock containing iv.
func (s *State) LockCovers(taskID string, iv interval.Interval) bool {
	for _, l := range s.TaskLocks(taskID) {
		if l.Interval().Contains(iv) {
			return true
		}
	}
	return false
}

func compareLocks(a, b TaskLock) int {
	if c := strings.Compare(a.DataSource, b.DataSource); c != 0 {
		return c
	}
	if a.Start != b.Start {
		return cmpInt(a.Start, b.Start)
	}
	if a.End != b.End {
		return cmpInt(a.End, b.End)
	}
	return strings.Compare(a.TaskID, b.TaskID)
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// ---- snapshot ----

var taskTables = []table{
	{
		name: "tasks",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			recs := make([]*TaskRecord, len(s.tasks.order))
			for i, id := range s.tasks.order {
				recs[i] = s.tasks.tasks[id]
			}
			return len(recs), func(w *recordWriter) error {
				for _, r := range recs {
					if err := w.write(r); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			t := &s.tasks
			t.init()
			var last uint64
			for i := 0; i < n; i++ {
				rec := new(TaskRecord)
				if err := r.read(rec); err != nil {
					return err
				}
				if rec.ID == "" || t.tasks[rec.ID] != nil || (i > 0 && rec.Seq <= last) {
					return fmt.Errorf("task record %d (%q) is duplicated or out of order", i, rec.ID)
				}
				last = rec.Seq
				for _, raw := range rec.Locks {
					iv, err := interval.Parse(raw)
					if err != nil {
						return fmt.Errorf("task %s: %v", rec.ID, err)
					}
					rec.locks = append(rec.locks, iv)
				}
				t.put(rec)
				t.order = append(t.order, rec.ID)
				if rec.Active() && rec.RunnerStatus == commands.RunnerWaiting {
					t.waiting = append(t.waiting, rec.ID)
				}
			}
			return nil
		},
	},
	{
		name: "task_locks",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			var all []TaskLock
			for _, ls := range s.tasks.locks {
				all = append(all, ls...)
			}
			return len(all), func(w *recordWriter) error {
				slices.SortFunc(all, compareLocks)
				for i := range all {
					if err := w.write(&all[i]); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			s.tasks.init()
			for i := 0; i < n; i++ {
				var l TaskLock
				if err := r.read(&l); err != nil {
					return err
				}
				s.tasks.locks[l.DataSource] = append(s.tasks.locks[l.DataSource], l)
			}
			return nil
		},
	},
	{
		name: "task_lock_clock",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			if s.tasks.lockClock == 0 {
				return 0, func(*recordWriter) error { return nil }
			}
			v := s.tasks.lockClock
			return 1, func(w *recordWriter) error { return w.write(v) }
		},
		restore: func(s *State, r *recordReader, n int) error {
			if n == 0 {
				return nil
			}
			return r.read(&s.tasks.lockClock)
		},
	},
	{
		name: "workers",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			ws := s.Workers()
			return len(ws), func(w *recordWriter) error {
				for _, rec := range ws {
					if err := w.write(rec); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			s.tasks.init()
			for i := 0; i < n; i++ {
				w := new(WorkerRecord)
				if err := r.read(w); err != nil {
					return err
				}
				s.tasks.workers[w.Host] = w
			}
			return nil
		},
	},
}

func init() {
	on(applySubmitTask)
	on(applyAssignTask)
	on(applyTaskStatusUpdate)
	on(applyShutdownTask)
	on(applyAcquireLock)
	on(applyReleaseLock)
	on(applyRegisterWorker)
	on(applySetWorkerEnabled)
	tables = append(tables, taskTables...)
}
