// Package metrics is a process's Prometheus metrics, served at GET /metrics.
//
// Druid's own metrics keep the names Druid's prometheus-emitter gives them:
// the namespace "druid", the Druid name with "/" (and any other character
// Prometheus refuses) as "_", timers as histograms in seconds and the
// metric's Druid dimensions as labels (query/time with dataSource and type
// is druid_query_time{dataSource,type}). What Druid has no metric for
// (Raft, the HTTP routes) is named strata_*.
//
// Each process (each server.Server) has its own Registry, so that a test
// running every role in one Go process scrapes each role's own numbers.
// Updates on the query path are one histogram observation and one counter
// increment per query, on label children resolved once per (type,
// dataSource) pair (Queries.Observe), never per row.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace is the prefix of Druid's metrics, as Druid's prometheus-emitter
// names them (druid.emitter.prometheus.namespace's default).
const Namespace = "druid"

// timeBuckets are the upper bounds, in seconds, of the time histograms:
// Druid's prometheus-emitter's timer buckets (0.1 s to 300 s) below which
// finer ones are added, since most Strata queries take less than 0.1 s and
// would otherwise all fall in the first bucket.
var timeBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, .75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300}

// segmentBuckets are those of the per-segment times, which start lower: a
// small segment is read in tens of microseconds.
var segmentBuckets = append([]float64{.00001, .000025, .00005, .0001, .00025, .0005}, timeBuckets...)

// Registry is one process's metrics.
type Registry struct {
	reg *prometheus.Registry
	// HTTP counts the requests of every route (server.routes).
	HTTP *HTTP
	// Queries are the queries this process answered: a broker's native
	// queries, a data server's sub-queries.
	Queries *Queries
	// Ingest are the publish, hand-off and run times of the tasks a middle
	// manager runs (ingest.go).
	Ingest *Ingest
}

// New returns a registry with the Go runtime and process collectors and
// the HTTP and query families.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	r := &Registry{reg: reg, HTTP: newHTTP(), Queries: newQueries(), Ingest: newIngest()}
	reg.MustRegister(r.HTTP.requests, r.HTTP.duration)
	r.Queries.register(reg)
	r.Ingest.register(reg)
	return r
}

// Register adds collectors (a role's gauges read at scrape time).
func (r *Registry) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := r.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Gatherer is what a scrape reads (tests).
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves the exposition, in the format the scraper asks for.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// HTTP is the requests served, by route pattern (the route table's path,
// not the request's, so that ids do not make new series), method and status.
type HTTP struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTP() *HTTP {
	return &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method.",
			Buckets: timeBuckets,
		}, []string{"route", "method"}),
	}
}

// Instrument wraps the handler of the route with the given pattern. The
// label children of each method and status are resolved once per route.
func (h *HTTP) Instrument(route string, next http.HandlerFunc) http.HandlerFunc {
	var children sync.Map // httpKey -> *httpChildren
	of := func(method string, code int) *httpChildren {
		k := httpKey{method, code}
		if c, ok := children.Load(k); ok {
			return c.(*httpChildren)
		}
		c, _ := children.LoadOrStore(k, &httpChildren{
			requests: h.requests.WithLabelValues(route, method, strconv.Itoa(code)),
			duration: h.duration.WithLabelValues(route, method),
		})
		return c.(*httpChildren)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next(sw, r)
		c := of(r.Method, sw.code)
		c.requests.Inc()
		c.duration.Observe(time.Since(start).Seconds())
	}
}

type httpKey struct {
	method string
	code   int
}

type httpChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on (streamed answers).
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Outcome is how a query ended, as Druid's QueryCountStatsMonitor counts
// them.
type Outcome int

const (
	Success     Outcome = iota
	Failed              // an error of the query or the server
	Interrupted         // cancelled, or its client went away
	TimedOut            // its timeout passed
)

// Queries are the query families: druid_query_time and the counts by
// outcome, per query type and data source.
type Queries struct {
	time                                         *prometheus.HistogramVec
	count, success, failed, interrupted, timeout *prometheus.CounterVec
	segments                                     *prometheus.HistogramVec
	segmentTime, waitTime                        *prometheus.HistogramVec
	nodeCount                                    *prometheus.CounterVec
	retries                                      *prometheus.CounterVec

	// children caches the label children of each (type, dataSource);
	// series counts them (maxQuerySeries).
	children sync.Map // queryKey -> *queryChildren
	series   atomic.Int64
	nodes    sync.Map // data server -> its druid_query_node_count counter
}

type queryKey struct{ typ, dataSource string }

type queryChildren struct {
	key                                          queryKey // its labels (dataSource may be OtherDataSource)
	time, segments                               prometheus.Observer
	count, success, failed, interrupted, timeout prometheus.Counter
	// segmentTimer is made by the first SegmentTimer call, so that a
	// broker, which reads no segment, shows no per-segment series.
	segmentTimer atomic.Pointer[SegmentTimer]
}

func newQueries() *Queries {
	labels := []string{"dataSource", "type"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	return &Queries{
		time: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "query_time", Help: "Seconds taken to complete a query (Druid's query/time).",
			Buckets: timeBuckets,
		}, labels),
		count:       counter("query_count", "Queries answered (Druid's query/count)."),
		success:     counter("query_success_count", "Queries that succeeded (Druid's query/success/count)."),
		failed:      counter("query_failed_count", "Queries that failed (Druid's query/failed/count)."),
		interrupted: counter("query_interrupted_count", "Queries cancelled or abandoned by their client (Druid's query/interrupted/count)."),
		timeout:     counter("query_timeout_count", "Queries that passed their timeout (Druid's query/timeout/count)."),
		segments: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "query_segments_count", Help: "Segments a query read (data servers) or was resolved to (brokers).",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8),
		}, labels),
		segmentTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "query_segment_time", Help: "Seconds taken to query one segment, reading its columns included (Druid's query/segment/time).",
			Buckets: segmentBuckets,
		}, labels),
		waitTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "query_wait_time", Help: "Seconds a segment of a sub-query waited for a processing thread (Druid's query/wait/time).",
			Buckets: segmentBuckets,
		}, labels),
		nodeCount: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "query_node_count", Help: "Sub-queries a broker sent, by data server (the fan-out; Druid's query/node/* have the server dimension).",
		}, []string{"server"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "query_retry_count", Help: "Segments a broker asked another replica for after a data server failed or no longer served them.",
		}, []string{"dataSource"}),
	}
}

func (q *Queries) register(reg *prometheus.Registry) {
	reg.MustRegister(q.time, q.count, q.success, q.failed, q.interrupted, q.timeout, q.segments, q.segmentTime, q.waitTime, q.nodeCount, q.retries)
}

// maxQuerySeries bounds the (type, dataSource) pairs with series of their
// own: a client naming ever new data sources (that do not exist, or fail)
// must not grow the registry without end. Later pairs share dataSource
// OtherDataSource.
const maxQuerySeries = 1000

// OtherDataSource is the dataSource label of the queries past maxQuerySeries.
const OtherDataSource = "_other"

func (q *Queries) of(typ, dataSource string) *queryChildren {
	k := queryKey{typ, dataSource}
	if c, ok := q.children.Load(k); ok {
		return c.(*queryChildren)
	}
	// The shared pairs are as many as the query types, which parsing bounds.
	if dataSource != OtherDataSource && q.series.Add(1) > maxQuerySeries {
		q.series.Add(-1)
		return q.of(typ, OtherDataSource)
	}
	c := &queryChildren{
		key:         queryKey{typ, dataSource},
		time:        q.time.WithLabelValues(dataSource, typ),
		segments:    q.segments.WithLabelValues(dataSource, typ),
		count:       q.count.WithLabelValues(dataSource, typ),
		success:     q.success.WithLabelValues(dataSource, typ),
		failed:      q.failed.WithLabelValues(dataSource, typ),
		interrupted: q.interrupted.WithLabelValues(dataSource, typ),
		timeout:     q.timeout.WithLabelValues(dataSource, typ),
	}
	got, _ := q.children.LoadOrStore(k, c)
	return got.(*queryChildren)
}

// Observe records one query: its type, data source (a union's first table;
// "" for inline and query data sources), time, segments and outcome. A nil
// Queries records nothing.
func (q *Queries) Observe(typ, dataSource string, took time.Duration, segments int, o Outcome) {
	if q == nil {
		return
	}
	c := q.of(typ, dataSource)
	c.time.Observe(took.Seconds())
	if segments >= 0 {
		c.segments.Observe(float64(segments))
	}
	c.count.Inc()
	switch o {
	case Success:
		c.success.Inc()
	case Failed:
		c.failed.Inc()
	case Interrupted:
		c.interrupted.Inc()
	case TimedOut:
		c.timeout.Inc()
	}
}

// SegmentTimer records the segments one sub-query reads: the time each
// waited for a processing thread and the time reading it took.
type SegmentTimer struct{ time, wait prometheus.Observer }

// Segment records one segment read. Two observations on children resolved
// when the timer was (Queries.SegmentTimer): no allocation, no lookup.
func (t *SegmentTimer) Segment(wait, took time.Duration) {
	t.wait.Observe(wait.Seconds())
	t.time.Observe(took.Seconds())
}

// SegmentTimer returns the timer of a sub-query's segments, to resolve once
// per sub-query; nil when q is nil (nothing recorded).
func (q *Queries) SegmentTimer(typ, dataSource string) *SegmentTimer {
	if q == nil {
		return nil
	}
	c := q.of(typ, dataSource)
	if t := c.segmentTimer.Load(); t != nil {
		return t
	}
	k := c.key
	t := &SegmentTimer{time: q.segmentTime.WithLabelValues(k.dataSource, k.typ), wait: q.waitTime.WithLabelValues(k.dataSource, k.typ)}
	if c.segmentTimer.CompareAndSwap(nil, t) {
		return t
	}
	return c.segmentTimer.Load()
}

// SubQuery records a broker's sub-query to a data server, on the server's
// counter resolved once.
func (q *Queries) SubQuery(server string) {
	if q == nil {
		return
	}
	c, ok := q.nodes.Load(server)
	if !ok {
		c, _ = q.nodes.LoadOrStore(server, q.nodeCount.WithLabelValues(server))
	}
	c.(prometheus.Counter).Inc()
}

// Retry records segments a broker asked another replica for.
func (q *Queries) Retry(dataSource string, segments int) {
	if q != nil {
		q.retries.WithLabelValues(dataSource).Add(float64(segments))
	}
}
