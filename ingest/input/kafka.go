package input

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Kafka consumer properties that make a client read a local file: allowed
// only when the file is under an allowed directory (LocalBaseDirs), so a
// supervisor spec cannot make a process open its own key material or
// /etc/shadow as a key store. Strata's Kafka client uses none of them
// today; they are checked so that a spec that would read a file on a
// Druid-compatible client is refused here too, before it is stored.
var kafkaFileProperties = []string{
	"ssl.keystore.location",
	"ssl.truststore.location",
	"sasl.kerberos.keytab", // librdkafka's name for the keytab
	"sasl.oauthbearer.assertion.private.key.file",
	"sasl.oauthbearer.assertion.template.file",
	"sasl.oauthbearer.assertion.file",
	"ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.crl.location", // librdkafka
	"ssl_ca_location", // kafka-python spellings are not read, but are not let through either
}

// Kafka consumer properties refused outright: they run a command, load
// classes or resolve references to files or the environment
// (config providers: ${file:/path:key}), or fetch URLs that may be file:.
var kafkaForbiddenProperties = []string{
	"sasl.kerberos.kinit.cmd",
	"config.providers",
	"sasl.login.class", "sasl.login.callback.handler.class", "sasl.client.callback.handler.class",
	"ssl.engine.factory.class", "interceptor.classes", "metric.reporters",
	"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.jwks.endpoint.url",
}

// configReference matches a Kafka config provider reference: ${provider:...}.
var configReference = regexp.MustCompile(`\$\{[A-Za-z0-9_.-]+:`)

// jaasPath matches a file option of a JAAS login module (keyTab="...",
// ticketCache=..., and any option naming a file or path).
var jaasPath = regexp.MustCompile(`(?i)\b(keyTab|ticketCache|[A-Za-z]*(?:file|path|location)[A-Za-z]*)\s*=\s*("([^"]*)"|'([^']*)'|[^\s;]+)`)

// CheckKafka refuses Kafka consumer properties that would make the process
// read local files outside the allowed directories, run commands, or
// connect its consumers to Strata's own listeners (SelfAddrs) instead of a
// Kafka broker. A broker on loopback stays allowed. The error names the
// property.
func (p *Policy) CheckKafka(ctx context.Context, props map[string]any) error {
	if p == nil {
		return nil
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fmt.Sprint(props[k])
		if s, ok := props[k].(string); ok {
			v = s
		}
		lk := strings.ToLower(k)
		switch {
		case slices.Contains(kafkaForbiddenProperties, lk) || strings.HasPrefix(lk, "config.providers."):
			return policyErrorf("consumerProperties.%s is not allowed: it makes the consumer run a command, load code or read local files", k)
		case configReference.MatchString(v):
			return policyErrorf("consumerProperties.%s is not allowed: config provider references (${...:...}) read files or the environment", k)
		case slices.Contains(kafkaFileProperties, lk):
			if err := p.kafkaFile(k, v); err != nil {
				return err
			}
		case lk == "sasl.jaas.config":
			for _, m := range jaasPath.FindAllStringSubmatch(v, -1) {
				path := m[3] + m[4]
				if m[3] == "" && m[4] == "" {
					path = strings.Trim(m[2], `"'`)
				}
				if err := p.kafkaFile(k+" ("+m[1]+")", path); err != nil {
					return err
				}
			}
		case lk == "bootstrap.servers":
			if err := p.checkBootstrap(ctx, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Policy) kafkaFile(prop, path string) error {
	if strings.TrimSpace(path) == "" {
		return nil
	}
	if _, _, err := p.localPath(path); err != nil {
		return policyErrorf("consumerProperties.%s: %s is not under an allowed directory (svc.ingestion.local.allowedBaseDirs: %s)",
			prop, path, p.describeDirs())
	}
	return nil
}

// checkBootstrap refuses a bootstrap server that is one of Strata's own
// listeners: a port of SelfAddrs on an address of this machine.
func (p *Policy) checkBootstrap(ctx context.Context, prop, servers string) error {
	ports := map[string]bool{}
	for _, a := range p.SelfAddrs {
		if _, port, err := net.SplitHostPort(a); err == nil {
			ports[port] = true
		}
	}
	if len(ports) == 0 {
		return nil
	}
	local := localAddrs()
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		// Kafka clients accept PLAINTEXT://host:port and SSL://host:port.
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		host, port, err := net.SplitHostPort(s)
		if err != nil || !ports[port] {
			continue
		}
		if p.isLocalHost(ctx, host, local) {
			return policyErrorf("consumerProperties.%s: %s is one of Strata's own listeners, not a Kafka broker", prop, s)
		}
	}
	return nil
}

// isLocalHost reports whether host is, or resolves to, an address of this
// machine (loopback, unspecified or an interface's).
func (p *Policy) isLocalHost(ctx context.Context, host string, local []netip.Addr) bool {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		addrs, _ = net.DefaultResolver.LookupNetIP(lctx, "ip", host)
		if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
			addrs = append(addrs, netip.MustParseAddr("127.0.0.1"))
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsLoopback() || a.IsUnspecified() || slices.Contains(local, a) {
			return true
		}
	}
	return false
}

func localAddrs() []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range ifs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, pfx.Addr().Unmap())
		}
	}
	return out
}
