package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Ingest are the families of the tasks a middle manager runs, recorded
// where the moments happen: the publish of a task's segments (its request
// to the control plane until the commit is acknowledged), their hand-off
// (from that commit until the segments are seen loaded and the task, or
// its worker, lets go of them) and the task's run. The label children of a
// (dataSource, taskType) pair are resolved once; these are a few updates
// per task, off the query path.
type Ingest struct {
	publishTime, handoffTime, runTime *prometheus.HistogramVec
	segments, addedBytes              *prometheus.CounterVec
	handoffs, handoffFailed           *prometheus.CounterVec

	children sync.Map // ingestKey -> *ingestChildren
}

type ingestKey struct{ dataSource, taskType string }

type ingestChildren struct {
	publishTime, handoffTime, runTime      prometheus.Observer
	segments, addedBytes, handoffs, failed prometheus.Counter
}

func newIngest() *Ingest {
	labels := []string{"dataSource", "taskType"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	return &Ingest{
		publishTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_ingest_publish_duration_seconds",
			Help:    "Time a task's publish of a segment set took, from its request to the control plane until the commit was acknowledged.",
			Buckets: timeBuckets,
		}, labels),
		handoffTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "ingest_handoff_time",
			Help:    "Seconds from the publish of a set of segments until they were seen loaded and the task let go of them (Druid's ingest/handoff/time).",
			Buckets: timeBuckets,
		}, labels),
		runTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "task_run_time", Help: "Seconds taken to run a task (Druid's task/run/time).",
			Buckets: timeBuckets,
		}, labels),
		segments:      counter("ingest_segments_count", "Segments published by tasks, tombstones included (Druid's ingest/segments/count)."),
		addedBytes:    counter("segment_added_bytes", "Bytes of the segments tasks published (Druid's segment/added/bytes)."),
		handoffs:      counter("ingest_handoff_count", "Published segments handed off: seen loaded, and let go of by their task (Druid's ingest/handoff/count)."),
		handoffFailed: counter("ingest_handoff_failed", "Published segments not seen loaded before the task or its worker gave up waiting (Druid's ingest/handoff/failed)."),
	}
}

func (m *Ingest) register(reg *prometheus.Registry) {
	reg.MustRegister(m.publishTime, m.handoffTime, m.runTime, m.segments, m.addedBytes, m.handoffs, m.handoffFailed)
}

func (m *Ingest) of(dataSource, taskType string) *ingestChildren {
	k := ingestKey{dataSource, taskType}
	if c, ok := m.children.Load(k); ok {
		return c.(*ingestChildren)
	}
	c, _ := m.children.LoadOrStore(k, &ingestChildren{
		publishTime: m.publishTime.WithLabelValues(dataSource, taskType),
		handoffTime: m.handoffTime.WithLabelValues(dataSource, taskType),
		runTime:     m.runTime.WithLabelValues(dataSource, taskType),
		segments:    m.segments.WithLabelValues(dataSource, taskType),
		addedBytes:  m.addedBytes.WithLabelValues(dataSource, taskType),
		handoffs:    m.handoffs.WithLabelValues(dataSource, taskType),
		failed:      m.handoffFailed.WithLabelValues(dataSource, taskType),
	})
	return c.(*ingestChildren)
}

// Published records a committed publish of segments holding bytes, which
// took took. A nil Ingest records nothing.
func (m *Ingest) Published(dataSource, taskType string, segments int, bytes int64, took time.Duration) {
	if m == nil {
		return
	}
	c := m.of(dataSource, taskType)
	c.publishTime.Observe(took.Seconds())
	c.segments.Add(float64(segments))
	c.addedBytes.Add(float64(bytes))
}

// HandedOff records the hand-off of a published segment set: when every
// one was seen loaded, the time since the publish; when the wait gave up
// (ok false), the segments not seen loaded, as failed hand-offs.
func (m *Ingest) HandedOff(dataSource, taskType string, segments int, took time.Duration, ok bool) {
	if m == nil || segments == 0 {
		return
	}
	c := m.of(dataSource, taskType)
	if !ok {
		c.failed.Add(float64(segments))
		return
	}
	c.handoffTime.Observe(took.Seconds())
	c.handoffs.Add(float64(segments))
}

// TaskRan records a task's run time on its worker.
func (m *Ingest) TaskRan(dataSource, taskType string, took time.Duration) {
	if m != nil {
		m.of(dataSource, taskType).runTime.Observe(took.Seconds())
	}
}
