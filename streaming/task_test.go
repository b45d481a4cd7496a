package streaming_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strata/cluster"
	"strata/coordinator"
	"strata/fsm"
	"strata/ingest"
	"strata/ingest/middlemanager"
	"strata/ingest/nativebatch"
	"strata/internal/eventually"
	"strata/interval"
	"strata/overlord"
	"strata/props"
	"strata/querynode/historical"
	"strata/segmeta"
	"strata/server"
	"strata/storage/deep"
	"strata/streaming"
)

// env is a one-node control plane (real Raft, bbolt, HTTP), one middle
// manager, local deep storage and an in-process Kafka (kfake).
type env struct {
	url   string
	node  *cluster.Node
	c     *ingest.Cluster
	mm    *middlemanager.Worker
	kafka *kfake.Cluster
	prod  *kgo.Client
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvServing(t, false)
}

// newEnvServing is newEnv whose worker, with serving set, serves its tasks'
// rows as a middle manager does (realtime hydrants, then hand-off).
func newEnvServing(t testing.TB, serving bool) *env {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	var n *cluster.Node
	var err error
	for attempt := 0; attempt < 10; attempt++ { // a free port can be taken before Raft binds it
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		raftAddr := l.Addr().String()
		l.Close()
		n, err = cluster.Start(cluster.Config{ID: "solo", RaftAddr: raftAddr, HTTPURL: "http://" + ts.Listener.Addr().String(), DataDir: t.TempDir(),
			HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cp := props.Defaults()
	cp.Set("svc.storage.storageDirectory", store.Root()) // publishing checks load specs against it
	// The control roles' runtime, as process.StartServer wires it.
	o := overlord.Attach(n, overlord.ConfigFromProps(cp, hclog.NewNullLogger()))
	s, err := server.New(server.Options{Roles: []string{server.RoleCoordinator, server.RoleOverlord}, Node: n, Props: cp,
		Coordinator: coordinator.Start(n, coordinator.ConfigFromProps(cp, hclog.NewNullLogger())), Overlord: o,
		Supervisors: o.StartSupervisors(streaming.StateConfigFromProps(cp, hclog.NewNullLogger()), nil)})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(func() { ts.Close(); n.Shutdown() })
	eventually.True(t, "a leader", n.IsLeader)

	mm := startWorker(t, ts.URL, serving)

	c := &ingest.Cluster{Coordinators: []string{ts.URL}, Broker: ts.URL, Storage: store, HTTP: &http.Client{Timeout: time.Minute}}
	streaming.SetCluster(c)

	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &env{url: ts.URL, node: n, mm: mm, c: c, kafka: kc, prod: prod}
}

// startWorker starts a middle manager (HTTP server included) working for
// the overlord at overlordURL; with serving set it serves its tasks' rows.
func startWorker(t testing.TB, overlordURL string, serving bool) *middlemanager.Worker {
	t.Helper()
	wts := httptest.NewUnstartedServer(nil)
	host := wts.Listener.Addr().String()
	cfg := middlemanager.Config{Host: host, Capacity: 2, Version: "1", DataDir: t.TempDir(),
		Overlords: []string{overlordURL}, HeartbeatPeriod: 50 * time.Millisecond, HandoffTimeout: time.Millisecond}
	if serving {
		local, err := historical.New(historical.Config{Name: host, LocalOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		local.Start()
		t.Cleanup(func() { local.Close() })
		cfg.Serving = local
	}
	mm, err := middlemanager.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wp := props.Defaults()
	middlemanager.Attach(wp, mm)
	ws, err := server.New(server.Options{Roles: []string{server.RoleMiddleManager}, Props: wp})
	if err != nil {
		t.Fatal(err)
	}
	wts.Config.Handler = ws.Handler()
	wts.Start()
	mm.Start()
	t.Cleanup(func() { mm.Stop(); wts.Close(); middlemanager.Detach(wp) })
	return mm
}

func (e *env) produce(t testing.TB, partition int32, values ...string) {
	t.Helper()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: "t", Partition: partition, Value: []byte(v)})
	}
	if err := e.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func row(day, hour int, page string, n int) string {
	return fmt.Sprintf(`{"ts":"2024-01-%02dT%02d:00:00Z","page":%q,"n":%d}`, day, hour, page, n)
}

func (e *env) payload(start map[int32]int64, duration string) string {
	var parts []string
	for p, off := range start {
		parts = append(parts, fmt.Sprintf(`"%d":%d`, p, off))
	}
	return `{"type":"index_kafka","dataSource":"k","context":{"taskLockTimeout":5000},
 "dataSchema":{"dataSource":"k","timestampSpec":{"column":"ts","format":"iso"},
   "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
   "granularitySpec":{"segmentGranularity":"day","queryGranularity":"none","rollup":false}},
 "tuningConfig":{"type":"kafka"},
 "ioConfig":{"type":"kafka","topic":"t","consumerProperties":{"bootstrap.servers":"` + strings.Join(e.kafka.ListenAddrs(), ",") + `"},
   "inputFormat":{"type":"json"},"taskDuration":"` + duration + `",
   "startSequenceNumbers":{"type":"start","stream":"t","partitionSequenceNumberMap":{` + strings.Join(parts, ",") + `}}}}`
}

func (e *env) do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *env) submit(t testing.TB, payload string) string {
	t.Helper()
	code, body := e.do(t, "POST", "/svc/indexer/v1/task", payload)
	var out struct {
		Task string `json:"task"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Task == "" {
		t.Fatalf("submit: %d %s", code, body)
	}
	return out.Task
}

// wait waits for the task to end and returns its status and error message.
func (e *env) wait(t testing.TB, id string) (string, string) {
	t.Helper()
	var status, msg string
	eventually.True(t, "task "+id+" to end", func() bool {
		_, body := e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/status", "")
		var out struct {
			Status struct {
				Status   string  `json:"status"`
				ErrorMsg *string `json:"errorMsg"`
			} `json:"status"`
		}
		json.Unmarshal([]byte(body), &out)
		status = out.Status.Status
		if out.Status.ErrorMsg != nil {
			msg = *out.Status.ErrorMsg
		}
		return status == "SUCCESS" || status == "FAILED"
	}, eventually.Within(20*time.Second))
	return status, msg
}

// readOne waits until task id's live report counts one record read.
func readOne(t *testing.T, e *env, id string) {
	t.Helper()
	var last string
	eventually.True(t, "task "+id+" to read its record", func() bool {
		var code int
		code, last = e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
		return code == 200 && strings.Contains(last, `"recordsRead":1`)
	}, eventually.Showing(func() string { return last }))
}

func (e *env) rowStats(t testing.TB, id string) map[string]float64 {
	t.Helper()
	code, body := e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
	var rep struct {
		I struct {
			Payload struct {
				RowStats struct {
					BuildSegments map[string]float64 `json:"buildSegments"`
				} `json:"rowStats"`
			} `json:"payload"`
		} `json:"ingestionStatsAndErrors"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &rep) != nil {
		t.Fatalf("reports: %d %s", code, body)
	}
	return rep.I.Payload.RowStats.BuildSegments
}

func (e *env) offsets(t *testing.T) streaming.Offsets {
	t.Helper()
	var m string
	e.node.FSM().Read(func(s *fsm.State) { m, _ = s.DataSourceMetadata("k") })
	o, err := streaming.ParseOffsets(m)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// contents sums the rows and the n metric of the used segments of k.
func (e *env) contents(t *testing.T) (segs []*segmeta.DataSegment, rows, sum int64) {
	t.Helper()
	segs, err := e.c.UsedSegments(context.Background(), "k", interval.Eternity)
	if err != nil {
		t.Fatal(err)
	}
	for _, sg := range segs {
		s, release, err := e.c.OpenSegment(context.Background(), filepath.Join(t.TempDir(), "open"), sg)
		if err != nil {
			t.Fatal(err)
		}
		rows += int64(s.NumRows())
		col, err := s.Numeric("n")
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < s.NumBlocks(); b++ {
			vs, err := col.Longs(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				sum += v
			}
		}
		release()
	}
	return segs, rows, sum
}

func wantOffsets(t *testing.T, got streaming.Offsets, want map[int32]int64) {
	t.Helper()
	if got.Stream != "t" || len(got.Partitions) != len(want) {
		t.Fatalf("offsets %+v, want %v", got, want)
	}
	for p, off := range want {
		if got.Partitions[p] != off {
			t.Fatalf("offsets %+v, want %v", got, want)
		}
	}
}

func TestIndexKafkaTask(t *testing.T) {
	e := newEnv(t)
	e.produce(t, 0, row(1, 0, "a", 1), row(1, 1, "b", 2), row(1, 2, "a", 4))
	e.produce(t, 1, row(2, 0, "c", 8), "not json", row(2, 5, "c", 16))

	// 1: read both partitions from 0 and publish.
	id := e.submit(t, e.payload(map[int32]int64{0: 0, 1: 0}, "PT0.5S"))
	if st, msg := e.wait(t, id); st != "SUCCESS" {
		t.Fatalf("first task: %s %s", st, msg)
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 3, 1: 3})
	segs, rows, sum := e.contents(t)
	if len(segs) != 2 || rows != 5 || sum != 31 {
		t.Fatalf("after first task: %d segments, %d rows, sum %d", len(segs), rows, sum)
	}
	if rs := e.rowStats(t, id); rs["processed"] != 5 || rs["unparseable"] != 1 || rs["thrownAway"] != 0 {
		t.Fatalf("row stats %v", rs)
	}

	// 2: from the stored offsets only the new records are published,
	// appended to the existing day (same version, next partition).
	e.produce(t, 0, row(1, 3, "d", 32), row(1, 4, "d", 64))
	id2 := e.submit(t, e.payload(e.offsets(t).Partitions, "PT0.3S"))
	if st, msg := e.wait(t, id2); st != "SUCCESS" {
		t.Fatalf("second task: %s %s", st, msg)
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 5, 1: 3})
	segs, rows, sum = e.contents(t)
	if len(segs) != 3 || rows != 7 || sum != 127 {
		t.Fatalf("after second task: %d segments, %d rows, sum %d", len(segs), rows, sum)
	}
	day1 := map[int32]string{}
	for _, s := range segs {
		if interval.FormatMillis(s.Interval.Start) == "2024-01-01T00:00:00.000Z" {
			day1[s.ShardSpec.PartitionNum] = s.Version
		}
	}
	if len(day1) != 2 || day1[0] != day1[1] {
		t.Fatalf("append to day 1: %v", day1)
	}

	// 3: a stale task (start offsets no longer current) fails and publishes nothing.
	id3 := e.submit(t, e.payload(map[int32]int64{0: 0, 1: 0}, "PT0.3S"))
	if st, msg := e.wait(t, id3); st != "FAILED" || !strings.Contains(msg, "409") {
		t.Fatalf("stale task: %s %s", st, msg)
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 5, 1: 3})
	if segs, rows, _ = e.contents(t); len(segs) != 3 || rows != 7 {
		t.Fatalf("after stale task: %d segments, %d rows", len(segs), rows)
	}

	// 4: a graceful stop (the worker cancels the run) ends reading early and
	// publishes what was read.
	e.produce(t, 1, row(3, 0, "e", 128))
	id4 := e.submit(t, e.payload(e.offsets(t).Partitions, "PT1H"))
	eventually.True(t, "task 4 to start", func() bool { return slices.Contains(e.mm.TaskIDs(), id4) })
	// The stop comes once the task has read the record (its live report
	// counts it), however slow the machine.
	readOne(t, e, id4)
	if !e.mm.Shutdown(id4, "graceful stop") {
		t.Fatal("task 4 was not running")
	}
	if st, msg := e.wait(t, id4); st != "SUCCESS" {
		t.Fatalf("stopped task: %s %s", st, msg)
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 5, 1: 4})
	if segs, rows, sum = e.contents(t); len(segs) != 4 || rows != 8 || sum != 255 {
		t.Fatalf("after stopped task: %d segments, %d rows, sum %d", len(segs), rows, sum)
	}

	// 5: an overlord shutdown marks the task failed at once: it may no
	// longer lock, so it publishes nothing and the offsets stay.
	e.produce(t, 1, row(3, 1, "f", 256))
	id5 := e.submit(t, e.payload(e.offsets(t).Partitions, "PT1H"))
	readOne(t, e, id5) // the shutdown comes while it reads
	if code, body := e.do(t, "POST", "/svc/indexer/v1/task/"+url.PathEscape(id5)+"/shutdown", ""); code != 200 {
		t.Fatalf("shutdown: %d %s", code, body)
	}
	if st, _ := e.wait(t, id5); st != "FAILED" {
		t.Fatalf("shut down task: %s", st)
	}
	eventually.True(t, "task 5 to end on its worker", func() bool { return !slices.Contains(e.mm.TaskIDs(), id5) })
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 5, 1: 4})
	if segs, rows, _ = e.contents(t); len(segs) != 4 || rows != 8 {
		t.Fatalf("after shut down task: %d segments, %d rows", len(segs), rows)
	}
}

// A publish whose answer is lost after the control plane applied it (a
// leader lost just after committing): the task retries, meets the moved
// offsets (409), finds its own segments stored, and succeeds keeping its
// files; nothing is published twice and nothing is lost.
func TestPublishAnswerLost(t *testing.T) {
	e := newEnv(t)
	// Between the task and the control plane: the first publish is forwarded,
	// then its connection is cut before the answer.
	var cut atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, e.url+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if strings.HasSuffix(r.URL.Path, "/segments/publish") && cut.CompareAndSwap(false, true) {
			io.Copy(io.Discard, resp.Body)
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	c := *e.c
	c.Coordinators = []string{proxy.URL}
	streaming.SetCluster(&c)

	e.produce(t, 0, row(1, 1, "a", 1), row(1, 2, "b", 2))
	e.produce(t, 1, row(1, 3, "c", 4))
	id := e.submit(t, e.payload(map[int32]int64{0: 0, 1: 0}, "PT0.5S"))
	if st, msg := e.wait(t, id); st != "SUCCESS" {
		t.Fatalf("task %s: %s", st, msg)
	}
	if !cut.Load() {
		t.Fatal("the publish answer was not cut")
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 2, 1: 1})
	segs, rows, sum := e.contents(t)
	if rows != 3 || sum != 7 {
		t.Fatalf("stored %d rows with sum %d, want 3 rows with sum 7", rows, sum)
	}
	// The files of the published segments were kept: every segment opens
	// (contents above read them all).
	if len(segs) == 0 {
		t.Fatal("no segments")
	}
}

// A reading task publishes its position as a live report (what the
// supervisor's lag is computed from) and stops gracefully on request.
func TestTaskReportsProgress(t *testing.T) {
	e := newEnv(t)
	e.produce(t, 0, row(1, 1, "a", 1), row(1, 2, "b", 2), row(1, 3, "c", 3))
	e.produce(t, 1, row(1, 4, "d", 4))
	id := e.submit(t, e.payload(map[int32]int64{0: 0, 1: 0}, "PT60S"))
	var last string
	eventually.True(t, "a progress report with offsets {0:3, 1:1}", func() bool {
		_, last = e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
		p, ok := streaming.ParseProgress(last)
		return ok && p.Stream == "t" && p.RecordsRead == 4 && p.CurrentOffsets["0"] == 3 && p.CurrentOffsets["1"] == 1
	}, eventually.Within(20*time.Second), eventually.Showing(func() string { return last }))
	if !e.mm.Shutdown(id, "graceful stop") {
		t.Fatal("task not running")
	}
	if st, msg := e.wait(t, id); st != "SUCCESS" {
		t.Fatalf("task %s: %s", st, msg)
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 3, 1: 1})
}

// A pretty-printed JSON record is one row (the JSON reader reads objects, not
// lines); a record holding two JSON values is two.
func TestMultiLineJSONRecords(t *testing.T) {
	e := newEnv(t)
	e.produce(t, 0, "{\n  \"ts\": \"2024-01-01T01:00:00Z\",\n  \"page\": \"pretty\",\n  \"n\": 5\n}\n",
		row(1, 2, "a", 1)+"\n"+row(1, 3, "b", 2))
	id := e.submit(t, e.payload(map[int32]int64{0: 0, 1: 0}, "PT0.5S"))
	if st, msg := e.wait(t, id); st != "SUCCESS" {
		t.Fatalf("task %s: %s", st, msg)
	}
	if _, rows, sum := e.contents(t); rows != 3 || sum != 8 {
		t.Fatalf("stored %d rows with sum %d, want 3 rows with sum 8", rows, sum)
	}
	if rs := e.rowStats(t, id); rs["processed"] != 3 || rs["unparseable"] != 0 {
		t.Fatalf("row stats %v", rs)
	}
}

// Rows outside the task's minimumMessageTime and maximumMessageTime (both
// inclusive) are thrown away and counted, in the live row stats of the rows
// served while reading and in the final report; only the rows within are
// published.
func TestTaskRejectsRowsOutsideMessageTimes(t *testing.T) {
	defer streaming.SetProgressPeriod(10 * time.Millisecond)()
	e := newEnvServing(t, true)
	e.produce(t, 0, row(1, 0, "late", 1), row(1, 1, "min", 2), row(1, 2, "a", 4), row(1, 3, "max", 8),
		`{"ts":"2024-01-01T03:00:00.001Z","page":"early","n":16}`)
	e.produce(t, 1, row(2, 0, "early", 32), "not json")
	payload := strings.Replace(e.payload(map[int32]int64{0: 0, 1: 0}, "PT60S"), `"taskDuration":`,
		`"minimumMessageTime":"2024-01-01T01:00:00.000Z","maximumMessageTime":"2024-01-01T03:00Z","taskDuration":`, 1)
	payload = strings.Replace(payload, `"taskLockTimeout":5000`, `"taskLockTimeout":5000,"realtimePeriod":20`, 1)
	id := e.submit(t, payload)
	want := nativebatch.RowStats{Processed: 3, ThrownAway: 3, Unparseable: 1}
	var last string
	eventually.True(t, fmt.Sprintf("live row stats %+v", want), func() bool {
		_, last = e.do(t, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
		p, ok := streaming.ParseProgress(last)
		if !ok || p.RowStats == nil {
			return false
		}
		got := *p.RowStats
		got.ProcessedBytes = 0
		return got == want
	}, eventually.Showing(func() string { return last }))
	if !e.mm.Shutdown(id, "graceful stop") {
		t.Fatal("task not running")
	}
	if st, msg := e.wait(t, id); st != "SUCCESS" {
		t.Fatalf("task %s: %s", st, msg)
	}
	if rs := e.rowStats(t, id); rs["processed"] != 3 || rs["thrownAway"] != 3 || rs["unparseable"] != 1 {
		t.Fatalf("final row stats %v", rs)
	}
	wantOffsets(t, e.offsets(t), map[int32]int64{0: 5, 1: 2})
	if segs, rows, sum := e.contents(t); len(segs) != 1 || rows != 3 || sum != 14 {
		t.Fatalf("published %d segments, %d rows, sum %d; want the 3 rows within the bounds (sum 14)", len(segs), rows, sum)
	}
	// Bad bounds are refused at submission.
	bad := strings.Replace(e.payload(map[int32]int64{0: 0}, "PT1S"), `"taskDuration":`, `"minimumMessageTime":"yesterday","taskDuration":`, 1)
	if code, body := e.do(t, "POST", "/svc/indexer/v1/task", bad); code != 400 || !strings.Contains(body, "minimumMessageTime") {
		t.Fatalf("bad minimumMessageTime: %d %s", code, body)
	}
}

// BenchmarkIndexKafkaTask measures one index_kafka task end to end: reading
// 100,000 JSON records from 2 partitions of an in-process broker, building
// the segments (rollup off, hour chunks), uploading and publishing them.
func BenchmarkIndexKafkaTask(b *testing.B) {
	b.Run("published-only", func(b *testing.B) { benchIndexKafkaTask(b, false) })
	// Rows also built into realtime hydrants every second while reading.
	b.Run("realtime", func(b *testing.B) { benchIndexKafkaTask(b, true) })
}

func benchIndexKafkaTask(b *testing.B, serving bool) {
	const n = 100_000
	defer streaming.SetProgressPeriod(10 * time.Millisecond)()
	e := newEnvServing(b, serving)
	var recs [2][]string
	for i := range n {
		recs[i%2] = append(recs[i%2], row(1+i%2, i%24, fmt.Sprint("p", i%100), i))
	}
	for p, rs := range recs {
		for lo := 0; lo < len(rs); lo += 5000 {
			e.produce(b, int32(p), rs[lo:min(lo+5000, len(rs))]...)
		}
	}
	// Each iteration reads everything again: a fresh datasource, so that the
	// stored offsets do not stop it.
	b.ResetTimer()
	for i := range b.N {
		payload := strings.ReplaceAll(e.payload(map[int32]int64{0: 0, 1: 0}, "PT600S"), `"k"`, fmt.Sprintf(`"k%d"`, i))
		if serving { // hydrants every 10 ms: reading 100k records spans several builds and merges
			payload = strings.Replace(payload, `"taskLockTimeout":5000`, `"taskLockTimeout":5000,"realtimePeriod":10`, 1)
		}
		// Stop reading as soon as every record is in: poll the progress report.
		id := e.submit(b, payload)
		for {
			_, body := e.do(b, "GET", "/svc/indexer/v1/task/"+url.PathEscape(id)+"/reports", "")
			if p, ok := streaming.ParseProgress(body); ok && p.RecordsRead == n {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		e.mm.Shutdown(id, "all read")
		if st, msg := e.wait(b, id); st != "SUCCESS" {
			b.Fatalf("task %s: %s", st, msg)
		}
		if rs := e.rowStats(b, id); rs["processed"] != n {
			b.Fatalf("row stats %v, want %d processed", rs, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}
