package fsm

import (
	"strata/commands"
)

// State is all control-plane state. Each table is a field; each table knows how
// to snapshot and restore itself (snapshot.go).
type State struct {
	index      uint64 // last applied log index
	lastTimeMs int64  // largest leader time applied

	coordinatorConfig *commands.CoordinatorDynamicConfig // nil: never set, defaults apply
	workerConfig      *commands.WorkerBehaviorConfig     // nil: never set
	audit             auditTable
	segments          segmentsTable
	tasks             tasksTable            // tasks, locks, workers (tasks.go)
	supervisors       supervisorsTable      // stream supervisors and their history (supervisors.go)
	supervisorStates  supervisorStatesTable // the supervisors' runtime state timelines (supervisors_states.go)
	rules             rulesTable            // retention rules per datasource (rules.go)
	servers           serversTable          // discovery membership (servers.go)
	security          securityTable         // users, credentials, roles, permissions (security.go)
	lookups           lookupsTable          // lookup definitions per tier (lookups.go)
}

func newState() *State {
	s := &State{}
	s.segments.init()
	return s
}

// applyEntry decodes and applies one command; the index and time advance even
// when the command is rejected, so that every node agrees on them.
func (s *State) applyEntry(index uint64, data []byte) Result {
	s.index = index
	env, cmd, err := commands.Decode(data)
	if err != nil {
		return Result{Err: &Error{Kind: KindFatal, Msg: err.Error()}}
	}
	if env.TimeMs > s.lastTimeMs {
		s.lastTimeMs = env.TimeMs
	}
	if cmd == nil { // unknown but ignorable
		return Result{}
	}
	fn, ok := appliers[env.Type]
	if !ok {
		return Result{Err: &Error{Kind: KindFatal, Msg: "no apply function for command " + env.Type}}
	}
	v, err := fn(s, Meta{Index: index, TimeMs: env.TimeMs, Audit: env.Audit}, cmd)
	return Result{Value: v, Err: err}
}

// CoordinatorConfig returns the current coordinator dynamic config (defaults if never set).
func (s *State) CoordinatorConfig() commands.CoordinatorDynamicConfig {
	if s.coordinatorConfig == nil {
		return commands.DefaultCoordinatorConfig()
	}
	return *s.coordinatorConfig
}

// WorkerConfig returns the overlord worker config and whether it was ever set.
func (s *State) WorkerConfig() (commands.WorkerBehaviorConfig, bool) {
	if s.workerConfig == nil {
		return commands.WorkerBehaviorConfig{}, false
	}
	return *s.workerConfig, true
}

// Index returns the last applied index.
func (s *State) Index() uint64 { return s.index }
