package process

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"strata/internal/eventually"
	"strata/props"
)

// scrapeFamilies reads url's /metrics with Prometheus' own parser.
func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, _, body := do(t, "GET", url+"/metrics", "", "", nil)
	if code != 200 {
		t.Fatalf("GET %s/metrics: %d %s", url, code, body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s/metrics does not parse: %v", url, err)
	}
	return fams
}

// series is the value of family name's series with the given labels: a
// counter's value, a histogram's count and sum; ok false when there is none.
func series(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (v, sum float64, ok bool) {
next:
	for _, m := range fams[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, want := range labels {
			if have[k] != want {
				continue next
			}
		}
		if h := m.GetHistogram(); h != nil {
			return float64(h.GetSampleCount()), h.GetSampleSum(), true
		}
		return m.GetCounter().GetValue(), 0, true
	}
	return 0, 0, false
}

// A native batch task run by a middle manager process, in a cluster of
// separate processes (control node, historical, broker, middle manager):
// the middle manager's /metrics has its publish (one, of two segments and
// their bytes), its hand-off (the wait for the broker to see both loaded)
// and its run; a SQL INSERT's likewise; a query through the broker then
// shows on the historical as one sub-query whose two segments each have a
// scan and a wait time.
func TestIngestAndSegmentMetrics(t *testing.T) {
	ports := freePorts(t, 5)
	ctlURL := "http://" + ports[0]
	deep := t.TempDir()
	start := func(roles, addr string, extra map[string]string) string {
		p := props.Defaults()
		p.Set("svc.node.roles", roles)
		p.Set("svc.http.address", addr)
		p.Set("svc.data.dir", t.TempDir())
		p.Set("svc.storage.storageDirectory", deep)
		p.Set("svc.discovery.coordinators", ctlURL)
		p.Set("svc.discovery.heartbeatPeriod", "100ms")
		for k, v := range extra {
			p.Set(k, v)
		}
		proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
		if err != nil {
			t.Fatalf("start %s: %v", roles, err)
		}
		t.Cleanup(func() { proc.Close() })
		return "http://" + addr
	}
	start("coordinator,overlord", ports[0], map[string]string{"svc.raft.address": ports[1], "svc.coordinator.inventory.period": "50ms"})
	hist := start("historical", ports[2], map[string]string{"svc.historical.pollPeriod": "50ms"})
	brk := start("broker", ports[3], map[string]string{"svc.broker.pollPeriod": "50ms"})
	mm := start("middleManager", ports[4], map[string]string{"svc.worker.capacity": "2", "svc.worker.heartbeatPeriod": "100ms"})
	eventually.True(t, "the middle manager to register", func() bool {
		_, _, body := do(t, "GET", ctlURL+"/svc/indexer/v1/workers", "", "", nil)
		return strings.Contains(body, ports[4])
	}, slow)

	data, _ := json.Marshal(`{"ts":"2024-01-01T01:00:00Z","page":"a"}` + "\n" + `{"ts":"2024-01-01T02:00:00Z","page":"b"}` + "\n" +
		`{"ts":"2024-01-02T01:00:00Z","page":"c"}` + "\n")
	task := `{"type":"index_parallel","id":"metrics-batch","spec":{"dataSchema":{"dataSource":"w","timestampSpec":{"column":"ts","format":"auto"},
"dimensionsSpec":{"dimensions":["page"]},"granularitySpec":{"segmentGranularity":"day","queryGranularity":"none","rollup":false}},
"ioConfig":{"type":"index_parallel","inputSource":{"type":"inline","data":` + string(data) + `},"inputFormat":{"type":"json"}},
"tuningConfig":{"type":"index_parallel","awaitSegmentAvailabilityTimeoutMillis":60000}}}`
	if code, _, body := do(t, "POST", ctlURL+"/svc/indexer/v1/task", "application/json", task, nil); code != 200 {
		t.Fatalf("submit: %d %s", code, body)
	}
	var status, report string
	eventually.True(t, "the task to end", func() bool {
		_, _, status = do(t, "GET", ctlURL+"/svc/indexer/v1/task/metrics-batch/status", "", "", nil)
		return strings.Contains(status, `"status":"SUCCESS"`) || strings.Contains(status, `"status":"FAILED"`)
	}, slow, eventually.Showing(func() string { return status }))
	_, _, report = do(t, "GET", ctlURL+"/svc/indexer/v1/task/metrics-batch/reports", "", "", nil)
	if !strings.Contains(status, `"status":"SUCCESS"`) || !strings.Contains(report, `"segmentAvailabilityConfirmed":true`) ||
		!strings.Contains(report, `"segmentsPublished":2`) {
		t.Fatalf("task: %s\nreport: %s", status, report)
	}

	fams := scrapeFamilies(t, mm)
	task1 := map[string]string{"dataSource": "w", "taskType": "index_parallel"}
	for name, want := range map[string]float64{
		"strata_ingest_publish_duration_seconds": 1, // one publish...
		"druid_ingest_segments_count":            2, // ...of two segments
		"druid_ingest_handoff_time":              1, // one wait for them to load...
		"druid_ingest_handoff_count":             2, // ...which saw both
	} {
		if got, _, ok := series(fams, name, task1); !ok || got != want {
			t.Errorf("middle manager: %s{dataSource=w,taskType=index_parallel} = %v (%v), want %v", name, got, ok, want)
		}
	}
	if got, _, ok := series(fams, "druid_ingest_handoff_failed", task1); ok && got != 0 {
		t.Errorf("middle manager: %v failed hand-offs", got)
	}
	if b, _, _ := series(fams, "druid_segment_added_bytes", task1); b <= 0 {
		t.Errorf("middle manager: druid_segment_added_bytes = %v, want the two segments' bytes", b)
	}
	// The run ends after the report is written: the worker records it as
	// the task returns, at most a moment after the overlord has its status.
	eventually.True(t, "the task's run time", func() bool {
		n, sum, _ := series(scrapeFamilies(t, mm), "druid_task_run_time", task1)
		return n == 1 && sum > 0
	}, slow)

	// A SQL INSERT of the same rows: a query_controller task, which waits
	// for its segments to load (waitUntilSegmentsLoad) as Druid's does.
	src := `{"type":"inline","data":` + string(data) + `}`
	sqlBody, _ := json.Marshal(map[string]string{"query": `INSERT INTO s SELECT TIME_PARSE(ts) AS __time, page FROM TABLE(EXTERN('` +
		strings.ReplaceAll(src, "'", "''") + `', '{"type":"json"}')) EXTEND (ts VARCHAR, page VARCHAR) PARTITIONED BY DAY`})
	if _, st, msg := runSQLTask(t, ctlURL, string(sqlBody)); st != "SUCCESS" {
		t.Fatalf("SQL task: %s %s", st, msg)
	}
	fams = scrapeFamilies(t, mm)
	sqlTask := map[string]string{"dataSource": "s", "taskType": "query_controller"}
	for name, want := range map[string]float64{
		"strata_ingest_publish_duration_seconds": 1,
		"druid_ingest_segments_count":            2,
		"druid_ingest_handoff_time":              1,
		"druid_ingest_handoff_count":             2,
	} {
		if got, _, ok := series(fams, name, sqlTask); !ok || got != want {
			t.Errorf("middle manager: %s{dataSource=s,taskType=query_controller} = %v (%v), want %v", name, got, ok, want)
		}
	}

	const ts = `{"queryType":"timeseries","dataSource":"w","intervals":["2024-01-01/2024-01-03"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	if code, _, body := do(t, "POST", brk+"/svc/v2/", "application/json", ts, nil); code != 200 || !strings.Contains(body, `"n":3`) {
		t.Fatalf("query: %d %s", code, body)
	}
	fams = scrapeFamilies(t, hist)
	q := map[string]string{"dataSource": "w", "type": "timeseries"}
	for name, want := range map[string]float64{
		"druid_query_count":        1, // the broker's one sub-query...
		"druid_query_segment_time": 2, // ...read two segments
		"druid_query_wait_time":    2,
	} {
		if got, _, ok := series(fams, name, q); !ok || got != want {
			t.Errorf("historical: %s{dataSource=w,type=timeseries} = %v (%v), want %v", name, got, ok, want)
		}
	}
	// A segment's scan time is within its sub-query's.
	_, scans, _ := series(fams, "druid_query_segment_time", q)
	_, subQuery, _ := series(fams, "druid_query_time", q)
	if scans <= 0 || scans > 2*subQuery {
		t.Errorf("historical: segment times sum to %vs, the sub-query took %vs", scans, subQuery)
	}
	if _, _, ok := series(scrapeFamilies(t, brk), "druid_query_segment_time", q); ok {
		t.Error("the broker reports segment scan times: it reads no segment")
	}
}

// A Kafka task's published segments are served by its middle manager
// until a historical loads them: the middle manager's /metrics shows each
// publish and, once the coordinator reports the segments loaded, their
// hand-off, never more segments handed off than published.
func TestKafkaHandoffMetrics(t *testing.T) {
	k, mmAddr, _ := newKafkaStack(t, 1)
	mm := "http://" + mmAddr
	k.produce(40)
	if code, _, body := do(t, "POST", k.supervisors(), "application/json", k.spec("PT1S", 1), nil); code != 200 {
		t.Fatalf("create supervisor: %d %s", code, body)
	}
	kafka := map[string]string{"dataSource": "events", "taskType": "index_kafka"}
	var shown string
	eventually.True(t, "a Kafka task's segments handed off", func() bool {
		fams := scrapeFamilies(t, mm)
		publishes, _, _ := series(fams, "strata_ingest_publish_duration_seconds", kafka)
		published, _, _ := series(fams, "druid_ingest_segments_count", kafka)
		handoffs, took, _ := series(fams, "druid_ingest_handoff_time", kafka)
		handedOff, _, _ := series(fams, "druid_ingest_handoff_count", kafka)
		shown = fmt.Sprintf("%v publishes of %v segments; %v hand-offs of %v segments taking %vs", publishes, published, handoffs, handedOff, took)
		if handedOff > published || handoffs > publishes {
			t.Fatalf("more handed off than published: %s", shown)
		}
		return handoffs >= 1 && handedOff >= 1 && took > 0
	}, slow, eventually.Showing(func() string { return shown }))
}
