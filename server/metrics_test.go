package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"strata/ingest/nativebatch"
	"strata/internal/eventually"
	"strata/metrics"
	"strata/props"
	"strata/protocol"
	"strata/querynode/historical"
)

// scrape reads url's /metrics and parses it with Prometheus' own parser,
// with the classic (pre-UTF-8) name rules every scraper accepts.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET %s/metrics: Content-Type %q, want the text exposition", url, ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s/metrics does not parse: %v", url, err)
	}
	return fams
}

// sample is the value of the family's series with the given labels (a
// counter's, a gauge's, a histogram's count), and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Summary != nil:
			return float64(m.GetSummary().GetSampleCount()), true
		}
	}
	return 0, false
}

// serve serves s's handler until the test ends, returning its URL.
func serve(t *testing.T, s *Server) string {
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// Every role serves /metrics in the text exposition, with the Go runtime
// and process collectors and the HTTP family; a broker and a historical
// count the queries they answered by type and data source; a control node
// reports its Raft state and raft's own timings (go-metrics, bridged).
func TestMetricsEveryRole(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	f.publish(f.segment("wiki", "2024-01-01/2024-01-02", "v1", 0, 1, []dpRow{
		{"2024-01-01T01:00:00Z", "a", 1}, {"2024-01-01T02:00:00Z", "b", 10}}))
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 1)
	const ts = `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	for range 2 {
		if code, body, _ := b.query(t, ts); code != http.StatusOK {
			t.Fatalf("query: %d %s", code, body)
		}
	}
	// A query that fails once running: its answers exceed its
	// maxScatterGatherBytes.
	const bad = `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"n"}],"context":{"maxScatterGatherBytes":1}}`
	if code, body, _ := b.query(t, bad); code == http.StatusOK {
		t.Fatalf("query over its maxScatterGatherBytes answered 200: %s", body)
	}

	mm, err := New(Options{Roles: []string{RoleMiddleManager}})
	if err != nil {
		t.Fatal(err)
	}
	router, err := New(Options{Roles: []string{RoleRouter}})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{
		"coordinator+overlord": f.coord,
		"broker":               b.url,
		"historical":           h.url,
		"middleManager":        serve(t, mm),
		"router":               serve(t, router),
	}
	for role, url := range roles {
		call(t, "GET", url+"/status", "", "") // one request the HTTP family counts
		fams := scrape(t, url)
		for _, name := range []string{"go_goroutines", "go_gc_duration_seconds", "process_cpu_seconds_total", "strata_http_requests_total"} {
			if fams[name] == nil {
				t.Errorf("%s: no %s", role, name)
			}
		}
		if n, _ := sample(fams, "strata_http_requests_total", map[string]string{"route": "/status", "method": "GET", "code": "200"}); n < 1 {
			t.Errorf("%s: strata_http_requests_total{route=/status,code=200} = %v, want ≥ 1", role, n)
		}
	}

	// Three queries: the broker answered two and failed one, whose
	// sub-query the historical answered.
	q := map[string]string{"dataSource": "wiki", "type": "timeseries"}
	want := map[string]map[string]float64{
		"broker":     {"druid_query_time": 3, "druid_query_count": 3, "druid_query_success_count": 2, "druid_query_failed_count": 1},
		"historical": {"druid_query_time": 3, "druid_query_count": 3, "druid_query_success_count": 3, "druid_query_failed_count": 0, "druid_query_segments_count": 3},
	}
	for role, url := range map[string]string{"broker": b.url, "historical": h.url} {
		fams := scrape(t, url)
		for name, n := range want[role] {
			if got, _ := sample(fams, name, q); got != n {
				t.Errorf("%s: %s{dataSource=wiki,type=timeseries} = %v, want %v", role, name, got, n)
			}
		}
	}
	hist := strings.TrimPrefix(h.url, "http://")
	if n, _ := sample(scrape(t, b.url), "druid_query_node_count", map[string]string{"server": hist}); n != 3 {
		t.Errorf("broker: druid_query_node_count{server=historical} = %v, want 3", n)
	}

	fams := scrape(t, f.coord)
	if v, ok := sample(fams, "strata_raft_node_is_leader", nil); !ok || v != 1 {
		t.Errorf("coordinator: strata_raft_node_is_leader = %v (%v), want 1", v, ok)
	}
	if v, _ := sample(fams, "strata_raft_node_commit_index", nil); v < 1 {
		t.Errorf("coordinator: strata_raft_node_commit_index = %v, want ≥ 1 (a segment was published)", v)
	}
	if _, ok := sample(fams, "strata_raft_commitTime", nil); !ok {
		t.Errorf("coordinator: no strata_raft_commitTime: raft's go-metrics are not bridged")
	}
	if v, _ := sample(fams, "druid_segment_count", map[string]string{"dataSource": "wiki"}); v != 1 {
		t.Errorf("coordinator: druid_segment_count{dataSource=wiki} = %v, want 1", v)
	}
	if v, _ := sample(fams, "druid_segment_size", map[string]string{"dataSource": "wiki"}); v <= 0 {
		t.Errorf("coordinator: druid_segment_size{dataSource=wiki} = %v, want the segment's bytes", v)
	}
	// The coordinator's inventory polls the historical on its own period.
	srv := map[string]string{"server": strings.TrimPrefix(h.url, "http://"), "tier": "_default_tier"}
	eventually.True(t, "the coordinator to see the historical serve its segment, with nothing queued", func() bool {
		fams := scrape(t, f.coord)
		loaded, _ := sample(fams, "druid_segment_loaded_count", srv)
		queued, ok := sample(fams, "druid_segment_loadQueue_count", srv)
		return loaded == 1 && ok && queued == 0
	})
	if _, ok := sample(scrape(t, b.url), "strata_raft_node_is_leader", nil); ok {
		t.Errorf("broker reports Raft state it does not have")
	}
}

// TestQueryPathMetricsCost measures a timeseries query through a broker
// and a historical with the query metrics recorded and without, the modes
// alternating over rounds (the HTTP family's cost is metrics'
// BenchmarkHTTPInstrument). A measurement, not a check: run it with
// STRATA_BENCH_METRICS=1 (the fixtures need a *testing.T, which a
// Benchmark function has not).
func TestQueryPathMetricsCost(t *testing.T) {
	if os.Getenv("STRATA_BENCH_METRICS") == "" {
		t.Skip("a measurement: set STRATA_BENCH_METRICS=1 to run it")
	}
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	f.publish(f.segment("wiki", "2024-01-01/2024-01-02", "v1", 0, 1, []dpRow{
		{"2024-01-01T01:00:00Z", "a", 1}, {"2024-01-01T02:00:00Z", "b", 10}}))
	br := startBroker(t, []string{h.url}, nil)
	br.b.Start()
	br.waitSegments(t, "wiki", 1)
	body := []byte(`{"queryType":"timeseries","dataSource":"wiki","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`)
	m := metrics.New().Queries
	ns := map[bool][]float64{}
	for round := 0; round < 6; round++ {
		for _, on := range []bool{false, true} {
			q := m
			if !on {
				q = nil
			}
			br.b.SetMetrics(q)
			h.node.SetMetrics(q)
			r := testing.Benchmark(func(b *testing.B) {
				for b.Loop() {
					if _, _, _, qerr := br.b.QueryWithContext(context.Background(), body); qerr != nil {
						b.Fatal(qerr)
					}
				}
			})
			ns[on] = append(ns[on], float64(r.NsPerOp()))
			t.Logf("metrics=%v: %s", on, r)
		}
	}
	med := func(v []float64) float64 { slices.Sort(v); return (v[len(v)/2-1] + v[len(v)/2]) / 2 }
	off, on := med(ns[false]), med(ns[true])
	t.Logf("median ns/op: without %.0f, with %.0f: %+.2f%%", off, on, 100*(on-off)/off)
}

// rowsOfReport reads a batch task's ingestionStatsAndErrors report (the
// counters under buildSegments) and a Kafka task's progress (directly).
func TestRowsOfReport(t *testing.T) {
	batch := nativebatch.MakeReport("t1", nativebatch.StateCompleted, nativebatch.RowStats{Processed: 5, ThrownAway: 2, Unparseable: 1}, nil, true, 0, 1)
	if got, ok := rowsOfReport(string(batch)); !ok || got != (reportRows{Processed: 5, ThrownAway: 2, Unparseable: 1}) {
		t.Errorf("batch report: %+v %v", got, ok)
	}
	progress := `{"kafkaProgress":{"type":"kafkaProgress","payload":{"stream":"s","currentOffsets":{"0":3},"rowStats":{"processed":3,"processedWithError":1}}}}`
	if got, ok := rowsOfReport(progress); !ok || got != (reportRows{Processed: 3, ProcessedWithError: 1}) {
		t.Errorf("progress report: %+v %v", got, ok)
	}
	for _, r := range []string{"", "{}", `{"x":{"payload":{}}}`, "not json"} {
		if got, ok := rowsOfReport(r); ok {
			t.Errorf("%q: rows %+v", r, got)
		}
	}
}

// svc.metrics.queryPath=false (the cost measurement's "off" side) leaves
// the query and HTTP families empty; the default records both.
func TestQueryPathMetricsOff(t *testing.T) {
	for _, on := range []bool{true, false} {
		n, err := historical.New(historical.Config{Name: "127.0.0.1:1", LocalOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		p := props.Defaults()
		p.Set("svc.metrics.queryPath", strconv.FormatBool(on))
		s, err := New(Options{Roles: []string{RoleHistorical}, Props: p, Historical: n})
		if err != nil {
			t.Fatal(err)
		}
		url := serve(t, s)
		call(t, "GET", url+"/status", "", "")
		sq := &protocol.SubQuery{Query: json.RawMessage(`{"queryType":"timeseries","dataSource":"wiki","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`)}
		if _, err := n.Query(context.Background(), sq); err != nil {
			t.Fatal(err)
		}
		fams := scrape(t, url)
		queries, _ := sample(fams, "druid_query_count", map[string]string{"dataSource": "wiki", "type": "timeseries"})
		requests, _ := sample(fams, "strata_http_requests_total", map[string]string{"route": "/status"})
		if want := map[bool]float64{true: 1, false: 0}[on]; queries != want || requests != want {
			t.Errorf("svc.metrics.queryPath=%v: %v sub-queries and %v /status requests counted, want %v", on, queries, requests, want)
		}
		n.Close()
	}
}
