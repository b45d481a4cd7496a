// Package config describes every svc.* setting Strata reads in one table
// (Keys: name, default, meaning) and parses each role's settings from a
// property set into a typed struct, once at start: a malformed value is an
// error naming its key. The README's Configuration table is generated from
// Keys (see Markdown; a test keeps the two equal), and props.Defaults records
// the defaults marked Shown.
//
// config depends on the standard library only, so props, which the parsers
// read, can take its defaults from here.
package config

// Key describes one setting.
type Key struct {
	Name string
	// Default is the value used when the key is unset or empty, as written in
	// a properties file; "" when there is none or it depends on other
	// settings (DefaultDoc then says what it is).
	Default string
	// DefaultDoc replaces Default in the documentation when set.
	DefaultDoc string
	Doc        string
	// Shown keys are recorded with their default in the effective property
	// set (props.Defaults), so /status/properties lists them even when unset.
	Shown bool
}

// Keys is every setting Strata reads, in the README's order.
var Keys = []Key{
	// The process.
	{Name: "svc.node.id", Default: "strata", Shown: true, Doc: "node id (`--id`)"},
	{Name: "svc.node.roles", Default: "coordinator,overlord", Shown: true, Doc: "roles of this process (`--roles`): coordinator, overlord, router, middleManager, historical, broker"},
	{Name: "svc.http.address", Default: "127.0.0.1:8081", Shown: true, Doc: "HTTP listen address (`--http`)"},
	{Name: "svc.http.advertisedUrl", Shown: true, DefaultDoc: "(empty: `http://` + address)", Doc: "URL others use to reach this node"},
	{Name: "svc.data.dir", Default: "./var", Shown: true, Doc: "Raft log, snapshots, segment cache, task directories (`--data`)"},
	{Name: "svc.log.level", Default: "info", Shown: true, Doc: "log level (go-hclog: trace, debug, info, warn, error)"},
	{Name: "svc.log.json", Default: "false", Shown: true, Doc: "log as JSON lines"},

	// Discovery (every role).
	{Name: "svc.discovery.coordinators", Shown: true, DefaultDoc: "(none: static URL lists; control nodes use their peers)", Doc: "the control nodes' addresses (`--coordinators`): `http://host:port` or `host:port`, comma-separated; a name that resolves to several addresses stands for each. The process announces itself to the leader and finds the others through it; the `*Urls` settings below default to these and to what discovery finds, and override them when set"},
	{Name: "svc.discovery.heartbeatPeriod", Default: "1s", Doc: "how often a process renews its lease with the leader"},
	{Name: "svc.discovery.leaseTimeout", Default: "5s", Doc: "control roles: a process not heard from for this long is marked gone and its work reassigned (its segments placed elsewhere, its tasks failed and replaced)"},
	{Name: "svc.discovery.maxClockSkew", Default: "2s", Doc: "a process whose clock differs from the leader's by more says so in `/status` (as it does when its version differs)"},

	// Raft (control roles).
	{Name: "svc.raft.address", Default: "127.0.0.1:8300", Shown: true, Doc: "Raft TCP address (`--raft`)"},
	{Name: "svc.raft.peers", Shown: true, DefaultDoc: "(single node)", Doc: "`ID=RAFTHOST:PORT=HTTPURL,...` (`--peers`)"},
	{Name: "svc.raft.heartbeatTimeout", Default: "300ms", Shown: true, Doc: "failure detection; failover ≈ 0.5–1 s"},
	{Name: "svc.raft.electionTimeout", Default: "300ms", Shown: true, Doc: "failure detection; failover ≈ 0.5–1 s"},
	{Name: "svc.raft.leaderLeaseTimeout", Default: "150ms", Shown: true, Doc: "how long a leader stays leader without hearing from a quorum"},
	{Name: "svc.raft.commitTimeout", Default: "5ms", Shown: true, Doc: "how long the leader waits before telling followers the commit index"},
	{Name: "svc.raft.maxAppendEntries", Default: "512", Shown: true, Doc: "proposals batched into one append (and one fsync)"},
	{Name: "svc.raft.snapshotThreshold", Default: "8192", Shown: true, Doc: "snapshot when this many entries accumulated"},
	{Name: "svc.raft.snapshotInterval", Default: "30s", Shown: true, Doc: "how often the snapshot threshold is checked"},
	{Name: "svc.raft.trailingLogs", Default: "10240", Shown: true, Doc: "entries kept after a snapshot (log trim)"},
	{Name: "svc.raft.snapshotRetain", Default: "2", Shown: true, Doc: "snapshots kept on disk"},
	{Name: "svc.raft.noSync", Default: "false", Shown: true, Doc: "skip fsync of the log (never in production)"},
	{Name: "svc.audit.archive.retention", Default: "0", Shown: true, Doc: "how long the audit archive keeps the log entries Raft trims after a snapshot (and the snapshots taken then), by the time of their commands, as a duration (`2160h`: 90 days); `0` keeps everything forever. The archive is `<svc.data.dir>/audit-archive`; with S3 deep storage its chunks and snapshots are in the bucket under `_audit/<node id>` (README, Audit and time travel)"},

	// The HTTP server of every role.
	{Name: "svc.server.trustedProxies", Shown: true, DefaultDoc: "(none)", Doc: "IPs or CIDR blocks of routers in front of this node: only their `X-Forwarded-For` is believed for the audit `ip`; from anyone else the peer address is recorded"},
	{Name: "svc.server.http.maxRequestBytes", Default: "10485760", Shown: true, Doc: "request body limit of the API (413 beyond)"},
	{Name: "svc.server.http.maxInternalRequestBytes", Default: "268435456", Shown: true, Doc: "body limit of calls between Strata's processes (`/svc-internal/`), e.g. a task publishing all its segments at once (about 0.6 kB each)"},
	{Name: "svc.debug.pprof", Default: "false", Shown: true, Doc: "serve Go's profiler at `/debug/pprof/` (performance work only: profiles expose internals)"},
	{Name: "svc.metrics.queryPath", Default: "true", Shown: true, Doc: "record the metric updates of the query path: the query families (`druid_query_*`) of brokers and data servers and the HTTP family (`strata_http_*`) of every route; `false` leaves them empty, for measuring what recording them costs (`make bench-query` compares both)"},
	{Name: "svc.server.hiddenProperties", Shown: true, Default: `["svc.s3.accessKey","svc.s3.secretKey","svc.metadata.storage.connector.password","svc.escalator.internalClientPassword","password","key","token","pwd"]`,
		DefaultDoc: "`[\"svc.s3.accessKey\",...]`", Doc: "keys removed from `/status/properties`"},
	{Name: "svc.audit.manager.auditHistoryMillis", Default: "604800000", Shown: true, Doc: "default window of the history endpoints (milliseconds)"},
	{Name: "svc.indexer.storage.recentlyFinishedThreshold", Default: "24h", Doc: "overlord role: how far back the task listings show finished tasks by default"},
	{Name: "svc.centralizedDatasourceSchema.enabled", Default: "false", Doc: "coordinator role: serve `POST /svc/coordinator/v1/metadata/dataSourceInformation` (404 when false)"},
	{Name: "svc.escalator.internalClientUsername", Default: "svc_system", Shown: true, Doc: "user Strata's processes send on their calls to each other (`/svc-internal/`)"},
	{Name: "svc.escalator.internalClientPassword", DefaultDoc: "(none)", Doc: "password of those calls; when set, every `/svc-internal/` endpoint answers 401 without it (HTTP basic). Set the same on every process; never shown by `/status/properties`"},

	// Authentication and authorization (issue 18; the README's Security section).
	{Name: "svc.auth.authenticatorChain", Shown: true, DefaultDoc: "(none: the API is open)", Doc: "authenticators asked in turn for a request's credentials, as a JSON list (`[\"basic\"]`); with one, every endpoint but `/status/health` answers 401 without credentials and 403 without the permission"},
	{Name: "svc.auth.authorizers", Shown: true, DefaultDoc: "(none)", Doc: "authorizers the authenticators name, as a JSON list (`[\"basic\"]`)"},
	{Name: "svc.auth.allowInsecure", Default: "false", Shown: true, Doc: "let a `strata server` whose HTTP address is not loopback start without an authenticator (anyone who reaches the port can do anything)"},
	{Name: "svc.auth.failedLogins.limit", Default: "20", Shown: true, Doc: "wrong credentials one client address may send per `svc.auth.failedLogins.window`; beyond, its requests get 429 until the window ends"},
	{Name: "svc.auth.failedLogins.window", Default: "1m", Shown: true, Doc: "the window of `svc.auth.failedLogins.limit`"},
	{Name: "svc.auth.failureAuditPeriod", Default: "1m", Shown: true, Doc: "authentication failures are counted and written to the audit once per period (one entry with the counts by address), not one per request"},
	{Name: "svc.auth.authenticator.basic.type", Default: "basic", Shown: true, Doc: "the `basic` authenticator's type: `basic` (users and PBKDF2 password hashes in the Raft log, managed at `/svc-ext/basic-security/authentication/db/basic/`)"},
	{Name: "svc.auth.authenticator.basic.initialAdminPassword", DefaultDoc: "(none: no admin is created)", Doc: "control roles: the password of the user `admin` (role `admin`, every permission) the leader creates once if absent; a string or a password provider `{\"type\":\"environment\",\"variable\":\"X\"}`; never shown by `/status/properties`"},
	{Name: "svc.auth.authenticator.basic.initialInternalClientPassword", DefaultDoc: "(none: no internal client is created)", Doc: "control roles: the password of the internal client user (`svc.escalator.internalClientUsername`) the leader creates once if absent, with role `admin`; as above, a string or a password provider; never shown"},
	{Name: "svc.auth.authenticator.basic.authorizerName", Default: "basic", Shown: true, Doc: "the authorizer that decides for the users the `basic` authenticator recognises"},
	{Name: "svc.auth.authorizer.basic.type", Default: "basic", Shown: true, Doc: "the `basic` authorizer's type: `basic` (roles and permissions in the Raft log, managed at `/svc-ext/basic-security/authorization/db/basic/`)"},
	{Name: "svc.auth.basic.common.pollingPeriod", Default: "60s", Shown: true, Doc: "brokers, historicals, middle managers and routers: the longest a copy of the user and role database waits for a change on the leader (they are told of each change as it commits, and fetch on an unknown user or a denied check too)"},
	{Name: "svc.escalator.type", Default: "basic", Shown: true, Doc: "how Strata's processes authenticate to each other: `basic` (HTTP basic with the internal client's user and password)"},

	// TLS (every listener and every call between Strata's processes).
	{Name: "svc.enablePlaintextPort", Default: "true", Shown: true, Doc: "serve plain HTTP on `svc.http.address`"},
	{Name: "svc.enableTlsPort", Default: "false", Shown: true, Doc: "serve HTTPS (needs `svc.server.https.certFile` and `keyFile`); the process then advertises its `https://` URL, so the others call it over TLS"},
	{Name: "svc.tlsPort", DefaultDoc: "the port of `svc.http.address` when the plaintext port is off, else that port + 200 (Druid's 8281 beside 8081)", Doc: "HTTPS port, on the host of `svc.http.address` (quickstart: the coordinator's; its other listeners follow the default rule)"},
	{Name: "svc.server.https.certFile", Doc: "PEM certificate chain of the HTTPS listeners (the node's certificate first); re-read on SIGHUP and when the file changes, without a restart"},
	{Name: "svc.server.https.keyFile", Doc: "PEM private key of that certificate; re-read with it"},
	{Name: "svc.server.https.requireClientCertificate", Default: "false", Doc: "HTTPS listeners refuse a client without a certificate signed by `svc.server.https.trustStoreFile` (mutual TLS between Strata's processes; clients such as curl then need one too)"},
	{Name: "svc.server.https.trustStoreFile", DefaultDoc: "`svc.client.https.trustStoreFile`", Doc: "PEM CA bundle client certificates are verified against"},
	{Name: "svc.client.https.trustStoreFile", DefaultDoc: "(the system's roots)", Doc: "PEM CA bundle that calls between Strata's processes verify the servers' certificates against (verification is always on)"},
	{Name: "svc.client.https.certFile", Doc: "PEM client certificate those calls present (for `requireClientCertificate`); re-read when the file changes"},
	{Name: "svc.client.https.keyFile", Doc: "PEM private key of the client certificate"},

	// Deep storage.
	{Name: "svc.storage.type", Default: "local", Shown: true, Doc: "deep storage: `local` or `s3`"},
	{Name: "svc.storage.storageDirectory", Shown: true, DefaultDoc: "`<svc.data.dir>/deepstorage`", Doc: "local deep storage directory"},
	{Name: "svc.storage.bucket", Doc: "S3 deep storage bucket"},
	{Name: "svc.storage.baseKey", Doc: "S3 deep storage key prefix"},
	{Name: "svc.s3.endpoint", DefaultDoc: "(AWS)", Doc: "S3 endpoint URL (e.g. a MinIO server)"},
	{Name: "svc.s3.region", Doc: "S3 region"},
	{Name: "svc.s3.accessKey", Doc: "S3 access key"},
	{Name: "svc.s3.secretKey", Doc: "S3 secret key"},

	// Coordinator role.
	{Name: "svc.coordinator.inventory.period", Default: "1s", Shown: true, Doc: "how often the coordinator polls what each historical serves"},
	{Name: "svc.coordinator.inventory.expiry", Default: "30s", Shown: true, Doc: "a historical that stops polling for its assignment is forgotten after this"},
	{Name: "svc.coordinator.startDelay", Default: "2s", Shown: true, Doc: "after becoming leader, how long the coordinator learns the historicals before placing segments"},
	{Name: "svc.coordinator.handoverDelay", Default: "1s", Doc: "how long the outgoing version of a time chunk stays loaded after its replacement is loaded, for brokers to see the switch"},
	{Name: "svc.coordinator.loadTimeout", Default: "15m", Shown: true, Doc: "with `replicateAfterLoadTimeout`, how long a load may wait before another historical of the tier gets a replica; also the longest an ingestion task waits (holding its lock) for a broker to see its published segments loaded"},
	{Name: "svc.coordinator.period", Default: "60s", Shown: true, Doc: "how often the leader marks unused the segments drop rules match and, after `millisToWaitBeforeDeleting` of leadership, the overshadowed ones"},

	// Overlord role.
	{Name: "svc.worker.heartbeatTimeout", Default: "10s", Doc: "overlord role: how long a worker may be silent before its running tasks fail"},
	{Name: "svc.indexer.runner.taskAssignmentTimeout", DefaultDoc: "`svc.worker.heartbeatTimeout`", Doc: "overlord role: how long a live worker may go without listing a task assigned to it before the task fails"},
	{Name: "svc.supervisor.unhealthinessThreshold", Default: "3", Doc: "supervisor state machine (Kafka ingestion): consecutive failed runs before a supervisor is unhealthy"},
	{Name: "svc.supervisor.healthinessThreshold", Default: "3", Doc: "consecutive good runs before it is healthy again"},
	{Name: "svc.supervisor.taskUnhealthinessThreshold", Default: "3", Doc: "consecutive failed tasks before `UNHEALTHY_TASKS`"},
	{Name: "svc.supervisor.taskHealthinessThreshold", Default: "3", Doc: "consecutive successful tasks to recover"},
	{Name: "svc.supervisor.maxStoredExceptionEvents", Default: "3", Doc: "recent errors a supervisor's status keeps"},

	// Router role.
	{Name: "svc.router.address", DefaultDoc: "quickstart: `127.0.0.1:8888`", Doc: "quickstart: the router's listen address"},
	{Name: "svc.router.coordinatorUrls", DefaultDoc: "`svc.discovery.coordinators`", Doc: "router role: control node URLs; the router follows the leader, and through an election it retries for up to 5 s instead of passing a 307 or an error on"},
	{Name: "svc.router.brokerUrls", DefaultDoc: "the live brokers (discovery); without discovery quickstart's broker", Doc: "router role: brokers `/svc/v2/` and `/svc/broker/` go to, round-robin, skipping one that refuses the connection; middle manager role: the broker (the first) SQL tasks ask whether their segments are loaded"},
	{Name: "svc.router.historicalUrls", DefaultDoc: "the live historicals (discovery); without discovery quickstart's historical", Doc: "router role: historicals `/svc/historical/` goes to"},
	{Name: "svc.router.workerUrls", DefaultDoc: "the live middle managers (discovery); without discovery quickstart's middle manager", Doc: "router role: the middle manager `/svc/worker/v1/*` goes to (the first URL)"},

	// Historical role.
	{Name: "svc.historical.coordinatorUrls", DefaultDoc: "`svc.discovery.coordinators`; without discovery quickstart's coordinator", Doc: "historical role: control node URLs it polls for its assignment"},
	{Name: "svc.historical.pollPeriod", Default: "250ms", Doc: "historical role: how often it polls its assignment"},
	{Name: "svc.server.tier", DefaultDoc: "`_default_tier`", Doc: "historical role: the tier load rules place replicas in"},
	{Name: "svc.server.priority", Default: "0", Doc: "historical role: priority within its tier"},
	{Name: "svc.server.maxSize", Default: "300000000000", Doc: "historical role: bytes each segment cache location may hold when `svc.segmentCache.locations` gives none (`300g`, `10GiB` accepted)"},
	{Name: "svc.segmentCache.locations", DefaultDoc: "`<svc.data.dir>/segment-cache`", Doc: "historical role: segment cache directories: Druid's JSON `[{\"path\":\"/x\",\"maxSize\":\"300g\"}]` or comma-separated paths"},
	{Name: "svc.segmentCache.numLoadingThreads", Default: "4", Doc: "historical role: segments downloaded at once"},
	{Name: "svc.segmentCache.dropSegmentDelayMillis", Default: "30000", Doc: "historical role: how long a dropped segment stays served, for brokers to see the drop"},
	{Name: "svc.segmentCache.scrubPeriod", Default: "1h", Doc: "historical role: how often every cached segment file is re-read and its checksums verified (`0`: never). Queries verify the bytes they read themselves (each block on every read; dictionaries, postings and null bitmaps once, into memory); a damaged file is dropped and downloaded again, and a sub-query that meets one reports its segments missing so the broker reads a replica"},

	// Lookups (every querying role: broker, historical, middle manager).
	{Name: "svc.lookup.lookupTier", Default: "__default", Doc: "broker, historical and middle manager roles: the lookup tier whose lookups the process loads (Druid's `druid.lookup.lookupTier`)"},
	{Name: "svc.lookup.pollPeriod", Default: "1s", Doc: "broker, historical and middle manager roles: how often the process polls the coordinator for its tier's lookups (and reports what it holds)"},

	// Broker role.
	{Name: "svc.broker.historicalUrls", DefaultDoc: "the live historicals and middle managers (discovery); without discovery quickstart's", Doc: "broker role: data servers it queries"},
	{Name: "svc.broker.pollPeriod", Default: "250ms", Doc: "broker role: how often it polls the data servers' announcements"},
	{Name: "svc.server.http.defaultQueryTimeout", Default: "300000", Doc: "broker role: query timeout in milliseconds when the context sets none"},
	{Name: "svc.server.http.maxQueryTimeout", Default: "0", Doc: "broker role: largest timeout a query context may ask for, in milliseconds (`0`: no limit)"},
	{Name: "svc.server.http.maxSubqueryRows", Default: "100000", Doc: "broker role: rows all subqueries of one query may produce; the context may lower it"},
	{Name: "svc.query.scheduler.numThreads", Default: "0", Doc: "broker role: queries run at once (`0`: no limit)"},
	{Name: "svc.query.failOnMissingSegments", Default: "false", Doc: "broker role: default of the query context's `failOnMissingSegments`; true fails (503 `unavailableSegments`) a query that would read less than its data instead of answering from what is available (see Queries)"},
	{Name: "svc.query.segmentMetadata.defaultHistory", DefaultDoc: "`P1W`", Doc: "broker role: ISO period the datasource metadata endpoints cover when no interval is given"},
	{Name: "svc.broker.coordinatorUrls", DefaultDoc: "`svc.discovery.coordinators`; without discovery quickstart's coordinator", Doc: "broker role: control node URLs it reads past segment timelines from, for queries with the context key `asOf` (time travel)"},
	{Name: "svc.broker.asOfCache.path", DefaultDoc: "`<svc.data.dir>/asof-cache`", Doc: "broker role: directory of the segment files `asOf` queries read from deep storage because no historical holds them any more (emptied at start)"},
	{Name: "svc.broker.asOfCache.maxSize", Default: "10g", Doc: "broker role: bytes the `asOf` segment cache may hold (`10g`, `2GiB` accepted); idle files go least recently used first, files a running query reads never; a query needing more fails (400)"},

	// Middle manager role.
	{Name: "svc.worker.capacity", DefaultDoc: "CPUs − 1, at least 1 (quickstart: 4)", Doc: "middle manager role: task slots (1..100000)"},
	{Name: "svc.worker.category", DefaultDoc: "`_default_worker_category`", Doc: "middle manager role: worker category"},
	{Name: "svc.worker.version", Default: "0", Doc: "middle manager role: worker version"},
	{Name: "svc.worker.ip", DefaultDoc: "the advertised host", Doc: "middle manager role: address shown in the workers listing"},
	{Name: "svc.worker.overlordUrls", DefaultDoc: "`svc.discovery.coordinators`, else `svc.router.coordinatorUrls`", Doc: "middle manager role: control node URLs"},
	{Name: "svc.worker.heartbeatPeriod", Default: "1s", Doc: "middle manager role: heartbeat interval"},
	{Name: "svc.indexer.coordinatorUrls", DefaultDoc: "the worker's overlord URLs", Doc: "middle manager role: control node URLs ingestion tasks publish through"},

	// What ingestion may read on a user's behalf (every role: the node that
	// takes a task checks it, the middle manager that runs it enforces it).
	{Name: "svc.ingestion.local.allowedBaseDirs", Shown: true, DefaultDoc: "`<svc.data.dir>/ingest` (quickstart: also the directory it runs in)", Doc: "directories `local` input sources (SQL `EXTERN`, native batch) may read under, comma-separated or a JSON array; symlinks and `..` are resolved first, so a link pointing out is refused. `[]`: no local files"},
	{Name: "svc.ingestion.http.allowedProtocols", Default: `["http","https"]`, Shown: true, Doc: "URI schemes `http` input sources may use (Druid's `druid.ingestion.http.allowedProtocols`; http and https are the only ones there are)"},
	{Name: "svc.ingestion.http.allowedHosts", Shown: true, DefaultDoc: "(none)", Doc: "hosts `http` input sources may fetch from although they are, or resolve to, a loopback, link-local, private or unspecified address (never allowed otherwise: checked on the address connected to, redirects included)"},
}

var byName = func() map[string]*Key {
	m := make(map[string]*Key, len(Keys))
	for i := range Keys {
		m[Keys[i].Name] = &Keys[i]
	}
	return m
}()

// Lookup returns the description of a key.
func Lookup(name string) (Key, bool) {
	k, ok := byName[name]
	if !ok {
		return Key{}, false
	}
	return *k, true
}

// ShownDefaults returns the keys recorded with their defaults in the
// effective property set.
func ShownDefaults() map[string]string {
	m := map[string]string{}
	for _, k := range Keys {
		if k.Shown {
			m[k.Name] = k.Default
		}
	}
	return m
}
