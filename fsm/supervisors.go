package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"strata/commands"
	"strata/interval"
)

// SupervisorRecord is an active (not terminated) stream supervisor. Records are
// immutable once stored (a change stores a new record), so readers and
// snapshots may hold them while Apply goes on.
type SupervisorRecord struct {
	ID         string          `json:"id"`
	DataSource string          `json:"dataSource"`
	Spec       json.RawMessage `json:"spec"` // normalized spec of the current version; its "suspended" is authoritative
	Suspended  bool            `json:"suspended"`
	Version    string          `json:"version"` // ISO leader time of the version
	// Index is the Raft index of the change: unique per version, where two
	// versions stamped in the same millisecond share Version.
	Index uint64 `json:"index,omitempty"`
}

// SupervisorVersion is one entry of a supervisor's history: a spec version or
// a tombstone.
type SupervisorVersion struct {
	Spec    json.RawMessage `json:"spec"`
	Version string          `json:"version"`
}

// AuditSupervisor is the audit type of supervisor spec changes, as Druid names it.
const AuditSupervisor = "supervisor"

// supervisorsTable holds the active supervisors and the history of every id
// ever used, tombstones included.
type supervisorsTable struct {
	active  map[string]*SupervisorRecord
	history map[string][]SupervisorVersion // oldest first; append-only, so snapshots may share the arrays
}

func (t *supervisorsTable) init() {
	if t.active == nil {
		t.active = map[string]*SupervisorRecord{}
		t.history = map[string][]SupervisorVersion{}
	}
}

// validateSupervisorID applies Druid's id rules (the id names a datasource).
func validateSupervisorID(id string) error {
	switch {
	case id == "":
		return Invalid("supervisor id must not be empty")
	case len(id) > commands.MaxTaskIDLength:
		return Invalid("supervisor id is %d bytes long; the limit is %d", len(id), commands.MaxTaskIDLength)
	case !utf8.ValidString(id):
		return Invalid("supervisor id %q is not valid UTF-8", id)
	case strings.HasPrefix(id, "."):
		return Invalid("supervisor id [%s] cannot start with the '.' character", id)
	case strings.ContainsRune(id, '/'):
		return Invalid("supervisor id [%s] cannot contain the '/' character", id)
	}
	for _, r := range id {
		if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r)) {
			return Invalid("supervisor id [%s] cannot contain whitespace character except space", id)
		}
	}
	return nil
}

func applySetSupervisor(s *State, m Meta, c commands.SetSupervisor) (any, error) {
	t := &s.supervisors
	t.init()
	if err := validateSupervisorID(c.ID); err != nil {
		return nil, err
	}
	if c.DataSource == "" {
		return nil, Invalid("supervisor %s has no dataSource", c.ID)
	}
	var spec bytes.Buffer
	if err := json.Compact(&spec, c.Spec); err != nil || spec.Len() == 0 || spec.Bytes()[0] != '{' {
		return nil, Invalid("the spec of supervisor %s must be a JSON object", c.ID)
	}
	var flag struct {
		Suspended *bool `json:"suspended"`
	}
	if err := json.Unmarshal(spec.Bytes(), &flag); err != nil {
		return nil, Invalid("the spec of supervisor %s has a bad \"suspended\": %v", c.ID, err)
	}
	if flag.Suspended != nil && *flag.Suspended != c.Suspended {
		return nil, Invalid("the spec of supervisor %s says suspended=%t but the command says %t", c.ID, *flag.Suspended, c.Suspended)
	}
	if c.IfIndex != 0 {
		if cur := t.active[c.ID]; cur == nil || cur.Index != c.IfIndex {
			return nil, Conflict("supervisor %s changed since the version the change was made on", c.ID)
		}
	}
	version := interval.FormatMillis(m.TimeMs)
	rec := &SupervisorRecord{ID: c.ID, DataSource: c.DataSource, Spec: spec.Bytes(), Suspended: c.Suspended, Version: version, Index: m.Index}
	t.active[c.ID] = rec
	t.history[c.ID] = append(t.history[c.ID], SupervisorVersion{Spec: rec.Spec, Version: version})
	s.audit.add(m, c.ID, AuditSupervisor, fmt.Sprintf("Update supervisor[%s] for datasource[[%s]]", c.ID, c.DataSource))
	return rec, nil
}

// tombstone is the history entry of a terminated supervisor (Druid's NoopSupervisorSpec).
func tombstone(dataSource string) json.RawMessage {
	b, _ := json.Marshal(dataSource) // a string always encodes
	return json.RawMessage(`{"type":"NoopSupervisorSpec","id":null,"dataSources":[` + string(b) + `],"suspended":false,"source":"noop"}`)
}

func applyTerminateSupervisor(s *State, m Meta, c commands.TerminateSupervisor) (any, error) {
	t := &s.supervisors
	t.init()
	rec, ok := t.active[c.ID]
	if !ok {
		return nil, NotFound("[%s] does not exist", c.ID)
	}
	delete(t.active, c.ID)
	t.history[c.ID] = append(t.history[c.ID], SupervisorVersion{Spec: tombstone(rec.DataSource), Version: interval.FormatMillis(m.TimeMs)})
	return rec, nil
}

// ResetOffsetsResult is the result of ResetSupervisorOffsets: the stored
// metadata afterwards ("" when deleted).
type ResetOffsetsResult struct {
	Metadata string
}

func applyResetSupervisorOffsets(s *State, m Meta, c commands.ResetSupervisorOffsets) (any, error) {
	seg := &s.segments
	seg.init()
	if c.DataSource == "" {
		return nil, Invalid("dataSource is empty")
	}
	if raw := bytes.TrimSpace(c.Offsets); len(raw) == 0 || string(raw) == "null" {
		delete(seg.metadata, c.DataSource)
		return ResetOffsetsResult{}, nil
	}
	// ParseKafkaMetadata and KafkaMetadataJSON (segments.go) are the parser
	// and the canonical stored form that Kafka publishes use too.
	stream, given, err := ParseKafkaMetadata(string(c.Offsets))
	if err != nil {
		return nil, Invalid("reset offsets of %s: %v", c.DataSource, err)
	}
	if len(given) == 0 {
		return nil, Invalid("reset offsets of %s: no partition offsets given", c.DataSource)
	}
	if have, ok := seg.metadata[c.DataSource]; ok {
		storedStream, stored, err := ParseKafkaMetadata(have)
		if err != nil {
			return nil, Invalid("the stored ingestion metadata of %s is not Kafka metadata (%v): reset it first", c.DataSource, err)
		}
		// Same stream: the given partitions overwrite, the others stay. Another
		// stream's offsets mean nothing for this one, so they are replaced (as
		// Druid's SeekableStreamEndSequenceNumbers.plus does).
		if storedStream == stream {
			for p, o := range given {
				stored[p] = o
			}
			given = stored
		}
	}
	out := KafkaMetadataJSON(stream, given)
	seg.metadata[c.DataSource] = out
	return ResetOffsetsResult{Metadata: out}, nil
}

// ---- reads ----

// Supervisors returns the active supervisors, sorted by id.
func (s *State) Supervisors() []*SupervisorRecord {
	out := make([]*SupervisorRecord, 0, len(s.supervisors.active))
	for _, r := range s.supervisors.active {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *SupervisorRecord) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Supervisor returns an active supervisor.
func (s *State) Supervisor(id string) (*SupervisorRecord, bool) {
	r, ok := s.supervisors.active[id]
	return r, ok
}

// SupervisorHistory returns the versions of id, newest first, tombstones
// included; nil when the id was never used.
func (s *State) SupervisorHistory(id string) []SupervisorVersion {
	h := s.supervisors.history[id]
	if len(h) == 0 {
		return nil
	}
	out := make([]SupervisorVersion, len(h))
	for i, v := range h {
		out[len(h)-1-i] = v
	}
	return out
}

// SupervisorIDsWithHistory returns every id with a history (active or
// terminated), sorted.
func (s *State) SupervisorIDsWithHistory() []string {
	out := make([]string, 0, len(s.supervisors.history))
	for id := range s.supervisors.history {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// ---- snapshot ----

// supervisorSnapshot is one id's snapshot record.
type supervisorSnapshot struct {
	ID      string              `json:"id"`
	Active  *SupervisorRecord   `json:"active,omitempty"`
	History []SupervisorVersion `json:"history"`
}

var supervisorTable = table{
	name: "supervisors",
	freeze: func(s *State) (int, func(*recordWriter) error) {
		t := &s.supervisors
		recs := make([]supervisorSnapshot, 0, len(t.history))
		for id, h := range t.history {
			recs = append(recs, supervisorSnapshot{ID: id, Active: t.active[id], History: h[:len(h):len(h)]})
		}
		return len(recs), func(w *recordWriter) error {
			slices.SortFunc(recs, func(a, b supervisorSnapshot) int { return strings.Compare(a.ID, b.ID) })
			for i := range recs {
				if err := w.write(&recs[i]); err != nil {
					return err
				}
			}
			return nil
		}
	},
	restore: func(s *State, r *recordReader, n int) error {
		t := &s.supervisors
		t.init()
		for i := 0; i < n; i++ {
			var rec supervisorSnapshot
			if err := r.read(&rec); err != nil {
				return err
			}
			switch {
			case rec.ID == "":
				return fmt.Errorf("supervisor record %d has no id", i)
			case len(rec.History) == 0:
				return fmt.Errorf("supervisor %s has no history", rec.ID)
			case rec.Active != nil && rec.Active.ID != rec.ID:
				return fmt.Errorf("supervisor record %s holds supervisor %s", rec.ID, rec.Active.ID)
			}
			if _, dup := t.history[rec.ID]; dup {
				return fmt.Errorf("supervisor %s is duplicated", rec.ID)
			}
			t.history[rec.ID] = rec.History
			if rec.Active != nil {
				t.active[rec.ID] = rec.Active
			}
		}
		return nil
	},
}

func init() {
	on(applySetSupervisor)
	on(applyTerminateSupervisor)
	on(applyResetSupervisorOffsets)
	tables = append(tables, supervisorTable)
}
