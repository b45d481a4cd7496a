package fsm

import (
	"encoding/json"

	"strata/commands"
)

// applyFunc is the shape every apply function is adapted to.
type applyFunc func(s *State, m Meta, cmd commands.Command) (any, error)

// appliers maps a command tag to its apply function. Adding a command: one type in
// package commands, one apply function here, and (if it adds state) one table.
var appliers = map[string]applyFunc{}

// on registers the apply function of command type C.
func on[C commands.Command](fn func(s *State, m Meta, c C) (any, error)) {
	var zero C
	appliers[zero.CommandType()] = func(s *State, m Meta, cmd commands.Command) (any, error) {
		switch c := any(cmd).(type) {
		case C:
			return fn(s, m, c)
		case *C:
			return fn(s, m, *c)
		}
		return nil, &Error{Kind: KindFatal, Msg: "command type mismatch for " + zero.CommandType()}
	}
}

func init() {
	on(applySetCoordinatorConfig)
	on(applySetWorkerConfig)
}

// Audit types and keys, as Druid names them.
const (
	AuditCoordinatorConfig = "coordinator.config"
	AuditWorkerConfig      = "worker.config"
)

func applySetCoordinatorConfig(s *State, m Meta, c commands.SetCoordinatorConfig) (any, error) {
	next, err := c.Patch.Apply(s.CoordinatorConfig())
	if err != nil {
		return nil, Invalid("%s", err.Error())
	}
	payload, err := next.AppendJSON(make([]byte, 0, 1024))
	if err != nil {
		return nil, Invalid("cannot encode config: %v", err)
	}
	s.coordinatorConfig = &next
	s.audit.add(m, AuditCoordinatorConfig, AuditCoordinatorConfig, string(payload))
	return next, nil
}

func applySetWorkerConfig(s *State, m Meta, c commands.SetWorkerConfig) (any, error) {
	cfg := c.Config
	if cfg.Type == "" {
		cfg.Type = "default"
	}
	if err := cfg.Validate(); err != nil {
		return nil, Invalid("%s", err.Error())
	}
	payload, err := json.Marshal(cfg)
	if err != nil {
		return nil, Invalid("cannot encode config: %v", err)
	}
	s.workerConfig = &cfg
	s.audit.add(m, AuditWorkerConfig, AuditWorkerConfig, string(payload))
	return cfg, nil
}
