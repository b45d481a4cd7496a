package process

import (
	"fmt"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"strata/internal/eventually"
)

// kafkaLags scrapes url's /metrics with Prometheus' parser and returns the
// events supervisor's partition lags by partition and its total (-1: none).
func kafkaLags(t *testing.T, url string) (map[string]float64, float64) {
	t.Helper()
	code, _, body := do(t, "GET", url+"/metrics", "", "", nil)
	if code != 200 {
		t.Fatalf("GET %s/metrics: %d %s", url, code, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s/metrics does not parse: %v", url, err)
	}
	labels := func(ls []*dto.LabelPair) map[string]string {
		m := map[string]string{}
		for _, l := range ls {
			m[l.GetName()] = l.GetValue()
		}
		return m
	}
	parts, total := map[string]float64{}, -1.0
	if f := fams["druid_ingest_kafka_partitionLag"]; f != nil {
		for _, m := range f.GetMetric() {
			if l := labels(m.GetLabel()); l["supervisor"] == "events" && l["dataSource"] == "events" && l["stream"] == "events" {
				parts[l["partition"]] = m.GetGauge().GetValue()
			}
		}
	}
	if f := fams["druid_ingest_kafka_lag"]; f != nil {
		for _, m := range f.GetMetric() {
			if labels(m.GetLabel())["supervisor"] == "events" {
				total = m.GetGauge().GetValue()
			}
		}
	}
	return parts, total
}

// The leader's /metrics shows a Kafka supervisor's lag per partition of its
// topic, summing to its total, and 0 once its task has read the backlog, as
// its status report's aggregateLag.
func TestKafkaLagMetrics(t *testing.T) {
	k, _, _ := newKafkaStack(t, 1)
	k.produce(100)
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.spec("PT1H", 1), nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	leader := k.c.url(k.c.leader())
	var parts map[string]float64
	var total float64
	eventually.True(t, "both partitions' lag on /metrics, caught up", func() bool {
		parts, total = kafkaLags(t, leader)
		if len(parts) != 2 || total < 0 {
			return false
		}
		if parts["0"]+parts["1"] != total {
			t.Fatalf("partition lags %v do not sum to the total %v", parts, total)
		}
		agg, _ := k.status()["aggregateLag"].(float64)
		return total == 0 && agg == 0
	}, slow, eventually.Showing(func() string { return fmt.Sprintf("partitions %v, total %v", parts, total) }))

	// The rows the task processed, from its progress reports in the state.
	var processed float64
	eventually.True(t, "the task's 100 rows in druid_ingest_events_processed", func() bool {
		processed = gauge(t, leader, "druid_ingest_events_processed", map[string]string{"dataSource": "events", "taskType": "index_kafka"})
		return processed == 100
	}, slow, eventually.Showing(func() string { return fmt.Sprint(processed) }))
	// Its one reading task, running.
	if n := gauge(t, leader, "druid_task_running_count", map[string]string{"dataSource": "events"}); n != 1 {
		t.Errorf("druid_task_running_count{dataSource=events} = %v, want the supervisor's one task", n)
	}
}

// gauge is the value of the series of url's /metrics family name with the
// given labels (-1: none).
func gauge(t *testing.T, url, name string, want map[string]string) float64 {
	t.Helper()
	_, _, body := do(t, "GET", url+"/metrics", "", "", nil)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s/metrics does not parse: %v", url, err)
	}
next:
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
				continue next
			}
		}
		return m.GetGauge().GetValue()
	}
	return -1
}
