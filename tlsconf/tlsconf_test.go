package tlsconf_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"strata/config"
	"strata/escalator"
	"strata/internal/eventually"
	"strata/internal/testcerts"
	"strata/props"
	"strata/tlsconf"
)

// server is an HTTPS server, as process listens: a tls.Listener over TCP.
type server struct{ URL string }

// serve starts an HTTPS server with the listener settings of t.
func serve(tt *testing.T, t config.TLS) (*server, *tlsconf.Reloader) {
	tt.Helper()
	cfg, r, err := tlsconf.Server(t, nil)
	if err != nil {
		tt.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tt.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }),
		ErrorLog: log.New(io.Discard, "", 0)}
	go hs.Serve(tls.NewListener(ln, cfg))
	tt.Cleanup(func() { hs.Close() })
	return &server{URL: "https://" + ln.Addr().String()}, r
}

// nodeClient is the node-to-node client of the given settings.
func nodeClient(kv ...string) *http.Client {
	p := props.New()
	for i := 0; i < len(kv); i += 2 {
		p.Set(kv[i], kv[i+1])
	}
	return escalator.NodeClient(p, 5*time.Second)
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

func peerSerial(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.TLS.PeerCertificates[0].SerialNumber.String()
}

func TestCertificateReloadsWhenFilesChangeAndOnRequest(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ts, r := serve(t, config.TLS{Enabled: true, CertFile: cert, KeyFile: key})
	// Fresh connections each time, so each request is a handshake.
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(t, ca.CAFile)}, DisableKeepAlives: true}}
	before := peerSerial(t, fresh, ts.URL)

	ca.IssueTo(t, "node", cert, key) // a rotation: new files at the same paths
	eventually.True(t, "the server presents the new certificate", func() bool {
		return peerSerial(t, fresh, ts.URL) != before
	}, eventually.Within(5*time.Second))

	// SIGHUP's path: Reload reads the files now.
	second := peerSerial(t, fresh, ts.URL)
	ca.IssueTo(t, "node", cert, key)
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := peerSerial(t, fresh, ts.URL); got == second {
		t.Fatal("Reload kept the old certificate")
	}
}

func TestBrokenRotationKeepsServingThePreviousCertificate(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ts, r := serve(t, config.TLS{Enabled: true, CertFile: cert, KeyFile: key})
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(t, ca.CAFile)}, DisableKeepAlives: true}}
	before := peerSerial(t, fresh, ts.URL)
	other, _ := ca.Issue(t, "other")
	copyFile(t, other, cert) // the certificate no longer matches the key
	if err := r.Reload(); err == nil {
		t.Fatal("a certificate that does not match its key loaded")
	}
	if got := peerSerial(t, fresh, ts.URL); got != before {
		t.Fatalf("serving %s, want the previous %s", got, before)
	}
}

func TestNodeClientRefusesAServerOfAnotherCA(t *testing.T) {
	ca, wrong := testcerts.New(t), testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ts, _ := serve(t, config.TLS{Enabled: true, CertFile: cert, KeyFile: key})
	if err := get(nodeClient("svc.client.https.trustStoreFile", ca.CAFile), ts.URL); err != nil {
		t.Fatalf("the right CA: %v", err)
	}
	err := get(nodeClient("svc.client.https.trustStoreFile", wrong.CAFile), ts.URL)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("another CA: %v, want x509.UnknownAuthorityError", err)
	}
	if !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("error %q does not say why", err)
	}
	// Settings that do not load fail every call with the reason.
	err = get(nodeClient("svc.client.https.trustStoreFile", ca.Dir+"/missing.pem"), ts.URL)
	if err == nil || !strings.Contains(err.Error(), "svc.client.https.trustStoreFile") {
		t.Fatalf("missing trust store: %v", err)
	}
}

func TestClientCertificateRequired(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ts, _ := serve(t, config.TLS{Enabled: true, CertFile: cert, KeyFile: key, RequireClientCert: true, ClientCAFile: ca.CAFile})
	err := get(nodeClient("svc.client.https.trustStoreFile", ca.CAFile), ts.URL)
	if err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("without a client certificate: %v, want a refusal", err)
	}
	ccert, ckey := ca.Issue(t, "client")
	if err := get(nodeClient("svc.client.https.trustStoreFile", ca.CAFile, "svc.client.https.certFile", ccert, "svc.client.https.keyFile", ckey), ts.URL); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	// A client certificate of another CA is refused too.
	other := testcerts.New(t)
	ocert, okey := other.Issue(t, "intruder")
	if err := get(nodeClient("svc.client.https.trustStoreFile", ca.CAFile, "svc.client.https.certFile", ocert, "svc.client.https.keyFile", okey), ts.URL); err == nil {
		t.Fatal("a client certificate of another CA was accepted")
	}
}

func TestParseTLSRefusesIncompleteSettings(t *testing.T) {
	for _, tc := range []struct{ kv []string }{
		{[]string{"svc.enablePlaintextPort", "false"}},
		{[]string{"svc.enableTlsPort", "true"}},
		{[]string{"svc.enableTlsPort", "true", "svc.server.https.certFile", "c.pem"}},
		{[]string{"svc.client.https.certFile", "c.pem"}},
		{[]string{"svc.enableTlsPort", "true", "svc.server.https.certFile", "c", "svc.server.https.keyFile", "k", "svc.server.https.requireClientCertificate", "true"}},
		{[]string{"svc.tlsPort", "70000"}},
		{[]string{"svc.enableTlsPort", "yes please"}},
	} {
		p := props.New()
		for i := 0; i < len(tc.kv); i += 2 {
			p.Set(tc.kv[i], tc.kv[i+1])
		}
		if _, err := config.ParseTLS(p); err == nil {
			t.Errorf("%v: accepted", tc.kv)
		}
	}
	p := props.New()
	p.Set("svc.http.address", "127.0.0.1:8081")
	p.Set("svc.enableTlsPort", "true")
	if n := config.ParseNode(p); n.URL() != "https://127.0.0.1:8281" {
		t.Errorf("TLS beside plaintext: advertised %s, want https://127.0.0.1:8281", n.URL())
	}
	p.Set("svc.enablePlaintextPort", "false")
	if n := config.ParseNode(p); n.URL() != "https://127.0.0.1:8081" {
		t.Errorf("TLS only: advertised %s, want https://127.0.0.1:8081", n.URL())
	}
	p.Set("svc.tlsPort", "9443")
	if n := config.ParseNode(p); n.URL() != "https://127.0.0.1:9443" {
		t.Errorf("svc.tlsPort: advertised %s", n.URL())
	}
}

func pool(t *testing.T, file string) *x509.CertPool {
	p, err := tlsconf.LoadCAs(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
