package historical

import (
	"time"

	"strata/metrics"
	"strata/querynode/query"
)

// SetMetrics has the data server record its sub-queries in m (the
// process's registry, served at /metrics).
func (n *Node) SetMetrics(m *metrics.Queries) { n.metrics.Store(m) }

// observe records one sub-query: once per sub-query, never per row.
func (n *Node) observe(q *nativeQuery, took time.Duration, segments int, err error) {
	m := n.metrics.Load()
	if m == nil {
		return
	}
	o := metrics.Success
	if err != nil {
		switch query.AsError(err).Kind {
		case query.Timeout:
			o = metrics.TimedOut
		case query.Cancelled:
			o = metrics.Interrupted
		default:
			o = metrics.Failed
		}
	}
	m.Observe(q.Type, q.DataSource, took, segments, o)
}
