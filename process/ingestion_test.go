package process

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/ingest/input"
	"strata/internal/eventually"
	"strata/props"
)

// TestServerIngestionDefaults: a server started with no svc.ingestion.*
// settings refuses SQL ingestion of /etc/passwd and of a file beside its
// data directory, accepts one in <data>/ingest (created at start), and
// refuses a supervisor whose Kafka bootstrap server is its own HTTP
// listener. Before the policy, /etc/passwd became a task.
func TestServerIngestionDefaults(t *testing.T) {
	ports := freePorts(t, 2)
	data := t.TempDir()
	p := props.Defaults()
	p.Set("svc.node.roles", "coordinator,overlord")
	p.Set("svc.http.address", ports[0])
	p.Set("svc.raft.address", ports[1])
	p.Set("svc.data.dir", data)
	proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Close(); input.SetPolicy(nil) })
	eventually.True(t, "a leader", proc.Node.IsLeader, slow)
	url := "http://" + ports[0]
	beside := filepath.Join(data, "beside.json")
	inside := filepath.Join(data, IngestDir, "wiki.json")
	for _, f := range []string{beside, inside} {
		if err := os.WriteFile(f, []byte(`{"ts":"2024-01-01T00:00:00Z","page":"a"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	submit := func(file string) (int, string) {
		q := `INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time, page FROM TABLE(EXTERN('{"type":"local","files":["` + file +
			`"]}', '{"type":"json"}')) EXTEND (ts VARCHAR, page VARCHAR) PARTITIONED BY DAY`
		body, _ := json.Marshal(map[string]string{"query": q})
		code, _, got := do(t, "POST", url+"/svc/v2/sql/task", "application/json", string(body), nil)
		return code, got
	}
	for _, f := range []string{"/etc/passwd", beside, filepath.Join(data, IngestDir, "..", "beside.json")} {
		if code, got := submit(f); code != 400 || !strings.Contains(got, "svc.ingestion.local.allowedBaseDirs") {
			t.Errorf("%s: %d %s", f, code, got)
		}
	}
	if code, got := submit(inside); code != 200 {
		t.Errorf("%s: %d %s", inside, code, got)
	}
	spec := `{"type":"kafka","spec":{"dataSchema":{"dataSource":"k","timestampSpec":{"column":"ts"},"dimensionsSpec":{"dimensions":[]},
"granularitySpec":{"segmentGranularity":"hour"}},"ioConfig":{"topic":"t","consumerProperties":{"bootstrap.servers":"` + ports[0] +
		`"},"inputFormat":{"type":"json"}}}}`
	code, _, got := do(t, "POST", url+"/svc/indexer/v1/supervisor", "application/json", spec, nil)
	if code != 400 || !strings.Contains(got, "bootstrap.servers") {
		t.Errorf("a supervisor reading Strata's own listener: %d %s", code, got)
	}
}

// TestQuickstartIngestionDirs: quickstart allows its data directory's
// ingest/ folder and the directory it runs in (the README's example), and
// records all its listeners as its own.
func TestQuickstartIngestionDirs(t *testing.T) {
	data := t.TempDir()
	p := QuickstartProps(data)
	pol, err := ingestionPolicy(p, QuickstartBroker)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if !slices.Contains(pol.LocalBaseDirs, filepath.Join(data, IngestDir)) || !slices.Contains(pol.LocalBaseDirs, wd) {
		t.Errorf("dirs %v", pol.LocalBaseDirs)
	}
	for _, a := range []string{QuickstartCoordinator, QuickstartRaft, QuickstartBroker} {
		if !slices.Contains(pol.SelfAddrs, a) {
			t.Errorf("self %v lacks %s", pol.SelfAddrs, a)
		}
	}
	p.Set("svc.ingestion.local.allowedBaseDirs", "[]")
	if pol, err = ingestionPolicy(p); err != nil || len(pol.LocalBaseDirs) != 0 {
		t.Errorf("[] allows %v (%v)", pol.LocalBaseDirs, err)
	}
	p.Set("svc.ingestion.http.allowedProtocols", "http,ftp")
	if _, err := ingestionPolicy(p); err == nil || !strings.Contains(err.Error(), "svc.ingestion.http.allowedProtocols") {
		t.Errorf("ftp: %v", err)
	}
}
