package process

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/props"
)

// A control node and a broker and a historical given only
// svc.discovery.coordinators: each announces itself, /servers lists all
// three with their roles and state, the broker's /status names the leader,
// a member that stops renewing its lease is marked gone, and one that stops
// cleanly is gone at once. Bad announcements are refused with 400 and
// change nothing.
func TestDiscoveryThroughTheControlPlane(t *testing.T) {
	ports := freePorts(t, 4)
	ctlURL := "http://" + ports[0]
	start := func(roles, addr string, extra map[string]string) *Process {
		p := props.Defaults()
		p.Set("svc.node.id", "n-"+addr)
		p.Set("svc.node.roles", roles)
		p.Set("svc.http.address", addr)
		p.Set("svc.data.dir", t.TempDir())
		p.Set("svc.discovery.coordinators", ctlURL)
		p.Set("svc.discovery.heartbeatPeriod", "100ms")
		p.Set("svc.discovery.leaseTimeout", "1s")
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
	ctl := start("coordinator,overlord", ports[0], map[string]string{"svc.raft.address": ports[1],
		"svc.storage.storageDirectory": t.TempDir()})
	eventually.True(t, "a leader", ctl.Node.IsLeader, slow)
	brk := start("broker", ports[2], nil)
	start("historical", ports[3], map[string]string{"svc.server.tier": "hot"})

	type server struct {
		Host, Type, Role, State string
		Tier                    *string
		MaxSize                 int64
	}
	servers := func() map[string]server {
		_, _, body := do(t, "GET", ctlURL+"/svc/coordinator/v1/servers?simple", "", "", nil)
		var list []server
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("servers?simple: %v %s", err, body)
		}
		out := map[string]server{}
		for _, s := range list {
			out[s.Host] = s
		}
		return out
	}
	var last map[string]server
	eventually.True(t, "every process live in /servers", func() bool {
		last = servers()
		// The historical's size shows once the coordinator has polled it.
		return len(last) == 3 && last[ports[0]].State == "live" && last[ports[2]].State == "live" && last[ports[3]].State == "live" &&
			last[ports[3]].MaxSize > 0
	}, slow, eventually.Showing(func() string { return fmt.Sprint(last) }))
	if s := last[ports[3]]; s.Type != "historical" || s.Role != "historical" || s.Tier == nil || *s.Tier != "hot" || s.MaxSize <= 0 {
		t.Errorf("historical: %+v", s)
	}
	if s := last[ports[2]]; s.Type != "broker" || s.Role != "broker" {
		t.Errorf("broker: %+v", s)
	}
	if s := last[ports[0]]; s.Role != "coordinator,overlord" {
		t.Errorf("control node: %+v", s)
	}
	if _, _, names := do(t, "GET", ctlURL+"/svc/coordinator/v1/servers", "", "", nil); !strings.Contains(names, `"`+ports[2]+`"`) {
		t.Errorf("servers: %s", names)
	}
	if code, _, one := do(t, "GET", ctlURL+"/svc/coordinator/v1/servers/"+ports[2]+"?simple", "", "", nil); code != 200 ||
		!strings.Contains(one, `"type":"broker"`) || !strings.Contains(one, `"state":"live"`) {
		t.Errorf("servers/%s: %d %s", ports[2], code, one)
	}
	if code, _, _ := do(t, "GET", ctlURL+"/svc/coordinator/v1/servers/127.0.0.1:1", "", "", nil); code != 404 {
		t.Errorf("unknown server: %d", code)
	}
	// The broker's /status names the leader; its membership catches up
	// with its next heartbeat.
	var st string
	eventually.True(t, "the broker's /status to show discovery", func() bool {
		_, _, st = do(t, "GET", "http://"+ports[2]+"/status", "", "", nil)
		var status struct {
			Discovery struct {
				Leader   string   `json:"leader"`
				Members  int      `json:"members"`
				Warnings []string `json:"warnings"`
			} `json:"discovery"`
		}
		return json.Unmarshal([]byte(st), &status) == nil && status.Discovery.Leader == ctlURL && status.Discovery.Members >= 3 &&
			status.Discovery.Warnings != nil && len(status.Discovery.Warnings) == 0
	}, slow, eventually.Showing(func() string { return st }))

	// Bad announcements: 400, nothing joins.
	for _, body := range []string{`{`, `{}`, `{"id":"x:1","url":"http://x:1"}`, `{"id":"x:1","roles":["broker"]}`, `{"id":"x:1","roles":["broker"],"url":"http://x:1","capacity":-1}`} {
		if code, _, resp := do(t, "POST", ctlURL+"/svc-internal/v1/discovery/announce", "application/json", body, nil); code != http.StatusBadRequest || !strings.Contains(resp, `"error"`) {
			t.Errorf("announce %s: %d %s", body, code, resp)
		}
	}
	if got := servers(); len(got) != 3 {
		t.Fatalf("after bad announcements: %v", got)
	}

	// A member that announces once and falls silent is marked gone after
	// its lease.
	ghost := `{"id":"127.0.0.1:9","roles":["middleManager"],"url":"http://127.0.0.1:9","capacity":2,"startTimeMs":1}`
	if code, _, resp := do(t, "POST", ctlURL+"/svc-internal/v1/discovery/announce", "application/json", ghost, nil); code != 200 || !strings.Contains(resp, `"127.0.0.1:9"`) {
		t.Fatalf("announce: %d %s", code, resp)
	}
	if s := servers()["127.0.0.1:9"]; s.State != "live" || s.Type != "indexer-executor" {
		t.Fatalf("ghost after announcing: %+v", s)
	}
	announced := time.Now()
	eventually.True(t, "the silent member gone", func() bool { return servers()["127.0.0.1:9"].State == "gone" }, slow)
	if d := time.Since(announced); d < time.Second {
		t.Fatalf("gone after %s, before its 1s lease ran out", d)
	}

	// A process that stops says goodbye: gone well before its lease.
	brk.Close()
	stopped := time.Now()
	eventually.True(t, "the stopped broker gone", func() bool { return servers()[ports[2]].State == "gone" }, slow)
	if d := time.Since(stopped); d > 900*time.Millisecond {
		t.Errorf("the broker that left was marked gone after %s", d)
	}
}

// The stall of issue 20: a middle manager started with only the control
// nodes' addresses runs a SQL INSERT while no broker has joined. Its load
// waiter finds no broker through discovery, gives up after
// svc.coordinator.loadTimeout (not 300 s on a default broker address),
// says why in the task report, and the datasource's lock is free for the
// next INSERT.
func TestSQLTaskWithoutBrokersEndsAtLoadTimeout(t *testing.T) {
	inputs := t.TempDir()
	ctlURL := startControlAndWorker(t, inputs, "2s", 2)
	input := inputs + "/in.json"
	if err := os.WriteFile(input, []byte(`{"timestamp":"2024-01-01T00:00:00Z","page":"a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sql, _ := json.Marshal(map[string]string{"query": `INSERT INTO w SELECT TIME_PARSE("timestamp") AS __time, page
FROM TABLE(EXTERN('{"type":"local","files":["` + input + `"]}', '{"type":"json"}', '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"}]'))
PARTITIONED BY DAY`})
	for i := 0; i < 2; i++ { // the second needs the lock the first held
		code, _, body := do(t, "POST", ctlURL+"/svc/v2/sql/task", "application/json", string(sql), nil)
		var sub struct {
			TaskID string `json:"taskId"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &sub) != nil || sub.TaskID == "" {
			t.Fatalf("submit: %d %s", code, body)
		}
		submitted := time.Now()
		var status string
		eventually.True(t, "the task to end", func() bool {
			_, _, status = do(t, "GET", ctlURL+"/svc/indexer/v1/task/"+sub.TaskID+"/status", "", "", nil)
			return strings.Contains(status, `"status":"SUCCESS"`) || strings.Contains(status, `"status":"FAILED"`)
		}, eventually.Within(30*time.Second), eventually.Showing(func() string { return status }))
		if took := time.Since(submitted); took > 20*time.Second {
			t.Fatalf("task %d took %s with svc.coordinator.loadTimeout=2s", i, took)
		}
		_, _, report := do(t, "GET", ctlURL+"/svc/indexer/v1/task/"+sub.TaskID+"/reports", "", "", nil)
		if !strings.Contains(status, `"status":"SUCCESS"`) || !strings.Contains(report, `"state":"TIMED_OUT"`) || !strings.Contains(report, "no broker is known") {
			t.Fatalf("task %d: %s\nreport: %s", i, status, report)
		}
	}
}
