package chaos

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"strata/tlsconf"
)

// Host is where one server process runs: its own network namespace and
// address, or loopback with ports of its own.
type Host struct {
	Name string
	Addr string // IP address the host's processes listen on
	ns   string // namespace name; "" on loopback
}

// Net places hosts. With namespaces every host has its own address and links
// between hosts can be cut; on loopback (not root, no iproute2) every host is
// 127.0.0.1 and only process faults are possible.
type Net struct {
	ns    *namespaces // nil on loopback
	Why   string      // why namespaces are not used, on loopback
	hosts []*Host
	mu    sync.Mutex
}

// NewNet makes a private network of namespaces when it can, else loopback;
// forceLoopback skips namespaces. Close it to delete the namespaces.
func NewNet(forceLoopback bool) *Net {
	if forceLoopback {
		return &Net{Why: "loopback requested"}
	}
	if why := namespacesUnavailable(); why != "" {
		return &Net{Why: why}
	}
	ns, err := newNamespaces()
	if err != nil {
		return &Net{Why: "cannot create network namespaces: " + err.Error()}
	}
	return &Net{ns: ns}
}

// Partitions reports whether links can be cut.
func (n *Net) Partitions() bool { return n.ns != nil }

// AddHost adds a host.
func (n *Net) AddHost(name string) (*Host, error) {
	n.mu.Lock()
	i := len(n.hosts) + 1
	n.mu.Unlock()
	h := &Host{Name: name, Addr: "127.0.0.1"}
	if n.ns != nil {
		var err error
		if h.ns, h.Addr, err = n.ns.addHost(i); err != nil {
			return nil, err
		}
	}
	n.mu.Lock()
	n.hosts = append(n.hosts, h)
	n.mu.Unlock()
	return h, nil
}

// Port returns the port a process on h listens on for the given default:
// in a namespace the default itself (the address is the host's own), on
// loopback a free port.
func (n *Net) Port(def int) (int, error) {
	if n.ns != nil {
		return def, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Cut drops every packet between a and b until Heal.
func (n *Net) Cut(a, b *Host) error {
	if n.ns == nil {
		return errors.New("partitions need network namespaces: " + n.Why)
	}
	return n.ns.cut(a.ns, a.Addr, b.ns, b.Addr)
}

// Heal restores the link between a and b.
func (n *Net) Heal(a, b *Host) error {
	if n.ns == nil {
		return nil
	}
	return n.ns.heal(a.ns, a.Addr, b.ns, b.Addr)
}

// HealAll restores every link.
func (n *Net) HealAll() {
	n.mu.Lock()
	hosts := append([]*Host(nil), n.hosts...)
	n.mu.Unlock()
	for i, a := range hosts {
		for _, b := range hosts[i+1:] {
			n.Heal(a, b)
		}
	}
}

// Dial connects from the harness's side of the network (the bridge's
// namespace, or loopback).
func (n *Net) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if n.ns != nil {
		return n.ns.dial(ctx, network, addr)
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

// Listen listens on the harness's side of the network on an address every
// host can reach; addr's host part is replaced by it.
func (n *Net) Listen(network, addr string) (net.Listener, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if n.ns != nil {
		return n.ns.listen(network, net.JoinHostPort(subnet+"1", port))
	}
	return net.Listen(network, net.JoinHostPort("127.0.0.1", port))
}

// Close deletes the namespaces; processes must have ended.
func (n *Net) Close() {
	if n.ns != nil {
		n.ns.close()
	}
}

// Exec builds the command that runs argv on h.
func (n *Net) Exec(h *Host, argv ...string) *exec.Cmd {
	if h.ns != "" {
		// ip netns exec execs argv in the same process, so the pid is the
		// server's own and signals reach it directly.
		argv = append([]string{"ip", "netns", "exec", h.ns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = parentDeathSignal()
	return cmd
}

// Proc is one strata server process.
type Proc struct {
	Name  string
	Roles string
	Host  *Host
	HTTP  string // host:port
	Raft  string // host:port, control nodes only
	Data  string
	args  []string
	net   *Net
	log   string
	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
	pause bool

	// scheme is "https" in a cluster over TLS (Cluster.UseTLS).
	scheme string
}

// Set adds a key=value property to the process's command line (effective
// from its next start).
func (p *Proc) Set(kv string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.args = append(p.args, "--set", kv)
}

// URL is the process's base URL.
func (p *Proc) URL() string {
	if p.scheme != "" {
		return p.scheme + "://" + p.HTTP
	}
	return "http://" + p.HTTP
}

// Start starts the process (again), appending to its log.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return nil
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "---- %s start\n", time.Now().Format(time.RFC3339Nano))
	cmd := p.net.Exec(p.Host, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	p.cmd, p.done, p.pause = cmd, done, false
	return nil
}

// Running reports whether the process was started and not killed (it may be
// paused).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Paused reports whether the process is stopped by SIGSTOP.
func (p *Proc) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pause
}

// Exited reports whether a started process ended on its own.
func (p *Proc) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL (kill -9) and waits for the process to end.
func (p *Proc) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.pause = nil, false
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Stop sends SIGSTOP: the process stays, frozen, with its sockets open.
func (p *Proc) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.pause {
		p.cmd.Process.Signal(syscall.SIGSTOP)
		p.pause = true
	}
}

// Cont sends SIGCONT.
func (p *Proc) Cont() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.pause {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.pause = false
	}
}

// LogTail is the end of the process's log, for failure messages.
func (p *Proc) LogTail(n int) string {
	b, _ := os.ReadFile(p.log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Cluster is a set of strata processes sharing one deep storage directory.
type Cluster struct {
	Bin     string
	Dir     string
	Net     *Net
	Deep    string // deep storage directory, shared by every process
	Control []*Proc
	Procs   []*Proc
	// Props are extra svc.* settings for every process.
	Props []string
	HTTP  *httpClient
	// scheme of the processes added from now on ("" is http).
	scheme string
}

// UseTLS makes the processes added from now on serve HTTPS only with the
// given certificate and key and verify each other against caFile (Raft
// included), and the harness's client trust caFile.
func (c *Cluster) UseTLS(caFile, certFile, keyFile string) error {
	pool, err := tlsconf.LoadCAs(caFile)
	if err != nil {
		return err
	}
	c.HTTP.hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	c.scheme = "https"
	c.Props = append(c.Props, "svc.enablePlaintextPort=false", "svc.enableTlsPort=true",
		"svc.server.https.certFile="+certFile, "svc.server.https.keyFile="+keyFile, "svc.client.https.trustStoreFile="+caFile)
	return nil
}

// NewCluster makes an empty cluster under dir.
func NewCluster(bin, dir string, n *Net) (*Cluster, error) {
	deep := filepath.Join(dir, "deep")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Bin: bin, Dir: dir, Net: n, Deep: deep}
	c.HTTP = NewHTTPClient(n, 5*time.Second)
	return c, nil
}

// httpClient sends the harness's requests through its side of the network.
type httpClient struct{ hc *http.Client }

// NewHTTPClient is a client that dials through n, with a per-request timeout.
// It follows redirects (a follower answers 307 to the leader), re-sending
// request bodies.
func NewHTTPClient(n *Net, timeout time.Duration) *httpClient {
	return &httpClient{&http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         n.Dial,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
		},
	}}
}

func (c *Cluster) addProc(name, roles string, httpPort int, extra []string) (*Proc, error) {
	h, err := c.Net.AddHost(name)
	if err != nil {
		return nil, err
	}
	port, err := c.Net.Port(httpPort)
	if err != nil {
		return nil, err
	}
	p := &Proc{Name: name, Roles: roles, Host: h, HTTP: fmt.Sprintf("%s:%d", h.Addr, port), Data: filepath.Join(c.Dir, name),
		scheme: c.scheme, net: c.Net, log: filepath.Join(c.Dir, name+".log")}
	p.args = []string{c.Bin, "server", "--id", name, "--roles", roles, "--http", p.HTTP, "--data", p.Data,
		"--set", "svc.storage.storageDirectory=" + c.Deep, "--set", "svc.log.level=info",
		// The harness writes the files it ingests under its directory: let
		// local input sources read there (the default is the data
		// directory's ingest/ folder only).
		"--set", "svc.ingestion.local.allowedBaseDirs=" + c.Dir,
		// Each process listens on its namespace's own (non-loopback)
		// address; the faults under test are not about security, so the
		// open API is allowed there deliberately.
		"--set", "svc.auth.allowInsecure=true"}
	for _, kv := range append(append([]string(nil), c.Props...), extra...) {
		p.args = append(p.args, "--set", kv)
	}
	c.Procs = append(c.Procs, p)
	return p, nil
}

// AddControl adds n control nodes (coordinator, overlord) forming one Raft
// cluster.
func (c *Cluster) AddControl(n int) error {
	type addr struct{ http, raft string }
	var peers []string
	var nodes []*Proc
	for i := 1; i <= n; i++ {
		p, err := c.addProc(fmt.Sprintf("control%d", i), "coordinator,overlord", 8081, nil)
		if err != nil {
			return err
		}
		rport, err := c.Net.Port(8300)
		if err != nil {
			return err
		}
		p.Raft = fmt.Sprintf("%s:%d", p.Host.Addr, rport)
		peers = append(peers, fmt.Sprintf("%s=%s=%s", p.Name, p.Raft, p.URL()))
		nodes = append(nodes, p)
	}
	for _, p := range nodes {
		p.args = append(p.args, "--raft", p.Raft, "--peers", strings.Join(peers, ","))
	}
	c.Control = nodes
	return nil
}

// ControlURLs lists the control nodes' URLs, comma-separated.
func (c *Cluster) ControlURLs() string {
	var out []string
	for _, p := range c.Control {
		out = append(out, p.URL())
	}
	return strings.Join(out, ",")
}

// AddHistorical adds a historical polling the control nodes.
func (c *Cluster) AddHistorical(name string, extra ...string) (*Proc, error) {
	return c.addProc(name, "historical", 8083, append([]string{"svc.historical.coordinatorUrls=" + c.ControlURLs()}, extra...))
}

// AddMiddleManager adds a middle manager registering with the control nodes.
func (c *Cluster) AddMiddleManager(name string, extra ...string) (*Proc, error) {
	return c.addProc(name, "middleManager", 8091, append([]string{"svc.worker.overlordUrls=" + c.ControlURLs()}, extra...))
}

// AddBroker adds a broker querying the given data servers (historicals and
// middle managers).
func (c *Cluster) AddBroker(name string, dataServers []*Proc, extra ...string) (*Proc, error) {
	var urls []string
	for _, p := range dataServers {
		urls = append(urls, p.URL())
	}
	return c.addProc(name, "broker", 8082, append([]string{"svc.broker.historicalUrls=" + strings.Join(urls, ",")}, extra...))
}

// StartAll starts every process.
func (c *Cluster) StartAll() error {
	for _, p := range c.Procs {
		if err := p.Start(); err != nil {
			return fmt.Errorf("start %s: %w", p.Name, err)
		}
	}
	return nil
}

// KillAll kills every process (kill -9).
func (c *Cluster) KillAll() {
	var wg sync.WaitGroup
	for _, p := range c.Procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.Kill() }()
	}
	wg.Wait()
}

// Close kills every process and removes nothing: logs and data stay in Dir.
func (c *Cluster) Close() { c.KillAll() }

// Get fetches url and returns the status and body.
func (c *Cluster) Get(ctx context.Context, url string) (int, []byte, error) {
	return c.HTTP.do(ctx, http.MethodGet, url, nil, nil)
}

// do sends one request (a JSON body if body is not nil) and reads the answer.
func (h *httpClient) do(ctx context.Context, method, url string, body []byte, hdr map[string]string) (int, []byte, error) {
	code, b, _, err := h.doHeader(ctx, method, url, body, hdr)
	return code, b, err
}

// doHeader is do, also returning the answer's headers.
func (h *httpClient) doHeader(ctx context.Context, method, url string, body []byte, hdr map[string]string) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, b, resp.Header, err
	}
	return resp.StatusCode, b, resp.Header, nil
}

// Leader returns the control node that answers isLeader 200, or nil.
func (c *Cluster) Leader(ctx context.Context) *Proc {
	for _, p := range c.Control {
		if !p.Running() || p.Paused() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		code, _, err := c.Get(cctx, p.URL()+"/svc/coordinator/v1/isLeader")
		cancel()
		if err == nil && code == 200 {
			return p
		}
	}
	return nil
}

// WaitLeader waits up to timeout for a leader.
func (c *Cluster) WaitLeader(ctx context.Context, timeout time.Duration) (*Proc, error) {
	deadline := time.Now().Add(timeout)
	for {
		if l := c.Leader(ctx); l != nil {
			return l, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("no control-plane leader within %s", timeout)
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// WaitUp waits until p answers /status/health.
func (c *Cluster) WaitUp(ctx context.Context, p *Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		code, _, err := c.Get(cctx, p.URL()+"/status/health")
		cancel()
		if err == nil && code == 200 {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("%s exited; log tail:\n%s", p.Name, p.LogTail(2000))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not up within %s (last: %d %v); log tail:\n%s", p.Name, timeout, code, err, p.LogTail(2000))
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
