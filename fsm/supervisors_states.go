package fsm

import (
	"fmt"
	"slices"
	"strings"

	"strata/commands"
)

// SupervisorStateChange is one entry of a supervisor's state timeline: the
// runtime state (Druid's state and detailed state) it entered, when, and under
// which spec version.
type SupervisorStateChange struct {
	Index         uint64 `json:"index"`     // Raft index of the change
	TimeMs        int64  `json:"time"`      // leader time of the change
	SpecIndex     uint64 `json:"specIndex"` // Raft index of the spec version whose runtime computed it
	State         string `json:"state"`
	DetailedState string `json:"detailedState"`
}

// MaxSupervisorStates bounds the timeline kept per supervisor id in the state
// (the oldest changes go first); the full record stays in the Raft log and its
// archive, which the audit API reads. A flapping supervisor changes state at
// most about once per few runs, so this is days of history even then.
const MaxSupervisorStates = 1000

// maxStateName bounds a state name: they are short constants, and the bound
// keeps a faulty proposer from growing the state with long strings.
const maxStateName = 64

// supervisorStatesTable holds each supervisor id's state timeline, oldest
// first. A timeline's array is never modified in place (appends that reach the
// bound copy), so snapshots and readers may share it.
type supervisorStatesTable struct {
	byID map[string][]SupervisorStateChange
}

func (t *supervisorStatesTable) init() {
	if t.byID == nil {
		t.byID = map[string][]SupervisorStateChange{}
	}
}

// validStateName accepts what Druid's state names look like (RUNNING,
// UNHEALTHY_SUPERVISOR, ...), without fixing the list: a newer runtime may
// name a state this binary does not know, and every node must still agree.
func validStateName(s string) bool {
	if s == "" || len(s) > maxStateName {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// applySetSupervisorState appends a state change to the timeline of c.ID. A
// state equal to the last one recorded changes nothing (the result is false):
// the timeline holds changes only, however often the runtime proposes.
func applySetSupervisorState(s *State, m Meta, c commands.SetSupervisorState) (any, error) {
	if err := validateSupervisorID(c.ID); err != nil {
		return nil, err
	}
	if !validStateName(c.State) || !validStateName(c.DetailedState) {
		return nil, Invalid("supervisor %s: state %q / %q: a state is 1 to %d characters of A-Z, 0-9 and _", c.ID, c.State, c.DetailedState, maxStateName)
	}
	// A terminated supervisor still has its history: its runtime may report
	// STOPPING after the terminate.
	if len(s.supervisors.history[c.ID]) == 0 {
		return nil, NotFound("[%s] does not exist", c.ID)
	}
	// 0 is the version of a record stored before records carried their
	// index (SupervisorRecord.Index); any other must be an earlier entry.
	if c.SpecIndex >= m.Index {
		return nil, Invalid("supervisor %s: spec index %d is not an earlier entry", c.ID, c.SpecIndex)
	}
	t := &s.supervisorStates
	t.init()
	h := t.byID[c.ID]
	if n := len(h); n > 0 {
		last := h[n-1]
		if c.SpecIndex < last.SpecIndex {
			return nil, Conflict("supervisor %s: a state of spec version %d after one of version %d", c.ID, c.SpecIndex, last.SpecIndex)
		}
		if last.State == c.State && last.DetailedState == c.DetailedState {
			return false, nil
		}
	}
	change := SupervisorStateChange{Index: m.Index, TimeMs: m.TimeMs, SpecIndex: c.SpecIndex, State: c.State, DetailedState: c.DetailedState}
	if len(h) >= MaxSupervisorStates {
		next := make([]SupervisorStateChange, 0, MaxSupervisorStates)
		next = append(next, h[len(h)-MaxSupervisorStates+1:]...)
		h = next
	}
	// h[:len(h):len(h)] makes append copy rather than write into an array a
	// snapshot may hold beyond its length.
	t.byID[c.ID] = append(h[:len(h):len(h)], change)
	return true, nil
}

// SupervisorStates returns the state timeline of id, newest first; nil when
// none was recorded.
func (s *State) SupervisorStates(id string) []SupervisorStateChange {
	h := s.supervisorStates.byID[id]
	if len(h) == 0 {
		return nil
	}
	out := make([]SupervisorStateChange, len(h))
	for i, c := range h {
		out[len(h)-1-i] = c
	}
	return out
}

// supervisorStatesRecord is one id's snapshot record.
type supervisorStatesRecord struct {
	ID     string                  `json:"id"`
	States []SupervisorStateChange `json:"states"`
}

var supervisorStatesSnapshotTable = table{
	name: "supervisor_states",
	freeze: func(s *State) (int, func(*recordWriter) error) {
		t := &s.supervisorStates
		recs := make([]supervisorStatesRecord, 0, len(t.byID))
		for id, h := range t.byID {
			recs = append(recs, supervisorStatesRecord{ID: id, States: h[:len(h):len(h)]})
		}
		return len(recs), func(w *recordWriter) error {
			slices.SortFunc(recs, func(a, b supervisorStatesRecord) int { return strings.Compare(a.ID, b.ID) })
			for i := range recs {
				if err := w.write(&recs[i]); err != nil {
					return err
				}
			}
			return nil
		}
	},
	restore: func(s *State, r *recordReader, n int) error {
		t := &s.supervisorStates
		t.init()
		for i := 0; i < n; i++ {
			var rec supervisorStatesRecord
			if err := r.read(&rec); err != nil {
				return err
			}
			switch {
			case rec.ID == "":
				return fmt.Errorf("supervisor states record %d has no id", i)
			case len(rec.States) == 0:
				return fmt.Errorf("supervisor states of %s: no states", rec.ID)
			case len(rec.States) > MaxSupervisorStates:
				return fmt.Errorf("supervisor states of %s: %d states, more than %d", rec.ID, len(rec.States), MaxSupervisorStates)
			}
			if _, dup := t.byID[rec.ID]; dup {
				return fmt.Errorf("supervisor states of %s are duplicated", rec.ID)
			}
			for j, c := range rec.States {
				switch {
				case !validStateName(c.State) || !validStateName(c.DetailedState):
					return fmt.Errorf("supervisor states of %s: bad state %q / %q", rec.ID, c.State, c.DetailedState)
				case j > 0 && (c.Index <= rec.States[j-1].Index || c.SpecIndex < rec.States[j-1].SpecIndex):
					return fmt.Errorf("supervisor states of %s: not in log order at %d", rec.ID, c.Index)
				}
			}
			t.byID[rec.ID] = rec.States
		}
		return nil
	},
}

func init() {
	on(applySetSupervisorState)
	tables = append(tables, supervisorStatesSnapshotTable)
}
