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

// SetSupervisorState records a change of a supervisor's runtime state, as the
// overlord leader's supervisor runtime computes it (Druid's state and
// detailed state: RUNNING, UNHEALTHY_SUPERVISOR, SUSPENDED, PENDING, ...). The
// runtime proposes it only when the state it shows changes; the FSM also
// ignores a state equal to the last one recorded, so the timeline holds
// changes only. SpecIndex is the Raft index of the spec version whose runtime
// computed the state (fsm.SupervisorRecord.Index).
type SetSupervisorState struct {
	ID            string `json:"id"`
	SpecIndex     uint64 `json:"specIndex"`
	State         string `json:"state"`
	DetailedState string `json:"detailedState"`
}

// CommandType implements Command.
func (SetSupervisorState) CommandType() string { return "supervisor.state" }

func init() {
	Register(SetSupervisor{}, false)
	Register(SetSupervisorState{}, false)
	Register(TerminateSupervisor{}, false)
	Register(ResetSupervisorOffsets{}, false)
}
