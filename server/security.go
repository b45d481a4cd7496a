package server

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/auth"
	"strata/cluster"
	"strata/commands"
	"strata/config"
)

// Security is a process's authentication: the authenticators of
// svc.auth.authenticatorChain, in order, each with the authorizer that
// decides for the identities it recognises. A nil *Security (or an empty
// chain) leaves the API open, as before issue 18.
type Security struct {
	Chain []Authn
	// RecordFailures writes one window's authentication failures to the
	// audit; nil logs them. It is called at most once per
	// svc.auth.failureAuditPeriod, from its own goroutine.
	RecordFailures func(FailureReport) error
}

// Authn is one authenticator of the chain.
type Authn struct {
	Name          string
	Authenticator auth.Authenticator
	Authorizer    auth.Authorizer
}

// FailureReport counts one window's authentication failures.
type FailureReport struct {
	Start, End time.Time
	// Missing requests carried no credentials, Wrong ones wrong
	// credentials, Throttled ones came from an address over the
	// failed-login limit (429).
	Missing, Wrong, Throttled int
	// ByAddress counts all three by client address.
	ByAddress map[string]int
}

// Total is the number of failures of the window.
func (f FailureReport) Total() int { return f.Missing + f.Wrong + f.Throttled }

// healthPath needs no credentials: load balancers and orchestrators probe
// it (Druid leaves /status/health unsecured too). The web console's static
// files are the table's only other open routes.
const healthPath = "/status/health"

// openPaths are the paths of the table's Open routes (every form of each,
// Endpoint.Paths) and openPrefixes those of its Open prefix routes: the
// table says what needs no credentials, and authenticate follows it.
var (
	openOnce     sync.Once
	openPaths    map[string]bool
	openPrefixes []string
)

// isOpen reports whether path is an Open route's, so authenticate lets a
// request without credentials through.
func isOpen(p string) bool {
	openOnce.Do(func() {
		openPaths = map[string]bool{}
		for _, e := range (&Server{}).endpoints() {
			if e.Access.Kind != Open {
				continue
			}
			for _, q := range e.Paths() {
				if e.Prefix {
					openPrefixes = append(openPrefixes, q)
				} else {
					openPaths[q] = true
				}
			}
		}
	})
	if openPaths[p] {
		return true
	}
	for _, pre := range openPrefixes {
		// A clean path only: "/console/../svc/x" is not under /console/.
		if strings.HasPrefix(p, pre) && path.Clean(p) == strings.TrimSuffix(p, "/") {
			return true
		}
	}
	return false
}

// realm is the WWW-Authenticate realm of 401 answers.
const realm = "strata"

// security is the server's side of Security: the chain, the failed-login
// limiter and the failure counts.
type security struct {
	chain     []Authn
	limiter   *loginLimiter
	counts    *failureCounts
	reporting atomic.Bool // a reportFailures runs
}

func newSecurity(sec *Security, c config.Auth) *security {
	if sec == nil || len(sec.Chain) == 0 {
		return nil
	}
	return &security{
		chain:   sec.Chain,
		limiter: newLoginLimiter(int(c.FailedLoginLimit), c.FailedLoginWindow),
		counts:  newFailureCounts(),
	}
}

// authenticate runs before routing: it finds the request's identity and
// puts it, with its authorizer, in the request's context, or answers 401
// (no or wrong credentials) or 429 (an address over the failed-login
// limit). It returns false after answering.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	sec := s.sec
	// The health check (with or without Jersey's trailing slash) and the
	// console's files: the table's Open routes.
	if sec == nil || isOpen(r.URL.Path) {
		return r, true
	}
	// The internal client first, and before the limiter: Strata's own
	// processes must not be locked out by someone guessing passwords from
	// the same address.
	if s.internal.Enabled() && s.internal.Authorized(r) {
		id := &auth.Identity{Name: s.internal.Username, Authenticator: "escalator", Internal: true}
		return r.WithContext(auth.WithIdentity(auth.WithAuthorizer(r.Context(), sec.chain[0].Authorizer), id)), true
	}
	ip := clientIP(r)
	now := time.Now()
	if !sec.limiter.allowed(ip, now) {
		s.noteFailure(ip, failThrottled)
		writeSecurityError(w, http.StatusTooManyRequests, "tooManyFailedLogins", "CAPACITY_EXCEEDED",
			fmt.Sprintf("too many failed logins from %s; retry after %s", ip, sec.limiter.window))
		return nil, false
	}
	presented := r.Header.Get("Authorization") != ""
	for _, a := range sec.chain {
		id, err := a.Authenticator.Authenticate(r)
		if err != nil {
			if !errors.Is(err, auth.ErrBadCredentials) {
				// The authenticator could not decide (its user database is
				// not loaded yet): not the client's fault, not counted.
				s.log.Warn("authenticator failed", "authenticator", a.Name, "error", err)
				writeSecurityError(w, http.StatusServiceUnavailable, "authenticatorUnavailable", "RUNTIME_FAILURE",
					"cannot check credentials now; retry")
				return nil, false
			}
			break
		}
		if id != nil {
			if id.Authenticator == "" {
				id.Authenticator = a.Name
			}
			return r.WithContext(auth.WithIdentity(auth.WithAuthorizer(r.Context(), a.Authorizer), id)), true
		}
	}
	if presented {
		sec.limiter.fail(ip, now)
		s.noteFailure(ip, failWrong)
	} else {
		s.noteFailure(ip, failMissing)
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Basic realm=%q, charset="UTF-8"`, realm))
	writeSecurityError(w, http.StatusUnauthorized, "unauthorized", "UNAUTHORIZED", "Unauthorized")
	return nil, false
}

// securityError is Druid's error body for security failures (a
// DruidException: {"error":"druidException","errorCode":"forbidden",
// "persona":"USER","category":"FORBIDDEN","errorMessage":"Unauthorized"}),
// with the missing permission in context.
type securityError struct {
	Error        string            `json:"error"`
	ErrorCode    string            `json:"errorCode"`
	Persona      string            `json:"persona"`
	Category     string            `json:"category"`
	ErrorMessage string            `json:"errorMessage"`
	Context      map[string]string `json:"context,omitempty"`
}

func writeSecurityError(w http.ResponseWriter, status int, code, category, msg string) {
	writeJSON(w, status, securityError{Error: "druidException", ErrorCode: code, Persona: "USER", Category: category, ErrorMessage: msg})
}

// writeForbidden answers 403 with Druid's body; why goes in context.
func writeForbidden(w http.ResponseWriter, why string) {
	writeJSON(w, http.StatusForbidden, securityError{Error: "druidException", ErrorCode: "forbidden", Persona: "USER",
		Category: "FORBIDDEN", ErrorMessage: "Unauthorized", Context: map[string]string{"reason": why}})
}

// writeAuthError answers an auth.Check error: 403 naming the permission,
// or 401 when the request has no identity.
func writeAuthError(w http.ResponseWriter, err error) {
	var fe *auth.ForbiddenError
	if errors.As(err, &fe) {
		writeJSON(w, http.StatusForbidden, securityError{Error: "druidException", ErrorCode: "forbidden", Persona: "USER",
			Category: "FORBIDDEN", ErrorMessage: "Unauthorized",
			Context: map[string]string{"resource": fe.Resource.String(), "action": string(fe.Action)}})
		return
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Basic realm=%q, charset="UTF-8"`, realm))
	writeSecurityError(w, http.StatusUnauthorized, "unauthorized", "UNAUTHORIZED", "Unauthorized")
}

// loginLimiter counts wrong credentials per client address in fixed
// windows; an address that reached the limit is refused until its window
// ends. Fixed windows are coarse but cost one map entry per address, and
// the map is emptied of ended windows when it grows, so a scan from many
// addresses cannot grow it without bound.
type loginLimiter struct {
	limit  int
	window time.Duration

	mu    sync.Mutex
	addrs map[string]*loginWindow
}

type loginWindow struct {
	start time.Time
	fails int
}

// maxTrackedAddresses bounds the limiter's map; beyond, ended windows are
// dropped, and if none has ended the oldest half goes.
const maxTrackedAddresses = 100_000

func newLoginLimiter(limit int, window time.Duration) *loginLimiter {
	return &loginLimiter{limit: limit, window: window, addrs: map[string]*loginWindow{}}
}

func (l *loginLimiter) allowed(ip string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.addrs[ip]
	if w == nil || now.Sub(w.start) >= l.window {
		return true
	}
	return w.fails < l.limit
}

func (l *loginLimiter) fail(ip string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.addrs[ip]
	if w == nil || now.Sub(w.start) >= l.window {
		if w == nil && len(l.addrs) >= maxTrackedAddresses {
			l.sweep(now)
		}
		w = &loginWindow{start: now}
		l.addrs[ip] = w
	}
	w.fails++
}

// sweep drops ended windows, and when none had ended every window older
// than the median start (the limiter forgets the oldest half rather than
// grow).
func (l *loginLimiter) sweep(now time.Time) {
	for ip, w := range l.addrs {
		if now.Sub(w.start) >= l.window {
			delete(l.addrs, ip)
		}
	}
	if len(l.addrs) < maxTrackedAddresses {
		return
	}
	cut := now.Add(-l.window / 2)
	for ip, w := range l.addrs {
		if w.start.Before(cut) {
			delete(l.addrs, ip)
		}
	}
	if len(l.addrs) >= maxTrackedAddresses {
		clear(l.addrs)
	}
}

type failKind int

const (
	failMissing failKind = iota
	failWrong
	failThrottled
)

// failureCounts accumulates a window's authentication failures for the
// audit.
type failureCounts struct {
	mu    sync.Mutex
	start time.Time
	cur   FailureReport
}

// maxReportedAddresses bounds a report's ByAddress; the rest are counted
// under "other".
const maxReportedAddresses = 100

func newFailureCounts() *failureCounts {
	return &failureCounts{start: time.Now(), cur: FailureReport{ByAddress: map[string]int{}}}
}

func (f *failureCounts) add(ip string, k failKind) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch k {
	case failMissing:
		f.cur.Missing++
	case failWrong:
		f.cur.Wrong++
	case failThrottled:
		f.cur.Throttled++
	}
	if _, ok := f.cur.ByAddress[ip]; !ok && len(f.cur.ByAddress) >= maxReportedAddresses {
		ip = "other"
	}
	f.cur.ByAddress[ip]++
}

// pending reports whether failures wait for the next report.
func (f *failureCounts) pending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.Total() > 0
}

// take returns the window's counts ending at now and starts a new window.
func (f *failureCounts) take(now time.Time) FailureReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.cur
	out.Start, out.End = f.start, now
	out.ByAddress = maps.Clone(out.ByAddress)
	f.start, f.cur = now, FailureReport{ByAddress: map[string]int{}}
	return out
}

// noteFailure counts an authentication failure and makes sure a reporter
// runs: it is started by the first failure and ends after a window without
// any, so every process (control or data) reports without a goroutine of
// its own while nobody fails.
func (s *Server) noteFailure(ip string, k failKind) {
	s.sec.counts.add(ip, k)
	if s.sec.reporting.CompareAndSwap(false, true) {
		go s.reportFailures()
	}
}

// reportFailures writes the failure counts once per
// svc.auth.failureAuditPeriod: one audit entry (Security.RecordFailures;
// on a control node a RecordAuthFailures command) per window with failures,
// never one per request; without a recorder, one log line per window.
func (s *Server) reportFailures() {
	t := time.NewTicker(s.authCfg.FailureAuditPeriod)
	defer t.Stop()
	for now := range t.C {
		rep := s.sec.counts.take(now)
		if rep.Total() == 0 {
			s.sec.reporting.Store(false)
			// A failure counted after take that saw the reporter still
			// running: take it over, or it would wait for the next one.
			if s.sec.counts.pending() && s.sec.reporting.CompareAndSwap(false, true) {
				continue
			}
			return
		}
		if s.recordFailures == nil {
			s.log.Warn("authentication failures", "start", rep.Start, "end", rep.End, "missing", rep.Missing,
				"wrong", rep.Wrong, "throttled", rep.Throttled, "byAddress", rep.ByAddress)
			continue
		}
		if err := s.recordFailures(rep); err != nil {
			s.log.Warn("cannot record authentication failures in the audit", "error", err, "missing", rep.Missing,
				"wrong", rep.Wrong, "throttled", rep.Throttled, "byAddress", rep.ByAddress)
		}
	}
}

// ProposeAuthFailures is the RecordFailures of a control node: the leader
// proposes each window as one commands.RecordAuthFailures, whose audit entry
// is the record (author "strata", the node's own failures). A follower
// cannot propose: process/ sends its windows to the leader
// (ForwardAuthFailures) instead.
func ProposeAuthFailures(node *cluster.Node) func(FailureReport) error {
	return func(r FailureReport) error {
		cmd := commands.RecordAuthFailures{StartMs: r.Start.UnixMilli(), EndMs: r.End.UnixMilli(),
			Missing: r.Missing, Wrong: r.Wrong, Throttled: r.Throttled, ByAddress: r.ByAddress}
		_, err := node.Propose(cmd, commands.Audit{Author: "strata", Comment: "authentication failures on " + node.ID()}, 10*time.Second)
		return err
	}
}
