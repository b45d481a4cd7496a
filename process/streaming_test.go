package process

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/props"
)

// kafkaPipeline is Kafka ingestion with every piece a real process part:
// control nodes (Raft, bbolt), a middle manager running index_kafka tasks, a
// historical and a broker, and a kfake broker with a two-partition topic.
type kafkaPipeline struct {
	t        *testing.T
	c        *testCluster
	kafka    *kfake.Cluster
	producer *kgo.Client
	broker   string
	sent     int
}

func newKafkaPipeline(t *testing.T, controlNodes int) *kafkaPipeline {
	k, _, hist := newKafkaStack(t, controlNodes)
	port := freePorts(t, 1)[0]
	startRole(t, "broker", port, map[string]string{"svc.broker.historicalUrls": "http://" + hist, "svc.broker.pollPeriod": "20ms"})
	k.broker = "http://" + port
	return k
}

// newKafkaStack starts the kfake broker, the control nodes, a middle manager
// and a historical, and returns the pipeline without a broker, with the
// middle manager's and the historical's addresses.
func newKafkaStack(t *testing.T, controlNodes int) (k *kafkaPipeline, mm, hist string) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	producer, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	// Deep storage is shared: the control nodes accept only load specs in it.
	deepDir := t.TempDir()
	c := startCluster(t, controlNodes, map[string]string{"svc.worker.heartbeatTimeout": "3s", "svc.storage.storageDirectory": deepDir})
	c.leader()
	var urls []string
	for i := range c.procs {
		urls = append(urls, c.url(i))
	}
	ports := freePorts(t, 2)
	mp := props.Defaults()
	mp.Set("svc.node.roles", "middleManager")
	mp.Set("svc.http.address", ports[0])
	mp.Set("svc.data.dir", t.TempDir())
	mp.Set("svc.worker.overlordUrls", strings.Join(urls, ","))
	mp.Set("svc.worker.capacity", "2")
	mp.Set("svc.worker.heartbeatPeriod", "100ms")
	mp.Set("svc.storage.storageDirectory", deepDir)
	mmProc, err := StartServer(mp, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	worker := middlemanager.Attached(mp)
	t.Cleanup(func() {
		mmProc.Close()
		<-worker.Done()
	})
	startRole(t, "historical", ports[1], map[string]string{
		"svc.historical.coordinatorUrls": strings.Join(urls, ","), "svc.historical.pollPeriod": "20ms", "svc.storage.storageDirectory": deepDir,
	})
	return &kafkaPipeline{t: t, c: c, kafka: kc, producer: producer}, ports[0], ports[1]
}

// produce sends n records spread over two hours and both partitions; record
// k carries n=k, so the sum of n tells duplicates from other records.
func (k *kafkaPipeline) produce(n int) {
	k.t.Helper()
	for i := 0; i < n; i++ {
		ts := time.Date(2024, 1, 1, k.sent%2, k.sent%60, 0, 0, time.UTC).Format(time.RFC3339)
		page := "home"
		if k.sent%10 == 0 {
			page = "about"
		}
		rec := &kgo.Record{Key: []byte(fmt.Sprint(k.sent)), Value: []byte(fmt.Sprintf(`{"ts":%q,"page":%q,"n":%d}`, ts, page, k.sent))}
		if err := k.producer.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			k.t.Fatal(err)
		}
		k.sent++
	}
}

// supervisors is the supervisor API on the current leader.
func (k *kafkaPipeline) supervisors() string {
	return k.c.url(k.c.leader()) + "/svc/indexer/v1/supervisor"
}

func (k *kafkaPipeline) spec(taskDuration string, taskCount int) string {
	return fmt.Sprintf(`{"type":"kafka","spec":{
	  "dataSchema":{"dataSource":"events","timestampSpec":{"column":"ts","format":"iso"},
	    "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
	    "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
	  "ioConfig":{"topic":"events","consumerProperties":{"bootstrap.servers":%q},"taskCount":%d,
	    "taskDuration":%q,"startDelay":"PT0S","period":"PT0.2S","useEarliestOffset":true,"inputFormat":{"type":"json"}},
	  "tuningConfig":{"type":"kafka"}}}`, strings.Join(k.kafka.ListenAddrs(), ","), taskCount, taskDuration)
}

// served is the row count and the sum of n that the broker serves.
func (k *kafkaPipeline) served() (rows, sum int64) {
	code, _, body := do(k.t, "POST", k.broker+"/svc/v2/", "application/json", `{"queryType":"timeseries","dataSource":"events",
	  "intervals":["2024-01-01/2024-01-02"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"rows","fieldName":"count"},{"type":"longSum","name":"sum","fieldName":"n"}]}`, nil)
	if code != 200 {
		return -1, -1
	}
	var res []struct {
		Result struct{ Rows, Sum int64 } `json:"result"`
	}
	if json.Unmarshal([]byte(body), &res) != nil || len(res) == 0 {
		return 0, 0
	}
	return res[0].Result.Rows, res[0].Result.Sum
}

// waitServed waits until every record sent is served, failing at once on
// more rows than records or a wrong sum: exactly once, never more.
func (k *kafkaPipeline) waitServed(what string) {
	k.t.Helper()
	want := int64(k.sent * (k.sent - 1) / 2)
	var rows, sum int64
	eventually.True(k.t, fmt.Sprintf("%s: %d rows served", what, k.sent), func() bool {
		rows, sum = k.served()
		if rows > int64(k.sent) || (rows == int64(k.sent) && sum != want) {
			k.t.Fatalf("%s: %d rows with sum %d served for %d records sent (sum %d): duplicates", what, rows, sum, k.sent, want)
		}
		return rows == int64(k.sent)
	}, eventually.Within(60*time.Second), eventually.Showing(func() string { return fmt.Sprintf("%d rows", rows) }))
}

func (k *kafkaPipeline) status() map[string]any {
	_, _, body := do(k.t, "GET", k.supervisors()+"/events/status", "", "", nil)
	var st struct {
		Payload map[string]any `json:"payload"`
	}
	json.Unmarshal([]byte(body), &st)
	return st.Payload
}

// A supervisor keeps tasks reading, two task groups (one per partition) at
// once, both appending to the same hour chunks; every record becomes queryable
// exactly once across task hand-overs, suspension and resume.
func TestKafkaSupervisorEndToEnd(t *testing.T) {
	k := newKafkaPipeline(t, 1)
	k.produce(40)
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.spec("PT1S", 2), nil); code != 200 || body != `{"id":"events"}` {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	eventually.True(t, "one task per group", func() bool {
		tasks, _ := k.status()["activeTasks"].([]any)
		return len(tasks) == 2
	}, slow)
	k.waitServed("first records")
	k.produce(25)
	k.waitServed("records read by a later task")
	eventually.True(t, "the supervisor to run healthy", func() bool {
		p := k.status()
		return p["state"] == "RUNNING" && p["healthy"] == true
	}, slow)

	// Suspended: no task reads, so new records wait in Kafka; resumed, they
	// arrive once.
	if code, _, body := do(t, "POST", k.supervisors()+"/events/suspend", "", "", nil); code != 200 {
		t.Fatalf("suspend: %d %s", code, body)
	}
	eventually.True(t, "SUSPENDED", func() bool { return k.status()["state"] == "SUSPENDED" }, slow)
	rows, _ := k.served()
	k.produce(15)
	time.Sleep(2 * time.Second) // several periods and task durations
	if now, _ := k.served(); now != rows {
		t.Fatalf("a suspended supervisor ingested: %d rows, then %d", rows, now)
	}
	if code, _, body := do(t, "POST", k.supervisors()+"/events/resume", "", "", nil); code != 200 {
		t.Fatalf("resume: %d %s", code, body)
	}
	k.waitServed("records sent while suspended")

	// Terminated: gone from the list, a tombstone in its history.
	if code, _, body := do(t, "POST", k.supervisors()+"/events/terminate", "", "", nil); code != 200 {
		t.Fatalf("terminate: %d %s", code, body)
	}
	if _, _, body := do(t, "GET", k.supervisors(), "", "", nil); body != "[]" {
		t.Fatalf("supervisors after terminate: %s", body)
	}
	_, _, hist := do(t, "GET", k.supervisors()+"/events/history", "", "", nil)
	if !strings.Contains(hist, "NoopSupervisorSpec") {
		t.Fatalf("history has no tombstone: %s", hist)
	}
}

// The control-plane leader is stopped while a task reads: a new leader takes
// up the supervisor and the running task, the task publishes through it, and
// every record is still served exactly once.
func TestKafkaIngestionSurvivesLeaderLoss(t *testing.T) {
	k := newKafkaPipeline(t, 3)
	k.produce(30)
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.spec("PT2S", 1), nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	k.waitServed("records before the leader loss")
	k.produce(20)
	// Stop the leader while a task is reading the new records.
	eventually.True(t, "a task reading", func() bool {
		tasks, _ := k.status()["activeTasks"].([]any)
		return len(tasks) > 0
	}, slow)
	old := k.c.leader()
	k.c.stop(old)
	k.produce(20)
	k.waitServed("records across the leader loss")
	if now := k.c.leader(); now == old {
		t.Fatal("the stopped node still leads")
	}
	eventually.True(t, "the supervisor healthy on the new leader", func() bool {
		p := k.status()
		return p["state"] == "RUNNING" && p["healthy"] == true
	}, slow)
}

// While a task is still reading (a long taskDuration, nothing published yet),
// the supervisor's lag follows the task's reported position down to zero;
// suspending makes the task publish what it read.
func TestKafkaLagFollowsRunningTask(t *testing.T) {
	k := newKafkaPipeline(t, 1)
	k.produce(30)
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.spec("PT60S", 1), nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	eventually.True(t, "zero lag while the task reads", func() bool {
		p := k.status()
		lag, _ := p["aggregateLag"].(float64)
		tasks, _ := p["activeTasks"].([]any)
		if len(tasks) != 1 || p["aggregateLag"] == nil || lag != 0 {
			return false
		}
		cur, _ := tasks[0].(map[string]any)["currentOffsets"].(map[string]any)
		return len(cur) == 2
	}, slow)
	if rows, _ := k.served(); rows > 0 {
		t.Fatalf("%d rows served before the task published", rows)
	}
	if code, _, body := do(t, "POST", k.supervisors()+"/events/suspend", "", "", nil); code != 200 {
		t.Fatalf("suspend: %d %s", code, body)
	}
	k.waitServed("records of the stopped task")
}

// statusAgrees fails unless a status payload's offsets and lags are one
// sample: the latest offsets at or past every task's position, each task's
// lag the difference, the minimum lag the difference from the furthest
// position, the aggregate lag the sum of the minimum lags.
func statusAgrees(t *testing.T, p map[string]any) {
	t.Helper()
	latest, _ := p["latestOffsets"].(map[string]any)
	if latest == nil {
		return // not measured yet
	}
	minimum, _ := p["minimumLag"].(map[string]any)
	active, _ := p["activeTasks"].([]any)
	publishing, _ := p["publishingTasks"].([]any)
	var sum float64
	for part, l := range latest {
		end, furthest := l.(float64), -1.0
		for _, task := range append(active, publishing...) {
			task := task.(map[string]any)
			offsets, _ := task["currentOffsets"].(map[string]any)
			cur, ok := offsets[part].(float64)
			if !ok {
				continue
			}
			if cur > end {
				t.Fatalf("partition %s: latest offset %v behind task %v at %v: %v", part, end, task["id"], cur, p)
			}
			lags, _ := task["lag"].(map[string]any)
			if lag, _ := lags[part].(float64); lag != end-cur {
				t.Fatalf("partition %s: task %v at %v shows lag %v, latest is %v: %v", part, task["id"], cur, lag, end, p)
			}
			furthest = max(furthest, cur)
		}
		m, _ := minimum[part].(float64)
		if furthest >= 0 && m != end-furthest {
			t.Fatalf("partition %s: minimum lag %v, but latest is %v and a task is at %v: %v", part, m, end, furthest, p)
		}
		sum += m
	}
	if agg, ok := p["aggregateLag"].(float64); !ok || agg != sum {
		t.Fatalf("aggregate lag %v, the minimum lags sum to %v: %v", p["aggregateLag"], sum, p)
	}
}

// Once a task caught up on a backlog, its supervisor's status says so at
// once and agrees with itself, though the next run is an hour away (the
// status measures the lag itself, in one sample), and /stats' moving
// averages count the rows the task read.
func TestKafkaStatusAfterBacklog(t *testing.T) {
	k, _, _ := newKafkaStack(t, 1)
	k.produce(200)
	spec := strings.Replace(k.spec("PT1H", 1), `"period":"PT0.2S"`, `"period":"PT1H"`, 1)
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", spec, nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	var p map[string]any
	eventually.True(t, "the task at the end of the backlog", func() bool {
		p = k.status()
		statusAgrees(t, p)
		tasks, _ := p["activeTasks"].([]any)
		if len(tasks) != 1 {
			return false
		}
		cur, _ := tasks[0].(map[string]any)["currentOffsets"].(map[string]any)
		var n float64
		for _, off := range cur {
			n += off.(float64)
		}
		return n == 200
	}, slow)
	if p["aggregateLag"] != 0.0 {
		t.Fatalf("caught up, yet aggregate lag %v: %v", p["aggregateLag"], p)
	}

	var stats map[string]map[string]struct {
		MovingAverages map[string]map[string]struct{ Processed float64 } `json:"movingAverages"`
		Totals         map[string]struct{ Processed int64 }              `json:"totals"`
	}
	var body string
	eventually.True(t, "the rows in /stats", func() bool {
		_, _, body = do(t, "GET", k.supervisors()+"/events/stats", "", "", nil)
		if err := json.Unmarshal([]byte(body), &stats); err != nil {
			t.Fatalf("stats %s: %v", body, err)
		}
		for _, tasks := range stats {
			for _, st := range tasks {
				return st.Totals["buildSegments"].Processed == 200
			}
		}
		return false
	}, slow)
	for _, tasks := range stats {
		for _, st := range tasks {
			for _, w := range []string{"1m", "5m", "15m"} {
				if st.MovingAverages["buildSegments"][w].Processed <= 0 {
					t.Fatalf("%s average is 0 after 200 rows read: %s", w, body)
				}
			}
		}
	}
}
