package escalator

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/props"
	"strata/tlsconf"
)

// NodeClient is the one way Strata's processes build the HTTP client they
// call each other with: TLS as svc.client.https.* configures it (servers
// verified against the trust store, the client certificate presented) and
// the internal credentials attached to /svc-internal/ calls. Clients of the
// same settings share one transport and so one connection pool. Settings
// that do not load (process.StartServer refuses to start on them first) make
// every request fail with the reason.
func NodeClient(p *props.Properties, timeout time.Duration) *http.Client {
	var rt http.RoundTripper
	if t, err := NodeTransport(p); err != nil {
		rt = failing{err}
	} else {
		rt = t
	}
	return FromProps(p).Client(&http.Client{Timeout: timeout, Transport: rt})
}

// NodeServiceClient is NodeClient with the internal credentials on every
// request (Credentials.ServiceClient): for clients that call only Strata's
// own processes, on their public endpoints too.
func NodeServiceClient(p *props.Properties, timeout time.Duration) *http.Client {
	var rt http.RoundTripper
	if t, err := NodeTransport(p); err != nil {
		rt = failing{err}
	} else {
		rt = t
	}
	return FromProps(p).ServiceClient(&http.Client{Timeout: timeout, Transport: rt})
}

// NodeTLS returns the TLS configuration of node-to-node calls.
func NodeTLS(p *props.Properties) (*tls.Config, error) {
	t, err := config.ParseTLS(p)
	if err != nil {
		return nil, err
	}
	return sharedTLS(t)
}

// NodeTransport returns the shared transport of p's TLS settings; callers
// that need their own pool settings Clone it.
func NodeTransport(p *props.Properties) (*http.Transport, error) {
	t, err := config.ParseTLS(p)
	if err != nil {
		return nil, err
	}
	transports.Lock()
	defer transports.Unlock()
	if tr, ok := transports.m[clientKey(t)]; ok {
		return tr, nil
	}
	cfg, err := sharedTLS(t)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	// The dial timeout of http.DefaultTransport is 30 s: a dead data server
	// would hold a scatter/gather that long.
	tr.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 64
	transports.m[clientKey(t)] = tr
	return tr, nil
}

// clientKey is what the client side of t depends on.
type clientKeyT struct{ trust, cert, key string }

func clientKey(t config.TLS) clientKeyT {
	return clientKeyT{t.TrustStoreFile, t.ClientCertFile, t.ClientKeyFile}
}

var transports = struct {
	sync.Mutex
	m map[clientKeyT]*http.Transport
}{m: map[clientKeyT]*http.Transport{}}

var tlsConfigs = struct {
	sync.Mutex
	m map[clientKeyT]*tls.Config
}{m: map[clientKeyT]*tls.Config{}}

func sharedTLS(t config.TLS) (*tls.Config, error) {
	tlsConfigs.Lock()
	defer tlsConfigs.Unlock()
	if c, ok := tlsConfigs.m[clientKey(t)]; ok {
		return c, nil
	}
	c, err := tlsconf.Client(t, hclog.Default().Named("tls-client"))
	if err != nil {
		return nil, err
	}
	tlsConfigs.m[clientKey(t)] = c
	return c, nil
}

// failing is the transport of settings that did not load.
type failing struct{ err error }

func (f failing) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	return nil, f.err
}
