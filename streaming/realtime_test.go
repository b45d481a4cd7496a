package streaming

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/storage/segment"
)

// fakeServing records what a task asks its worker to serve.
type fakeServing struct {
	mu       sync.Mutex
	sets     [][]middlemanager.Served // every accepted Serve, in order
	handoffs [][]middlemanager.Served
	serveErr error // returned (once) by the next Serve of a non-empty set
	noServe  bool  // the worker serves nothing
	logs     []string
	holds    int // holds taken
	held     bool
}

func (f *fakeServing) Hold() func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds++
	f.held = true
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.held = false
	}
}

func (f *fakeServing) Serve(segs []middlemanager.Served) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noServe {
		return middlemanager.ErrNoServing
	}
	if err := f.serveErr; err != nil && len(segs) > 0 {
		f.serveErr = nil
		return err
	}
	f.sets = append(f.sets, segs)
	return nil
}

func (f *fakeServing) Handoff(_ string, segs []middlemanager.Served) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noServe {
		return middlemanager.ErrNoServing
	}
	f.handoffs = append(f.handoffs, segs)
	return nil
}

func (f *fakeServing) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeServing) current() ([]middlemanager.Served, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sets) == 0 {
		return nil, 0
	}
	return f.sets[len(f.sets)-1], len(f.sets)
}

func taskPayload(bootstrap, format string, periodMs int) string {
	return `{"type":"index_kafka","dataSource":"k","context":{"realtimePeriod":` + fmt.Sprint(periodMs) + `},
 "dataSchema":{"dataSource":"k","timestampSpec":{"column":"ts","format":"iso"},
   "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
   "granularitySpec":{"segmentGranularity":"day","queryGranularity":"none","rollup":false}},
 "ioConfig":{"type":"kafka","topic":"t","consumerProperties":{"bootstrap.servers":"` + bootstrap + `"},
   "inputFormat":` + format + `,"taskDuration":"PT1S",
   "startSequenceNumbers":{"type":"start","stream":"t","partitionSequenceNumberMap":{"0":0}}}}`
}

func testTask(t testing.TB, bootstrap, format string, periodMs int) *kafkaTask {
	t.Helper()
	k, err := parseTask([]byte(taskPayload(bootstrap, format, periodMs)))
	if err != nil {
		t.Fatal(err)
	}
	if k.realtimePeriod != time.Duration(periodMs)*time.Millisecond {
		t.Fatalf("realtimePeriod %s", k.realtimePeriod)
	}
	return k
}

func rec(day, hour int, n int) string {
	return fmt.Sprintf(`{"ts":"2024-01-%02dT%02d:00:00Z","page":"p%d","n":%d}`, day, hour, n%3, n)
}

// spoolWriter appends records to a spool file as the read loop does.
type spoolWriter struct {
	f       *os.File
	w       *bufio.Writer
	written int64
}

func newSpool(t *testing.T) (*spoolWriter, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &spoolWriter{f: f, w: bufio.NewWriter(f)}, path
}

func (s *spoolWriter) add(t *testing.T, recs ...string) int64 {
	t.Helper()
	for _, r := range recs {
		n, _ := s.w.WriteString(r + "\n")
		s.written += int64(n)
	}
	if err := s.w.Flush(); err != nil {
		t.Fatal(err)
	}
	return s.written
}

// contentsOf sums the rows and the n metric of served segment files, and
// checks that no id is served twice and every one is a hydrant of task.
func contentsOf(t *testing.T, set []middlemanager.Served, task string) (rows, sum int64) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range set {
		id := s.Segment.ID().String()
		if seen[id] {
			t.Fatalf("segment %s served twice", id)
		}
		seen[id] = true
		if !s.Realtime || s.Segment.Version != "realtime-"+task || s.Segment.DataSource != "k" {
			t.Fatalf("hydrant %s: realtime %v", id, s.Realtime)
		}
		seg, err := segment.Open(s.Path)
		if err != nil {
			t.Fatalf("hydrant %s: %v", id, err)
		}
		rows += int64(seg.NumRows())
		col, err := seg.Numeric("n")
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < seg.NumBlocks(); b++ {
			vs, err := col.Longs(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				sum += v
			}
		}
		seg.Close()
	}
	return rows, sum
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Each build serves every row spooled so far, under ids no other hydrant ever
// had; merged hydrants replace the ones they cover, whose files go.
func TestHydrantsCoverTheSpool(t *testing.T) {
	k := testTask(t, "127.0.0.1:1", `{"type":"json"}`, 1000)
	sp, spool := newSpool(t)
	env := &fakeServing{}
	r := newRealtime(k, "task1", spool, filepath.Join(t.TempDir(), "rt"), env)
	if r == nil {
		t.Fatal("no realtime builder on a serving worker")
	}
	everID := map[string]bool{}
	var want, wantSum int64
	var prev []middlemanager.Served
	for round := 1; round <= 6; round++ {
		var recs []string
		for i := 0; i < round*10; i++ {
			n := round*1000 + i
			recs = append(recs, rec(1+i%2, i%24, n)) // two day buckets
			want++
			wantSum += int64(n)
		}
		r.build(sp.add(t, recs...), Offsets{})
		set, _ := env.current()
		rows, sum := contentsOf(t, set, "task1")
		if rows != want || sum != wantSum {
			t.Fatalf("round %d: served %d rows (sum %d), want %d (sum %d)", round, rows, sum, want, wantSum)
		}
		// Ids of new segments were never served before.
		current := map[string]bool{}
		for _, s := range set {
			current[s.Segment.ID().String()] = true
		}
		for _, s := range prev {
			id := s.Segment.ID().String()
			if !current[id] && exists(s.Path) {
				t.Fatalf("round %d: replaced hydrant %s still has its file", round, id)
			}
		}
		for _, s := range set {
			id := s.Segment.ID().String()
			if everID[id] && !containsID(prev, id) {
				t.Fatalf("round %d: id %s reused", round, id)
			}
			everID[id] = true
		}
		prev = set
	}
	// Six builds with fan-in 4: one merged hydrant and two new ones.
	if len(r.hydrants) != 3 || r.hydrants[0].level != 1 || r.hydrants[0].lo != 0 || r.hydrants[2].hi != sp.written {
		t.Fatalf("hydrants after 6 builds: %+v", r.hydrants)
	}
	r.withdraw()
	if set, _ := env.current(); set != nil {
		t.Fatalf("withdraw left %d segments served", len(set))
	}
	for _, s := range prev {
		if exists(s.Path) {
			t.Fatalf("withdrawn hydrant file %s remains", s.Path)
		}
	}
}

func containsID(set []middlemanager.Served, id string) bool {
	for _, s := range set {
		if s.Segment.ID().String() == id {
			return true
		}
	}
	return false
}

// plan keeps the number of hydrants logarithmic and never merges past
// maxMergeBytes.
func TestHydrantMergePlan(t *testing.T) {
	r := &realtime{}
	const delta = 1 << 20
	for i := 1; i <= 300; i++ {
		hi := int64(i) * delta
		first, lo, level := r.plan(hi)
		if first < len(r.hydrants) && lo != r.hydrants[first].lo || first == len(r.hydrants) && lo != r.covered {
			t.Fatalf("build %d: range starts at %d, not at a hydrant", i, lo)
		}
		if hi-lo > maxMergeBytes && first < len(r.hydrants) {
			t.Fatalf("build %d merges %d bytes", i, hi-lo)
		}
		r.hydrants = append(r.hydrants[:first], &hydrant{lo: lo, hi: hi, level: level})
		r.covered = hi
		for j := 1; j < len(r.hydrants); j++ {
			if r.hydrants[j].lo != r.hydrants[j-1].hi {
				t.Fatalf("build %d: hydrants not contiguous", i)
			}
		}
	}
	// 300 MiB in 1 MiB builds: merges stop at 64 MiB (level 3), so about
	// 300/64 level-3 hydrants plus at most 3 of each lower level.
	if n := len(r.hydrants); n > 300/64+1+3*3 {
		t.Fatalf("%d hydrants after 300 builds", n)
	}
}

// A failed build or serve changes nothing; the next build covers its records.
func TestHydrantFailureIsRetried(t *testing.T) {
	k := testTask(t, "127.0.0.1:1", `{"type":"json"}`, 1000)
	sp, spool := newSpool(t)
	env := &fakeServing{}
	dir := filepath.Join(t.TempDir(), "rt")
	r := newRealtime(k, "task2", spool, dir, env)

	hi := sp.add(t, rec(1, 1, 1), rec(1, 2, 2))
	if err := os.Rename(spool, spool+".away"); err != nil {
		t.Fatal(err)
	}
	r.build(hi, Offsets{}) // the spool cannot be read
	// Only the probe (Serve(nil)) was served.
	if set, n := env.current(); n != 1 || set != nil || r.covered != 0 || len(r.hydrants) != 0 {
		t.Fatalf("a failed build served %d sets", n)
	}
	if err := os.Rename(spool+".away", spool); err != nil {
		t.Fatal(err)
	}

	env.serveErr = errors.New("worker busy")
	hi = sp.add(t, rec(1, 3, 4))
	r.build(hi, Offsets{}) // built, but the worker refuses it
	if _, n := env.current(); n != 1 || r.covered != 0 {
		t.Fatal("a refused hydrant counts as served")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.seg")); len(files) != 0 {
		t.Fatalf("refused hydrant files remain: %v", files)
	}

	hi = sp.add(t, rec(1, 4, 8))
	r.build(hi, Offsets{})
	set, _ := env.current()
	if rows, sum := contentsOf(t, set, "task2"); rows != 4 || sum != 15 {
		t.Fatalf("after retry: %d rows, sum %d; want 4 rows, sum 15", rows, sum)
	}
	logs := strings.Join(env.logs, "\n")
	if !strings.Contains(logs, "failed") || !strings.Contains(logs, "worker busy") {
		t.Fatalf("failures not logged:\n%s", logs)
	}

	// Hand-off: the published segments replace the hydrants, whose files go.
	// Reads of the hydrants are held from the publish until the hand-off.
	r.hold()
	if env.holds != 1 || !env.held {
		t.Fatalf("publishing holds the hydrants: %d holds, held %v", env.holds, env.held)
	}
	published := []middlemanager.Served{{Segment: set[0].Segment, Path: "elsewhere"}}
	if !r.handOff("k", published) {
		t.Fatal("hand-off refused")
	}
	if env.held {
		t.Fatal("the hold outlived the hand-off")
	}
	if len(env.handoffs) != 1 || env.handoffs[0][0].Path != "elsewhere" {
		t.Fatalf("handoffs %v", env.handoffs)
	}
	for _, s := range set {
		if exists(s.Path) {
			t.Fatalf("hydrant file %s remains after hand-off", s.Path)
		}
	}
	if _, n := env.current(); n != 2 { // the probe and one build: nothing after the hand-off
		t.Fatalf("%d serves", n)
	}
}

// Without serving, or with a format that reads a header, a task runs as
// before: no builder, and its nil methods do nothing.
func TestNoRealtimeBuilder(t *testing.T) {
	k := testTask(t, "127.0.0.1:1", `{"type":"json"}`, 1000)
	env := &fakeServing{noServe: true}
	r := newRealtime(k, "t", "spool", t.TempDir(), env)
	if r != nil {
		t.Fatal("a builder without serving")
	}
	if err := r.maybeBuild(100, Offsets{}, func() error { return errors.New("flushed") }); err != nil {
		t.Fatal(err)
	}
	r.stop()
	if r.handOff("k", []middlemanager.Served{{}}) {
		t.Fatal("nil builder handed off")
	}
	r.withdraw()
	if len(env.logs) != 1 {
		t.Fatalf("logs %v", env.logs)
	}

	csv := testTask(t, "127.0.0.1:1", `{"type":"csv","findColumnsFromHeader":true}`, 1000)
	if newRealtime(csv, "t", "spool", t.TempDir(), &fakeServing{}) != nil {
		t.Fatal("a builder for a header format")
	}
	if _, err := parseTask([]byte(taskPayload("127.0.0.1:1", `{"type":"json"}`, 0))); err == nil || !strings.Contains(err.Error(), "realtimePeriod") {
		t.Fatalf("realtimePeriod 0: %v", err)
	}
}

// The read loop hands the spool to the builder while it reads, also when the
// partitions go quiet; the served rows catch up with the records read, and
// the final served set holds every row exactly once.
func TestReadServesHydrants(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(from, to int) int64 {
		var recs []*kgo.Record
		var sum int64
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: "t", Value: []byte(rec(1+i%3, i%24, i))})
			sum += int64(i)
		}
		if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	k := testTask(t, strings.Join(kc.ListenAddrs(), ","), `{"type":"json"}`, 30)
	k.taskDuration = 20 * time.Second
	dir := t.TempDir()
	spool := filepath.Join(dir, "records")
	env := &fakeServing{}
	r := newRealtime(k, "task3", spool, filepath.Join(dir, "rt"), env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		read int64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		_, n, err := k.read(ctx, spool, func(string, ...any) {}, nil, r)
		done <- result{n, err}
	}()
	// Served rows follow the records produced, batch by batch.
	var total, sum int64
	for batch := 0; batch < 4; batch++ {
		sum += produce(int(total), int(total)+50*(batch+1))
		total += int64(50 * (batch + 1))
		var rows, s int64
		eventually.True(t, fmt.Sprintf("batch %d: %d rows (sum %d) served", batch, total, sum), func() bool {
			set, _ := env.current()
			rows, s = contentsOf(t, set, "task3")
			if rows > total {
				t.Fatalf("served %d rows of %d", rows, total)
			}
			return rows == total && s == sum
		}, eventually.Showing(func() string { return fmt.Sprintf("%d rows (sum %d)", rows, s) }))
	}
	cancel()
	res := <-done
	r.stop()
	if res.err != nil || res.read != total {
		t.Fatalf("read %d records: %v", res.read, res.err)
	}
	_, n := env.current()
	if n < 5 {
		t.Fatalf("only %d serves", n)
	}
	// Nothing is served after stop: stop waited for the build in flight, and
	// a build asked for afterwards (period passed, new bytes) does not start.
	r.last = time.Time{}
	flushed := false
	if err := r.maybeBuild(1<<40, Offsets{}, func() error { flushed = true; return nil }); err != nil || flushed {
		t.Fatalf("a build started after stop (err %v)", err)
	}
	if _, n2 := env.current(); n2 != n {
		t.Fatal("served after stop")
	}
	r.withdraw()
}

// BenchmarkHydrantBuild measures one realtime build: 20,000 spooled JSON
// records (two day buckets) into served hydrant segments.
func BenchmarkHydrantBuild(b *testing.B) {
	const n = 20_000
	k := testTask(b, "127.0.0.1:1", `{"type":"json"}`, 1000)
	path := filepath.Join(b.TempDir(), "records")
	var sb strings.Builder
	for i := range n {
		sb.WriteString(rec(1+i%2, i%24, i))
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	env := &fakeServing{}
	r := newRealtime(k, "bench", path, filepath.Join(b.TempDir(), "rt"), env)
	b.ResetTimer()
	for range b.N {
		r.hydrants, r.covered = nil, 0 // the same records again, as new ones
		r.build(int64(sb.Len()), Offsets{})
		if len(r.hydrants) != 1 || r.lastErr != "" {
			b.Fatalf("build: %s", r.lastErr)
		}
		removeFiles(r.hydrants[0].segs)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}

// orderedServing is fakeServing that also records, at every serve, the
// last position reported before it (realtime.beforeServe).
type orderedServing struct {
	fakeServing
	reported int64   // guarded by fakeServing.mu
	atServe  []int64 // the position reported when each set was served
}

func (o *orderedServing) Serve(segs []middlemanager.Served) error {
	o.mu.Lock()
	o.atServe = append(o.atServe, o.reported)
	o.mu.Unlock()
	return o.fakeServing.Serve(segs)
}

// A replica reports the position of the records it is about to serve
// before it serves them: one lost right after serving them has said it
// read them, and the replicas left read up to there (agreeEnd).
func TestReplicaReportsBeforeServing(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	k := testTask(t, strings.Join(kc.ListenAddrs(), ","), `{"type":"json"}`, 20)
	k.taskDuration = 20 * time.Second
	dir := t.TempDir()
	spool := filepath.Join(dir, "records")
	env := &orderedServing{}
	r := newRealtime(k, "task4", spool, filepath.Join(dir, "rt"), env)
	r.beforeServe = func(_ context.Context, at Offsets) error {
		env.mu.Lock()
		defer env.mu.Unlock()
		env.reported = at.Partitions[0]
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := k.read(ctx, spool, func(string, ...any) {}, nil, r)
		done <- err
	}()
	var total int64
	for batch := range 3 {
		var recs []*kgo.Record
		for range 40 * (batch + 1) {
			recs = append(recs, &kgo.Record{Topic: "t", Value: []byte(rec(1, 0, int(total)))})
			total++
		}
		if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		eventually.True(t, fmt.Sprintf("%d rows served", total), func() bool {
			set, _ := env.current()
			rows, _ := contentsOf(t, set, "task4")
			return rows == total
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.stop()
	env.mu.Lock()
	sets, atServe := env.sets, env.atServe
	env.mu.Unlock()
	for i, set := range sets {
		if rows, _ := contentsOf(t, set, "task4"); rows > atServe[i] {
			t.Fatalf("serve %d: %d rows served, position reported before it %d", i, rows, atServe[i])
		}
	}
	r.withdraw()
}
