package process

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/internal/testcerts"
	"strata/props"
	"strata/tlsconf"
)

// httpsClient trusts ca and presents the certificate of certFile/keyFile
// when given: what curl --cacert [--cert --key] does.
func httpsClient(t *testing.T, caFile, certFile, keyFile string) *http.Client {
	t.Helper()
	pool, err := tlsconf.LoadCAs(caFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: pool}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func call(c *http.Client, method, url, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// A cluster of five processes (control node, historical, broker, middle
// manager, router) serving HTTPS only, with client certificates required
// on every listener: every call between them (discovery, the worker's
// heartbeats and tasks, the historical's assignment polls, the
// coordinator's announcement polls, the broker's scatter/gather, the
// router's proxying) goes over mutual TLS. A SQL INSERT through the router
// and a query of its rows work end to end; plain HTTP, a client without a
// certificate and a client trusting another CA are refused.
func TestClusterOverTLSOnly(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ports := freePorts(t, 6)
	ctlURL := "https://" + ports[0]
	deep := t.TempDir()
	start := func(roles, addr string, extra map[string]string) *Process {
		p := props.Defaults()
		p.Set("svc.node.id", "n-"+addr)
		p.Set("svc.node.roles", roles)
		p.Set("svc.http.address", addr)
		p.Set("svc.data.dir", t.TempDir())
		p.Set("svc.storage.storageDirectory", deep)
		p.Set("svc.discovery.coordinators", ctlURL)
		p.Set("svc.discovery.heartbeatPeriod", "100ms")
		p.Set("svc.enablePlaintextPort", "false")
		p.Set("svc.enableTlsPort", "true")
		p.Set("svc.server.https.certFile", cert)
		p.Set("svc.server.https.keyFile", key)
		p.Set("svc.server.https.requireClientCertificate", "true")
		p.Set("svc.client.https.trustStoreFile", ca.CAFile)
		p.Set("svc.client.https.certFile", cert)
		p.Set("svc.client.https.keyFile", key)
		for k, v := range extra {
			p.Set(k, v)
		}
		proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proc.Close() })
		return proc
	}
	ctl := start("coordinator,overlord", ports[0], map[string]string{"svc.raft.address": ports[1]})
	eventually.True(t, "a leader", ctl.Node.IsLeader, slow)
	start("historical", ports[2], nil)
	start("broker", ports[3], map[string]string{"svc.broker.pollPeriod": "100ms"})
	start("middleManager", ports[4], map[string]string{"svc.worker.capacity": "2", "svc.worker.heartbeatPeriod": "100ms"})
	start("router", ports[5], nil)
	router := "https://" + ports[5]

	client := httpsClient(t, ca.CAFile, cert, key)
	var servers string
	eventually.True(t, "every process announced over TLS", func() bool {
		_, servers, _ = call(client, "GET", ctlURL+"/svc/coordinator/v1/servers?simple", "")
		return strings.Count(servers, `"state":"live"`) == 5
	}, slow, eventually.Showing(func() string { return servers }))
	if strings.Contains(servers, "http://") {
		t.Errorf("a process advertised a plain URL: %s", servers)
	}
	eventually.True(t, "the middle manager to register", func() bool {
		_, body, _ := call(client, "GET", router+"/svc/indexer/v1/workers", "")
		return strings.Contains(body, ports[4])
	}, slow)

	sql, _ := json.Marshal(map[string]string{"query": `INSERT INTO tls_rows SELECT TIME_PARSE("timestamp") AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"{\"timestamp\":\"2024-01-01T00:00:00Z\",\"page\":\"a\"}\n{\"timestamp\":\"2024-01-01T01:00:00Z\",\"page\":\"b\"}\n"}', '{"type":"json"}', '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"}]'))
PARTITIONED BY DAY`})
	code, body, err := call(client, "POST", router+"/svc/v2/sql/task", string(sql))
	var sub struct {
		TaskID string `json:"taskId"`
	}
	if err != nil || code != 200 || json.Unmarshal([]byte(body), &sub) != nil || sub.TaskID == "" {
		t.Fatalf("submit: %d %s %v", code, body, err)
	}
	var status string
	eventually.True(t, "the task to end", func() bool {
		_, status, _ = call(client, "GET", router+"/svc/indexer/v1/task/"+sub.TaskID+"/status", "")
		return strings.Contains(status, `"status":"SUCCESS"`) || strings.Contains(status, `"status":"FAILED"`)
	}, eventually.Within(60*time.Second), eventually.Showing(func() string { return status }))
	if !strings.Contains(status, `"status":"SUCCESS"`) {
		_, report, _ := call(client, "GET", router+"/svc/indexer/v1/task/"+sub.TaskID+"/reports", "")
		t.Fatalf("task: %s\nreport: %s", status, report)
	}
	var rows string
	eventually.True(t, "the rows queryable through the router", func() bool {
		_, rows, _ = call(client, "POST", router+"/svc/v2/", `{"queryType":"timeseries","dataSource":"tls_rows",
			"intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"count","name":"rows"}]}`)
		return strings.Contains(rows, `"rows":2`)
	}, slow, eventually.Showing(func() string { return rows }))

	// Plain HTTP on a TLS port: Go's server answers 400 and serves nothing.
	if code, body, err := call(&http.Client{Timeout: 5 * time.Second}, "GET", "http://"+ports[5]+"/status/health", ""); err == nil && code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the router: %d %s", code, body)
	}
	// No client certificate: the handshake fails.
	if _, _, err := call(httpsClient(t, ca.CAFile, "", ""), "GET", router+"/status/health", ""); err == nil {
		t.Error("a client without a certificate was served")
	}
	// A client trusting another CA refuses the server, saying why.
	other := testcerts.New(t)
	_, _, err = call(httpsClient(t, other.CAFile, cert, key), "GET", router+"/status/health", "")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("a client trusting another CA: %v", err)
	}
}

// One process serving HTTPS only (as quickstart --tls-dir does): plain HTTP
// is refused, and a certificate rotated on disk is served after
// ReloadCertificates (SIGHUP) without a restart.
func TestTLSOnlyProcessReloadsItsCertificate(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ports := freePorts(t, 2)
	p := props.Defaults()
	p.Set("svc.node.roles", "coordinator,overlord")
	p.Set("svc.http.address", ports[0])
	p.Set("svc.raft.address", ports[1])
	p.Set("svc.data.dir", t.TempDir())
	p.Set("svc.enablePlaintextPort", "false")
	p.Set("svc.enableTlsPort", "true")
	p.Set("svc.server.https.certFile", cert)
	p.Set("svc.server.https.keyFile", key)
	p.Set("svc.client.https.trustStoreFile", ca.CAFile)
	proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Close() })
	if got := AdvertisedURL(p); got != "https://"+ports[0] {
		t.Errorf("advertised %s, want the https URL", got)
	}
	serial := func() string {
		c := httpsClient(t, ca.CAFile, "", "")
		c.Transport.(*http.Transport).DisableKeepAlives = true
		resp, err := c.Get("https://" + ports[0] + "/status/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("health over https: %d", resp.StatusCode)
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.String()
	}
	first := serial()
	code, body, err := call(&http.Client{Timeout: 5 * time.Second}, "GET", "http://"+ports[0]+"/status/health", "")
	if err == nil && (code != http.StatusBadRequest || !strings.Contains(body, "HTTPS")) {
		t.Errorf("plain HTTP: %d %s", code, body)
	}
	ca.IssueTo(t, "node", cert, key)
	if err := proc.ReloadCertificates(); err != nil {
		t.Fatal(err)
	}
	if serial() == first {
		t.Error("the process serves the old certificate after ReloadCertificates")
	}
	// Settings that cannot work stop the start with the reason.
	bad := props.Defaults()
	bad.Merge(p)
	bad.Set("svc.server.https.keyFile", "")
	if _, err := StartServer(bad, hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "svc.server.https.keyFile") {
		t.Errorf("TLS without a key: %v", err)
	}
}

// Three control nodes with TLS on: Raft's port is TLS with client
// certificates too, so the nodes elect a leader and replicate a write over
// it, while a client without a certificate of the cluster's CA gets no
// answer from that port.
func TestRaftOverTLS(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ports := freePorts(t, 6)
	var peers []string
	for i := 0; i < 3; i++ {
		peers = append(peers, fmt.Sprintf("n%d=%s=https://%s", i+1, ports[2*i+1], ports[2*i]))
	}
	for i := 0; i < 3; i++ {
		p := nodeProps(fmt.Sprintf("n%d", i+1), ports[2*i], ports[2*i+1], t.TempDir(), strings.Join(peers, ","))
		p.Set("svc.enablePlaintextPort", "false")
		p.Set("svc.enableTlsPort", "true")
		p.Set("svc.server.https.certFile", cert)
		p.Set("svc.server.https.keyFile", key)
		p.Set("svc.client.https.trustStoreFile", ca.CAFile)
		proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proc.Close() })
	}
	client := httpsClient(t, ca.CAFile, "", "")
	var code int
	var body string
	eventually.True(t, "a write acknowledged by an elected leader", func() bool {
		// Any node: a follower redirects to the leader's https URL.
		code, body, _ = call(client, "POST", "https://"+ports[0]+"/svc/coordinator/v1/config", `{"maxSegmentsToMove":42}`)
		return code == 200
	}, eventually.Within(30*time.Second), eventually.Showing(func() string { return fmt.Sprint(code, body) }))
	for i := 0; i < 3; i++ {
		eventually.True(t, fmt.Sprintf("node %d to have the write", i), func() bool {
			code, body, _ = call(client, "GET", "https://"+ports[2*i]+"/svc/coordinator/v1/config", "")
			return code == 200 && strings.Contains(body, `"maxSegmentsToMove":42`)
		}, slow, eventually.Showing(func() string { return fmt.Sprint(code, body) }))
	}
	// Raft's port: a TLS client without a client certificate is refused
	// (with TLS 1.3 the refusal arrives on the first read).
	pool, _ := tlsconf.LoadCAs(ca.CAFile)
	conn, err := tls.Dial("tcp", ports[1], &tls.Config{RootCAs: pool})
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Write([]byte{0})
		if err == nil {
			_, err = conn.Read(make([]byte, 1))
		}
		conn.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("Raft's port to a client without a certificate: %v", err)
	}
}

// Plain HTTP kept beside HTTPS (svc.tlsPort): both answer, and the process
// advertises its https URL, so the other processes call it over TLS.
func TestPlaintextBesideTLS(t *testing.T) {
	ca := testcerts.New(t)
	cert, key := ca.Issue(t, "node")
	ports := freePorts(t, 3)
	_, tlsPort, _ := strings.Cut(ports[2], ":")
	p := props.Defaults()
	p.Set("svc.node.roles", "coordinator,overlord")
	p.Set("svc.http.address", ports[0])
	p.Set("svc.raft.address", ports[1])
	p.Set("svc.data.dir", t.TempDir())
	p.Set("svc.enableTlsPort", "true")
	p.Set("svc.tlsPort", tlsPort)
	p.Set("svc.server.https.certFile", cert)
	p.Set("svc.server.https.keyFile", key)
	p.Set("svc.client.https.trustStoreFile", ca.CAFile)
	proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Close() })
	if got := AdvertisedURL(p); got != "https://"+ports[2] {
		t.Errorf("advertised %s, want https://%s", got, ports[2])
	}
	for _, c := range []struct {
		client *http.Client
		url    string
	}{{&http.Client{Timeout: 5 * time.Second}, "http://" + ports[0]}, {httpsClient(t, ca.CAFile, "", ""), "https://" + ports[2]}} {
		if code, body, err := call(c.client, "GET", c.url+"/status/health", ""); err != nil || code != 200 || body != "true" {
			t.Errorf("%s: %d %q %v", c.url, code, body, err)
		}
	}
}
