package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
)

// postAs posts body to node i's path with an author, until acknowledged.
func (c *procCluster) postAs(i int, path, body, author string) {
	c.t.Helper()
	var last string
	eventually.True(c.t, "write "+path+" acknowledged", func() bool {
		req, _ := http.NewRequest("POST", "http://"+c.nodes[i].http+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Svc-Author", author)
		req.Header.Set("X-Svc-Comment", "by "+author)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err.Error()
			return false
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK
	}, eventually.Within(20*time.Second), eventually.Showing(func() string { return last }))
}

// auditLogJSON runs `strata audit log --json` and returns the indexes and
// records it prints.
func auditLogJSON(t *testing.T, args ...string) ([]uint64, []map[string]any) {
	t.Helper()
	code, out, errOut := capture(t, append([]string{"audit", "log", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("audit log %v: exit %d\n%s%s", args, code, out, errOut)
	}
	var idx []uint64
	var recs []map[string]any
	for line := range strings.Lines(out) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit log %v: line %q: %v", args, line, err)
		}
		idx = append(idx, uint64(r["index"].(float64)))
		recs = append(recs, r)
	}
	return idx, recs
}

// `strata audit log` on three real processes whose logs are trimmed: the
// oldest commands are still listed (from the archive), filtered by author,
// datasource and type, online (--url) and from a stopped node's directory
// (--data), with the same answer.
func TestAuditLogCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three strata processes")
	}
	c := newProcCluster(t, 3)
	for i := range c.nodes {
		c.start(i)
	}
	l := c.leader()
	url := func(i int) string { return "http://" + c.nodes[i].http }
	for v := 1; v <= 20; v++ {
		c.postAs(l, "/svc/coordinator/v1/config", fmt.Sprintf(`{"maxSegmentsToMove":%d}`, v), []string{"alice", "bob"}[v%2])
	}
	c.postAs(l, "/svc/coordinator/v1/rules/wiki", `[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`, "carol")
	// A supervisor that cannot reach Kafka: its runtime records its states,
	// commands that name the supervisor only.
	c.postAs(l, "/svc/indexer/v1/supervisor", `{"type":"kafka","spec":{"dataSchema":{"dataSource":"events",
	  "timestampSpec":{"column":"ts","format":"iso"},"dimensionsSpec":{"dimensions":["page"]},
	  "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
	  "ioConfig":{"topic":"events","consumerProperties":{"bootstrap.servers":"127.0.0.1:1"},"taskCount":1,
	  "startDelay":"PT0S","period":"PT0.2S","inputFormat":{"type":"json"}},"tuningConfig":{"type":"kafka"}}}`, "dave")
	eventually.True(t, "a supervisor state", func() bool {
		code, out, _ := capture(t, "audit", "log", "--json", "--url", url(l), "--type", "supervisor.state", "--limit", "1")
		return code == 0 && out != ""
	}, eventually.Within(20*time.Second))
	f := (l + 1) % 3
	eventually.True(t, "the follower's archive to hold the first entries", func() bool {
		m, ok := readManifest(c.nodes[f].data)
		return ok && len(m.Chunks) > 0 && m.Chunks[0].First == 1
	}, eventually.Within(20*time.Second))

	// Online: bob's ten config changes, newest first, the oldest from the archive.
	idx, recs := auditLogJSON(t, "--url", url(f), "--author", "bob", "--limit", "0")
	if len(idx) != 10 || !slices.IsSortedFunc(idx, func(a, b uint64) int { return int(b) - int(a) }) {
		t.Fatalf("bob's commands: %v", idx)
	}
	m, _ := readManifest(c.nodes[f].data)
	if idx[9] > m.Chunks[len(m.Chunks)-1].Last {
		t.Fatalf("bob's oldest command %d is not among the archived entries (up to %d)", idx[9], m.Chunks[len(m.Chunks)-1].Last)
	}
	for _, r := range recs {
		if r["type"] != "coordinator.config.set" || r["author"] != "bob" || r["comment"] != "by bob" {
			t.Fatalf("record %v", r)
		}
	}
	if oldest := recs[9]["command"].(map[string]any)["patch"].(map[string]any)["maxSegmentsToMove"]; oldest != 1.0 {
		t.Fatalf("bob's first change set %v, want 1", oldest)
	}
	// --limit bounds what is printed; filters combine.
	if got, _ := auditLogJSON(t, "--url", url(l), "--author", "bob", "--limit", "3"); !slices.Equal(got, idx[:3]) {
		t.Fatalf("--limit 3: %v, want %v", got, idx[:3])
	}
	if got, _ := auditLogJSON(t, "--url", url(l), "--datasource", "wiki"); len(got) != 1 {
		t.Fatalf("--datasource wiki: %v", got)
	}
	if got, _ := auditLogJSON(t, "--url", url(l), "--type", "coordinator.*", "--author", "alice", "--limit", "0"); len(got) != 10 {
		t.Fatalf("alice's config changes: %v", got)
	}
	// The table form.
	code, out, errOut := capture(t, "audit", "log", "--url", url(f), "--datasource", "wiki")
	if code != 0 || !strings.Contains(out, "INDEX") || !strings.Contains(out, "rules.set") || !strings.Contains(out, "set the retention rules of wiki: loadForever") {
		t.Fatalf("audit log table: exit %d\n%s%s", code, out, errOut)
	}
	// Bad filters are usage errors, whichever the source.
	for _, args := range [][]string{{"--type", "nope"}, {"--since", "yesterday"}, {"--limit", "-1"}, {"extra"}} {
		if code, _, errOut := capture(t, append([]string{"audit", "log", "--url", url(f)}, args...)...); code != 2 || errOut == "" {
			t.Errorf("audit log %v: exit %d, %q", args, code, errOut)
		}
	}

	// Offline: a stopped node's archive and log give the same listing.
	c.stop(f)
	if got, _ := auditLogJSON(t, "--data", c.nodes[f].data, "--author", "bob", "--limit", "0"); !slices.Equal(got, idx) {
		t.Fatalf("--data: %v, online %v", got, idx)
	}
	if got, _ := auditLogJSON(t, "--data", c.nodes[f].data, "--datasource", "wiki", "--since", "2020-01-01"); len(got) != 1 {
		t.Fatalf("--data --datasource wiki: %v", got)
	}
	// The states name the supervisor only; the node's last state names its
	// datasource, offline too.
	_, recs = auditLogJSON(t, "--data", c.nodes[f].data, "--datasource", "events", "--limit", "0")
	types := map[string]bool{}
	for _, r := range recs {
		types[r["type"].(string)] = true
	}
	if !types["supervisor.set"] || !types["supervisor.state"] {
		t.Fatalf("--data --datasource events: %v", recs)
	}
}
