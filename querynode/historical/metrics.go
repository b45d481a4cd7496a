package historical

import (
	"time"

	"strata/metrics"
	"strata/querynode/query"
)

// SetMetrics has the data server record its sub-queries in m (the
// process's registry, served at /metrics).
func (n *Node) SetMetrics(m *metrics.Queries) { n.metrics.Store(m) }

// segmentTimer returns the timer of q's segments (query/segment/time and
// query/wait/time), its label children resolved once per sub-query; nil
// when metrics are off. A nil *metrics.SegmentTimer must not become a
// non-nil interface value.
func (n *Node) segmentTimer(q *nativeQuery) segmentTimer {
	if t := n.metrics.Load().SegmentTimer(q.Type, q.DataSource); t != nil {
		return t
	}
	return nil
}

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
