package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSelfWiringCluster runs the full cluster of scripts/cluster-up.sh --full
// as real processes: 3 control nodes, 2 historicals, 2 brokers, 2 middle
// managers and 2 routers, each given only the control nodes' addresses
// (svc.discovery.coordinators), no URL list. Every node shows up in
// /servers; SQL ingestion through a router loads its segments (the task's
// load waiter finds the brokers through discovery) and queries through the
// routers count every row. Then one process of each kind in turn is killed
// (kill -9): the leader marks it gone within the lease timeout, queries
// through a live router still count every row, and a new ingestion still
// succeeds and is counted; the killed process then restarts and rejoins.
// Meanwhile a Kafka supervisor with replicas 2 (kfake) ingests a stream
// produced all along: after each kill the rows served keep growing, never
// beyond what was produced, and at the end equal the records produced.
func TestSelfWiringCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts eleven processes and kills five of them: about two minutes")
	}
	bin := buildStrata(t)
	work := t.TempDir()
	c, err := NewCluster(bin, work, NewNet(true))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		if t.Failed() {
			for _, p := range c.Procs {
				t.Logf("---- %s log tail:\n%s", p.Name, p.LogTail(3000))
			}
		}
	}()
	const lease = 3 * time.Second
	c.Props = append(append([]string(nil), raftTimings...),
		"svc.discovery.leaseTimeout="+lease.String(), "svc.discovery.heartbeatPeriod=500ms",
		"svc.coordinator.startDelay=1s", "svc.coordinator.loadTimeout=90s",
		"svc.historical.pollPeriod=200ms", "svc.broker.pollPeriod=200ms", "svc.worker.heartbeatPeriod=300ms")
	if err := c.AddControl(3); err != nil {
		t.Fatal(err)
	}
	disc := "svc.discovery.coordinators=" + c.ControlURLs()
	for _, p := range c.Control {
		p.Set(disc)
	}
	c.Props = append(c.Props, disc)
	byName := map[string]*Proc{}
	for _, n := range []struct {
		name, role string
		port       int
		extra      []string
	}{
		{"h1", "historical", 8083, nil}, {"h2", "historical", 8083, nil},
		{"b1", "broker", 8082, nil}, {"b2", "broker", 8082, nil},
		{"m1", "middleManager", 8091, []string{"svc.worker.capacity=4"}}, {"m2", "middleManager", 8091, []string{"svc.worker.capacity=4"}},
		{"r1", "router", 8888, nil}, {"r2", "router", 8888, nil},
	} {
		p, err := c.addProc(n.name, n.role, n.port, n.extra)
		if err != nil {
			t.Fatal(err)
		}
		byName[n.name] = p
	}
	for _, p := range c.Control {
		byName[p.Name] = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitLeader(ctx, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Procs {
		if err := c.WaitUp(ctx, p, 60*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	w := &wiringRun{t: t, ctx: ctx, c: c, dir: work}
	w.waitStates(map[string]string{}, 60*time.Second) // every node live

	routers := []*Proc{byName["r1"], byName["r2"]}
	w.ingest(routers[0], 0)
	w.checkCount(routers)

	k := startStream(t, ctx, c, routers[0])
	defer k.stop()
	k.progress(routers, 90*time.Second)

	for _, victim := range []string{"h1", "b1", "m1", "r1", "leader"} {
		p := byName[victim]
		if victim == "leader" {
			l, err := c.WaitLeader(ctx, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			p = l
		}
		t.Logf("killing %s (%s)", p.Name, p.Roles)
		killed := time.Now()
		p.Kill()
		var live []*Proc
		for _, r := range routers {
			if r.Running() {
				live = append(live, r)
			}
		}
		// At once, before the leader has noticed: every query answers, and
		// counts every row (a broker skips a dead historical for its
		// replica, a router a dead broker).
		w.countNow(live, 5)
		// The leader (a new one, when the leader was killed) marks it gone.
		w.waitStates(map[string]string{p.HTTP: "gone"}, lease+20*time.Second)
		t.Logf("%s marked gone %s after the kill", p.Name, time.Since(killed).Round(100*time.Millisecond))
		w.checkCount(live)
		w.ingest(live[len(live)-1], w.batches)
		w.checkCount(live)
		k.progress(live, 90*time.Second)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitUp(ctx, p, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		w.waitStates(map[string]string{}, 60*time.Second) // it rejoined
	}
	w.checkCount(routers)
	k.exactlyOnce(routers, 120*time.Second)
}

// buildStrata builds the strata binary without the race detector (the
// servers would be too slow with it) into the test's temporary directory.
func buildStrata(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	build := exec.Command("go", "build", "-o", bin, "./cmd/strata")
	build.Dir = moduleRoot(t)
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/strata: %v\n%s", err, out)
	}
	return bin
}

type wiringRun struct {
	t       *testing.T
	ctx     context.Context
	c       *Cluster
	dir     string
	batches int   // ingestions done
	rows    int64 // rows they wrote
}

const wiringDataSource = "wired"

// rowsPerBatch is the rows of each ingestion, one day each.
const rowsPerBatch = 50

// ingest runs one SQL INSERT of a new day through router r and waits for
// the task to succeed with its segments loaded.
func (w *wiringRun) ingest(r *Proc, day int) {
	w.t.Helper()
	file := filepath.Join(w.dir, fmt.Sprintf("batch%d.json", day))
	f, err := os.Create(file)
	if err != nil {
		w.t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	t0 := time.Date(2024, 3, 1+day, 0, 0, 0, 0, time.UTC)
	for i := 0; i < rowsPerBatch; i++ {
		fmt.Fprintf(bw, `{"timestamp":%q,"page":"p%d"}`+"\n", t0.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), i%7)
	}
	if err := bw.Flush(); err != nil {
		w.t.Fatal(err)
	}
	f.Close()
	sql := fmt.Sprintf(`INSERT INTO %s
SELECT TIME_PARSE("timestamp") AS __time, page
FROM TABLE(EXTERN('{"type":"local","files":[%q]}', '{"type":"json"}', '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"}]'))
PARTITIONED BY DAY`, wiringDataSource, file)
	body, _ := json.Marshal(map[string]any{"query": sql})
	start := time.Now()
	var id string
	var last string
	// A router in front of a control plane that is electing a leader
	// answers 503 for a moment; a submission is retried until taken.
	for deadline := time.Now().Add(60 * time.Second); id == "" && time.Now().Before(deadline); {
		code, resp, err := w.c.HTTP.do(w.ctx, "POST", r.URL()+"/svc/v2/sql/task", body, nil)
		var out struct {
			TaskID string `json:"taskId"`
		}
		if err == nil && code == 200 && json.Unmarshal(resp, &out) == nil && out.TaskID != "" {
			id = out.TaskID
			break
		}
		last = fmt.Sprintf("%d %v %s", code, err, abbreviate(resp))
		sleep(w.ctx, 500*time.Millisecond)
	}
	if id == "" {
		w.t.Fatalf("batch %d: no router took the SQL task: %s", day, last)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		code, resp, err := w.c.HTTP.do(w.ctx, "GET", r.URL()+"/svc/indexer/v1/task/"+id+"/status", nil, nil)
		var st struct {
			Status struct {
				Status   string `json:"status"`
				ErrorMsg string `json:"errorMsg"`
			} `json:"status"`
		}
		if err == nil && code == 200 && json.Unmarshal(resp, &st) == nil {
			if st.Status.Status == "SUCCESS" {
				break
			}
			if st.Status.Status == "FAILED" {
				w.t.Fatalf("batch %d: task %s failed: %s", day, id, st.Status.ErrorMsg)
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("batch %d: task %s did not finish within 3 minutes (last %d %v %s)", day, id, code, err, abbreviate(resp))
		}
		sleep(w.ctx, 250*time.Millisecond)
	}
	// Its load waiter found a broker and saw the segments loaded.
	code, rep, err := w.c.HTTP.do(w.ctx, "GET", r.URL()+"/svc/indexer/v1/task/"+id+"/reports", nil, nil)
	if err != nil || code != 200 || !strings.Contains(string(rep), `"segmentLoadWaiterStatus":{"state":"SUCCESS"`) {
		w.t.Fatalf("batch %d: task %s report: %d %v %s", day, id, code, err, abbreviate(rep))
	}
	w.t.Logf("batch %d ingested through %s in %s (task %s)", day, r.Name, time.Since(start).Round(100*time.Millisecond), id)
	w.batches++
	w.rows += rowsPerBatch
}

// checkCount queries the row count through each router until it is every
// row ingested (segments of a restarted or replaced node may still be
// loading for a moment), and fails on a count above it.
func (w *wiringRun) checkCount(routers []*Proc) {
	w.t.Helper()
	q := w.countQuery()
	for _, r := range routers {
		var last string
		deadline := time.Now().Add(30 * time.Second)
		for {
			code, body, err := w.c.HTTP.do(w.ctx, "POST", r.URL()+"/svc/v2/", q, nil)
			var rows []struct {
				Result struct {
					Rows int64 `json:"rows"`
				} `json:"result"`
			}
			if err == nil && code == 200 && json.Unmarshal(body, &rows) == nil && len(rows) == 1 {
				if got := rows[0].Result.Rows; got == w.rows {
					break
				} else if got > w.rows {
					w.t.Fatalf("through %s: %d rows, more than the %d ingested", r.Name, got, w.rows)
				}
			}
			last = fmt.Sprintf("%d %v %s", code, err, abbreviate(body))
			if time.Now().After(deadline) {
				w.t.Fatalf("through %s: the count never reached %d rows (last: %s)", r.Name, w.rows, last)
			}
			sleep(w.ctx, 200*time.Millisecond)
		}
	}
}

// countNow queries the row count n times through each router, each answer
// at the first try: 200 and every row ingested.
func (w *wiringRun) countNow(routers []*Proc, n int) {
	w.t.Helper()
	for i := 0; i < n; i++ {
		for _, r := range routers {
			code, body, err := w.c.HTTP.do(w.ctx, "POST", r.URL()+"/svc/v2/", w.countQuery(), nil)
			var rows []struct {
				Result struct {
					Rows int64 `json:"rows"`
				} `json:"result"`
			}
			if err != nil || code != 200 || json.Unmarshal(body, &rows) != nil || len(rows) != 1 || rows[0].Result.Rows != w.rows {
				w.t.Fatalf("query %d through %s right after the kill: %d %v %s (want %d rows)", i, r.Name, code, err, abbreviate(body), w.rows)
			}
		}
	}
}

func (w *wiringRun) countQuery() []byte {
	return []byte(fmt.Sprintf(`{"queryType":"timeseries","dataSource":%q,"intervals":["2024-01-01/2025-01-01"],"granularity":"all","aggregations":[{"type":"count","name":"rows"}]}`, wiringDataSource))
}

// waitStates waits until the leader's /servers lists every process of the
// cluster, each live except those want names (by host:port) with another
// state.
func (w *wiringRun) waitStates(want map[string]string, timeout time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if l := w.c.Leader(w.ctx); l != nil {
			code, body, err := w.c.Get(w.ctx, l.URL()+"/svc/coordinator/v1/servers?simple")
			var servers []struct {
				Host  string `json:"host"`
				Role  string `json:"role"`
				State string `json:"state"`
			}
			if err == nil && code == 200 && json.Unmarshal(body, &servers) == nil {
				state := map[string]string{}
				for _, s := range servers {
					state[s.Host] = s.State
				}
				ok := true
				for _, p := range w.c.Procs {
					st := want[p.HTTP]
					if st == "" {
						st = "live"
					}
					if state[p.HTTP] != st {
						ok = false
						last = fmt.Sprintf("%s (%s) is %q, want %q; /servers?simple: %s", p.Name, p.HTTP, state[p.HTTP], st, body)
						break
					}
				}
				if ok {
					return
				}
			} else {
				last = fmt.Sprintf("%d %v %s", code, err, abbreviate(body))
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("servers not as wanted within %s: %s", timeout, last)
		}
		sleep(w.ctx, 200*time.Millisecond)
	}
}

const streamTopic = "wired_stream"

// stream produces records to a kfake topic that a Kafka supervisor with
// replicas 2 ingests, and checks what the routers serve of it.
type stream struct {
	t    *testing.T
	ctx  context.Context
	c    *Cluster
	kc   *kfake.Cluster
	prod *kgo.Client
	done chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	acked    int64 // records acknowledged, numbered 0..invoked-1
	ackedSum int64
	failed   int64
	invoked  int64
}

func startStream(t *testing.T, ctx context.Context, c *Cluster, r *Proc) *stream {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, streamTopic))
	if err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic(streamTopic))
	if err != nil {
		kc.Close()
		t.Fatal(err)
	}
	k := &stream{t: t, ctx: ctx, c: c, kc: kc, prod: prod, done: make(chan struct{})}
	spec := fmt.Sprintf(`{"type":"kafka","spec":{
	  "dataSchema":{"dataSource":%q,"timestampSpec":{"column":"ts","format":"iso"},
	    "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
	    "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
	  "ioConfig":{"topic":%q,"consumerProperties":{"bootstrap.servers":%q},"taskCount":1,"replicas":2,
	    "taskDuration":"PT10S","startDelay":"PT0S","period":"PT0.5S","useEarliestOffset":true,"inputFormat":{"type":"json"}},
	  "tuningConfig":{"type":"kafka"}}}`, streamTopic, streamTopic, strings.Join(kc.ListenAddrs(), ","))
	code, body, err := c.HTTP.do(ctx, "POST", r.URL()+"/svc/indexer/v1/supervisor", []byte(spec), nil)
	if err != nil || code != 200 {
		k.stop()
		t.Fatalf("supervisor through %s: %d %v %s", r.Name, code, err, abbreviate(body))
	}
	k.wg.Add(1)
	go k.produce()
	return k
}

// produce sends a batch of records every 50 ms, record n carrying n.
func (k *stream) produce() {
	defer k.wg.Done()
	for {
		select {
		case <-k.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
		var recs []*kgo.Record
		k.mu.Lock()
		for i := 0; i < 5; i++ {
			n := k.invoked
			k.invoked++
			ts := time.Date(2024, 5, 1, int(n%24), int(n%60), 0, 0, time.UTC).Format(time.RFC3339)
			recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf(`{"ts":%q,"page":"p%d","n":%d}`, ts, n%7, n))})
		}
		k.mu.Unlock()
		results := k.prod.ProduceSync(context.Background(), recs...)
		k.mu.Lock()
		for _, r := range results {
			if r.Err != nil {
				k.failed++
				continue
			}
			var v struct{ N int64 }
			json.Unmarshal(r.Record.Value, &v)
			k.acked++
			k.ackedSum += v.N
		}
		k.mu.Unlock()
	}
}

func (k *stream) stop() {
	select {
	case <-k.done:
	default:
		close(k.done)
	}
	k.wg.Wait()
	k.prod.Close()
	k.kc.Close()
}

// served is the stream's rows and sum of n that router r answers.
func (k *stream) served(r *Proc) (rows, sum int64, err error) {
	q := fmt.Sprintf(`{"queryType":"timeseries","dataSource":%q,"intervals":["2024-05-01/2024-05-02"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"rows","fieldName":"count"},{"type":"longSum","name":"sum","fieldName":"n"}]}`, streamTopic)
	code, body, err := k.c.HTTP.do(k.ctx, "POST", r.URL()+"/svc/v2/", []byte(q), nil)
	if err != nil {
		return 0, 0, err
	}
	if code != 200 {
		return 0, 0, fmt.Errorf("status %d: %s", code, abbreviate(body))
	}
	var res []struct {
		Result struct{ Rows, Sum int64 } `json:"result"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return 0, 0, err
	}
	if len(res) == 0 {
		return 0, 0, nil
	}
	return res[0].Result.Rows, res[0].Result.Sum, nil
}

// progress waits until each router serves at least the records acknowledged
// when it was called (ingestion goes on), failing on more rows than records
// produced (a record counted twice).
func (k *stream) progress(routers []*Proc, timeout time.Duration) {
	k.t.Helper()
	k.mu.Lock()
	target := max(k.acked, 1)
	k.mu.Unlock()
	start := time.Now()
	for _, r := range routers {
		var last string
		for {
			rows, _, err := k.served(r)
			k.mu.Lock()
			invoked := k.invoked
			k.mu.Unlock()
			if err == nil && rows > invoked {
				k.t.Fatalf("stream through %s: %d rows served, only %d records produced", r.Name, rows, invoked)
			}
			if err == nil && rows >= target {
				break
			}
			last = fmt.Sprintf("%d rows, want %d (%v)", rows, target, err)
			if time.Since(start) > timeout {
				k.t.Fatalf("stream through %s: ingestion did not keep up within %s: %s", r.Name, timeout, last)
			}
			sleep(k.ctx, 250*time.Millisecond)
		}
	}
	k.t.Logf("stream: %d records acknowledged were served through every router after %s", target, time.Since(start).Round(100*time.Millisecond))
}

// exactlyOnce stops producing and waits until every router serves exactly
// the acknowledged records, each once.
func (k *stream) exactlyOnce(routers []*Proc, timeout time.Duration) {
	k.t.Helper()
	close(k.done)
	k.wg.Wait()
	k.mu.Lock()
	acked, sum, failed := k.acked, k.ackedSum, k.failed
	k.mu.Unlock()
	if failed > 0 {
		k.t.Fatalf("%d records failed to produce; exactly-once cannot be checked", failed)
	}
	deadline := time.Now().Add(timeout)
	for _, r := range routers {
		for {
			rows, got, err := k.served(r)
			if err == nil && rows == acked && got == sum {
				break
			}
			if err == nil && rows > acked {
				k.t.Fatalf("stream through %s: %d rows served for %d records", r.Name, rows, acked)
			}
			if time.Now().After(deadline) {
				k.t.Fatalf("stream through %s: %d rows with sum %d served (%v), want %d with sum %d", r.Name, rows, got, err, acked, sum)
			}
			sleep(k.ctx, 500*time.Millisecond)
		}
	}
	k.t.Logf("stream: %d records produced, %d served through every router, each once", acked, acked)
}
