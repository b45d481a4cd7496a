package process

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/fsm"
	"strata/internal/eventually"
	"strata/props"
)

func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

type testCluster struct {
	t     *testing.T
	props []*props.Properties
	procs []*Process
}

func nodeProps(id, httpAddr, raftAddr, dir, peers string) *props.Properties {
	p := props.Defaults()
	p.Set("svc.node.id", id)
	p.Set("svc.node.roles", "coordinator,overlord")
	p.Set("svc.http.address", httpAddr)
	p.Set("svc.raft.address", raftAddr)
	p.Set("svc.data.dir", dir)
	p.Set("svc.raft.peers", peers)
	// Generous timeouts: CI runs these under the race detector on 2 busy cores,
	// where the production defaults (300 ms) can see spurious elections.
	p.Set("svc.raft.heartbeatTimeout", "1s")
	p.Set("svc.raft.electionTimeout", "1s")
	p.Set("svc.raft.leaderLeaseTimeout", "500ms")
	return p
}

func startCluster(t *testing.T, n int, extra map[string]string) *testCluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	var peers []string
	for i := 0; i < n; i++ {
		peers = append(peers, fmt.Sprintf("n%d=%s=http://%s", i+1, ports[2*i+1], ports[2*i]))
	}
	c := &testCluster{t: t}
	for i := 0; i < n; i++ {
		p := nodeProps(fmt.Sprintf("n%d", i+1), ports[2*i], ports[2*i+1], t.TempDir(), strings.Join(peers, ","))
		for k, v := range extra {
			p.Set(k, v)
		}
		c.props = append(c.props, p)
		c.procs = append(c.procs, nil)
		c.start(i)
	}
	t.Cleanup(c.stopAll)
	return c
}

func (c *testCluster) start(i int) {
	c.t.Helper()
	logger := hclog.New(&hclog.LoggerOptions{Name: c.props[i].String("svc.node.id"), Level: hclog.Warn, Output: io.Discard})
	var err error
	// A just-closed port may linger briefly.
	eventually.True(c.t, fmt.Sprintf("node %d to start", i), func() bool {
		c.procs[i], err = StartServer(c.props[i], logger)
		return err == nil
	}, slow, eventually.Showing(func() string { return err.Error() }))
}

func (c *testCluster) stop(i int) {
	if c.procs[i] != nil {
		c.procs[i].Close()
		c.procs[i] = nil
	}
}

func (c *testCluster) stopAll() {
	for i := range c.procs {
		c.stop(i)
	}
}

func (c *testCluster) url(i int) string { return "http://" + c.props[i].String("svc.http.address") }

// leader waits for a caught-up leader among the running nodes.
func (c *testCluster) leader() int {
	c.t.Helper()
	leader := -1
	eventually.True(c.t, "a leader", func() bool {
		for i, p := range c.procs {
			if p != nil && p.Node.IsLeader() {
				leader = i
				return true
			}
		}
		return false
	}, slow)
	return leader
}

var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

func do(t *testing.T, method, url, ctype, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func coordinatorConfig(t *testing.T, c *testCluster, i int) map[string]any {
	t.Helper()
	var out map[string]any
	c.procs[i].Node.FSM().Read(func(s *fsmState) {
		b, _ := json.Marshal(s.CoordinatorConfig())
		json.Unmarshal(b, &out)
	})
	return out
}

// waitConverged waits until every running node has applied the leader's index.
func (c *testCluster) waitConverged() {
	c.t.Helper()
	l := c.leader()
	want := c.procs[l].Node.FSM().LastIndex()
	eventually.True(c.t, fmt.Sprintf("every node to apply index %d", want), func() bool {
		for _, p := range c.procs {
			if p != nil && p.Node.FSM().LastIndex() < want {
				return false
			}
		}
		return true
	})
}

func TestThreeNodeCluster(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"svc.raft.trailingLogs": "4", "svc.raft.snapshotThreshold": "1000000"})
	l := c.leader()
	f := (l + 1) % 3

	// A follower redirects a write, keeping path and query; the leader applies it.
	hdr := map[string]string{"X-Svc-Author": "alice", "X-Svc-Comment": "raise moves"}
	code, h, _ := do(t, "POST", c.url(f)+"/svc/coordinator/v1/config?x=1", "application/json", `{"maxSegmentsToMove":42}`, hdr)
	if code != http.StatusTemporaryRedirect || h.Get("Location") != c.url(l)+"/svc/coordinator/v1/config?x=1" {
		t.Fatalf("follower answered %d Location=%q, want 307 to %s", code, h.Get("Location"), c.url(l))
	}
	code, _, body := do(t, "POST", h.Get("Location"), "application/json", `{"maxSegmentsToMove":42}`, hdr)
	if code != 200 || body != "" {
		t.Fatalf("leader answered %d %q", code, body)
	}
	// Reads through any node's redirect chain see the acknowledged write.
	for i := 0; i < 3; i++ {
		code, h, _ := do(t, "GET", c.url(i)+"/svc/coordinator/v1/config", "", "", nil)
		url := c.url(i) + "/svc/coordinator/v1/config"
		if code == http.StatusTemporaryRedirect {
			url = h.Get("Location")
		}
		code, _, body := do(t, "GET", url, "", "", nil)
		if code != 200 || !strings.Contains(body, `"maxSegmentsToMove":42`) {
			t.Fatalf("node %d read: %d %s", i, code, body)
		}
	}
	c.waitConverged()
	for i := 0; i < 3; i++ {
		if got := coordinatorConfig(t, c, i)["maxSegmentsToMove"]; got != 42.0 {
			t.Fatalf("node %d has maxSegmentsToMove=%v", i, got)
		}
	}
	// isLeader / leader on every node.
	for i := 0; i < 3; i++ {
		code, _, body := do(t, "GET", c.url(i)+"/svc/coordinator/v1/isLeader", "", "", nil)
		if (i == l) != (code == 200) || (i == l) != strings.Contains(body, "true") {
			t.Fatalf("node %d isLeader: %d %s", i, code, body)
		}
		if code, _, body := do(t, "GET", c.url(i)+"/svc/indexer/v1/leader", "", "", nil); code != 200 || body != c.url(l) {
			t.Fatalf("node %d leader: %d %q", i, code, body)
		}
	}

	// Kill the leader: a new one takes over and accepts writes.
	c.stop(l)
	nl := c.leader()
	if nl == l {
		t.Fatal("stopped node still leader")
	}
	code, _, body = do(t, "POST", c.url(nl)+"/svc/indexer/v1/worker", "application/json", `{"selectStrategy":{"type":"fillCapacity"}}`, map[string]string{"X-Svc-Author": "bob"})
	if code != 200 {
		t.Fatalf("write on new leader: %d %s", code, body)
	}
	// The old leader rejoins from its data dir and catches up.
	c.start(l)
	c.waitConverged()
	c.procs[l].Node.FSM().Read(func(s *fsmState) {
		if cfg, set := s.WorkerConfig(); !set || cfg.SelectStrategy.Type != "fillCapacity" {
			t.Fatalf("rejoined node worker config: %+v %v", cfg, set)
		}
	})

	// Snapshot and trim the log on every node, then restart all three.
	for i := 0; i < 8; i++ {
		c.writeUntilOK("/svc/coordinator/v1/config", fmt.Sprintf(`{"mergeSegmentsLimit":%d}`, 100+i))
	}
	c.waitConverged()
	for _, p := range c.procs {
		if err := p.Node.Snapshot(); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
	}
	c.stopAll()
	for i := range c.procs {
		c.start(i)
	}
	nl = c.leader()
	c.waitConverged()
	code, _, body = do(t, "GET", c.url(nl)+"/svc/coordinator/v1/config/history?count=100", "", "", nil)
	var hist []map[string]any
	if err := json.Unmarshal([]byte(body), &hist); err != nil || code != 200 {
		t.Fatalf("history: %d %s", code, body)
	}
	if len(hist) != 9 {
		t.Fatalf("history has %d entries, want 9", len(hist))
	}
	first := hist[len(hist)-1]
	info := first["auditInfo"].(map[string]any)
	if info["author"] != "alice" || info["comment"] != "raise moves" || info["ip"] != "127.0.0.1" || first["type"] != "coordinator.config" {
		t.Fatalf("oldest entry %+v", first)
	}
	for i := 0; i < 3; i++ {
		cfg := coordinatorConfig(t, c, i)
		if cfg["maxSegmentsToMove"] != 42.0 || cfg["mergeSegmentsLimit"] != 107.0 {
			t.Fatalf("node %d after restart: %v", i, cfg)
		}
	}
	code, _, body = do(t, "GET", c.url(nl)+"/svc/indexer/v1/worker/history", "", "", nil)
	if code != 200 || !strings.Contains(body, `"author":"bob"`) {
		t.Fatalf("worker history: %d %s", code, body)
	}
}

// writeUntilOK posts body to the current leader until a 200: under heavy load an
// election can move leadership between finding the leader and writing to it
// (answered 307 or 503, nothing applied).
func (c *testCluster) writeUntilOK(path, body string) {
	c.t.Helper()
	var code int
	var resp string
	eventually.True(c.t, "write "+path+" "+body+" acknowledged", func() bool {
		code, _, resp = do(c.t, "POST", c.url(c.leader())+path, "application/json", body, nil)
		if code != http.StatusOK && code != http.StatusTemporaryRedirect && code != http.StatusServiceUnavailable {
			c.t.Fatalf("write %s %s: %d %s", path, body, code, resp)
		}
		return code == http.StatusOK
	}, eventually.Within(20*time.Second), eventually.Showing(func() string { return fmt.Sprintf("%d %s", code, resp) }))
}

// After an acknowledged write, a read through any node never returns older state,
// even with writes racing on other clients.
func TestLinearizableReadsAfterWrite(t *testing.T) {
	c := startCluster(t, 3, nil)
	for v := 1; v <= 20; v++ {
		// Write until acknowledged (a leader change may interrupt an attempt).
		var code int
		var body string
		eventually.True(t, fmt.Sprintf("write %d acknowledged", v), func() bool {
			code, _, body = do(t, "POST", c.url(c.leader())+"/svc/coordinator/v1/config", "application/json", fmt.Sprintf(`{"replicantLifetime":%d}`, v), nil)
			return code == 200
		}, eventually.Within(20*time.Second), eventually.Showing(func() string { return fmt.Sprintf("%d %s", code, body) }))
		// Any node's redirect chain must answer with that write or newer, or refuse
		// (503) while no leader is known; it must never answer older state.
		i := v % 3
		eventually.True(t, fmt.Sprintf("read %d via node %d", v, i), func() bool {
			code, h, body := do(t, "GET", c.url(i)+"/svc/coordinator/v1/config", "", "", nil)
			if code == http.StatusTemporaryRedirect {
				code, _, body = do(t, "GET", h.Get("Location"), "", "", nil)
			}
			if code == 200 {
				if !strings.Contains(body, fmt.Sprintf(`"replicantLifetime":%d,`, v)) {
					t.Fatalf("read %d via node %d returned other state: %s", v, i, body)
				}
				return true
			}
			if code != http.StatusServiceUnavailable && code != http.StatusTemporaryRedirect {
				t.Fatalf("read %d via node %d: %d %s", v, i, code, body)
			}
			return false
		})
	}
}

func TestRouterFollowsLeader(t *testing.T) {
	c := startCluster(t, 3, nil)
	c.leader()
	port := freePorts(t, 1)[0]
	var urls []string
	for i := range c.procs {
		urls = append(urls, c.url(i))
	}
	rp := props.Defaults()
	rp.Set("svc.node.roles", "router")
	rp.Set("svc.http.address", port)
	rp.Set("svc.router.coordinatorUrls", strings.Join(urls, ","))
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer worker.Close()
	rp.Set("svc.router.workerUrls", worker.URL)
	router, err := StartServer(rp, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer router.Close()
	code, _, body := do(t, "POST", "http://"+port+"/svc/coordinator/v1/config", "application/json", `{"pauseCoordination":true}`, map[string]string{"X-Svc-Author": "router-user"})
	if code != 200 {
		t.Fatalf("write through router: %d %s", code, body)
	}
	code, _, body = do(t, "GET", "http://"+port+"/svc/coordinator/v1/config/history?count=1", "", "", nil)
	if code != 200 || !strings.Contains(body, `"author":"router-user"`) || !strings.Contains(body, `"ip":"127.0.0.1"`) {
		t.Fatalf("history through router: %d %s", code, body)
	}
	// Kill the leader and keep writing through the router during the election:
	// its clients never see a redirect (followers still name the dead leader
	// for a moment) or an error; the router waits for the new leader.
	c.stop(c.leader())
	for i := 0; i < 10; i++ {
		code, h, body := do(t, "POST", "http://"+port+"/svc/coordinator/v1/config", "application/json", fmt.Sprintf(`{"replicantLifetime":%d}`, 100+i), nil)
		if code != 200 {
			t.Fatalf("write %d through router during failover: %d %v %s", i, code, h, body)
		}
	}
	c.leader()
	code, _, body = do(t, "GET", "http://"+port+"/svc/coordinator/v1/config", "", "", nil)
	if code != 200 || !strings.Contains(body, `"pauseCoordination":true`) || !strings.Contains(body, `"replicantLifetime":109,`) {
		t.Fatalf("read through router after failover: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", "http://"+port+"/status/health", "", "", nil); code != 200 {
		t.Fatalf("router health %d", code)
	}
	if code, _, body := do(t, "GET", "http://"+port+"/svc/worker/v1/enabled", "", "", nil); code != 200 || body != `{"path":"/svc/worker/v1/enabled"}` {
		t.Fatalf("worker endpoint through router: %d %s", code, body)
	}
}

// fsmState aliases the FSM's state type for the Read callbacks above.
type fsmState = fsm.State
