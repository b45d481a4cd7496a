package config

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Node is what every process reads about itself.
type Node struct {
	ID            string
	Roles         []string
	HTTPAddress   string
	AdvertisedURL string // "" means https:// + TLSAddress, or http:// + HTTPAddress
	DataDir       string
	// TLSAddress is where the HTTPS listener is, "" when svc.enableTlsPort
	// is off.
	TLSAddress string
}

// ParseNode reads svc.node.*, svc.http.* and svc.data.dir; none of them can
// be malformed (an empty data dir is the role's to refuse).
func ParseNode(src Source) Node {
	r := &reader{src: src}
	return Node{
		ID:            r.str("svc.node.id"),
		Roles:         r.list("svc.node.roles"),
		HTTPAddress:   r.str("svc.http.address"),
		AdvertisedURL: strings.TrimRight(r.str("svc.http.advertisedUrl"), "/"),
		DataDir:       r.str("svc.data.dir"),
		TLSAddress:    parseTLSPorts(r).TLSAddress(r.str("svc.http.address")),
	}
}

// Log is the logger's settings.
type Log struct {
	Level string
	JSON  bool
}

// ParseLog reads svc.log.*. A malformed svc.log.json is the error, with
// JSON false (cmd/strata logs as text then, as it always has).
func ParseLog(src Source) (Log, error) {
	r := &reader{src: src}
	l := Log{Level: r.str("svc.log.level"), JSON: r.bool("svc.log.json")}
	return l, r.err()
}

// URL is the base URL peers and clients use to reach the process.
func (n Node) URL() string {
	if n.AdvertisedURL != "" {
		return n.AdvertisedURL
	}
	if n.TLSAddress != "" {
		// Node-to-node calls go over TLS whenever it is on, so the
		// plaintext port (if any) is only for clients.
		return "https://" + n.TLSAddress
	}
	return "http://" + n.HTTPAddress
}

// TLS is the HTTPS settings of the listeners and of the calls between
// Strata's processes (svc.enablePlaintextPort, svc.enableTlsPort,
// svc.tlsPort, svc.server.https.*, svc.client.https.*).
type TLS struct {
	Plaintext, Enabled bool
	// Port is svc.tlsPort, 0 when unset (TLSAddress derives it).
	Port int
	// The listeners' certificate and key; RequireClientCert with the CA
	// bundle ClientCAFile verifies the clients'.
	CertFile, KeyFile string
	RequireClientCert bool
	ClientCAFile      string
	// What node-to-node calls verify servers against (empty: the system's
	// roots) and the certificate they present (both empty: none).
	TrustStoreFile                string
	ClientCertFile, ClientKeyFile string
}

func parseTLSPorts(r *reader) TLS {
	return TLS{Plaintext: r.bool("svc.enablePlaintextPort"), Enabled: r.bool("svc.enableTlsPort"), Port: int(r.int("svc.tlsPort"))}
}

// ParseTLS reads the TLS settings and checks they make a usable whole.
func ParseTLS(src Source) (TLS, error) {
	r := &reader{src: src}
	t := parseTLSPorts(r)
	t.CertFile, t.KeyFile = r.str("svc.server.https.certFile"), r.str("svc.server.https.keyFile")
	t.RequireClientCert = r.bool("svc.server.https.requireClientCertificate")
	t.TrustStoreFile = r.str("svc.client.https.trustStoreFile")
	t.ClientCAFile = r.str("svc.server.https.trustStoreFile")
	if t.ClientCAFile == "" {
		t.ClientCAFile = t.TrustStoreFile
	}
	t.ClientCertFile, t.ClientKeyFile = r.str("svc.client.https.certFile"), r.str("svc.client.https.keyFile")
	if err := r.err(); err != nil {
		return t, err
	}
	switch {
	case !t.Plaintext && !t.Enabled:
		return t, errors.New("svc.enablePlaintextPort and svc.enableTlsPort are both false: the process would not listen at all")
	case t.Port < 0 || t.Port > 65535:
		return t, fmt.Errorf("svc.tlsPort=%d is not a port", t.Port)
	case t.Enabled && (t.CertFile == "" || t.KeyFile == ""):
		return t, errors.New("svc.enableTlsPort=true needs svc.server.https.certFile and svc.server.https.keyFile (PEM)")
	case (t.ClientCertFile == "") != (t.ClientKeyFile == ""):
		return t, errors.New("svc.client.https.certFile and svc.client.https.keyFile go together")
	case t.RequireClientCert && !t.Enabled:
		return t, errors.New("svc.server.https.requireClientCertificate=true needs svc.enableTlsPort=true")
	case t.RequireClientCert && t.ClientCAFile == "":
		return t, errors.New("svc.server.https.requireClientCertificate=true needs svc.server.https.trustStoreFile (or svc.client.https.trustStoreFile): the CA client certificates are verified against")
	}
	return t, nil
}

// PlainAddress is where httpAddr's plaintext listener is, "" when it is
// off.
func (t TLS) PlainAddress(httpAddr string) string {
	if !t.Plaintext {
		return ""
	}
	return httpAddr
}

// TLSAddress is where httpAddr's HTTPS listener is, "" when TLS is off:
// svc.tlsPort on httpAddr's host; unset, httpAddr itself when the
// plaintext port is off, else its port + 200 (Druid's defaults: 8281 beside
// 8081, 9088 beside 8888).
func (t TLS) TLSAddress(httpAddr string) string {
	if !t.Enabled {
		return ""
	}
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return httpAddr // the listener reports the malformed address
	}
	switch {
	case t.Port != 0:
		port = strconv.Itoa(t.Port)
	case t.Plaintext:
		if n, err := strconv.Atoi(port); err == nil && n != 0 {
			port = strconv.Itoa(n + 200)
		}
	}
	return net.JoinHostPort(host, port)
}

// ListenerURL is the base URL of the listener of httpAddr under these
// settings: https when TLS is on (the derived port), else http. Quickstart
// names its other listeners with it.
func ListenerURL(src Source, httpAddr string) string {
	t := parseTLSPorts(&reader{src: src})
	t.Port = 0 // svc.tlsPort is the main listener's
	if a := t.TLSAddress(httpAddr); a != "" {
		return "https://" + a
	}
	return "http://" + httpAddr
}

// Raft is the control node's consensus settings (svc.raft.*).
type Raft struct {
	Address string
	// Peers is svc.raft.peers as written; cluster.ParsePeers reads it.
	Peers string

	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout, CommitTimeout time.Duration
	SnapshotInterval                                                     time.Duration
	MaxAppendEntries, SnapshotRetain                                     int
	SnapshotThreshold, TrailingLogs                                      uint64
	NoSync                                                               bool
	// ArchiveRetention is how long the audit archive keeps trimmed entries
	// (svc.audit.archive.retention; 0: forever).
	ArchiveRetention time.Duration
}

// ParseRaft reads svc.raft.*.
func ParseRaft(src Source) (Raft, error) {
	r := &reader{src: src}
	c := Raft{
		Address:            r.str("svc.raft.address"),
		Peers:              r.str("svc.raft.peers"),
		HeartbeatTimeout:   r.duration("svc.raft.heartbeatTimeout"),
		ElectionTimeout:    r.duration("svc.raft.electionTimeout"),
		LeaderLeaseTimeout: r.duration("svc.raft.leaderLeaseTimeout"),
		CommitTimeout:      r.duration("svc.raft.commitTimeout"),
		SnapshotInterval:   r.duration("svc.raft.snapshotInterval"),
		MaxAppendEntries:   int(r.int("svc.raft.maxAppendEntries")),
		SnapshotRetain:     int(r.int("svc.raft.snapshotRetain")),
		SnapshotThreshold:  uint64(r.int("svc.raft.snapshotThreshold")),
		TrailingLogs:       uint64(r.int("svc.raft.trailingLogs")),
		NoSync:             r.bool("svc.raft.noSync"),
		ArchiveRetention:   r.duration("svc.audit.archive.retention"),
	}
	if c.ArchiveRetention < 0 {
		r.fail("svc.audit.archive.retention", r.raw("svc.audit.archive.retention"), "a duration of 0 or more")
	}
	return c, r.err()
}

// HTTP is the HTTP server's settings, the same for every role.
type HTTP struct {
	MaxRequestBytes, MaxInternalRequestBytes int64
	Pprof                                    bool
	TrustedProxies                           []string // IPs or CIDR blocks, as written
	// AuditHistory is the history endpoints' default window.
	AuditHistory time.Duration
	// RecentlyFinished is how far back task listings show finished tasks.
	RecentlyFinished time.Duration
	// CentralizedDatasourceSchema enables POST .../metadata/dataSourceInformation.
	CentralizedDatasourceSchema bool
	// QueryPathMetrics records the query and HTTP families
	// (svc.metrics.queryPath); off only to measure their cost.
	QueryPathMetrics bool
}

// ParseHTTP reads the server's settings.
func ParseHTTP(src Source) (HTTP, error) {
	r := &reader{src: src}
	c := HTTP{
		MaxRequestBytes:         r.int("svc.server.http.maxRequestBytes"),
		MaxInternalRequestBytes: r.int("svc.server.http.maxInternalRequestBytes"),
		Pprof:                   r.bool("svc.debug.pprof"),
		TrustedProxies:          r.list("svc.server.trustedProxies"),
		AuditHistory:            r.millis("svc.audit.manager.auditHistoryMillis"),
		RecentlyFinished:        r.duration("svc.indexer.storage.recentlyFinishedThreshold"),
		QueryPathMetrics:        r.bool("svc.metrics.queryPath"),
	}
	// Only "true" (any case) enabled it when it was read per request; keep
	// that, and refuse anything but true or false.
	switch v := r.str("svc.centralizedDatasourceSchema.enabled"); strings.ToLower(v) {
	case "true":
		c.CentralizedDatasourceSchema = true
	case "false":
	default:
		r.fail("svc.centralizedDatasourceSchema.enabled", v, "true or false")
	}
	return c, r.err()
}

// Coordinator is the coordinator's runtime settings (svc.coordinator.*).
type Coordinator struct {
	InventoryPeriod, InventoryExpiry, StartDelay, Period, LoadTimeout, HandoverDelay time.Duration
}

// ParseCoordinator reads svc.coordinator.*. A malformed or out-of-range
// value is logged and its default used, except svc.coordinator.period: a bad
// one is the error (the process refuses to start), and its default is
// returned with it.
func ParseCoordinator(src Source, log hclog.Logger) (Coordinator, error) {
	var periodErr error
	dur := func(key string, zeroOK bool) time.Duration {
		def, _ := ParseDuration(byName[key].Default)
		r := &reader{src: src}
		d := r.duration(key)
		if err := r.err(); err != nil || d < 0 || (d == 0 && !zeroOK) {
			if key == "svc.coordinator.period" {
				periodErr = fmt.Errorf("%s must be a positive duration such as 60s (got %q)", key, r.raw(key))
			} else if log != nil {
				log.Error("using the default of "+key+" ("+byName[key].Default+")", "error", err, "value", r.raw(key))
			}
			return def
		}
		return d
	}
	c := Coordinator{
		InventoryPeriod: dur("svc.coordinator.inventory.period", false),
		InventoryExpiry: dur("svc.coordinator.inventory.expiry", false),
		StartDelay:      dur("svc.coordinator.startDelay", true),
		Period:          dur("svc.coordinator.period", false),
		LoadTimeout:     dur("svc.coordinator.loadTimeout", false),
		HandoverDelay:   dur("svc.coordinator.handoverDelay", true),
	}
	return c, periodErr
}

// Overlord is the overlord's task runner settings.
type Overlord struct {
	HeartbeatTimeout, AssignmentTimeout time.Duration
}

// ParseOverlord reads the task runner's settings. Nothing here stops the
// process: a malformed value is logged and its default used.
func ParseOverlord(src Source, log hclog.Logger) Overlord {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	r := &reader{src: src}
	hb := r.duration("svc.worker.heartbeatTimeout")
	if err := r.err(); err != nil {
		log.Error("using the default heartbeat timeout", "error", err)
		hb, _ = ParseDuration(byName["svc.worker.heartbeatTimeout"].Default)
	}
	at := hb
	if r.raw("svc.indexer.runner.taskAssignmentTimeout") != "" {
		r = &reader{src: src}
		at = r.duration("svc.indexer.runner.taskAssignmentTimeout")
		if err := r.err(); err != nil {
			log.Error("using the default task assignment timeout", "error", err)
			at = hb
		}
	}
	return Overlord{HeartbeatTimeout: hb, AssignmentTimeout: at}
}

// Supervisor is the supervisor state machine's thresholds (svc.supervisor.*).
type Supervisor struct {
	UnhealthinessThreshold, HealthinessThreshold, TaskUnhealthinessThreshold, TaskHealthinessThreshold, MaxStoredExceptionEvents int
}

// ParseSupervisor reads svc.supervisor.*. Nothing here stops the process: a
// value that is not a whole number in [1, 1000] is logged and its default
// kept.
func ParseSupervisor(src Source, log hclog.Logger) Supervisor {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	var c Supervisor
	for _, t := range []struct {
		key string
		dst *int
	}{
		{"svc.supervisor.unhealthinessThreshold", &c.UnhealthinessThreshold},
		{"svc.supervisor.healthinessThreshold", &c.HealthinessThreshold},
		{"svc.supervisor.taskUnhealthinessThreshold", &c.TaskUnhealthinessThreshold},
		{"svc.supervisor.taskHealthinessThreshold", &c.TaskHealthinessThreshold},
		{"svc.supervisor.maxStoredExceptionEvents", &c.MaxStoredExceptionEvents},
	} {
		def := &reader{src: emptySource{}}
		*t.dst = int(def.int(t.key))
		r := &reader{src: src}
		n := r.int(t.key)
		if r.err() != nil || n < 1 || n > 1000 {
			log.Error("ignoring a bad supervisor setting: it must be a whole number in [1, 1000]", "property", t.key, "value", r.raw(t.key))
			continue
		}
		*t.dst = int(n)
	}
	return c
}

type emptySource struct{}

func (emptySource) Get(string) (string, bool) { return "", false }

// Router is where the router role sends each path prefix.
type Router struct {
	Address                                                 string // quickstart's router listener
	CoordinatorURLs, BrokerURLs, HistoricalURLs, WorkerURLs []string
}

// ParseRouter reads svc.router.*; empty lists are the caller's defaults.
func ParseRouter(src Source) Router {
	r := &reader{src: src}
	return Router{
		Address:         r.str("svc.router.address"),
		CoordinatorURLs: r.list("svc.router.coordinatorUrls"),
		BrokerURLs:      r.list("svc.router.brokerUrls"),
		HistoricalURLs:  r.list("svc.router.historicalUrls"),
		WorkerURLs:      r.list("svc.router.workerUrls"),
	}
}

// Historical is a historical's settings. MaxSize and Locations are kept as
// written; the historical package parses them.
type Historical struct {
	CoordinatorURLs                    []string
	PollPeriod, DropDelay, ScrubPeriod time.Duration
	LoadThreads, Priority              int
	Tier, MaxSize, Locations           string
}

// ParseHistorical reads the historical role's settings.
func ParseHistorical(src Source) (Historical, error) {
	r := &reader{src: src}
	c := Historical{
		CoordinatorURLs: r.list("svc.historical.coordinatorUrls"),
		PollPeriod:      r.duration("svc.historical.pollPeriod"),
		DropDelay:       r.millis("svc.segmentCache.dropSegmentDelayMillis"),
		ScrubPeriod:     r.duration("svc.segmentCache.scrubPeriod"),
		LoadThreads:     int(r.int("svc.segmentCache.numLoadingThreads")),
		Priority:        int(r.int("svc.server.priority")),
		Tier:            r.str("svc.server.tier"),
		MaxSize:         r.str("svc.server.maxSize"),
		Locations:       r.str("svc.segmentCache.locations"),
	}
	return c, r.err()
}

// Lookups are a querying process's lookup settings.
type Lookups struct {
	Tier       string
	PollPeriod time.Duration
}

// ParseLookups reads the lookup settings of a broker, historical or middle
// manager.
func ParseLookups(src Source) (Lookups, error) {
	r := &reader{src: src}
	c := Lookups{Tier: r.str("svc.lookup.lookupTier"), PollPeriod: r.duration("svc.lookup.pollPeriod")}
	return c, r.err()
}

// Broker is a broker's settings.
type Broker struct {
	HistoricalURLs                         []string
	PollPeriod, DefaultTimeout, MaxTimeout time.Duration
	MaxConcurrent                          int
	MaxSubqueryRows                        int64
	FailOnMissingSegments                  bool
	DefaultHistory                         string // an ISO period as written; "" is all
	// Time travel (asOf): the control nodes, the cache's directory ("" is
	// the caller's default) and size (a byte size as written).
	CoordinatorURLs                 []string
	AsOfCachePath, AsOfCacheMaxSize string
}

// ParseBroker reads the broker role's settings.
func ParseBroker(src Source) (Broker, error) {
	r := &reader{src: src}
	c := Broker{
		HistoricalURLs:        r.list("svc.broker.historicalUrls"),
		PollPeriod:            r.duration("svc.broker.pollPeriod"),
		DefaultTimeout:        r.millis("svc.server.http.defaultQueryTimeout"),
		MaxTimeout:            r.millis("svc.server.http.maxQueryTimeout"),
		MaxConcurrent:         int(r.int("svc.query.scheduler.numThreads")),
		MaxSubqueryRows:       r.int("svc.server.http.maxSubqueryRows"),
		FailOnMissingSegments: r.bool("svc.query.failOnMissingSegments"),
		DefaultHistory:        r.str("svc.query.segmentMetadata.defaultHistory"),
		CoordinatorURLs:       r.list("svc.broker.coordinatorUrls"),
		AsOfCachePath:         r.str("svc.broker.asOfCache.path"),
		AsOfCacheMaxSize:      r.str("svc.broker.asOfCache.maxSize"),
	}
	return c, r.err()
}

// MiddleManager is a worker's settings.
type MiddleManager struct {
	Capacity               int
	Category, Version, IP  string // "" category and IP: the caller's defaults
	OverlordURLs           []string
	HeartbeatPeriod        time.Duration
	IndexerCoordinatorURLs []string // where its tasks publish; "" is OverlordURLs
}

// ParseMiddleManager reads the middle manager role's settings and checks the
// capacity (1..100000) and that the control nodes are known.
func ParseMiddleManager(src Source) (MiddleManager, error) {
	r := &reader{src: src}
	c := MiddleManager{
		Capacity:               max(1, runtime.NumCPU()-1),
		Category:               r.str("svc.worker.category"),
		Version:                r.str("svc.worker.version"),
		IP:                     r.str("svc.worker.ip"),
		OverlordURLs:           r.list("svc.worker.overlordUrls"),
		HeartbeatPeriod:        r.duration("svc.worker.heartbeatPeriod"),
		IndexerCoordinatorURLs: r.list("svc.indexer.coordinatorUrls"),
	}
	if r.raw("svc.worker.capacity") != "" {
		n := r.int("svc.worker.capacity")
		if err := r.err(); err == nil && (n < 1 || n > 100000) {
			return c, fmt.Errorf("svc.worker.capacity=%d must be in 1..100000", n)
		}
		c.Capacity = int(n)
	}
	if err := r.err(); err != nil {
		return c, err
	}
	if len(c.OverlordURLs) == 0 {
		c.OverlordURLs = r.list("svc.router.coordinatorUrls")
	}
	if len(c.OverlordURLs) == 0 {
		return c, fmt.Errorf("the middle manager needs the control nodes: set svc.worker.overlordUrls (e.g. http://127.0.0.1:8081)")
	}
	return c, nil
}

// Storage is the deep storage settings (svc.storage.*, svc.s3.*).
type Storage struct {
	Type, StorageDirectory, Bucket, BaseKey string
	S3Endpoint, S3Region                    string
	S3AccessKey, S3SecretKey                string // as written: secrets are not trimmed
	// DataDir is svc.data.dir, under which a local store without a
	// directory lives.
	DataDir string
}

// ParseStorage reads the deep storage settings; the storage checks them
// when it opens.
func ParseStorage(src Source) Storage {
	r := &reader{src: src}
	return Storage{
		Type:             r.str("svc.storage.type"),
		StorageDirectory: r.str("svc.storage.storageDirectory"),
		Bucket:           r.str("svc.storage.bucket"),
		BaseKey:          r.str("svc.storage.baseKey"),
		S3Endpoint:       r.str("svc.s3.endpoint"),
		S3Region:         r.str("svc.s3.region"),
		S3AccessKey:      r.secret("svc.s3.accessKey"),
		S3SecretKey:      r.secret("svc.s3.secretKey"),
		DataDir:          r.str("svc.data.dir"),
	}
}

// Escalator is the credentials Strata's processes use on each other's
// internal API.
type Escalator struct {
	Username, Password string // Password as written: secrets are not trimmed
}

// ParseEscalator reads svc.escalator.*.
func ParseEscalator(src Source) Escalator {
	r := &reader{src: src}
	// A password provider that cannot be resolved (an unset environment
	// variable) stays as written: ParseBasicAuth reports it at start, and
	// nothing falls back to an empty password, which would open the
	// internal API.
	pw, err := ResolvePassword(r.secret("svc.escalator.internalClientPassword"))
	if err != nil {
		pw = r.secret("svc.escalator.internalClientPassword")
	}
	return Escalator{Username: r.str("svc.escalator.internalClientUsername"), Password: pw}
}

// Auth is the security settings every process reads (svc.auth.*); the
// authenticators' and authorizers' own settings are theirs.
type Auth struct {
	// AuthenticatorChain and Authorizers are names; empty means security
	// is off and the API is open.
	AuthenticatorChain, Authorizers []string
	AllowInsecure                   bool
	// FailedLoginLimit wrong credentials per client address per
	// FailedLoginWindow, then 429.
	FailedLoginLimit  int64
	FailedLoginWindow time.Duration
	// FailureAuditPeriod is how often the failure counts go to the audit.
	FailureAuditPeriod time.Duration
}

// ParseAuth reads svc.auth.*: the lists as JSON arrays or comma-separated,
// the limit and durations positive.
func ParseAuth(src Source) (Auth, error) {
	r := &reader{src: src}
	c := Auth{
		AuthenticatorChain: r.list("svc.auth.authenticatorChain"),
		Authorizers:        r.list("svc.auth.authorizers"),
		AllowInsecure:      r.bool("svc.auth.allowInsecure"),
		FailedLoginLimit:   r.int("svc.auth.failedLogins.limit"),
		FailedLoginWindow:  r.duration("svc.auth.failedLogins.window"),
		FailureAuditPeriod: r.duration("svc.auth.failureAuditPeriod"),
	}
	if c.FailedLoginLimit < 1 {
		r.fail("svc.auth.failedLogins.limit", r.raw("svc.auth.failedLogins.limit"), "a positive number")
	}
	if c.FailedLoginWindow <= 0 {
		r.fail("svc.auth.failedLogins.window", r.raw("svc.auth.failedLogins.window"), "a positive duration")
	}
	if c.FailureAuditPeriod <= 0 {
		r.fail("svc.auth.failureAuditPeriod", r.raw("svc.auth.failureAuditPeriod"), "a positive duration")
	}
	return c, r.err()
}

// BasicAuth is the basic authenticator's and authorizer's settings
// (svc.auth.authenticator.basic.*, svc.auth.authorizer.basic.*,
// svc.escalator.type), with the passwords resolved.
type BasicAuth struct {
	// InitialAdminPassword and InitialInternalClientPassword are "" when
	// unset: the user is then not created.
	InitialAdminPassword, InitialInternalClientPassword string
	AuthorizerName                                      string
	// InternalClientUsername and InternalClientPassword are the escalator's.
	InternalClientUsername, InternalClientPassword string
	// PollingPeriod bounds a data node's wait for a change of the database.
	PollingPeriod time.Duration
}

// ParseBasicAuth reads the basic security settings. The types must be
// "basic" (the only one Strata has), the passwords may be password providers.
func ParseBasicAuth(src Source) (BasicAuth, error) {
	r := &reader{src: src}
	c := BasicAuth{
		InitialAdminPassword:          r.password("svc.auth.authenticator.basic.initialAdminPassword"),
		InitialInternalClientPassword: r.password("svc.auth.authenticator.basic.initialInternalClientPassword"),
		AuthorizerName:                r.str("svc.auth.authenticator.basic.authorizerName"),
		InternalClientUsername:        r.str("svc.escalator.internalClientUsername"),
		InternalClientPassword:        r.password("svc.escalator.internalClientPassword"),
		PollingPeriod:                 r.duration("svc.auth.basic.common.pollingPeriod"),
	}
	for _, k := range []string{"svc.auth.authenticator.basic.type", "svc.auth.authorizer.basic.type", "svc.escalator.type"} {
		if v := r.str(k); v != "basic" {
			r.fail(k, v, "basic (the only type Strata has)")
		}
	}
	if c.PollingPeriod <= 0 {
		r.fail("svc.auth.basic.common.pollingPeriod", r.raw("svc.auth.basic.common.pollingPeriod"), "a positive duration")
	}
	return c, r.err()
}

// Indexer is where ingestion tasks reach the cluster.
type Indexer struct {
	CoordinatorURLs []string // svc.indexer.coordinatorUrls: the overlords they publish through
	BrokerURLs      []string // svc.router.brokerUrls: SQL tasks query the first
}

// ParseIndexer reads the cluster access of ingestion tasks; empty lists are
// the caller's defaults.
func ParseIndexer(src Source) Indexer {
	r := &reader{src: src}
	return Indexer{CoordinatorURLs: r.list("svc.indexer.coordinatorUrls"), BrokerURLs: r.list("svc.router.brokerUrls")}
}

// Discovery is how a process finds the cluster (svc.discovery.*).
type Discovery struct {
	// Coordinators are base URLs; host:port is given http://.
	Coordinators                                []string
	HeartbeatPeriod, LeaseTimeout, MaxClockSkew time.Duration
}

// ParseDiscovery reads svc.discovery.*; the durations must be positive.
func ParseDiscovery(src Source) (Discovery, error) {
	r := &reader{src: src}
	c := Discovery{
		HeartbeatPeriod: r.duration("svc.discovery.heartbeatPeriod"),
		LeaseTimeout:    r.duration("svc.discovery.leaseTimeout"),
		MaxClockSkew:    r.duration("svc.discovery.maxClockSkew"),
	}
	for _, u := range r.list("svc.discovery.coordinators") {
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		c.Coordinators = append(c.Coordinators, strings.TrimRight(u, "/"))
	}
	if err := r.err(); err != nil {
		return c, err
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"svc.discovery.heartbeatPeriod", c.HeartbeatPeriod}, {"svc.discovery.leaseTimeout", c.LeaseTimeout}, {"svc.discovery.maxClockSkew", c.MaxClockSkew}} {
		if d.v <= 0 {
			return c, fmt.Errorf("%s must be a positive duration such as 5s (got %q)", d.key, r.raw(d.key))
		}
	}
	if c.LeaseTimeout < 2*c.HeartbeatPeriod {
		return c, fmt.Errorf("svc.discovery.leaseTimeout (%s) must be at least twice svc.discovery.heartbeatPeriod (%s)", c.LeaseTimeout, c.HeartbeatPeriod)
	}
	return c, nil
}

// Ingestion is what ingestion may read on a user's behalf (svc.ingestion.*).
type Ingestion struct {
	// LocalBaseDirs are the directories local input sources read under;
	// nil with LocalBaseDirsSet false means the caller's default (the data
	// directory's ingest/ folder).
	LocalBaseDirs    []string
	LocalBaseDirsSet bool
	HTTPProtocols    []string
	HTTPAllowedHosts []string
}

// ParseIngestion reads svc.ingestion.*; a protocol other than http or https
// is an error (the HTTP client speaks no other).
func ParseIngestion(src Source) (Ingestion, error) {
	r := &reader{src: src}
	c := Ingestion{
		LocalBaseDirs:    r.list("svc.ingestion.local.allowedBaseDirs"),
		LocalBaseDirsSet: IsSet(src, "svc.ingestion.local.allowedBaseDirs"),
		HTTPProtocols:    r.list("svc.ingestion.http.allowedProtocols"),
		HTTPAllowedHosts: r.list("svc.ingestion.http.allowedHosts"),
	}
	for _, p := range c.HTTPProtocols {
		if p = strings.ToLower(p); p != "http" && p != "https" {
			r.fail("svc.ingestion.http.allowedProtocols", r.raw("svc.ingestion.http.allowedProtocols"), "a list of http and https")
			break
		}
	}
	return c, r.err()
}
