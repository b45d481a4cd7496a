package streaming

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"strata/commands"
	"strata/ingest/nativebatch"
	"strata/internal/eventually"
)

// Finding 7 of issue #19: a supervisor's status contradicted itself (lag
// from the last run beside the tasks' live positions) and /stats' averages
// missed rows read from a backlog.

// progress stores a reading task's kafkaProgress report, as the task
// publishes it: its next offsets and the rows it has built so far.
func (c *supTestControl) progress(id string, cur map[int32]int64, rows int64) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{ProgressReportType: map[string]any{"type": ProgressReportType, "taskId": id,
		"payload": Progress{Stream: "t", CurrentOffsets: supOffsetsJSONMap(cur), RowStats: &nativebatch.RowStats{Processed: rows}}}})
	if err != nil {
		c.t.Fatal(err)
	}
	c.mustApply(commands.TaskStatusUpdate{ID: id, Worker: supTestWorker, Status: commands.TaskRunning, Report: b})
}

// freshStatus is the report of a status request (FreshStatus).
func freshStatus(t *testing.T, m *Manager, id string) supStatusView {
	t.Helper()
	st, ok := m.FreshStatus(context.Background(), id)
	if !ok {
		t.Fatalf("supervisor %s not running", id)
	}
	var v supStatusView
	if err := json.Unmarshal(st.Payload, &v); err != nil {
		t.Fatalf("payload %s: %v", st.Payload, err)
	}
	return v
}

// checkOneSample fails unless the report's offsets and lags are one sample:
// the latest offsets at or past every task's position, each task's lag the
// difference, the minimum lag the difference from the furthest position, the
// aggregate lag the sum of the minimum lags.
func checkOneSample(t *testing.T, rep supStatusView) {
	t.Helper()
	var sum int64
	for p, latest := range rep.LatestOffsets {
		furthest := int64(-1)
		for _, task := range append(slices.Clone(rep.ActiveTasks), rep.PublishingTasks...) {
			cur, ok := task.CurrentOffsets[p]
			if !ok {
				continue
			}
			if cur > latest {
				t.Fatalf("partition %s: latest offset %d behind task %s at %d: %+v", p, latest, task.ID, cur, rep)
			}
			if task.Lag[p] != latest-cur {
				t.Fatalf("partition %s: task %s at %d shows lag %d, latest is %d: %+v", p, task.ID, cur, task.Lag[p], latest, rep)
			}
			furthest = max(furthest, cur)
		}
		if furthest >= 0 && rep.MinimumLag[p] != latest-furthest {
			t.Fatalf("partition %s: minimum lag %d, but latest is %d and a task is at %d: %+v", p, rep.MinimumLag[p], latest, furthest, rep)
		}
		sum += rep.MinimumLag[p]
	}
	if rep.AggregateLag == nil || *rep.AggregateLag != sum {
		t.Fatalf("aggregate lag %v, the minimum lags sum to %d: %+v", rep.AggregateLag, sum, rep)
	}
}

// A status agrees with itself: latest offsets, the tasks' positions and
// lags, minimum and aggregate lag come from one sample, measured anew when
// the last one is stale (the next run is an hour away here). Once the task
// caught up on a backlog the lag is 0, not the backlog; in steady ingestion
// the latest offsets are never behind a task's position.
func TestSupervisorStatusIsOneLagSample(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	produce(t, addr, "t", 300, 0, 1) // the backlog
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true, period: "PT1H"}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	id := c.tasks()[0].ID
	c.start(id)
	reaches := func(what string, want map[string]int64) supStatusView {
		t.Helper()
		var rep supStatusView
		eventually.True(t, what, func() bool {
			rep = freshStatus(t, m, "wiki")
			checkOneSample(t, rep)
			return len(rep.ActiveTasks) == 1 && mapsEqual(rep.ActiveTasks[0].CurrentOffsets, want)
		})
		return rep
	}

	c.progress(id, map[int32]int64{0: 300, 1: 300}, 600)
	rep := reaches("the caught-up position", map[string]int64{"0": 300, "1": 300})
	if *rep.AggregateLag != 0 || !mapsEqual(rep.LatestOffsets, map[string]int64{"0": 300, "1": 300}) {
		t.Fatalf("caught up: %+v", rep)
	}

	produce(t, addr, "t", 40, 0, 1)
	c.progress(id, map[int32]int64{0: 330, 1: 340}, 670)
	rep = reaches("the task's new position", map[string]int64{"0": 330, "1": 340})
	if *rep.AggregateLag != 10 || !mapsEqual(rep.LatestOffsets, map[string]int64{"0": 340, "1": 340}) {
		t.Fatalf("steady ingestion: %+v", rep)
	}
}

// Rows a task read from a backlog before the supervisor first saw its
// progress count in /stats' moving averages: its counters started at zero
// when the task started.
func TestSupervisorStatsCountBacklog(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	produce(t, addr, "t", 500, 0)
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	c.setSpec(t, supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true, period: "PT1H"}), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	id := c.tasks()[0].ID
	c.start(id)
	c.progress(id, map[int32]int64{0: 500}, 500)
	var got map[string]map[string]struct {
		MovingAverages map[string]map[string]rowRates  `json:"movingAverages"`
		Totals         map[string]nativebatch.RowStats `json:"totals"`
	}
	eventually.True(t, "the rows in /stats", func() bool {
		st, _ := status(t, m, "wiki")
		if err := json.Unmarshal(st.Stats, &got); err != nil {
			t.Fatal(err)
		}
		return got["0"][id].Totals["buildSegments"].Processed == 500
	})
	for _, w := range []string{"1m", "5m", "15m"} {
		if r := got["0"][id].MovingAverages["buildSegments"][w]; r.Processed <= 0 {
			t.Fatalf("%s average %+v after 500 rows read", w, r)
		}
	}
}

// A reading task reports the position it reached even when no record
// follows: the report of a backlog's last records may fall due only after
// the last fetch, and a task waiting for records must still send it.
func TestReadReportsPositionWhileIdle(t *testing.T) {
	defer SetProgressPeriod(50 * time.Millisecond)()
	_, addr := supCluster(t, 1, "t")
	produce(t, addr, "t", 5, 0)
	k := testTask(t, addr, `{"type":"json"}`, 1000)
	k.taskDuration = time.Minute
	var (
		mu    sync.Mutex
		heard []int64 // records read, at each progress call
	)
	calls := func() []int64 { mu.Lock(); defer mu.Unlock(); return slices.Clone(heard) }
	ctx, cancel := context.WithCancel(context.Background())
	spool, done := filepath.Join(t.TempDir(), "records"), make(chan struct{})
	go func() {
		defer close(done)
		k.read(ctx, spool, func(string, ...any) {}, func(_ context.Context, _ Offsets, n int64) {
			mu.Lock()
			heard = append(heard, n)
			mu.Unlock()
		}, nil)
	}()
	defer func() { cancel(); <-done }()
	eventually.True(t, "the records read", func() bool { c := calls(); return len(c) > 0 && c[len(c)-1] == 5 })
	seen := len(calls())
	eventually.True(t, "a progress call with nothing more to read", func() bool { return len(calls()) > seen })
}

// The averages run from the task's start (counters at zero) when the window
// is longer than the task's life, and fall as the window moves past the rows.
func TestRowRatesFromTaskStart(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	task := &supTask{id: "k", startedMs: t0.UnixMilli()}
	task.observe(t0.Add(30*time.Second), progressReport(t, nativebatch.RowStats{Processed: 3000}, nil))
	rate := func(now time.Time, d time.Duration) float64 {
		return ratesOver(task.samples, time.UnixMilli(task.startedMs), now, d).Processed
	}
	if r := rate(t0.Add(30*time.Second), time.Minute); r != 100 {
		t.Fatalf("1m after the backlog: %v rows/s, want 100", r)
	}
	// Two minutes in, nothing more read: the last minute saw no rows, the
	// last five the 3000.
	later := t0.Add(2 * time.Minute)
	if r := rate(later, time.Minute); r != 0 {
		t.Fatalf("1m, a minute after the last rows: %v rows/s", r)
	}
	if r := rate(later, 5*time.Minute); r != 25 {
		t.Fatalf("5m: %v rows/s, want 3000 over 120 s", r)
	}
	// Between samples the counters are interpolated: 90 s in, the last
	// minute began 30 s in, when the 3000 rows were already counted.
	task.observe(t0.Add(60*time.Second), progressReport(t, nativebatch.RowStats{Processed: 6000}, nil))
	if r := rate(t0.Add(90*time.Second), time.Minute); r != 50 {
		t.Fatalf("1m across samples: %v rows/s, want 3000 over 60 s", r)
	}
}
