package streaming

import (
	"strings"
	"testing"
	"time"

	"strata/commands"
	"strata/fsm"
	"strata/internal/eventually"
)

// autoSpecJSON is supSpecJSON with a lag-based autoscaler whose timings suit a test.
func autoSpecJSON(ds, topic, addr string, taskCount int, auto string) []byte {
	b := supSpecJSON(ds, topic, supSpecOpts{bootstrap: addr, taskCount: taskCount, earliest: true})
	return []byte(strings.Replace(string(b), `"taskCount":`, `"autoScalerConfig":`+auto+`,"taskCount":`, 1))
}

const testAutoScaler = `{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,
 "lagCollectionIntervalMillis":10,"lagCollectionRangeMillis":200,"scaleActionStartDelayMillis":100,
 "scaleActionPeriodMillis":50,"minTriggerScaleActionFrequencyMillis":100,
 "scaleOutThreshold":10,"triggerScaleOutFractionThreshold":0.5,"scaleInThreshold":5,"triggerScaleInFractionThreshold":0.9}`

func TestAutoScalerSpec(t *testing.T) {
	spec, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 5, `{"enableTaskAutoScaler":true,"taskCountMin":2,"taskCountMax":4}`))
	if err != nil {
		t.Fatal(err)
	}
	a := spec.AutoScaler
	if a == nil || spec.TaskCount != 4 || a.ScaleOutThreshold != 6000000 || a.TriggerScaleOutFraction != 0.3 ||
		a.ScaleInThreshold != 1000000 || a.TriggerScaleInFraction != 0.9 || a.LagCollectionInterval != 30*time.Second ||
		a.LagCollectionRange != 10*time.Minute || a.ScaleActionStartDelay != 5*time.Minute || a.ScaleActionPeriod != time.Minute ||
		a.MinTriggerScaleActionFrequency != 10*time.Minute || a.ScaleInStep != 1 || a.ScaleOutStep != 2 {
		t.Fatalf("defaults: taskCount %d, %+v", spec.TaskCount, a)
	}
	// The stored spec shows every setting and parses back to itself.
	if !strings.Contains(string(spec.Normalized), `"autoScalerStrategy":"lagBased"`) || !strings.Contains(string(spec.Normalized), `"scaleOutStep":2`) {
		t.Fatalf("normalized: %s", spec.Normalized)
	}
	again, err := ParseSupervisorSpec(spec.Normalized)
	if err != nil || string(again.Normalized) != string(spec.Normalized) {
		t.Fatalf("round trip: %v\n%s\n%s", err, spec.Normalized, again.Normalized)
	}
	// WithTaskCount changes only the task count.
	moved, err := spec.WithTaskCount(3)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ParseSupervisorSpec(moved); err != nil || m.TaskCount != 3 || m.AutoScaler == nil {
		t.Fatalf("WithTaskCount: %v %+v", err, m)
	}
	// Off: no autoscaler, the config kept as given.
	off, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 5, `{"enableTaskAutoScaler":false,"taskCountMax":9}`))
	if err != nil || off.AutoScaler != nil || off.TaskCount != 5 {
		t.Fatalf("disabled: %v %+v", err, off)
	}
	for _, bad := range []string{
		`{"enableTaskAutoScaler":true,"taskCountMax":2}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":3,"taskCountMax":2}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":0,"taskCountMax":2}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,"autoScalerStrategy":"cpuBased"}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,"triggerScaleOutFractionThreshold":1.5}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,"scaleInThreshold":-1}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,"scaleOutStep":0}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,"lagCollectionIntervalMillis":0}`,
		`{"enableTaskAutoScaler":"yes"}`,
	} {
		if _, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 1, bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestScalerDecisions(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := AutoScaler{TaskCountMin: 1, TaskCountMax: 6, LagCollectionInterval: time.Second, LagCollectionRange: 10 * time.Second,
		ScaleOutThreshold: 100, TriggerScaleOutFraction: 0.3, ScaleInThreshold: 10, TriggerScaleInFraction: 0.9,
		ScaleActionStartDelay: 5 * time.Second, ScaleActionPeriod: 2 * time.Second, MinTriggerScaleActionFrequency: 5 * time.Second,
		ScaleOutStep: 2, ScaleInStep: 1}
	feed := func(a *scaler, from time.Time, lags ...int64) time.Time {
		for i, l := range lags {
			a.observe(from.Add(time.Duration(i)*time.Second), l)
		}
		return from.Add(time.Duration(len(lags)-1) * time.Second)
	}
	// Too early: nothing, however high the lag.
	a := &scaler{cfg: cfg, started: t0}
	now := feed(a, t0, 500, 500, 500)
	if _, _, ok := a.decide(now, 2, 8); ok {
		t.Fatal("acted before the start delay")
	}
	// 3 of 10 samples over the threshold (30%): scale out by the step.
	a = &scaler{cfg: cfg, started: t0}
	now = feed(a, t0, 0, 0, 0, 0, 0, 0, 0, 500, 500, 500)
	if next, why, ok := a.decide(now, 2, 8); !ok || next != 4 || !strings.Contains(why, "3 of 10") {
		t.Fatalf("scale out: %d %q %v", next, why, ok)
	}
	// The action period holds the next check back.
	if _, _, ok := a.decide(now.Add(time.Second), 2, 8); ok {
		t.Fatal("acted twice within the action period")
	}
	// Bounded by taskCountMax and by the partitions.
	if next, _, _ := a.decide(now.Add(3*time.Second), 5, 8); next != 6 {
		t.Fatalf("above taskCountMax: %d", next)
	}
	a.lastCheck = time.Time{}
	if next, _, ok := a.decide(now.Add(3*time.Second), 2, 3); !ok || next != 3 {
		t.Fatalf("more groups than partitions: %d", next)
	}
	a.lastCheck = time.Time{}
	if _, _, ok := a.decide(now.Add(3*time.Second), 3, 3); ok {
		t.Fatal("scaled out past the partitions")
	}
	// Quiet: scale in by one, not below taskCountMin.
	a = &scaler{cfg: cfg, started: t0}
	now = feed(a, t0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0)
	if next, _, ok := a.decide(now, 3, 8); !ok || next != 2 {
		t.Fatalf("scale in: %d %v", next, ok)
	}
	a.lastCheck = time.Time{}
	if _, _, ok := a.decide(now, 1, 8); ok {
		t.Fatal("scaled in below taskCountMin")
	}
	// Only the collection range counts, sampled once per interval.
	a = &scaler{cfg: cfg, started: t0}
	feed(a, t0, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500)
	if len(a.samples) != 11 {
		t.Fatalf("%d samples kept over a 10 s range at 1 s", len(a.samples))
	}
	a.observe(t0.Add(14500*time.Millisecond), 1)
	if len(a.samples) != 11 {
		t.Fatal("a sample within the interval was kept")
	}
}

// The supervisor scales out under lag and back in when it is quiet, each
// time through a new spec version, and restarts its tasks with the new count.
func TestSupervisorAutoScales(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, autoSpecJSON("wiki", "t", addr, 1, testAutoScaler), false)
	m.Kick()
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	first := c.tasks()[0].ID
	c.start(first)
	// Records nobody reads: the lag stays at 100, above the threshold.
	produce(t, addr, "t", 50, 0, 1)
	eventually.True(t, "scale out", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.updates) == 1
	})
	var rec fsm.SupervisorRecord
	var history []fsm.SupervisorVersion
	c.ReadState(func(st *fsm.State) {
		r, _ := st.Supervisor("wiki")
		rec = *r
		history = st.SupervisorHistory("wiki")
	})
	spec, err := ParseSupervisorSpec(rec.Spec)
	if err != nil || spec.TaskCount != 2 || len(history) != 2 || rec.Suspended {
		t.Fatalf("after scaling out: %v, taskCount %d, %d versions, suspended %v", err, spec.TaskCount, len(history), rec.Suspended)
	}
	if !strings.Contains(c.updates[0], "taskCount 1 -> 2") {
		t.Fatalf("audit comment %q", c.updates[0])
	}
	// The old task publishes; then one task per new group reads on.
	eventually.True(t, "the old task stopped", func() bool { return len(c.stops()) > 0 && c.stops()[0] == first })
	c.finish("wiki", "t", first, map[int32]int64{0: 50, 1: 50})
	eventually.True(t, "two new tasks", func() bool { return len(c.tasks()) == 3 })
	g := byGroup(c.tasks()[1:])
	if len(g["index_kafka_wiki_g0"]) != 1 || len(g["index_kafka_wiki_g1"]) != 1 {
		t.Fatalf("new tasks %+v", c.tasks()[1:])
	}
	// Everything published: no lag, so it scales back in.
	eventually.True(t, "scale in", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.updates) == 2
	})
	if !strings.Contains(c.updates[1], "taskCount 2 -> 1") {
		t.Fatalf("audit comment %q", c.updates[1])
	}
}

// An autoscaler's edit made on a version that changed meanwhile is refused.
func TestAutoScalerEditNeedsCurrentVersion(t *testing.T) {
	c := newSupTestControl(t)
	c.setSpec(t, autoSpecJSON("wiki", "t", "k:9092", 1, testAutoScaler), false)
	var rec fsm.SupervisorRecord
	c.ReadState(func(st *fsm.State) { r, _ := st.Supervisor("wiki"); rec = *r })
	spec, _ := ParseSupervisorSpec(rec.Spec)
	moved, _ := spec.WithTaskCount(2)
	c.setSpec(t, autoSpecJSON("wiki", "t", "k:9092", 1, testAutoScaler), true) // suspended meanwhile
	if err := c.UpdateSpec(t.Context(), "wiki", "wiki", rec.Index, moved, "test"); err == nil {
		t.Fatal("an edit of an old version applied")
	}
	// On the current version it applies.
	c.ReadState(func(st *fsm.State) { r, _ := st.Supervisor("wiki"); rec = *r })
	if err := c.UpdateSpec(t.Context(), "wiki", "wiki", rec.Index, moved, "test"); err != nil {
		t.Fatalf("an edit of the current version: %v", err)
	}
}

// taskCountStart is the task count a submitted spec starts with (within
// [taskCountMin, taskCountMax]); without it, the spec's taskCount, else
// taskCountMin. A stored version's taskCount (one the autoscaler chose)
// wins over it when read back.
func TestAutoScalerTaskCountStart(t *testing.T) {
	const auto = `{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":4,"taskCountStart":3}`
	spec, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 1, auto))
	if err != nil {
		t.Fatal(err)
	}
	if spec.TaskCount != 3 || spec.AutoScaler.TaskCountStart != 3 {
		t.Fatalf("taskCount %d, %+v", spec.TaskCount, spec.AutoScaler)
	}
	norm := string(spec.Normalized)
	if !strings.Contains(norm, `"taskCountStart":3`) || !strings.Contains(norm, `"taskCount":3`) {
		t.Fatalf("normalized: %s", norm)
	}
	for _, parse := range []func([]byte) (*SupervisorSpec, error){ParseSupervisorSpec, ParseStoredSupervisorSpec} {
		if again, err := parse(spec.Normalized); err != nil || string(again.Normalized) != norm {
			t.Fatalf("round trip: %v", err)
		}
	}
	// The autoscaler moved it: the stored count stands when read back, and
	// taskCountStart is still shown; submitted again, the spec starts over.
	moved, err := spec.WithTaskCount(4)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ParseStoredSupervisorSpec(moved); err != nil || m.TaskCount != 4 || !strings.Contains(string(m.Normalized), `"taskCountStart":3`) {
		t.Fatalf("stored after scaling: %v %+v", err, m)
	}
	if m, err := ParseSupervisorSpec(moved); err != nil || m.TaskCount != 3 {
		t.Fatalf("resubmitted: %v %+v", err, m)
	}

	// Absent: taskCount when given, else taskCountMin; not shown.
	noStart := `{"enableTaskAutoScaler":true,"taskCountMin":2,"taskCountMax":4}`
	if s, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 3, noStart)); err != nil || s.TaskCount != 3 ||
		strings.Contains(string(s.Normalized), "taskCountStart") {
		t.Fatalf("no taskCountStart, taskCount 3: %v %+v", err, s)
	}
	bare := strings.Replace(string(autoSpecJSON("wiki", "t", "k:9092", 1, noStart)), `"taskCount":1,`, ``, 1)
	if s, err := ParseSupervisorSpec([]byte(bare)); err != nil || s.TaskCount != 2 {
		t.Fatalf("no taskCountStart, no taskCount: %v %+v", err, s)
	}
	// Out of bounds: refused. With the autoscaler off: ignored, as Druid does.
	for _, bad := range []string{
		`{"enableTaskAutoScaler":true,"taskCountMin":2,"taskCountMax":4,"taskCountStart":1}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":2,"taskCountMax":4,"taskCountStart":5}`,
		`{"enableTaskAutoScaler":true,"taskCountMin":2,"taskCountMax":4,"taskCountStart":"3"}`,
	} {
		if _, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 3, bad)); err == nil || !strings.Contains(err.Error(), "taskCountStart") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if s, err := ParseSupervisorSpec(autoSpecJSON("wiki", "t", "k:9092", 2, `{"enableTaskAutoScaler":false,"taskCountStart":9}`)); err != nil || s.TaskCount != 2 {
		t.Fatalf("autoscaler off: %v %+v", err, s)
	}
}

// A supervisor starts with taskCountStart groups, and runs a stored version
// with the count the autoscaler chose.
func TestSupervisorTaskCountStart(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	m, stop := runManager(t, c)
	body := autoSpecJSON("wiki", "t", addr, 1, `{"enableTaskAutoScaler":true,"taskCountMin":1,"taskCountMax":2,"taskCountStart":2}`)
	c.setSpec(t, body, false)
	m.Kick()
	eventually.True(t, "two tasks", func() bool { return len(c.tasks()) == 2 })
	if g := byGroup(c.tasks()); len(g["index_kafka_wiki_g0"]) != 1 || len(g["index_kafka_wiki_g1"]) != 1 {
		t.Fatalf("groups %v", g)
	}
	stop()

	spec, err := ParseSupervisorSpec(body)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := spec.WithTaskCount(1)
	if err != nil {
		t.Fatal(err)
	}
	c2 := newSupTestControl(t)
	c2.mustApply(commands.SetSupervisor{ID: "wiki", DataSource: "wiki", Spec: scaled})
	m2, _ := runManager(t, c2)
	eventually.True(t, "a task", func() bool { return len(c2.tasks()) == 1 })
	if got := startOffsets(c2.tasks()[0]); len(got) != 2 {
		t.Fatalf("one group reads both partitions, got %v", got)
	}
	settle(t, m2, "wiki")
	if n := len(c2.tasks()); n != 1 {
		t.Fatalf("%d tasks for taskCount 1", n)
	}
}
