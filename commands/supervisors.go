package commands

import "encoding/json"

// SetSupervisor stores a new version of a stream supervisor: create, update,
// suspend and resume all go through it. It replaces the active record of ID
// and appends the version to ID's history. Spec is the normalized spec (the
// JSON GET /supervisor/{id} returns); its "suspended", when present, must
// agree with Suspended.
type SetSupervisor struct {
	ID         string          `json:"id"`
	DataSource string          `json:"dataSource"`
	Spec       json.RawMessage `json:"spec"`
	Suspended  bool            `json:"suspended"`
	// IfIndex, when set, applies the change only if the active record is
	// still the one stored at that Raft index (the autoscaler's edits must
	// not undo a suspend or an update made meanwhile).
	IfIndex uint64 `json:"ifIndex,omitempty"`
}

// CommandType implements Command.
func (SetSupervisor) CommandType() string { return "supervisor.set" }

// TerminateSupervisor removes an active supervisor and appends a tombstone
// (Druid's NoopSupervisorSpec) to its history, so that it is not restarted.
type TerminateSupervisor struct {
	ID string `json:"id"`
}

// CommandType implements Command.
func (TerminateSupervisor) CommandType() string { return "supervisor.terminate" }

// ResetSupervisorOffsets edits the stored stream offsets (the ingestion
// metadata) of a datasource. A nil (or JSON null) Offsets deletes them, so that
// reading restarts from the earliest or latest offset (reset); otherwise
// Offsets is Kafka datasource metadata,
// {"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100}}},
// whose partitions overwrite the stored ones (resetOffsets).
type ResetSupervisorOffsets struct {
	DataSource string          `json:"dataSource"`
	Offsets    json.RawMessage `json:"offsets,omitempty"`
}

// CommandType implements Command.
func (ResetSupervisorOffsets) CommandType() string { return "supervisor.offsets.reset" }

func init() {
	Register(SetSupervisor{}, false)
	Register(TerminateSupervisor{}, false)
	Register(ResetSupervisorOffsets{}, false)
}
