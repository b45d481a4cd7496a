// Package overlord is the leader side of task execution: while its control node
// leads, it assigns pending tasks to live, enabled workers with free slots (by
// the select strategy of the overlord dynamic config), hands them over to the
// workers, takes their status reports and heartbeats, and fails the tasks of a
// worker that falls silent. All task state is in the FSM; what lives here is
// only what a new leader can rebuild: worker liveness from heartbeats. A new
// leader adopts the running tasks it finds in the FSM and gives their workers a
// full heartbeat timeout before it fails anything.
package overlord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/interval"
)

// Config configures the leader-side task runner.
type Config struct {
	// HeartbeatTimeout is how long a worker may be silent before its running
	// tasks fail (svc.worker.heartbeatTimeout, default 10 s).
	HeartbeatTimeout time.Duration
	// AssignmentTimeout is how long a live worker may go without listing a task
	// assigned to it before the task fails (svc.indexer.runner.taskAssignmentTimeout,
	// default HeartbeatTimeout).
	AssignmentTimeout time.Duration
	// Tick is how often pending tasks and liveness are checked (default 200 ms);
	// submissions, completions and registrations trigger a check at once.
	Tick   time.Duration
	Client *http.Client
	Logger hclog.Logger
}

// Errors.
var (
	ErrNotReady      = errors.New("overlord is not the leader or not initialized yet")
	ErrUnknownWorker = errors.New("worker is not registered")
	ErrNoLog         = errors.New("no log for this task")
)

// Overlord runs the leader duties of one control node.
type Overlord struct {
	node *cluster.Node
	cfg  Config
	log  hclog.Logger
	kick chan struct{}
	done chan struct{}

	mu         sync.Mutex
	leading    bool
	leadCtx    context.Context
	leadCancel context.CancelFunc
	leadSince  time.Time
	live       map[string]time.Time // worker → last heartbeat (leadership start for adopted workers)
	seen       map[string]time.Time // task → last time its worker listed it
	pushed     map[string]bool      // tasks handed (or being handed) to their worker this term
	pushes     sync.WaitGroup

	rounds atomic.Int64 // assignment rounds finished while leading (Rounds)
}

var (
	regMu    sync.Mutex
	attached = map[*cluster.Node]*Overlord{}
)

// Attach starts the overlord of a control node, or returns the one already
// attached. It follows the node's leadership on its own and stops when the
// node shuts down.
func Attach(node *cluster.Node, cfg Config) *Overlord {
	regMu.Lock()
	defer regMu.Unlock()
	if o := attached[node]; o != nil {
		return o
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = 10 * time.Second
	}
	if cfg.AssignmentTimeout <= 0 {
		cfg.AssignmentTimeout = cfg.HeartbeatTimeout
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 200 * time.Millisecond
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	o := &Overlord{node: node, cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1), done: make(chan struct{})}
	attached[node] = o
	go o.run()
	return o
}

// For returns the overlord attached to a node, or nil.
func For(node *cluster.Node) *Overlord {
	regMu.Lock()
	defer regMu.Unlock()
	return attached[node]
}

// Done is closed when the overlord has stopped (its node shut down).
func (o *Overlord) Done() <-chan struct{} { return o.done }

// Kick asks for an assignment round now.
func (o *Overlord) Kick() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// Rounds counts the assignment rounds this overlord has finished while
// leading. Once it has grown by two, every task pending before was
// considered for a worker: tests wait on it to show that a task stays
// unassigned, instead of sleeping.
func (o *Overlord) Rounds() int64 { return o.rounds.Load() }

// Leading reports whether this overlord has taken up the leader duties.
func (o *Overlord) Leading() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.leading
}

func (o *Overlord) run() {
	defer close(o.done)
	t := time.NewTicker(o.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-o.kick:
		}
		if o.node.State() == "Shutdown" {
			o.setLeading(false)
			o.pushes.Wait()
			regMu.Lock()
			delete(attached, o.node)
			regMu.Unlock()
			return
		}
		leader := o.node.IsLeader()
		o.setLeading(leader)
		if leader {
			o.assign()
			o.checkLiveness()
			o.rounds.Add(1)
		}
	}
}

func (o *Overlord) setLeading(leader bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.setLeadingLocked(leader)
}

func (o *Overlord) setLeadingLocked(leader bool) {
	if leader == o.leading {
		return
	}
	o.leading = leader
	if !leader {
		o.leadCancel()
		o.log.Info("stopped leading the task queue")
		return
	}
	o.leadCtx, o.leadCancel = context.WithCancel(context.Background())
	o.leadSince = time.Now()
	o.live, o.seen, o.pushed = map[string]time.Time{}, map[string]time.Time{}, map[string]bool{}
	o.log.Info("leading the task queue")
}

// leadContext returns the context of the current term, or an error when not
// leading. A request that arrives on a fresh leader before the loop noticed
// takes up the duties at once.
func (o *Overlord) leadContext() (context.Context, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.leading && o.node.IsLeader() {
		o.setLeadingLocked(true)
		o.Kick()
	}
	if !o.leading {
		return nil, ErrNotReady
	}
	return o.leadCtx, nil
}

var overlordAudit = commands.Audit{Author: "overlord"}

func (o *Overlord) propose(cmd commands.Command) (any, error) {
	return o.node.Propose(cmd, overlordAudit, 10*time.Second)
}

func (o *Overlord) isLive(host string, now time.Time) bool {
	last, ok := o.live[host]
	return ok && now.Sub(last) <= o.cfg.HeartbeatTimeout
}

// assign hands pending tasks to workers, oldest first, and (re)sends assigned
// tasks that their worker has not confirmed yet.
func (o *Overlord) assign() {
	ctx, err := o.leadContext()
	if err != nil {
		return
	}
	var pending, unstarted []*fsm.TaskRecord
	var workers []*fsm.WorkerRecord
	load := map[string]int{}
	var strategy *commands.SelectStrategy
	replicaOn := map[string]map[string]bool{} // replica group → workers running one of its tasks
	o.node.FSM().Read(func(s *fsm.State) {
		if cfg, ok := s.WorkerConfig(); ok {
			strategy = cfg.SelectStrategy
		}
		for _, r := range s.ActiveTasks() {
			if spreadsReplicas(r.Type) && r.Worker != "" {
				if replicaOn[r.GroupID] == nil {
					replicaOn[r.GroupID] = map[string]bool{}
				}
				replicaOn[r.GroupID][r.Worker] = true
			}
			switch {
			case r.RunnerStatus == commands.RunnerPending:
				pending = append(pending, r)
			case r.RunnerStatus == commands.RunnerRunning && r.StartedMs == 0:
				unstarted = append(unstarted, r)
			}
		}
		workers = s.Workers()
		for _, w := range workers {
			load[w.Host] = s.WorkerLoad(w.Host)
		}
	})
	now := time.Now()
	var cands []Candidate
	schemes := map[string]string{}
	o.mu.Lock()
	for _, w := range workers {
		schemes[w.Host] = w.Scheme
		if w.Enabled && o.isLive(w.Host, now) {
			cands = append(cands, Candidate{Host: w.Host, Category: w.Category, Version: w.Version, Capacity: w.Capacity, Used: load[w.Host]})
		}
	}
	o.mu.Unlock()
	for _, t := range pending {
		i := selectReplicaWorker(strategy, t, cands, replicaOn)
		if i < 0 {
			continue
		}
		v, err := o.propose(commands.AssignTask{ID: t.ID, Worker: cands[i].Host})
		if errors.Is(err, cluster.ErrNotLeader) {
			return
		}
		if err != nil {
			o.log.Debug("assignment refused", "task", t.ID, "worker", cands[i].Host, "error", err)
			continue
		}
		cands[i].Used++
		if spreadsReplicas(t.Type) {
			if replicaOn[t.GroupID] == nil {
				replicaOn[t.GroupID] = map[string]bool{}
			}
			replicaOn[t.GroupID][cands[i].Host] = true
		}
		unstarted = append(unstarted, v.(*fsm.TaskRecord))
	}
	for _, t := range unstarted {
		o.mu.Lock()
		if o.pushed[t.ID] || !o.leading {
			o.mu.Unlock()
			continue
		}
		o.pushed[t.ID] = true
		o.mu.Unlock()
		o.track(func() { o.push(ctx, t, schemes[t.Worker]) })
	}
}

// track runs fn in a goroutine the overlord waits for when it stops; nothing
// starts once leadership is lost (the stop waits only after that).
func (o *Overlord) track(fn func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.leading {
		return
	}
	o.pushes.Add(1)
	go func() {
		defer o.pushes.Done()
		fn()
	}()
}

// push hands an assigned task to its worker. A refusal, or a worker that stays
// unreachable, fails the task.
func (o *Overlord) push(ctx context.Context, t *fsm.TaskRecord, scheme string) {
	if scheme == "" {
		scheme = "http"
	}
	body, _ := json.Marshal(middlemanager.Task{ID: t.ID, Type: t.Type, GroupID: t.GroupID, DataSource: t.DataSource, Payload: json.RawMessage(t.Payload)})
	var lastErr error
	for attempt := 0; attempt < 4; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+t.Worker+middlemanager.PathRun, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := o.cfg.Client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return // leadership lost: the next leader hands it over
			}
			lastErr = err
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			o.fail(t, fmt.Sprintf("middle manager %s refused the task: %s", t.Worker, errorText(msg)))
			return
		}
		lastErr = fmt.Errorf("answer %d: %s", resp.StatusCode, errorText(msg))
	}
	o.fail(t, fmt.Sprintf("could not hand the task to middle manager %s: %v", t.Worker, lastErr))
}

func errorText(b []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return e.Error
	}
	return string(b)
}

func (o *Overlord) fail(t *fsm.TaskRecord, msg string) {
	_, err := o.propose(commands.TaskStatusUpdate{ID: t.ID, Worker: t.Worker, Status: commands.TaskFailed, ErrorMsg: msg})
	if err != nil {
		o.log.Debug("could not fail task", "task", t.ID, "error", err)
		return
	}
	o.log.Warn("task failed", "task", t.ID, "worker", t.Worker, "reason", msg)
	o.Kick()
}

// checkLiveness fails the running tasks of silent workers, and tasks a live
// worker has not listed for the assignment timeout.
func (o *Overlord) checkLiveness() {
	var running []*fsm.TaskRecord
	o.node.FSM().Read(func(s *fsm.State) {
		for _, r := range s.ActiveTasks() {
			if r.RunnerStatus == commands.RunnerRunning {
				running = append(running, r)
			}
		}
	})
	now := time.Now()
	type failure struct {
		t   *fsm.TaskRecord
		msg string
	}
	var fails []failure
	o.mu.Lock()
	if !o.leading {
		o.mu.Unlock()
		return
	}
	// Forget tasks that are no longer running.
	ids := make(map[string]bool, len(running))
	for _, t := range running {
		ids[t.ID] = true
	}
	for id := range o.seen {
		if !ids[id] {
			delete(o.seen, id)
		}
	}
	for id := range o.pushed {
		if !ids[id] {
			delete(o.pushed, id)
		}
	}
	for _, t := range running {
		last, ok := o.live[t.Worker]
		if !ok { // adopted from an earlier leader: a full timeout from now
			last = o.leadSince
			o.live[t.Worker] = last
		}
		if silent := now.Sub(last); silent > o.cfg.HeartbeatTimeout {
			fails = append(fails, failure{t, fmt.Sprintf("worker %s disappeared: no heartbeat for %s", t.Worker, silent.Round(time.Millisecond))})
			continue
		}
		seen, ok := o.seen[t.ID]
		if !ok {
			o.seen[t.ID] = now
			continue
		}
		if missing := now.Sub(seen); missing > o.cfg.AssignmentTimeout {
			fails = append(fails, failure{t, fmt.Sprintf("task is not running on middle manager %s: its heartbeats have not listed it for %s", t.Worker, missing.Round(time.Millisecond))})
		}
	}
	o.mu.Unlock()
	for _, f := range fails {
		o.fail(f.t, f.msg)
	}
}

// WorkerGone marks the worker at host silent since forever: discovery says
// its process is gone, so its running tasks fail (and their supervisors
// start replacements) at the next liveness check instead of after the
// heartbeat timeout, and no task is assigned to it. Its next heartbeat, if
// it comes back, makes it live again.
func (o *Overlord) WorkerGone(host string) {
	o.mu.Lock()
	if o.leading {
		o.live[host] = time.Time{}
	}
	o.mu.Unlock()
	o.Kick() // the next round checks liveness
}

// Register records a worker that has started.
func (o *Overlord) Register(reg middlemanager.Registration, audit commands.Audit) (middlemanager.HeartbeatReply, error) {
	if _, err := o.leadContext(); err != nil {
		return middlemanager.HeartbeatReply{}, err
	}
	v, err := o.node.Propose(commands.RegisterWorker{Host: reg.Host, Scheme: reg.Scheme, IP: reg.IP, Capacity: reg.Capacity,
		Category: reg.Category, Version: reg.Version, Running: reg.Running}, audit, 10*time.Second)
	if err != nil {
		return middlemanager.HeartbeatReply{}, err
	}
	if lost := v.(fsm.RegisterResult).Lost; len(lost) > 0 {
		o.log.Warn("worker restarted; its earlier tasks failed", "worker", reg.Host, "tasks", lost)
	}
	o.mu.Lock()
	if o.leading {
		o.live[reg.Host] = time.Now()
		for _, id := range reg.Running {
			o.seen[id] = time.Now()
		}
	}
	o.mu.Unlock()
	o.Kick()
	return middlemanager.HeartbeatReply{Enabled: true}, nil
}

// Heartbeat records a worker's liveness and reconciles its view with the FSM:
// it reports the starts and completions the FSM has not recorded, and answers
// with the tasks the worker must cancel and the completions it may forget.
func (o *Overlord) Heartbeat(hb middlemanager.Heartbeat) (middlemanager.HeartbeatReply, error) {
	var reply middlemanager.HeartbeatReply
	if _, err := o.leadContext(); err != nil {
		return reply, err
	}
	var worker *fsm.WorkerRecord
	recs := map[string]*fsm.TaskRecord{}
	o.node.FSM().Read(func(s *fsm.State) {
		worker, _ = s.Worker(hb.Host)
		for _, id := range hb.Running {
			recs[id], _ = s.Task(id)
		}
		for _, c := range hb.Completed {
			recs[c.ID], _ = s.Task(c.ID)
		}
	})
	if worker == nil {
		return reply, ErrUnknownWorker
	}
	reply.Enabled = worker.Enabled
	now := time.Now()
	var start []*fsm.TaskRecord
	o.mu.Lock()
	o.live[hb.Host] = now
	for _, id := range hb.Running {
		r := recs[id]
		if r == nil || !r.Active() || r.Worker != hb.Host || r.RunnerStatus != commands.RunnerRunning {
			reply.Shutdown = append(reply.Shutdown, id)
			continue
		}
		o.seen[id] = now
		if r.StartedMs == 0 {
			start = append(start, r)
		}
	}
	o.mu.Unlock()
	for _, r := range start {
		o.propose(commands.TaskStatusUpdate{ID: r.ID, Worker: hb.Host, Status: commands.TaskRunning, Location: &r.Location})
	}
	completed := false
	for _, c := range hb.Completed {
		r := recs[c.ID]
		if r == nil || r.Worker != hb.Host || (!r.Active() && (len(c.Report) == 0 || r.ReportFinal)) {
			reply.Ack = append(reply.Ack, c.ID)
			continue
		}
		_, err := o.propose(commands.TaskStatusUpdate{ID: c.ID, Worker: hb.Host, Status: c.Status, Location: c.Location, ErrorMsg: c.ErrorMsg, Report: c.Report})
		if err == nil || fsm.KindOf(err) != 0 {
			reply.Ack = append(reply.Ack, c.ID) // recorded, or refused for good
			completed = completed || err == nil
		}
	}
	if completed {
		o.Kick()
	}
	return reply, nil
}

// ReportStatus records a status a worker reports for one of its tasks.
func (o *Overlord) ReportStatus(st middlemanager.StatusReport) error {
	if _, err := o.leadContext(); err != nil {
		return err
	}
	_, err := o.propose(commands.TaskStatusUpdate{ID: st.ID, Worker: st.Worker, Status: st.Status, Location: st.Location, ErrorMsg: st.ErrorMsg, Report: st.Report})
	if err != nil {
		return err
	}
	if st.Status == commands.TaskRunning {
		o.mu.Lock()
		if o.leading {
			o.seen[st.ID] = time.Now()
		}
		o.mu.Unlock()
	} else {
		o.Kick()
	}
	return nil
}

// SetWorkerEnabled enables or disables assignments to a worker.
func (o *Overlord) SetWorkerEnabled(host string, enabled bool, audit commands.Audit) error {
	if _, err := o.leadContext(); err != nil {
		return err
	}
	if _, err := o.node.Propose(commands.SetWorkerEnabled{Host: host, Enabled: enabled}, audit, 10*time.Second); err != nil {
		return err
	}
	o.Kick()
	return nil
}

// Submitted tells the overlord a task was stored (assign it now).
func (o *Overlord) Submitted() { o.Kick() }

// Shutdown ends an active task as FAILED (ShutdownByUser) and tells its worker
// to cancel it. It reports whether the task was active.
func (o *Overlord) Shutdown(id string, audit commands.Audit) (bool, error) {
	return o.ShutdownFor(id, "", audit)
}

// ShutdownFor is Shutdown with the reason the task's status records ("" is
// Druid's "Shutdown request from user").
func (o *Overlord) ShutdownFor(id, reason string, audit commands.Audit) (bool, error) {
	ctx, err := o.leadContext()
	if err != nil {
		return false, err
	}
	v, err := o.node.Propose(commands.ShutdownTask{ID: id, Reason: reason}, audit, 10*time.Second)
	if err != nil {
		return false, err
	}
	res := v.(fsm.ShutdownResult)
	if res.Worker != "" {
		var scheme string
		o.node.FSM().Read(func(s *fsm.State) {
			if w, ok := s.Worker(res.Worker); ok {
				scheme = w.Scheme
			}
		})
		o.track(func() { // best effort: the next heartbeat cancels it otherwise
			if scheme == "" {
				scheme = "http"
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+res.Worker+"/svc/worker/v1/task/"+url.PathEscape(id)+"/shutdown", nil)
			if resp, err := o.cfg.Client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	if res.WasActive {
		o.Kick()
	}
	return res.WasActive, nil
}

// groupReportsBack bounds the ended tasks a groupTasks action looks at: the
// replicas of a running sequence were submitted among the newest.
const groupReportsBack = 200

// Act performs a task action for a task running on the asking worker.
func (o *Overlord) Act(req middlemanager.ActionRequest) (any, error) {
	if _, err := o.leadContext(); err != nil {
		return nil, err
	}
	var rec *fsm.TaskRecord
	o.node.FSM().Read(func(s *fsm.State) { rec, _ = s.Task(req.TaskID) })
	switch {
	case rec == nil:
		return nil, fsm.NotFound("task %s does not exist", req.TaskID)
	case !rec.Active() || rec.RunnerStatus != commands.RunnerRunning || rec.Worker != req.Worker:
		return nil, fsm.Conflict("task %s is not running on worker %s", req.TaskID, req.Worker)
	}
	a := req.Action
	audit := commands.Audit{Author: "task:" + req.TaskID}
	switch a.Type {
	case middlemanager.ActionLockAcquire:
		return o.node.Propose(commands.AcquireLock{TaskID: rec.ID, Interval: a.Interval}, audit, 10*time.Second)
	case middlemanager.ActionLockRelease:
		v, err := o.node.Propose(commands.ReleaseLock{TaskID: rec.ID, Interval: a.Interval}, audit, 10*time.Second)
		if err != nil {
			return nil, err
		}
		o.Kick()
		return map[string]int{"released": v.(int)}, nil
	case middlemanager.ActionKillSegments:
		iv, err := interval.Parse(a.Interval)
		if err != nil {
			return nil, fsm.Invalid("invalid interval %q: %v", a.Interval, err)
		}
		covered := false
		o.node.FSM().Read(func(s *fsm.State) { covered = s.LockCovers(rec.ID, iv) })
		if !covered {
			return nil, fsm.Conflict("task %s holds no lock covering %s of %s", rec.ID, iv, rec.DataSource)
		}
		marked := 0
		if a.MarkAsUnused {
			payload, _ := json.Marshal(map[string]string{"interval": iv.String(), "killTaskId": rec.ID})
			v, err := o.node.Propose(commands.MarkSegments{DataSource: rec.DataSource, Interval: iv.String(),
				AuditPayload: string(payload)}, audit, 10*time.Second)
			if err != nil {
				return nil, err
			}
			marked = v.(fsm.MarkResult).Changed
		}
		v, err := o.node.Propose(commands.KillSegments{DataSource: rec.DataSource, Interval: iv.String(), TaskID: rec.ID}, audit, 10*time.Second)
		if err != nil {
			return nil, err
		}
		return map[string]any{"killed": v.(fsm.KillResult).Deleted, "markedUnused": marked}, nil
	case middlemanager.ActionDataSourceMetadata:
		meta := "null"
		o.node.FSM().Read(func(s *fsm.State) {
			if m, ok := s.DataSourceMetadata(rec.DataSource); ok {
				meta = m
			}
		})
		return json.RawMessage(meta), nil
	case middlemanager.ActionGroupTasks:
		active := []string{}
		// The reports of the group's other tasks, running or recently
		// ended: stream replicas agree on where to stop reading from the
		// positions they report (a lost replica's last one included).
		reports := map[string]json.RawMessage{}
		o.node.FSM().Read(func(s *fsm.State) {
			for _, r := range s.ActiveTasks() {
				if r.GroupID != rec.GroupID || r.ID == rec.ID {
					continue
				}
				if r.RunnerStatus == commands.RunnerRunning {
					active = append(active, r.ID)
				}
				if r.Report != "" {
					reports[r.ID] = json.RawMessage(r.Report)
				}
			}
			seen := 0
			s.EachCompleteTask(func(r *fsm.TaskRecord) bool {
				if r.GroupID == rec.GroupID && r.Report != "" {
					reports[r.ID] = json.RawMessage(r.Report)
				}
				seen++
				return seen < groupReportsBack
			})
		})
		return map[string]any{"active": active, "reports": reports}, nil
	}
	return nil, fsm.Invalid("unknown task action %q (known: %s, %s, %s, %s, %s)", a.Type,
		middlemanager.ActionLockAcquire, middlemanager.ActionLockRelease, middlemanager.ActionKillSegments,
		middlemanager.ActionDataSourceMetadata, middlemanager.ActionGroupTasks)
}

// WorkerInfo is a live worker as the workers listing shows it.
type WorkerInfo struct {
	Worker        fsm.WorkerRecord
	Running       []*fsm.TaskRecord
	LastHeartbeat time.Time
}

// Workers lists the workers that have heartbeated within the timeout, by host.
func (o *Overlord) Workers() ([]WorkerInfo, error) {
	if _, err := o.leadContext(); err != nil {
		return nil, err
	}
	var out []WorkerInfo
	o.node.FSM().Read(func(s *fsm.State) {
		for _, w := range s.Workers() {
			out = append(out, WorkerInfo{Worker: *w, Running: s.WorkerTasks(w.Host)})
		}
	})
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := out[:0]
	for _, wi := range out {
		if o.isLive(wi.Worker.Host, now) {
			wi.LastHeartbeat = o.live[wi.Worker.Host]
			kept = append(kept, wi)
		}
	}
	return kept, nil
}

// TaskLog opens a task's log on the worker that ran it, at offset (see
// middlemanager.Worker.OpenLog). ErrNoLog when there is none.
func (o *Overlord) TaskLog(ctx context.Context, id string, offset int64) (io.ReadCloser, error) {
	var worker, scheme string
	o.node.FSM().Read(func(s *fsm.State) {
		if r, ok := s.Task(id); ok {
			worker = r.Worker
			if w, ok := s.Worker(worker); ok {
				scheme = w.Scheme
			}
		}
	})
	if worker == "" {
		return nil, ErrNoLog
	}
	if scheme == "" {
		scheme = "http"
	}
	u := scheme + "://" + worker + "/svc/worker/v1/task/" + url.PathEscape(id) + "/log?offset=" + strconv.FormatInt(offset, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	// No client timeout: a log may be long; the caller's context bounds it.
	resp, err := (&http.Client{Transport: o.cfg.Client.Transport}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: worker %s is unreachable: %v", ErrNoLog, worker, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, ErrNoLog
	}
	return resp.Body, nil
}
