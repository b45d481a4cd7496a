// Package escalator holds the cluster's internal credentials, named after
// Druid's druid.escalator.* settings: the user and password that Strata
// processes send on their calls to each other's /svc-internal/ endpoints,
// and that those endpoints require once a password is configured. Without a
// password the internal API is open to anyone who can reach the ports (the
// README says so); the security work will build its authenticator on these
// same settings.
package escalator

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"strata/config"
	"strata/props"
)

// Property names and the default user.
const (
	PropUsername    = "svc.escalator.internalClientUsername"
	PropPassword    = "svc.escalator.internalClientPassword"
	DefaultUsername = "svc_system"
)

// InternalPrefix starts the path of every internal endpoint;
// DruidInternalPrefix is its alias under Druid's name (server.DruidPath),
// guarded alike.
const (
	InternalPrefix      = "/svc-internal/"
	DruidInternalPrefix = "/druid-internal/"
)

// Credentials are the internal client's user and password.
type Credentials struct {
	Username string
	Password string
}

// FromProps reads the credentials from properties.
func FromProps(p *props.Properties) Credentials {
	e := config.ParseEscalator(p)
	return Credentials{Username: e.Username, Password: e.Password}
}

// Enabled reports whether a password is configured: only then are internal
// requests checked and credentials sent.
func (c Credentials) Enabled() bool { return c.Password != "" }

// Internal reports whether r is for an internal endpoint.
func Internal(r *http.Request) bool { return InternalPath(r.URL.Path) }

// InternalPath reports whether p is an internal endpoint's path, under
// either prefix.
func InternalPath(p string) bool {
	return strings.HasPrefix(p, InternalPrefix) || strings.HasPrefix(p, DruidInternalPrefix)
}

// Authorized reports whether r carries these credentials (HTTP basic
// authentication), comparing in constant time.
func (c Credentials) Authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u := subtle.ConstantTimeCompare([]byte(user), []byte(c.Username))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(c.Password))
	return u&p == 1
}

// Client returns base, or when a password is configured a copy of base (a
// new client for nil) that sends the credentials on every request to an
// internal endpoint, redirects to the leader included. Other requests go out
// unchanged, so the password never reaches anything but internal endpoints.
func (c Credentials) Client(base *http.Client) *http.Client {
	if !c.Enabled() {
		return base
	}
	var out http.Client
	if base != nil {
		out = *base
	}
	rt := out.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out.Transport = &transport{base: rt, c: c}
	return &out
}

// ServiceClient is Client for a client that calls Strata's own processes
// only (a task's calls to the control nodes and brokers): it sends the
// credentials on every request, public endpoints included, as Druid's
// escalated client does. A task listing the segments it appends to
// (/svc/coordinator/v1/metadata/...) is the cluster acting, not a user, and
// with security on the plain Client's call is refused (401). Never use it for
// a client that may reach anything else (input sources, other services).
func (c Credentials) ServiceClient(base *http.Client) *http.Client {
	out := c.Client(base)
	if t, ok := out.Transport.(*transport); ok {
		t.all = true
	}
	return out
}

type transport struct {
	base http.RoundTripper
	c    Credentials
	all  bool // every request, not only internal endpoints' (ServiceClient)
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if (t.all || Internal(r)) && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context()) // a RoundTripper must not change the caller's request
		r.SetBasicAuth(t.c.Username, t.c.Password)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections passes on to the wrapped transport (the historical
// closes its client's idle connections when it stops).
func (t *transport) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
