package streaming

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strata/commands"
	"strata/fsm"
)

// supStopTimeout bounds the ShutdownTask calls of a graceful stop.
const supStopTimeout = 10 * time.Second

// supervisor runs one version of one supervisor spec. Its loop goroutine owns
// every field except mu-guarded ones; a new spec version means a new object.
type supervisor struct {
	m        *Manager
	id, ds   string
	version  string
	index    uint64          // Raft index of the version (fsm.SupervisorRecord.Index)
	spec     *SupervisorSpec // nil when the stored spec does not parse
	specErr  error
	log      hclog.Logger
	cancel   context.CancelFunc
	graceful atomic.Bool // set before cancel: stop the tasks on the way out
	kick     chan struct{}
	done     chan struct{}

	client *kgo.Client
	adm    *kadm.Client

	groups  map[int]*taskGroup  // task group → its current sequence
	retry   map[int]bool        // groups whose task failed in this run: resubmit next run
	known   map[int32]bool      // partitions of the first listing
	initial bool                // known is filled in
	foreign map[string]*supTask // active tasks of the datasource no group owns (being stopped)
	// pending are replicas of sequences another replica published (Druid's
	// pendingCompletionTasks): they end without publishing (retireReplicas)
	// and without holding their partitions.
	pending map[string]*supTask
	// times holds each task group's message-time bounds, fixed when the group
	// starts. As in Druid, a task that failed while reading leaves its group
	// in place (the retry gets the same bounds); a task that published ends
	// it, and the next group's bounds are computed for its own creation.
	times map[int]MessageTimes

	scale *scaler // lag-based autoscaler; nil when taskCount is fixed

	// measuring holds one token while a status request measures the lag
	// (refreshLag), so concurrent requests share one Kafka request.
	measuring chan struct{}

	// recorded is the state last stored through Control.RecordState (loop
	// goroutine only): a state is proposed when it differs.
	recorded struct{ state, detailed string }

	mu        sync.Mutex // guards the fields below
	st        *stateTracker
	rep       supReport
	repTask   []*supTask   // tasks shown in the report (copies)
	runs      uint64       // finished runs: a measurement begun before the last run is dropped
	sample    offsetSample // the lag shown (lag.go)
	lagFailed time.Time    // when a status request's measurement last failed
}

// taskGroup is the current sequence of a task group: ioConfig.replicas
// tasks, each on another middle manager, reading the group's partitions from
// the same start offsets. The first replica to publish ends the sequence;
// the others' publish is refused by the offsets check.
type taskGroup struct {
	seq   string // ioConfig.baseSequenceName of the replicas
	start map[int32]int64
	tasks []*supTask
	next  int // replica number of the next task
}

// supTask is a task of the supervisor, tracked by id.
type supTask struct {
	id        string
	group     int
	start     map[int32]int64
	submitted time.Time // zero when adopted
	seen      bool      // its FSM record has been read
	startedMs int64
	createdMs int64
	current   map[int32]int64 // next offsets to read, from the task's progress report
	samples   []rowSample     // row counts over time, from the progress reports (stats.go)
	parseErrs []ParseError    // the newest saved parse exceptions it reported
}

func newSupervisor(m *Manager, rec fsm.SupervisorRecord) *supervisor {
	s := &supervisor{
		m: m, id: rec.ID, ds: rec.DataSource, version: rec.Version, index: rec.Index,
		kick: make(chan struct{}, 1), done: make(chan struct{}), measuring: make(chan struct{}, 1),
		groups: map[int]*taskGroup{}, retry: map[int]bool{}, known: map[int32]bool{}, foreign: map[string]*supTask{}, pending: map[string]*supTask{},
		times: map[int]MessageTimes{}, st: newStateTracker(m.States),
	}
	s.log = m.log.With("supervisor", rec.ID)
	s.spec, s.specErr = ParseStoredSupervisorSpec(rec.Spec)
	if s.specErr == nil && s.spec.AutoScaler != nil {
		s.scale = &scaler{cfg: *s.spec.AutoScaler, started: time.Now()}
	}
	if s.specErr == nil {
		s.spec.Suspended = rec.Suspended // the record's flag is authoritative
		s.ds = s.spec.DataSource
		s.client, s.specErr = kgo.NewClient(
			kgo.SeedBrokers(supSplitBrokers(s.spec.Bootstrap)...),
			kgo.ClientID("strata-supervisor-"+rec.ID),
			kgo.MetadataMinAge(time.Second),
		)
		if s.specErr == nil {
			s.adm = kadm.NewClient(s.client)
		}
	}
	s.rep = supReport{DataSource: s.ds, DetailedState: StatePending, State: StatePending, Healthy: true}
	if s.spec != nil {
		s.rep.Stream = s.spec.Topic
		s.rep.Replicas = s.spec.Replicas
		s.rep.DurationSeconds = int64(s.spec.TaskDuration / time.Second)
		s.rep.Suspended = s.spec.Suspended
	}
	return s
}

func supSplitBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// stop ends the loop; graceful also stops the supervisor's tasks (they publish).
func (s *supervisor) stop(graceful bool) {
	if graceful {
		s.graceful.Store(true)
	}
	s.cancel()
}

// loop runs the supervisor until ctx ends: the first run after StartDelay,
// then every Period (or at once when kicked).
func (s *supervisor) loop(ctx context.Context, managerCtx context.Context) {
	defer close(s.done)
	if s.client != nil {
		defer s.client.Close()
	}
	delay, period := 5*time.Second, 30*time.Second
	if s.spec != nil {
		delay, period = s.spec.StartDelay, s.spec.Period
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	s.recordState(ctx) // PENDING: this version's runtime has started
	first := true
	for {
		select {
		case <-ctx.Done():
			// A graceful stop only while this node still leads: after a
			// leadership loss the next leader adopts the running tasks.
			if s.graceful.Load() && managerCtx.Err() == nil {
				s.stopAll()
			}
			return
		case <-s.kick:
			if first {
				continue // the start delay still applies
			}
		case <-timer.C:
		}
		first = false
		s.runOnce(ctx)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(period)
	}
}

// stopAll asks every task of the supervisor to stop reading and publish.
func (s *supervisor) stopAll() {
	s.mu.Lock()
	s.st.detailed = StateStopping
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), supStopTimeout)
	defer cancel()
	s.recordState(ctx)
	for _, t := range s.allTasks() {
		s.m.shutdownOnce(ctx, t.id, s.log)
	}
}

// allTasks lists every task the supervisor tracks: the groups' replicas,
// those of published sequences and those no group owns.
func (s *supervisor) allTasks() []*supTask {
	out := make([]*supTask, 0, len(s.groups)*max(s.replicas(), 1)+len(s.pending)+len(s.foreign))
	for _, grp := range s.groups {
		out = append(out, grp.tasks...)
	}
	for _, t := range s.pending {
		out = append(out, t)
	}
	for _, t := range s.foreign {
		out = append(out, t)
	}
	return out
}

func (s *supervisor) replicas() int {
	if s.spec == nil {
		return 1
	}
	return s.spec.Replicas
}

// supFSMView is what one run reads from the FSM under its lock.
type supFSMView struct {
	metadata string
	records  map[string]fsm.TaskRecord // the tracked tasks that exist
	active   []fsm.TaskRecord          // active index_kafka tasks of the datasource
}

func (s *supervisor) readFSM() supFSMView {
	v := supFSMView{records: map[string]fsm.TaskRecord{}}
	s.m.ctl.ReadState(func(st *fsm.State) {
		v.metadata, _ = st.DataSourceMetadata(s.ds)
		for _, t := range s.allTasks() {
			if r, ok := st.Task(t.id); ok {
				v.records[t.id] = *r
			}
		}
		for _, r := range st.ActiveTasks() {
			if r.Type == TaskType && r.DataSource == s.ds {
				v.active = append(v.active, *r)
			}
		}
	})
	return v
}

// ResetShutdownReason is the status of a task a reset of its supervisor
// ended; the supervisor does not count it as a failed task.
const ResetShutdownReason = "Shutdown by a reset of its supervisor"

// runOnce is one supervisor run (Druid's RunNotice).
func (s *supervisor) runOnce(ctx context.Context) {
	now := time.Now()
	// Every state change the run makes is recorded, at the end of the run at
	// the latest (recordState also retries one that could not be stored).
	defer s.recordState(ctx)
	s.propose(ctx, StateConnectingToStream)
	if s.specErr != nil {
		s.fail(now, false, "invalid supervisor spec: "+s.specErr.Error())
		s.finish(nil)
		return
	}
	// The tasks' positions are read before the end offsets are fetched, so
	// the run's lag sample has no task past them (lag.go).
	view := s.readFSM()
	s.trackCompletions(now, view)
	// Then Kafka, before the run changes anything, as in Druid's run:
	// partitions and end offsets (also while suspended, for the lag). A run
	// that cannot reach the stream stays at CONNECTING_TO_STREAM.
	fetchCtx, cancel := context.WithTimeout(ctx, s.fetchTimeout())
	ends, ferr := s.listOffsets(fetchCtx, false)
	cancel()
	fetched := time.Now()
	if ferr == nil {
		s.propose(ctx, StateDiscoveringInitialTasks)
	}
	s.adopt(now, view)

	stored, err := ParseOffsets(view.metadata)
	if err == nil && stored.Stream != "" && stored.Stream != s.spec.Topic {
		err = fmt.Errorf("stored offsets are for stream [%s], not [%s]; reset the supervisor", stored.Stream, s.spec.Topic)
	}
	if err != nil {
		s.fail(now, false, err.Error())
	}

	if s.spec.Suspended {
		stopCtx, cancel := context.WithTimeout(ctx, supStopTimeout)
		for _, grp := range s.groups {
			for _, t := range grp.tasks {
				s.m.shutdownOnce(stopCtx, t.id, s.log)
			}
		}
		cancel()
	}

	if ferr != nil {
		if ctx.Err() != nil {
			return // stopping: not a failed run
		}
		s.fail(now, true, ferr.Error())
		s.finish(nil)
		return
	}
	s.mu.Lock()
	s.st.everConnected = true
	s.mu.Unlock()
	if err == nil && !s.spec.Suspended {
		s.propose(ctx, StateCreatingTasks)
		s.stopStale(ctx, ends)
		if serr := s.createTasks(ctx, now, ends, stored.Partitions); serr != nil {
			s.fail(now, serr.stream, serr.Error())
		}
	}
	smp := newOffsetSample(fetched, ends, storedOffsets(view.metadata, s.spec.Topic), s.sampleTasks())
	if err == nil && !s.spec.Suspended {
		s.autoscale(ctx, now, smp.total, len(ends))
	}
	s.finish(&smp)
}

// autoscale feeds the lag to the autoscaler and stores the task count it
// asks for as a new spec version; the manager then restarts this supervisor
// with it (running tasks publish first, as on any spec update).
func (s *supervisor) autoscale(ctx context.Context, now time.Time, lag int64, partitions int) {
	if s.scale == nil {
		return
	}
	s.scale.observe(now, lag)
	next, why, ok := s.scale.decide(now, s.spec.TaskCount, partitions)
	if !ok {
		return
	}
	spec, err := s.spec.WithTaskCount(next)
	if err != nil {
		s.log.Error("cannot rewrite the spec for the autoscaler", "error", err)
		return
	}
	msg := fmt.Sprintf("autoscaler: taskCount %d -> %d (%s)", s.spec.TaskCount, next, why)
	if err := s.m.ctl.UpdateSpec(ctx, s.id, s.ds, s.index, spec, msg); err != nil {
		s.log.Warn("autoscaler could not store the new task count; will retry", "error", err)
		s.scale.lastCheck = time.Time{}
		return
	}
	s.log.Info("scaled", "from", s.spec.TaskCount, "to", next, "why", why)
	s.m.Kick()
}

func (s *supervisor) fetchTimeout() time.Duration {
	return min(max(s.spec.Period, time.Second), 15*time.Second)
}

// propose moves the state machine towards detailed (stateTracker.propose)
// and records the state if it changed.
func (s *supervisor) propose(ctx context.Context, detailed string) {
	s.mu.Lock()
	s.st.propose(detailed)
	s.mu.Unlock()
	s.recordState(ctx)
}

// recordState stores the current state and detailed state as a
// supervisor.state command when they differ from the last stored. A failure
// (lost leadership, a slow commit) is logged and leaves the state to be
// recorded at the next check, at the end of the run at the latest.
func (s *supervisor) recordState(ctx context.Context) {
	s.mu.Lock()
	state, detailed := s.st.state(), s.st.detailed
	s.mu.Unlock()
	if s.recorded.state == state && s.recorded.detailed == detailed {
		return
	}
	if err := s.m.ctl.RecordState(ctx, s.id, s.index, state, detailed); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot record the supervisor state; will retry", "state", state, "detailedState", detailed, "error", err)
		}
		return
	}
	s.recorded.state, s.recorded.detailed = state, detailed
}

func (s *supervisor) fail(now time.Time, stream bool, msg string) {
	s.log.Warn("supervisor run failed", "error", msg)
	s.mu.Lock()
	s.st.fail(now, stream, msg)
	s.mu.Unlock()
}

// finish ends the run in the state machine and refreshes the report's tasks
// and, when the run measured it, the lag.
func (s *supervisor) finish(smp *offsetSample) {
	steady := StateRunning
	if s.spec != nil && s.spec.Suspended {
		steady = StateSuspended
	}
	all := s.allTasks()
	tasks := make([]*supTask, 0, len(all))
	for _, t := range all {
		c := *t
		tasks = append(tasks, &c)
	}
	slices.SortFunc(tasks, func(a, b *supTask) int {
		if a.group != b.group {
			return a.group - b.group
		}
		return strings.Compare(a.id, b.id)
	})
	clear(s.retry) // a group whose task failed waits one run, no more
	s.mu.Lock()
	s.st.finishRun(steady)
	s.repTask = tasks
	s.runs++
	if smp != nil {
		s.sample = *smp
	}
	s.mu.Unlock()
}

// trackCompletions notices tasks that ended since the last run. A replica
// that succeeded and published ends its group's sequence: the other
// replicas end without publishing and the next sequence starts from the
// offsets it published. A replica that failed, or succeeded leaving the
// publish to the others (its worker stopped), leaves the sequence to them
// and is replaced by a new replica reading from the same offsets; when none
// is left, the group's next task starts as without replicas.
func (s *supervisor) trackCompletions(now time.Time, v supFSMView) {
	var stored map[int32]int64
	if s.spec != nil {
		stored = storedOffsets(v.metadata, s.spec.Topic)
	}
	for g, grp := range s.groups {
		var live []*supTask
		published, reset := false, false
		var failed *supTask // the last replica that failed, if any
		for _, t := range grp.tasks {
			r, ok := v.records[t.id]
			if !ok {
				// Unknown to the FSM: it may still be on its way through Raft, so it
				// counts as running; a submission never seen is given up on later.
				if !t.seen && !t.submitted.IsZero() && now.Sub(t.submitted) > s.unknownGrace() {
					s.log.Warn("submitted task never appeared; submitting anew", "task", t.id)
					continue
				}
				live = append(live, t)
				continue
			}
			t.seen, t.startedMs, t.createdMs = true, r.StartedMs, r.CreatedMs
			t.observe(now, r.Report)
			if r.Active() {
				if s.spec != nil && t.startedMs > 0 && s.spec.CompletionTimeout > 0 &&
					now.Sub(time.UnixMilli(t.startedMs)) > s.spec.TaskDuration+s.spec.CompletionTimeout {
					s.mu.Lock()
					s.st.addError(now, supExceptionClassSupervisor,
						fmt.Sprintf("task [%s] did not publish within completionTimeout", t.id), false)
					s.mu.Unlock()
					ctx, cancel := context.WithTimeout(context.Background(), supStopTimeout)
					s.m.shutdownOnce(ctx, t.id, s.log)
					cancel()
				}
				live = append(live, t)
				continue
			}
			s.m.forgetStopped(t.id)
			if r.ErrorMsg == ResetShutdownReason {
				// Ended by a reset of this supervisor: not a task failure, and
				// the group starts afresh from the reset offsets.
				reset = true
				continue
			}
			ok = r.Status == commands.TaskSuccess
			s.mu.Lock()
			s.st.taskCompleted(ok)
			if !ok {
				s.st.addError(now, supExceptionClassSupervisor, fmt.Sprintf("task [%s] failed: %s", t.id, r.ErrorMsg), false)
			}
			s.mu.Unlock()
			switch {
			case !ok:
				failed = t
			case s.replicas() == 1 || movedPast(stored, grp.start):
				// Its publish moved the offsets (the FSM applied it before the
				// status); a task without replicas ends its sequence anyway.
				published = true
			}
		}
		grp.tasks = live
		switch {
		case published || (len(live) == 0 && (failed == nil || reset)):
			// The sequence is over; a replica still running cannot publish it
			// again and stops without holding the partitions.
			delete(s.groups, g)
			delete(s.times, g)
			s.retireReplicas(live)
		case failed != nil:
			// Past its taskDuration a Druid group is no longer reading but
			// publishing: its failure ends the group too (when no replica is
			// left to publish).
			if len(live) == 0 {
				delete(s.groups, g)
				if s.spec == nil || (failed.startedMs > 0 && now.Sub(time.UnixMilli(failed.startedMs)) >= s.spec.TaskDuration) {
					delete(s.times, g)
				}
			}
			s.retry[g] = true
		}
	}
	for _, set := range []map[string]*supTask{s.foreign, s.pending} {
		for id, t := range set {
			if r, ok := v.records[id]; !ok || !r.Active() {
				delete(set, id)
				s.m.forgetStopped(id)
			} else {
				t.startedMs, t.createdMs = r.StartedMs, r.CreatedMs
				t.observe(now, r.Report)
			}
		}
	}
}

// movedPast reports whether a stored offset of one of start's partitions is
// past its start: a task reading from start published.
func movedPast(stored, start map[int32]int64) bool {
	for p, off := range start {
		if cur, ok := stored[p]; ok && cur > off {
			return true
		}
	}
	return false
}

// retireReplicas moves the replicas of a sequence another replica published
// out of their group; until they end they show as publishing (Druid's
// pendingCompletionTasks). They are not shut down: each sees the publish
// within replicaCheckPeriod (one not started yet, as it starts) and ends
// SUCCESS without publishing, where a shutdown would end it FAILED.
func (s *supervisor) retireReplicas(tasks []*supTask) {
	for _, t := range tasks {
		s.log.Info("a replica whose sequence was published is ending", "task", t.id)
		t.group = -1
		s.pending[t.id] = t
	}
}

// progressOffsets is the position a progress report gives.
func progressOffsets(p Progress) map[int32]int64 {
	out := make(map[int32]int64, len(p.CurrentOffsets))
	for k, off := range p.CurrentOffsets {
		if n, err := strconv.ParseInt(k, 10, 32); err == nil {
			out[int32(n)] = off
		}
	}
	return out
}

func (s *supervisor) unknownGrace() time.Duration {
	if s.spec == nil {
		return time.Minute
	}
	return 2*s.spec.Period + 10*time.Second
}

// adopt takes over active tasks of the datasource that no group tracks: those
// of a previous supervisor object or leader. A replica of a sequence already
// published is left to end on its own; a task that fits a free group, or is
// a replica of the sequence its group runs, becomes the group's; any other
// is stopped gracefully and holds its partitions until it ends.
func (s *supervisor) adopt(now time.Time, v supFSMView) {
	tracked := map[string]bool{}
	for _, t := range s.allTasks() {
		tracked[t.id] = true
	}
	for _, r := range v.active {
		if tracked[r.ID] {
			continue
		}
		t := &supTask{id: r.ID, group: -1, seen: true, startedMs: r.StartedMs, createdMs: r.CreatedMs}
		t.observe(now, r.Report) // its position counts in this run's lag
		topic, start, times, seq, err := supParseTaskPayload(r.Payload)
		if err == nil && seq != "" && movedPast(storedOffsets(v.metadata, topic), start) {
			// A replica of a sequence already published: it ends on its own.
			t.start = start
			s.pending[r.ID] = t
			continue
		}
		if err == nil {
			t.start = start
			if g, ok := s.groupOf(r.GroupID, topic, start); ok {
				grp := s.groups[g]
				if grp == nil {
					grp = &taskGroup{seq: seq, start: start}
					s.groups[g] = grp
					s.times[g] = times // the group keeps the bounds its task got
				}
				if grp.seq == seq && maps.Equal(grp.start, start) && len(grp.tasks) < s.spec.Replicas {
					t.group = g
					grp.tasks = append(grp.tasks, t)
					if i, ok := replicaIndex(seq, r.ID); ok {
						grp.next = max(grp.next, i+1)
					}
					s.log.Info("adopted running task", "task", r.ID, "group", g, "sequence", seq)
					continue
				}
			}
		}
		s.log.Info("stopping a task that no task group owns", "task", r.ID)
		s.foreign[r.ID] = t
		ctx, cancel := context.WithTimeout(context.Background(), supStopTimeout)
		s.m.shutdownOnce(ctx, r.ID, s.log)
		cancel()
	}
}

// groupOf tells which task group a task belongs to, if it matches this spec.
func (s *supervisor) groupOf(groupID, topic string, start map[int32]int64) (int, bool) {
	if s.spec == nil || topic != s.spec.Topic {
		return 0, false
	}
	rest, ok := strings.CutPrefix(groupID, supGroupPrefix(s.ds))
	if !ok {
		return 0, false
	}
	g, err := strconv.Atoi(rest)
	if err != nil || g < 0 || g >= s.spec.TaskCount {
		return 0, false
	}
	for p := range start {
		if int(p)%s.spec.TaskCount != g {
			return 0, false
		}
	}
	return g, true
}

func supGroupPrefix(ds string) string { return TaskType + "_" + ds + "_g" }

// listOffsets returns the topic's end (or start) offset of every partition.
func (s *supervisor) listOffsets(ctx context.Context, start bool) (map[int32]int64, error) {
	var (
		listed kadm.ListedOffsets
		err    error
	)
	if start {
		listed, err = s.adm.ListStartOffsets(ctx, s.spec.Topic)
	} else {
		listed, err = s.adm.ListEndOffsets(ctx, s.spec.Topic)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list offsets of topic [%s]: %w", s.spec.Topic, err)
	}
	parts, ok := listed[s.spec.Topic]
	if !ok || len(parts) == 0 {
		return nil, fmt.Errorf("topic [%s] does not exist", s.spec.Topic)
	}
	out := make(map[int32]int64, len(parts))
	for p, o := range parts {
		if o.Err != nil {
			return nil, fmt.Errorf("topic [%s] partition %d: %w", s.spec.Topic, p, o.Err)
		}
		if p < 0 {
			return nil, fmt.Errorf("topic [%s] does not exist", s.spec.Topic)
		}
		out[p] = o.Offset
	}
	return out, nil
}

// supPartitionsOf lists the partitions of group g, ascending.
func supPartitionsOf(parts map[int32]int64, g, count int) []int32 {
	var out []int32
	for p := range parts {
		if int(p)%count == g {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// stopStale stops running group tasks that do not read every partition of
// their group (partitions were added): the next task reads them all.
func (s *supervisor) stopStale(ctx context.Context, ends map[int32]int64) {
	for g, grp := range s.groups {
		if grp.start == nil {
			continue
		}
		for _, p := range supPartitionsOf(ends, g, s.spec.TaskCount) {
			if _, ok := grp.start[p]; !ok {
				stopCtx, cancel := context.WithTimeout(ctx, supStopTimeout)
				for _, t := range grp.tasks {
					s.log.Info("partitions changed; stopping task so the next one reads them all", "task", t.id)
					s.m.shutdownOnce(stopCtx, t.id, s.log)
				}
				cancel()
				break
			}
		}
	}
}

type supRunError struct {
	error
	stream bool
}

// createTasks starts a sequence (ioConfig.replicas tasks) for every group
// with partitions and no sequence, and a replica in place of each one a
// running sequence lost.
func (s *supervisor) createTasks(ctx context.Context, now time.Time, ends, stored map[int32]int64) *supRunError {
	// Partitions read by active tasks no group owns stay theirs until they end.
	held := map[int32]bool{}
	for _, t := range s.foreign {
		for p := range t.start {
			held[p] = true
		}
	}
	var starts map[int32]int64 // earliest offsets, fetched when first needed
	for g := 0; g < s.spec.TaskCount; g++ {
		parts := supPartitionsOf(ends, g, s.spec.TaskCount)
		if ctx.Err() != nil {
			return nil // stopping
		}
		grp := s.groups[g]
		if len(parts) == 0 || (grp != nil && len(grp.tasks) >= s.spec.Replicas) {
			continue
		}
		if s.retry[g] {
			continue // its task failed in this run: a new one next run
		}
		if grp != nil {
			// A lost replica's successor reads from the sequence's start.
			if err := s.submitReplicas(ctx, now, g, grp); err != nil {
				return &supRunError{err, false}
			}
			continue
		}
		if slices.ContainsFunc(parts, func(p int32) bool { return held[p] }) {
			continue
		}
		offsets := make(map[int32]int64, len(parts))
		for _, p := range parts {
			if off, ok := stored[p]; ok {
				offsets[p] = off
				continue
			}
			// No stored offset: earliest or latest per useEarliestOffset; a
			// partition that appeared after the first listing starts at its
			// beginning so that none of its records are skipped.
			if s.spec.UseEarliestOffset || (s.initial && !s.known[p]) {
				if starts == nil {
					fctx, cancel := context.WithTimeout(ctx, s.fetchTimeout())
					var err error
					starts, err = s.listOffsets(fctx, true)
					cancel()
					if err != nil {
						return &supRunError{err, true}
					}
				}
				off, ok := starts[p]
				if !ok {
					return &supRunError{fmt.Errorf("no earliest offset for partition %d of [%s]", p, s.spec.Topic), true}
				}
				offsets[p] = off
			} else {
				offsets[p] = ends[p]
			}
		}
		grp = &taskGroup{seq: supGroupPrefix(s.ds) + strconv.Itoa(g) + "_" + supRandomSuffix(), start: offsets}
		s.groups[g] = grp
		if err := s.submitReplicas(ctx, now, g, grp); err != nil {
			return &supRunError{err, false}
		}
	}
	if !s.initial {
		for p := range ends {
			s.known[p] = true
		}
		s.initial = true
	}
	return nil
}

// supTaskPayload is the index_kafka task JSON (see the streaming contract).
type supTaskPayload struct {
	Type         string          `json:"type"`
	ID           string          `json:"id"`
	GroupID      string          `json:"groupId"`
	DataSource   string          `json:"dataSource"`
	DataSchema   json.RawMessage `json:"dataSchema"`
	TuningConfig json.RawMessage `json:"tuningConfig"`
	IOConfig     supTaskIOConfig `json:"ioConfig"`
}

type supTaskIOConfig struct {
	Type                 string            `json:"type"`
	Topic                string            `json:"topic"`
	ConsumerProperties   map[string]string `json:"consumerProperties"`
	InputFormat          json.RawMessage   `json:"inputFormat"`
	StartSequenceNumbers supSequenceNumber `json:"startSequenceNumbers"`
	// BaseSequenceName is shared by the replicas of one sequence of a task
	// group (Druid's name): brokers read one replica's rows per sequence.
	BaseSequenceName string `json:"baseSequenceName"`
	// Replicas is the supervisor's ioConfig.replicas: a task watches for
	// its replicas' publish only when it has some.
	Replicas     int    `json:"replicas"`
	TaskDuration string `json:"taskDuration"`
	// The task group's bounds of the row timestamps (ISO; null: unbounded).
	MinimumMessageTime *string `json:"minimumMessageTime"`
	MaximumMessageTime *string `json:"maximumMessageTime"`
}

type supSequenceNumber struct {
	Type                       string           `json:"type"`
	Stream                     string           `json:"stream"`
	PartitionSequenceNumberMap map[string]int64 `json:"partitionSequenceNumberMap"`
}

func supOffsetsJSONMap(m map[int32]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for p, o := range m {
		out[strconv.Itoa(int(p))] = o
	}
	return out
}

// supParseTaskPayload reads the topic, start offsets, message-time bounds
// and sequence name of a task payload.
func supParseTaskPayload(payload string) (string, map[int32]int64, MessageTimes, string, error) {
	var p struct {
		IOConfig struct {
			Topic                string            `json:"topic"`
			BaseSequenceName     string            `json:"baseSequenceName"`
			StartSequenceNumbers supSequenceNumber `json:"startSequenceNumbers"`
			MinimumMessageTime   json.RawMessage   `json:"minimumMessageTime"`
			MaximumMessageTime   json.RawMessage   `json:"maximumMessageTime"`
		} `json:"ioConfig"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		return "", nil, MessageTimes{}, "", err
	}
	out := make(map[int32]int64, len(p.IOConfig.StartSequenceNumbers.PartitionSequenceNumberMap))
	for k, o := range p.IOConfig.StartSequenceNumbers.PartitionSequenceNumberMap {
		n, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return "", nil, MessageTimes{}, "", fmt.Errorf("bad partition %q", k)
		}
		out[int32(n)] = o
	}
	times, err := parseMessageTimes(p.IOConfig.MinimumMessageTime, p.IOConfig.MaximumMessageTime)
	return p.IOConfig.Topic, out, times, p.IOConfig.BaseSequenceName, err
}

func supRandomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// submitReplicas submits tasks of group g's sequence until it has
// ioConfig.replicas of them. A group starting now gets its message-time
// bounds (the supervisor's clock, not the FSM's).
func (s *supervisor) submitReplicas(ctx context.Context, now time.Time, g int, grp *taskGroup) error {
	times, ok := s.times[g]
	if !ok {
		times = s.spec.MessageTimes(now)
		s.times[g] = times
	}
	minTime, maxTime := times.payload()
	for len(grp.tasks) < s.spec.Replicas {
		// As in Druid, a replica's id starts with its sequence's name (its
		// published files are stored under it: replicaSegments finds them),
		// followed here by its replica number: the lower publishes first
		// (replicas.go), so one started in place of a lost replica gets the
		// next number, and the replicas reading since the start go first.
		idx := grp.next
		grp.next++
		id := grp.seq + "_" + strconv.Itoa(idx) + "_" + supRandomSuffix()
		body, err := json.Marshal(supTaskPayload{
			Type: TaskType, ID: id, GroupID: supGroupPrefix(s.ds) + strconv.Itoa(g), DataSource: s.ds,
			DataSchema: s.spec.DataSchema, TuningConfig: s.spec.TuningConfig,
			IOConfig: supTaskIOConfig{
				Type: "kafka", Topic: s.spec.Topic,
				ConsumerProperties: map[string]string{"bootstrap.servers": s.spec.Bootstrap},
				InputFormat:        s.spec.InputFormat,
				StartSequenceNumbers: supSequenceNumber{
					Type: "start", Stream: s.spec.Topic, PartitionSequenceNumberMap: supOffsetsJSONMap(grp.start),
				},
				BaseSequenceName:   grp.seq,
				Replicas:           s.spec.Replicas,
				TaskDuration:       FormatDuration(s.spec.TaskDuration),
				MinimumMessageTime: minTime,
				MaximumMessageTime: maxTime,
			},
		})
		if err != nil {
			return err
		}
		// The id is ours, so a submission whose outcome is unknown is still
		// tracked: the group waits for it rather than risk a second task.
		grp.tasks = append(grp.tasks, &supTask{id: id, group: g, start: grp.start, submitted: now})
		got, err := s.m.ctl.SubmitTask(ctx, body)
		if err != nil {
			return fmt.Errorf("cannot submit task for group %d: %w", g, err)
		}
		if got != "" && got != id {
			return errors.New("task submission returned id " + got + ", want " + id)
		}
		s.log.Info("submitted task", "task", id, "group", g, "sequence", grp.seq, "offsets", grp.start)
	}
	return nil
}

// liveTasks refreshes the report's task copies from the tasks' latest
// progress reports in the FSM, so a status shows where each task is now (as
// Druid asks its tasks when a report is requested), not where it was at the
// last run. Their positions and lags come from the lag sample instead, which
// holds the latest offsets they are compared with.
func (s *supervisor) liveTasks(now time.Time, tasks []*supTask) []*supTask {
	if len(tasks) == 0 {
		return tasks
	}
	recs := make(map[string]fsm.TaskRecord, len(tasks))
	s.m.ctl.ReadState(func(st *fsm.State) {
		for _, t := range tasks {
			if r, ok := st.Task(t.id); ok {
				recs[t.id] = *r
			}
		}
	})
	out := make([]*supTask, len(tasks))
	for i, t := range tasks {
		c := *t
		c.samples = slices.Clone(t.samples)
		if r, ok := recs[t.id]; ok && r.Active() {
			c.startedMs = r.StartedMs
			c.observe(now, r.Report)
		}
		out[i] = &c
	}
	return out
}

// status renders the runtime status and report payload.
func (s *supervisor) status(now time.Time) Status {
	s.mu.Lock()
	rep := s.rep
	smp := s.sample
	smp.render(&rep)
	rep.DetailedState = s.st.detailed
	rep.State = s.st.state()
	rep.Healthy = s.st.healthy()
	rep.RecentErrors = slices.Clone(s.st.errors)
	tasks := s.repTask
	s.mu.Unlock()
	tasks = s.liveTasks(now, tasks)
	if rep.RecentErrors == nil {
		rep.RecentErrors = []RecentError{}
	}
	rep.ActiveTasks, rep.PublishingTasks = []supTaskReport{}, []supTaskReport{}
	for _, t := range tasks {
		item := supTaskReport{ID: t.id, StartingOffsets: supOffsetsJSONMap(t.start), Type: "ACTIVE"}
		item.CurrentOffsets, item.Lag = smp.taskLag(t.id)
		publishing := s.m.isStopped(t.id) || t.group < 0
		if t.startedMs > 0 {
			st := time.UnixMilli(t.startedMs)
			ts := st.UTC().Format(supISOMillis)
			item.StartTime = &ts
			if s.spec != nil {
				left := s.spec.TaskDuration - now.Sub(st)
				item.RemainingSeconds = max(int64(left/time.Second), 0)
				publishing = publishing || left <= 0
			}
		} else if s.spec != nil {
			item.RemainingSeconds = int64(s.spec.TaskDuration / time.Second)
		}
		if publishing {
			item.Type = "PUBLISHING"
			rep.PublishingTasks = append(rep.PublishingTasks, item)
		} else {
			rep.ActiveTasks = append(rep.ActiveTasks, item)
		}
	}
	payload, err := json.Marshal(rep)
	if err != nil { // cannot happen: plain types only
		payload = []byte("{}")
	}
	return Status{State: rep.State, DetailedState: rep.DetailedState, Healthy: rep.Healthy, Payload: payload,
		Stats: rowStats(now, tasks), ParseErrors: parseErrors(tasks)}
}
