package process

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/discovery"
	"strata/escalator"
	"strata/ingest"
	"strata/interval"
	"strata/lookups"
	"strata/props"
	"strata/querynode/broker"
	"strata/querynode/historical"
	"strata/querynode/lookupcache"
	"strata/querynode/query"
	"strata/querynode/segcache"
	"strata/server"
	"strata/storage/deep"
)

// Quickstart ports of the data plane (spec: default local ports).
const (
	QuickstartBroker     = "127.0.0.1:8082"
	QuickstartHistorical = "127.0.0.1:8083"
)

// Data-plane properties and their defaults:
//
//	svc.historical.coordinatorUrls          coordinator URLs to poll (default: the quickstart coordinator)
//	svc.historical.pollPeriod               time between polls (default 250ms)
//	svc.segmentCache.locations              cache dirs: `[{"path":"/x","maxSize":"300g"}]` or `/x,/y`
//	                                        (default <svc.data.dir>/segment-cache)
//	svc.server.maxSize                      bytes per cache location without its own maxSize (default 300g)
//	svc.segmentCache.dropSegmentDelayMillis how long a dropped segment stays queryable (default 30000)
//	svc.segmentCache.numLoadingThreads      concurrent segment downloads (default 4)
//	svc.segmentCache.scrubPeriod            time between re-verifications of every cached segment file
//	                                        (default 1h; 0 or negative: never)
//	svc.server.tier, svc.server.priority    tier (default _default_tier) and priority (default 0)
//	svc.broker.historicalUrls               data servers to poll: historicals, and middle managers for the
//	                                        rows of running ingestion tasks (default: the quickstart
//	                                        historical and middle manager)
//	svc.broker.pollPeriod                   time between polls (default 250ms)
//	svc.server.http.defaultQueryTimeout     ms, default 300000
//	svc.server.http.maxSubqueryRows         rows all subqueries of one query may produce, default 100000
//	svc.server.http.maxQueryTimeout         ms, 0 (default) = no limit
//	svc.query.scheduler.numThreads          concurrent queries, more get 429 (default 0 = unbounded)
//	svc.query.segmentMetadata.defaultHistory window of the broker datasource endpoints (default P1W)
//	svc.query.failOnMissingSegments         default of the query context's failOnMissingSegments: fail a
//	                                        query that would read less than its data (default false)
//	svc.broker.coordinatorUrls              control nodes past timelines are read from, for asOf queries
//	                                        (default: the quickstart coordinator)
//	svc.broker.asOfCache.path               segment files asOf queries read from deep storage
//	                                        (default <svc.data.dir>/asof-cache, emptied at start)
//	svc.broker.asOfCache.maxSize            bytes that cache may hold (default 10g)
//	svc.storage.*                           deep storage (package storage/deep); a local storage
//	                                        without storageDirectory uses <svc.data.dir>/deep-storage

// dataPlane holds the historical and broker of a process, and the lookups
// they query with.
type dataPlane struct {
	historical *historical.Node
	broker     *broker.Broker
	lookups    *lookupcache.Registry
	lookupSync *lookupcache.Syncer
}

// newDataPlane builds the historical and broker for the roles of p (either
// may be nil); start begins their work.
func newDataPlane(p *props.Properties, roles []string, logger hclog.Logger, ann *discovery.Announcer) (*dataPlane, error) {
	dp := &dataPlane{}
	name, err := advertisedHost(p)
	if err != nil {
		return nil, err
	}
	if contains(roles, server.RoleHistorical) {
		cfg, err := HistoricalConfig(p, name, logger.Named("historical"))
		if err != nil {
			return nil, err
		}
		if dp.historical, err = historical.New(cfg); err != nil {
			return nil, err
		}
	} else if contains(roles, server.RoleMiddleManager) {
		// A middle manager serves its tasks' rows to brokers (realtime, then
		// until hand-off) with a historical node that has no cache of its own.
		if dp.historical, err = historical.New(historical.Config{Name: name, LocalOnly: true, Logger: logger.Named("taskSegments")}); err != nil {
			return nil, err
		}
	}
	if contains(roles, server.RoleBroker) {
		cfg, err := BrokerConfig(p, name, logger.Named("broker"))
		if err != nil {
			return nil, err
		}
		if ann != nil && !config.IsSet(p, "svc.broker.historicalUrls") {
			// The data servers are the live historicals and middle
			// managers (the rows of running tasks), as discovery finds them.
			cfg.Historicals = nil
			cfg.Discover = liveURLs(ann, server.RoleHistorical, server.RoleMiddleManager)
		}
		if dp.broker, err = broker.New(cfg); err != nil {
			return nil, err
		}
	}
	if dp.historical != nil || dp.broker != nil {
		if err := dp.newLookups(p, name, logger); err != nil {
			return nil, err
		}
	}
	return dp, nil
}

// newLookups builds the registry of the lookups this process queries with
// (its tier's, svc.lookup.lookupTier) and the poller that keeps it fresh
// from the control nodes the broker or historical already reads from.
func (dp *dataPlane) newLookups(p *props.Properties, name string, logger hclog.Logger) error {
	lc, err := config.ParseLookups(p)
	if err != nil {
		return err
	}
	if err := lookups.ValidateName("svc.lookup.lookupTier: lookup tier", lc.Tier); err != nil {
		return err
	}
	var coords []string
	if bc, err := config.ParseBroker(p); err == nil {
		coords = bc.CoordinatorURLs
	}
	if hc, err := config.ParseHistorical(p); err == nil && len(coords) == 0 {
		coords = hc.CoordinatorURLs
	}
	if len(coords) == 0 {
		coords = []string{config.ListenerURL(p, QuickstartCoordinator)}
	}
	dp.lookups = lookupcache.New(lc.Tier)
	dp.lookupSync = lookupcache.NewSyncer(dp.lookups, lookupcache.SyncerConfig{
		Coordinators: coords, Node: name, Period: lc.PollPeriod, Logger: logger.Named("lookups"),
		// An internal endpoint, followed to the leader.
		Client: escalator.NodeClient(p, 30*time.Second),
	})
	return nil
}

// start starts the nodes and stops them when the process's last HTTP
// server (the one serving them) shuts down.
func (dp *dataPlane) start(proc *Process) {
	if dp.historical == nil && dp.broker == nil {
		return
	}
	if dp.lookups != nil {
		// One set of lookups per process, as Druid has: queries parsed here
		// resolve registered lookups through it. (The quickstart's broker and
		// historical share a process and a tier; the last started serves.)
		query.SetLookups(dp.lookups)
		dp.lookupSync.Start()
	}
	if dp.historical != nil {
		dp.historical.Start()
	}
	if dp.broker != nil {
		dp.broker.Start()
	}
	proc.servers[len(proc.servers)-1].RegisterOnShutdown(func() {
		if dp.lookupSync != nil {
			dp.lookupSync.Close()
		}
		if dp.broker != nil {
			dp.broker.Close()
		}
		if dp.historical != nil {
			dp.historical.Close()
		}
	})
}

func advertisedHost(p *props.Properties) (string, error) {
	u, err := url.Parse(AdvertisedURL(p))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("advertised URL %q: cannot find host:port", AdvertisedURL(p))
	}
	return u.Host, nil
}

// HistoricalConfig builds a historical's configuration from properties
// (config.ParseHistorical).
func HistoricalConfig(p *props.Properties, name string, logger hclog.Logger) (historical.Config, error) {
	hc, err := config.ParseHistorical(p)
	cfg := historical.Config{
		Name:         name,
		Coordinators: hc.CoordinatorURLs,
		PollPeriod:   hc.PollPeriod,
		DropDelay:    hc.DropDelay,
		LoadThreads:  hc.LoadThreads,
		ScrubPeriod:  hc.ScrubPeriod,
		Tier:         hc.Tier,
		Priority:     hc.Priority,
		Logger:       logger,
		// It polls the coordinator's internal assignment endpoint.
		Client: escalator.NodeClient(p, 30*time.Second),
	}
	if err != nil {
		return cfg, err
	}
	if cfg.ScrubPeriod <= 0 {
		cfg.ScrubPeriod = -1 // the node's "never"; its zero means the default
	}
	if len(cfg.Coordinators) == 0 {
		cfg.Coordinators = []string{config.ListenerURL(p, QuickstartCoordinator)}
	}
	maxSize, err := historical.ParseBytes(hc.MaxSize)
	if err != nil {
		return cfg, fmt.Errorf("svc.server.maxSize: %w", err)
	}
	locs := hc.Locations
	if locs == "" {
		node := config.ParseNode(p)
		if node.DataDir == "" {
			return cfg, errors.New("svc.data.dir is empty: pass --data DIR or set svc.segmentCache.locations")
		}
		locs = filepath.Join(node.DataDir, "segment-cache")
	}
	if cfg.Locations, err = historical.ParseLocations(locs, maxSize); err != nil {
		return cfg, fmt.Errorf("svc.segmentCache.locations: %w", err)
	}
	if cfg.Storage, err = DeepStorage(p); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// DeepStorage opens the deep storage svc.storage.* configures; a local
// storage without a directory lives under the data dir.
func DeepStorage(p *props.Properties) (deep.DeepStorage, error) {
	return ingest.DeepStorageFromProps(p)
}

// BrokerConfig builds a broker's configuration from properties
// (config.ParseBroker).
func BrokerConfig(p *props.Properties, name string, logger hclog.Logger) (broker.Config, error) {
	bc, err := config.ParseBroker(p)
	cfg := broker.Config{
		Name:           name,
		Historicals:    bc.HistoricalURLs,
		PollPeriod:     bc.PollPeriod,
		DefaultTimeout: bc.DefaultTimeout,
		MaxTimeout:     bc.MaxTimeout,
		MaxConcurrent:  bc.MaxConcurrent,
		// Rows all subqueries of one query may produce (Druid's
		// druid.server.http.maxSubqueryRows); the context may lower it.
		MaxSubqueryRows:       bc.MaxSubqueryRows,
		FailOnMissingSegments: bc.FailOnMissingSegments,
		Logger:                logger,
	}
	if err != nil {
		return cfg, err
	}
	if len(cfg.Historicals) == 0 {
		cfg.Historicals = []string{config.ListenerURL(p, QuickstartHistorical), config.ListenerURL(p, QuickstartMiddleManager)}
	}
	// The data servers' announcements and sub-queries are internal
	// endpoints, over TLS when it is on. The transport is broker.New's
	// default: a short dial timeout for dead data servers, idle connections
	// for scatter/gather.
	tr, err := escalator.NodeTransport(p)
	if err != nil {
		return cfg, err
	}
	tr = tr.Clone()
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.IdleConnTimeout = 90 * time.Second
	cfg.Client = escalator.FromProps(p).Client(&http.Client{Transport: tr})
	if v := bc.DefaultHistory; v != "" {
		per, err := interval.ParsePeriod(v)
		if err != nil {
			return cfg, fmt.Errorf("svc.query.segmentMetadata.defaultHistory: %w", err)
		}
		cfg.DefaultHistory = per
	}
	// Time travel: past timelines from the control plane (an internal
	// endpoint, followed to the leader), old segments from deep storage.
	// The sys tables read the control plane through the same client, from
	// public endpoints (metadata/segments, servers, tasks), and filter the
	// rows by the caller: it carries the internal credentials on every call.
	coords := bc.CoordinatorURLs
	if len(coords) == 0 {
		coords = []string{config.ListenerURL(p, QuickstartCoordinator)}
	}
	cfg.PastTimelines = &broker.HTTPPastTimelines{URLs: coords,
		Client: escalator.NodeServiceClient(p, 60*time.Second)}
	maxSize, err := historical.ParseBytes(bc.AsOfCacheMaxSize)
	if err != nil {
		return cfg, fmt.Errorf("svc.broker.asOfCache.maxSize: %w", err)
	}
	dir := bc.AsOfCachePath
	if dir == "" {
		node := config.ParseNode(p)
		if node.DataDir == "" {
			return cfg, errors.New("svc.data.dir is empty: pass --data DIR or set svc.broker.asOfCache.path")
		}
		dir = filepath.Join(node.DataDir, "asof-cache")
	}
	store, err := DeepStorage(p)
	if err != nil {
		return cfg, err
	}
	if cfg.PastSegments, err = segcache.New(segcache.Config{Dir: dir, MaxSize: maxSize, Storage: store, Logger: logger.Named("asOfCache")}); err != nil {
		return cfg, fmt.Errorf("svc.broker.asOfCache: %w", err)
	}
	return cfg, nil
}

// startQuickstartDataPlane runs a historical and a broker on their own
// ports next to the quickstart control node.
func (proc *Process) startQuickstartDataPlane(p *props.Properties, logger hclog.Logger) error {
	for _, role := range []struct{ name, addr string }{
		{server.RoleHistorical, QuickstartHistorical},
		{server.RoleBroker, QuickstartBroker},
	} {
		rp := props.New()
		rp.Merge(p)
		rp.Set("svc.node.roles", role.name)
		rp.Set("svc.http.address", role.addr)
		rp.Set("svc.http.advertisedUrl", "")
		rp.Set("svc.tlsPort", "") // the coordinator's; this listener's follows the default rule
		if hc, _ := config.ParseHistorical(rp); len(hc.CoordinatorURLs) == 0 {
			rp.Set("svc.historical.coordinatorUrls", config.ParseNode(p).URL())
		}
		dp, err := newDataPlane(rp, []string{role.name}, logger, nil)
		if err != nil {
			return err
		}
		srv, err := server.New(server.Options{Roles: []string{role.name}, Props: rp, Logger: logger.Named(role.name),
			Historical: dp.historical, Broker: dp.broker, Lookups: dp.lookups, Security: proc.sec})
		if err != nil {
			return err
		}
		if err := proc.listen(rp, role.addr, srv.Handler()); err != nil {
			return err
		}
		dp.start(proc)
		if err := proc.announceQuickstart(rp, config.ParseNode(p).URL(), logger); err != nil {
			return err
		}
	}
	return nil
}

// routerDataPlane returns the broker and historical URLs the router proxies
// to (svc.router.brokerUrls, svc.router.historicalUrls; by default the
// quickstart ones).
func routerDataPlane(p *props.Properties, rc config.Router) (brokers, historicals []string) {
	brokers = rc.BrokerURLs
	if len(brokers) == 0 {
		brokers = []string{config.ListenerURL(p, QuickstartBroker)}
	}
	historicals = rc.HistoricalURLs
	if len(historicals) == 0 {
		historicals = []string{config.ListenerURL(p, QuickstartHistorical)}
	}
	return brokers, historicals
}
