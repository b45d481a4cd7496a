package commands

import (
	"encoding/json"
)

// PublishSegments adds segments as used, atomically: all or none. When
// StartMetadata is set, the datasource's ingestion metadata (stream offsets) must
// equal it (compare-and-swap) and becomes EndMetadata; this is what makes stream
// publishing exactly-once. Segments travel in segment's binary encoding (base64
// in the envelope) so that a 1,000-segment publish decodes in well under a ms per
// hundred segments.
type PublishSegments struct {
	DataSource    string          `json:"dataSource"`
	Segments      []byte          `json:"segments"` // concatenated segmeta.DataSegment binary records
	Count         int             `json:"count"`
	StartMetadata json.RawMessage `json:"startMetadata,omitempty"`
	EndMetadata   json.RawMessage `json:"endMetadata,omitempty"`
	// MetadataMode picks the compare-and-swap: "" compares and replaces the
	// whole document; MetadataModeKafka compares and merges per partition.
	MetadataMode string `json:"metadataMode,omitempty"`
	// TaskID, when set, names the task publishing: it must still be running and
	// hold locks covering every segment, so a task the overlord has already
	// ended (a reset kills the supervisor's tasks) can no longer publish.
	TaskID string `json:"taskId,omitempty"`
	// OwnFiles makes the FSM refuse a segment whose loadSpec names a file
	// that another segment (used or unused) names or that awaits deletion,
	// so that a kill can never take another segment's data. The leader sets
	// it; a field rather than a new rule so that older log entries replay as
	// they applied.
	OwnFiles bool `json:"ownFiles,omitempty"`
}

// MetadataModeKafka makes PublishSegments check Kafka offsets per partition:
// every partition of StartMetadata must hold that offset in the stored
// metadata (or be absent from it), and the stored offsets become the stored
// ones overwritten by EndMetadata's.
const MetadataModeKafka = "kafka"

// CommandType implements Command.
func (PublishSegments) CommandType() string { return "segments.publish" }

// MarkSegments flips the used flag of a datasource's segments chosen by exactly
// one selector: ids, an interval (segments fully inside), or all of them.
type MarkSegments struct {
	DataSource string   `json:"dataSource"`
	Used       bool     `json:"used"`
	IDs        []string `json:"ids,omitempty"`
	Interval   string   `json:"interval,omitempty"`
	All        bool     `json:"all,omitempty"`
	// AuditPayload is what the audit entry records (Druid records the request body).
	AuditPayload string `json:"auditPayload,omitempty"`
	// FailOnUnknown makes unknown ids an error (markUsed by ids answers 404).
	FailOnUnknown bool `json:"failOnUnknown,omitempty"`
}

// CommandType implements Command.
func (MarkSegments) CommandType() string { return "segments.mark" }

// KillSegments deletes the metadata of the unused segments of a datasource that
// lie fully inside Interval. Their files are queued for deletion from deep storage
// (the FSM's pending-deletion table), so no file is removed while its metadata
// exists, and a crash or leader change between the two steps leaves a queue that
// the next leader drains.
type KillSegments struct {
	DataSource string `json:"dataSource"`
	Interval   string `json:"interval"`
	TaskID     string `json:"taskId"`
}

// CommandType implements Command.
func (KillSegments) CommandType() string { return "segments.kill" }

// AckFileDeletions removes deep-storage files from the pending-deletion queue once
// they are gone.
type AckFileDeletions struct {
	LoadSpecs []string `json:"loadSpecs"`
}

// CommandType implements Command.
func (AckFileDeletions) CommandType() string { return "segments.files.deleted" }

func init() {
	Register(PublishSegments{}, false)
	Register(MarkSegments{}, false)
	Register(KillSegments{}, false)
	Register(AckFileDeletions{}, false)
}
