package middlemanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"strata/querynode/historical"
	"strata/segmeta"
)

// Served is a segment file a task makes queryable (see historical.Served).
type Served = historical.Served

// SegmentServer serves tasks' segments to brokers: the worker's local
// historical node (historical.Node.ServeLocal).
type SegmentServer interface {
	ServeLocal(owner string, segs []Served) error
	// HoldLocal makes reads of owner's realtime segments wait until
	// release: a task holds them while it publishes their rows.
	HoldLocal(owner string) (release func())
}

// ErrNoServing means this worker serves no queries (no SegmentServer): a task
// then runs without making its rows queryable before they are published.
var ErrNoServing = errors.New("this worker does not serve queries")

// Serve replaces what the task serves to brokers with segs (nil: nothing), in
// one step. The files must stay in place until they are replaced.
func (e Env) Serve(segs []Served) error {
	if e.serve == nil {
		return ErrNoServing
	}
	return e.serve(segs)
}

// Hold makes brokers' reads of the task's realtime segments wait until
// release is called; a task holds them from the moment it publishes their
// rows until it has handed off or withdrawn them, so that no broker reads the
// rows both from here and from a historical that loaded the published
// segments. Without serving it does nothing.
func (e Env) Hold() (release func()) {
	if e.hold == nil {
		return func() {}
	}
	return e.hold()
}

// Handoff, right after a successful publish, replaces what the task serves
// with the published segments (their final metadata) read from the given
// files. The worker takes the files over and serves them after the task ends,
// until the coordinator reports every one handed off to a historical (or
// HandoffTimeout passes), so the rows never go missing between publish and
// load. The task must not touch the files afterwards.
func (e Env) Handoff(dataSource string, segs []Served) error {
	if e.handoff == nil {
		return ErrNoServing
	}
	return e.handoff(dataSource, segs)
}

// handoff moves a task's published segment files under the worker's own
// directory, serves them, and waits in the background for the coordinator to
// report them loaded.
func (w *Worker) handoff(taskID, dataSource string, segs []Served, tm *taskMetrics) error {
	dir := filepath.Join(w.cfg.DataDir, "handoff", filepath.Base(w.taskDir(taskID)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	moved := make([]Served, len(segs))
	for i, s := range segs {
		if s.Segment == nil {
			return fmt.Errorf("hand-off of %s: a segment has no metadata", taskID)
		}
		moved[i] = Served{Segment: s.Segment}
		if s.Path == "" {
			continue
		}
		dst := filepath.Join(dir, strconv.Itoa(i)+".seg")
		if err := os.Rename(s.Path, dst); err != nil {
			return fmt.Errorf("hand-off of %s: %w", taskID, err)
		}
		moved[i].Path = dst
	}
	if err := w.cfg.Serving.ServeLocal(taskID, moved); err != nil {
		os.RemoveAll(dir)
		return err
	}
	w.mu.Lock()
	w.handingOff[taskID] = true
	w.mu.Unlock()
	w.wg.Add(1)
	go w.awaitHandoff(taskID, dataSource, moved, dir, tm)
	return nil
}

// awaitHandoff polls handoffComplete for every segment until all are handed
// off, the timeout passes or the worker stops, then stops serving them. The
// hand-off is timed from the task's publish (tm) to the coordinator's
// report that the last segment is loaded.
func (w *Worker) awaitHandoff(taskID, dataSource string, segs []Served, dir string, tm *taskMetrics) {
	defer w.wg.Done()
	defer func() {
		w.cfg.Serving.ServeLocal(taskID, nil)
		os.RemoveAll(dir)
		w.mu.Lock()
		delete(w.handingOff, taskID)
		w.mu.Unlock()
	}()
	deadline := time.Now().Add(w.cfg.HandoffTimeout)
	pending := make([]*segmeta.DataSegment, 0, len(segs))
	for _, s := range segs {
		pending = append(pending, s.Segment)
	}
	for len(pending) > 0 {
		next := pending[:0]
		for _, seg := range pending {
			if done, err := w.handedOff(w.ctx, dataSource, seg); err != nil || !done {
				next = append(next, seg)
			}
		}
		pending = next
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			w.log.Warn("segments not handed off in time; no longer serving them from this worker",
				"task", taskID, "segments", len(pending), "timeout", w.cfg.HandoffTimeout.String())
			tm.handedOff(dataSource, len(pending), false)
			return
		}
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(w.cfg.HandoffPollPeriod):
		}
	}
	w.log.Debug("segments handed off", "task", taskID, "segments", len(segs))
	tm.handedOff(dataSource, len(segs), true)
	// The coordinator has seen a historical load them; brokers poll that
	// historical on their own, so serve a little longer for them to see it
	// too, as the coordinator's handover does (svc.coordinator.handoverDelay).
	select {
	case <-w.ctx.Done():
	case <-time.After(handoffGrace):
	}
}

// handoffGrace is how long a worker keeps serving published segments after
// the coordinator reports them loaded on a historical.
const handoffGrace = time.Second

// handedOff asks the coordinator (any control node; followers redirect)
// whether a historical serves seg.
func (w *Worker) handedOff(ctx context.Context, dataSource string, seg *segmeta.DataSegment) (bool, error) {
	q := url.Values{}
	q.Set("interval", seg.Interval.String())
	q.Set("partitionNumber", strconv.Itoa(int(seg.ShardSpec.PartitionNum)))
	q.Set("version", seg.Version)
	path := "/svc/coordinator/v1/datasources/" + url.PathEscape(dataSource) + "/handoffComplete?" + q.Encode()
	var lastErr error
	for _, base := range w.cfg.Overlords {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return false, err
		}
		resp, err := w.client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			lastErr = fmt.Errorf("%s: %s: %s", base, resp.Status, b)
			continue
		}
		return string(b) == "true", nil
	}
	return false, lastErr
}
