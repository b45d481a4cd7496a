package commands

// SetCoordinatorConfig merges a partial coordinator dynamic config over the current one.
type SetCoordinatorConfig struct {
	Patch CoordinatorConfigPatch `json:"patch"`
}

// CommandType implements Command.
func (SetCoordinatorConfig) CommandType() string { return "coordinator.config.set" }

// SetWorkerConfig replaces the overlord worker behaviour config.
type SetWorkerConfig struct {
	Config WorkerBehaviorConfig `json:"config"`
}

// CommandType implements Command.
func (SetWorkerConfig) CommandType() string { return "worker.config.set" }

func init() {
	Register(SetCoordinatorConfig{}, false)
	Register(SetWorkerConfig{}, false)
}
