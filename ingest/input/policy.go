package input

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Policy is what ingestion may read on a user's behalf (issue 18; Druid's
// druid.ingestion.http.allowedProtocols and the EXTERNAL resource): the
// directories local input sources read under, and where http input sources
// may connect. Without it, a user who may ingest could read any file the
// server can (/etc/shadow, the Raft log) or make the server fetch from
// inside its network (cloud metadata at 169.254.169.254, internal APIs).
type Policy struct {
	// LocalBaseDirs are the directories local input sources may read under
	// (recursively). None: no local files at all.
	LocalBaseDirs []string
	// HTTPProtocols are the URI schemes http input sources may use.
	HTTPProtocols []string
	// HTTPAllowedHosts are hosts (as written in the URI, without the port)
	// that may be fetched even though they are, or resolve to, a loopback,
	// link-local, private or unspecified address.
	HTTPAllowedHosts []string
	// SelfAddrs are the process's own listeners (HTTP, TLS, Raft) as
	// host:port: Kafka consumers may not be pointed at them.
	SelfAddrs []string

	clientOnce sync.Once
	hc         *http.Client
}

// active is the process's policy, set at start from its properties; nil
// (library use: tests, `strata segment build`) reads anything.
var active atomic.Pointer[Policy]

// SetPolicy makes p the policy of every input source parsed from now on; nil
// lifts every restriction.
func SetPolicy(p *Policy) { active.Store(p) }

// ActivePolicy returns the policy set by SetPolicy, or nil.
func ActivePolicy() *Policy { return active.Load() }

// ErrNotAllowed is wrapped by every refusal of the policy.
var ErrNotAllowed = errors.New("not allowed by the ingestion input policy")

func policyErrorf(format string, a ...any) error {
	return &Error{Msg: fmt.Sprintf(format, a...), refused: true}
}

// Check refuses a source that reads what p does not allow, before any of it
// is read: local files and base directories outside LocalBaseDirs (after
// resolving symlinks and ..), http URIs of another protocol or whose host
// is, or resolves now to, a forbidden address. The read itself checks again
// (an http connection at connect time, so a name that resolves differently
// later or a redirect cannot get through); Check is for an early 400.
func (p *Policy) Check(ctx context.Context, src Source) error {
	if p == nil {
		return nil
	}
	switch s := src.(type) {
	case *LocalSource:
		for _, f := range s.Files {
			if _, _, err := p.localPath(f); err != nil {
				return err
			}
		}
		if s.BaseDir != "" {
			if _, _, err := p.localPath(s.BaseDir); err != nil {
				return err
			}
		}
	case *HTTPSource:
		for _, u := range s.URIs {
			if err := p.checkURI(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// localPath resolves name (relative to the working directory, symlinks and
// .. resolved) and returns the allowed directory it lies under and its path
// relative to that directory. A name outside every allowed directory is
// refused without touching the file, so the answer does not reveal whether
// it exists; one inside is then resolved and checked again, so a symlink
// pointing out is refused.
func (p *Policy) localPath(name string) (root, rel string, err error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", "", policyErrorf("local inputSource: %s: %v", name, err)
	}
	refuse := func() error {
		return policyErrorf("local inputSource: %s is not under an allowed directory (svc.ingestion.local.allowedBaseDirs: %s)",
			name, p.describeDirs())
	}
	if _, _, ok := p.under(abs); !ok {
		return "", "", refuse()
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", &Error{Msg: fmt.Sprintf("local inputSource: %v", err)}
	}
	root, rel, ok := p.under(real)
	if !ok {
		return "", "", refuse()
	}
	return root, rel, nil
}

// under returns the allowed directory that holds path, and path relative
// to it. Each directory is compared as written (made absolute) and with its
// symlinks resolved, so that both an unresolved path (the check before
// touching the file) and a resolved one match.
func (p *Policy) under(path string) (string, string, bool) {
	for _, d := range p.LocalBaseDirs {
		dir, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		cands := []string{dir}
		if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
			cands = append(cands, r)
		}
		for _, c := range cands {
			if rel, ok := within(c, path); ok {
				return c, rel, true
			}
		}
	}
	return "", "", false
}

// within returns path relative to dir when path is dir or lies under it;
// both are absolute and clean.
func within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func (p *Policy) describeDirs() string {
	if len(p.LocalBaseDirs) == 0 {
		return "none"
	}
	return strings.Join(p.LocalBaseDirs, ", ")
}

// openLocal opens a file that localPath allowed through an os.Root on its
// directory, so that a symlink swapped in after the check still cannot lead
// out of it.
func (p *Policy) openLocal(name string) (*os.File, error) {
	root, rel, err := p.localPath(name)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Open(rel)
}

func (p *Policy) protocolAllowed(scheme string) bool {
	return slices.ContainsFunc(p.HTTPProtocols, func(s string) bool { return strings.EqualFold(s, scheme) })
}

func (p *Policy) hostAllowed(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return slices.ContainsFunc(p.HTTPAllowedHosts, func(h string) bool {
		return strings.EqualFold(strings.TrimSuffix(strings.Trim(h, "[]"), "."), host)
	})
}

// checkURI checks the protocol and, unless the host is allowed by name,
// every address it is or resolves to now.
func (p *Policy) checkURI(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errorf("http inputSource: invalid URI %q", raw)
	}
	if !p.protocolAllowed(u.Scheme) {
		return policyErrorf("http inputSource: protocol %q of %s is not allowed (svc.ingestion.http.allowedProtocols: %s)",
			u.Scheme, raw, strings.Join(p.HTTPProtocols, ", "))
	}
	host := u.Hostname()
	if p.hostAllowed(host) {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(host, a)
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil // the connection fails or is checked when it is made
	}
	for _, a := range addrs {
		if err := p.checkAddr(host, a); err != nil {
			return err
		}
	}
	return nil
}

func (p *Policy) checkAddr(host string, a netip.Addr) error {
	if why := forbiddenAddr(a); why != "" {
		return policyErrorf("http inputSource: %s is %s (%s); list the host in svc.ingestion.http.allowedHosts to allow it",
			host, why, a.Unmap())
	}
	return nil
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	ipv4Cgn = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT: inside someone's network too
)

// forbiddenAddr says why an http input source may not connect to a, or ""
// when it may. IPv4-mapped, NAT64 and 6to4 IPv6 addresses are judged by the
// IPv4 address they carry.
func forbiddenAddr(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	} else if a.Is6() && sixTo4.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a link-local address"
	case a.IsPrivate(), ipv4Cgn.Contains(a):
		return "a private address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return ""
}

// httpClient returns the HTTP client http input sources use under p: every
// connection, including those of redirects, is checked against the address
// actually dialled, after name resolution (a net.Dialer Control function), so
// a name resolving to 127.0.0.1 or a redirect to an internal address is
// refused. No proxy is used: a proxy would make the connection the check
// sees a different one from the request's target.
func (p *Policy) httpClient() *http.Client {
	p.clientOnce.Do(func() { p.hc = p.newClient() })
	return p.hc
}

func (p *Policy) newClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return policyErrorf("http inputSource: cannot check address %q", address)
			}
			if why := forbiddenAddr(ap.Addr()); why != "" {
				return policyErrorf("http inputSource: connecting to %s, %s, is not allowed; list the host in svc.ingestion.http.allowedHosts to allow it",
					ap.Addr().Unmap(), why)
			}
			return nil
		}}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err == nil && p.hostAllowed(host) {
				return dialer.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !p.protocolAllowed(req.URL.Scheme) {
			return policyErrorf("http inputSource: redirect to %s: protocol %q is not allowed", req.URL.Redacted(), req.URL.Scheme)
		}
		return nil
	}}
}
