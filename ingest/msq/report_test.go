package msq

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// In a synctest bubble: the ticker runs on the bubble's clock, so "after
// finish nothing more is sent" is checked over 300 ms of that clock at once.
func TestTrackerTicksUntilFinish(t *testing.T) {
	synctest.Test(t, testTrackerTicksUntilFinish)
}

func testTrackerTicksUntilFinish(t *testing.T) {
	var mu sync.Mutex
	var got []Report
	tr := newTracker("query-tick", func(r Report) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	})
	st := tr.addStage(map[string]any{"id": "q_0"}, false)
	tr.begin()
	tr.startTicker(time.Millisecond)
	tr.stagePhase(st, PhaseReadingInput)
	wc := tr.counters(st, 0)
	in := wc.input(0, &externalSource{})
	// Counters that move within a split reach progress through the ticks,
	// without a phase change (the tracker throttles to 250 ms).
	wc.mu.Lock()
	in.rows = 42
	wc.mu.Unlock()
	time.Sleep(300 * time.Millisecond) // past the throttle
	synctest.Wait()
	mu.Lock()
	last := got[len(got)-1]
	mu.Unlock()
	c := last.MultiStageQuery.Payload.Counters["0"]["0"]["input0"]
	if m, ok := c.(map[string]any); !ok || m["rows"].([]int64)[0] != 42 {
		t.Fatalf("the ticker did not send the moved counters: %v", c)
	}
	tr.succeed()
	tr.finish()
	mu.Lock()
	n := len(got)
	final := got[n-1]
	mu.Unlock()
	if final.MultiStageQuery.Payload.Status.Status != StateSuccess {
		t.Fatalf("last snapshot is %s, want the final one", final.MultiStageQuery.Payload.Status.Status)
	}
	time.Sleep(300 * time.Millisecond)
	synctest.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatal("snapshots were sent after finish")
	}
}

func TestProgressKeyIgnoresTimings(t *testing.T) {
	tr := newTracker("query-key", nil)
	st := tr.addStage(map[string]any{"id": "q_0"}, false)
	tr.begin()
	tr.stagePhase(st, PhaseReadingInput)
	tr.loadWait("ds", time.Now(), 3)
	a := tr.snapshot()
	time.Sleep(5 * time.Millisecond)
	b := tr.snapshot()
	if a.MultiStageQuery.Payload.Status.DurationMs == b.MultiStageQuery.Payload.Status.DurationMs &&
		*a.MultiStageQuery.Payload.Stages[0].Duration == *b.MultiStageQuery.Payload.Stages[0].Duration {
		t.Fatal("durations did not grow; the test proves nothing")
	}
	if a.ProgressKey() != b.ProgressKey() {
		t.Fatalf("key changed with time alone:\n%s\n%s", a.ProgressKey(), b.ProgressKey())
	}
	wc := tr.counters(st, 0)
	in := wc.input(0, &externalSource{})
	wc.mu.Lock()
	in.rows = 1
	wc.mu.Unlock()
	c := tr.snapshot()
	if c.ProgressKey() == b.ProgressKey() {
		t.Fatal("key did not change with the counters")
	}
	tr.stagePhase(st, PhasePostReading)
	if d := tr.snapshot(); d.ProgressKey() == c.ProgressKey() {
		t.Fatal("key did not change with the phase")
	}
}
