package streaming

import (
	"context"
	"maps"
	"strconv"
	"time"

	"strata/fsm"
)

// The lag a status shows is one sample: the tasks' positions and the stored
// offsets are read from the FSM first, the latest offsets fetched from Kafka
// after. A task's position is never past the end of the log when it reports
// it, and the end only grows, so no task is ever past the latest offsets of
// its sample; every lag of the report (per task, minimum, aggregate) is
// computed from the same sample. Each run takes one, and a status request
// takes a new one when the last is older than Manager.LagMaxAge, so the lag
// an operator or an alert sees is never a run period old.

// DefaultLagMaxAge is how old the lag of a status may be before a status
// request measures it anew.
const DefaultLagMaxAge = time.Second

const (
	// lagFetchTimeout bounds the Kafka request of a status request's
	// measurement: past it the status shows the last sample.
	lagFetchTimeout = 2 * time.Second
	// lagRetryAfter is how long status requests show the last sample after a
	// measurement failed, rather than each waiting for Kafka again.
	lagRetryAfter = 10 * time.Second
)

// offsetSample is one measurement of the stream's latest offsets and the
// positions of the supervisor's tasks.
type offsetSample struct {
	at      time.Time                  // when the latest offsets arrived; zero: no sample yet
	latest  map[int32]int64            // the stream's end offsets
	current map[string]map[int32]int64 // task id → next offsets to read, from its last progress report
	lag     map[int32]int64            // behind the furthest position known to be reached
	total   int64
}

// newOffsetSample computes the lags of latest offsets fetched after stored
// (the published offsets) and the tasks' positions were read. A partition's
// lag is measured from the furthest of its stored offset, the start offset
// of a task reading it and the position that task reported, as Druid does.
func newOffsetSample(at time.Time, latest, stored map[int32]int64, tasks []*supTask) offsetSample {
	smp := offsetSample{at: at, latest: latest, current: map[string]map[int32]int64{}, lag: make(map[int32]int64, len(latest))}
	base := maps.Clone(stored)
	if base == nil {
		base = map[int32]int64{}
	}
	reached := func(p int32, off int64) {
		if b, ok := base[p]; !ok || off > b {
			base[p] = off
		}
	}
	for _, t := range tasks {
		for p, off := range t.start {
			reached(p, off)
		}
		if t.current != nil {
			smp.current[t.id] = t.current
			for p, off := range t.current {
				reached(p, off)
			}
		}
	}
	for p, end := range latest {
		var l int64
		if off, ok := base[p]; ok {
			l = max(end-off, 0)
		}
		smp.lag[p] = l
		smp.total += l
	}
	return smp
}

// render sets the report's offsets and lags from the sample.
func (smp offsetSample) render(rep *supReport) {
	if smp.at.IsZero() {
		return
	}
	ts := smp.at.UTC().Format(supISOMillis)
	total := smp.total
	rep.Partitions = len(smp.latest)
	rep.LatestOffsets, rep.MinimumLag = supOffsetsJSONMap(smp.latest), supOffsetsJSONMap(smp.lag)
	rep.AggregateLag, rep.OffsetsLastUpdated = &total, &ts
}

// taskLag is a task's position in the sample and its lag behind the latest
// offsets; nil when the sample has no position of the task.
func (smp offsetSample) taskLag(id string) (current, lag map[string]int64) {
	cur, ok := smp.current[id]
	if !ok {
		return nil, nil
	}
	current, lag = supOffsetsJSONMap(cur), make(map[string]int64, len(cur))
	for p, off := range cur {
		if end, ok := smp.latest[p]; ok {
			lag[strconv.Itoa(int(p))] = max(end-off, 0)
		}
	}
	return current, lag
}

// lagStale reports whether a status request should measure the lag anew:
// after the first run, once the sample is older than maxAge, and not again
// soon after a measurement failed. Called with mu held.
func (s *supervisor) lagStale(now time.Time, maxAge time.Duration) bool {
	return s.runs > 0 && now.Sub(s.sample.at) > maxAge && now.Sub(s.lagFailed) > lagRetryAfter
}

// refreshLag measures the lag anew when the sample is older than maxAge.
// One measurement runs at a time; requests arriving meanwhile wait for it
// (or for ctx) and then use its sample.
func (s *supervisor) refreshLag(ctx context.Context, maxAge time.Duration) {
	if s.adm == nil {
		return // the spec does not parse: there is no stream to ask
	}
	s.mu.Lock()
	stale := s.lagStale(time.Now(), maxAge)
	s.mu.Unlock()
	if !stale {
		return
	}
	select {
	case s.measuring <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-s.measuring }()
	s.mu.Lock()
	if !s.lagStale(time.Now(), maxAge) { // measured while this one waited
		s.mu.Unlock()
		return
	}
	runs := s.runs
	tasks := make([]*supTask, len(s.repTask))
	for i, t := range s.repTask {
		tasks[i] = &supTask{id: t.id, group: t.group, start: t.start}
	}
	s.mu.Unlock()

	// Positions first, then the latest offsets.
	var metadata string
	s.m.ctl.ReadState(func(st *fsm.State) {
		metadata, _ = st.DataSourceMetadata(s.ds)
		for _, t := range tasks {
			if r, ok := st.Task(t.id); ok && r.Active() {
				if p, ok := ParseProgress(r.Report); ok {
					t.current = progressOffsets(p)
				}
			}
		}
	})
	fctx, cancel := context.WithTimeout(ctx, lagFetchTimeout)
	ends, err := s.listOffsets(fctx, false)
	cancel()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.lagFailed = now
			s.log.Warn("cannot measure the lag for a status; showing the last sample", "error", err)
		}
		return
	}
	if s.runs != runs {
		return // a run took a sample of its own tasks meanwhile
	}
	s.sample = newOffsetSample(now, ends, storedOffsets(metadata, s.spec.Topic), tasks)
}

// storedOffsets are the published offsets of the stream; none when the
// stored metadata is of another stream (the run reports that).
func storedOffsets(metadata, topic string) map[int32]int64 {
	o, err := ParseOffsets(metadata)
	if err != nil || (o.Stream != "" && o.Stream != topic) {
		return nil
	}
	return o.Partitions
}

// sampleTasks lists the tasks whose positions a run's sample reads: every
// group's and every task being stopped.
func (s *supervisor) sampleTasks() []*supTask {
	return s.allTasks()
}
