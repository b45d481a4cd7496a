package streaming

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strata/commands"
	"strata/fsm"
	"strata/internal/eventually"
)

const supTestWorker = "mm1:8091"

// supTestControl is a Control over a real FSM: submissions and shutdowns are
// applied as commands and recorded.
type supTestControl struct {
	t  *testing.T
	f  *fsm.FSM
	mu sync.Mutex
	ix uint64

	submitted []supTaskPayload // in submission order
	shutdowns []string
	updates   []string // the audit comments of UpdateSpec calls
	unchanged int      // RecordState calls the FSM found equal to the last recorded state
}

func newSupTestControl(t *testing.T) *supTestControl {
	c := &supTestControl{t: t, f: fsm.New(nil)}
	c.apply(commands.RegisterWorker{Host: supTestWorker, Capacity: 100, Version: "0"})
	return c
}

func (c *supTestControl) apply(cmd commands.Command) fsm.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ix++
	data, err := commands.Encode(cmd, time.Now().UnixMilli(), commands.Audit{Author: "test"})
	if err != nil {
		c.t.Errorf("encode %T: %v", cmd, err)
		return fsm.Result{Err: err}
	}
	return c.f.Apply(&raft.Log{Index: c.ix, Type: raft.LogCommand, Data: data}).(fsm.Result)
}

func (c *supTestControl) mustApply(cmd commands.Command) {
	c.t.Helper()
	if res := c.apply(cmd); res.Err != nil {
		c.t.Fatalf("apply %T: %v", cmd, res.Err)
	}
}

func (c *supTestControl) ReadState(fn func(*fsm.State)) { c.f.Read(fn) }

func (c *supTestControl) SubmitTask(_ context.Context, payload []byte) (string, error) {
	var p supTaskPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return "", err
	}
	res := c.apply(commands.SubmitTask{ID: p.ID, Type: p.Type, GroupID: p.GroupID, DataSource: p.DataSource, Payload: payload})
	if res.Err != nil {
		return "", res.Err
	}
	c.mu.Lock()
	c.submitted = append(c.submitted, p)
	c.mu.Unlock()
	return p.ID, nil
}

func (c *supTestControl) UpdateSpec(_ context.Context, id, dataSource string, ifIndex uint64, spec json.RawMessage, why string) error {
	res := c.apply(commands.SetSupervisor{ID: id, DataSource: dataSource, Spec: spec, IfIndex: ifIndex})
	if res.Err == nil {
		c.mu.Lock()
		c.updates = append(c.updates, why)
		c.mu.Unlock()
	}
	return res.Err
}

func (c *supTestControl) RecordState(_ context.Context, id string, specIndex uint64, state, detailed string) error {
	res := c.apply(commands.SetSupervisorState{ID: id, SpecIndex: specIndex, State: state, DetailedState: detailed})
	if res.Err == nil && res.Value == false {
		c.mu.Lock()
		c.unchanged++
		c.mu.Unlock()
	}
	return res.Err
}

func (c *supTestControl) ShutdownTask(_ context.Context, id string) error {
	c.mu.Lock()
	c.shutdowns = append(c.shutdowns, id)
	c.mu.Unlock()
	return nil
}

func (c *supTestControl) tasks() []supTaskPayload {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.submitted)
}

func (c *supTestControl) stops() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.shutdowns)
}

// start marks a task started on the worker (its start time is set).
func (c *supTestControl) start(id string) {
	c.t.Helper()
	c.mustApply(commands.AssignTask{ID: id, Worker: supTestWorker})
	c.mustApply(commands.TaskStatusUpdate{ID: id, Worker: supTestWorker, Status: commands.TaskRunning})
}

// finish ends a started task; a successful one first publishes end offsets,
// as an index_kafka task does.
func (c *supTestControl) finish(ds, topic, id string, end map[int32]int64) {
	c.t.Helper()
	status := commands.TaskFailed
	if end != nil {
		status = commands.TaskSuccess
		c.setOffsets(ds, topic, end)
	}
	c.mustApply(commands.TaskStatusUpdate{ID: id, Worker: supTestWorker, Status: status, ErrorMsg: "boom"})
}

func (c *supTestControl) setOffsets(ds, topic string, offs map[int32]int64) {
	c.t.Helper()
	c.mustApply(commands.ResetSupervisorOffsets{DataSource: ds,
		Offsets: Offsets{Stream: topic, Partitions: offs}.MetadataJSON()})
}

type supSpecOpts struct {
	bootstrap   string
	taskCount   int
	earliest    bool
	duration    string
	startDelay  string
	period      string // default PT0.05S
	suspendedIn bool
}

func supSpecJSON(ds, topic string, o supSpecOpts) []byte {
	if o.duration == "" {
		o.duration = "PT1H"
	}
	if o.startDelay == "" {
		o.startDelay = "PT0.01S"
	}
	if o.period == "" {
		o.period = "PT0.05S"
	}
	return []byte(fmt.Sprintf(`{"type":"kafka","spec":{
 "dataSchema":{"dataSource":%q,"timestampSpec":{"column":"ts","format":"iso"},
   "dimensionsSpec":{"dimensions":["page"]},
   "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
 "ioConfig":{"topic":%q,"consumerProperties":{"bootstrap.servers":%q},"taskCount":%d,
   "taskDuration":%q,"startDelay":%q,"period":%q,"useEarliestOffset":%v,"inputFormat":{"type":"json"}},
 "tuningConfig":{"type":"kafka"}},"suspended":%v}`, ds, topic, o.bootstrap, o.taskCount, o.duration, o.startDelay, o.period, o.earliest, o.suspendedIn))
}

// setSpec stores a supervisor version as the server would.
func (c *supTestControl) setSpec(t *testing.T, body []byte, suspended bool) {
	t.Helper()
	spec, err := ParseSupervisorSpec(body)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	c.mustApply(commands.SetSupervisor{ID: spec.ID, DataSource: spec.DataSource, Spec: spec.WithSuspended(suspended), Suspended: suspended})
}

func supCluster(t *testing.T, partitions int32, topic string) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// produce writes n records to each listed partition.
func produce(t *testing.T, addr, topic string, n int, parts ...int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, p := range parts {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(`{"ts":"2024-01-01T00:00:00Z","page":"p` + strconv.Itoa(i) + `"}`)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func runManager(t *testing.T, c Control) (*Manager, context.CancelFunc) {
	t.Helper()
	m := NewManager(c, nil)
	m.PollInterval = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return m, stop
}

// settle waits until the manager has reconciled, and supervisor id (while it
// runs) has finished a run, three more times than before the call: what the
// state at the call asks for has been acted on, so a check after it that
// nothing more happened is exact rather than a guess after a fixed sleep.
func settle(t *testing.T, m *Manager, id string) {
	t.Helper()
	const more = 3
	reconciles := m.reconciles.Load()
	s := m.supervisor(id)
	runs := finishedRuns(s)
	eventually.True(t, "three more supervisor runs", func() bool {
		if m.reconciles.Load() < reconciles+more {
			return false
		}
		cur := m.supervisor(id)
		if cur == nil {
			return true
		}
		if cur != s { // a new version started: count its own runs
			s, runs = cur, 0
		}
		return finishedRuns(cur) >= runs+more
	})
}

func finishedRuns(s *supervisor) uint64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

func startOffsets(p supTaskPayload) map[string]int64 {
	return p.IOConfig.StartSequenceNumbers.PartitionSequenceNumberMap
}

func byGroup(ps []supTaskPayload) map[string][]supTaskPayload {
	out := map[string][]supTaskPayload{}
	for _, p := range ps {
		out[p.GroupID] = append(out[p.GroupID], p)
	}
	return out
}

type supStatusView struct {
	supReport
}

func status(t *testing.T, m *Manager, id string) (Status, supStatusView) {
	t.Helper()
	st, ok := m.Status(id)
	if !ok {
		t.Fatalf("supervisor %s not running", id)
	}
	var v supStatusView
	if err := json.Unmarshal(st.Payload, &v); err != nil {
		t.Fatalf("payload %s: %v", st.Payload, err)
	}
	return st, v
}

func TestSupervisorSplitsPartitionsLatest(t *testing.T) {
	_, addr := supCluster(t, 3, "t")
	produce(t, addr, "t", 4, 0, 1, 2)
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 2}), false)
	m.Kick()
	eventually.True(t, "two tasks", func() bool { return len(c.tasks()) == 2 })
	settle(t, m, "wiki")
	tasks := c.tasks()
	if len(tasks) != 2 {
		t.Fatalf("duplicate submissions: %d tasks", len(tasks))
	}
	g := byGroup(tasks)
	g0, g1 := g["index_kafka_wiki_g0"], g["index_kafka_wiki_g1"]
	if len(g0) != 1 || len(g1) != 1 {
		t.Fatalf("groups %v", g)
	}
	// Nothing stored and useEarliestOffset false: the latest offsets.
	if !mapsEqual(startOffsets(g0[0]), map[string]int64{"0": 4, "2": 4}) || !mapsEqual(startOffsets(g1[0]), map[string]int64{"1": 4}) {
		t.Fatalf("start offsets %v %v", startOffsets(g0[0]), startOffsets(g1[0]))
	}
	p := g0[0]
	io := p.IOConfig
	if p.Type != "index_kafka" || p.DataSource != "wiki" || io.Type != "kafka" || io.Topic != "t" ||
		io.ConsumerProperties["bootstrap.servers"] != addr || io.TaskDuration != "PT3600S" ||
		io.StartSequenceNumbers.Type != "start" || io.StartSequenceNumbers.Stream != "t" ||
		len(p.DataSchema) == 0 || string(io.InputFormat) != `{"type":"json"}` || len(p.TuningConfig) == 0 {
		t.Fatalf("payload %+v", p)
	}
	var ds struct{ DataSource string }
	if json.Unmarshal(p.DataSchema, &ds); ds.DataSource != "wiki" {
		t.Fatalf("dataSchema %s", p.DataSchema)
	}
	st, rep := status(t, m, "wiki")
	if st.State != StateRunning || st.DetailedState != StateRunning || !st.Healthy || len(rep.ActiveTasks) != 2 ||
		rep.Partitions != 3 || rep.Stream != "t" || rep.DurationSeconds != 3600 || rep.Replicas != 1 {
		t.Fatalf("status %+v %s", st, st.Payload)
	}
	if a := rep.ActiveTasks[0]; a.Type != "ACTIVE" || a.StartTime != nil || a.RemainingSeconds != 3600 {
		t.Fatalf("active task %+v", a)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSupervisorStoredAndEarliestOffsetsAndLag(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	produce(t, addr, "t", 5, 0, 1)
	c := newSupTestControl(t)
	c.setOffsets("wiki", "t", map[int32]int64{0: 3})
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	if got := startOffsets(c.tasks()[0]); !mapsEqual(got, map[string]int64{"0": 3, "1": 0}) {
		t.Fatalf("start offsets %v", got)
	}
	// Lag: behind the stored offset, or the running task's start where none is stored.
	produce(t, addr, "t", 2, 1)
	eventually.True(t, "lag", func() bool {
		_, rep := status(t, m, "wiki")
		return rep.LatestOffsets["1"] == 7
	})
	_, rep := status(t, m, "wiki")
	if !mapsEqual(rep.LatestOffsets, map[string]int64{"0": 5, "1": 7}) || !mapsEqual(rep.MinimumLag, map[string]int64{"0": 2, "1": 7}) ||
		rep.AggregateLag == nil || *rep.AggregateLag != 9 || rep.OffsetsLastUpdated == nil {
		t.Fatalf("lag report %+v", rep)
	}
	if _, err := time.Parse(supISOMillis, *rep.OffsetsLastUpdated); err != nil {
		t.Fatal(err)
	}
}

func TestSupervisorNextTaskAfterSuccessAndFailure(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 2, earliest: true}), false)
	eventually.True(t, "two tasks", func() bool { return len(c.tasks()) == 2 })
	g := byGroup(c.tasks())
	t0, t1 := g["index_kafka_wiki_g0"][0].ID, g["index_kafka_wiki_g1"][0].ID
	c.start(t0)
	c.start(t1)
	eventually.True(t, "start time shown", func() bool {
		_, rep := status(t, m, "wiki")
		return len(rep.ActiveTasks) == 2 && rep.ActiveTasks[0].StartTime != nil && rep.ActiveTasks[1].StartTime != nil
	})
	c.finish("wiki", "t", t0, map[int32]int64{0: 17})
	eventually.True(t, "next task of g0", func() bool { return len(c.tasks()) == 3 })
	next := c.tasks()[2]
	if next.GroupID != "index_kafka_wiki_g0" || !mapsEqual(startOffsets(next), map[string]int64{"0": 17}) {
		t.Fatalf("next task %+v", next)
	}
	c.finish("wiki", "t", t1, nil) // failed
	eventually.True(t, "retry of g1", func() bool { return len(c.tasks()) == 4 })
	retry := c.tasks()[3]
	if retry.GroupID != "index_kafka_wiki_g1" || !mapsEqual(startOffsets(retry), map[string]int64{"1": 0}) {
		t.Fatalf("retry task %+v", retry)
	}
	st, rep := status(t, m, "wiki")
	if len(rep.RecentErrors) != 1 || rep.RecentErrors[0].StreamException || !st.Healthy {
		t.Fatalf("errors %+v", rep.RecentErrors)
	}
	settle(t, m, "wiki")
	if n := len(c.tasks()); n != 4 {
		t.Fatalf("%d tasks, want 4", n)
	}
}

func TestSupervisorSuspendResumeTerminate(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	body := supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true})
	c.setSpec(t, body, false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	first := c.tasks()[0].ID
	c.start(first)

	c.setSpec(t, body, true)
	m.Kick()
	eventually.True(t, "graceful stop", func() bool { return slices.Contains(c.stops(), first) })
	eventually.True(t, "SUSPENDED", func() bool { st, _ := m.Status("wiki"); return st.State == StateSuspended })
	_, rep := status(t, m, "wiki")
	if !rep.Suspended || len(rep.PublishingTasks) != 1 || rep.PublishingTasks[0].Type != "PUBLISHING" || len(rep.ActiveTasks) != 0 {
		t.Fatalf("suspended report %+v", rep)
	}
	c.finish("wiki", "t", first, map[int32]int64{0: 2, 1: 3})
	settle(t, m, "wiki")
	if n := len(c.tasks()); n != 1 {
		t.Fatalf("suspended supervisor submitted: %d tasks", n)
	}

	c.setSpec(t, body, false)
	m.Kick()
	eventually.True(t, "task after resume", func() bool { return len(c.tasks()) == 2 })
	if got := startOffsets(c.tasks()[1]); !mapsEqual(got, map[string]int64{"0": 2, "1": 3}) {
		t.Fatalf("resumed from %v", got)
	}
	second := c.tasks()[1].ID

	c.mustApply(commands.TerminateSupervisor{ID: "wiki"})
	m.Kick()
	eventually.True(t, "terminate", func() bool { _, ok := m.Status("wiki"); return !ok })
	if !slices.Contains(c.stops(), second) {
		t.Fatalf("terminate did not stop %s: %v", second, c.stops())
	}
	settle(t, m, "wiki")
	if n := len(c.tasks()); n != 2 {
		t.Fatalf("terminated supervisor submitted: %d tasks", n)
	}
}

func TestSupervisorSpecUpdateRestartsGracefully(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	old := c.tasks()[0].ID
	c.start(old)

	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 2, earliest: true, duration: "PT10M"}), false)
	m.Kick()
	eventually.True(t, "old task stopped", func() bool { return slices.Contains(c.stops(), old) })
	settle(t, m, "wiki")
	// The old task still publishes: its partitions are not read twice.
	if n := len(c.tasks()); n != 1 {
		t.Fatalf("%d tasks while the old one publishes", n)
	}
	_, rep := status(t, m, "wiki")
	if len(rep.PublishingTasks) != 1 || rep.PublishingTasks[0].ID != old {
		t.Fatalf("report %+v", rep)
	}
	c.finish("wiki", "t", old, map[int32]int64{0: 5, 1: 6})
	eventually.True(t, "new tasks", func() bool { return len(c.tasks()) == 3 })
	g := byGroup(c.tasks()[1:])
	n0, n1 := g["index_kafka_wiki_g0"], g["index_kafka_wiki_g1"]
	if len(n0) != 1 || len(n1) != 1 || !mapsEqual(startOffsets(n0[0]), map[string]int64{"0": 5}) ||
		!mapsEqual(startOffsets(n1[0]), map[string]int64{"1": 6}) || n0[0].IOConfig.TaskDuration != "PT600S" {
		t.Fatalf("new tasks %+v", c.tasks()[1:])
	}
}

func TestSupervisorNewPartitions(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 2}), false)
	eventually.True(t, "two tasks", func() bool { return len(c.tasks()) == 2 })
	g0 := byGroup(c.tasks())["index_kafka_wiki_g0"][0].ID
	c.start(g0)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreatePartitions(context.Background(), 1, "t"); err != nil {
		t.Fatal(err)
	}
	produce(t, addr, "t", 3, 2)
	// Partition 2 belongs to group 0, whose task does not read it: it is stopped.
	eventually.True(t, "g0 stopped", func() bool { return slices.Contains(c.stops(), g0) })
	c.finish("wiki", "t", g0, map[int32]int64{0: 0})
	eventually.True(t, "next g0 task", func() bool { return len(c.tasks()) == 3 })
	// A partition that appeared later starts at its beginning, not at latest.
	if got := startOffsets(c.tasks()[2]); !mapsEqual(got, map[string]int64{"0": 0, "2": 0}) {
		t.Fatalf("next g0 task reads %v", got)
	}
}

func TestSupervisorLeadershipLossKeepsTasks(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	_, stop := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	stop()
	if len(c.stops()) != 0 {
		t.Fatalf("leadership loss stopped tasks: %v", c.stops())
	}
	// The next leader adopts the running task instead of starting another.
	m2, _ := runManager(t, c)
	eventually.True(t, "adopted", func() bool {
		st, ok := m2.Status("wiki")
		return ok && st.State == StateRunning
	})
	settle(t, m2, "wiki")
	_, rep := status(t, m2, "wiki")
	if len(c.tasks()) != 1 || len(rep.ActiveTasks) != 1 || rep.ActiveTasks[0].ID != c.tasks()[0].ID {
		t.Fatalf("after failover: %d tasks, report %+v", len(c.tasks()), rep)
	}
}

func TestSupervisorStatesUnreachableStream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there any more
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: dead, taskCount: 1, startDelay: "PT0.3S"}), false)
	m.Kick()
	eventually.True(t, "supervisor", func() bool { _, ok := m.Status("wiki"); return ok })
	if st, _ := status(t, m, "wiki"); st.State != StatePending || st.DetailedState != StatePending || !st.Healthy {
		t.Fatalf("before the first run: %+v", st)
	}
	// Until it is declared unable to connect, a supervisor that never reached
	// the stream is still connecting, not discovering tasks.
	eventually.True(t, "first run", func() bool { st, _ := m.Status("wiki"); return st.DetailedState != StatePending })
	eventually.True(t, "unhealthy", func() bool {
		st, _ := m.Status("wiki")
		if st.Healthy && st.DetailedState != StateConnectingToStream {
			t.Fatalf("while failing to connect: %s / %s", st.State, st.DetailedState)
		}
		return !st.Healthy
	})
	st, rep := status(t, m, "wiki")
	if st.State != StateUnhealthySupervisor || st.DetailedState != StateUnableToConnectToStream {
		t.Fatalf("state %+v", st)
	}
	if len(rep.RecentErrors) != 3 || !rep.RecentErrors[0].StreamException || rep.RecentErrors[0].Message == "" {
		t.Fatalf("errors %+v", rep.RecentErrors)
	}
	if len(c.tasks()) != 0 {
		t.Fatal("tasks submitted without Kafka")
	}
}

func TestSupervisorLostContactWithStream(t *testing.T) {
	kc, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1}), false)
	eventually.True(t, "RUNNING", func() bool { st, _ := m.Status("wiki"); return st.DetailedState == StateRunning })
	kc.Close()
	eventually.True(t, "lost contact", func() bool { st, _ := m.Status("wiki"); return st.DetailedState == StateLostContactWithStream })
	if st, _ := m.Status("wiki"); st.State != StateUnhealthySupervisor || st.Healthy {
		t.Fatalf("state %+v", st)
	}
}

func TestStateTrackerTransitions(t *testing.T) {
	now := time.Unix(0, 0)
	tr := newStateTracker(StateConfig{})
	if tr.detailed != StatePending || !tr.healthy() {
		t.Fatal("not PENDING at first")
	}
	tr.propose(StateConnectingToStream)
	tr.propose(StateRunning) // refused before a successful run
	if tr.detailed != StateConnectingToStream || tr.state() != StateRunning {
		t.Fatalf("first run state %s", tr.detailed)
	}
	tr.finishRun(StateRunning)
	if tr.detailed != StateRunning {
		t.Fatalf("after a good run %s", tr.detailed)
	}
	tr.propose(StateCreatingTasks) // first-run-only: refused now
	if tr.detailed != StateRunning {
		t.Fatalf("first-run state accepted: %s", tr.detailed)
	}
	// Three failed tasks: UNHEALTHY_TASKS until three succeed.
	for range 3 {
		tr.taskCompleted(false)
	}
	tr.finishRun(StateRunning)
	if tr.state() != StateUnhealthyTasks || tr.healthy() {
		t.Fatalf("after failed tasks %s", tr.detailed)
	}
	for i := range 3 {
		tr.taskCompleted(true)
		tr.finishRun(StateRunning)
		if want := i == 2; tr.healthy() != want {
			t.Fatalf("after %d good tasks healthy=%v", i+1, tr.healthy())
		}
	}
	// Failed runs (not Kafka): UNHEALTHY_SUPERVISOR at the third; three good runs heal.
	for i := range 3 {
		tr.fail(now, false, "x")
		tr.finishRun(StateRunning)
		if want := i < 2; tr.healthy() != want {
			t.Fatalf("after %d failed runs healthy=%v", i+1, tr.healthy())
		}
	}
	if tr.detailed != StateUnhealthySupervisor {
		t.Fatalf("detailed %s", tr.detailed)
	}
	for i := range 3 {
		tr.finishRun(StateRunning)
		if want := i == 2; tr.healthy() != want {
			t.Fatalf("after %d good runs healthy=%v (%s)", i+1, tr.healthy(), tr.detailed)
		}
	}
	// Stream failures after having connected: LOST_CONTACT_WITH_STREAM.
	tr.everConnected = true
	for range 3 {
		tr.fail(now, true, "y")
		tr.finishRun(StateRunning)
	}
	if tr.detailed != StateLostContactWithStream || len(tr.errors) != 3 || !tr.errors[2].StreamException {
		t.Fatalf("detailed %s errors %d", tr.detailed, len(tr.errors))
	}
	// Suspended steady state.
	tr2 := newStateTracker(DefaultStateConfig())
	tr2.finishRun(StateSuspended)
	if tr2.detailed != StateSuspended || tr2.state() != StateSuspended || !tr2.healthy() {
		t.Fatalf("suspended %s", tr2.detailed)
	}
}

// A task that ends is replaced at once, not at the supervisor's next period
// (an hour here): reading goes on from the offsets it published.
func TestSupervisorReplacesEndedTaskAtOnce(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true, period: "PT1H"}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	first := c.tasks()[0].ID
	c.start(first)
	c.finish("wiki", "t", first, map[int32]int64{0: 9})
	eventually.True(t, "the next task", func() bool { return len(c.tasks()) == 2 })
	if got := startOffsets(c.tasks()[1]); !mapsEqual(got, map[string]int64{"0": 9}) {
		t.Fatalf("next task starts at %v", got)
	}
}

// A task a reset ended (ResetShutdownReason) is not a failed task: no error
// is recorded, and its group starts anew from the offsets the reset stored.
func TestSupervisorResetKillIsNotAFailure(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	first := c.tasks()[0].ID
	c.start(first)
	c.setOffsets("wiki", "t", map[int32]int64{0: 42})
	c.mustApply(commands.ShutdownTask{ID: first, Reason: ResetShutdownReason})
	eventually.True(t, "the group's next task", func() bool { return len(c.tasks()) == 2 })
	if next := c.tasks()[1]; !mapsEqual(startOffsets(next), map[string]int64{"0": 42}) {
		t.Fatalf("next task starts at %v, want the reset offsets", startOffsets(next))
	}
	st, rep := status(t, m, "wiki")
	if len(rep.RecentErrors) != 0 || !st.Healthy {
		t.Fatalf("after a reset kill: healthy %v, errors %+v", st.Healthy, rep.RecentErrors)
	}
}

// The status shows a task's start at once, from the FSM, not at the next
// supervisor run (an hour away here).
func TestSupervisorStatusIsLive(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, period: "PT1H"}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	eventually.True(t, "the task in the report", func() bool { _, rep := status(t, m, "wiki"); return len(rep.ActiveTasks) == 1 })
	if _, rep := status(t, m, "wiki"); rep.ActiveTasks[0].StartTime != nil {
		t.Fatal("start time before the task started")
	}
	c.start(c.tasks()[0].ID)
	eventually.True(t, "start time shown", func() bool {
		_, rep := status(t, m, "wiki")
		return len(rep.ActiveTasks) == 1 && rep.ActiveTasks[0].StartTime != nil
	})
}
