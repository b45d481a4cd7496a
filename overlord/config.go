package overlord

import (
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/escalator"
	"strata/props"
)

// ConfigFromProps reads the task runner settings (svc.worker.heartbeatTimeout,
// svc.indexer.runner.taskAssignmentTimeout); a malformed value is logged and
// the default used. Its client starts tasks on the workers' internal API, with
// the cluster's internal credentials when they are set.
func ConfigFromProps(p *props.Properties, log hclog.Logger) Config {
	hb, err := p.Duration("svc.worker.heartbeatTimeout", 10*time.Second)
	if err != nil {
		log.Error("using the default heartbeat timeout", "error", err)
		hb = 10 * time.Second
	}
	at, err := p.Duration("svc.indexer.runner.taskAssignmentTimeout", hb)
	if err != nil {
		log.Error("using the default task assignment timeout", "error", err)
		at = hb
	}
	return Config{HeartbeatTimeout: hb, AssignmentTimeout: at, Logger: log.Named("overlord"),
		Client: escalator.FromProps(p).Client(&http.Client{Timeout: 10 * time.Second})}
}
