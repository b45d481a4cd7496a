package process

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/commands"
	"strata/config"
	"strata/escalator"
	"strata/ingest/middlemanager"
	"strata/ingest/nativebatch"
	"strata/ingest/sqltask"
	"strata/metrics"
	"strata/props"
	"strata/querynode/historical"
	"strata/server"
	"strata/streaming"
)

// QuickstartMiddleManager is the quickstart middle manager's address.
const QuickstartMiddleManager = "127.0.0.1:8091"

// MiddleManagerConfig builds a worker's configuration from properties
// (config.ParseMiddleManager); its task directories and logs are under
// <svc.data.dir>/tasks.
func MiddleManagerConfig(p *props.Properties, logger hclog.Logger) (middlemanager.Config, error) {
	mc, err := config.ParseMiddleManager(p)
	if err != nil {
		return middlemanager.Config{}, err
	}
	node := config.ParseNode(p)
	adv, err := url.Parse(node.URL())
	if err != nil || adv.Host == "" {
		return middlemanager.Config{}, fmt.Errorf("advertised URL %q of the middle manager: %v", node.URL(), err)
	}
	if node.DataDir == "" {
		return middlemanager.Config{}, errors.New("svc.data.dir is empty: pass --data DIR")
	}
	ip := mc.IP
	if ip == "" {
		ip, _, _ = net.SplitHostPort(adv.Host)
	}
	category := mc.Category
	if category == "" {
		category = commands.DefaultWorkerCategory
	}
	return middlemanager.Config{
		Host: adv.Host, Scheme: adv.Scheme, IP: ip, Capacity: mc.Capacity, Category: category, Version: mc.Version,
		DataDir: filepath.Clean(node.DataDir), Overlords: mc.OverlordURLs, HeartbeatPeriod: mc.HeartbeatPeriod,
		Logger: logger.Named("middleManager"),
		// Registration, heartbeats, task status and actions are internal endpoints.
		Client: escalator.NodeClient(p, 10*time.Second),
	}, nil
}

// startMiddleManager starts the worker of a process whose HTTP server (the
// last one listening) serves the middle manager role with properties p; the
// worker stops when that server shuts down. Its tasks' publishes and
// hand-offs are recorded in m, that server's registry; they wait on the
// brokers listed by brokers (its discovery; nil: svc.router.brokerUrls).
func (proc *Process) startMiddleManager(p *props.Properties, logger hclog.Logger, serving *historical.Node, m *metrics.Ingest, brokers func() []string) error {
	cfg, err := MiddleManagerConfig(p, logger)
	if err != nil {
		return err
	}
	cfg.Metrics = m
	if serving != nil {
		cfg.Serving = serving
	}
	w, err := middlemanager.New(cfg)
	if err != nil {
		return err
	}
	// SQL tasks reach the cluster through the overlord nodes and the brokers.
	sp := props.New()
	sp.Merge(p)
	if !config.IsSet(sp, "svc.indexer.coordinatorUrls") {
		sp.Set("svc.indexer.coordinatorUrls", strings.Join(cfg.Overlords, ","))
	}
	// Per worker (by its host), not per Go process: a test binary may run
	// the middle managers of several clusters.
	if err := sqltask.Configure(sp, cfg.Host, brokers); err != nil {
		return fmt.Errorf("SQL tasks: %w", err)
	}
	if err := nativebatch.Configure(sp, cfg.Host, brokers); err != nil {
		return fmt.Errorf("native batch tasks: %w", err)
	}
	if err := streaming.Configure(sp, cfg.Host, brokers); err != nil {
		return fmt.Errorf("Kafka ingestion tasks: %w", err)
	}
	middlemanager.Attach(p, w)
	w.Start()
	proc.servers[len(proc.servers)-1].RegisterOnShutdown(func() {
		w.Stop()
		middlemanager.Detach(p)
		sqltask.Forget(cfg.Host)
		nativebatch.Forget(cfg.Host)
		streaming.Forget(cfg.Host)
	})
	return nil
}

// startQuickstartMiddleManager runs a middle manager on its own port next to
// the quickstart control node.
func (proc *Process) startQuickstartMiddleManager(p *props.Properties, logger hclog.Logger) error {
	mp := props.New()
	mp.Merge(p)
	mp.Set("svc.node.roles", server.RoleMiddleManager)
	mp.Set("svc.http.address", QuickstartMiddleManager)
	mp.Set("svc.http.advertisedUrl", "")
	mp.Set("svc.tlsPort", "") // the coordinator's; this listener's follows the default rule
	if !config.IsSet(mp, "svc.worker.capacity") {
		mp.Set("svc.worker.capacity", "4") // SQL ingestion needs two slots at least
	}
	if !config.IsSet(mp, "svc.worker.overlordUrls") {
		mp.Set("svc.worker.overlordUrls", config.ParseNode(p).URL())
	}
	if !config.IsSet(mp, "svc.router.brokerUrls") {
		// Its SQL tasks wait for their segments on quickstart's broker.
		mp.Set("svc.router.brokerUrls", config.ListenerURL(p, QuickstartBroker))
	}
	dp, err := newDataPlane(mp, []string{server.RoleMiddleManager}, logger, nil)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Options{Roles: []string{server.RoleMiddleManager}, Props: mp, Logger: logger.Named("middleManager"),
		Historical: dp.historical, Security: proc.sec})
	if err != nil {
		return err
	}
	if err := proc.listen(mp, QuickstartMiddleManager, srv.Handler()); err != nil {
		return err
	}
	dp.start(proc)
	if err := proc.startMiddleManager(mp, logger, dp.historical, srv.Metrics().Ingest, nil); err != nil {
		return err
	}
	return proc.announceQuickstart(mp, config.ParseNode(p).URL(), logger)
}
