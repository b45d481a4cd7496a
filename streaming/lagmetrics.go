package streaming

import (
	"cmp"
	"slices"
	"strings"
)

// PartitionLag is one partition's lag behind the stream's latest offset, as
// the supervisor last measured it (the lag its status report shows).
type PartitionLag struct {
	Supervisor, DataSource, Stream string
	Partition                      int32
	Lag                            int64
}

// Lags returns the partition lags of the supervisors running here, from
// their last samples (none before a supervisor's first measurement): what
// /metrics reports, read at each scrape without asking Kafka.
func (m *Manager) Lags() []PartitionLag {
	m.mu.Lock()
	sups := make([]*supervisor, 0, len(m.sups))
	for _, s := range m.sups {
		sups = append(sups, s)
	}
	m.mu.Unlock()
	var out []PartitionLag
	for _, s := range sups {
		stream := ""
		if s.spec != nil {
			stream = s.spec.Topic
		}
		s.mu.Lock()
		for p, lag := range s.sample.lag {
			out = append(out, PartitionLag{Supervisor: s.id, DataSource: s.ds, Stream: stream, Partition: p, Lag: lag})
		}
		s.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b PartitionLag) int {
		return cmp.Or(strings.Compare(a.Supervisor, b.Supervisor), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
