package process

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/discovery"
	"strata/escalator"
	"strata/props"
	"strata/querynode/historical"
	"strata/server"
)

// The static URL lists that default to the control nodes when
// svc.discovery.coordinators is set.
var controlURLKeys = []string{"svc.historical.coordinatorUrls", "svc.worker.overlordUrls", "svc.router.coordinatorUrls", "svc.broker.coordinatorUrls"}

// applyDiscoveryDefaults points every unset control-node list of p at the
// control nodes discovery is configured with, so a process needs only
// svc.discovery.coordinators; a list that is set stays an override.
func applyDiscoveryDefaults(p *props.Properties, dc config.Discovery) {
	if len(dc.Coordinators) == 0 {
		return
	}
	for _, key := range controlURLKeys {
		if !config.IsSet(p, key) {
			p.Set(key, strings.Join(dc.Coordinators, ","))
		}
	}
}

// newAnnouncer builds the announcer of a process whose properties name the
// control nodes (nil without svc.discovery.coordinators: static lists).
func newAnnouncer(p *props.Properties, dc config.Discovery, logger hclog.Logger) (*discovery.Announcer, error) {
	if len(dc.Coordinators) == 0 {
		return nil, nil
	}
	node := config.ParseNode(p)
	u, err := url.Parse(node.URL())
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("discovery: the advertised URL %q has no host:port", node.URL())
	}
	self := discovery.Announcement{ID: u.Host, Roles: node.Roles, URL: node.URL(), Version: server.Version, StartTimeMs: time.Now().UnixMilli()}
	if slices.Contains(node.Roles, server.RoleHistorical) {
		if hc, err := config.ParseHistorical(p); err == nil {
			self.Tier, self.Priority = hc.Tier, hc.Priority
			if n, err := historical.ParseBytes(hc.MaxSize); err == nil {
				self.MaxSize = n
			}
		}
	}
	if slices.Contains(node.Roles, server.RoleMiddleManager) {
		if mc, err := config.ParseMiddleManager(p); err == nil {
			self.Capacity = mc.Capacity
		}
	}
	return discovery.NewAnnouncer(discovery.AnnouncerConfig{
		Coordinators: dc.Coordinators, Self: self, Period: dc.HeartbeatPeriod, MaxClockSkew: dc.MaxClockSkew,
		Client: escalator.NodeClient(p, 5*time.Second),
		Logger: logger.Named("discovery"),
	})
}

// liveURLs lists the live members with any of roles, from a.
func liveURLs(a *discovery.Announcer, roles ...string) func() []string {
	return func() []string {
		var out []string
		for _, r := range roles {
			out = append(out, a.URLs(r)...)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
}

// startRegistry runs the discovery registry of a control node: it serves
// announcements while the node leads, and hands a gone member's work on
// (the coordinator places its segments elsewhere, the overlord fails its
// tasks so that their supervisors replace them).
func (proc *Process) startRegistry(o *server.Options, dc config.Discovery, logger hclog.Logger) {
	log := logger.Named("discovery")
	reg := discovery.NewRegistry(o.Node, discovery.RegistryConfig{LeaseTimeout: dc.LeaseTimeout, Version: server.Version, Logger: log,
		OnGone: func(m discovery.Member) {
			if m.HasRole(server.RoleHistorical) && o.Coordinator != nil {
				o.Coordinator.Inventory.Forget(m.Host())
			}
			if m.HasRole(server.RoleMiddleManager) && o.Overlord != nil {
				o.Overlord.WorkerGone(m.Host())
			}
		}})
	o.Discovery = reg
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(ctx) }()
	proc.stop = append(proc.stop, func() { cancel(); <-done })
}

// announceQuickstart makes one of the quickstart's listeners (lp: its
// properties) announce itself to the quickstart's control node at control,
// as a process of a cluster would: the quickstart has no
// svc.discovery.coordinators, yet /svc/coordinator/v1/servers and the
// broker's sys.servers should list every process, as Druid's sys.servers
// does. Only the membership changes: the quickstart's roles keep reaching
// each other through their fixed addresses.
func (proc *Process) announceQuickstart(lp *props.Properties, control string, logger hclog.Logger) error {
	ap := props.New()
	ap.Merge(lp)
	ap.Set("svc.discovery.coordinators", control)
	dc, err := config.ParseDiscovery(ap)
	if err != nil {
		return err
	}
	ann, err := newAnnouncer(ap, dc, logger)
	if err != nil {
		return err
	}
	ann.Start()
	proc.stop = append([]func(){ann.Close}, proc.stop...)
	return nil
}
