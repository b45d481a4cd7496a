package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
	"slices"

	"strata/console"
	"strata/fsm"
	"strata/streaming"
)

// Endpoint is one route of the HTTP API: every endpoint of every role, public
// and internal, is an entry of the table in endpoints, registered by routes.
// (The router role's forwarding by path prefix is process.routerProxy's
// configuration, mounted through Options.Proxy: it serves nothing itself.)
type Endpoint struct {
	// Methods are the methods served; none means any method (the profiler's,
	// as net/http/pprof serves them). Another method gets a JSON 405.
	Methods []string
	// Path is the full literal path as gorilla/mux matches it, with the path
	// variables the handler reads (Druid's names: {dataSourceName},
	// {segmentId}, {taskId}, …), so that grep finds an endpoint by its path.
	Path string
	// Prefix serves every path under Path (the profiler's index).
	Prefix bool
	// Roles are the process roles whose processes serve the route.
	Roles []string
	// Leader is where the route is answered: any node of its roles, or only
	// the control-plane leader (see Leadership).
	Leader Leadership
	// Needs is a component of Options the handler cannot run without: a
	// process without it does not serve the route.
	Needs Component
	// Debug routes are served only with svc.debug.pprof.
	Debug bool
	// Access is what a caller must be allowed to call the route (access.go):
	// the resource and action, or open, authenticated only, internal client
	// only, a listing filtered to what the caller may read, or resources
	// named in the body that the handler checks. Every entry declares one,
	// following Druid's choices (TestRouteAccessDeclared), so the table is
	// where an endpoint's permission is read.
	Access  Access
	Handler http.HandlerFunc
}

// Leadership says which node of the control plane answers a route.
type Leadership int

const (
	// Local routes are answered by any process of the route's roles.
	Local Leadership = iota
	// LeaderOnly routes (changes) are answered by the caught-up leader; a
	// follower redirects (307) to it and with no leader the answer is 503
	// (leaderOnly).
	LeaderOnly
	// LeaderRead routes (reads of FSM state) are LeaderOnly, and the leader
	// confirms its leadership before each answer (leaderRead).
	LeaderRead
)

// Component is a part of Options that a route needs.
type Component int

const (
	NeedsNothing    Component = iota
	NeedsHistorical           // Options.Historical: a historical, or a middle manager serving its tasks' rows
	NeedsBroker               // Options.Broker
)

var (
	rolesAll           = []string{RoleCoordinator, RoleOverlord, RoleBroker, RoleHistorical, RoleMiddleManager, RoleRouter}
	rolesCoordinator   = []string{RoleCoordinator}
	rolesOverlord      = []string{RoleOverlord}
	rolesMiddleManager = []string{RoleMiddleManager}
	rolesHistorical    = []string{RoleHistorical}
	rolesDataServer    = []string{RoleHistorical, RoleMiddleManager} // what brokers query
	rolesBroker        = []string{RoleBroker}
	rolesControl       = []string{RoleCoordinator, RoleOverlord}
	rolesRouter        = []string{RoleRouter}
	rolesQuerying      = []string{RoleBroker, RoleHistorical, RoleMiddleManager} // processes that hold lookups

	get, post, del = []string{http.MethodGet}, []string{http.MethodPost}, []string{http.MethodDelete}
)

// endpoints is the route table. gorilla/mux takes the first route whose path
// and method match, so a literal path comes before a variable that would
// match it (/rules/history before /rules/{dataSourceName}).
func (s *Server) endpoints() []Endpoint {
	t := &taskAPI{s: s, o: s.overlord}
	return []Endpoint{
		// Status: every process (status.go).
		{Methods: get, Path: "/status", Access: stateRead, Roles: rolesAll, Handler: s.status},
		{Methods: get, Path: "/status/health", Access: open, Roles: rolesAll, Handler: s.health},
		{Methods: get, Path: "/status/properties", Access: stateRead, Roles: rolesAll, Handler: s.properties},
		{Methods: get, Path: "/status/selfDiscovered/status", Access: stateRead, Roles: rolesAll, Handler: s.selfDiscoveredStatus},
		{Methods: get, Path: "/status/selfDiscovered", Access: stateRead, Roles: rolesAll, Handler: s.selfDiscovered},
		// Prometheus metrics: every process (metrics.go). Druid serves them
		// without authentication on a port of their own; here they are a
		// route like /status, so STATE READ, open when no authenticator is
		// configured (a scraper with credentials otherwise).
		{Methods: get, Path: "/metrics", Access: stateRead, Roles: rolesAll, Handler: s.serveMetrics},

		// The web console (package console): static files only, open like
		// /status/health, since a browser fetches them before any login;
		// what it shows comes from the API calls below, made with the
		// user's credentials. /unified-console.html is Druid's path.
		{Methods: get, Path: "/", Access: open, Roles: rolesRouter, Handler: console.Index},
		{Methods: get, Path: "/unified-console.html", Access: open, Roles: rolesRouter, Handler: console.Index},
		{Methods: get, Path: "/console/", Prefix: true, Access: open, Roles: rolesRouter, Handler: console.Assets},
		// Who the caller is and what it may do, for the console to offer
		// only that (self.go).
		{Methods: get, Path: "/svc/v1/self", Access: authenticated, Roles: rolesAll, Handler: s.self},

		// Coordinator: leader and dynamic config (coordinator.go).
		{Methods: get, Path: "/svc/coordinator/v1/leader", Access: stateRead, Roles: rolesCoordinator, Handler: s.leaderURL},
		{Methods: get, Path: "/svc/coordinator/v1/isLeader", Access: stateRead, Roles: rolesCoordinator, Handler: s.isLeader},
		{Methods: get, Path: "/svc/coordinator/v1/config", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.getCoordinatorConfig},
		{Methods: post, Path: "/svc/coordinator/v1/config", Access: configWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.postCoordinatorConfig},
		{Methods: get, Path: "/svc/coordinator/v1/config/history", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead,
			Handler: s.history(fsm.AuditCoordinatorConfig, fsm.AuditCoordinatorConfig)},
		// Every command of the log, filtered and paged (audit_log.go). Any
		// control node answers from its own log, as the audit/* routes do.
		{Methods: get, Path: "/svc/coordinator/v1/audit", Access: stateRead, Roles: rolesCoordinator, Handler: s.auditLog},

		// Coordinator: segment management (segments.go, spec 4.3, ADMIN-API §6).
		{Methods: post, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/markUnused", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.markSegments(false)},
		{Methods: post, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/markUsed", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.markSegments(true)},
		{Methods: del, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/segments/{segmentId}", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.markOneUnused},
		{Methods: post, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/segments/{segmentId}", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.markOneUsed},
		// After the {dataSourceName} routes: no segment id reads "markUsed" and the like.
		{Methods: post, Path: "/svc/coordinator/v1/datasources/segments/{segmentId}", Access: segmentWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.markOneUsedAnyDataSource},
		{Methods: del, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/intervals/{interval}", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.killInterval},
		{Methods: del, Path: "/svc/coordinator/v1/datasources/{dataSourceName}", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.deleteDataSource},
		{Methods: post, Path: "/svc/coordinator/v1/datasources/{dataSourceName}", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.markAllUsed},
		// Internal: tasks publish segments, historicals poll their assignment
		// (protocol.AssignedPath).
		{Methods: post, Path: "/svc-internal/v1/segments/publish", Access: internalOnly, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.publishSegments},
		{Methods: get, Path: "/svc-internal/v1/segments/assigned/{serverName}", Access: internalOnly, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.assignedSegments},
		// Internal: brokers read the used segments at a past moment for asOf
		// queries (timeline.go, protocol.PastTimelinePath).
		{Methods: get, Path: "/svc-internal/v1/timeline", Access: internalOnly, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.pastTimeline},

		// Coordinator: the served view (segments_served.go, ADMIN-API §7).
		{Methods: get, Path: "/svc/coordinator/v1/datasources", Access: filtered, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedDataSources},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedDataSource},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/intervals", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedIntervals},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/intervals/{interval}", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedInInterval},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/intervals/{interval}/serverview", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.serverView},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/segments", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedSegmentList},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/segments/{segmentId}", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedSegment},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/tiers", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.servedTiers},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/loadstatus", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.dataSourceLoadStatus},
		{Methods: get, Path: "/svc/coordinator/v1/datasources/{dataSourceName}/handoffComplete", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.handoffComplete},
		{Methods: get, Path: "/svc/coordinator/v1/intervals", Access: filtered, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.allIntervals},
		{Methods: get, Path: "/svc/coordinator/v1/intervals/{interval}", Access: filtered, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.intervalStats},
		{Methods: get, Path: "/svc/coordinator/v1/servers", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.serverList},
		{Methods: get, Path: "/svc/coordinator/v1/servers/{serverName}", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.oneServer},
		{Methods: get, Path: "/svc/coordinator/v1/servers/{serverName}/segments", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.serverSegments},
		{Methods: get, Path: "/svc/coordinator/v1/servers/{serverName}/segments/{segmentId}", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.serverSegment},
		{Methods: get, Path: "/svc/coordinator/v1/loadstatus", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.loadStatus},
		{Methods: get, Path: "/svc/coordinator/v1/loadqueue", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.loadQueue},

		// Coordinator: the metadata store view (segments_metadata.go, spec 4.9).
		{Methods: get, Path: "/svc/coordinator/v1/metadata/segments", Access: filtered, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.metadataSegments},
		{Methods: get, Path: "/svc/coordinator/v1/metadata/datasources", Access: filtered, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.metadataDataSources},
		{Methods: get, Path: "/svc/coordinator/v1/metadata/datasources/{dataSourceName}", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.metadataDataSource},
		{Methods: []string{http.MethodGet, http.MethodPost}, Path: "/svc/coordinator/v1/metadata/datasources/{dataSourceName}/segments", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.metadataSegmentList},
		{Methods: get, Path: "/svc/coordinator/v1/metadata/datasources/{dataSourceName}/segments/{segmentId}", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.metadataSegment},
		{Methods: get, Path: "/svc/coordinator/v1/metadata/datasources/{dataSourceName}/unusedSegments", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.metadataUnusedSegments},
		{Methods: post, Path: "/svc/coordinator/v1/metadata/dataSourceInformation", Access: filtered, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.dataSourceInformation},

		// Coordinator: retention rules (rules.go).
		{Methods: get, Path: "/svc/coordinator/v1/rules", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.allRules},
		{Methods: get, Path: "/svc/coordinator/v1/rules/history", Access: stateRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.history(fsm.AuditRules, "")},
		{Methods: get, Path: "/svc/coordinator/v1/rules/{dataSourceName}/history", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.dataSourceRulesHistory},
		{Methods: get, Path: "/svc/coordinator/v1/rules/{dataSourceName}", Access: dsRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.dataSourceRules},
		{Methods: post, Path: "/svc/coordinator/v1/rules/{dataSourceName}", Access: dsWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.setRules},

		// Coordinator: lookups (lookups.go). Druid guards them with CONFIG
		// permissions. Literal paths first: /config/all before /config/{tier}.
		{Methods: get, Path: "/svc/coordinator/v1/lookups/config", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupTiers},
		{Methods: post, Path: "/svc/coordinator/v1/lookups/config", Access: configWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.updateLookups},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/config/all", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.allLookups},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/config/{tier}", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.tierLookups},
		{Methods: del, Path: "/svc/coordinator/v1/lookups/config/{tier}", Access: configWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.deleteLookupTier},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/config/{tier}/{lookup}", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.getLookup},
		{Methods: post, Path: "/svc/coordinator/v1/lookups/config/{tier}/{lookup}", Access: configWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.setLookup},
		{Methods: del, Path: "/svc/coordinator/v1/lookups/config/{tier}/{lookup}", Access: configWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.deleteLookup},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/history", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.history(fsm.AuditLookups, fsm.AuditLookups)},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/status", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupStatus},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/status/{tier}", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupStatus},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/status/{tier}/{lookup}", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupStatus},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/nodeStatus", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupNodeStatus},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/nodeStatus/{tier}", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupNodeStatus},
		{Methods: get, Path: "/svc/coordinator/v1/lookups/nodeStatus/{tier}/{hostAndPort}", Access: configRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupNodeStatus},
		// Internal: querying processes poll their tier's lookups and report
		// what they hold (lookupcache.SyncPath).
		{Methods: post, Path: "/svc-internal/v1/lookups/sync", Access: internalOnly, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.lookupSync},

		// Coordinator: Druid's basic-security API, users, credentials, roles
		// and permissions in the Raft log (basic_security.go). Druid guards it
		// with CONFIG "security": READ to look, WRITE to change.
		{Methods: get, Path: "/svc-ext/basic-security/authentication/loadStatus", Access: securityRead, Roles: rolesCoordinator, Handler: s.securityLoadStatus},
		{Methods: get, Path: "/svc-ext/basic-security/authentication/db/basic/users", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.authnUsers},
		{Methods: get, Path: "/svc-ext/basic-security/authentication/db/basic/users/{userName}", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.authnUser},
		{Methods: post, Path: "/svc-ext/basic-security/authentication/db/basic/users/{userName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.createAuthnUser},
		{Methods: del, Path: "/svc-ext/basic-security/authentication/db/basic/users/{userName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.deleteAuthnUser},
		{Methods: post, Path: "/svc-ext/basic-security/authentication/db/basic/users/{userName}/credentials", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.setCredentials},
		{Methods: get, Path: "/svc-ext/basic-security/authorization/loadStatus", Access: securityRead, Roles: rolesCoordinator, Handler: s.securityLoadStatus},
		{Methods: get, Path: "/svc-ext/basic-security/authorization/db/basic/users", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.authzUsers},
		{Methods: get, Path: "/svc-ext/basic-security/authorization/db/basic/users/{userName}", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.authzUser},
		{Methods: post, Path: "/svc-ext/basic-security/authorization/db/basic/users/{userName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.createAuthzUser},
		{Methods: del, Path: "/svc-ext/basic-security/authorization/db/basic/users/{userName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.deleteAuthzUser},
		{Methods: post, Path: "/svc-ext/basic-security/authorization/db/basic/users/{userName}/roles/{roleName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.assignRole},
		{Methods: del, Path: "/svc-ext/basic-security/authorization/db/basic/users/{userName}/roles/{roleName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.unassignRole},
		{Methods: get, Path: "/svc-ext/basic-security/authorization/db/basic/roles", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.listRoles},
		{Methods: get, Path: "/svc-ext/basic-security/authorization/db/basic/roles/{roleName}", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.role},
		{Methods: post, Path: "/svc-ext/basic-security/authorization/db/basic/roles/{roleName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.createRole},
		{Methods: del, Path: "/svc-ext/basic-security/authorization/db/basic/roles/{roleName}", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.deleteRole},
		{Methods: get, Path: "/svc-ext/basic-security/authorization/db/basic/roles/{roleName}/permissions", Access: securityRead, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.rolePermissions},
		{Methods: post, Path: "/svc-ext/basic-security/authorization/db/basic/roles/{roleName}/permissions", Access: securityWrite, Roles: rolesCoordinator, Leader: LeaderOnly, Handler: s.setRolePermissions},
		// Internal: data nodes' copy of the database (basic.Remote).
		{Methods: get, Path: "/svc-internal/v1/security/db", Access: internalOnly, Roles: rolesControl, Leader: LeaderRead, Handler: s.securityDBExport},
		// Internal: data nodes' windows of authentication failures, which
		// the leader records in the audit (authfailures_forward.go).
		{Methods: post, Path: "/svc-internal/v1/security/authFailures", Access: internalOnly, Roles: rolesControl, Leader: LeaderOnly, Handler: s.recordForwardedFailures},

		// Coordinator: the control plane's past (audit_state.go). Any control
		// node answers from its own history, so replicas can be compared.
		{Methods: get, Path: "/svc/coordinator/v1/audit/state", Access: stateRead, Roles: rolesCoordinator, Handler: s.auditState},
		{Methods: get, Path: "/svc/coordinator/v1/audit/diff", Access: stateRead, Roles: rolesCoordinator, Handler: s.auditDiff},
		{Methods: get, Path: "/svc/coordinator/v1/audit/digest", Access: stateRead, Roles: rolesCoordinator, Handler: s.auditDigest},
		// The online backup: the whole state, security tables included.
		{Methods: get, Path: "/svc/coordinator/v1/snapshot", Access: stateWrite, Roles: rolesCoordinator, Leader: LeaderRead, Handler: s.controlSnapshot},

		// Overlord: leader, worker config and workers (overlord.go).
		{Methods: get, Path: "/svc/indexer/v1/leader", Access: stateRead, Roles: rolesOverlord, Handler: s.leaderURL},
		{Methods: get, Path: "/svc/indexer/v1/isLeader", Access: stateRead, Roles: rolesOverlord, Handler: s.isLeader},
		{Methods: get, Path: "/svc/indexer/v1/worker", Access: configRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.getWorkerConfig},
		{Methods: post, Path: "/svc/indexer/v1/worker", Access: configWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.postWorkerConfig},
		{Methods: get, Path: "/svc/indexer/v1/worker/history", Access: configRead, Roles: rolesOverlord, Leader: LeaderRead,
			Handler: s.history(fsm.AuditWorkerConfig, fsm.AuditWorkerConfig)},
		{Methods: get, Path: "/svc/indexer/v1/workers", Access: stateRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.workers},
		{Methods: get, Path: "/svc/indexer/v1/scaling", Access: stateRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.scaling},

		// Overlord: supervisors (supervisors.go). Fixed paths before {supervisorId}.
		{Methods: get, Path: "/svc/indexer/v1/supervisor", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.listSupervisors},
		{Methods: post, Path: "/svc/indexer/v1/supervisor", Access: inBody, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.postSupervisor},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/history", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.allSupervisorHistory},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/suspendAll", Access: allSupervisors, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.setAllSuspended(true)},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/resumeAll", Access: allSupervisors, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.setAllSuspended(false)},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/terminateAll", Access: allSupervisors, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.terminateAllSupervisors},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/{supervisorId}", Access: supervisorRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.getSupervisor},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/{supervisorId}/status", Access: supervisorRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.supervisorStatusReport},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/{supervisorId}/health", Access: supervisorRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.supervisorHealth},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/{supervisorId}/history", Access: supervisorRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.supervisorHistory},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/{supervisorId}/stats", Access: supervisorRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.supervisorRuntime(func(st streaming.Status) json.RawMessage { return st.Stats }, "{}")},
		{Methods: get, Path: "/svc/indexer/v1/supervisor/{supervisorId}/parseErrors", Access: supervisorRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: s.supervisorRuntime(func(st streaming.Status) json.RawMessage { return st.ParseErrors }, "[]")},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/{supervisorId}/suspend", Access: supervisorWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.setSuspended(true)},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/{supervisorId}/resume", Access: supervisorWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.setSuspended(false)},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/{supervisorId}/reset", Access: supervisorWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.resetSupervisor},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/{supervisorId}/resetOffsets", Access: supervisorWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.resetSupervisorOffsets},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/{supervisorId}/terminate", Access: supervisorWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.terminateSupervisor},
		{Methods: post, Path: "/svc/indexer/v1/supervisor/{supervisorId}/shutdown", Access: supervisorWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: s.terminateSupervisor}, // deprecated alias

		// Overlord: tasks (tasks.go, ADMIN-API §11) and SQL tasks (sqltask.go).
		{Methods: post, Path: "/svc/indexer/v1/task", Access: inBody, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.submit},
		{Methods: get, Path: "/svc/indexer/v1/task/{taskId}", Access: taskRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.get},
		{Methods: get, Path: "/svc/indexer/v1/task/{taskId}/status", Access: taskRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.status},
		{Methods: get, Path: "/svc/indexer/v1/task/{taskId}/reports", Access: taskRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.reports},
		{Methods: get, Path: "/svc/indexer/v1/task/{taskId}/log", Access: taskRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.taskLog},
		{Methods: post, Path: "/svc/indexer/v1/task/{taskId}/shutdown", Access: taskWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.shutdown},
		{Methods: post, Path: "/svc/indexer/v1/datasources/{dataSourceName}/shutdownAllTasks", Access: dsWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.shutdownAll},
		{Methods: post, Path: "/svc/indexer/v1/taskStatus", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.multiStatus},
		{Methods: get, Path: "/svc/indexer/v1/tasks", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.list("")},
		{Methods: get, Path: "/svc/indexer/v1/runningTasks", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.list("running")},
		{Methods: get, Path: "/svc/indexer/v1/pendingTasks", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.list("pending")},
		{Methods: get, Path: "/svc/indexer/v1/waitingTasks", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.list("waiting")},
		{Methods: get, Path: "/svc/indexer/v1/completeTasks", Access: filtered, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.list("complete")},
		{Methods: post, Path: "/svc/indexer/v1/worker/{host}/enable", Access: stateWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.setWorkerEnabled(true)},
		{Methods: post, Path: "/svc/indexer/v1/worker/{host}/disable", Access: stateWrite, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.setWorkerEnabled(false)},
		{Methods: get, Path: "/svc/indexer/v1/totalWorkerCapacity", Access: stateRead, Roles: rolesOverlord, Leader: LeaderRead, Handler: t.totalCapacity},
		{Methods: post, Path: "/svc/v2/sql/task", Access: inBody, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.submitSQL},
		// Internal: what middle managers call (middlemanager.Path…).
		{Methods: post, Path: "/svc-internal/v1/overlord/register", Access: internalOnly, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.register},
		{Methods: post, Path: "/svc-internal/v1/overlord/heartbeat", Access: internalOnly, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.heartbeat},
		{Methods: post, Path: "/svc-internal/v1/overlord/taskStatus", Access: internalOnly, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.reportStatus},
		{Methods: post, Path: "/svc-internal/v1/overlord/taskAction", Access: internalOnly, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.action},
		{Methods: post, Path: "/svc-internal/v1/overlord/workerEnabled", Access: internalOnly, Roles: rolesOverlord, Leader: LeaderOnly, Handler: t.workerSetsEnabled},

		// Middle manager (worker.go, spec 4.5, ADMIN-API §3).
		{Methods: get, Path: "/svc/worker/v1/enabled", Access: stateRead, Roles: rolesMiddleManager, Handler: s.withWorker(workerEnabled)},
		{Methods: get, Path: "/svc/worker/v1/tasks", Access: stateRead, Roles: rolesMiddleManager, Handler: s.withWorker(workerTasks)},
		{Methods: get, Path: "/svc/worker/v1/task/{taskId}/log", Access: stateRead, Roles: rolesMiddleManager, Handler: s.withWorker(workerTaskLog)},
		{Methods: post, Path: "/svc/worker/v1/task/{taskId}/shutdown", Access: stateWrite, Roles: rolesMiddleManager, Handler: s.withWorker(workerShutdown)},
		{Methods: post, Path: "/svc/worker/v1/disable", Access: stateWrite, Roles: rolesMiddleManager, Handler: s.withWorker(workerSetEnabled(false))},
		{Methods: post, Path: "/svc/worker/v1/enable", Access: stateWrite, Roles: rolesMiddleManager, Handler: s.withWorker(workerSetEnabled(true))},
		// Internal: the overlord hands a task over (middlemanager.PathRun).
		{Methods: post, Path: "/svc-internal/v1/worker/run", Access: internalOnly, Roles: rolesMiddleManager, Handler: s.withWorker(s.workerRun)},

		// Historical (historical.go).
		{Methods: get, Path: "/svc/historical/v1/loadstatus", Access: stateRead, Roles: rolesHistorical, Needs: NeedsHistorical, Handler: s.historicalLoadStatus},
		{Methods: get, Path: "/svc/historical/v1/readiness", Access: stateRead, Roles: rolesHistorical, Needs: NeedsHistorical, Handler: s.historicalReadiness},
		// The lookups this querying process holds (lookups.go): Druid's
		// listen resource, guarded by CONFIG as Druid guards it.
		{Methods: get, Path: "/svc/listen/v1/lookups", Access: configRead, Roles: rolesQuerying, Handler: s.listenLookups},
		{Methods: get, Path: "/svc/v1/lookups/introspect/{lookupId}", Access: configRead, Roles: rolesQuerying, Handler: s.introspectLookup("")},
		{Methods: get, Path: "/svc/v1/lookups/introspect/{lookupId}/keys", Access: configRead, Roles: rolesQuerying, Handler: s.introspectLookup("keys")},
		{Methods: get, Path: "/svc/v1/lookups/introspect/{lookupId}/values", Access: configRead, Roles: rolesQuerying, Handler: s.introspectLookup("values")},
		{Methods: get, Path: "/svc/v1/lookups/introspect/{lookupId}/version", Access: configRead, Roles: rolesQuerying, Handler: s.introspectLookup("version")},
		// Internal: what brokers use of any data server (a historical, or a
		// middle manager serving its tasks' rows): the segment announcement
		// (protocol.AnnouncePath) and sub-queries (protocol.QueryPath).
		// Internal: discovery, what every process calls on the leader (discovery.go).
		{Methods: post, Path: "/svc-internal/v1/discovery/announce", Access: internalOnly, Roles: rolesControl, Leader: LeaderOnly, Handler: s.discoveryAnnounce},
		{Methods: post, Path: "/svc-internal/v1/discovery/leave", Access: internalOnly, Roles: rolesControl, Leader: LeaderOnly, Handler: s.discoveryLeave},
		{Methods: get, Path: "/svc-internal/v1/historical/segments", Access: internalOnly, Roles: rolesDataServer, Needs: NeedsHistorical, Handler: s.announce},
		{Methods: post, Path: "/svc-internal/v1/query", Access: internalOnly, Roles: rolesDataServer, Needs: NeedsHistorical, Handler: s.subQuery},

		// Broker: native queries (query.go, spec 4.8), datasource information
		// (broker.go, spec 4.9) and load status.
		{Methods: post, Path: "/svc/v2/", Access: inBody, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.nativeQuery},
		{Methods: post, Path: "/svc/v2/candidates", Access: inBody, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.queryCandidates},
		{Methods: get, Path: "/svc/v2/datasources", Access: filtered, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.brokerDataSources},
		{Methods: get, Path: "/svc/v2/datasources/{dataSourceName}", Access: dsRead, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.brokerDataSource},
		{Methods: get, Path: "/svc/v2/datasources/{dataSourceName}/dimensions", Access: dsRead, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.brokerColumns(true)},
		{Methods: get, Path: "/svc/v2/datasources/{dataSourceName}/metrics", Access: dsRead, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.brokerColumns(false)},
		{Methods: get, Path: "/svc/v2/datasources/{dataSourceName}/candidates", Access: dsRead, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.dataSourceCandidates},
		{Methods: del, Path: "/svc/v2/{queryId}", Access: queryWrite, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.cancelQuery},
		// Druid SQL (sql.go): planned onto the native query path, which checks
		// DATASOURCE READ on every datasource the statement reads.
		{Methods: post, Path: "/svc/v2/sql", Access: inBody, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.sqlQuery},
		{Methods: del, Path: "/svc/v2/sql/{queryId}", Access: sqlWrite, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.cancelSQL},
		{Methods: get, Path: "/svc/broker/v1/loadstatus", Access: stateRead, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.brokerLoadStatus},
		{Methods: get, Path: "/svc/broker/v1/readiness", Access: stateRead, Roles: rolesBroker, Needs: NeedsBroker, Handler: s.brokerReadiness},

		// Go's profiler for performance work (off by default: profiles expose internals).
		{Path: "/debug/pprof/profile", Access: stateRead, Roles: rolesAll, Debug: true, Handler: pprof.Profile},
		{Path: "/debug/pprof/trace", Access: stateRead, Roles: rolesAll, Debug: true, Handler: pprof.Trace},
		{Path: "/debug/pprof/", Access: stateRead, Prefix: true, Roles: rolesAll, Debug: true, Handler: pprof.Index},
	}
}

// routes registers the table's routes this process serves, then the router
// role's forwarding, then the JSON 404 and 405 answers.
func (s *Server) routes() {
	r := s.router
	r.StrictSlash(false)
	for _, e := range s.endpoints() {
		if !s.serves(e) {
			continue
		}
		h := e.Handler
		switch e.Leader {
		case LeaderOnly:
			h = s.leaderOnly(h)
		case LeaderRead:
			h = s.leaderRead(h)
		}
		// Outside the leader wrappers: a follower refuses before it
		// redirects, so a redirect tells nothing to a caller not allowed.
		h = s.guard(e, h)
		// Outermost: the refusals of guard are counted too.
		h = s.instrument(e.Path, h)
		// The route's own path, Druid's alias and the trailing-slash forms
		// (druidpaths.go): one entry, one guarded handler.
		for _, path := range e.Paths() {
			route := r.NewRoute()
			if e.Prefix {
				route.PathPrefix(path)
			} else {
				route.Path(path)
			}
			route.HandlerFunc(h)
			if len(e.Methods) > 0 {
				// A copy: Methods upper-cases the slice it is given in place, and
				// the table's slices are shared by every server of the process.
				route.Methods(slices.Clone(e.Methods)...)
			}
		}
	}
	if s.opts.Proxy != nil {
		s.opts.Proxy.Mount(r)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s (see the README for the API)", r.Method, r.URL.Path))
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
	})
}

// serves reports whether this process serves e: it has one of e's roles and
// what e needs.
func (s *Server) serves(e Endpoint) bool {
	if e.Debug && !s.pprof {
		return false
	}
	switch e.Needs {
	case NeedsHistorical:
		if s.opts.Historical == nil {
			return false
		}
	case NeedsBroker:
		if s.opts.Broker == nil {
			return false
		}
	}
	for _, role := range e.Roles {
		if s.roles[role] {
			return true
		}
	}
	return false
}
