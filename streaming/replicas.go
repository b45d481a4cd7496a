package streaming

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/ingest"
	"strata/ingest/middlemanager"
	"strata/ingest/nativebatch"
	"strata/interval"
	"strata/storage/deep"
)

// Replicas (ioConfig.replicas): the supervisor runs each sequence of a task
// group as several tasks on different middle managers, reading the same
// partitions from the same offsets. Each reads for taskDuration and publishes
// on its own; the publish's compare-and-swap on the stored offsets lets the
// first one in and refuses the others, so exactly one publishes. A replica
// that sees the stored offsets of its partitions move past its start offsets
// (the publish of another replica) stops reading and yields: it publishes
// nothing, and serves the published segments in place of its realtime ones
// until a historical loads them, as the publishing replica does, so that
// losing either middle manager loses no queryable row.

// replicaCheckPeriod is how often a reading replica asks whether another
// replica of its sequence published.
var replicaCheckPeriod = 500 * time.Millisecond

// watchReplicas checks, while ctx lasts, whether another replica of the
// task's sequence published, and if so calls stop; the result reports
// whether it did, once ctx has ended. The first check is made before the
// task reads: a replica started in place of a lost one after the sequence
// was published serves nothing. A task no supervisor made (no sequence) is
// not watched.
func (k *kafkaTask) watchReplicas(ctx context.Context, env middlemanager.Env, stop func()) (yielded func() bool) {
	var lost atomic.Bool
	if k.seq == "" {
		return lost.Load
	}
	// A failed check changes nothing: the publish settles it anyway.
	if ok, _ := k.superseded(ctx, env); ok {
		lost.Store(true)
		stop()
		return lost.Load
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(replicaCheckPeriod):
			}
			if ok, _ := k.superseded(ctx, env); ok {
				lost.Store(true)
				stop()
				return
			}
		}
	}()
	return func() bool {
		wg.Wait()
		return lost.Load()
	}
}

// superseded reports whether the stored offsets of one of the task's
// partitions are past its start offset: another task published records this
// one read, so its own publish can only be refused.
func (k *kafkaTask) superseded(ctx context.Context, env middlemanager.Env) (bool, error) {
	raw, err := env.Act(ctx, middlemanager.Action{Type: middlemanager.ActionDataSourceMetadata})
	if err != nil {
		return false, err
	}
	stored, err := ParseOffsets(string(raw))
	if err != nil || stored.Stream != k.topic {
		return false, err
	}
	for p, off := range k.start.Partitions {
		if cur, ok := stored.Partitions[p]; ok && cur > off {
			return true, nil
		}
	}
	return false, nil
}

// yield ends a task whose records another replica of its sequence
// published: it publishes nothing and succeeds. Its realtime segments are
// replaced by the sequence's published segments, fetched from deep storage
// and served until a historical loads them; when they cannot be had, the
// realtime segments are withdrawn (the publishing replica's worker and the
// historicals serve the rows).
func (k *kafkaTask) yield(ctx context.Context, c *ingest.Cluster, env middlemanager.Env, taskID string, rt *realtime) (middlemanager.Report, error) {
	env.Logf("A replica of sequence %s published the records from offsets %s first; stopping without publishing", k.seq, k.start.MetadataJSON())
	dir := filepath.Join(env.Dir(), "replica")
	served, err := k.replicaSegments(ctx, c, dir, rt)
	switch {
	case err != nil:
		env.Logf("Cannot serve the published segments of sequence %s: %v", k.seq, err)
		rt.withdraw()
	case rt.handOff(k.spec.DataSource, served):
	default:
		rt.withdraw()
	}
	os.RemoveAll(dir) // empty after a hand-off: the worker took the files
	return nativebatch.MakeReport(taskID, "COMPLETED", nativebatch.RowStats{}, nil, false, 0, 0), nil
}

// replicaSegments downloads into dir the used segments the task's sequence
// published in the time chunks of its realtime segments: their files are
// stored under the publishing task's id (publisher.upload), which starts with
// the sequence's name. None when the task serves no realtime segments.
func (k *kafkaTask) replicaSegments(ctx context.Context, c *ingest.Cluster, dir string, rt *realtime) ([]middlemanager.Served, error) {
	if rt == nil || len(rt.hydrants) == 0 {
		return nil, nil
	}
	span := interval.Interval{}
	for i, s := range servedSet(rt.hydrants) {
		iv := s.Segment.Interval
		if i == 0 {
			span = iv
			continue
		}
		span.Start, span.End = min(span.Start, iv.Start), max(span.End, iv.End)
	}
	used, err := c.UsedSegments(ctx, k.spec.DataSource, span)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []middlemanager.Served
	for _, seg := range used {
		if !strings.Contains(deep.FileKey(string(seg.LoadSpec)), "/"+k.seq+"_") {
			continue
		}
		var ls deep.LoadSpec
		if err := json.Unmarshal([]byte(seg.LoadSpec), &ls); err != nil {
			return nil, err
		}
		file := filepath.Join(dir, strconv.Itoa(len(out))+".seg")
		if err := c.Storage.Get(ctx, ls, file); err != nil {
			return nil, err
		}
		out = append(out, middlemanager.Served{Segment: seg, Path: file})
	}
	return out, nil
}
