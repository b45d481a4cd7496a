// Package protocol holds what the roles of a cluster exchange over their
// internal HTTP endpoints on the query path, so that the historical that
// serves them, and the broker and coordinator that call them, share one
// definition without importing each other: the paths, the historical's
// announcement of what it serves, and the broker's sub-queries and their
// answers (docs/subquery-wire-format.md). The JSON shapes are the wire
// format: a changed tag breaks a cluster of mixed versions.
package protocol

import (
	"encoding/json"

	"strata/segmeta"
)

// Internal endpoints of a historical (served by package server):
//
//	GET  /svc-internal/v1/historical/segments?since=<version>  → Announcement
//	POST /svc-internal/v1/query                                 SubQuery → SubQueryResult
const (
	AnnouncePath = "/svc-internal/v1/historical/segments"
	QueryPath    = "/svc-internal/v1/query"
)

// AssignedPath, followed by the historical's name (host:port), is where the
// coordinator leader answers what that historical should serve under the
// retention rules. Polling it is also how the coordinator learns of the
// historical. While the leader is still taking stock of the historicals it
// answers 503, and the historical keeps serving what it holds.
const AssignedPath = "/svc-internal/v1/segments/assigned/"

// ServerMetadata describes a data server the way Druid's DruidServerMetadata
// does; it is the "locations" entry of a candidate record (spec 2.5).
type ServerMetadata struct {
	Name           string  `json:"name"`
	Host           string  `json:"host"`
	HostAndTLSPort *string `json:"hostAndTlsPort"`
	MaxSize        int64   `json:"maxSize"`
	Type           string  `json:"type"`
	Tier           string  `json:"tier"`
	Priority       int     `json:"priority"`
}

// Announcement is what a historical serves. Version changes whenever the
// served set changes (it embeds a per-start instance id, so it never repeats
// across restarts); a poll that names the current version gets Unchanged
// and no segments.
type Announcement struct {
	Server    ServerMetadata `json:"server"`
	CurrSize  int64          `json:"currSize"`
	Version   string         `json:"version"`
	Unchanged bool           `json:"unchanged,omitempty"`
	// Loading is set while the server is still loading the segments of its
	// local cache at start-up: the segments listed are not all it will
	// serve, so a broker does not count it as known yet.
	Loading  bool                   `json:"loading,omitempty"`
	Segments []*segmeta.DataSegment `json:"segments"`
	// Realtime are segments of rows not yet published (a running ingestion
	// task's): brokers query them beside the timeline, never in it.
	Realtime []*segmeta.DataSegment `json:"realtime,omitempty"`
	// Sequences maps the version of realtime segments (one version per
	// task) to the sequence the task reads: the replicas of a Kafka task
	// group share it, and a broker reads one replica's segments of it.
	Sequences map[string]string `json:"sequences,omitempty"`
	// Offsets maps the version of realtime segments of a sequence to the
	// stream position its rows reach: per partition, the next offset to
	// read (every record before it is in the segments). A broker reads the
	// replica that has read furthest, and notices when the one it falls
	// back on is behind what it answered before.
	Offsets map[string]map[int32]int64 `json:"offsets,omitempty"`
}

// SegmentRef names one segment of a sub-query and the part of it to read:
// Interval is the clipped timeline piece (ISO-8601 "start/end"), so a
// partially overshadowed segment only contributes the rows still visible.
type SegmentRef struct {
	ID       string `json:"id"`
	Interval string `json:"interval"`
}

// SubQuery is a broker's request to one historical: the native query as the
// client sent it and the segments this historical is to read.
type SubQuery struct {
	Query    json.RawMessage `json:"query"`
	Segments []SegmentRef    `json:"segments"`
	// TimeoutMs is the time left of the query's timeout (0: none).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// Finalize asks for the final result instead of a partial: the broker
	// sets it when this server holds every segment of the query, so the
	// (possibly large) partial need not cross the wire to be merged with
	// nothing. A server missing a segment answers a partial anyway.
	Finalize bool `json:"finalize,omitempty"`
}

// FinalHeader marks a sub-query response whose body is the query's final
// result (the client's JSON), not a SubQueryResult.
const FinalHeader = "X-Strata-Final"

// SubQueryResult is the historical's answer: the merged partial result over
// the segments it read, and the ids of requested segments it does not
// serve (dropped since the broker's last poll), which the broker retries
// elsewhere.
type SubQueryResult struct {
	Partial json.RawMessage `json:"partial"`
	Missing []string        `json:"missing,omitempty"`
	// Replaced maps a missing realtime segment whose rows were published
	// since the broker's last poll to the published segments this server
	// serves them from now, which the broker reads instead unless it reads
	// them elsewhere already.
	Replaced map[string][]SegmentRef `json:"replaced,omitempty"`
	// Final is the final result of a Finalize sub-query that found every
	// segment; it travels as the response body itself (see FinalHeader).
	Final []byte `json:"-"`
}
