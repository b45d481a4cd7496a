package config

import (
	"fmt"
	"net"
	"strings"
)

// CheckExposure refuses to serve an open API beyond this machine: a process
// without an authenticator (svc.auth.authenticatorChain empty) whose HTTP
// address (svc.http.address, which the TLS port shares) is not loopback
// needs svc.auth.allowInsecure=true. Anyone who reaches an open port can
// change configs, drop data and read every datasource; on loopback only
// local users can. An address with no host listens on every interface.
func CheckExposure(src Source) error {
	a, err := ParseAuth(src)
	if err != nil {
		return err
	}
	if len(a.AuthenticatorChain) > 0 || a.AllowInsecure {
		return nil
	}
	r := &reader{src: src}
	addr := r.str("svc.http.address")
	if Loopback(addr) {
		return nil
	}
	return fmt.Errorf("svc.http.address=%s is not a loopback address and no authenticator is configured: anyone who reaches the port "+
		"could do anything. Turn security on (svc.auth.authenticatorChain=[\"basic\"], see the README's Security section), bind 127.0.0.1, "+
		"or set svc.auth.allowInsecure=true to serve an open API anyway", addr)
}

// Loopback reports whether a listen address HOST:PORT (or a bare host)
// binds only loopback: localhost, or a literal 127.0.0.0/8 or ::1 address.
// A name other than localhost is not trusted to resolve to loopback, and an
// empty host means every interface.
func Loopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
