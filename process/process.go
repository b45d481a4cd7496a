// Package process wires a Strata process together from its properties: the
// control node (Raft + FSM) when it has the coordinator or overlord role, the
// HTTP server of its roles, and, in quickstart, every role in one process.
package process

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/config"
	"strata/coordinator"
	"strata/discovery"
	"strata/escalator"
	"strata/ingest"
	"strata/ingest/input"
	"strata/overlord"
	"strata/props"
	"strata/server"
	"strata/streaming"
	"strata/tlsconf"
)

// Process is a running Strata process.
type Process struct {
	Props   *props.Properties
	Node    *cluster.Node
	Logger  hclog.Logger
	servers []*http.Server
	addrs   []string
	errCh   chan error
	stop    []func() // background duties, stopped by Close
	// sec is the authenticator chain (nil: the API is open), shared by the
	// quickstart's listeners.
	sec *server.Security
	// reloaders hold the HTTPS listeners' certificates.
	reloaders []*tlsconf.Reloader
}

// NodeConfig builds the Raft configuration from properties (config.ParseNode,
// config.ParseRaft).
func NodeConfig(p *props.Properties, logger hclog.Logger) (cluster.Config, error) {
	node := config.ParseNode(p)
	rc, err := config.ParseRaft(p)
	cfg := cluster.Config{
		ID:                 node.ID,
		RaftAddr:           rc.Address,
		HTTPURL:            node.URL(),
		DataDir:            node.DataDir,
		HeartbeatTimeout:   rc.HeartbeatTimeout,
		ElectionTimeout:    rc.ElectionTimeout,
		LeaderLeaseTimeout: rc.LeaderLeaseTimeout,
		CommitTimeout:      rc.CommitTimeout,
		MaxAppendEntries:   rc.MaxAppendEntries,
		SnapshotThreshold:  rc.SnapshotThreshold,
		SnapshotInterval:   rc.SnapshotInterval,
		TrailingLogs:       rc.TrailingLogs,
		SnapshotRetain:     rc.SnapshotRetain,
		NoSync:             rc.NoSync,
		ArchiveRetention:   rc.ArchiveRetention,
		Logger:             logger,
	}
	if err != nil {
		return cfg, err
	}
	// With TLS on, Raft's port is TLS with client certificates too:
	// otherwise anyone reaching it could append to the log.
	tc, err := config.ParseTLS(p)
	if err != nil {
		return cfg, err
	}
	if srv, cl, err := tlsconf.Raft(tc, logger.Named("raft-tls")); err != nil {
		return cfg, fmt.Errorf("raft TLS: %w", err)
	} else if srv != nil {
		cfg.RaftTLS = &cluster.RaftTLS{Server: srv, Client: cl}
	}
	if peers := rc.Peers; peers != "" {
		ps, err := cluster.ParsePeers(peers)
		if err != nil {
			return cfg, fmt.Errorf("svc.raft.peers: %w", err)
		}
		cfg.Peers = ps
		for _, peer := range ps {
			if peer.ID == cfg.ID {
				cfg.HTTPURL = peer.HTTPURL
				if cfg.RaftAddr == "" {
					cfg.RaftAddr = peer.RaftAddr
				}
			}
		}
	}
	if cfg.DataDir == "" {
		return cfg, errors.New("svc.data.dir is empty: pass --data DIR")
	}
	// With S3 deep storage the audit archive is kept there too, under the
	// node's id (the nodes may share a bucket); local deep storage is a
	// disk of the node's, so the archive stays in its data directory.
	if config.ParseStorage(p).Type == "s3" {
		ds, err := ingest.DeepStorageFromProps(p)
		if err != nil {
			return cfg, fmt.Errorf("deep storage: %w", err)
		}
		cfg.ArchiveStorage, cfg.ArchivePrefix = ds, "_audit/"+cfg.ID
	}
	return cfg, nil
}

// AdvertisedURL is the base URL peers and clients use to reach this process.
func AdvertisedURL(p *props.Properties) string {
	return config.ParseNode(p).URL()
}

// Roles returns the role list of the properties.
func Roles(p *props.Properties) []string { return config.ParseNode(p).Roles }

// StartServer starts one control (or other-role) process from properties.
func StartServer(p *props.Properties, logger hclog.Logger) (*Process, error) {
	proc := &Process{Props: p, Logger: logger, errCh: make(chan error, 4)}
	node := config.ParseNode(p)
	roles := node.Roles
	if len(roles) == 0 {
		return nil, errors.New("no roles: set --roles (e.g. coordinator,overlord)")
	}
	// Discovery: the control nodes' addresses are all a process needs; the
	// control-node lists default to them and the others to what it finds.
	dc, err := config.ParseDiscovery(p)
	if err != nil {
		return nil, err
	}
	applyDiscoveryDefaults(p, dc)
	// What ingestion may read: set before any role can take a task.
	pol, err := ingestionPolicy(p)
	if err != nil {
		return nil, err
	}
	input.SetPolicy(pol)
	// TLS settings that do not load stop the start here, not at the first
	// call between processes.
	if _, err := escalator.NodeTLS(p); err != nil {
		return nil, err
	}
	needsNode := false
	for _, r := range roles {
		switch r {
		case server.RoleCoordinator, server.RoleOverlord:
			needsNode = true
		case server.RoleRouter, server.RoleMiddleManager, server.RoleHistorical, server.RoleBroker:
		default:
			return nil, fmt.Errorf("role %q is not available yet (available: coordinator, overlord, router, middleManager, historical, broker)", r)
		}
	}
	if needsNode {
		cfg, err := NodeConfig(p, logger.Named("cluster"))
		if err != nil {
			return nil, err
		}
		n, err := cluster.Start(cfg)
		if err != nil {
			return nil, err
		}
		proc.Node = n
		if contains(roles, server.RoleCoordinator) {
			if err := proc.startSweeper(p, logger); err != nil {
				proc.Close()
				return nil, err
			}
		}
	}
	ann, err := newAnnouncer(p, dc, logger)
	if err != nil {
		proc.Close()
		return nil, err
	}
	var proxy *server.Proxy
	if contains(roles, server.RoleRouter) {
		proxy = routerProxy(p, ann)
	}
	dp, err := newDataPlane(p, roles, logger, ann)
	if err != nil {
		proc.Close()
		return nil, err
	}
	opts := server.Options{Roles: roles, Node: proc.Node, Props: p, Logger: logger.Named("http"), Proxy: proxy,
		Historical: dp.historical, Broker: dp.broker, Lookups: dp.lookups, Announcer: ann}
	if proc.sec, err = newSecurity(p, proc.Node, controlURLsOf(p), logger, &proc.stop); err != nil {
		proc.Close()
		return nil, err
	}
	opts.Security = proc.sec
	if proc.Node != nil {
		opts = withControlRuntime(opts, logger)
		proc.startRegistry(&opts, dc, logger)
	}
	srv, err := server.New(opts)
	if err != nil {
		proc.Close()
		return nil, err
	}
	if err := proc.listen(p, node.HTTPAddress, srv.Handler()); err != nil {
		proc.Close()
		return nil, err
	}
	dp.start(proc)
	proc.checkDeepStorage(p, roles, logger)
	if contains(roles, server.RoleMiddleManager) {
		var brokers func() []string
		if ann != nil && !config.IsSet(p, "svc.router.brokerUrls") {
			// Its tasks ask the live brokers whether their segments loaded.
			brokers = liveURLs(ann, server.RoleBroker)
		}
		if err := proc.startMiddleManager(p, logger, dp.historical, srv.Metrics().Ingest, brokers); err != nil {
			proc.Close()
			return nil, err
		}
	}
	if ann != nil {
		// Announce once the server answers, so that whoever finds this
		// process can reach it; say goodbye first when closing.
		ann.Start()
		proc.stop = append([]func(){ann.Close}, proc.stop...)
	}
	return proc, nil
}

// withControlRuntime starts the leader runtime of the control roles in o
// on o.Node, configured from o.Props, and returns o with it: the coordinator's
// inventory and placement, the overlord's task runner and its supervisor
// runtime. Each runs while the node leads and stops when the node shuts down.
func withControlRuntime(o server.Options, logger hclog.Logger) server.Options {
	if contains(o.Roles, server.RoleCoordinator) {
		log := logger.Named("coordinator")
		o.Coordinator = coordinator.Start(o.Node, coordinator.ConfigFromProps(o.Props, log))
	}
	if contains(o.Roles, server.RoleOverlord) {
		o.Overlord = overlord.Attach(o.Node, overlord.ConfigFromProps(o.Props, logger))
		o.Supervisors = o.Overlord.StartSupervisors(streaming.StateConfigFromProps(o.Props, logger), logger.Named("supervisor"))
	}
	return o
}

// routerProxy builds the router's routes from svc.router.* properties; by default
// the control plane at svc.router.coordinatorUrls. With discovery (ann not
// nil), an unset list is the live members of the role, asked at each
// request; without it, quickstart's addresses.
func routerProxy(p *props.Properties, ann *discovery.Announcer) *server.Proxy {
	// The router's server was built from the same properties, so a
	// malformed body limit has stopped the start already.
	hc, _ := config.ParseHTTP(p)
	rc := config.ParseRouter(p)
	control := rc.CoordinatorURLs
	brokers, historicals := routerDataPlane(p, rc)
	workers := rc.WorkerURLs
	if len(workers) == 0 {
		workers = []string{config.ListenerURL(p, QuickstartMiddleManager)}
	}
	var controlLive, brokersLive, historicalsLive, workerLive func() []string
	var brokersRefresh func(context.Context, time.Time)
	if ann != nil {
		// The control nodes as configured and as announced: a leader's
		// redirect names its advertised URL, which a DNS name in
		// svc.discovery.coordinators does not show.
		members := liveURLs(ann, server.RoleCoordinator, server.RoleOverlord)
		controlLive = func() []string {
			out := append(slices.Clone(rc.CoordinatorURLs), members()...)
			slices.Sort(out)
			return slices.Compact(out)
		}
		control = nil
		if len(rc.BrokerURLs) == 0 {
			brokers, brokersLive = nil, liveURLs(ann, server.RoleBroker)
			// A query no listed broker took asks the leader for the
			// current brokers (one restarted since the last heartbeat).
			brokersRefresh = ann.Refresh
		}
		if len(rc.HistoricalURLs) == 0 {
			historicals, historicalsLive = nil, liveURLs(ann, server.RoleHistorical)
		}
		if len(rc.WorkerURLs) == 0 {
			mms := liveURLs(ann, server.RoleMiddleManager)
			workers, workerLive = nil, func() []string { return firstOf(mms()) }
		}
	}
	proxy := server.NewProxy([]server.Route{
		{Prefix: "/svc/coordinator/", Backends: control, Discover: controlLive, Leader: true},
		{Prefix: "/svc/indexer/", Backends: control, Discover: controlLive, Leader: true},
		{Prefix: "/svc/v2/sql/task", Backends: control, Discover: controlLive, Leader: true}, // before /svc/v2/: SQL tasks go to the overlord
		{Prefix: "/svc/v2/", Backends: brokers, Discover: brokersLive, Refresh: brokersRefresh},
		{Prefix: "/svc/v2", Backends: brokers, Discover: brokersLive, Refresh: brokersRefresh}, // POST /svc/v2 without the slash, as pydruid sends it
		{Prefix: "/svc/broker/", Backends: brokers, Discover: brokersLive, Refresh: brokersRefresh},
		{Prefix: "/svc/historical/", Backends: historicals, Discover: historicalsLive},
		// Worker endpoints are about one middle manager, so the router speaks
		// for one: the first of svc.router.workerUrls (quickstart's by
		// default, the first live one with discovery).
		{Prefix: "/svc/worker/", Backends: firstOf(workers), Discover: workerLive},
		// The security API lives on the control plane, as on Druid's
		// coordinator: the README's role and user calls go through the router.
		// /svc-internal/ is not forwarded (Proxy.Mount refuses it).
		{Prefix: "/svc-ext/", Backends: control, Discover: controlLive, Leader: true},
	}, hc.MaxRequestBytes)
	// The router passes its clients' credentials on, not the internal
	// ones, so it takes only the node-to-node TLS settings (checked at start).
	if cfg, err := escalator.NodeTLS(p); err == nil {
		proxy.UseTLS(cfg)
	}
	return proxy
}

func firstOf(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return list[:1]
}

// Quickstart ports (spec: default local ports).
const (
	QuickstartRouter      = "127.0.0.1:8888"
	QuickstartCoordinator = "127.0.0.1:8081"
	QuickstartRaft        = "127.0.0.1:8300"
)

// QuickstartProps returns the properties of the one-process cluster.
func QuickstartProps(dataDir string) *props.Properties {
	p := props.Defaults()
	p.Set("svc.node.id", "quickstart")
	p.Set("svc.node.roles", "coordinator,overlord,router")
	p.Set("svc.http.address", QuickstartCoordinator)
	p.Set("svc.raft.address", QuickstartRaft)
	p.Set("svc.router.address", QuickstartRouter)
	p.Set("svc.data.dir", dataDir)
	p.Set("svc.ingestion.local.allowedBaseDirs", quickstartIngestDirs(dataDir))
	return p
}

// StartQuickstart runs every available role in one process: the control node on
// the coordinator port and the router on its own port.
func StartQuickstart(p *props.Properties, logger hclog.Logger) (*Process, error) {
	if !config.IsSet(p, "svc.router.coordinatorUrls") {
		// The control node's URL: https when TLS is on.
		p.Set("svc.router.coordinatorUrls", config.ParseNode(p).URL())
	}
	ctl := props.New()
	ctl.Merge(p)
	ctl.Set("svc.node.roles", "coordinator,overlord")
	proc, err := StartServer(ctl, logger)
	if err != nil {
		return nil, err
	}
	proc.Props = p
	control := config.ParseNode(p).URL()
	if err := proc.announceQuickstart(ctl, control, logger); err != nil {
		proc.Close()
		return nil, err
	}
	// Its other listeners are the process's own too: Kafka consumer
	// properties may not name them.
	pol, err := ingestionPolicy(p, config.ParseRouter(p).Address, QuickstartBroker, QuickstartHistorical, QuickstartMiddleManager)
	if err != nil {
		proc.Close()
		return nil, err
	}
	input.SetPolicy(pol)
	// The router's listener reports its own address and role, as a separate
	// router process would.
	rp := props.New()
	rp.Merge(p)
	rp.Set("svc.node.roles", server.RoleRouter)
	router := config.ParseRouter(p)
	rp.Set("svc.http.address", router.Address)
	rp.Set("svc.http.advertisedUrl", "")
	rp.Set("svc.tlsPort", "") // the coordinator's; this listener's follows the default rule
	rsrv, err := server.New(server.Options{Roles: []string{server.RoleRouter}, Props: rp, Logger: logger.Named("router"), Proxy: routerProxy(p, nil), Security: proc.sec})
	if err != nil {
		proc.Close()
		return nil, err
	}
	if err := proc.listen(rp, router.Address, rsrv.Handler()); err != nil {
		proc.Close()
		return nil, err
	}
	if err := proc.announceQuickstart(rp, control, logger); err != nil {
		proc.Close()
		return nil, err
	}
	if err := proc.startQuickstartMiddleManager(p, logger); err != nil {
		proc.Close()
		return nil, err
	}
	if err := proc.startQuickstartDataPlane(p, logger); err != nil {
		proc.Close()
		return nil, err
	}
	return proc, nil
}

// listen serves h on addr as p's TLS settings say: plain HTTP on addr when
// the plaintext port is on, HTTPS on the TLS address when TLS is on (one
// server, so a shutdown stops both).
func (proc *Process) listen(p *props.Properties, addr string, h http.Handler) error {
	t, err := config.ParseTLS(p)
	if err != nil {
		return err
	}
	tlsCfg, reloader, err := tlsconf.Server(t, proc.Logger.Named("tls"))
	if err != nil {
		return err
	}
	type listener struct {
		ln  net.Listener
		tls bool
	}
	var lns []listener
	for _, l := range []struct {
		addr string
		tls  bool
	}{{t.PlainAddress(addr), false}, {t.TLSAddress(addr), true}} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			for _, o := range lns {
				o.ln.Close()
			}
			return fmt.Errorf("listen on %s (is another process using the port?): %w", l.addr, err)
		}
		if l.tls {
			// HTTP/1.1 over TLS as over plain TCP (no ALPN h2): the
			// streamed answers and the router's proxying behave the same.
			ln = tls.NewListener(ln, tlsCfg)
		}
		lns = append(lns, listener{ln, l.tls})
	}
	if reloader != nil {
		proc.reloaders = append(proc.reloaders, reloader)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10, ErrorLog: proc.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	proc.servers = append(proc.servers, hs)
	for _, l := range lns {
		proc.addrs = append(proc.addrs, l.ln.Addr().String())
		proc.Logger.Info("listening", "addr", l.ln.Addr().String(), "tls", l.tls)
		go func() {
			if err := hs.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				proc.errCh <- err
			}
		}()
	}
	return nil
}

// ReloadCertificates reads every HTTPS listener's certificate and key files
// again (SIGHUP); a pair that does not load leaves the previous one served.
func (proc *Process) ReloadCertificates() error {
	var errs []error
	for _, r := range proc.reloaders {
		errs = append(errs, r.Reload())
	}
	return errors.Join(errs...)
}

// Addrs lists the HTTP listen addresses.
func (proc *Process) Addrs() []string { return proc.addrs }

// Err delivers a fatal server error.
func (proc *Process) Err() <-chan error { return proc.errCh }

// Close stops HTTP servers and the control node.
func (proc *Process) Close() error {
	for _, stop := range proc.stop {
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range proc.servers {
		s.Shutdown(ctx)
	}
	if proc.Node != nil {
		return proc.Node.Shutdown()
	}
	return nil
}

// startSweeper runs the coordinator duties: deleting the files of killed
// segments from deep storage, and applying drop rules every
// svc.coordinator.period (only the leader acts).
func (proc *Process) startSweeper(p *props.Properties, logger hclog.Logger) error {
	ds, err := ingest.DeepStorageFromProps(p)
	if err != nil {
		return fmt.Errorf("deep storage: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sw := &coordinator.Sweeper{Node: proc.Node, Storage: ingest.DeepRemover{Storage: ds}, Logger: logger.Named("sweeper")}
	cc, err := config.ParseCoordinator(p, nil) // the rest is logged by the coordinator's runtime
	if err != nil {
		cancel()
		return err
	}
	ret := &coordinator.Retention{Node: proc.Node, Period: cc.Period, Logger: logger.Named("retention")}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); sw.Run(ctx) }()
	go func() { defer wg.Done(); ret.Run(ctx) }()
	proc.stop = append(proc.stop, func() { cancel(); wg.Wait() })
	return nil
}

// EnsureDir creates a data dir and returns its absolute path.
func EnsureDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return abs, os.MkdirAll(abs, 0o755)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
