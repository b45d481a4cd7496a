package metrics

import (
	"strconv"
	"sync"

	gometrics "github.com/armon/go-metrics"
	gmprom "github.com/armon/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// RaftNode is what the Raft gauges read at each scrape (cluster.Node).
type RaftNode interface {
	RaftLeader() bool
	Stats() map[string]string // hashicorp/raft's Stats
}

// RaftCollectors are the gauges of a control node's Raft state, read when
// scraped, and the bridge of hashicorp/raft's own go-metrics (commit,
// append, store and snapshot timings), which raft emits to go-metrics'
// process-wide sink: in a process with one control node (every real
// process) they are that node's.
func RaftCollectors(n RaftNode) []prometheus.Collector {
	stat := func(key string) func() float64 {
		return func() float64 {
			v, err := strconv.ParseFloat(n.Stats()[key], 64)
			if err != nil {
				return 0
			}
			return v
		}
	}
	gauge := func(name, help, key string) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, stat(key))
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "strata_raft_node_is_leader", Help: "1 when this control node is the Raft leader, else 0.",
		}, func() float64 {
			if n.RaftLeader() {
				return 1
			}
			return 0
		}),
		gauge("strata_raft_node_term", "The Raft term this node is in.", "term"),
		gauge("strata_raft_node_commit_index", "The highest log index known committed.", "commit_index"),
		gauge("strata_raft_node_applied_index", "The highest log index applied to the state machine.", "applied_index"),
		gauge("strata_raft_node_last_log_index", "The last index in this node's log.", "last_log_index"),
		gauge("strata_raft_node_last_snapshot_index", "The log index of the last snapshot.", "last_snapshot_index"),
		goMetricsBridge(),
	}
}

var (
	bridgeOnce sync.Once
	bridge     prometheus.Collector
)

// goMetricsBridge installs, once per process, a Prometheus sink as
// go-metrics' global sink (hashicorp/raft's metrics go there through
// go-metrics/compat) and returns it: its names are "strata_" and raft's key
// with "." as "_" (raft.commitTime is strata_raft_commitTime, a summary in
// milliseconds as raft measures it).
func goMetricsBridge() prometheus.Collector {
	bridgeOnce.Do(func() {
		// The sink registers itself with Registerer: a private registry, as
		// every process registry adds the sink itself.
		sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{Registerer: prometheus.NewRegistry(), Name: "strata_raft_go_metrics"})
		if err != nil {
			panic("go-metrics prometheus sink: " + err.Error()) // only a registration clash, impossible on a new registry
		}
		conf := gometrics.DefaultConfig("strata")
		conf.EnableHostname = false       // the series are this process's anyway
		conf.EnableRuntimeMetrics = false // the Go collector has them
		if _, err := gometrics.NewGlobal(conf, sink); err != nil {
			panic("go-metrics global: " + err.Error())
		}
		bridge = sink
	})
	return bridge
}
