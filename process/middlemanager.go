package process

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/commands"
	"strata/escalator"
	"strata/ingest/middlemanager"
	"strata/ingest/nativebatch"
	"strata/ingest/sqltask"
	"strata/props"
	"strata/querynode/historical"
	"strata/server"
	"strata/streaming"
)

// QuickstartMiddleManager is the quickstart middle manager's address.
const QuickstartMiddleManager = "127.0.0.1:8091"

// MiddleManagerConfig builds a worker's configuration from properties:
//
//	svc.worker.capacity        task slots (default: CPUs − 1, at least 1)
//	svc.worker.category        worker category (default _default_worker_category)
//	svc.worker.version         worker version (default "0")
//	svc.worker.ip              address shown in the workers listing (default: the advertised host)
//	svc.worker.overlordUrls    control node URLs (default: svc.router.coordinatorUrls)
//	svc.worker.heartbeatPeriod heartbeat interval (default 1s)
//	svc.data.dir               task directories and logs under <dir>/tasks
func MiddleManagerConfig(p *props.Properties, logger hclog.Logger) (middlemanager.Config, error) {
	var errs []error
	capacity, err := p.Int("svc.worker.capacity", int64(max(1, runtime.NumCPU()-1)))
	errs = append(errs, err)
	period, err := p.Duration("svc.worker.heartbeatPeriod", 0)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return middlemanager.Config{}, err
	}
	adv, err := url.Parse(AdvertisedURL(p))
	if err != nil || adv.Host == "" {
		return middlemanager.Config{}, fmt.Errorf("advertised URL %q of the middle manager: %v", AdvertisedURL(p), err)
	}
	overlords := props.ParseList(p.String("svc.worker.overlordUrls"))
	if len(overlords) == 0 {
		overlords = props.ParseList(p.String("svc.router.coordinatorUrls"))
	}
	if len(overlords) == 0 {
		return middlemanager.Config{}, errors.New("the middle manager needs the control nodes: set svc.worker.overlordUrls (e.g. http://127.0.0.1:8081)")
	}
	if capacity < 1 || capacity > 100000 {
		return middlemanager.Config{}, fmt.Errorf("svc.worker.capacity=%d must be in 1..100000", capacity)
	}
	dir := p.String("svc.data.dir")
	if dir == "" {
		return middlemanager.Config{}, errors.New("svc.data.dir is empty: pass --data DIR")
	}
	ip := p.String("svc.worker.ip")
	if ip == "" {
		ip, _, _ = net.SplitHostPort(adv.Host)
	}
	category := p.String("svc.worker.category")
	if category == "" {
		category = commands.DefaultWorkerCategory
	}
	version := p.String("svc.worker.version")
	if version == "" {
		version = "0"
	}
	return middlemanager.Config{
		Host: adv.Host, Scheme: adv.Scheme, IP: ip, Capacity: int(capacity), Category: category, Version: version,
		DataDir: filepath.Clean(dir), Overlords: overlords, HeartbeatPeriod: period, Logger: logger.Named("middleManager"),
		// Registration, heartbeats, task status and actions are internal endpoints.
		Client: escalator.FromProps(p).Client(&http.Client{Timeout: 10 * time.Second}),
	}, nil
}

// startMiddleManager starts the worker of a process whose HTTP server (the
// last one listening) serves the middle manager role with properties p; the
// worker stops when that server shuts down.
func (proc *Process) startMiddleManager(p *props.Properties, logger hclog.Logger, serving *historical.Node) error {
	cfg, err := MiddleManagerConfig(p, logger)
	if err != nil {
		return err
	}
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
	if sp.String("svc.indexer.coordinatorUrls") == "" {
		sp.Set("svc.indexer.coordinatorUrls", strings.Join(cfg.Overlords, ","))
	}
	if err := sqltask.Configure(sp); err != nil {
		return fmt.Errorf("SQL tasks: %w", err)
	}
	if err := nativebatch.Configure(sp); err != nil {
		return fmt.Errorf("native batch tasks: %w", err)
	}
	if err := streaming.Configure(sp); err != nil {
		return fmt.Errorf("Kafka ingestion tasks: %w", err)
	}
	middlemanager.Attach(p, w)
	w.Start()
	proc.servers[len(proc.servers)-1].RegisterOnShutdown(func() {
		w.Stop()
		middlemanager.Detach(p)
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
	if mp.String("svc.worker.capacity") == "" {
		mp.Set("svc.worker.capacity", "4") // SQL ingestion needs two slots at least
	}
	if mp.String("svc.worker.overlordUrls") == "" {
		mp.Set("svc.worker.overlordUrls", "http://"+p.String("svc.http.address"))
	}
	dp, err := newDataPlane(mp, []string{server.RoleMiddleManager}, logger)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Options{Roles: []string{server.RoleMiddleManager}, Props: mp, Logger: logger.Named("middleManager"),
		Historical: dp.historical})
	if err != nil {
		return err
	}
	if err := proc.listen(QuickstartMiddleManager, srv.Handler()); err != nil {
		return err
	}
	dp.start(proc)
	return proc.startMiddleManager(mp, logger, dp.historical)
}
