package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestClientsSkipWithoutNode: without node the clients are one SKIP that says
// so, not a silent pass and not a failure.
func TestClientsSkipWithoutNode(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := results
	results = nil
	defer func() { results = saved }()
	runClients("testdata/clients", false)
	if len(results) != 1 || results[0].status != "SKIP" || !strings.Contains(results[0].detail, "node not found") {
		t.Fatalf("results: %+v", results)
	}
}

// TestClientsPinned: every client in package.json is an exact version, and
// the committed lock file installs that same version (npm ci refuses a lock
// that disagrees, but only once it runs, in CI).
func TestClientsPinned(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	for f, v := range map[string]any{"testdata/clients/package.json": &pkg, "testdata/clients/package-lock.json": &lock} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if len(pkg.Dependencies) == 0 {
		t.Fatal("package.json names no clients")
	}
	for name, want := range pkg.Dependencies {
		if strings.ContainsAny(want, "^~<>=* x") {
			t.Errorf("%s: %q is a range, not a pinned version", name, want)
		}
		if got := lock.Packages["node_modules/"+name].Version; got != want {
			t.Errorf("%s: package.json pins %s, package-lock.json installs %q", name, want, got)
		}
	}
}

// TestClientsIngestSQL: the ingestion statement carries every row the
// clients' assertions count on.
func TestClientsIngestSQL(t *testing.T) {
	sql := clientsIngestSQL()
	if !strings.HasPrefix(sql, `REPLACE INTO "clients_wiki"`) || strings.Count(sql, `\"user\":`) != len(clientsRows) {
		t.Fatalf("statement: %s", sql)
	}
}

func TestNodeMajor(t *testing.T) {
	for v, want := range map[string]int{"v20.20.2\n": 20, "v18.19.0": 18, "v22.1.0": 22, "": 0, "vx.1": 0} {
		if got := nodeMajor(v); got != want {
			t.Errorf("nodeMajor(%q) = %d, want %d", v, got, want)
		}
	}
}
