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

	"strata/middlemanager"
	"strata/props"
)

// Kafka ingestion end to end, every piece a real process part: a control node
// (Raft, bbolt), a middle manager running index_kafka tasks, a historical and a
// broker, and a kfake broker. A supervisor keeps tasks reading; every record
// becomes queryable exactly once across task hand-overs, suspension and resume.
func TestKafkaSupervisorEndToEnd(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	sent := 0
	produce := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			// Spread over two hours and both partitions; one record in 10 has a
			// second page value.
			ts := time.Date(2024, 1, 1, sent%2, sent%60, 0, 0, time.UTC).Format(time.RFC3339)
			page := "home"
			if sent%10 == 0 {
				page = "about"
			}
			rec := &kgo.Record{Key: []byte(fmt.Sprint(sent)), Value: []byte(fmt.Sprintf(`{"ts":%q,"page":%q,"n":%d}`, ts, page, sent))}
			if err := producer.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}

	c := startCluster(t, 1, nil)
	ctl := c.url(c.leader())
	ports := freePorts(t, 3)
	deepDir := t.TempDir()
	mp := props.Defaults()
	mp.Set("svc.node.roles", "middleManager")
	mp.Set("svc.http.address", ports[0])
	mp.Set("svc.data.dir", t.TempDir())
	mp.Set("svc.worker.overlordUrls", ctl)
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
		"svc.historical.coordinatorUrls": ctl, "svc.historical.pollPeriod": "20ms", "svc.storage.storageDirectory": deepDir,
	})
	startRole(t, "broker", ports[2], map[string]string{"svc.broker.historicalUrls": "http://" + ports[1], "svc.broker.pollPeriod": "20ms"})
	broker := "http://" + ports[2]

	produce(40)
	spec := fmt.Sprintf(`{"type":"kafka","spec":{
	  "dataSchema":{"dataSource":"events","timestampSpec":{"column":"ts","format":"iso"},
	    "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
	    "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
	  "ioConfig":{"topic":"events","consumerProperties":{"bootstrap.servers":%q},"taskCount":1,
	    "taskDuration":"PT1S","startDelay":"PT0S","period":"PT0.2S","useEarliestOffset":true,"inputFormat":{"type":"json"}},
	  "tuningConfig":{"type":"kafka"}}}`, strings.Join(kc.ListenAddrs(), ","))
	sup := ctl + "/svc/indexer/v1/supervisor"
	if code, _, body := do(t, "POST", sup, "application/json", spec, nil); code != 200 || body != `{"id":"events"}` {
		t.Fatalf("create supervisor: %d %s", code, body)
	}

	// rows and sum read what the broker serves: count and sum(n) over everything.
	served := func() (rows, sum int64) {
		code, _, body := do(t, "POST", broker+"/svc/v2/", "application/json", `{"queryType":"timeseries","dataSource":"events",
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
	// Exactly once: the row count and the sum of the distinct n values both
	// match what was sent, never more.
	waitServed := func(what string) {
		t.Helper()
		want := int64(sent * (sent - 1) / 2)
		deadline := time.Now().Add(60 * time.Second)
		for {
			rows, sum := served()
			if rows > int64(sent) || (rows == int64(sent) && sum != want) {
				t.Fatalf("%s: %d rows with sum %d served for %d records sent (sum %d): duplicates", what, rows, sum, sent, want)
			}
			if rows == int64(sent) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d rows served, want %d", what, rows, sent)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitServed("first records")
	produce(25)
	waitServed("records read by a later task")

	status := func() map[string]any {
		_, _, body := do(t, "GET", sup+"/events/status", "", "", nil)
		var st struct {
			Payload map[string]any `json:"payload"`
		}
		json.Unmarshal([]byte(body), &st)
		return st.Payload
	}
	waitFor(t, "the supervisor to run healthy", func() bool {
		p := status()
		return p["state"] == "RUNNING" && p["healthy"] == true
	})

	// Suspended: no task reads, so new records wait in Kafka; resumed, they
	// arrive once.
	if code, _, body := do(t, "POST", sup+"/events/suspend", "", "", nil); code != 200 {
		t.Fatalf("suspend: %d %s", code, body)
	}
	waitFor(t, "SUSPENDED", func() bool { return status()["state"] == "SUSPENDED" })
	rows, _ := served()
	produce(15)
	time.Sleep(2 * time.Second) // several periods and task durations
	if now, _ := served(); now != rows {
		t.Fatalf("a suspended supervisor ingested: %d rows, then %d", rows, now)
	}
	if code, _, body := do(t, "POST", sup+"/events/resume", "", "", nil); code != 200 {
		t.Fatalf("resume: %d %s", code, body)
	}
	waitServed("records sent while suspended")

	// Terminated: gone from the list, a tombstone in its history.
	if code, _, body := do(t, "POST", sup+"/events/terminate", "", "", nil); code != 200 {
		t.Fatalf("terminate: %d %s", code, body)
	}
	if _, _, body := do(t, "GET", sup, "", "", nil); body != "[]" {
		t.Fatalf("supervisors after terminate: %s", body)
	}
	_, _, hist := do(t, "GET", sup+"/events/history", "", "", nil)
	if !strings.Contains(hist, "NoopSupervisorSpec") {
		t.Fatalf("history has no tombstone: %s", hist)
	}
}
