package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"strata/internal/testcerts"
	"strata/tlsconf"
)

// --cacert: the CLI verifies an https --url against the given CA, and
// without it refuses a server its system roots do not know, saying why.
func TestCACertFlag(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"task":"t1","status":{"id":"t1","status":"SUCCESS","statusCode":"SUCCESS","duration":5}}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	defer srv.Close()
	old := httpClient.Transport
	t.Cleanup(func() { httpClient.Transport = old }) // --cacert sets the CLI's one client

	code, _, errOut := capture(t, "task", "status", "t1", "--url", srv.URL)
	if code != 1 || !strings.Contains(errOut, "certificate signed by unknown authority") {
		t.Errorf("without --cacert: exit %d, %q", code, errOut)
	}
	code, out, errOut := capture(t, "task", "status", "t1", "--url", srv.URL, "--cacert", ca.CAFile)
	if code != 0 || !strings.Contains(out+errOut, "SUCCESS") {
		t.Errorf("with --cacert: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut = capture(t, "task", "status", "t1", "--url", srv.URL, "--cacert", ca.Dir+"/none.pem")
	if code != 2 || !strings.Contains(errOut, "trust store") {
		t.Errorf("a missing --cacert file: exit %d, %q", code, errOut)
	}
}

// strata certs makes a CA and a node certificate the CA verifies, and
// leaves an existing directory as it is.
func TestCertsCommand(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := capture(t, "certs", "--dir", dir, "--hosts", "db.example,10.0.0.7"); code != 0 || !strings.Contains(out, "ca.pem") {
		t.Fatalf("certs: exit %d, %q %q", code, out, errOut)
	}
	f := tlsconf.DirFiles(dir)
	pool, err := tlsconf.LoadCAs(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "db.example", "10.0.0.7"} {
		if _, err := pair.Leaf.Verify(x509VerifyOptions(pool, host)); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	before := pair.Leaf.SerialNumber.String()
	if code, _, errOut := capture(t, "certs", "--dir", dir); code != 0 {
		t.Fatalf("certs again: %d %s", code, errOut)
	}
	again, _ := tls.LoadX509KeyPair(f.Cert, f.Key)
	if again.Leaf.SerialNumber.String() != before {
		t.Error("certs replaced an existing certificate")
	}
}

func x509VerifyOptions(pool *x509.CertPool, host string) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: pool, DNSName: host}
}
