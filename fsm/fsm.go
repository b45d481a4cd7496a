// Package fsm is the deterministic state machine behind Strata's Raft log.
//
// All control-plane state (dynamic configs, the audit trail, and the tables later
// issues add) lives in one State, changed only by apply functions, one per
// command type (see apply.go). Apply never reads the clock, randomness, the
// network or the disk: the time of a change is the leader's stamp in the command
// envelope. Given the same log, every node reaches byte-identical snapshots.
package fsm

import (
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"strata/commands"
)

// Meta is what an apply function knows about the entry besides its command.
type Meta struct {
	Index  uint64         // Raft log index
	TimeMs int64          // leader-assigned time, UTC epoch millis
	Audit  commands.Audit // who asked
}

// Result is what Apply returns to the proposer through the Raft future.
type Result struct {
	Value any
	Err   error
}

// FSM implements raft.FSM and raft.BatchingFSM over a State.
type FSM struct {
	mu     sync.RWMutex
	state  *State
	logger hclog.Logger
}

// New returns an FSM with empty state.
func New(logger hclog.Logger) *FSM {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &FSM{state: newState(), logger: logger}
}

// Apply applies one log entry.
func (f *FSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applyLocked(l)
}

// ApplyBatch applies consecutive entries under one lock acquisition; hashicorp/raft
// hands over batches when many proposals arrive together.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, l := range logs {
		out[i] = f.applyLocked(l)
	}
	return out
}

func (f *FSM) applyLocked(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	res := f.state.applyEntry(l.Index, l.Data)
	if res.Err != nil && IsFatal(res.Err) {
		// A committed entry this binary cannot understand: continuing would let this
		// node's state silently diverge from its peers. Stop loudly instead.
		f.logger.Error("cannot apply committed log entry; stopping", "index", l.Index, "error", res.Err)
		panic(fmt.Sprintf("fsm: cannot apply log index %d: %v", l.Index, res.Err))
	}
	return res
}

// Read runs fn with a consistent read-only view of the state.
func (f *FSM) Read(fn func(s *State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.state)
}

// LastIndex is the index of the last applied entry.
func (f *FSM) LastIndex() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.index
}

// LastTime is the largest leader time applied so far; the leader uses it to keep
// stamps monotonic across leader changes with skewed clocks.
func (f *FSM) LastTime() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.lastTimeMs
}

// Snapshot captures a point-in-time view cheaply; Persist writes it out while
// Apply continues.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.freeze(), nil
}

// Restore replaces the state with a snapshot's.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	s, err := readSnapshot(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.state = s
	f.mu.Unlock()
	return nil
}

var _ raft.BatchingFSM = (*FSM)(nil)
