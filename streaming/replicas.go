package streaming

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
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
// partitions from the same offsets; their ids are <sequence>_<replica
// number>_<random>. Each reads for taskDuration and may publish; the
// publish's compare-and-swap on the stored offsets lets the first one in and
// refuses the others, so exactly one publishes.
//
// The replicas stop reading together and end at the same offsets, so that
// they hold the same rows when one publishes (Druid's supervisor pauses them
// and sets their end offsets; here they settle it among themselves through
// the overlord). The first to stop (its taskDuration is over, or it is
// stopped) reports its position marked stopped; the others see that within
// replicaCheckPeriod and stop too; each then waits until none of them still
// reads and reads up to the furthest position any reported (agreeEnd,
// readTo). Whichever publishes thus covers every record any replica read
// and served, and a broker that read a replica ahead of the publisher loses
// no row at the hand-off.
//
// Replica 0 publishes when it is done; a higher one that is done waits while
// a lower one still runs and publishes only when none does. A replica stopped early
// (the supervisor suspends) while a lower one runs leaves the publish to it;
// one whose middle manager stops leaves it to any other replica still
// running.
//
// A replica that sees the stored offsets of its partitions move past its
// start offsets (the publish of another replica) stops reading and yields:
// it publishes nothing, and serves the published segments in place of its
// realtime ones until a historical loads them, as the publishing replica
// does, so that losing either middle manager loses no queryable row.

// replicaCheckPeriod is how often a reading replica asks whether another
// replica of its sequence published.
var replicaCheckPeriod = 500 * time.Millisecond

// watchReplicas checks, while ctx lasts, whether another replica of the
// task's sequence published, and if so calls stop; the result reports
// whether it did, once ctx has ended. The first check is made before the
// task reads: a replica started in place of a lost one after the sequence
// was published serves nothing. A task without replicas is not watched (a
// leader's check per half second and task would be wasted).
func (k *kafkaTask) watchReplicas(ctx context.Context, env middlemanager.Env, stop func()) (yielded func() bool) {
	var lost atomic.Bool
	if k.seq == "" || k.replicas == 1 {
		return lost.Load
	}
	// A failed check changes nothing: the publish settles it anyway.
	if ok, _ := k.superseded(ctx, env); ok {
		lost.Store(true)
		stop()
		return lost.Load
	}
	if k.siblingStopped(ctx, env) {
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
			if k.siblingStopped(ctx, env) {
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

// replicaIndex is the replica number of task id of sequence seq.
func replicaIndex(seq, id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, seq+"_")
	if !ok || seq == "" {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "_")
	n, err := strconv.Atoi(num)
	return n, ok && err == nil && n >= 0
}

// awaitLowerReplicas decides, once reading ended, whether this replica
// yields rather than publishes: when another replica published, when its
// worker stops while another replica runs, or when a lower replica runs and
// this one was stopped early; done reading on its own, it waits for the
// running lower replicas to publish or end. A failed check lets it publish:
// the offsets check settles who wins anyway.
func (k *kafkaTask) awaitLowerReplicas(ctx context.Context, env middlemanager.Env, stopped, workerStops bool) bool {
	if k.replica < 0 || k.replicas == 1 || (k.replica == 0 && !workerStops) {
		return false
	}
	waiting := false
	for {
		if lost, err := k.superseded(ctx, env); lost || err != nil {
			return lost
		}
		below := k.replica
		if workerStops {
			below = math.MaxInt // any other replica carries on
		}
		lower, err := k.replicaRuns(ctx, env, below)
		if err != nil || !lower {
			return false
		}
		if stopped {
			env.Logf("Stopped while another replica of sequence %s that publishes before this one runs: leaving the publish to it", k.seq)
			return true
		}
		if !waiting {
			env.Logf("Waiting for a lower replica of sequence %s to publish", k.seq)
			waiting = true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(replicaCheckPeriod):
		}
	}
}

// replicaGroup is what the overlord says of the other tasks of a task's
// group: those running, and the reports of those running or recently ended.
type replicaGroup struct {
	Active  []string                   `json:"active"`
	Reports map[string]json.RawMessage `json:"reports"`
}

func (k *kafkaTask) group(ctx context.Context, env middlemanager.Env) (replicaGroup, error) {
	var g replicaGroup
	raw, err := env.Act(ctx, middlemanager.Action{Type: middlemanager.ActionGroupTasks})
	if err != nil {
		return g, err
	}
	err = json.Unmarshal(raw, &g)
	return g, err
}

// positions are the last reported positions of the other replicas of the
// task's sequence, by task id.
func (k *kafkaTask) positions(g replicaGroup) map[string]Progress {
	out := map[string]Progress{}
	for id, rep := range g.Reports {
		if _, ok := replicaIndex(k.seq, id); !ok {
			continue
		}
		if p, ok := ParseProgress(string(rep)); ok && p.Stream == k.topic {
			out[id] = p
		}
	}
	return out
}

// siblingStopped reports whether another replica of the sequence stopped
// reading: this one then stops too (Druid's supervisor pauses all replicas
// of a group when one's duration is over), so that they settle on one end.
func (k *kafkaTask) siblingStopped(ctx context.Context, env middlemanager.Env) bool {
	g, err := k.group(ctx, env)
	if err != nil {
		return false
	}
	for _, p := range k.positions(g) {
		if p.Stopped {
			return true
		}
	}
	return false
}

// agreeTimeout bounds how long a replica that stopped reading waits for the
// others of its sequence to stop: past it, one that does not answer is
// taken at its last reported position.
var agreeTimeout = time.Minute

// agreeEnd is where the replicas of the task's sequence end reading, given
// that this one stopped at own: it says so, waits until no other replica
// of the sequence still reads (each stops once it sees one stopped), and
// returns, partition by partition, the furthest position any replica
// reached (a lost one's last report included). Every replica then reads up
// to it, so whichever publishes covers every record any replica read and
// served: answers that read a replica ahead of the publisher do not lose
// rows at the hand-off. A task without replicas ends where it stopped.
//
// A replica whose worker stops (leaving) does not make the others stop: it
// reports its position unmarked, for them to read past, and waits for no
// one (it publishes only when no other replica runs).
func (k *kafkaTask) agreeEnd(ctx context.Context, env middlemanager.Env, prog *progressReporter, own Offsets, n int64, leaving bool) (Offsets, error) {
	if k.seq == "" || k.replicas == 1 {
		return own, nil
	}
	if err := prog.position(ctx, own, n, !leaving); err != nil {
		return own, fmt.Errorf("reporting where reading stopped: %w", err)
	}
	deadline := time.Now().Add(agreeTimeout)
	waiting := false
	for {
		g, err := k.group(ctx, env)
		if err != nil {
			return own, fmt.Errorf("reading the positions of the other replicas: %w", err)
		}
		pos := k.positions(g)
		reading := false
		for _, id := range g.Active {
			if _, ok := replicaIndex(k.seq, id); ok && !pos[id].Stopped {
				reading = true
			}
		}
		if !reading || leaving || time.Now().After(deadline) {
			if reading && !leaving {
				env.Logf("Other replicas of sequence %s still read after %s: taking their last reported positions", k.seq, agreeTimeout)
			}
			end := Offsets{Stream: own.Stream, Partitions: maps.Clone(own.Partitions)}
			for _, p := range pos {
				for part, off := range progressOffsets(p) {
					if cur, ok := end.Partitions[part]; ok && off > cur {
						end.Partitions[part] = off
					}
				}
			}
			return end, nil
		}
		if !waiting {
			env.Logf("Waiting for the other replicas of sequence %s to stop reading", k.seq)
			waiting = true
		}
		select {
		case <-ctx.Done():
			return own, ctx.Err()
		case <-time.After(replicaCheckPeriod):
		}
	}
}

// replicaRuns reports whether another replica of the task's sequence with a
// number below below runs.
func (k *kafkaTask) replicaRuns(ctx context.Context, env middlemanager.Env, below int) (bool, error) {
	group, err := k.group(ctx, env)
	if err != nil {
		return false, err
	}
	for _, id := range group.Active {
		if i, ok := replicaIndex(k.seq, id); ok && i < below {
			return true, nil
		}
	}
	return false, nil
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

// yield ends a replica that leaves the publish of its records to another
// replica of its sequence (which published them, or will): it publishes
// nothing and succeeds. Its realtime segments are replaced by the sequence's
// published segments, fetched from deep storage and served until a
// historical loads them; when there are none (yet), the realtime segments are
// withdrawn (the publishing replica's worker and the historicals serve the
// rows).
func (k *kafkaTask) yield(ctx context.Context, c *ingest.Cluster, env middlemanager.Env, taskID string, rt *realtime) (middlemanager.Report, error) {
	env.Logf("Leaving the publish of the records of sequence %s from offsets %s to another replica; ending without publishing", k.seq, k.start.MetadataJSON())
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
