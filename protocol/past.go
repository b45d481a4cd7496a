package protocol

import "strata/segmeta"

// PastTimelinePath is where the control-plane leader answers which segments
// of datasources were used at a past moment, for brokers answering queries
// with the context key asOf (time travel):
//
//	GET /svc-internal/v1/timeline?asOf=<raft index|ISO time>&dataSource=<name>[&dataSource=...]  → PastTimeline
//
// A moment that is malformed, after the last index or before the history
// the node keeps answers 400.
const PastTimelinePath = "/svc-internal/v1/timeline"

// PastTimeline is the used segments of the datasources asked, as they were
// once the log index Index had been applied (an ISO time resolves to the
// last index stamped at or before it). Stable says the resolution can never
// change: the moment is an index, or a time before the stamp of a command
// already applied (leader stamps never go back). A time at or after the
// newest stamp means "now", which later commands move.
type PastTimeline struct {
	Index    uint64                 `json:"index"`
	Stable   bool                   `json:"stable"`
	Segments []*segmeta.DataSegment `json:"segments"`
}
