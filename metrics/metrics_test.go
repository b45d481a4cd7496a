package metrics

import (
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
