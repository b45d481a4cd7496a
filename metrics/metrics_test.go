package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
