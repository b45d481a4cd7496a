package process

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/props"
)

// Two clusters in one Go process (a test binary, an embedding), each a
// control node and a middle manager with its own deep storage: a SQL task
// of the first cluster publishes to the first cluster. The cluster access
// of tasks (coordinators, deep storage, the brokers to wait on) was one
// process-wide setting that the last middle manager started overwrote, so
// the first cluster's task ran on its own worker, reported SUCCESS, and
// published its segments into the second cluster: its datasource never
// appeared where it was ingested (the console tests' flake with three
// clusters in the binary).
func TestTwoMiddleManagersInOneProcessPublishToTheirOwnCluster(t *testing.T) {
	inputs := t.TempDir()
	input := filepath.Join(inputs, "in.json")
	if err := os.WriteFile(input, []byte(`{"timestamp":"2024-01-01T00:00:00Z","page":"a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No broker: each task waits loadTimeout for one, then succeeds.
	first := startControlAndWorker(t, inputs, "1s", 1)
	second := startControlAndWorker(t, inputs, "1s", 1)

	sql, _ := json.Marshal(map[string]string{"query": `INSERT INTO w SELECT TIME_PARSE("timestamp") AS __time, page
FROM TABLE(EXTERN('{"type":"local","files":["` + input + `"]}', '{"type":"json"}', '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"}]'))
PARTITIONED BY DAY`})
	code, _, body := do(t, "POST", first+"/svc/v2/sql/task", "application/json", string(sql), nil)
	var sub struct {
		TaskID string `json:"taskId"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &sub) != nil || sub.TaskID == "" {
		t.Fatalf("submit: %d %s", code, body)
	}
	var status string
	eventually.True(t, "the task to end", func() bool {
		_, _, status = do(t, "GET", first+"/svc/indexer/v1/task/"+sub.TaskID+"/status", "", "", nil)
		return strings.Contains(status, `"status":"SUCCESS"`) || strings.Contains(status, `"status":"FAILED"`)
	}, eventually.Within(60*time.Second), eventually.Showing(func() string { return status }))
	if !strings.Contains(status, `"status":"SUCCESS"`) {
		t.Fatalf("the task: %s", status)
	}
	segments := func(ctl string) string {
		_, _, body := do(t, "GET", ctl+"/svc/coordinator/v1/metadata/datasources/w/segments", "", "", nil)
		return body
	}
	if got := segments(first); !strings.Contains(got, "2024-01-01") {
		t.Errorf("the first cluster, where the task ran, has no segment of w: %s", got)
	}
	if got := segments(second); strings.Contains(got, "2024-01-01") {
		t.Errorf("the second cluster has the first cluster's segment of w: %s", got)
	}
}

// startControlAndWorker starts a control node (coordinator and overlord) and
// a middle manager of capacity slots, sharing a deep storage of their own
// and reading local inputs under inputs, with no historical or broker (a
// task waits loadTimeout for segments to load, then ends); it returns the
// control node's URL once the middle manager has registered.
func startControlAndWorker(t *testing.T, inputs, loadTimeout string, capacity int) (ctlURL string) {
	t.Helper()
	ports := freePorts(t, 3)
	ctlURL = "http://" + ports[0]
	deep := t.TempDir()
	start := func(roles, addr string, extra map[string]string) {
		p := props.Defaults()
		p.Set("svc.ingestion.local.allowedBaseDirs", inputs)
		p.Set("svc.node.roles", roles)
		p.Set("svc.http.address", addr)
		p.Set("svc.data.dir", t.TempDir())
		p.Set("svc.storage.storageDirectory", deep)
		p.Set("svc.discovery.coordinators", ctlURL)
		p.Set("svc.discovery.heartbeatPeriod", "100ms")
		p.Set("svc.coordinator.loadTimeout", loadTimeout)
		for k, v := range extra {
			p.Set(k, v)
		}
		proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proc.Close() })
	}
	start("coordinator,overlord", ports[0], map[string]string{"svc.raft.address": ports[1]})
	start("middleManager", ports[2], map[string]string{"svc.worker.capacity": strconv.Itoa(capacity), "svc.worker.heartbeatPeriod": "100ms"})
	eventually.True(t, "the middle manager to register", func() bool {
		_, _, body := do(t, "GET", ctlURL+"/svc/indexer/v1/workers", "", "", nil)
		return strings.Contains(body, ports[2])
	}, slow)
	return ctlURL
}
