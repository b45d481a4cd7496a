package server

import (
	"bytes"
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
)

// Route sends requests whose path starts with Prefix to one of Backends. For
// control-plane prefixes (Leader true) the router follows the leader: it sends to
// the last known leader and, on a 307 from a follower, re-sends to the node named
// in Location, so clients of the router do not see redirects.
type Route struct {
	Prefix   string
	Backends []string // base URLs, e.g. http://127.0.0.1:8081
	Leader   bool
}

// Proxy is the router role: a reverse proxy by path prefix.
type Proxy struct {
	routes  []Route
	client  *http.Client
	maxBody int64

	mu     sync.Mutex
	leader map[string]string // prefix → last known leader base URL
	next   map[string]int    // prefix → round-robin position
}

// NewProxy returns a router over the given routes (longest prefix wins).
func NewProxy(routes []Route, maxBody int64) *Proxy {
	return &Proxy{
		routes:  routes,
		maxBody: maxBody,
		client: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{
				Proxy:               nil,
				DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
				MaxIdleConnsPerHost: 256,
				IdleConnTimeout:     90 * time.Second,
			},
		},
		leader: map[string]string{},
		next:   map[string]int{},
	}
}

// Mount adds the proxied prefixes to a router.
func (p *Proxy) Mount(r *mux.Router) {
	for _, rt := range p.routes {
		rt := rt
		r.PathPrefix(rt.Prefix).Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			p.serve(w, req, rt)
		}))
	}
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, rt Route) {
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
	target := p.pick(rt)
	tried := map[string]bool{}
	var lastErr error
	for attempt := 0; attempt < 2*len(rt.Backends)+2; attempt++ {
		tried[target] = true
		resp, err := p.forward(r, body, target)
		if err != nil {
			lastErr = err
			target = p.another(rt, tried)
			if target == "" {
				break
			}
			continue
		}
		if rt.Leader && resp.StatusCode == http.StatusTemporaryRedirect {
			if base := baseOf(resp.Header.Get("Location")); base != "" && contains(rt.Backends, base) && !tried[base] {
				resp.Body.Close()
				p.setLeader(rt.Prefix, base)
				target = base
				continue
			}
		}
		if rt.Leader && resp.StatusCode < 300 {
			p.setLeader(rt.Prefix, target)
		}
		copyResponse(w, resp)
		return
	}
	msg := "no backend answered"
	if lastErr != nil {
		msg += ": " + lastErr.Error()
	}
	writeError(w, http.StatusServiceUnavailable, msg+"; retry in a moment")
}

func (p *Proxy) forward(r *http.Request, body []byte, base string) (*http.Response, error) {
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
