package coordinator

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/config"
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
	// Scheme is how the historicals are reached ("https" when TLS is on):
	// they name themselves host:port, and a cluster has TLS on every
	// process or on none.
	Scheme string
	Logger hclog.Logger
}

// ConfigFromProps reads the svc.coordinator.* properties (config.ParseCoordinator).
// A malformed or out-of-range value is logged and its default used; a bad
// svc.coordinator.period fails the process's start in the sweeper instead, so
// its error is not reported twice here.
func ConfigFromProps(p *props.Properties, log hclog.Logger) Config {
	c, _ := config.ParseCoordinator(p, log)
	return Config{
		InventoryPeriod: c.InventoryPeriod,
		InventoryExpiry: c.InventoryExpiry,
		StartDelay:      c.StartDelay,
		Period:          c.Period,
		LoadTimeout:     c.LoadTimeout,
		HandoverDelay:   c.HandoverDelay,
		Client:          escalator.NodeClient(p, 10*time.Second),
		Scheme:          scheme(config.ParseNode(p).URL()),
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
	inv := &Inventory{Period: cfg.InventoryPeriod, Expiry: cfg.InventoryExpiry, Logger: log.Named("inventory"), Client: cfg.Client, Scheme: cfg.Scheme}
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

// scheme is the scheme of a base URL, "http" when it has none.
func scheme(url string) string {
	if s, _, ok := strings.Cut(url, "://"); ok {
		return s
	}
	return "http"
}
