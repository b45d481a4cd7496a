package middlemanager

import (
	"context"
	"sync"
	"time"

	"strata/metrics"
	"strata/segmeta"
)

// taskMetrics records one task's publishes and hand-offs in its worker's
// registry (Config.Metrics). Every copy of the task's Env shares it, so the
// hand-off the worker waits for after the task ended is timed from the
// task's last publish.
type taskMetrics struct {
	m          *metrics.Ingest // nil: not recorded
	taskType   string
	mu         sync.Mutex
	lastCommit time.Time // when the last publish was acknowledged
}

// handedOff records the end of a hand-off of segments: all seen loaded
// (ok), timed from the last publish; or given up on.
func (tm *taskMetrics) handedOff(dataSource string, segments int, ok bool) {
	tm.mu.Lock()
	commit := tm.lastCommit
	tm.mu.Unlock()
	if ok && commit.IsZero() {
		return // no publish was recorded: nothing to time from
	}
	tm.m.HandedOff(dataSource, tm.taskType, segments, time.Since(commit), ok)
}

// Published records a publish the control plane committed: the time since
// the task sent it (started), the segments and their bytes. A hand-off
// is timed from this moment.
func (e Env) Published(dataSource string, segs []*segmeta.DataSegment, started time.Time) {
	tm := e.metrics
	if tm == nil {
		return
	}
	now := time.Now()
	tm.mu.Lock()
	tm.lastCommit = now
	tm.mu.Unlock()
	var bytes int64
	for _, s := range segs {
		bytes += s.Size
	}
	tm.m.Published(dataSource, tm.taskType, len(segs), bytes, now.Sub(started))
}

// HandedOff records the end of a task's own wait for its published
// segments to be loaded (batch tasks' awaitSegmentAvailability, SQL
// tasks' waitUntilSegmentsLoad): err nil when all were seen loaded, timed
// from the last Published; else they count as failed hand-offs. A wait the
// task's cancellation ended records nothing.
func (e Env) HandedOff(ctx context.Context, dataSource string, segments int, err error) {
	tm := e.metrics
	if tm == nil || ctx.Err() != nil {
		return
	}
	tm.handedOff(dataSource, segments, err == nil)
}
