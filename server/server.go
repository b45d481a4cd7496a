// Package server is Strata's HTTP API: the Druid-compatible endpoints of every
// role (spec sections 4.x) on gorilla/mux, with JSON errors everywhere, request
// size limits, and leader redirects for the control plane.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/hashicorp/go-hclog"

	"strata/auth"
	"strata/cluster"
	"strata/commands"
	"strata/config"
	"strata/coordinator"
	"strata/discovery"
	"strata/escalator"
	"strata/fsm"
	"strata/ingest"
	"strata/metrics"
	"strata/overlord"
	"strata/props"
	"strata/querynode/broker"
	"strata/querynode/historical"
	"strata/querynode/lookupcache"
	"strata/storage/deep"
	"strata/streaming"
)

// Version is the software version reported by /status (set at link time).
var Version = "0.1.0"

// Role names.
const (
	RoleCoordinator   = "coordinator"
	RoleOverlord      = "overlord"
	RoleBroker        = "broker"
	RoleHistorical    = "historical"
	RoleMiddleManager = "middleManager"
	RoleRouter        = "router"
)

// Options configures a Server.
type Options struct {
	Roles  []string
	Node   *cluster.Node // control node; nil on processes without coordinator/overlord roles
	Props  *props.Properties
	Logger hclog.Logger
	// Proxy is the router role's forwarding by path prefix (nil: none).
	Proxy *Proxy
	// Historical and Broker are the data-plane nodes of those roles.
	Historical *historical.Node
	Broker     *broker.Broker
	// Coordinator is the coordinator role's runtime on Node: the historicals'
	// inventory and the placement (coordinator.Start).
	Coordinator *coordinator.Runtime
	// Overlord is the overlord role's task runner on Node (overlord.Attach),
	// and Supervisors its supervisor runtime (Overlord.StartSupervisors;
	// nil shows every supervisor as PENDING).
	Overlord    *overlord.Overlord
	Supervisors *streaming.Manager
	// Discovery is the control node's registry of live processes (leader
	// side); Announcer is this process's side, shown in /status. Either may
	// be nil.
	Discovery *discovery.Registry
	Announcer *discovery.Announcer
	// Security is the authenticator chain (security.go); nil leaves the
	// API open, and then svc.auth.authenticatorChain must be empty.
	Security *Security
	// Lookups are the lookups a querying process holds (nil: none), which
	// /svc/listen/v1/lookups and the SQL lookup schema show.
	Lookups *lookupcache.Registry
	// Metrics is the process's Prometheus registry, served at /metrics
	// (metrics.go); nil: the server makes its own.
	Metrics *metrics.Registry
}

// Server serves one process's HTTP API.
type Server struct {
	opts            Options
	node            *cluster.Node
	props           *props.Properties
	log             hclog.Logger
	maxBody         int64
	maxInternalBody int64 // svc.server.http.maxInternalRequestBytes, for /svc-internal/
	settings        config.HTTP
	roles           map[string]bool
	router          *mux.Router
	started         time.Time
	proposeT        time.Duration
	pprof           bool                   // svc.debug.pprof: serve /debug/pprof/
	trusted         []*net.IPNet           // svc.server.trustedProxies: peers whose X-Forwarded-For is believed
	sup             supervisorHooks        // supervisor runtime status and kick hook (supervisors.go)
	inv             *coordinator.Inventory // what the historicals serve (coordinator role)
	placement       *coordinator.Placement // which historical should serve what (coordinator role)
	overlord        *overlord.Overlord     // the task runner (overlord role)
	internal        escalator.Credentials  // required on /svc-internal/ when a password is set
	deepStorage     deep.Config            // where published load specs must point (coordinator role)
	discovery       *discovery.Registry    // live processes (control roles; nil without discovery)
	past            pastCache              // used segments at past log indexes, for brokers' asOf queries (timeline.go)
	pastReplays     atomic.Int64           // states rebuilt for them (tests)
	announcer       *discovery.Announcer   // this process's announcements (nil without discovery)
	sec             *security              // authentication (nil: the API is open)
	authCfg         config.Auth            // svc.auth.*
	recordFailures  func(FailureReport) error
	lookupNodes     lookupNodes       // the querying processes' lookup reports (coordinator leader; lookups.go)
	sqlPlans        planCache         // planned SQL statements for reuse (sqlcache.go)
	metrics         *metrics.Registry // served at /metrics (metrics.go)

	assignedMu sync.Mutex
	assigned   map[string]assignedAnswer // encoded assignments by historical name
}

// New builds the handler tree for the given roles.
func New(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Props == nil {
		o.Props = props.Defaults()
	}
	// The server's settings are parsed once, here: a malformed one stops the
	// process's start instead of failing the requests that read it.
	hc, err := config.ParseHTTP(o.Props)
	if err != nil {
		return nil, err
	}
	trusted, err := parseTrustedProxies(hc.TrustedProxies)
	if err != nil {
		return nil, err
	}
	s := &Server{
		trusted:         trusted,
		pprof:           hc.Pprof,
		settings:        hc,
		opts:            o,
		node:            o.Node,
		props:           o.Props,
		log:             o.Logger,
		maxBody:         hc.MaxRequestBytes,
		maxInternalBody: hc.MaxInternalRequestBytes,
		roles:           map[string]bool{},
		router:          mux.NewRouter(),
		started:         time.Now(),
		proposeT:        10 * time.Second,
	}
	for _, r := range o.Roles {
		s.roles[r] = true
	}
	if (s.roles[RoleCoordinator] || s.roles[RoleOverlord]) && s.node == nil {
		return nil, errors.New("coordinator and overlord roles need a control node")
	}
	s.internal = escalator.FromProps(o.Props)
	if s.authCfg, err = config.ParseAuth(o.Props); err != nil {
		return nil, err
	}
	s.sec = newSecurity(o.Security, s.authCfg)
	if s.sec == nil && len(s.authCfg.AuthenticatorChain) > 0 {
		// Fail closed: a process told to authenticate that cannot must not
		// serve an open API.
		return nil, fmt.Errorf("svc.auth.authenticatorChain=%v but this process has no authenticator: refusing to serve an open API", s.authCfg.AuthenticatorChain)
	}
	if o.Security != nil {
		s.recordFailures = o.Security.RecordFailures
	}
	if s.sec != nil && s.node != nil && s.recordFailures == nil {
		// A control node writes its failure counts to the audit; data
		// nodes send theirs to the leader (ForwardAuthFailures, set by
		// process/), and a server without a recorder logs them.
		s.recordFailures = ProposeAuthFailures(s.node)
	}
	s.discovery, s.announcer = o.Discovery, o.Announcer
	if s.roles[RoleCoordinator] {
		if s.deepStorage, err = ingest.DeepStorageConfig(o.Props); err != nil {
			return nil, fmt.Errorf("deep storage: %w", err)
		}
	}
	if s.roles[RoleCoordinator] {
		if o.Coordinator == nil {
			return nil, errors.New("the coordinator role needs its runtime (Options.Coordinator)")
		}
		s.inv, s.placement = o.Coordinator.Inventory, o.Coordinator.Placement
	}
	if s.roles[RoleOverlord] {
		if o.Overlord == nil {
			return nil, errors.New("the overlord role needs its task runner (Options.Overlord)")
		}
		s.overlord = o.Overlord
		if o.Supervisors != nil {
			s.SetSupervisorStatus(o.Supervisors)
			s.SetSupervisorKick(o.Supervisors.Kick)
		}
	}
	if s.roles[RoleHistorical] && o.Historical == nil {
		s.log.Error("historical role without a historical node: its endpoints are not served")
	}
	if s.roles[RoleBroker] && o.Broker == nil {
		s.log.Error("broker role without a broker: its endpoints are not served")
	}
	if err := s.setupMetrics(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// Handler returns the root handler with the common middleware.
func (s *Server) Handler() http.Handler { return s.recoverer(s.common(s.router)) }

// common does what every endpoint needs before routing: it refuses internal
// requests without the cluster's internal credentials (when configured),
// rejects a query string that does not decode (rather than silently dropping
// the parameter), answers HEAD as GET without the body and OPTIONS with the
// allowed methods (load-balancer health checks use both), and records the
// client's address for audit entries.
func (s *Server) common(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// With an authenticator the internal endpoints are the internal
		// client's by their route's Access (authenticate and guard).
		if s.sec == nil && s.internal.Enabled() && escalator.Internal(r) && !s.internal.Authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="strata-internal", charset="UTF-8"`)
			writeError(w, http.StatusUnauthorized, fmt.Sprintf("%s needs the cluster's internal credentials (%s, %s)",
				r.URL.Path, escalator.PropUsername, escalator.PropPassword))
			return
		}
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			writeError(w, http.StatusBadRequest, "malformed query string: "+err.Error()+"; percent-encode special characters")
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), clientIPKey{}, s.resolveClientIP(r)))
		r, ok := s.authenticate(w, r)
		if !ok {
			return
		}
		switch r.Method {
		case http.MethodHead:
			// net/http drops the body of a response to a HEAD request, which
			// w still belongs to; the handlers see a GET.
			g := r.Clone(r.Context())
			g.Method = http.MethodGet
			next.ServeHTTP(w, g)
			return
		case http.MethodOptions:
			s.options(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// options answers OPTIONS with the methods the path accepts.
func (s *Server) options(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		var match mux.RouteMatch
		if s.router.Match(probe, &match) && match.MatchErr == nil {
			allowed = append(allowed, m)
			if m == http.MethodGet {
				allowed = append(allowed, http.MethodHead)
			}
		}
	}
	if len(allowed) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s (see the README for the API)", r.URL.Path))
		return
	}
	w.Header().Set("Allow", strings.Join(append(allowed, http.MethodOptions), ", "))
	writeEmpty(w, http.StatusOK)
}

// recoverer turns a panic in a handler into a JSON 500 instead of a dropped
// connection or a stack trace.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeError(w, http.StatusInternalServerError, "internal error; the server log has details")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// ErrorBody is the error shape of most endpoints (ADMIN-API §1.1 shape A).
type ErrorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// writeEmpty sends a status with no entity (Druid's "200 with no body").
func writeEmpty(w http.ResponseWriter, status int) { w.WriteHeader(status) }

// readJSONBody enforces the JSON content type (415) and the size limit (413) and
// returns the body; on failure it has already answered.
func (s *Server) readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content type %q: send the body as application/json", ct))
		return nil, false
	}
	return s.readBody(w, r)
}

func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	// Calls between Strata's own processes (a task publishing every segment
	// of a large ingestion at once) have their own, larger limit.
	limit, prop := s.maxBody, "svc.server.http.maxRequestBytes"
	if escalator.InternalPath(r.URL.Path) {
		limit, prop = s.maxInternalBody, "svc.server.http.maxInternalRequestBytes"
	}
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes (%s)", r.ContentLength, limit, prop))
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the limit of %d bytes (%s)", limit, prop))
			return nil, false
		}
		writeError(w, http.StatusBadRequest, "cannot read request body: "+err.Error())
		return nil, false
	}
	return b, true
}

// auditFrom collects the audit info of a change request.
// With security on, the author is the authenticated user, so that the audit
// cannot be told a made-up name; only the internal client (Strata's own
// processes, acting for someone) may name the author in X-Svc-Author.
func auditFrom(r *http.Request) commands.Audit {
	// Druid's tools send Druid's header names.
	a := commands.Audit{
		Author:  firstHeader(r, "X-Svc-Author", "X-Druid-Author"),
		Comment: firstHeader(r, "X-Svc-Comment", "X-Druid-Comment"),
		IP:      clientIP(r),
	}
	if id := auth.IdentityFrom(r.Context()); id != nil && (!id.Internal || a.Author == "") {
		a.Author = id.Name
	}
	return a
}

// firstHeader is the first of the named headers r carries.
func firstHeader(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
	}
	return ""
}

type clientIPKey struct{}

// clientIP is the client's address as resolved by the common middleware.
func clientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey{}).(string); ok {
		return ip
	}
	return peerIP(r)
}

func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// resolveClientIP is the peer's address, unless the peer is one of
// svc.server.trustedProxies (a router in front of this node): then
// X-Forwarded-For is read from the right, and the first hop that is not a
// trusted proxy is the client. Anyone else's X-Forwarded-For is ignored, so a
// client cannot write a made-up address into the audit trail.
func (s *Server) resolveClientIP(r *http.Request) string {
	peer := peerIP(r)
	if len(s.trusted) == 0 || !s.isTrusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if net.ParseIP(hop) == nil {
			break
		}
		client = hop
		if !s.isTrusted(hop) {
			break
		}
	}
	return client
}

func (s *Server) isTrusted(ip string) bool {
	addr := net.ParseIP(ip)
	for _, n := range s.trusted {
		if addr != nil && n.Contains(addr) {
			return true
		}
	}
	return false
}

// parseTrustedProxies reads svc.server.trustedProxies: IP addresses or CIDR
// blocks, as a JSON array or a comma-separated list.
func parseTrustedProxies(list []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, item := range list {
		if !strings.Contains(item, "/") {
			ip := net.ParseIP(item)
			if ip == nil {
				return nil, fmt.Errorf("svc.server.trustedProxies: %q is not an IP address or CIDR block", item)
			}
			bits := 32
			if ip.To4() == nil {
				bits = 128
			}
			item = fmt.Sprintf("%s/%d", ip, bits)
		}
		_, n, err := net.ParseCIDR(item)
		if err != nil {
			return nil, fmt.Errorf("svc.server.trustedProxies: %q is not an IP address or CIDR block", item)
		}
		out = append(out, n)
	}
	return out, nil
}

// propose replicates a command and maps its outcome to HTTP: apply errors become
// 4xx, loss of leadership a redirect or 503. It returns false after answering.
func (s *Server) propose(w http.ResponseWriter, r *http.Request, cmd commands.Command) (any, bool) {
	return s.proposeAudited(w, r, cmd, auditFrom(r))
}

// proposeAudited is propose with an audit record other than the request's
// own (the leader recording for another node).
func (s *Server) proposeAudited(w http.ResponseWriter, r *http.Request, cmd commands.Command, a commands.Audit) (any, bool) {
	v, err := s.node.Propose(cmd, a, s.proposeT)
	if err == nil {
		return v, true
	}
	switch fsm.KindOf(err) {
	case fsm.KindInvalid:
		writeError(w, http.StatusBadRequest, err.Error())
	case fsm.KindNotFound:
		writeError(w, http.StatusNotFound, err.Error())
	case fsm.KindConflict:
		writeError(w, http.StatusConflict, err.Error())
	default:
		if errors.Is(err, cluster.ErrNotLeader) {
			s.notLeader(w, r)
			return nil, false
		}
		s.log.Error("propose failed", "command", cmd.CommandType(), "error", err)
		writeError(w, http.StatusServiceUnavailable, "the change could not be committed: "+err.Error()+"; retry")
	}
	return nil, false
}
