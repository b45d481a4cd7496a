package server

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"strata/fsm"
	"strata/metrics"
	"strata/streaming"
)

// The control roles' families are read from this node's replica of the
// state at each scrape: nothing is counted on the paths that change it.
var (
	descSegmentCount = prometheus.NewDesc(metrics.Namespace+"_segment_count",
		"Used segments (Druid's segment/count), by data source.", []string{"dataSource"}, nil)
	descSegmentSize = prometheus.NewDesc(metrics.Namespace+"_segment_size",
		"Bytes of the used segments (Druid's segment/size), by data source.", []string{"dataSource"}, nil)
	descUnusedCount = prometheus.NewDesc(metrics.Namespace+"_segment_unused_count",
		"Unused segments still in the metadata, by data source.", []string{"dataSource"}, nil)
	descUnusedSize = prometheus.NewDesc(metrics.Namespace+"_segment_unused_size",
		"Bytes of the unused segments still in the metadata, by data source.", []string{"dataSource"}, nil)
	descTasks = map[string]*prometheus.Desc{}
)

// taskStates are the task families: Druid's task/{running,pending,waiting}
// count by runner status, task/{success,failed}/count by completion (here
// the completed tasks the state holds, not those of the last period).
var taskStates = []string{"running", "pending", "waiting", "success", "failed"}

func init() {
	for _, st := range taskStates {
		descTasks[st] = prometheus.NewDesc(metrics.Namespace+"_task_"+st+"_count",
			"Tasks "+st+" (Druid's task/"+st+"/count), by data source.", []string{"dataSource"}, nil)
	}
}

// segmentCollector reports the coordinator's segment families.
type segmentCollector struct{ s *Server }

func (c segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSegmentCount
	ch <- descSegmentSize
	ch <- descUnusedCount
	ch <- descUnusedSize
}

func (c segmentCollector) Collect(ch chan<- prometheus.Metric) {
	type sums struct{ used, usedBytes, unused, unusedBytes float64 }
	by := map[string]*sums{}
	c.s.node.FSM().Read(func(st *fsm.State) {
		for _, r := range st.Segments("") {
			ds := r.Segment.DataSource
			if by[ds] == nil {
				by[ds] = &sums{}
			}
			if r.Used {
				by[ds].used++
				by[ds].usedBytes += float64(r.Segment.Size)
			} else {
				by[ds].unused++
				by[ds].unusedBytes += float64(r.Segment.Size)
			}
		}
	})
	for ds, v := range by {
		ch <- prometheus.MustNewConstMetric(descSegmentCount, prometheus.GaugeValue, v.used, ds)
		ch <- prometheus.MustNewConstMetric(descSegmentSize, prometheus.GaugeValue, v.usedBytes, ds)
		ch <- prometheus.MustNewConstMetric(descUnusedCount, prometheus.GaugeValue, v.unused, ds)
		ch <- prometheus.MustNewConstMetric(descUnusedSize, prometheus.GaugeValue, v.unusedBytes, ds)
	}
}

// taskCollector reports the overlord's task families.
type taskCollector struct{ s *Server }

func (c taskCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, st := range taskStates {
		ch <- descTasks[st]
	}
	ch <- descRowsProcessed
	ch <- descRowsWithError
	ch <- descRowsUnparseable
	ch <- descRowsThrownAway
}

func (c taskCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]map[string]float64{} // state -> dataSource -> tasks
	add := func(state, ds string) {
		if counts[state] == nil {
			counts[state] = map[string]float64{}
		}
		counts[state][ds]++
	}
	rows := map[rowKey]*reportRows{}
	addRows := func(t *fsm.TaskRecord) {
		if r, ok := rowsOfReport(t.Report); ok {
			k := rowKey{t.DataSource, t.Type}
			if rows[k] == nil {
				rows[k] = &reportRows{}
			}
			rows[k].add(r)
		}
	}
	c.s.node.FSM().Read(func(st *fsm.State) {
		for _, t := range st.ActiveTasks() {
			addRows(t)
			switch t.RunnerStatus {
			case "RUNNING":
				add("running", t.DataSource)
			case "PENDING":
				add("pending", t.DataSource)
			default:
				add("waiting", t.DataSource)
			}
		}
		st.EachCompleteTask(func(t *fsm.TaskRecord) bool {
			addRows(t)
			switch t.Status {
			case "SUCCESS":
				add("success", t.DataSource)
			case "FAILED":
				add("failed", t.DataSource)
			}
			return true
		})
	})
	for state, byDS := range counts {
		for ds, n := range byDS {
			ch <- prometheus.MustNewConstMetric(descTasks[state], prometheus.GaugeValue, n, ds)
		}
	}
	for k, r := range rows {
		ch <- prometheus.MustNewConstMetric(descRowsProcessed, prometheus.GaugeValue, float64(r.Processed), k.dataSource, k.taskType)
		ch <- prometheus.MustNewConstMetric(descRowsWithError, prometheus.GaugeValue, float64(r.ProcessedWithError), k.dataSource, k.taskType)
		ch <- prometheus.MustNewConstMetric(descRowsUnparseable, prometheus.GaugeValue, float64(r.Unparseable), k.dataSource, k.taskType)
		ch <- prometheus.MustNewConstMetric(descRowsThrownAway, prometheus.GaugeValue, float64(r.ThrownAway), k.dataSource, k.taskType)
	}
}

// Druid's ingest/events/{processed,processedWithError,unparseable,thrownAway},
// summed here over the tasks the state holds (running ones as of their last
// report), by data source and task type: gauges, since tasks the state
// forgets leave the sums.
var (
	rowLabels           = []string{"dataSource", "taskType"}
	descRowsProcessed   = prometheus.NewDesc(metrics.Namespace+"_ingest_events_processed", "Rows processed by the tasks the overlord's state holds (Druid's ingest/events/processed).", rowLabels, nil)
	descRowsWithError   = prometheus.NewDesc(metrics.Namespace+"_ingest_events_processedWithError", "Rows processed with a parse error in some column (Druid's ingest/events/processedWithError).", rowLabels, nil)
	descRowsUnparseable = prometheus.NewDesc(metrics.Namespace+"_ingest_events_unparseable", "Rows that could not be parsed (Druid's ingest/events/unparseable).", rowLabels, nil)
	descRowsThrownAway  = prometheus.NewDesc(metrics.Namespace+"_ingest_events_thrownAway", "Rows thrown away: filtered out or outside the intervals (Druid's ingest/events/thrownAway).", rowLabels, nil)
)

type rowKey struct{ dataSource, taskType string }

// reportRows are the row counters of a task report.
type reportRows struct {
	Processed          int64 `json:"processed"`
	ProcessedWithError int64 `json:"processedWithError"`
	ThrownAway         int64 `json:"thrownAway"`
	Unparseable        int64 `json:"unparseable"`
}

func (r *reportRows) add(o reportRows) {
	r.Processed += o.Processed
	r.ProcessedWithError += o.ProcessedWithError
	r.ThrownAway += o.ThrownAway
	r.Unparseable += o.Unparseable
}

// rowsOfReport reads the row counters of a task's report: {"<report
// type>": {"payload": {"rowStats": ...}}}, where rowStats holds the counters
// under "buildSegments" (ingestionStatsAndErrors) or directly (a Kafka
// task's progress).
func rowsOfReport(report string) (reportRows, bool) {
	if report == "" {
		return reportRows{}, false
	}
	var env map[string]struct {
		Payload struct {
			RowStats json.RawMessage `json:"rowStats"`
		} `json:"payload"`
	}
	if json.Unmarshal([]byte(report), &env) != nil {
		return reportRows{}, false
	}
	for _, e := range env {
		if len(e.Payload.RowStats) == 0 {
			continue
		}
		var nested struct {
			BuildSegments *reportRows `json:"buildSegments"`
		}
		if json.Unmarshal(e.Payload.RowStats, &nested) == nil && nested.BuildSegments != nil {
			return *nested.BuildSegments, true
		}
		var flat reportRows
		if json.Unmarshal(e.Payload.RowStats, &flat) == nil {
			return flat, true
		}
	}
	return reportRows{}, false
}

// Druid's ingest/kafka/lag (a supervisor's total) and partitionLag.
var (
	descKafkaLag = prometheus.NewDesc(metrics.Namespace+"_ingest_kafka_lag",
		"Messages a supervisor's tasks are behind the stream's latest offsets, summed over its partitions (Druid's ingest/kafka/lag).",
		[]string{"supervisor", "dataSource", "stream"}, nil)
	descKafkaPartitionLag = prometheus.NewDesc(metrics.Namespace+"_ingest_kafka_partitionLag",
		"Messages behind the latest offset of one partition (Druid's ingest/kafka/partitionLag).",
		[]string{"supervisor", "dataSource", "stream", "partition"}, nil)
)

// lagCollector reports the lag of the supervisors running on this overlord,
// as each last measured it (what its status report shows).
type lagCollector struct{ m *streaming.Manager }

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descKafkaLag
	ch <- descKafkaPartitionLag
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	type sup struct{ id, ds, stream string }
	total := map[sup]float64{}
	for _, l := range c.m.Lags() {
		k := sup{l.Supervisor, l.DataSource, l.Stream}
		total[k] += float64(l.Lag)
		ch <- prometheus.MustNewConstMetric(descKafkaPartitionLag, prometheus.GaugeValue, float64(l.Lag),
			l.Supervisor, l.DataSource, l.Stream, strconv.Itoa(int(l.Partition)))
	}
	for k, v := range total {
		ch <- prometheus.MustNewConstMetric(descKafkaLag, prometheus.GaugeValue, v, k.id, k.ds, k.stream)
	}
}

// The historicals' queues and what they serve, as the coordinator sees them
// (Druid's segment/loadQueue/count, segment/dropQueue/count, and the
// served segments per server and tier).
var (
	queueLabels       = []string{"server", "tier"}
	descLoadQueue     = prometheus.NewDesc(metrics.Namespace+"_segment_loadQueue_count", "Segments a historical is to load (Druid's segment/loadQueue/count).", queueLabels, nil)
	descLoadQueueSize = prometheus.NewDesc(metrics.Namespace+"_segment_loadQueue_size", "Bytes of the segments a historical is to load (Druid's segment/loadQueue/size).", queueLabels, nil)
	descDropQueue     = prometheus.NewDesc(metrics.Namespace+"_segment_dropQueue_count", "Segments a historical is to drop (Druid's segment/dropQueue/count).", queueLabels, nil)
	descServedCount   = prometheus.NewDesc(metrics.Namespace+"_segment_loaded_count", "Segments a historical serves, as the coordinator's inventory has them.", queueLabels, nil)
	descServedSize    = prometheus.NewDesc(metrics.Namespace+"_segment_loaded_size", "Bytes of the segments a historical serves.", queueLabels, nil)
)

// queueCollector reports the coordinator's view of each historical.
type queueCollector struct{ s *Server }

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLoadQueue, descLoadQueueSize, descDropQueue, descServedCount, descServedSize} {
		ch <- d
	}
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, q := range c.s.loadQueues(time.Now()) {
		name, tier := q.srv.Meta.Name, q.srv.Meta.Tier
		var served int64
		for _, seg := range q.srv.Segments {
			served += seg.Size
		}
		ch <- prometheus.MustNewConstMetric(descLoadQueue, prometheus.GaugeValue, float64(len(q.load)), name, tier)
		ch <- prometheus.MustNewConstMetric(descLoadQueueSize, prometheus.GaugeValue, float64(totalSize(q.load)), name, tier)
		ch <- prometheus.MustNewConstMetric(descDropQueue, prometheus.GaugeValue, float64(len(q.drop)), name, tier)
		ch <- prometheus.MustNewConstMetric(descServedCount, prometheus.GaugeValue, float64(len(q.srv.Segments)), name, tier)
		ch <- prometheus.MustNewConstMetric(descServedSize, prometheus.GaugeValue, float64(served), name, tier)
	}
}
