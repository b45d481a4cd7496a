package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/coordinator"
	"strata/internal/eventually"
	"strata/overlord"
	"strata/props"
	"strata/streaming"
)

// single starts a one-node control plane (real Raft, bbolt, TCP) behind httptest.
func single(t *testing.T, p *props.Properties) (*httptest.Server, *cluster.Node) {
	ts, n, _ := singleServer(t, p, RoleCoordinator, RoleOverlord)
	return ts, n
}

// singleServer is single with the given roles, returning the Server too (for
// tests that inject hooks into it).
func singleServer(t *testing.T, p *props.Properties, roles ...string) (*httptest.Server, *cluster.Node, *Server) {
	t.Helper()
	return singleServerLog(t, p, nil, roles...)
}

// singleServerLog is singleServer with the server logging to log (nil: discarded).
func singleServerLog(t *testing.T, p *props.Properties, log hclog.Logger, roles ...string) (*httptest.Server, *cluster.Node, *Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	var n *cluster.Node
	var err error
	// A port picked free can be taken by a parallel test before Raft binds it: retry.
	for attempt := 0; attempt < 10; attempt++ {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		raftAddr := l.Addr().String()
		l.Close()
		n, err = cluster.Start(cluster.Config{ID: "solo", RaftAddr: raftAddr, HTTPURL: "http://" + ts.Listener.Addr().String(), DataDir: t.TempDir(),
			HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		p = props.Defaults()
	}
	s, err := New(control(Options{Roles: roles, Node: n, Props: p, Logger: log}))
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(func() { ts.Close(); n.Shutdown() })
	eventually.True(t, "the single node to lead", n.IsLeader)
	return ts, n, s
}

// control returns o with the leader runtime of its control roles started on
// o.Node, as process.StartServer wires it: the coordinator's inventory and
// placement, the overlord's task runner and its supervisor runtime. They stop
// when the node shuts down.
func control(o Options) Options {
	p, log := o.Props, o.Logger
	if p == nil {
		p = props.Defaults()
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if slices.Contains(o.Roles, RoleCoordinator) {
		o.Coordinator = coordinator.Start(o.Node, coordinator.ConfigFromProps(p, log))
	}
	if slices.Contains(o.Roles, RoleOverlord) {
		o.Overlord = overlord.Attach(o.Node, overlord.ConfigFromProps(p, log))
		o.Supervisors = o.Overlord.StartSupervisors(streaming.StateConfigFromProps(p, log), log.Named("supervisor"))
	}
	return o
}

func call(t *testing.T, method, url, ctype, body string) (int, string, http.Header) {
	t.Helper()
	return callWith(t, method, url, ctype, body, nil)
}

// callWith is call with extra request headers.
func callWith(t *testing.T, method, url, ctype, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestCoordinatorConfigDefaultsAndMerge(t *testing.T) {
	ts, _ := single(t, nil)
	code, body, _ := call(t, "GET", ts.URL+"/svc/coordinator/v1/config", "", "")
	var cfg map[string]any
	if err := json.Unmarshal([]byte(body), &cfg); err != nil || code != 200 {
		t.Fatalf("GET: %d %s", code, body)
	}
	for _, f := range []string{"millisToWaitBeforeDeleting", "mergeBytesLimit", "mergeSegmentsLimit", "maxSegmentsToMove",
		"percentOfSegmentsToConsiderPerMove", "useBatchedSegmentSampler", "replicantLifetime", "replicationThrottleLimit",
		"balancerComputeThreads", "emitBalancingStats", "killDataSourceWhitelist", "killPendingSegmentsSkipList",
		"maxSegmentsInNodeLoadingQueue", "decommissioningNodes", "decommissioningMaxPercentOfMaxSegmentsToMove",
		"pauseCoordination", "replicateAfterLoadTimeout", "maxNonPrimaryReplicantsToLoad", "useRoundRobinSegmentAssignment",
		"smartSegmentLoading", "debugDimensions"} {
		if _, ok := cfg[f]; !ok {
			t.Errorf("GET config lacks %s", f)
		}
	}
	if cfg["millisToWaitBeforeDeleting"] != 900000.0 || cfg["maxNonPrimaryReplicantsToLoad"] != 2147483647.0 || cfg["debugDimensions"] != nil {
		t.Errorf("defaults wrong: %v", cfg)
	}
	if code, body, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/config", "application/json", `{"maxSegmentsToMove":9}`); code != 200 || body != "" {
		t.Fatalf("POST 1: %d %q", code, body)
	}
	if code, _, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/config", "application/json; charset=utf-8", `{"decommissioningNodes":"h1:8083,h2:8083"}`); code != 200 {
		t.Fatalf("POST 2: %d", code)
	}
	_, body, _ = call(t, "GET", ts.URL+"/svc/coordinator/v1/config", "", "")
	if !strings.Contains(body, `"maxSegmentsToMove":9,`) || !strings.Contains(body, `"decommissioningNodes":["h1:8083","h2:8083"]`) {
		t.Fatalf("merge lost a field: %s", body)
	}
}

func TestBadInputLeavesStateUnchanged(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.server.http.maxRequestBytes", "1024")
	ts, n := single(t, p)
	_, before, _ := call(t, "GET", ts.URL+"/svc/coordinator/v1/config", "", "")
	cases := []struct {
		method, path, ctype, body string
		status                    int
		msg                       string
	}{
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"maxSegmentsToMove":`, 400, "malformed JSON"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `not json`, 400, "JSON object"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"maxSegmentsToMove":"many"}`, 400, "maxSegmentsToMove"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"pauseCoordination":"maybe"}`, 400, "pauseCoordination"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"maxSegmentsToMove":[5]}`, 400, "maxSegmentsToMove"},
		{"GET", "/svc/coordinator/v1/config/history?interval=%zz", "", "", 400, "malformed query string"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"maxSegmentsToMove":5,"decommissioningMaxPercentOfMaxSegmentsToMove":150}`, 400, "should be in range [0, 100]"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"maxNonPrimaryReplicantsToLoad":-1}`, 400, "greater than or equal to 0"},
		{"POST", "/svc/coordinator/v1/config", "text/plain", `{"maxSegmentsToMove":5}`, 415, "application/json"},
		{"POST", "/svc/coordinator/v1/config", "", `{"maxSegmentsToMove":5}`, 415, "application/json"},
		{"POST", "/svc/coordinator/v1/config", "application/json", `{"killDataSourceWhitelist":"` + strings.Repeat("x", 2000) + `"}`, 413, "limit"},
		{"POST", "/svc/indexer/v1/worker", "application/json", `{"selectStrategy":{"type":"nope"}}`, 400, "selectStrategy"},
		{"POST", "/svc/indexer/v1/worker", "application/xml", `<x/>`, 415, "application/json"},
		{"GET", "/svc/coordinator/v1/config/history?count=0", "", "", 400, "Limit must be greater than zero!"},
		{"GET", "/svc/coordinator/v1/config/history?count=-5", "", "", 400, "Limit must be greater than zero!"},
		{"GET", "/svc/coordinator/v1/config/history?count=abc", "", "", 400, "count"},
		{"GET", "/svc/indexer/v1/worker/history?interval=yesterday", "", "", 400, "interval"},
		{"DELETE", "/svc/coordinator/v1/config", "", "", 405, "not allowed"},
		{"GET", "/svc/nothing/here", "", "", 404, "no such endpoint"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			code, body, h := call(t, c.method, ts.URL+c.path, c.ctype, c.body)
			var e ErrorBody
			if code != c.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, c.msg) || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("%s %s %q: got %d %s, want %d with %q", c.method, c.path, c.body, code, body, c.status, c.msg)
			}
		})
	}
	_, after, _ := call(t, "GET", ts.URL+"/svc/coordinator/v1/config", "", "")
	if before != after {
		t.Fatalf("state changed:\n%s\n%s", before, after)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/worker", "", ""); code != 200 || body != "" {
		t.Fatalf("worker config changed: %d %q", code, body)
	}
	var nAudit int
	n.FSM().Read(func(s *fsmState) { nAudit = s.AuditLen() })
	if nAudit != 0 {
		t.Fatalf("%d audit entries written by rejected requests", nAudit)
	}
}

func TestHistoryIntervalAndCount(t *testing.T) {
	ts, _ := single(t, nil)
	for i := 1; i <= 3; i++ {
		req, _ := http.NewRequest("POST", ts.URL+"/svc/indexer/v1/worker", strings.NewReader(fmt.Sprintf(`{"selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"ds%d":["h:1"]}}}}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Svc-Author", fmt.Sprintf("u%d", i))
		req.Header.Set("X-Svc-Comment", "why")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %d: %v %v", i, err, resp.StatusCode)
		}
		resp.Body.Close()
		time.Sleep(2 * time.Millisecond)
	}
	get := func(q string) []auditEntryJSON {
		code, body, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/worker/history"+q, "", "")
		var out []auditEntryJSON
		if code != 200 || json.Unmarshal([]byte(body), &out) != nil {
			t.Fatalf("history%s: %d %s", q, code, body)
		}
		return out
	}
	all := get("")
	if len(all) != 3 || all[0].AuditInfo.Author != "u1" || all[2].AuditInfo.Author != "u3" || all[0].Type != "worker.config" || all[0].Key != "worker.config" {
		t.Fatalf("default window, oldest first: %+v", all)
	}
	if !strings.Contains(all[0].Payload, `"ds1"`) || !strings.HasSuffix(all[0].AuditTime, "Z") || all[0].AuditInfo.Comment != "why" {
		t.Fatalf("entry: %+v", all[0])
	}
	two := get("?count=2")
	if len(two) != 2 || two[0].AuditInfo.Author != "u3" || two[1].AuditInfo.Author != "u2" {
		t.Fatalf("count=2 newest first: %+v", two)
	}
	if got := get("?interval=2000-01-01/2000-02-01"); len(got) != 0 {
		t.Fatalf("old interval: %+v", got)
	}
	if got := get("?interval=2000-01-01/2100-01-01&count=1"); len(got) != 3 || got[0].AuditInfo.Author != "u1" {
		t.Fatalf("interval wins over count: %+v", got)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc/coordinator/v1/config/history", "", ""); code != 200 || body != "[]" {
		t.Fatalf("empty history: %d %q", code, body)
	}
	_, body, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/worker", "", "")
	if !strings.Contains(body, `"ds3"`) || !strings.Contains(body, `"autoScaler":null`) || !strings.Contains(body, `"type":"default"`) {
		t.Fatalf("worker config: %s", body)
	}
}

func TestStatusEndpoints(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.s3.secretKey", "hush")
	p.Set("svc.custom.visible", "yes")
	ts, _ := single(t, p)
	code, body, _ := call(t, "GET", ts.URL+"/status", "", "")
	var st statusInfo
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Version == "" || len(st.Modules) != 2 || st.Memory.TotalMemory <= 0 || st.Memory.UsedMemory+st.Memory.FreeMemory != st.Memory.TotalMemory {
		t.Fatalf("/status: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/status/health", "", ""); code != 200 || body != "true" {
		t.Fatalf("health: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", ts.URL+"/status/properties", "", "")
	var m map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &m) != nil {
		t.Fatalf("properties: %d %s", code, body)
	}
	if _, leaked := m["svc.s3.secretKey"]; leaked || m["svc.custom.visible"] != "yes" || m["svc.server.hiddenProperties"] == "" {
		t.Fatalf("properties filtering: %v", m)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/status/selfDiscovered/status", "", ""); code != 200 || body != `{"selfDiscovered":true}` {
		t.Fatalf("selfDiscovered/status: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/status/selfDiscovered", "", ""); code != 200 || body != "" {
		t.Fatalf("selfDiscovered: %d %q", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/workers", "", ""); code != 200 || body != "[]" {
		t.Fatalf("workers: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/scaling", "", ""); code != 200 || body != "" {
		t.Fatalf("scaling: %d %q", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc/coordinator/v1/isLeader", "", ""); code != 200 || body != `{"leader":true}` {
		t.Fatalf("isLeader: %d %s", code, body)
	}
	if code, body, h := call(t, "GET", ts.URL+"/svc/coordinator/v1/leader", "", ""); code != 200 || body != ts.URL || h.Get("Content-Type") != "application/json" {
		t.Fatalf("leader: %d %s", code, body)
	}
}

// A node that is not part of a cluster yet answers 503 on selfDiscovered and on
// leader-only endpoints, with a JSON error.
func TestNotDiscoveredYet(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	raftAddr := l.Addr().String()
	l.Close()
	// Two peers listed, the other never starts: no quorum, no leader.
	n, err := cluster.Start(cluster.Config{ID: "a", RaftAddr: raftAddr, HTTPURL: "http://127.0.0.1:1", DataDir: t.TempDir(),
		Peers: []cluster.Peer{{ID: "a", RaftAddr: raftAddr, HTTPURL: "http://127.0.0.1:1"}, {ID: "b", RaftAddr: "127.0.0.1:9", HTTPURL: "http://127.0.0.1:2"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	s, _ := New(control(Options{Roles: []string{RoleCoordinator, RoleOverlord}, Node: n}))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if code, _, _ := call(t, "GET", ts.URL+"/status/selfDiscovered", "", ""); code != 503 {
		t.Fatalf("selfDiscovered: %d", code)
	}
	if _, body, _ := call(t, "GET", ts.URL+"/status/selfDiscovered/status", "", ""); body != `{"selfDiscovered":false}` {
		t.Fatalf("selfDiscovered/status: %s", body)
	}
	code, body, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/config", "application/json", `{}`)
	if code != 503 || !strings.Contains(body, `"error"`) {
		t.Fatalf("leader-only without leader: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/isLeader", "", ""); code != 404 || body != `{"leader":false}` {
		t.Fatalf("isLeader: %d %s", code, body)
	}
}

// The Go profiler is served only when svc.debug.pprof is on.
func TestPprofEndpoint(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int
	}{{"", 404}, {"false", 404}, {"true", 200}} {
		t.Run(fmt.Sprintf("svc.debug.pprof=%q", tc.value), func(t *testing.T) {
			p := props.Defaults()
			if tc.value != "" {
				p.Set("svc.debug.pprof", tc.value)
			}
			s, err := New(Options{Roles: []string{RoleRouter}, Props: p})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s.Handler())
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
				if code, body, _ := call(t, "GET", ts.URL+path, "", ""); code != tc.want || (code == 200 && !strings.Contains(body, "goroutine")) {
					t.Errorf("svc.debug.pprof=%q: GET %s = %d %.60s", tc.value, path, code, body)
				}
			}
			ts.Close()
		})
	}
	p := props.Defaults()
	p.Set("svc.debug.pprof", "maybe")
	if _, err := New(Options{Roles: []string{RoleRouter}, Props: p}); err == nil {
		t.Error("svc.debug.pprof=maybe accepted")
	}
}

// Load balancers probe with HEAD and OPTIONS; both work wherever GET does.
// Internal calls (a task publishing a large ingestion's segments) are held to
// svc.server.http.maxInternalRequestBytes, not the public limit.
func TestInternalBodyLimit(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.server.http.maxRequestBytes", "1024")
	p.Set("svc.server.http.maxInternalRequestBytes", "4096")
	ts, _ := single(t, p)
	pad := strings.Repeat(" ", 2000)
	if code, body, _ := call(t, "POST", ts.URL+"/svc-internal/v1/segments/publish", "application/json", `{"segments":[]}`+pad); code == 413 {
		t.Fatalf("internal publish of 2 kB refused by the public limit: %s", body)
	}
	if code, body, _ := call(t, "POST", ts.URL+"/svc-internal/v1/segments/publish", "application/json", `{}`+strings.Repeat(" ", 5000)); code != 413 || !strings.Contains(body, "maxInternalRequestBytes") {
		t.Fatalf("internal body over its limit: %d %s", code, body)
	}
	if code, _, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/config", "application/json", `{}`+pad); code != 413 {
		t.Fatalf("public body over the public limit: %d", code)
	}
}

func TestHeadAndOptions(t *testing.T) {
	ts, _ := single(t, nil)
	for _, path := range []string{"/status/health", "/svc/coordinator/v1/isLeader", "/svc/coordinator/v1/config"} {
		code, body, h := call(t, "HEAD", ts.URL+path, "", "")
		if code != 200 || body != "" || h.Get("Content-Type") != "application/json" {
			t.Errorf("HEAD %s: %d %q %v", path, code, body, h)
		}
	}
	code, body, h := call(t, "OPTIONS", ts.URL+"/svc/coordinator/v1/config", "", "")
	if code != 200 || body != "" || h.Get("Allow") != "GET, HEAD, POST, OPTIONS" {
		t.Errorf("OPTIONS config: %d %q Allow=%q", code, body, h.Get("Allow"))
	}
	if code, _, h := call(t, "OPTIONS", ts.URL+"/status/health", "", ""); code != 200 || h.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("OPTIONS health: %d Allow=%q", code, h.Get("Allow"))
	}
	if code, body, _ := call(t, "OPTIONS", ts.URL+"/svc/nothing/here", "", ""); code != 404 || !strings.Contains(body, `"error"`) {
		t.Errorf("OPTIONS unknown path: %d %s", code, body)
	}
	// HEAD is GET without the body: it changes nothing and POST-only paths refuse it.
	if code, _, _ := call(t, "HEAD", ts.URL+"/svc/coordinator/v1/datasources/x/markUnused", "", ""); code != 405 {
		t.Errorf("HEAD on a POST-only path: %d, want 405", code)
	}
}

// A query string that does not decode is an error, not a silently dropped
// parameter (which would turn a bad history interval into the default week).
func TestMalformedQueryString(t *testing.T) {
	ts, _ := single(t, nil)
	code, body, h := call(t, "GET", ts.URL+"/svc/coordinator/v1/config/history?interval=%zz", "", "")
	if code != 400 || !strings.Contains(body, "malformed query string") || h.Get("Content-Type") != "application/json" {
		t.Fatalf("bad escape: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", ts.URL+"/svc/coordinator/v1/config/history?interval=garbage", "", "")
	if code != 400 || strings.Count(body, "invalid interval") != 1 {
		t.Fatalf("bad interval: %d %s", code, body)
	}
}

// The audit ip is the peer's address; X-Forwarded-For counts only from a
// trusted proxy (svc.server.trustedProxies), read from the right.
func TestAuditIPTrustsOnlyConfiguredProxies(t *testing.T) {
	post := func(ts string, xff string) string {
		t.Helper()
		code, body, _ := callWith(t, "POST", ts+"/svc/coordinator/v1/config", "application/json", `{}`, map[string]string{"X-Forwarded-For": xff})
		if code != 200 {
			t.Fatalf("POST: %d %s", code, body)
		}
		_, body, _ = call(t, "GET", ts+"/svc/coordinator/v1/config/history?count=1", "", "")
		var h []struct {
			AuditInfo struct{ IP string } `json:"auditInfo"`
		}
		if json.Unmarshal([]byte(body), &h) != nil || len(h) != 1 {
			t.Fatalf("history: %s", body)
		}
		return h[0].AuditInfo.IP
	}
	ts, _ := single(t, nil)
	if ip := post(ts.URL, "6.6.6.6"); ip != "127.0.0.1" {
		t.Errorf("untrusted peer's X-Forwarded-For believed: ip %q", ip)
	}
	p := props.Defaults()
	p.Set("svc.server.trustedProxies", "10.0.0.0/8, 127.0.0.1")
	ts2, _ := single(t, p)
	if ip := post(ts2.URL, "6.6.6.6, 203.0.113.9, 10.1.2.3"); ip != "203.0.113.9" {
		t.Errorf("through trusted proxies: ip %q, want the first untrusted hop from the right", ip)
	}
	if ip := post(ts2.URL, "not-an-ip"); ip != "127.0.0.1" {
		t.Errorf("garbage X-Forwarded-For: ip %q", ip)
	}
	bad := props.Defaults()
	bad.Set("svc.server.trustedProxies", "somewhere")
	if _, err := New(Options{Props: bad}); err == nil || !strings.Contains(err.Error(), "svc.server.trustedProxies") {
		t.Errorf("bad trustedProxies accepted: %v", err)
	}
}

// SQL task requests with a field of the wrong type get a user-facing 400
// (shape E), naming the field, with no Go type names.
func TestSQLTaskRequestErrors(t *testing.T) {
	ts, _ := single(t, nil)
	for body, want := range map[string]string{
		`{"query":"SELECT 1","context":"x"}`: `field \"context\" must be an object`,
		`{"query":5}`:                        `field \"query\" must be a string`,
		`{"query":"SELECT 1"`:                `malformed JSON`,
	} {
		code, got, _ := call(t, "POST", ts.URL+"/svc/v2/sql/task", "application/json", body)
		if code != 400 || !strings.Contains(got, want) || !strings.Contains(got, `"errorCode":"invalidInput"`) || strings.Contains(got, "Go ") || strings.Contains(got, "map[") {
			t.Errorf("%s: %d %s", body, code, got)
		}
	}
}
