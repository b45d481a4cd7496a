package streaming

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strata/commands"
	"strata/ingest"
	"strata/ingest/input"
	"strata/ingest/middlemanager"
	"strata/ingest/nativebatch"
	"strata/interval"
	"strata/props"
	"strata/segmeta"
	"strata/storage/deep"
)

var cluster ingest.ClusterSlot

// Configure sets the cluster access of index_kafka tasks from properties (the
// same ones native batch and SQL tasks use). Tasks never wait for their
// segments to load: the next task must start reading at once. host is the
// worker's, brokers its live brokers (ingest.ClusterSlot.Configure).
func Configure(p *props.Properties, host string, brokers func() []string) error {
	return cluster.Configure(p, host, brokers, false)
}

// Forget drops the cluster access of the worker at host (stopped).
func Forget(host string) { cluster.SetFor(host, nil) }

// SetCluster replaces the cluster access of index_kafka tasks.
func SetCluster(c *ingest.Cluster) { cluster.Set(c) }

// TaskType is the task type of Kafka reading tasks.
const TaskType = "index_kafka"

// defaultLockTimeout is how long a task waits for a time chunk another task
// group holds (Druid's taskLockTimeout default).
const defaultLockTimeout = 5 * time.Minute

// publishTimeout bounds building and publishing after reading stopped, also
// when the stop came from a cancelled context (a graceful stop).
const publishTimeout = 10 * time.Minute

type kafkaRunner struct{}

func init() { middlemanager.Register(TaskType, kafkaRunner{}) }

// kafkaTask is a parsed index_kafka task payload.
type kafkaTask struct {
	spec      *nativebatch.Spec // dataSchema + inputFormat + tuning; Source is set when reading is done
	topic     string
	bootstrap []string
	start     Offsets
	// seq is ioConfig.baseSequenceName, shared by the replicas of one
	// sequence of a task group ("" for a task no supervisor made); replica
	// is the task's number among them (replicas.go; -1 when it has none).
	seq          string
	replica      int
	replicas     int // ioConfig.replicas of the supervisor (0: not said)
	taskDuration time.Duration
	lockTimeout  time.Duration
	// times bounds the row timestamps kept (ioConfig minimumMessageTime and
	// maximumMessageTime); spec.Intervals is narrowed to them.
	times MessageTimes
	// realtimePeriod is how often rows read since the last time become
	// queryable before they are published (realtime.go).
	realtimePeriod time.Duration
	// maxSavedParseExceptions is how many parse exceptions the task keeps
	// for the supervisor's /parseErrors (tuningConfig; Druid's default 0).
	maxSavedParseExceptions int
}

type rawTask struct {
	Type         string          `json:"type"`
	DataSource   string          `json:"dataSource"`
	DataSchema   json.RawMessage `json:"dataSchema"`
	TuningConfig json.RawMessage `json:"tuningConfig"`
	IOConfig     *struct {
		Type                 string          `json:"type"`
		Topic                string          `json:"topic"`
		Stream               string          `json:"stream"`
		ConsumerProperties   map[string]any  `json:"consumerProperties"`
		InputFormat          json.RawMessage `json:"inputFormat"`
		StartSequenceNumbers json.RawMessage `json:"startSequenceNumbers"`
		BaseSequenceName     string          `json:"baseSequenceName"`
		Replicas             int             `json:"replicas"`
		TaskDuration         *string         `json:"taskDuration"`
		MinimumMessageTime   json.RawMessage `json:"minimumMessageTime"`
		MaximumMessageTime   json.RawMessage `json:"maximumMessageTime"`
	} `json:"ioConfig"`
	Context struct {
		TaskLockTimeout *int64 `json:"taskLockTimeout"`
		RealtimePeriod  *int64 `json:"realtimePeriod"`
	} `json:"context"`
}

// parseTask reads an index_kafka payload (see the package's contract).
func parseTask(payload []byte) (*kafkaTask, error) {
	var r rawTask
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, fmt.Errorf("invalid index_kafka task JSON: %v", err)
	}
	if r.Type != TaskType {
		return nil, fmt.Errorf("task type %q is not %s", r.Type, TaskType)
	}
	s, err := nativebatch.ParseDataSchema(r.DataSchema)
	if err != nil {
		return nil, fmt.Errorf("index_kafka task: %v", err)
	}
	if r.DataSource != "" && r.DataSource != s.DataSource {
		return nil, fmt.Errorf("index_kafka task: dataSource %q differs from the dataSchema's %q", r.DataSource, s.DataSource)
	}
	_, tuning, err := parseTuning(r.TuningConfig)
	if err != nil {
		return nil, fmt.Errorf("index_kafka task: %v", err)
	}
	s.TaskType = TaskType
	s.MaxRowsPerSegment = tuning.MaxRowsPerSegment
	s.MaxParseExceptions = tuning.MaxParseExceptions
	io := r.IOConfig
	if io == nil {
		return nil, fmt.Errorf("index_kafka task: ioConfig is required")
	}
	if io.Type != "" && io.Type != "kafka" {
		return nil, fmt.Errorf("index_kafka task: ioConfig.type must be \"kafka\", got %q", io.Type)
	}
	k := &kafkaTask{spec: s, topic: io.Topic, seq: io.BaseSequenceName, replicas: io.Replicas, taskDuration: time.Hour, lockTimeout: defaultLockTimeout, realtimePeriod: defaultRealtimePeriod,
		maxSavedParseExceptions: tuning.MaxSavedParseExceptions}
	if k.topic == "" {
		k.topic = io.Stream
	}
	if k.topic == "" {
		return nil, fmt.Errorf("index_kafka task: ioConfig.topic is required")
	}
	bs, _ := io.ConsumerProperties["bootstrap.servers"].(string)
	for _, b := range strings.Split(bs, ",") {
		if b = strings.TrimSpace(b); b != "" {
			k.bootstrap = append(k.bootstrap, b)
		}
	}
	if len(k.bootstrap) == 0 {
		return nil, fmt.Errorf("index_kafka task: ioConfig.consumerProperties must contain bootstrap.servers")
	}
	// The task is what connects: checked whether it came from a supervisor
	// or was submitted on its own.
	if err := input.ActivePolicy().CheckKafka(context.Background(), io.ConsumerProperties); err != nil {
		return nil, fmt.Errorf("index_kafka task: ioConfig.%w", err)
	}
	if len(io.InputFormat) == 0 || isNull(io.InputFormat) {
		return nil, fmt.Errorf("index_kafka task: ioConfig.inputFormat is required")
	}
	if s.Format, err = input.ParseFormat(io.InputFormat); err != nil {
		return nil, fmt.Errorf("index_kafka task: ioConfig.inputFormat: %v", err)
	}
	if k.start, err = parseSequenceNumbers(io.StartSequenceNumbers); err != nil {
		return nil, fmt.Errorf("index_kafka task: %v", err)
	}
	if k.start.Stream != "" && k.start.Stream != k.topic {
		return nil, fmt.Errorf("index_kafka task: startSequenceNumbers are for stream %q, not topic %q", k.start.Stream, k.topic)
	}
	k.start.Stream = k.topic
	if len(k.start.Partitions) == 0 {
		return nil, fmt.Errorf("index_kafka task: startSequenceNumbers name no partition")
	}
	if io.TaskDuration != nil {
		if k.taskDuration, err = ParseDuration(*io.TaskDuration); err != nil {
			return nil, fmt.Errorf("index_kafka task: ioConfig.taskDuration: %v", err)
		}
	}
	if k.times, err = parseMessageTimes(io.MinimumMessageTime, io.MaximumMessageTime); err != nil {
		return nil, fmt.Errorf("index_kafka task: %v", err)
	}
	// Rows outside the bounds are thrown away by the build (published and
	// realtime alike) and counted as thrownAway.
	s.Intervals = k.times.restrict(s.Intervals)
	if ms := r.Context.TaskLockTimeout; ms != nil {
		if *ms < 0 {
			return nil, fmt.Errorf("index_kafka task: context.taskLockTimeout must not be negative")
		}
		k.lockTimeout = time.Duration(*ms) * time.Millisecond
	}
	if ms := r.Context.RealtimePeriod; ms != nil {
		if *ms <= 0 {
			return nil, fmt.Errorf("index_kafka task: context.realtimePeriod must be positive")
		}
		k.realtimePeriod = time.Duration(*ms) * time.Millisecond
	}
	return k, nil
}

// Validate implements middlemanager.Validator: it checks the payload and
// fills in the datasource. The task takes no locks at submit time: it locks
// the time chunks it got rows for when it publishes.
func (kafkaRunner) Validate(t *middlemanager.Task) ([]interval.Interval, error) {
	k, err := parseTask(t.Payload)
	if err != nil {
		return nil, err
	}
	if t.DataSource != "" && t.DataSource != k.spec.DataSource {
		return nil, fmt.Errorf("index_kafka task: dataSource %q differs from the dataSchema's %q", t.DataSource, k.spec.DataSource)
	}
	t.DataSource = k.spec.DataSource
	return nil, nil
}

// Run implements middlemanager.Runner: read the partitions from the start
// offsets for taskDuration (or until ctx is cancelled: a graceful stop), then
// build, lock, upload and publish the segments with the offsets.
func (kafkaRunner) Run(ctx context.Context, t middlemanager.Task, env middlemanager.Env) (middlemanager.Report, error) {
	fail := func(stats nativebatch.RowStats, err error) (middlemanager.Report, error) {
		env.Logf("index_kafka task failed: %v", err)
		return nativebatch.MakeReport(t.ID, "BUILD_SEGMENTS", stats, err, false, 0, 0), err
	}
	k, err := parseTask(t.Payload)
	if err != nil {
		return fail(nativebatch.RowStats{}, err)
	}
	k.replica = -1
	if i, ok := replicaIndex(k.seq, t.ID); ok {
		k.replica = i
	}
	c := cluster.Get(env.Host())
	if c == nil {
		return fail(nativebatch.RowStats{}, fmt.Errorf("index_kafka tasks are not configured on this worker (no deep storage)"))
	}
	spool := filepath.Join(env.Dir(), "records")
	defer os.Remove(spool)
	prog := &progressReporter{env: env, taskID: t.ID, period: progressPeriod}
	// Rows read become queryable every realtimePeriod, before they are published.
	rt := newRealtime(k, t.ID, spool, filepath.Join(env.Dir(), "realtime"), env)
	if rt != nil {
		prog.rows = rt.rowProgress
		if k.seq != "" && k.replicas != 1 {
			rt.beforeServe = prog.served
		}
	}
	// A replica of the sequence may publish first: reading then stops.
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	yielded := k.watchReplicas(readCtx, env, stopReading)
	end, read, err := k.read(readCtx, spool, env.Logf, prog.update, rt)
	stopReading()
	lost := yielded()
	rt.stop() // the hydrants stay served until the publish settles
	// Reading stopped; what was read is published even when ctx was cancelled.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if !lost && err == nil {
		// Replicas end where the furthest of them stopped.
		var to Offsets
		if to, err = k.agreeEnd(pctx, env, prog, end, read, middlemanager.Stopping(ctx)); err == nil && !reached(end, to) {
			var more int64
			end, more, err = k.readTo(pctx, spool, end, to)
			read += more
			env.Logf("Read up to the furthest replica (%d more records); next offsets %s", more, end.MetadataJSON())
		}
	}
	if lost || (err == nil && k.awaitLowerReplicas(pctx, env, ctx.Err() != nil, middlemanager.Stopping(ctx))) {
		rep, err := k.yield(pctx, c, env, t.ID, rt)
		return withPosition(rep, (&progressReporter{taskID: t.ID}).report(end, read, nativebatch.RowStats{}, nil, false)), err
	}
	if err != nil {
		rt.withdraw()
		return fail(nativebatch.RowStats{}, err)
	}
	p := &publisher{k: k, c: c, env: env, taskID: t.ID, spool: spool, beforePublish: rt.hold}
	stats, published, err := p.buildAndPublish(pctx, read, end)
	if err != nil {
		os.RemoveAll(p.held)
		if ingest.IsPublishConflict(err) && k.seq != "" && k.replicas != 1 {
			if lost, _ := k.superseded(pctx, env); lost {
				rep, err := k.yield(pctx, c, env, t.ID, rt)
				return withPosition(rep, (&progressReporter{taskID: t.ID}).report(end, read, nativebatch.RowStats{}, nil, false)), err
			}
		}
		rt.withdraw()
		return fail(stats, err)
	}
	env.Logf("Published %d segments with offsets %s", published, end.MetadataJSON())
	// The published segments replace the hydrants, served from their local
	// files until a historical loads them; the worker then owns the files.
	if rt.handOff(k.spec.DataSource, p.handoff) {
		os.Remove(p.held) // empty now
	} else {
		os.RemoveAll(p.held)
	}
	return nativebatch.MakeReport(t.ID, "COMPLETED", stats, nil, false, 0, published), nil
}

// read consumes the task's partitions from the start offsets into the spool
// file, one record value per line, until taskDuration has passed or ctx ends.
// It returns the next offset of every partition and how many records it read;
// progress hears the position after every fetch.
// With rt set, reading also hands the spool to rt at least every period.
func (k *kafkaTask) read(ctx context.Context, spool string, logf func(string, ...any), progress func(context.Context, Offsets, int64), rt *realtime) (Offsets, int64, error) {
	next := Offsets{Stream: k.topic, Partitions: map[int32]int64{}}
	assign := map[int32]kgo.Offset{}
	for p, off := range k.start.Partitions {
		next.Partitions[p] = off
		assign[p] = kgo.NewOffset().At(off)
	}
	f, err := os.Create(spool)
	if err != nil {
		return next, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<16)
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(k.bootstrap...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.topic: assign}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// A start offset that no longer exists is an error, not a silent jump.
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
	)
	if err != nil {
		return next, 0, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	logf("Reading topic %s partitions %s for %s", k.topic, next.MetadataJSON(), k.taskDuration)
	if minTime, maxTime := k.times.payload(); minTime != nil || maxTime != nil {
		logf("Throwing away rows with timestamps before %s or after %s", orNone(minTime), orNone(maxTime))
	}
	rctx, stop := context.WithTimeout(ctx, k.taskDuration)
	defer stop()
	var n, written int64 // records read, spool bytes written
	// Quiet partitions must delay neither serving the last records read nor
	// reporting the position they reached (a report due after the last fetch
	// goes out once the poll returns): the poll waits at most one period.
	wait := progressPeriod
	if rt != nil {
		wait = min(wait, rt.period)
	}
	for rctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(rctx, wait)
		fetches := cl.PollFetches(pctx)
		pcancel()
		var ferr error
		fetches.EachError(func(topic string, p int32, err error) {
			if ferr == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("reading %s partition %d: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return next, n, ferr
		}
		var werr error
		fetches.EachRecord(func(r *kgo.Record) {
			if werr != nil {
				return
			}
			if cur, ok := next.Partitions[r.Partition]; !ok || r.Offset < cur {
				return // not ours, or already read
			}
			next.Partitions[r.Partition] = r.Offset + 1
			n++
			if len(r.Value) == 0 {
				return // a tombstone holds no row
			}
			w.Write(r.Value)
			written += int64(len(r.Value))
			if r.Value[len(r.Value)-1] != '\n' {
				werr = w.WriteByte('\n')
				written++
			}
		})
		if werr == nil {
			werr = rt.maybeBuild(written, next, w.Flush)
		}
		if werr != nil {
			return next, n, werr
		}
		if progress != nil {
			progress(ctx, next, n)
		}
	}
	if err := w.Flush(); err != nil {
		return next, n, err
	}
	logf("Stopped reading after %d records; next offsets %s", n, next.MetadataJSON())
	return next, n, nil
}

// withPosition adds to the final report of a replica that yields where it
// stopped reading (the kafkaProgress of pos, not marked stopped: a replica
// that leaves does not make the others stop): the final report replaces the
// live one, and the other replicas of its sequence may still be settling
// where to end (agreeEnd).
func withPosition(rep, pos middlemanager.Report) middlemanager.Report {
	var m map[string]json.RawMessage
	var p map[string]json.RawMessage
	if json.Unmarshal(rep, &m) != nil || json.Unmarshal(pos, &p) != nil || m == nil {
		return rep
	}
	m[ProgressReportType] = p[ProgressReportType]
	b, err := json.Marshal(m)
	if err != nil {
		return rep
	}
	return b
}

// reached reports whether next is at or past to in every partition of to.
func reached(next, to Offsets) bool {
	for p, off := range to.Partitions {
		if next.Partitions[p] < off {
			return false
		}
	}
	return true
}

// readTo appends to the spool the records from offsets from up to (not
// including) offsets to, which another replica of the sequence read: they
// exist, so reading ends once every partition reaches its end (or ctx ends).
func (k *kafkaTask) readTo(ctx context.Context, spool string, from, to Offsets) (Offsets, int64, error) {
	next := Offsets{Stream: from.Stream, Partitions: maps.Clone(from.Partitions)}
	assign := map[int32]kgo.Offset{}
	for p, off := range to.Partitions {
		if next.Partitions[p] < off {
			assign[p] = kgo.NewOffset().At(next.Partitions[p])
		}
	}
	f, err := os.OpenFile(spool, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return next, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<16)
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(k.bootstrap...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.topic: assign}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
	)
	if err != nil {
		return next, 0, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	var n int64
	for !reached(next, to) {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return next, n, fmt.Errorf("reading up to the furthest replica's offsets %s: %w", to.MetadataJSON(), ctx.Err())
		}
		var ferr error
		fetches.EachError(func(topic string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("reading %s partition %d: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return next, n, ferr
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset < next.Partitions[r.Partition] || r.Offset >= to.Partitions[r.Partition] {
				return // read already, or past the end
			}
			next.Partitions[r.Partition] = r.Offset + 1
			n++
			if len(r.Value) > 0 {
				w.Write(r.Value)
				if r.Value[len(r.Value)-1] != '\n' {
					w.WriteByte('\n')
				}
			}
		})
	}
	return next, n, w.Flush()
}

// publisher builds and publishes what one task read.
type publisher struct {
	k      *kafkaTask
	c      *ingest.Cluster
	env    middlemanager.Env
	taskID string
	spool  string
	held   string // built segment files waiting for their final metadata
	// handoff lists the published segments with their held files, for the
	// worker to serve until a historical loads them.
	handoff []middlemanager.Served
	// beforePublish runs right before the publish command: it holds reads
	// of the realtime rows until they are handed off (realtime.hold).
	beforePublish func()
}

// buildAndPublish turns the spooled records into segments, locks their time
// chunks, appends them to what the chunks hold, uploads them and publishes
// them with the offsets in one compare-and-swap.
func (p *publisher) buildAndPublish(ctx context.Context, read int64, end Offsets) (nativebatch.RowStats, int, error) {
	var stats nativebatch.RowStats
	if read == 0 {
		// Nothing moved: no segments, and the offsets stay as they are.
		return stats, 0, nil
	}
	p.held = p.p("held") // the caller removes it
	segs, stats, err := p.build(ctx)
	if err != nil {
		return stats, 0, err
	}
	files := make([]string, len(segs))
	for i, sg := range segs {
		if files[i], err = heldPath(sg); err != nil {
			return stats, 0, err
		}
	}
	chunks := chunkIntervals(segs)
	locked, err := p.lockChunks(ctx, chunks)
	if err != nil {
		return stats, 0, err
	}
	existing, err := p.existing(ctx, locked)
	if err != nil {
		return stats, 0, err
	}
	place(segs, locked, existing)
	var uploaded []deep.LoadSpec
	for _, sg := range segs {
		ls, err := p.upload(ctx, sg)
		if err != nil {
			p.deleteUploaded(uploaded)
			return stats, 0, err
		}
		uploaded = append(uploaded, ls)
	}
	if p.beforePublish != nil {
		p.beforePublish()
	}
	publishing := time.Now()
	n, err := p.c.PublishMetadata(ctx, p.k.spec.DataSource, segs, p.k.start.MetadataJSON(), end.MetadataJSON(), commands.MetadataModeKafka, p.taskID)
	if err != nil {
		// The command may have been applied although its answer was lost (a
		// leader lost after committing it; a retry then meets the moved
		// offsets): the stored segments tell. Files are deleted only when the
		// publish surely did not happen.
		done, verr := p.published(ctx, segs)
		switch {
		case verr != nil:
			return stats, 0, fmt.Errorf("publish of %d segments: %w; whether it happened is unknown (%v), so their files are kept", len(segs), err, verr)
		case done:
			p.env.Logf("Publish answered %v, but its segments are stored: it happened", err)
			p.env.Published(p.k.spec.DataSource, segs, publishing)
			p.handoff = servedFiles(segs, files)
			return stats, len(segs), nil
		}
		p.deleteUploaded(uploaded)
		if ingest.IsPublishConflict(err) {
			return stats, 0, fmt.Errorf("the stored offsets of %s are no longer this task's start offsets %s (another task published first); nothing was published: %w",
				p.k.spec.DataSource, p.k.start.MetadataJSON(), err)
		}
		return stats, 0, err
	}
	p.env.Published(p.k.spec.DataSource, segs, publishing)
	if _, err := p.env.Act(ctx, middlemanager.Action{Type: middlemanager.ActionLockRelease}); err != nil {
		p.env.Logf("Releasing locks: %v", err) // they lapse when the task ends anyway
	}
	p.handoff = servedFiles(segs, files)
	return stats, n, nil
}

// servedFiles pairs published segments with their local files.
func servedFiles(segs []*segmeta.DataSegment, files []string) []middlemanager.Served {
	out := make([]middlemanager.Served, len(segs))
	for i, sg := range segs {
		out[i] = middlemanager.Served{Segment: sg, Path: files[i]}
	}
	return out
}

func (p *publisher) p(name string) string { return filepath.Join(p.env.Dir(), name) }

// build runs the native batch pipeline over the spooled records. Segment
// files are held locally until they are placed and uploaded.
func (p *publisher) build(ctx context.Context) ([]*segmeta.DataSegment, nativebatch.RowStats, error) {
	s := *p.k.spec
	s.Source = &input.LocalSource{Files: []string{p.spool}}
	if err := os.MkdirAll(p.held, 0o755); err != nil {
		return nil, nativebatch.RowStats{}, err
	}
	segs, stats, err := nativebatch.Build(ctx, &s, nativebatch.BuildOptions{
		Version:  interval.FormatMillis(time.Now().UnixMilli()),
		TempDir:  p.p("build"),
		Uploader: holdUploader{dir: p.held},
		Logf:     p.env.Logf,
	})
	if err != nil {
		return nil, stats, err
	}
	p.env.Logf("Processed %d rows (%d thrown away, %d unparseable) into %d segments", stats.Processed, stats.ThrownAway, stats.Unparseable, len(segs))
	return segs, stats, nil
}

// lockChunks locks every chunk, waiting up to lockTimeout for chunks another
// task group holds; it returns the version of each lock it got.
func (p *publisher) lockChunks(ctx context.Context, chunks []interval.Interval) (map[interval.Interval]string, error) {
	out := map[interval.Interval]string{}
	deadline := time.Now().Add(p.k.lockTimeout)
	for _, iv := range chunks {
		for {
			raw, err := p.env.Act(ctx, middlemanager.Action{Type: middlemanager.ActionLockAcquire, Interval: iv.String()})
			if err == nil {
				var lock struct {
					Version string `json:"version"`
				}
				if err := json.Unmarshal(raw, &lock); err != nil || lock.Version == "" {
					return nil, fmt.Errorf("lock %s: bad answer %s", iv, raw)
				}
				out[iv] = lock.Version
				break
			}
			if !middlemanager.IsConflict(err) || taskEnded(err) {
				// Nothing is published: the records are read again by the next task.
				return nil, fmt.Errorf("lock %s of %s: %w", iv, p.k.spec.DataSource, err)
			}
			if time.Now().After(deadline) {
				// Failing publishes nothing: the next task reads these records
				// again, where dropping their rows would lose them for good.
				return nil, fmt.Errorf("lock %s of %s: still held by another task after %s (context.taskLockTimeout); nothing was published: %w",
					iv, p.k.spec.DataSource, p.k.lockTimeout, err)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return out, nil
}

// taskEnded reports a lock refused because the overlord already completed
// this task (e.g. a shutdown that marked it failed): waiting cannot help, and
// throwing rows away would lose them.
func taskEnded(err error) bool {
	var ae *middlemanager.ActionError
	return errors.As(err, &ae) && (strings.Contains(ae.Msg, "is not running on worker") || strings.Contains(ae.Msg, "already complete"))
}

// existing lists the used segments of every locked chunk. A chunk whose
// data uses other intervals (another segmentGranularity) cannot take rows of
// this one: the task fails without publishing rather than drop them, and says
// what to change.
func (p *publisher) existing(ctx context.Context, locked map[interval.Interval]string) (map[interval.Interval][]*segmeta.DataSegment, error) {
	out := map[interval.Interval][]*segmeta.DataSegment{}
	for iv := range locked {
		used, err := p.c.UsedSegments(ctx, p.k.spec.DataSource, iv)
		if err != nil {
			return nil, err
		}
		for _, e := range used {
			if e.Interval != iv && !e.IsTombstone() {
				return nil, fmt.Errorf("cannot append to %s of %s: existing segment %s covers %s; set the supervisor's segmentGranularity to the one the datasource already uses; nothing was published",
					iv, p.k.spec.DataSource, e.ID(), e.Interval)
			}
		}
		out[iv] = used
	}
	return out, nil
}

// place gives the segments of each chunk their final version and partition
// numbers: appended after the chunk's existing partitions (native batch's
// append rule), or the lock version when the chunk holds nothing yet.
func place(segs []*segmeta.DataSegment, locks map[interval.Interval]string, existing map[interval.Interval][]*segmeta.DataSegment) {
	byChunk := map[interval.Interval][]*segmeta.DataSegment{}
	for _, s := range segs {
		byChunk[s.Interval] = append(byChunk[s.Interval], s)
	}
	for iv, mine := range byChunk {
		for _, s := range mine {
			s.Version = locks[iv]
		}
		nativebatch.PlaceAppend(mine, existing[iv])
	}
}

// upload stores one held segment file in deep storage under a key unique to
// this task and sets the segment's loadSpec.
func (p *publisher) upload(ctx context.Context, s *segmeta.DataSegment) (deep.LoadSpec, error) {
	file, err := heldPath(s)
	if err != nil {
		return deep.LoadSpec{}, err
	}
	key := path.Join(deep.SegmentKey(s.DataSource, interval.FormatMillis(s.Interval.Start), interval.FormatMillis(s.Interval.End),
		s.Version, int(s.ShardSpec.PartitionNum)), p.taskID)
	ls, err := p.c.Storage.Put(ctx, key, file)
	if err != nil {
		return ls, fmt.Errorf("upload %s: %w", key, err)
	}
	b, err := json.Marshal(ls)
	if err != nil {
		return ls, err
	}
	s.LoadSpec = segmeta.RawJSON(b)
	s.Intern()
	return ls, nil
}

// published reports whether every segment of segs is stored (same id and
// files), which is how a publish whose answer was lost is settled.
func (p *publisher) published(ctx context.Context, segs []*segmeta.DataSegment) (bool, error) {
	for _, iv := range chunkIntervals(segs) {
		used, err := p.c.UsedSegments(ctx, p.k.spec.DataSource, iv)
		if err != nil {
			return false, err
		}
		stored := map[segmeta.ID]string{}
		for _, u := range used {
			stored[u.ID()] = string(u.LoadSpec)
		}
		for _, sg := range segs {
			if sg.Interval == iv && stored[sg.ID()] != string(sg.LoadSpec) {
				return false, nil
			}
		}
	}
	return true, nil
}

// deleteUploaded removes the files of a publish that did not happen.
func (p *publisher) deleteUploaded(specs []deep.LoadSpec) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ls := range specs {
		if err := p.c.Storage.Delete(ctx, ls); err != nil {
			p.env.Logf("Deleting unpublished segment file: %v", err)
		}
	}
}

// chunkIntervals lists the distinct intervals of segs, sorted.
func chunkIntervals(segs []*segmeta.DataSegment) []interval.Interval {
	var out []interval.Interval
	for _, s := range segs {
		if !slices.Contains(out, s.Interval) {
			out = append(out, s.Interval)
		}
	}
	slices.SortFunc(out, func(a, b interval.Interval) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmp.Compare(a.End, b.End)
	})
	return out
}

// holdUploader keeps built segment files in a local directory until the task
// knows their final version and partition numbers.
type holdUploader struct{ dir string }

type heldSpec struct {
	Type string `json:"type"`
	Path string `json:"path"`
}

var heldSeq struct {
	sync.Mutex
	n int
}

func (u holdUploader) Put(_ context.Context, _ string, localPath string) (json.RawMessage, error) {
	heldSeq.Lock()
	heldSeq.n++
	name := strconv.Itoa(heldSeq.n) + ".seg"
	heldSeq.Unlock()
	dst := filepath.Join(u.dir, name)
	if err := os.Rename(localPath, dst); err != nil {
		return nil, err
	}
	return json.Marshal(heldSpec{Type: "held", Path: dst})
}

// progressPeriod is how often a reading task publishes its position.
var progressPeriod = 2 * time.Second

// ProgressReportType is the report key under which a reading index_kafka task
// publishes its position (GET /svc/indexer/v1/task/{id}/reports while it runs):
// {"kafkaProgress":{"type":"kafkaProgress","taskId":...,"payload":{"stream":...,
// "currentOffsets":{"0":123},"recordsRead":n}}}. The supervisor computes lag
// from it; the final report replaces it when the task ends.
const ProgressReportType = "kafkaProgress"

// Progress is the payload of a kafkaProgress report.
type Progress struct {
	Stream         string           `json:"stream"`
	CurrentOffsets map[string]int64 `json:"currentOffsets"`
	RecordsRead    int64            `json:"recordsRead"`
	// RowStats counts the rows built so far (the realtime segments'), and
	// ParseErrors are the newest saved parse exceptions; both are absent when
	// the task serves no rows before publishing.
	RowStats    *nativebatch.RowStats `json:"rowStats,omitempty"`
	ParseErrors []ParseError          `json:"parseErrors,omitempty"`
	// Stopped is set once the task stopped reading at CurrentOffsets: the
	// replicas of a sequence wait for each other's and all read up to the
	// furthest (replicas.go).
	Stopped bool `json:"stopped,omitempty"`
}

// ParseProgress reads the kafkaProgress payload of a task report; ok is false
// when the report has none.
func ParseProgress(report string) (Progress, bool) {
	var r map[string]struct {
		Payload Progress `json:"payload"`
	}
	if report == "" || json.Unmarshal([]byte(report), &r) != nil {
		return Progress{}, false
	}
	p, ok := r[ProgressReportType]
	return p.Payload, ok && p.Payload.CurrentOffsets != nil
}

// progressReporter publishes a reading task's position at most every period
// and only when it moved: a report is one replicated command.
type progressReporter struct {
	// mu orders the reports: the read loop's and the realtime builder's
	// (served) must reach the overlord in the order they were made, so the
	// last one stored is never behind rows already served.
	mu     sync.Mutex
	env    middlemanager.Env
	taskID string
	period time.Duration
	last   time.Time
	sent   int64
	// rows, when set, gives the row counts and saved parse exceptions of
	// what the task serves so far (realtime.rowProgress).
	rows     func() (nativebatch.RowStats, []ParseError)
	sentRows nativebatch.RowStats
}

func (p *progressReporter) update(ctx context.Context, next Offsets, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var stats nativebatch.RowStats
	var errs []ParseError
	if p.rows != nil {
		stats, errs = p.rows()
	}
	if (n == p.sent && stats == p.sentRows) || time.Since(p.last) < p.period {
		return
	}
	p.last, p.sent, p.sentRows = time.Now(), n, stats
	// Best effort: a lost report only makes the lag look larger until the next.
	if err := p.env.PublishReport(ctx, p.report(next, n, stats, errs, false)); err != nil && ctx.Err() == nil {
		p.env.Logf("Publishing progress: %v", err)
	}
}

// position publishes at once the task's position next, marked stopped when
// it stopped reading there.
func (p *progressReporter) position(ctx context.Context, next Offsets, n int64, stopped bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var stats nativebatch.RowStats
	var errs []ParseError
	if p.rows != nil {
		stats, errs = p.rows()
	}
	return p.env.PublishReport(ctx, p.report(next, n, stats, errs, stopped))
}

// served publishes at once the position up to which the task is about to
// serve rows (realtime.beforeServe).
func (p *progressReporter) served(ctx context.Context, at Offsets) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var stats nativebatch.RowStats
	var errs []ParseError
	if p.rows != nil {
		stats, errs = p.rows()
	}
	p.last = time.Now()
	return p.env.PublishReport(ctx, p.report(at, p.sent, stats, errs, false))
}

func (p *progressReporter) report(next Offsets, n int64, stats nativebatch.RowStats, errs []ParseError, stopped bool) middlemanager.Report {
	cur := make(map[string]int64, len(next.Partitions))
	for part, off := range next.Partitions {
		cur[strconv.Itoa(int(part))] = off
	}
	pr := Progress{Stream: next.Stream, CurrentOffsets: cur, RecordsRead: n, ParseErrors: errs, Stopped: stopped}
	if p.rows != nil {
		pr.RowStats = &stats
	}
	b, _ := json.Marshal(map[string]any{ProgressReportType: map[string]any{
		"type": ProgressReportType, "taskId": p.taskID, "payload": pr,
	}})
	return middlemanager.Report(b)
}

func orNone(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
