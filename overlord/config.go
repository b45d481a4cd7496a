package overlord

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/escalator"
	"strata/props"
)

// ConfigFromProps reads the task runner settings (svc.worker.heartbeatTimeout,
// svc.indexer.runner.taskAssignmentTimeout, config.ParseOverlord); a malformed
// value is logged and the default used. Its client starts tasks on the
// workers' internal API, with the cluster's internal credentials when they
// are set.
func ConfigFromProps(p *props.Properties, log hclog.Logger) Config {
	c := config.ParseOverlord(p, log)
	return Config{HeartbeatTimeout: c.HeartbeatTimeout, AssignmentTimeout: c.AssignmentTimeout, Logger: log.Named("overlord"),
		Client: escalator.NodeClient(p, 10*time.Second)}
}
