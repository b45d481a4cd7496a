package broker

import (
	"time"

	"strata/metrics"
)

// SetMetrics has the broker record its queries, sub-queries and retries in
// m (the process's registry, served at /metrics).
func (b *Broker) SetMetrics(m *metrics.Queries) { b.metrics.Store(m) }

// observe records one native query: once per query, never per row.
func (b *Broker) observe(q *nativeQuery, took time.Duration, qerr *Error) {
	m := b.metrics.Load()
	if m == nil {
		return
	}
	m.Observe(q.Type, q.DataSource, took, -1, outcomeOf(qerr))
}

// outcomeOf sorts a query's error as Druid's QueryCountStatsMonitor does.
func outcomeOf(qerr *Error) metrics.Outcome {
	switch {
	case qerr == nil:
		return metrics.Success
	case qerr.Code == CodeTimeout:
		return metrics.TimedOut
	case qerr.Code == CodeCancelled || qerr.Code == CodeInterrupted:
		return metrics.Interrupted
	}
	return metrics.Failed
}
