package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The query path's cost of the metrics: one Observe per query (a broker's
// and each data server's), one Instrument per HTTP request.
func BenchmarkQueryObserve(b *testing.B) {
	q := New().Queries
	for b.Loop() {
		q.Observe("timeseries", "wiki", time.Millisecond, 3, Success)
	}
}

func BenchmarkSubQuery(b *testing.B) {
	q := New().Queries
	for b.Loop() {
		q.SubQuery("127.0.0.1:8083")
	}
}

func BenchmarkHTTPInstrument(b *testing.B) {
	h := New().HTTP.Instrument("/svc/v2/", func(w http.ResponseWriter, r *http.Request) {})
	r := httptest.NewRequest(http.MethodPost, "/svc/v2/", nil)
	w := httptest.NewRecorder()
	for b.Loop() {
		h(w, r)
	}
}

// Observe counts each query once under its outcome, in its own series.
func TestQueryObserve(t *testing.T) {
	q := New().Queries
	q.Observe("timeseries", "wiki", time.Millisecond, 1, Success)
	q.Observe("timeseries", "wiki", time.Millisecond, 1, TimedOut)
	q.Observe("groupBy", "wiki", time.Millisecond, 1, Failed)
	c := q.of("timeseries", "wiki")
	if c != q.of("timeseries", "wiki") {
		t.Fatal("label children are resolved again for the same type and dataSource")
	}
	for name, got := range map[string]float64{
		"count": value(t, c.count), "success": value(t, c.success), "timeout": value(t, c.timeout), "failed": value(t, c.failed),
	} {
		want := map[string]float64{"count": 2, "success": 1, "timeout": 1, "failed": 0}[name]
		if got != want {
			t.Errorf("timeseries/wiki %s = %v, want %v", name, got, want)
		}
	}
	var nilQ *Queries
	nilQ.Observe("timeseries", "wiki", time.Millisecond, 1, Success) // records nothing, does not panic
}

func value(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// Past maxQuerySeries (type, dataSource) pairs, new data sources share one
// series: a client naming ever new ones cannot grow the registry.
func TestQuerySeriesBounded(t *testing.T) {
	q := New().Queries
	for i := range maxQuerySeries + 50 {
		q.Observe("scan", fmt.Sprintf("ds%d", i), time.Millisecond, 1, Failed)
	}
	n := 0
	q.children.Range(func(_, _ any) bool { n++; return true })
	if n != maxQuerySeries+1 {
		t.Errorf("%d pairs have series, want %d and the shared one", n, maxQuerySeries)
	}
	if got := value(t, q.of("scan", OtherDataSource).count); got != 50 {
		t.Errorf("%s counted %v queries, want the 50 past the bound", OtherDataSource, got)
	}
	if got := value(t, q.of("scan", "ds3").count); got != 1 {
		t.Errorf("ds3 counted %v queries, want 1", got)
	}
}

// The per-segment cost on a data server: what the engine adds per segment
// read (two clock reads) and one Segment, on the timer resolved once per
// sub-query.
func BenchmarkSegmentTimer(b *testing.B) {
	st := New().Queries.SegmentTimer("timeseries", "wiki")
	queued := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		st.Segment(start.Sub(queued), time.Since(start))
	}
}

// A sub-query's segment timer is its (type, dataSource) pair's, resolved
// once; each Segment adds one wait and one scan observation, without
// allocating.
func TestSegmentTimer(t *testing.T) {
	q := New().Queries
	st := q.SegmentTimer("scan", "wiki")
	if st != q.SegmentTimer("scan", "wiki") {
		t.Fatal("the timer is made again for the same type and dataSource")
	}
	if allocs := testing.AllocsPerRun(100, func() { st.Segment(time.Microsecond, time.Millisecond) }); allocs != 0 {
		t.Errorf("Segment allocates %v times", allocs)
	}
	st.Segment(2*time.Second, 3*time.Second)
	c := q.of("scan", "wiki")
	for name, h := range map[string]prometheus.Observer{"wait": c.segmentTimer.Load().wait, "time": c.segmentTimer.Load().time} {
		var m dto.Metric
		h.(prometheus.Histogram).Write(&m)
		if n := m.GetHistogram().GetSampleCount(); n != 102 {
			t.Errorf("%s: %d observations, want 102", name, n)
		}
	}
	var nilQ *Queries
	if nilQ.SegmentTimer("scan", "wiki") != nil {
		t.Error("a nil Queries gives a timer")
	}
}

// Ingest counts a task's published segments and bytes and its hand-offs
// in the (dataSource, taskType) series; a failed hand-off counts its
// segments as failed and observes no time.
func TestIngest(t *testing.T) {
	m := New().Ingest
	m.Published("wiki", "index_parallel", 3, 3000, time.Second)
	m.HandedOff("wiki", "index_parallel", 3, 2*time.Second, true)
	m.HandedOff("wiki", "index_parallel", 2, 0, false)
	m.TaskRan("wiki", "index_parallel", 5*time.Second)
	c := m.of("wiki", "index_parallel")
	for name, want := range map[string]float64{"segments": 3, "bytes": 3000, "handoffs": 3, "failed": 2} {
		got := value(t, map[string]prometheus.Counter{"segments": c.segments, "bytes": c.addedBytes, "handoffs": c.handoffs, "failed": c.failed}[name])
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	var h dto.Metric
	c.handoffTime.(prometheus.Histogram).Write(&h)
	if h.GetHistogram().GetSampleCount() != 1 || h.GetHistogram().GetSampleSum() != 2 {
		t.Errorf("handoff time: %v", h.GetHistogram())
	}
	var nilM *Ingest
	nilM.Published("wiki", "index", 1, 1, time.Second) // records nothing, does not panic
	nilM.HandedOff("wiki", "index", 1, time.Second, true)
	nilM.TaskRan("wiki", "index", time.Second)
}
