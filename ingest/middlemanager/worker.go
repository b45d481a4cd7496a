package middlemanager

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/commands"
	"strata/metrics"
)

// Config configures a worker.
type Config struct {
	Host      string   // host:port the overlord and clients reach this worker at
	Scheme    string   // http (default) or https
	IP        string   // reported in the workers listing (default: the host part of Host)
	Capacity  int      // tasks run at once (≥ 1)
	Category  string   // worker category for category-aware select strategies
	Version   string   // worker version (Druid's druid.worker.version, "0" by default)
	DataDir   string   // task directories and logs live under DataDir/tasks
	Overlords []string // base URLs of the control nodes; requests follow leader redirects

	HeartbeatPeriod time.Duration // default 1s
	// Serving serves tasks' segments to brokers (nil: tasks' rows are queryable
	// only once published and loaded).
	Serving SegmentServer
	// HandoffTimeout bounds how long published segments are served from here
	// waiting for a historical to load them (default 15 min, Druid's
	// handoffConditionTimeout); HandoffPollPeriod is how often the
	// coordinator is asked (default 1s).
	HandoffTimeout    time.Duration
	HandoffPollPeriod time.Duration
	Client            *http.Client // default: 10 s timeout
	Logger            hclog.Logger
	// Metrics records the tasks' publish, hand-off and run times (the
	// process's registry; nil: not recorded).
	Metrics *metrics.Ingest
}

// Errors of Run.
var (
	ErrAtCapacity  = errors.New("worker is at capacity")
	ErrUnknownType = errors.New("unknown task type")
	ErrStopping    = errors.New("worker is stopping")
	ErrNoLog       = errors.New("no log for this task")
)

// Worker runs tasks for the overlord.
type Worker struct {
	cfg    Config
	log    hclog.Logger
	client *http.Client

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	start  sync.Once
	begun  time.Time // when Start was called
	stop   sync.Once
	done   chan struct{}

	mu         sync.Mutex
	enabled    bool
	registered bool
	running    map[string]*taskRun
	unacked    map[string]StatusReport // finished, the leader has not recorded it yet
	handingOff map[string]bool         // tasks whose published segments are still served from here
	leader     string                  // base URL that last answered
}

type taskRun struct {
	task   Task
	cancel context.CancelCauseFunc
}

var errStopping = errors.New("middle manager is stopping")

// Stopping reports whether a task's context ended because its worker is
// stopping (rather than a shutdown of the task).
func Stopping(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errStopping) }

// New checks the configuration and builds a stopped worker.
func New(cfg Config) (*Worker, error) {
	host, port, err := net.SplitHostPort(cfg.Host)
	if err != nil || host == "" || port == "" {
		return nil, fmt.Errorf("worker host %q must be host:port", cfg.Host)
	}
	if cfg.Capacity < 1 {
		return nil, fmt.Errorf("worker capacity %d must be at least 1", cfg.Capacity)
	}
	if len(cfg.Overlords) == 0 {
		return nil, errors.New("worker needs the overlord URLs (svc.worker.overlordUrls)")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("worker needs a data directory")
	}
	if cfg.Scheme == "" {
		cfg.Scheme = "http"
	}
	if cfg.IP == "" {
		cfg.IP = host
	}
	if cfg.Category == "" {
		cfg.Category = commands.DefaultWorkerCategory
	}
	if cfg.HeartbeatPeriod <= 0 {
		cfg.HeartbeatPeriod = time.Second
	}
	if cfg.HandoffTimeout <= 0 {
		cfg.HandoffTimeout = 15 * time.Minute
	}
	if cfg.HandoffPollPeriod <= 0 {
		cfg.HandoffPollPeriod = time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	for i, u := range cfg.Overlords {
		cfg.Overlords[i] = strings.TrimRight(u, "/")
	}
	w := &Worker{
		cfg: cfg, log: cfg.Logger, client: cfg.Client, done: make(chan struct{}),
		enabled: true, running: map[string]*taskRun{}, unacked: map[string]StatusReport{}, handingOff: map[string]bool{},
	}
	w.ctx, w.cancel = context.WithCancelCause(context.Background())
	return w, nil
}

// Host is the worker's host:port.
func (w *Worker) Host() string { return w.cfg.Host }

// Start registers with the leader (retrying until it answers) and heartbeats.
func (w *Worker) Start() {
	w.start.Do(func() {
		w.begun = time.Now()
		w.wg.Add(1)
		go w.loop()
	})
}

// Stop cancels running tasks and stops talking to the overlord, as a process
// exit would: the leader fails the tasks when the heartbeat timeout passes, or
// at once when the worker registers again.
func (w *Worker) Stop() {
	w.stop.Do(func() {
		w.cancel(errStopping)
		w.wg.Wait()
		close(w.done)
	})
}

// Done is closed once Stop has finished.
func (w *Worker) Done() <-chan struct{} { return w.done }

// Enabled reports whether the worker takes new tasks.
func (w *Worker) Enabled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enabled
}

// SetEnabled asks the leader to enable or disable assignments to this worker;
// running tasks are not affected.
func (w *Worker) SetEnabled(ctx context.Context, enabled bool) error {
	status, body, err := w.post(ctx, PathWorkerEnabled, EnableRequest{Host: w.cfg.Host, Enabled: enabled}, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("overlord answered %d: %s", status, body)
	}
	w.mu.Lock()
	w.enabled = enabled
	w.mu.Unlock()
	return nil
}

// TaskIDs lists the tasks running here, sorted.
func (w *Worker) TaskIDs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runningIDsLocked()
}

func (w *Worker) runningIDsLocked() []string {
	out := make([]string, 0, len(w.running))
	for id := range w.running {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Run starts a task the leader assigned. Assigning a task that runs (or ran)
// here already is not an error.
func (w *Worker) Run(t Task) error {
	if err := commands.ValidateTaskID(t.ID); err != nil {
		return err
	}
	runner, ok := RunnerFor(t.Type)
	if !ok {
		return fmt.Errorf("%w %q (this worker knows %v)", ErrUnknownType, t.Type, Types())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return ErrStopping
	}
	if _, ok := w.running[t.ID]; ok {
		return nil
	}
	if _, ok := w.unacked[t.ID]; ok {
		return nil
	}
	if len(w.running) >= w.cfg.Capacity {
		return fmt.Errorf("%w (%d tasks)", ErrAtCapacity, w.cfg.Capacity)
	}
	dir := w.taskDir(t.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("task directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("task log: %w", err)
	}
	ctx, cancel := context.WithCancelCause(w.ctx)
	w.running[t.ID] = &taskRun{task: t, cancel: cancel}
	w.wg.Add(1)
	go w.execute(ctx, t, runner, f, dir)
	return nil
}

// Shutdown cancels a running task; the task ends FAILED with reason. It
// reports whether the task was running.
func (w *Worker) Shutdown(id, reason string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.running[id]
	if ok {
		r.cancel(errors.New(reason))
	}
	return ok
}

func (w *Worker) location() *commands.TaskLocation {
	host, p, _ := net.SplitHostPort(w.cfg.Host)
	port, _ := strconv.Atoi(p)
	if w.cfg.Scheme == "https" {
		return &commands.TaskLocation{Host: host, Port: -1, TLSPort: port}
	}
	return &commands.TaskLocation{Host: host, Port: port, TLSPort: -1}
}

func (w *Worker) execute(ctx context.Context, t Task, runner Runner, f *os.File, dir string) {
	defer w.wg.Done()
	tl := &taskLog{w: f, id: t.ID}
	tm := &taskMetrics{m: w.cfg.Metrics, taskType: t.Type}
	env := Env{log: tl, dir: dir, host: w.cfg.Host, metrics: tm,
		act: func(ctx context.Context, a Action) (json.RawMessage, error) { return w.act(ctx, t.ID, a) },
		report: func(ctx context.Context, r Report) error {
			if !isJSONObject(r) {
				return errors.New("a report must be a JSON object")
			}
			st := StatusReport{ID: t.ID, Worker: w.cfg.Host, Status: commands.TaskRunning, Location: w.location(), Report: json.RawMessage(r)}
			status, body, err := w.post(ctx, PathTaskStatus, st, nil)
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("overlord answered %d: %s", status, body)
			}
			return err
		},
	}
	tl.printf("Running task[%s] of type[%s] for dataSource[%s] on %s", t.ID, t.Type, t.DataSource, w.cfg.Host)
	w.wg.Add(1)
	go func() { // the heartbeat carries the start too; this only makes it quick
		defer w.wg.Done()
		w.deliver(StatusReport{ID: t.ID, Worker: w.cfg.Host, Status: commands.TaskRunning, Location: w.location()})
	}()

	if w.cfg.Serving != nil {
		env.serve = func(segs []Served) error { return w.cfg.Serving.ServeLocal(t.ID, segs) }
		env.handoff = func(ds string, segs []Served) error { return w.handoff(t.ID, ds, segs, tm) }
		env.hold = func() func() { return w.cfg.Serving.HoldLocal(t.ID) }
	}
	started := time.Now()
	report, err := runSafely(ctx, runner, t, env)
	w.cfg.Metrics.TaskRan(t.DataSource, t.Type, time.Since(started))
	if w.cfg.Serving != nil {
		w.mu.Lock()
		handing := w.handingOff[t.ID]
		w.mu.Unlock()
		if !handing { // rows never published stop being served with the task
			w.cfg.Serving.ServeLocal(t.ID, nil)
		}
	}
	st := StatusReport{ID: t.ID, Worker: w.cfg.Host, Status: commands.TaskSuccess, Location: w.location()}
	if cause := context.Cause(ctx); cause != nil && err != nil {
		err = cause // a shutdown, whatever the runner made of it
	}
	if err == nil && len(report) > 0 && !isJSONObject(report) {
		err = fmt.Errorf("task wrote an invalid report (not a JSON object)")
	}
	if err != nil {
		st.Status, st.ErrorMsg = commands.TaskFailed, err.Error()
		tl.printf("Task[%s] failed: %s", t.ID, st.ErrorMsg)
	} else {
		tl.printf("Task[%s] completed with status SUCCESS", t.ID)
	}
	// A failed task's report (its error report) replaces the last live one
	// too, so a RUNNING report never outlives the task.
	if len(report) > 0 && isJSONObject(report) {
		st.Report = json.RawMessage(report)
	}
	f.Close()
	w.mu.Lock()
	delete(w.running, t.ID)
	w.unacked[t.ID] = st
	w.mu.Unlock()
	if w.ctx.Err() == nil {
		w.deliver(st)
	}
}

// runSafely runs a task, turning a panic into a failure: a broken runner must
// not take the worker down with it.
func runSafely(ctx context.Context, r Runner, t Task, env Env) (rep Report, err error) {
	defer func() {
		if v := recover(); v != nil {
			rep, err = nil, fmt.Errorf("task runner panicked: %v", v)
		}
	}()
	return r.Run(ctx, t, env)
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// deliver sends a status to the leader. A final status the leader recorded
// (or refused for good: 4xx) is acknowledged; otherwise the heartbeat retries.
func (w *Worker) deliver(st StatusReport) {
	status, body, err := w.post(w.ctx, PathTaskStatus, st, nil)
	if err != nil || status >= 500 {
		w.log.Debug("status not delivered; the heartbeat will retry", "task", st.ID, "status", status, "error", err)
		return
	}
	if status != http.StatusOK {
		w.log.Info("overlord refused task status", "task", st.ID, "status", st.Status, "answer", status, "body", string(body))
	}
	// 409: the leader has already ended the task (for example failed it when
	// this worker restarted, while an assignment was still in flight). A copy
	// that went on running would serve rows the task the supervisor started
	// in its place serves too, so it stops at once.
	if status == http.StatusConflict && st.Status == commands.TaskRunning {
		w.Shutdown(st.ID, "the overlord has already ended this task: "+string(bytes.TrimSpace(body)))
	}
	if st.Status != commands.TaskRunning {
		w.mu.Lock()
		delete(w.unacked, st.ID)
		w.mu.Unlock()
	}
}

// act submits a task action for one of this worker's tasks.
func (w *Worker) act(ctx context.Context, taskID string, a Action) (json.RawMessage, error) {
	var out json.RawMessage
	status, body, err := w.post(ctx, PathTaskAction, ActionRequest{TaskID: taskID, Worker: w.cfg.Host, Action: a}, &out)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		msg := string(body)
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return nil, &ActionError{Status: status, Msg: msg}
	}
	return out, nil
}

func (w *Worker) loop() {
	defer w.wg.Done()
	t := time.NewTicker(w.cfg.HeartbeatPeriod)
	defer t.Stop()
	for {
		w.mu.Lock()
		registered := w.registered
		w.mu.Unlock()
		if registered {
			w.heartbeat()
		} else {
			w.register()
		}
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// errOverlordUnavailable marks a 503 from every overlord: none leads yet.
var errOverlordUnavailable = errors.New("no overlord is leading yet")

// registerQuietPeriod is how long after start an overlord that is not ready
// yet (503) is expected rather than warned about.
const registerQuietPeriod = 15 * time.Second

func (w *Worker) register() {
	w.mu.Lock()
	reg := Registration{Host: w.cfg.Host, Scheme: w.cfg.Scheme, IP: w.cfg.IP, Capacity: w.cfg.Capacity,
		Category: w.cfg.Category, Version: w.cfg.Version, Running: w.runningIDsLocked()}
	w.mu.Unlock()
	var reply HeartbeatReply
	status, body, err := w.postWithin(w.ctx, w.attemptTimeout(), PathRegister, reg, &reply)
	if err != nil || status != http.StatusOK {
		switch {
		case w.ctx.Err() != nil:
		case errors.Is(err, errOverlordUnavailable) && time.Since(w.begun) < registerQuietPeriod:
			// The overlord is still being elected or starting (the quickstart
			// starts everything at once): expected, not worth a warning.
			w.log.Debug("overlord not ready yet; retrying registration", "status", status)
		default:
			w.log.Warn("cannot register with the overlord; retrying", "status", status, "body", string(body), "error", err)
		}
		return
	}
	w.log.Info("registered with the overlord", "leader", w.leaderURL())
	w.mu.Lock()
	w.registered, w.enabled = true, reply.Enabled
	w.mu.Unlock()
}

func (w *Worker) heartbeat() {
	w.mu.Lock()
	hb := Heartbeat{Host: w.cfg.Host, Running: w.runningIDsLocked()}
	for _, st := range w.unacked {
		hb.Completed = append(hb.Completed, st)
	}
	w.mu.Unlock()
	slices.SortFunc(hb.Completed, func(a, b StatusReport) int { return strings.Compare(a.ID, b.ID) })
	var reply HeartbeatReply
	status, _, err := w.postWithin(w.ctx, w.attemptTimeout(), PathHeartbeat, hb, &reply)
	switch {
	case err != nil || status >= 500:
		return
	case status == http.StatusNotFound: // the leader does not know this worker
		w.mu.Lock()
		w.registered = false
		w.mu.Unlock()
		return
	case status != http.StatusOK:
		return
	}
	w.mu.Lock()
	w.enabled = reply.Enabled
	for _, id := range reply.Ack {
		delete(w.unacked, id)
	}
	w.mu.Unlock()
	for _, id := range reply.Shutdown {
		w.Shutdown(id, "the overlord no longer assigns this task to this worker")
	}
}

// attemptTimeout bounds one heartbeat or registration attempt: a few periods,
// between 1 and 3 seconds.
func (w *Worker) attemptTimeout() time.Duration {
	return min(max(3*w.cfg.HeartbeatPeriod, time.Second), 3*time.Second)
}

func (w *Worker) leaderURL() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leader
}

// post sends JSON to the overlord leader: the last URL that answered first,
// then each configured one. Redirects to the leader are followed; a 503 (no
// leader yet) or a connection error moves on to the next URL.
func (w *Worker) post(ctx context.Context, path string, in, out any) (int, []byte, error) {
	return w.postWithin(ctx, 0, path, in, out)
}

// postWithin is post with a bound on each attempt, so that an unreachable node
// cannot hold up a heartbeat until the worker looks dead.
func (w *Worker) postWithin(ctx context.Context, perAttempt time.Duration, path string, in, out any) (int, []byte, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return 0, nil, err
	}
	urls := w.cfg.Overlords
	if l := w.leaderURL(); l != "" {
		urls = append([]string{l}, urls...)
	}
	var lastErr error
	for _, base := range urls {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if perAttempt > 0 {
			actx, cancel = context.WithTimeout(ctx, perAttempt)
		}
		req, err := http.NewRequestWithContext(actx, http.MethodPost, base+path, bytes.NewReader(body))
		if err != nil {
			cancel()
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := w.client.Do(req)
		if err != nil {
			cancel()
			lastErr = err
			if ctx.Err() != nil {
				return 0, nil, ctx.Err()
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			lastErr = fmt.Errorf("%s: 503 %s: %w", base, b, errOverlordUnavailable)
			continue
		}
		final := resp.Request.URL
		w.mu.Lock()
		w.leader = final.Scheme + "://" + final.Host
		w.mu.Unlock()
		if resp.StatusCode == http.StatusOK && out != nil && len(b) > 0 {
			if err := json.Unmarshal(b, out); err != nil {
				return resp.StatusCode, b, fmt.Errorf("decode overlord answer: %w", err)
			}
		}
		return resp.StatusCode, b, nil
	}
	w.mu.Lock()
	w.leader = ""
	w.mu.Unlock()
	if lastErr == nil {
		lastErr = errors.New("no overlord URL configured")
	}
	return 0, nil, lastErr
}

// taskDir is a task's directory. Ids are validated (no '/', no leading '.'),
// so they name directories directly unless too long for a file name.
func (w *Worker) taskDir(id string) string {
	name := id
	if len(name) > 200 {
		sum := sha256.Sum256([]byte(id))
		name = "task-" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(w.cfg.DataDir, "tasks", name)
}

// OpenLog opens a task's log at offset (Druid's semantics): 0 = the whole log,
// > 0 = from that byte, < 0 = the last -offset bytes. ErrNoLog when the task
// never ran here.
func (w *Worker) OpenLog(id string, offset int64) (io.ReadCloser, error) {
	if commands.ValidateTaskID(id) != nil {
		return nil, ErrNoLog
	}
	f, err := os.Open(filepath.Join(w.taskDir(id), "log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoLog
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	start := offset
	switch {
	case offset < 0:
		start = max(0, size+offset)
	case offset > size:
		start = size
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	// Read up to the size seen now, so that a log still being written ends
	// cleanly.
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, size-start), f}, nil
}
