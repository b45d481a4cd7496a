// Package tlsconf builds the TLS configuration of Strata's HTTPS listeners
// and of the calls its processes make to each other, from config.TLS: a
// certificate reloaded from its PEM files when they change or on request
// (SIGHUP), verification of servers always on against a CA bundle, and
// optional client certificates both ways.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
)

// Reloader holds a certificate read from a PEM certificate file and key
// file. Each handshake checks whether either file changed (size or
// modification time) and reads the pair again if so; a pair that does not
// load (a file half-written) leaves the previous certificate in use and is
// logged, so a rotation never takes the listener down.
type Reloader struct {
	certFile, keyFile string
	logger            hclog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]fileStamp
	lastErr string
}

type fileStamp struct {
	size int64
	mod  time.Time
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{size: -1}
	}
	return fileStamp{size: fi.Size(), mod: fi.ModTime()}
}

// NewReloader loads the pair once; an error names the files.
func NewReloader(certFile, keyFile string, logger hclog.Logger) (*Reloader, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	r := &Reloader{certFile: certFile, keyFile: keyFile, logger: logger}
	if err := r.Reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload reads the pair now; on failure the previous certificate stays.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked()
}

func (r *Reloader) reloadLocked() error {
	stamp := [2]fileStamp{stampOf(r.certFile), stampOf(r.keyFile)}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate %s with key %s: %w", r.certFile, r.keyFile, err)
	}
	if cert.Leaf != nil {
		r.logger.Info("TLS certificate loaded", "file", r.certFile, "subject", cert.Leaf.Subject.String(),
			"serial", cert.Leaf.SerialNumber.String(), "notAfter", cert.Leaf.NotAfter)
	}
	r.cert, r.stamp, r.lastErr = &cert, stamp, ""
	return nil
}

// current returns the certificate, first reloading it if a file changed.
func (r *Reloader) current() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	if [2]fileStamp{stampOf(r.certFile), stampOf(r.keyFile)} != r.stamp {
		if err := r.reloadLocked(); err != nil && err.Error() != r.lastErr {
			// Said once per failure, not at every handshake.
			r.lastErr = err.Error()
			r.logger.Error("TLS certificate changed but does not load; serving the previous one", "error", err)
		}
	}
	return r.cert
}

// GetCertificate is tls.Config.GetCertificate.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.current(), nil
}

// GetClientCertificate is tls.Config.GetClientCertificate.
func (r *Reloader) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return r.current(), nil
}

// LoadCAs reads a PEM CA bundle.
func LoadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("trust store %s holds no PEM certificate", path)
	}
	return pool, nil
}

// Server returns the listeners' TLS configuration and the reloader of their
// certificate (nil, nil, nil when TLS is off).
func Server(t config.TLS, logger hclog.Logger) (*tls.Config, *Reloader, error) {
	if !t.Enabled {
		return nil, nil, nil
	}
	r, err := NewReloader(t.CertFile, t.KeyFile, logger)
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if t.RequireClientCert {
		if cfg.ClientCAs, err = LoadCAs(t.ClientCAFile); err != nil {
			return nil, nil, fmt.Errorf("svc.server.https.trustStoreFile: %w", err)
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, r, nil
}

// Client returns the TLS configuration of node-to-node calls: servers
// verified against t.TrustStoreFile (the system's roots when empty), the
// client certificate presented when configured. Verification is never
// turned off.
func Client(t config.TLS, logger hclog.Logger) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.TrustStoreFile != "" {
		pool, err := LoadCAs(t.TrustStoreFile)
		if err != nil {
			return nil, fmt.Errorf("svc.client.https.trustStoreFile: %w", err)
		}
		cfg.RootCAs = pool
	}
	if t.ClientCertFile != "" {
		r, err := NewReloader(t.ClientCertFile, t.ClientKeyFile, logger)
		if err != nil {
			return nil, fmt.Errorf("svc.client.https.certFile: %w", err)
		}
		cfg.GetClientCertificate = r.GetClientCertificate
	}
	return cfg, nil
}

// Raft returns the TLS configurations of the Raft transport when TLS is on
// (nil, nil, nil when off). Raft's port takes appends to the replicated
// log, so both ends authenticate: the listener presents the node's
// certificate (svc.server.https.*) and requires a client certificate
// verified against svc.server.https.trustStoreFile; a dialling node
// verifies the peer against svc.client.https.trustStoreFile and presents
// svc.client.https.certFile, or the node's certificate when none is set
// (it must then allow client authentication, as `strata certs` makes it).
// Both trust stores default to the system's roots.
func Raft(t config.TLS, logger hclog.Logger) (server, client *tls.Config, err error) {
	if !t.Enabled {
		return nil, nil, nil
	}
	node, err := NewReloader(t.CertFile, t.KeyFile, logger)
	if err != nil {
		return nil, nil, err
	}
	clientCAs, roots, err := pools(t.ClientCAFile, t.TrustStoreFile)
	if err != nil {
		return nil, nil, err
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: node.GetCertificate,
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs}
	client = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots, GetClientCertificate: node.GetClientCertificate}
	if t.ClientCertFile != "" {
		r, err := NewReloader(t.ClientCertFile, t.ClientKeyFile, logger)
		if err != nil {
			return nil, nil, fmt.Errorf("svc.client.https.certFile: %w", err)
		}
		client.GetClientCertificate = r.GetClientCertificate
	}
	return server, client, nil
}

// pools loads the given CA bundles; an empty path is the system's roots.
func pools(paths ...string) (a, b *x509.CertPool, err error) {
	out := make([]*x509.CertPool, len(paths))
	for i, p := range paths {
		if p == "" {
			if out[i], err = x509.SystemCertPool(); err != nil {
				return nil, nil, fmt.Errorf("the system's CA roots: %w", err)
			}
			continue
		}
		if out[i], err = LoadCAs(p); err != nil {
			return nil, nil, err
		}
	}
	return out[0], out[1], nil
}
