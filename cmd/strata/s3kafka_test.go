package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strata/internal/eventually"
	"strata/storage/deep/s3test"
)

// Kafka ingestion on S3 deep storage, real processes wired by discovery: a
// supervisor's tasks read a kfake topic, hand their segments off through the
// bucket (one archive per hour chunk and task), and the broker counts every
// record exactly once before and after the hand-off, when the historical
// serves what it downloaded from the bucket.
func TestKafkaOnS3(t *testing.T) {
	srv := s3test.Start(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	producer, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	const records = 60
	for i := range records {
		ts := time.Date(2024, 1, 1, i%2, i%60, 0, 0, time.UTC).Format(time.RFC3339)
		rec := &kgo.Record{Value: []byte(fmt.Sprintf(`{"ts":%q,"page":"p%d","n":%d}`, ts, i%3, i))}
		if err := producer.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	addrs := freeAddrs(t, 5)
	control, raftAddr, hist, broker, mm := addrs[0], addrs[1], addrs[2], addrs[3], addrs[4]
	coordinators := "http://" + control
	start := s3Starter(t, srv, "kafka")
	start("control", "server", "--id", "c1", "--roles", "coordinator,overlord", "--http", control, "--raft", raftAddr,
		"--data", t.TempDir(), "--coordinators", coordinators,
		"--set", "svc.coordinator.inventory.period=100ms", "--set", "svc.coordinator.startDelay=500ms")
	start("historical", "server", "--roles", "historical", "--http", hist, "--data", t.TempDir(), "--coordinators", coordinators)
	start("broker", "server", "--roles", "broker", "--http", broker, "--data", t.TempDir(), "--coordinators", coordinators)
	start("middleManager", "server", "--roles", "middleManager", "--http", mm, "--data", t.TempDir(), "--coordinators", coordinators,
		"--set", "svc.worker.capacity=2")
	waitWorker(t, control, mm)

	spec := fmt.Sprintf(`{"type":"kafka","spec":{
	  "dataSchema":{"dataSource":"events","timestampSpec":{"column":"ts","format":"iso"},
	    "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"n","fieldName":"n"}],
	    "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
	  "ioConfig":{"topic":"events","consumerProperties":{"bootstrap.servers":%q},"taskCount":1,
	    "taskDuration":"PT2S","startDelay":"PT0S","period":"PT0.2S","useEarliestOffset":true,"inputFormat":{"type":"json"}},
	  "tuningConfig":{"type":"kafka"}}}`, strings.Join(kc.ListenAddrs(), ","))
	if got := post(t, "http://"+control+"/svc/indexer/v1/supervisor", spec); got != `{"id":"events"}` {
		t.Fatalf("create supervisor: %s", got)
	}
	query := `{"queryType":"timeseries","dataSource":"events","intervals":["2024-01-01/2024-01-02"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"rows","fieldName":"count"},{"type":"longSum","name":"sum","fieldName":"n"}]}`
	served := func() (rows, sum int64) {
		var res []struct {
			Result struct{ Rows, Sum int64 } `json:"result"`
		}
		if json.Unmarshal([]byte(post(t, "http://"+broker+"/svc/v2/", query)), &res) != nil || len(res) == 0 {
			return 0, 0
		}
		return res[0].Result.Rows, res[0].Result.Sum
	}
	const wantSum = records * (records - 1) / 2
	check := func(what string) {
		t.Helper()
		var rows, sum int64
		eventually.True(t, what, func() bool {
			rows, sum = served()
			if rows > records || rows == records && sum != wantSum {
				t.Fatalf("%s: %d rows with sum %d for %d records (sum %d)", what, rows, sum, records, wantSum)
			}
			return rows == records
		}, eventually.Within(time.Minute), eventually.Showing(func() string { return fmt.Sprintf("%d rows, sum %d", rows, sum) }))
	}
	check("every record served")

	// The tasks hand off: both hour chunks published as archives in the
	// bucket, downloaded by the historical.
	var objects []string
	eventually.True(t, "both hours published to the bucket and downloaded", func() bool {
		objects = slices.Sorted(maps.Keys(srv.Objects(t)))
		hours := map[string]bool{}
		for _, o := range objects {
			if strings.HasPrefix(o, "kafka/events/") && strings.HasSuffix(o, "/index.zip") {
				hours[strings.Split(o, "/")[2][:13]] = true
			}
		}
		downloads := 0
		for _, r := range srv.Requests() {
			if r.Method == "GET" && r.Status == http.StatusOK && strings.HasSuffix(r.Path, "/index.zip") {
				downloads++
			}
		}
		return len(hours) == 2 && downloads >= 2
	}, eventually.Within(time.Minute), eventually.Showing(func() string { return strings.Join(objects, " ") }))
	for _, o := range objects {
		if !strings.HasPrefix(o, "kafka/events/") {
			t.Errorf("object outside the datasource's keys: %s", o)
		}
	}
	check("every record served once the historical serves the hand-off")
	for _, r := range srv.Requests() {
		if r.Status == http.StatusForbidden {
			t.Fatalf("refused request %+v", r)
		}
	}
}
