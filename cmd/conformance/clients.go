package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The real-clients check (issue #15): Druid's own client libraries from npm,
// unmodified, against the quickstart's router. The clients and their pinned
// versions are in testdata/clients (package.json and package-lock.json; npm ci
// installs exactly the locked tree); clients.mjs drives them through a
// recording proxy and compares every request with its fixture. It runs in
// `make conformance` rather than `make test` because it needs the quickstart's
// fixed ports (which `go test ./...` packages running in parallel cannot
// share), the npm registry and a minute or so of installing and ingesting.

// clientsDatasource is the datasource the clients query.
const clientsDatasource = "clients_wiki"

// clientsRows are its rows: 12 edits over three hours (#en ×6 adding 44,
// #fr ×3 adding 23, #de ×3 adding 20; 7 users). clients.mjs asserts on them.
var clientsRows = []string{
	`{"time":"2026-01-01T00:05:00Z","channel":"#en","user":"alice","page":"Apple","added":10,"deleted":1}`,
	`{"time":"2026-01-01T00:20:00Z","channel":"#en","user":"bob","page":"Banana","added":20,"deleted":0}`,
	`{"time":"2026-01-01T00:40:00Z","channel":"#fr","user":"carol","page":"Cerise","added":5,"deleted":2}`,
	`{"time":"2026-01-01T01:10:00Z","channel":"#en","user":"alice","page":"Apple","added":7,"deleted":0}`,
	`{"time":"2026-01-01T01:15:00Z","channel":"#de","user":"dave","page":"Dach","added":3,"deleted":1}`,
	`{"time":"2026-01-01T01:30:00Z","channel":"#fr","user":"carol","page":"Cerise","added":12,"deleted":0}`,
	`{"time":"2026-01-01T01:45:00Z","channel":"#en","user":"erin","page":"Apple","added":1,"deleted":3}`,
	`{"time":"2026-01-01T02:00:00Z","channel":"#de","user":"dave","page":"Dach","added":8,"deleted":0}`,
	`{"time":"2026-01-01T02:10:00Z","channel":"#en","user":"bob","page":"Banana","added":4,"deleted":1}`,
	`{"time":"2026-01-01T02:20:00Z","channel":"#fr","user":"frank","page":"Fraise","added":6,"deleted":0}`,
	`{"time":"2026-01-01T02:30:00Z","channel":"#en","user":"alice","page":"Cherry","added":2,"deleted":0}`,
	`{"time":"2026-01-01T02:50:00Z","channel":"#de","user":"gina","page":"Dach","added":9,"deleted":2}`,
}

// clientsIngestSQL is the SQL-based ingestion of clientsRows, without rollup
// so that raw rows come back as written.
func clientsIngestSQL() string {
	inline, _ := json.Marshal(map[string]any{"type": "inline", "data": strings.Join(clientsRows, "\n")})
	return fmt.Sprintf(`REPLACE INTO %q OVERWRITE ALL
SELECT TIME_PARSE("time") AS __time, "channel", "user", "page", "added", "deleted"
FROM TABLE(EXTERN(%s, '{"type":"json"}',
 '[{"name":"time","type":"string"},{"name":"channel","type":"string"},{"name":"user","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"},{"name":"deleted","type":"long"}]'))
PARTITIONED BY DAY`, clientsDatasource, sqlString(string(inline)))
}

// runClients installs the clients (npm ci), ingests their datasource and runs
// clients.mjs, recording one result per check. Without node it records one
// SKIP saying so; .ci/run installs node, so CI never takes that branch.
func runClients(clientsDir string, update bool) {
	const name = "clients"
	if _, err := exec.LookPath("node"); err != nil {
		record(name, "SKIP", "node not found on PATH: plywood, the Cube driver and the pydruid and Grafana exchanges did NOT run (install nodejs and npm)")
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		record(name, "SKIP", "npm not found on PATH: plywood, the Cube driver and the pydruid and Grafana exchanges did NOT run (install npm)")
		return
	}
	if v, err := exec.Command("node", "--version").Output(); err != nil || nodeMajor(string(v)) < minNodeMajor {
		record(name, "FAIL", fmt.Sprintf("node %s is older than the clients need (%d or newer: @cubejs-backend/druid-driver's engines); install a newer nodejs", strings.TrimSpace(string(v)), minNodeMajor))
		return
	}
	abs, err := filepath.Abs(clientsDir)
	if err != nil || !exists(filepath.Join(abs, "package-lock.json")) {
		record(name, "FAIL", fmt.Sprintf("no package-lock.json in %s (run from the repository root or pass --clients-dir)", clientsDir))
		return
	}
	if err := npmInstall(abs); err != nil {
		record(name+" (npm ci)", "FAIL", err.Error())
		return
	}
	if !ingest(name, []string{clientsIngestSQL()}, nil, clientsDatasource) {
		return
	}
	args := []string{"clients.mjs", "--router", router, "--datasource", clientsDatasource}
	if update {
		args = append(args, "--update")
	}
	cmd := exec.Command("node", args...)
	cmd.Dir = abs
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	if err := cmd.Start(); err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	checks := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		status, rest, ok := strings.Cut(sc.Text(), " ")
		if !ok || (status != "PASS" && status != "FAIL") {
			continue
		}
		check, detail, _ := strings.Cut(rest, ": ")
		record("clients: "+check, status, detail)
		checks++
	}
	werr := cmd.Wait()
	if werr != nil && checks == 0 {
		record(name, "FAIL", fmt.Sprintf("clients.mjs: %v: %s", werr, trim(stderr.Bytes())))
	}
}

// npmInstall installs exactly the locked tree. npm ci starts from an empty
// node_modules each time, so an install that already matches the lock file
// (npm's own node_modules/.package-lock.json written after it) is kept.
// Install scripts are off: none of the clients needs one (Cube's optional
// native module downloads a binary the Druid driver does not use).
func npmInstall(dir string) error {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	if done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && done.ModTime().After(lock.ModTime()) {
		return nil
	}
	start := time.Now()
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci: %v: %s", err, trim(b))
	}
	fmt.Printf("clients: npm ci in %s took %s\n", dir, time.Since(start).Round(time.Second))
	return nil
}

// minNodeMajor is the oldest node the pinned clients declare they run on.
const minNodeMajor = 20

// nodeMajor reads the major version from `node --version` ("v20.20.2"); 0
// when it cannot.
func nodeMajor(v string) int {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	major, _, _ := strings.Cut(v, ".")
	n := 0
	for _, c := range major {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
