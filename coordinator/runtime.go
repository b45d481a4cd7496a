package coordinator

import (
	"context"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/escalator"
	"strata/props"
)

// Config configures the coordinator's runtime on a control node.
type Config struct {
	// InventoryPeriod and InventoryExpiry are the Inventory's Period and
	// Expiry (svc.coordinator.inventory.period, .expiry).
	InventoryPeriod, InventoryExpiry time.Duration
	// StartDelay, Period, LoadTimeout and HandoverDelay are the Placement's
	// (svc.coordinator.startDelay, .period, .loadTimeout, .handoverDelay).
	StartDelay, Period, LoadTimeout, HandoverDelay time.Duration
	// Client polls the historicals' internal API (with the cluster's
	// internal credentials when they are set).
	Client *http.Client
	Logger hclog.Logger
}

// ConfigFromProps reads the svc.coordinator.* properties. A malformed or
// out-of-range value is logged and its default used (a bad
// svc.coordinator.period fails the process's start in the sweeper instead).
func ConfigFromProps(p *props.Properties, log hclog.Logger) Config {
	dur := func(key string, def time.Duration, zeroOK bool, what string) time.Duration {
		d, err := p.Duration(key, def)
		if err != nil || d < 0 || (d == 0 && !zeroOK) {
			if what != "" {
				log.Error("using the default "+what, "error", err)
			}
			return def
		}
		return d
	}
	return Config{
		InventoryPeriod: dur("svc.coordinator.inventory.period", time.Second, false, "inventory period (1s)"),
		InventoryExpiry: dur("svc.coordinator.inventory.expiry", 30*time.Second, false, "inventory expiry (30s)"),
		StartDelay:      dur("svc.coordinator.startDelay", 2*time.Second, true, "start delay (2s)"),
		Period:          dur("svc.coordinator.period", time.Minute, false, ""),
		LoadTimeout:     dur("svc.coordinator.loadTimeout", 15*time.Minute, false, "load timeout (15m)"),
		HandoverDelay:   dur("svc.coordinator.handoverDelay", time.Second, true, "handover delay (1s)"),
		Client:          escalator.FromProps(p).Client(&http.Client{Timeout: 10 * time.Second}),
		Logger:          log,
	}
}

// Runtime is the coordinator's in-memory state on a control node: what the
// historicals serve and which of them should serve what. The coordinator's
// endpoints read it; the duties that change the FSM (Retention, Sweeper)
// run on their own.
type Runtime struct {
	Inventory *Inventory
	Placement *Placement
}

// Start starts following what the historicals serve; it stops when the node
// shuts down.
func Start(node *cluster.Node, cfg Config) *Runtime {
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	inv := &Inventory{Period: cfg.InventoryPeriod, Expiry: cfg.InventoryExpiry, Logger: log.Named("inventory"), Client: cfg.Client}
	pl := &Placement{Node: node, Inventory: inv, StartDelay: cfg.StartDelay, Period: cfg.Period,
		LoadTimeout: cfg.LoadTimeout, HandoverDelay: cfg.HandoverDelay, Logger: log.Named("placement")}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-node.Done()
		cancel()
	}()
	go inv.Run(ctx)
	return &Runtime{Inventory: inv, Placement: pl}
}
