package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strata/cluster"
	"strata/fsm"
	"strata/internal/eventually"
	"strata/props"
	"strata/streaming"
)

const supPath = "/svc/indexer/v1/supervisor"

func kafkaSpec(ds, topic string, taskCount int, suspended bool) string {
	return fmt.Sprintf(`{"type":"kafka","spec":{
 "dataSchema":{"dataSource":%q,"timestampSpec":{"column":"ts","format":"iso"},
   "dimensionsSpec":{"dimensions":["page"]},
   "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
 "ioConfig":{"topic":%q,"consumerProperties":{"bootstrap.servers":"localhost:9092"},"taskCount":%d,"inputFormat":{"type":"json"}},
 "tuningConfig":{"type":"kafka"}},"suspended":%v}`, ds, topic, taskCount, suspended)
}

// supServer starts a one-node overlord (real Raft, bbolt, TCP) as single does,
// keeping the Server so that the tests can inject the runtime hooks.
func supServer(t *testing.T, p *props.Properties) (*httptest.Server, *cluster.Node, *Server, *atomic.Int64) {
	t.Helper()
	ts, n, s := singleServer(t, p, RoleOverlord)
	kicks := new(atomic.Int64)
	s.SetSupervisorKick(func() { kicks.Add(1) })
	return ts, n, s, kicks
}

func want(t *testing.T, what string, code int, body string, wantCode int, contains ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("%s: status %d (want %d): %s", what, code, wantCode, body)
	}
	for _, c := range contains {
		if !strings.Contains(body, c) {
			t.Fatalf("%s: body %s lacks %s", what, body, c)
		}
	}
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// fakeStatus is a runtime status source for the tests.
type fakeStatus map[string]streaming.Status

func (f fakeStatus) Status(id string) (streaming.Status, bool) {
	st, ok := f[id]
	return st, ok
}

func (f fakeStatus) FreshStatus(_ context.Context, id string) (streaming.Status, bool) {
	return f.Status(id)
}

func metadataOf(n *cluster.Node, ds string) string {
	var m string
	n.FSM().Read(func(st *fsm.State) { m, _ = st.DataSourceMetadata(ds) })
	return m
}

func TestSupervisorCreateGetList(t *testing.T) {
	ts, _, _, kicks := supServer(t, nil)
	u := ts.URL + supPath
	code, body, _ := call(t, "GET", u, "", "")
	want(t, "empty list", code, body, 200, "[]")
	code, body, _ = call(t, "GET", u+"/history", "", "")
	want(t, "empty history", code, body, 200, "{}")

	code, body, _ = call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 1, false))
	if code != 200 || body != `{"id":"wiki"}` {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body, _ = call(t, "POST", u, "application/json; charset=utf-8", kafkaSpec("logs", "l", 2, true))
	want(t, "create logs", code, body, 200, `{"id":"logs"}`)
	if kicks.Load() != 2 {
		t.Fatalf("kicks %d after two creates", kicks.Load())
	}

	code, body, _ = call(t, "GET", u, "", "")
	want(t, "ids", code, body, 200)
	if body != `["logs","wiki"]` {
		t.Fatalf("ids %s", body)
	}
	// ?state without true is the plain id list; flags are presence-tested.
	_, body, _ = call(t, "GET", u+"?state=false", "", "")
	if body != `["logs","wiki"]` {
		t.Fatalf("state=false %s", body)
	}
	_, body, _ = call(t, "GET", u+"?state=true", "", "")
	states := decode[[]map[string]any](t, body)
	if len(states) != 2 || states[0]["id"] != "logs" || states[0]["state"] != "PENDING" || states[0]["detailedState"] != "PENDING" ||
		states[0]["healthy"] != true || states[0]["suspended"] != true || states[1]["suspended"] != false {
		t.Fatalf("state list %s", body)
	}
	if _, has := states[0]["spec"]; has {
		t.Fatalf("state list carries the spec: %s", body)
	}
	_, body, _ = call(t, "GET", u+"?full", "", "")
	full := decode[[]map[string]any](t, body)
	if len(full) != 2 || full[1]["spec"].(map[string]any)["id"] != "wiki" || full[1]["state"] != "PENDING" {
		t.Fatalf("full list %s", body)
	}
	_, body, _ = call(t, "GET", u+"?system=", "", "")
	sys := decode[[]map[string]any](t, body)
	if len(sys) != 2 || sys[1]["type"] != "kafka" || sys[1]["source"] != "stream" || !strings.Contains(sys[1]["specString"].(string), `"topic":"t"`) {
		t.Fatalf("system list %s", body)
	}
	if _, has := sys[1]["spec"]; has {
		t.Fatalf("system list carries spec: %s", body)
	}

	// GET one: the normalized spec with Druid's defaults.
	code, body, _ = call(t, "GET", u+"/wiki", "", "")
	spec := decode[map[string]any](t, body)
	io := spec["ioConfig"].(map[string]any)
	if code != 200 || spec["type"] != "kafka" || spec["suspended"] != false || io["taskDuration"] != "PT3600S" || io["replicas"] != 1.0 || spec["spec"] == nil {
		t.Fatalf("GET spec: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", u+"/nope", "", "")
	if code != 404 || body != `{"error":"[nope] does not exist"}` {
		t.Fatalf("GET unknown: %d %s", code, body)
	}

	// Status without a runtime: PENDING, from the spec.
	code, body, _ = call(t, "GET", u+"/wiki/status", "", "")
	st := decode[map[string]any](t, body)
	p := st["payload"].(map[string]any)
	if code != 200 || st["id"] != "wiki" || st["generationTime"] == "" || p["dataSource"] != "wiki" || p["stream"] != "t" ||
		p["state"] != "PENDING" || p["detailedState"] != "PENDING" || p["healthy"] != true || p["suspended"] != false ||
		p["durationSeconds"] != 3600.0 || len(p["activeTasks"].([]any)) != 0 {
		t.Fatalf("status: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", u+"/nope/status", "", "")
	want(t, "status unknown", code, body, 404, `"[nope] does not exist"`)
	code, body, _ = call(t, "GET", u+"/wiki/health", "", "")
	want(t, "health", code, body, 200, `{"healthy":true}`)
	code, body, _ = call(t, "GET", u+"/nope/health", "", "")
	want(t, "health unknown", code, body, 404, `{"error":"[nope] does not exist or health check not implemented"}`)
}

func TestSupervisorStatusFromRuntime(t *testing.T) {
	ts, _, srv, _ := supServer(t, nil)
	u := ts.URL + supPath
	call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 1, false))
	call(t, "POST", u, "application/json", kafkaSpec("logs", "l", 1, false))
	srv.SetSupervisorStatus(fakeStatus{"wiki": {State: "UNHEALTHY_SUPERVISOR", DetailedState: "UNABLE_TO_CONNECT_TO_STREAM", Healthy: false,
		Payload: json.RawMessage(`{"dataSource":"wiki","stream":"t","partitions":2,"state":"UNHEALTHY_SUPERVISOR"}`)}})
	code, body, _ := call(t, "GET", u+"/wiki/health", "", "")
	if code != 503 || body != `{"healthy":false}` {
		t.Fatalf("unhealthy: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", u+"/wiki/status", "", "")
	want(t, "runtime status", code, body, 200, `"payload":{"dataSource":"wiki","stream":"t","partitions":2,"state":"UNHEALTHY_SUPERVISOR"}`)
	// A supervisor the runtime does not report is PENDING.
	_, body, _ = call(t, "GET", u+"?state=true", "", "")
	states := decode[[]map[string]any](t, body)
	if states[0]["id"] != "logs" || states[0]["state"] != "PENDING" || states[1]["detailedState"] != "UNABLE_TO_CONNECT_TO_STREAM" || states[1]["healthy"] != false {
		t.Fatalf("states %s", body)
	}
	srv.SetSupervisorStatus(nil)
	code, _, _ = call(t, "GET", u+"/wiki/health", "", "")
	if code != 200 {
		t.Fatalf("health without a runtime: %d", code)
	}
}

func TestSupervisorPostRejectsBadInput(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.server.http.maxRequestBytes", "4096")
	ts, n, _, kicks := supServer(t, p)
	u := ts.URL + supPath
	good := kafkaSpec("wiki", "t", 1, false)
	cases := []struct {
		what, ctype, body string
		status            int
		contains          string
	}{
		{"no content type", "", good, 415, "application/json"},
		{"text", "text/plain", good, 415, "application/json"},
		{"malformed JSON", "application/json", `{"type":"kafka",`, 400, `"error":`},
		{"not an object", "application/json", `[1]`, 400, `"error":`},
		{"other type", "application/json", strings.Replace(good, `"type":"kafka"`, `"type":"kinesis"`, 1), 400, "kinesis"},
		{"no topic", "application/json", strings.Replace(good, `"topic":"t",`, ``, 1), 400, "topic"},
		{"no dataSource", "application/json", strings.Replace(good, `"dataSource":"wiki",`, ``, 1), 400, "dataSource"},
		{"zero replicas", "application/json", strings.Replace(good, `"taskCount":1`, `"taskCount":1,"replicas":0`, 1), 400, "replicas"},
		{"oversize", "application/json", good + strings.Repeat(" ", 5000), 413, "exceeds"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			code, body, _ := call(t, "POST", u, c.ctype, c.body)
			want(t, c.what, code, body, c.status, c.contains)
			if c.status == 400 && !strings.HasPrefix(body, `{"error":"`) {
				t.Fatalf("%s: error body %s", c.what, body)
			}
		})
	}
	n.FSM().Read(func(st *fsm.State) {
		if len(st.Supervisors()) != 0 || len(st.SupervisorIDsWithHistory()) != 0 {
			t.Fatal("a rejected spec was stored")
		}
	})
	if kicks.Load() != 0 {
		t.Fatalf("kicked %d times for rejected requests", kicks.Load())
	}
	code, body, _ := call(t, "DELETE", u, "", "")
	want(t, "wrong method", code, body, 405, "not allowed")
}

func TestSupervisorSuspendResume(t *testing.T) {
	ts, n, _, kicks := supServer(t, nil)
	u := ts.URL + supPath
	call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 1, false))
	call(t, "POST", u, "application/json", kafkaSpec("logs", "l", 1, true))
	k0 := kicks.Load()

	code, body, _ := call(t, "POST", u+"/wiki/suspend", "", "")
	spec := decode[map[string]any](t, body)
	if code != 200 || spec["suspended"] != true || spec["id"] != "wiki" {
		t.Fatalf("suspend: %d %s", code, body)
	}
	code, body, _ = call(t, "POST", u+"/wiki/suspend", "", "")
	if code != 400 || body != `{"error":"[wiki] is already suspended"}` {
		t.Fatalf("suspend twice: %d %s", code, body)
	}
	_, body, _ = call(t, "GET", u+"/wiki", "", "")
	if !strings.Contains(body, `"suspended":true`) {
		t.Fatalf("GET after suspend %s", body)
	}
	code, body, _ = call(t, "POST", u+"/wiki/resume", "", "")
	if code != 200 || decode[map[string]any](t, body)["suspended"] != false {
		t.Fatalf("resume: %d %s", code, body)
	}
	code, body, _ = call(t, "POST", u+"/wiki/resume", "", "")
	if code != 400 || body != `{"error":"[wiki] is already running"}` {
		t.Fatalf("resume twice: %d %s", code, body)
	}
	for _, op := range []string{"suspend", "resume"} {
		code, body, _ = call(t, "POST", u+"/nope/"+op, "", "")
		if code != 404 || body != `{"error":"[nope] does not exist"}` {
			t.Fatalf("%s unknown: %d %s", op, code, body)
		}
	}
	if got := kicks.Load() - k0; got != 2 {
		t.Fatalf("kicks %d for two changes", got)
	}
	// Each change is a version: create, suspend, resume, newest first.
	_, body, _ = call(t, "GET", u+"/wiki/history", "", "")
	h := decode[[]fsm.SupervisorVersion](t, body)
	if len(h) != 3 || !strings.Contains(string(h[0].Spec), `"suspended":false`) || !strings.Contains(string(h[1].Spec), `"suspended":true`) ||
		!strings.Contains(string(h[2].Spec), `"suspended":false`) || h[0].Version < h[1].Version || h[1].Version < h[2].Version {
		t.Fatalf("history %s", body)
	}

	code, body, _ = call(t, "POST", u+"/suspendAll", "", "")
	want(t, "suspendAll", code, body, 200, `{"status":"success"}`)
	n.FSM().Read(func(st *fsm.State) {
		for _, r := range st.Supervisors() {
			if !r.Suspended {
				t.Fatalf("%s not suspended", r.ID)
			}
		}
		if len(st.SupervisorHistory("logs")) != 1 { // was suspended already: no new version
			t.Fatalf("logs history %d", len(st.SupervisorHistory("logs")))
		}
	})
	code, body, _ = call(t, "POST", u+"/resumeAll", "", "")
	want(t, "resumeAll", code, body, 200, `{"status":"success"}`)
	n.FSM().Read(func(st *fsm.State) {
		for _, r := range st.Supervisors() {
			if r.Suspended || strings.Contains(string(r.Spec), `"suspended":true`) {
				t.Fatalf("%s still suspended", r.ID)
			}
		}
	})
	// Nothing to do is still a success.
	code, body, _ = call(t, "POST", u+"/resumeAll", "", "")
	want(t, "resumeAll again", code, body, 200, `{"status":"success"}`)
}

func TestSupervisorResetOffsets(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.server.http.maxRequestBytes", "1024")
	ts, n, _, kicks := supServer(t, p)
	u := ts.URL + supPath
	call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 1, false))
	k0 := kicks.Load()
	good := `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100,"2":650}}}`
	cases := []struct {
		what, id, ctype, body string
		status                int
		contains              string
	}{
		{"text", "wiki", "text/plain", good, 415, "application/json"},
		{"oversize", "wiki", "application/json", good + strings.Repeat(" ", 2000), 413, "exceeds"},
		{"malformed", "wiki", "application/json", `{"type":`, 400, "invalid resetOffsets body"},
		{"unknown id", "nope", "application/json", good, 404, `{"error":"[nope] does not exist"}`},
		{"no type", "wiki", "application/json", `{"partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":1}}}`, 400, `needs \"type\"`},
		{"kinesis", "wiki", "application/json", `{"type":"kinesis","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":1}}}`, 400, "does not match"},
		{"no partitions", "wiki", "application/json", `{"type":"kafka"}`, 400, `needs \"partitions\"`},
		{"bad partitions type", "wiki", "application/json", `{"type":"kafka","partitions":{"type":"middle","stream":"t","partitionOffsetMap":{"0":1}}}`, 400, "middle"},
		{"other stream", "wiki", "application/json", `{"type":"kafka","partitions":{"type":"end","stream":"x","partitionOffsetMap":{"0":1}}}`, 400, "is not the stream"},
		{"bad offset", "wiki", "application/json", `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":-5}}}`, 400, "bad offset"},
		{"bad partition", "wiki", "application/json", `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"p":5}}}`, 400, "bad partition"},
		{"empty", "wiki", "application/json", `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{}}}`, 400, "no partition offsets"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			code, body, _ := call(t, "POST", u+"/"+c.id+"/resetOffsets", c.ctype, c.body)
			want(t, c.what, code, body, c.status, c.contains)
		})
	}
	if m := metadataOf(n, "wiki"); m != "" || kicks.Load() != k0 {
		t.Fatalf("rejected requests changed metadata %q or kicked", m)
	}
	code, body, _ := call(t, "POST", u+"/wiki/resetOffsets", "application/json", good)
	if code != 200 || body != `{"id":"wiki"}` {
		t.Fatalf("resetOffsets: %d %s", code, body)
	}
	if m := metadataOf(n, "wiki"); m != `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100,"2":650}}}` {
		t.Fatalf("metadata %s", m)
	}
	// Aliases; only the listed partitions change.
	code, body, _ = call(t, "POST", u+"/wiki/resetOffsets", "application/json",
		`{"type":"kafka","partitions":{"type":"start","topic":"t","partitionSequenceNumberMap":{"2":7,"1":3}}}`)
	want(t, "resetOffsets aliases", code, body, 200, `{"id":"wiki"}`)
	if m := metadataOf(n, "wiki"); m != `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100,"1":3,"2":7}}}` {
		t.Fatalf("merged metadata %s", m)
	}
	code, body, _ = call(t, "POST", u+"/nope/reset", "", "")
	want(t, "reset unknown", code, body, 404, `{"error":"[nope] does not exist"}`)
	code, body, _ = call(t, "POST", u+"/wiki/reset", "", "")
	if code != 200 || body != `{"id":"wiki"}` {
		t.Fatalf("reset: %d %s", code, body)
	}
	if m := metadataOf(n, "wiki"); m != "" {
		t.Fatalf("metadata after reset %s", m)
	}
	if got := kicks.Load() - k0; got != 3 {
		t.Fatalf("kicks %d for three changes", got)
	}
}

func TestSupervisorTerminateAndHistory(t *testing.T) {
	ts, n, _, _ := supServer(t, nil)
	u := ts.URL + supPath
	call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 1, false))
	call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 3, false)) // update
	call(t, "POST", u, "application/json", kafkaSpec("logs", "l", 1, false))
	call(t, "POST", u, "application/json", kafkaSpec("metrics", "m", 1, false))
	// An unchanged spec with skipRestartIfUnmodified stores no version.
	code, body, _ := call(t, "POST", u+"?skipRestartIfUnmodified=true", "application/json", kafkaSpec("wiki", "t", 3, false))
	want(t, "skip unmodified", code, body, 200, `{"id":"wiki"}`)

	code, body, _ = call(t, "POST", u+"/wiki/terminate", "", "")
	if code != 200 || body != `{"id":"wiki"}` {
		t.Fatalf("terminate: %d %s", code, body)
	}
	code, body, _ = call(t, "POST", u+"/wiki/terminate", "", "")
	if code != 404 || body != `{"error":"[wiki] does not exist"}` {
		t.Fatalf("terminate twice: %d %s", code, body)
	}
	code, body, _ = call(t, "POST", u+"/logs/shutdown", "", "")
	want(t, "shutdown alias", code, body, 200, `{"id":"logs"}`)
	code, body, _ = call(t, "POST", u+"/nope/shutdown", "", "")
	want(t, "shutdown unknown", code, body, 404, `{"error":"[nope] does not exist"}`)
	code, body, _ = call(t, "GET", u+"/wiki", "", "")
	want(t, "GET terminated", code, body, 404, `[wiki] does not exist`)
	_, body, _ = call(t, "GET", u, "", "")
	if body != `["metrics"]` {
		t.Fatalf("ids after terminate %s", body)
	}

	// History: newest first, the tombstone on top, terminated ids included.
	code, body, _ = call(t, "GET", u+"/wiki/history", "", "")
	h := decode[[]fsm.SupervisorVersion](t, body)
	tomb := `{"type":"NoopSupervisorSpec","id":null,"dataSources":["wiki"],"suspended":false,"source":"noop"}`
	if code != 200 || len(h) != 3 || string(h[0].Spec) != tomb || !strings.Contains(string(h[1].Spec), `"taskCount":3`) ||
		!strings.Contains(string(h[2].Spec), `"taskCount":1`) || !strings.HasSuffix(h[0].Version, "Z") {
		t.Fatalf("wiki history: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", u+"/history", "", "")
	all := decode[map[string][]fsm.SupervisorVersion](t, body)
	if code != 200 || len(all) != 3 || len(all["wiki"]) != 3 || len(all["logs"]) != 2 || len(all["metrics"]) != 1 ||
		string(all["logs"][0].Spec) != strings.Replace(tomb, "wiki", "logs", 1) {
		t.Fatalf("all history: %d %s", code, body)
	}
	code, body, _ = call(t, "GET", u+"/nope/history", "", "")
	if code != 404 || body != `{"error":"No history for [nope]."}` {
		t.Fatalf("history unknown: %d %s", code, body)
	}

	// Recreating a terminated supervisor continues its history.
	call(t, "POST", u, "application/json", kafkaSpec("wiki", "t", 2, false))
	_, body, _ = call(t, "GET", u+"/wiki/history", "", "")
	if h := decode[[]fsm.SupervisorVersion](t, body); len(h) != 4 || !strings.Contains(string(h[0].Spec), `"taskCount":2`) {
		t.Fatalf("history after recreate %s", body)
	}

	code, body, _ = call(t, "POST", u+"/terminateAll", "", "")
	want(t, "terminateAll", code, body, 200, `{"status":"success"}`)
	n.FSM().Read(func(st *fsm.State) {
		if len(st.Supervisors()) != 0 || len(st.SupervisorIDsWithHistory()) != 3 {
			t.Fatalf("after terminateAll: %d active, %v", len(st.Supervisors()), st.SupervisorIDsWithHistory())
		}
		if au := st.Audit(fsm.AuditQuery{Type: fsm.AuditSupervisor, Limit: 100}); len(au) != 5 || au[0].Key != "wiki" {
			t.Fatalf("audit %+v", au)
		}
	})
	code, body, _ = call(t, "POST", u+"/terminateAll", "", "")
	want(t, "terminateAll with none", code, body, 200, `{"status":"success"}`)
}

// Supervisor endpoints are leader-only: a follower redirects them (307) to the
// leader with the same path and query.
func TestSupervisorFollowerRedirects(t *testing.T) {
	var servers []*httptest.Server
	var peers []cluster.Peer
	for _, id := range []string{"a", "b"} {
		ts := httptest.NewUnstartedServer(nil)
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		raftAddr := l.Addr().String()
		l.Close()
		servers = append(servers, ts)
		peers = append(peers, cluster.Peer{ID: id, RaftAddr: raftAddr, HTTPURL: "http://" + ts.Listener.Addr().String()})
	}
	var nodes []*cluster.Node
	for i, p := range peers {
		n, err := cluster.Start(cluster.Config{ID: p.ID, RaftAddr: p.RaftAddr, HTTPURL: p.HTTPURL, DataDir: t.TempDir(), Peers: peers,
			HeartbeatTimeout: time.Second, ElectionTimeout: time.Second, LeaderLeaseTimeout: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(control(Options{Roles: []string{RoleOverlord}, Node: n}))
		if err != nil {
			t.Fatal(err)
		}
		servers[i].Config.Handler = s.Handler()
		servers[i].Start()
		nodes = append(nodes, n)
	}
	t.Cleanup(func() {
		for i, n := range nodes {
			servers[i].Close()
			n.Shutdown()
		}
	})
	leader, follower := -1, -1
	eventually.True(t, "a leader known to both nodes", func() bool {
		for i, n := range nodes {
			if n.IsLeader() {
				leader, follower = i, 1-i
			}
		}
		return leader >= 0 && nodes[follower].LeaderURL() != ""
	}, eventually.Within(15*time.Second))
	lu, fu := servers[leader].URL+supPath, servers[follower].URL+supPath
	code, body, _ := call(t, "POST", lu, "application/json", kafkaSpec("wiki", "t", 1, false))
	want(t, "create on leader", code, body, 200, `{"id":"wiki"}`)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ method, path string }{
		{"GET", "?full"}, {"GET", "/wiki/status"}, {"GET", "/history"}, {"POST", ""}, {"POST", "/wiki/suspend"},
		{"POST", "/wiki/resetOffsets"}, {"POST", "/terminateAll"},
	} {
		req, _ := http.NewRequest(c.method, fu+c.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 307 || resp.Header.Get("Location") != lu+c.path {
			t.Fatalf("%s %s on the follower: %d Location %q (want %s)", c.method, c.path, resp.StatusCode, resp.Header.Get("Location"), lu+c.path)
		}
	}
	// Nothing changed through the follower.
	_, body, _ = call(t, "GET", lu, "", "")
	if body != `["wiki"]` {
		t.Fatalf("ids %s", body)
	}
}
