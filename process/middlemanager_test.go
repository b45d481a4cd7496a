package process

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/props"
)

// A task keeps running on its middle manager while the control plane loses its
// leader; the new leader adopts it and records its success.
func TestTaskSurvivesLeaderLoss(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"svc.worker.heartbeatTimeout": "3s"})
	l := c.leader()
	var urls []string
	for i := range c.procs {
		urls = append(urls, c.url(i))
	}
	mp := props.Defaults()
	mp.Set("svc.node.roles", "middleManager")
	mp.Set("svc.http.address", freePorts(t, 1)[0])
	mp.Set("svc.data.dir", t.TempDir())
	mp.Set("svc.worker.overlordUrls", strings.Join(urls, ","))
	mp.Set("svc.worker.capacity", "2")
	mp.Set("svc.worker.heartbeatPeriod", "100ms")
	mmProc, err := StartServer(mp, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	worker := middlemanager.Attached(mp)
	if worker == nil {
		t.Fatal("no worker attached")
	}
	t.Cleanup(func() {
		mmProc.Close()
		<-worker.Done()
	})
	host := mp.String("svc.http.address")
	eventually.True(t, "the worker to register", func() bool {
		_, _, body := do(t, "GET", c.url(l)+"/svc/indexer/v1/workers", "", "", nil)
		return strings.Contains(body, `"host":"`+host+`"`)
	}, slow)

	// A follower redirects the submission to the leader.
	f := (l + 1) % 3
	spec := `{"type":"noop","id":"survivor","runTime":2500}`
	code, h, _ := do(t, "POST", c.url(f)+"/svc/indexer/v1/task", "application/json", spec, nil)
	if code != http.StatusTemporaryRedirect || h.Get("Location") != c.url(l)+"/svc/indexer/v1/task" {
		t.Fatalf("follower: %d %v", code, h)
	}
	if code, _, body := do(t, "POST", h.Get("Location"), "application/json", spec, nil); code != 200 || body != `{"task":"survivor"}` {
		t.Fatalf("submit: %d %s", code, body)
	}
	eventually.True(t, "the task to start", func() bool {
		started := false
		c.procs[l].Node.FSM().Read(func(s *fsmState) {
			r, ok := s.Task("survivor")
			started = ok && r.StartedMs != 0
		})
		return started
	}, slow)

	c.stop(l)
	nl := c.leader()
	var status map[string]any
	eventually.True(t, "the task to succeed on the new leader", func() bool {
		code, _, body := do(t, "GET", c.url(nl)+"/svc/indexer/v1/task/survivor/status", "", "", nil)
		var out struct {
			Status map[string]any `json:"status"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &out) != nil {
			return false
		}
		status = out.Status
		if status["status"] == "FAILED" {
			t.Fatalf("the task failed across the leader change: %s", body)
		}
		return status["status"] == "SUCCESS"
	}, slow)
	if status["duration"].(float64) < 2400 || status["location"].(map[string]any)["host"] != "127.0.0.1" {
		t.Fatalf("status %v", status)
	}
	code, _, body := do(t, "GET", c.url(nl)+"/svc/indexer/v1/task/survivor/log", "", "", nil)
	if code != 200 || !strings.Contains(body, "Woke up!") {
		t.Fatalf("log through the new leader: %d %q", code, body)
	}
	eventually.True(t, "the new leader to list the worker", func() bool {
		_, _, body := do(t, "GET", c.url(nl)+"/svc/indexer/v1/workers", "", "", nil)
		return strings.Contains(body, `"host":"`+host+`"`)
	}, slow)
	// The worker endpoints answer on the middle manager's own port.
	if code, _, body := do(t, "GET", "http://"+host+"/svc/worker/v1/enabled", "", "", nil); code != 200 || body != `{"`+host+`":true}` {
		t.Fatalf("enabled: %d %s", code, body)
	}
}

// slow is the wait for what whole processes do (elections, registrations,
// segment loads, whole SQL tasks): longer than eventually's default on a shared
// machine. It only bounds a wait, so a generous bound costs a passing test
// nothing; make test on two busy cores once took over 15 s for a SQL task.
var slow = eventually.Within(45 * time.Second)

func TestMiddleManagerConfig(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.http.address", "127.0.0.1:8091")
	p.Set("svc.data.dir", "/tmp/x/")
	if _, err := MiddleManagerConfig(p, hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "svc.worker.overlordUrls") {
		t.Fatalf("no overlord: %v", err)
	}
	p.Set("svc.router.coordinatorUrls", "http://a:8081,http://b:8081")
	p.Set("svc.worker.capacity", "3")
	p.Set("svc.worker.category", "hot")
	cfg, err := MiddleManagerConfig(p, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "127.0.0.1:8091" || cfg.IP != "127.0.0.1" || cfg.Capacity != 3 || cfg.Category != "hot" || cfg.Version != "0" ||
		cfg.DataDir != "/tmp/x" || strings.Join(cfg.Overlords, ",") != "http://a:8081,http://b:8081" || cfg.Scheme != "http" {
		t.Fatalf("config %+v", cfg)
	}
	for k, v := range map[string]string{"svc.worker.capacity": "0", "svc.worker.heartbeatPeriod": "soon"} {
		q := props.New()
		q.Merge(p)
		q.Set(k, v)
		if _, err := MiddleManagerConfig(q, hclog.NewNullLogger()); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}
