package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"strata/escalator"
)

// Route sends requests whose path starts with Prefix to one of Backends. For
// control-plane prefixes (Leader true) the router follows the leader: it sends to
// the last known leader and, on a 307 from a follower, re-sends to the node named
// in Location, so clients of the router do not see redirects.
type Route struct {
	Prefix   string
	Backends []string // base URLs, e.g. http://127.0.0.1:8081
	// Discover, when Backends is empty, lists the backends at each request
	// (discovery's live brokers, say): requests are balanced round-robin
	// over them, and one that refuses the connection is skipped.
	Discover func() []string
	// Refresh, with Discover, brings discovery's list up to date now (an
	// announcement to the leader, whose reply is the membership) unless it
	// was updated after the given time. The router calls it when no listed
	// backend could take a request: a broker restarted since the last
	// heartbeat is then found at once instead of a heartbeat later.
	Refresh func(ctx context.Context, after time.Time)
	Leader  bool
}

// NotExecutedHeader marks a 503 a backend answers before it starts on the
// request (a broker shutting down): the query did not run, so the router
// sends it to another backend. Other 503s pass on to the client.
const NotExecutedHeader = "X-Svc-Not-Executed"

// Proxy is the router role: a reverse proxy by path prefix.
type Proxy struct {
	// LeaderWait bounds how long a request to a leader route keeps trying
	// while no control node answers as leader (an election); then 503.
	LeaderWait time.Duration
	// BackendWait bounds how long a request to a discovered data-plane
	// route (brokers) keeps trying, re-reading discovery between rounds,
	// while no listed backend takes it (brokers restarting); then 503.
	BackendWait time.Duration

	routes  []Route
	client  *http.Client
	fresh   *http.Client // no connection reuse: for changes sent to the control plane
	maxBody int64

	mu     sync.Mutex
	leader map[string]string // prefix → last known leader base URL
	next   map[string]int    // prefix → round-robin position
}

// NewProxy returns a router over the given routes (longest prefix wins).
func NewProxy(routes []Route, maxBody int64) *Proxy {
	return &Proxy{
		LeaderWait:  5 * time.Second,
		BackendWait: 2 * time.Second,
		routes:      routes,
		maxBody:     maxBody,
		client:      newProxyClient(false),
		fresh:       newProxyClient(true),
		leader:      map[string]string{},
		next:        map[string]int{},
	}
}

// Mount adds the proxied prefixes to a router, each also under Druid's
// name (DruidPath): /druid/v2/ goes where /svc/v2/ goes, by the same Route,
// so both share its known leader and round-robin position. The path is
// forwarded as sent; the backends answer Druid's paths too.
func (p *Proxy) Mount(r *mux.Router) {
	for _, rt := range p.routes {
		rt := rt
		h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			p.serve(w, req, rt)
		})
		r.PathPrefix(rt.Prefix).Handler(h)
		if d, ok := DruidPath(rt.Prefix); ok {
			r.PathPrefix(d).Handler(h)
		}
	}
	// Calls between processes go to the process meant, never through a
	// router, which is what clients reach: forwarding them would open the
	// internal API (unguarded without svc.escalator.internalClientPassword)
	// at the public address. Druid's router does not forward them either.
	// A role of the router's own process still answers its internal routes,
	// registered before these.
	refuse := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s is an internal endpoint, which routers do not forward: processes call each other directly", req.URL.Path))
	})
	r.PathPrefix(escalator.InternalPrefix).Handler(refuse)
	r.PathPrefix(escalator.DruidInternalPrefix).Handler(refuse)
}

// forwardedHeader marks a request a router forwarded. Only a path the
// receiving process's own route table lacks reaches its proxy, so a marked
// request there means the router forwarded to itself (a control node with
// the router role, asked for a path no route has): it is answered 404
// rather than sent round again without end.
const forwardedHeader = "X-Svc-Forwarded"

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, rt Route) {
	if r.Header.Get(forwardedHeader) != "" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s (see the README for the API)", r.Method, r.URL.Path))
		return
	}
	discovered := len(rt.Backends) == 0 && rt.Discover != nil
	if discovered {
		rt.Backends = rt.Discover() // rt is this request's copy
		if len(rt.Backends) == 0 && rt.Refresh != nil {
			rt.Refresh(r.Context(), time.Now())
			rt.Backends = rt.Discover()
		}
	}
	if len(rt.Backends) == 0 {
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("no %s service is configured behind this router", strings.Trim(rt.Prefix, "/")))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the limit of %d bytes (svc.server.http.maxRequestBytes)", p.maxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "cannot read request body: "+err.Error())
		return
	}
	// A leader route keeps trying through an election: a follower may still
	// name the dead leader in its 307, or no node may answer for a moment.
	// A discovered data-plane route keeps trying while brokers restart: it
	// re-reads discovery and tries every listed broker again.
	wait := p.LeaderWait
	if !rt.Leader {
		wait = p.BackendWait
	}
	deadline := time.Now().Add(wait)
	roundStart := time.Now()
	rounds := 0
	target := p.pick(rt)
	tried := map[string]bool{}
	var lastErr error
	for {
		if target == "" || tried[target] {
			if !rt.Leader && !discovered || time.Now().After(deadline) {
				break
			}
			rounds++
			if rt.Leader || rounds > 1 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(leaderRetryPause):
				}
			}
			if discovered {
				if rt.Refresh != nil {
					rt.Refresh(r.Context(), roundStart)
				}
				roundStart = time.Now()
				if rt.Backends = rt.Discover(); len(rt.Backends) == 0 {
					target = ""
					continue
				}
			}
			tried = map[string]bool{}
			target = p.pick(rt)
		}
		tried[target] = true
		resp, err := p.forward(r, rt, body, target)
		if err != nil {
			lastErr = err
			p.forgetLeader(rt.Prefix, target)
			if rt.Leader && !safeToResend(r.Method, err) {
				writeError(w, http.StatusBadGateway, fmt.Sprintf("%s failed during the request (%v); the change may or may not have been applied: check before retrying", target, err))
				return
			}
			target = p.another(rt, tried)
			continue
		}
		if rt.Leader && resp.StatusCode == http.StatusTemporaryRedirect {
			// Never hand a redirect to the router's clients: follow it to a
			// known node, or try the others.
			resp.Body.Close()
			base := baseOf(resp.Header.Get("Location"))
			if base != "" && contains(rt.Backends, base) && !tried[base] {
				p.setLeader(rt.Prefix, base)
				target = base
				continue
			}
			lastErr = fmt.Errorf("%s redirects to %s, which did not answer", target, base)
			target = p.another(rt, tried)
			continue
		}
		if !rt.Leader && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(NotExecutedHeader) != "" {
			// The backend did not start on the query: another one may.
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			lastErr = fmt.Errorf("%s answered 503 before running the request (%s)", target, strings.TrimSpace(string(b)))
			target = p.another(rt, tried)
			continue
		}
		if rt.Leader && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(RetryHeader) != "" && time.Now().Before(deadline) {
			// No leader yet, or one still starting up: wait for the election.
			// Other 503s are answers (an unhealthy supervisor) and pass on.
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			msg := strings.TrimSpace(string(b))
			var eb ErrorBody
			if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
				msg = eb.Error
			}
			lastErr = fmt.Errorf("%s answered 503 (%s)", target, msg)
			p.forgetLeader(rt.Prefix, target)
			target = p.another(rt, tried)
			continue
		}
		if rt.Leader && resp.StatusCode < 300 {
			p.setLeader(rt.Prefix, target)
		}
		copyResponse(w, resp)
		return
	}
	msg := "no backend answered"
	if rt.Leader {
		msg = "no leader answered"
	}
	if lastErr != nil {
		msg += ": " + lastErr.Error()
	}
	writeError(w, http.StatusServiceUnavailable, msg+"; retry in a moment")
}

// leaderRetryPause is the wait between rounds over the control nodes while a
// leader is being elected (elections take well under a second).
const leaderRetryPause = 100 * time.Millisecond

// safeToResend says whether a failed control-plane request may go to another
// node: reads always, changes only when the connection was never made (a
// leader that died mid-request may have applied the change already). Data-plane
// routes carry queries, which are always safe to resend.
func safeToResend(method string, err error) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// UseTLS makes the router verify its backends' certificates with cfg (and
// present cfg's client certificate): their https URLs then work.
func (p *Proxy) UseTLS(cfg *tls.Config) {
	for _, c := range []*http.Client{p.client, p.fresh} {
		c.Transport.(*http.Transport).TLSClientConfig = cfg
	}
}

func newProxyClient(fresh bool) *http.Client {
	return &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
			DisableKeepAlives:   fresh,
		},
	}
}

func (p *Proxy) forward(r *http.Request, rt Route, body []byte, base string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		req.Header[k] = vs
	}
	if ip := clientIP(r); ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	req.Header.Set(forwardedHeader, "1")
	if rt.Leader && !safeToResend(r.Method, nil) {
		// A change goes over a new connection: a pooled one may have been
		// closed by a leader that just stopped, and a write that fails on
		// it cannot be told apart from one the leader crashed while
		// applying. A refused connection is unambiguous, so it is retried.
		return p.fresh.Do(req)
	}
	return p.client.Do(req)
}

var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "X-Forwarded-For": true,
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if hopByHop[k] {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *Proxy) pick(rt Route) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rt.Leader {
		if l, ok := p.leader[rt.Prefix]; ok {
			return l
		}
	}
	i := p.next[rt.Prefix] % len(rt.Backends)
	p.next[rt.Prefix] = i + 1
	return rt.Backends[i]
}

func (p *Proxy) another(rt Route, tried map[string]bool) string {
	for _, b := range rt.Backends {
		if !tried[b] {
			return b
		}
	}
	return ""
}

func (p *Proxy) forgetLeader(prefix, base string) {
	p.mu.Lock()
	if p.leader[prefix] == base {
		delete(p.leader, prefix)
	}
	p.mu.Unlock()
}

func (p *Proxy) setLeader(prefix, base string) {
	p.mu.Lock()
	p.leader[prefix] = base
	p.mu.Unlock()
}

func baseOf(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
