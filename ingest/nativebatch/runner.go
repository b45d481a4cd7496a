package nativebatch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"strata/ingest"
	"strata/ingest/input"
	"strata/ingest/middlemanager"
	"strata/ingest/msq/live"
	"strata/interval"
	"strata/props"
	"strata/segmeta"
)

var cluster ingest.ClusterSlot

// Configure sets the cluster access of native batch tasks from properties
// (the same ones SQL tasks use). They wait for segments to load only when the
// task sets awaitSegmentAvailabilityTimeoutMillis, as Druid does. host is
// the worker's, brokers its live brokers (ingest.ClusterSlot.Configure).
func Configure(p *props.Properties, host string, brokers func() []string) error {
	return cluster.Configure(p, host, brokers, false)
}

// Forget drops the cluster access of the worker at host (stopped).
func Forget(host string) { cluster.SetFor(host, nil) }

// SetCluster replaces the cluster access of native batch tasks.
func SetCluster(c *ingest.Cluster) {
	cluster.Set(c)
}

type runner struct{}

func init() {
	middlemanager.Register("index", runner{})
	middlemanager.Register("index_parallel", runner{})
}

// Validate implements middlemanager.Validator: it checks the whole spec, fills
// in the datasource and returns the intervals to lock.
func (runner) Validate(t *middlemanager.Task) ([]interval.Interval, error) {
	s, err := ParseSpec(t.Payload)
	if err != nil {
		return nil, err
	}
	if t.DataSource != "" && t.DataSource != s.DataSource {
		return nil, fmt.Errorf("%s task: dataSource %q differs from the dataSchema's %q", s.TaskType, t.DataSource, s.DataSource)
	}
	t.DataSource = s.DataSource
	return s.LockIntervals(), nil
}

// Report is the task's ingestionStatsAndErrors report payload.
type Report struct {
	IngestionState                string         `json:"ingestionState"`
	UnparseableEvents             map[string]any `json:"unparseableEvents"`
	RowStats                      map[string]any `json:"rowStats"`
	ErrorMsg                      *string        `json:"errorMsg"`
	SegmentAvailabilityConfirmed  bool           `json:"segmentAvailabilityConfirmed"`
	SegmentAvailabilityWaitTimeMs int64          `json:"segmentAvailabilityWaitTimeMs"`
	SegmentsPublished             int            `json:"segmentsPublished"`
}

// MakeReport renders Druid's ingestionStatsAndErrors report.
func MakeReport(taskID, state string, stats RowStats, err error, available bool, waitMs int64, published int) middlemanager.Report {
	r := Report{
		IngestionState:                state,
		UnparseableEvents:             map[string]any{},
		RowStats:                      map[string]any{"buildSegments": stats},
		SegmentAvailabilityConfirmed:  available,
		SegmentAvailabilityWaitTimeMs: waitMs,
		SegmentsPublished:             published,
	}
	if err != nil {
		msg := err.Error()
		r.ErrorMsg = &msg
	}
	b, _ := json.Marshal(map[string]any{"ingestionStatsAndErrors": map[string]any{
		"type": "ingestionStatsAndErrors", "taskId": taskID, "payload": r,
	}})
	return middlemanager.Report(b)
}

// Ingestion states of the report (Druid's IngestionState).
const (
	StateNotStarted       = "NOT_STARTED"
	StateBuildSegments    = "BUILD_SEGMENTS"
	StateAvailabilityWait = "SEGMENT_AVAILABILITY_WAIT"
	StateCompleted        = "COMPLETED"
)

// liveReport is the ingestionStatsAndErrors report of a task under way.
type liveReport struct {
	taskID string
	stats  LiveStats
	mu     sync.Mutex
	state  string
	waitAt time.Time // start of the wait for segments to load
	segs   int       // segments published
}

func (l *liveReport) set(state string, segs int) {
	l.mu.Lock()
	l.state, l.segs = state, segs
	if state == StateAvailabilityWait {
		l.waitAt = time.Now()
	}
	l.mu.Unlock()
}

// snapshot implements live.Snapshot: the report so far, keyed by the state,
// the row stats and the segments published (not the time waited).
func (l *liveReport) snapshot() ([]byte, string) {
	l.mu.Lock()
	state, segs, waitAt := l.state, l.segs, l.waitAt
	l.mu.Unlock()
	stats := l.stats.Snapshot()
	var waited int64
	if state == StateAvailabilityWait {
		waited = time.Since(waitAt).Milliseconds()
	}
	key := fmt.Sprintf("%s %+v %d", state, stats, segs)
	return MakeReport(l.taskID, state, stats, nil, false, waited, segs), key
}

// Run implements middlemanager.Runner: lock, build, publish, wait for load.
// While it runs it publishes the live report (ingestion state and row stats
// so far); the report of a failure is published too, as the worker keeps
// only the report of a task that succeeds.
func (runner) Run(ctx context.Context, t middlemanager.Task, env middlemanager.Env) (middlemanager.Report, error) {
	lr := &liveReport{taskID: t.ID, state: StateNotStarted}
	publish := func(ctx context.Context, b []byte) error { return env.PublishReport(ctx, middlemanager.Report(b)) }
	pub := live.Start(ctx, live.Period, lr.snapshot, publish, env.Logf)
	rep, err := run(ctx, t, env, lr)
	pub.Stop()
	if err != nil {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if perr := publish(pctx, rep); perr != nil {
			env.Logf("Publishing the final report: %v", perr)
		}
		cancel()
	}
	return rep, err
}

func run(ctx context.Context, t middlemanager.Task, env middlemanager.Env, lr *liveReport) (middlemanager.Report, error) {
	s, err := ParseSpec(t.Payload)
	if err != nil {
		return MakeReport(t.ID, StateNotStarted, RowStats{}, err, false, 0, 0), err
	}
	c := cluster.Get(env.Host())
	if c == nil {
		err := fmt.Errorf("native batch tasks are not configured on this worker (no deep storage)")
		return MakeReport(t.ID, StateNotStarted, RowStats{}, err, false, 0, 0), err
	}
	version := interval.FormatMillis(time.Now().UnixMilli())
	var locks []lockVersion
	for _, iv := range s.LockIntervals() {
		raw, err := env.Act(ctx, middlemanager.Action{Type: middlemanager.ActionLockAcquire, Interval: iv.String()})
		if err != nil {
			err = fmt.Errorf("lock %s of %s: %w", iv, s.DataSource, err)
			return MakeReport(t.ID, StateNotStarted, RowStats{}, err, false, 0, 0), err
		}
		var lock struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(raw, &lock) == nil && lock.Version != "" {
			locks = append(locks, lockVersion{iv, lock.Version})
		}
	}
	if len(locks) > 0 {
		version = locks[0].version
	}
	env.Logf("Running %s task %s for dataSource[%s], version %s", s.TaskType, t.ID, s.DataSource, version)
	lr.set(StateBuildSegments, 0)
	segs, stats, err := Build(ctx, s, BuildOptions{
		Version:  version,
		TempDir:  filepath.Join(env.Dir(), "build"),
		Uploader: c.Uploader(),
		Logf:     env.Logf,
		Live:     &lr.stats,
	})
	if err != nil {
		env.Logf("Build failed: %v", err)
		return MakeReport(t.ID, StateBuildSegments, stats, err, false, 0, 0), err
	}
	// Each segment takes the version of the lock holding its chunk, so that
	// it overshadows what that chunk held before.
	setLockVersions(segs, locks)
	env.Logf("Processed %d rows (%d thrown away, %d unparseable) into %d segments", stats.Processed, stats.ThrownAway, stats.Unparseable, len(segs))
	if s.AppendToExisting {
		if err := placeAppend(ctx, c, s.DataSource, segs); err != nil {
			return MakeReport(t.ID, StateBuildSegments, stats, err, false, 0, 0), err
		}
	}
	publishing := time.Now()
	if err := c.Publish(ctx, s.DataSource, segs); err != nil {
		env.Logf("Publish failed: %v", err)
		return MakeReport(t.ID, StateBuildSegments, stats, err, false, 0, 0), err
	}
	env.Published(s.DataSource, segs, publishing)
	for _, sg := range segs {
		env.Logf("Published segment[%s]", sg.ID())
	}
	timeout := awaitTimeout(t.Payload, c.LoadTimeout)
	available, waited := false, int64(0)
	if timeout > 0 && len(segs) > 0 {
		lr.set(StateAvailabilityWait, len(segs))
		start := time.Now()
		werr := c.WaitLoaded(ctx, segs, timeout)
		waited = time.Since(start).Milliseconds()
		env.HandedOff(ctx, s.DataSource, len(segs), werr)
		available = werr == nil
		if werr != nil {
			env.Logf("Segments not confirmed available: %v", werr)
		}
	}
	return MakeReport(t.ID, StateCompleted, stats, nil, available, waited, len(segs)), nil
}

type lockVersion struct {
	iv      interval.Interval
	version string
}

// setLockVersions gives each segment the version of the lock that contains
// its interval (deep-storage paths keep the build version; only the
// metadata changes).
func setLockVersions(segs []*segmeta.DataSegment, locks []lockVersion) {
	for _, sg := range segs {
		for _, l := range locks {
			if l.iv.Start <= sg.Interval.Start && sg.Interval.End <= l.iv.End {
				sg.Version = l.version
				break
			}
		}
	}
}

// awaitTimeout reads tuningConfig.awaitSegmentAvailabilityTimeoutMillis;
// Druid's default 0 does not wait.
func awaitTimeout(payload []byte, def time.Duration) time.Duration {
	var t struct {
		Spec struct {
			TuningConfig struct {
				Await *int64 `json:"awaitSegmentAvailabilityTimeoutMillis"`
			} `json:"tuningConfig"`
		} `json:"spec"`
	}
	if json.Unmarshal(payload, &t) == nil && t.Spec.TuningConfig.Await != nil {
		return time.Duration(*t.Spec.TuningConfig.Await) * time.Millisecond
	}
	return def
}

// placeAppend moves appended segments into the chunks that already exist.
func placeAppend(ctx context.Context, c *ingest.Cluster, ds string, segs []*segmeta.DataSegment) error {
	byChunk := map[interval.Interval][]*segmeta.DataSegment{}
	for _, s := range segs {
		byChunk[s.Interval] = append(byChunk[s.Interval], s)
	}
	for iv, mine := range byChunk {
		existing, err := c.UsedSegments(ctx, ds, iv)
		if err != nil {
			return err
		}
		PlaceAppend(mine, existing)
	}
	return nil
}

// PlaceAppend renumbers the new segments of one time chunk so that they
// extend the chunk's newest existing version exactly covering it: they take
// its version and the partition numbers after its highest one, keeping its
// core partition count. Without such segments the new ones stay as they are
// (their own version, partitions 0..n-1). Deep-storage paths are unaffected.
func PlaceAppend(mine, existing []*segmeta.DataSegment) {
	if len(mine) == 0 {
		return
	}
	iv := mine[0].Interval
	var version string
	for _, e := range existing {
		if e.Interval == iv && !e.IsTombstone() && e.Version > version {
			version = e.Version
		}
	}
	if version == "" {
		return
	}
	maxPart, core := int32(-1), int32(0)
	for _, e := range existing {
		if e.Interval == iv && e.Version == version {
			maxPart = max(maxPart, e.ShardSpec.PartitionNum)
			core = max(core, e.ShardSpec.CorePartitions)
		}
	}
	for i, s := range mine {
		s.Version = version
		s.ShardSpec = segmeta.NumberedShard(maxPart+1+int32(i), core)
	}
}

// InputSources returns the input source of an index or index_parallel task.
func (runner) InputSources(t middlemanager.Task) ([]input.Source, error) {
	s, err := ParseSpec(t.Payload)
	if err != nil {
		return nil, err
	}
	return []input.Source{s.Source}, nil
}
