package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/storage/deep/s3test"
)

// A cluster of real processes on S3 deep storage (gofakes3 on loopback,
// signatures checked): a control node, a historical, a broker and a middle
// manager, wired by discovery alone. SQL ingestion writes one segment
// archive per day into the bucket, the historical loads them from there and
// the broker answers from them; a kill removes exactly the killed day's
// object from the bucket (the coordinator's sweeper) and the rows from
// queries.
func TestClusterOnS3(t *testing.T) {
	srv := s3test.Start(t)
	const baseKey = "strata/test"
	addrs := freeAddrs(t, 5)
	control, raftAddr, hist, broker, mm := addrs[0], addrs[1], addrs[2], addrs[3], addrs[4]
	start := s3Starter(t, srv, baseKey)
	// Wired as docs/deploy.md says: every process is given the control node
	// (--coordinators) and the S3 settings, and finds the others through it.
	coordinators := "http://" + control
	start("control", "server", "--id", "c1", "--roles", "coordinator,overlord", "--http", control, "--raft", raftAddr,
		"--data", t.TempDir(), "--coordinators", coordinators,
		"--set", "svc.coordinator.inventory.period=100ms", "--set", "svc.coordinator.startDelay=500ms")
	start("historical", "server", "--roles", "historical", "--http", hist, "--data", t.TempDir(), "--coordinators", coordinators,
		"--set", "svc.segmentCache.dropSegmentDelayMillis=0")
	start("broker", "server", "--roles", "broker", "--http", broker, "--data", t.TempDir(), "--coordinators", coordinators)
	start("middleManager", "server", "--roles", "middleManager", "--http", mm, "--data", t.TempDir(), "--coordinators", coordinators,
		"--set", "svc.worker.capacity=2")
	for _, a := range addrs[2:] {
		eventually.True(t, a+" up", func() bool { return get(t, "http://"+a+"/status/health") == "true" }, eventually.Within(time.Minute))
	}
	waitWorker(t, control, mm)

	sql, rows, added := wikiSQL(t)
	ingest := strataCmd("ingest", "--sql", sql, "--url", "http://"+control)
	out, err := ingest.CombinedOutput()
	if err != nil {
		t.Fatalf("strata ingest: %v\n%s", err, out)
	}
	// One archive per day, under the base key, in Druid's key layout.
	objects := srv.Objects(t)
	var days []string
	for key, size := range objects {
		if !strings.HasPrefix(key, baseKey+"/wiki/") || !strings.HasSuffix(key, "/index.zip") || size == 0 {
			t.Errorf("unexpected object %s (%d bytes)", key, size)
		}
		days = append(days, strings.Split(key, "/")[3][:10])
	}
	if slices.Sort(days); !slices.Equal(days, []string{"2024-01-01", "2024-01-02", "2024-01-03"}) {
		t.Fatalf("objects after ingestion: %v", slices.Sorted(maps.Keys(objects)))
	}

	query := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-04"],"granularity":"all",
		"aggregations":[{"type":"count","name":"rows"},{"type":"longSum","name":"added","fieldName":"added"}]}`
	want := fmt.Sprintf(`[{"timestamp":"2024-01-01T00:15:00.000Z","result":{"rows":%d,"added":%d}}]`, rows, added)
	var last string
	eventually.True(t, "the broker answering from the segments the historical loaded from S3", func() bool {
		last = post(t, "http://"+broker+"/svc/v2/", query)
		return last == want
	}, eventually.Within(time.Minute), eventually.Showing(func() string { return last + ", want " + want }))
	if got := get(t, "http://"+control+"/svc/coordinator/v1/loadstatus"); got != `{"wiki":100.0}` {
		t.Fatalf("loadstatus %s", got)
	}
	// The historical downloaded each archive from the bucket.
	downloaded := map[string]bool{}
	for _, r := range srv.Requests() {
		if r.Method == "GET" && r.Status == http.StatusOK && strings.HasSuffix(r.Path, "/index.zip") {
			downloaded[r.Path] = true
		}
	}
	if len(downloaded) != len(objects) {
		t.Fatalf("archives downloaded: %v, objects %v", downloaded, objects)
	}

	// Kill the first day: its object leaves the bucket, the others stay.
	if got := post(t, "http://"+control+"/svc/coordinator/v1/datasources/wiki/markUnused", `{"interval":"2024-01-01/2024-01-02"}`); !strings.Contains(got, `"numChangedSegments":1`) {
		t.Fatalf("markUnused: %s", got)
	}
	req, _ := http.NewRequest("DELETE", "http://"+control+"/svc/coordinator/v1/datasources/wiki/intervals/2024-01-01_2024-01-02", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("kill: %s", resp.Status)
	}
	var left []string
	eventually.True(t, "the sweeper to delete the killed day's object", func() bool {
		left = slices.Sorted(maps.Keys(srv.Objects(t)))
		return len(left) == 2
	}, eventually.Within(time.Minute), eventually.Showing(func() string { return strings.Join(left, " ") }))
	for _, key := range left {
		if strings.Contains(key, "2024-01-01T") {
			t.Fatalf("the killed day's object is still there: %v", left)
		}
		delete(objects, key)
	}
	if len(objects) != 1 {
		t.Fatalf("objects that went: %v", objects)
	}
	eventually.True(t, "the killed day gone from queries", func() bool {
		last = post(t, "http://"+broker+"/svc/v2/", query)
		return strings.Contains(last, fmt.Sprintf(`"rows":%d`, rows-12))
	}, eventually.Within(time.Minute), eventually.Showing(func() string { return last }))
	// The signature check held throughout: no request was refused.
	for _, r := range srv.Requests() {
		if r.Status == http.StatusForbidden {
			t.Fatalf("refused request %+v", r)
		}
	}
}

// s3Starter returns a function that starts a strata process with S3 deep
// storage on srv under baseKey, logging to a file shown if the test fails,
// and killed when it ends.
func s3Starter(t *testing.T, srv *s3test.Server, baseKey string) func(name string, args ...string) {
	var s3Sets []string
	for _, k := range slices.Sorted(maps.Keys(srv.Properties(baseKey))) {
		s3Sets = append(s3Sets, "--set", k+"="+srv.Properties(baseKey)[k])
	}
	// The ingested file is the repository's examples/wiki.json: the
	// middle manager may read that folder (by default only its data
	// directory's ingest/ folder).
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	s3Sets = append(s3Sets, "--set", "svc.ingestion.local.allowedBaseDirs="+examples)
	logs := t.TempDir()
	return func(name string, args ...string) {
		t.Helper()
		f, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		// The S3 settings first, so that a test's own --set overrides them.
		cmd := strataCmd(slices.Concat(args[:1], s3Sets, []string{"--set", "svc.log.level=warn"}, args[1:])...)
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-done
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(logs, name+".log"))
				t.Logf("%s log:\n%s", name, b)
			}
		})
	}
}

// waitWorker waits for a leader at control and the middle manager mm
// registered with it.
func waitWorker(t *testing.T, control, mm string) {
	t.Helper()
	eventually.True(t, "a leader", func() bool { return strings.Contains(get(t, "http://"+control+"/svc/indexer/v1/isLeader"), "true") },
		eventually.Within(time.Minute))
	eventually.True(t, "the middle manager registered", func() bool { return strings.Contains(get(t, "http://"+control+"/svc/indexer/v1/workers"), mm) },
		eventually.Within(time.Minute))
}

// wikiSQL writes the README's SQL ingestion of examples/wiki.json to a file
// and returns its path, the file's row count and the sum of its "added".
func wikiSQL(t *testing.T) (path string, rows, added int64) {
	t.Helper()
	input, err := filepath.Abs("../../examples/wiki.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, added = wikiTotals(t, input)
	path = filepath.Join(t.TempDir(), "wiki.sql")
	os.WriteFile(path, []byte(`INSERT INTO wiki
SELECT TIME_PARSE("timestamp") AS __time, page, "user", added, deleted
FROM TABLE(EXTERN('{"type":"local","files":["`+input+`"]}', '{"type":"json"}',
  '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"added","type":"long"},{"name":"deleted","type":"long"}]'))
PARTITIONED BY DAY`), 0o644)
	return path, rows, added
}

// A middle manager with the wrong S3 secret: the SQL ingestion fails, and
// strata ingest says which object could not be written and the server's
// reason; nothing reaches the bucket.
func TestClusterOnS3WrongCredentials(t *testing.T) {
	srv := s3test.Start(t)
	addrs := freeAddrs(t, 3)
	control, raftAddr, mm := addrs[0], addrs[1], addrs[2]
	start := s3Starter(t, srv, "strata")
	start("control", "server", "--id", "c1", "--roles", "coordinator,overlord", "--http", control, "--raft", raftAddr, "--data", t.TempDir())
	start("middleManager", "server", "--roles", "middleManager", "--http", mm, "--data", t.TempDir(),
		"--coordinators", "http://"+control, "--set", "svc.s3.secretKey=not-the-secret")
	waitWorker(t, control, mm)
	sql, _, _ := wikiSQL(t)
	out, err := strataCmd("ingest", "--sql", sql, "--url", "http://"+control).CombinedOutput()
	if err == nil {
		t.Fatalf("strata ingest succeeded with a wrong secret key:\n%s", out)
	}
	for _, want := range []string{"FAILED", "deep: put s3://" + s3test.Bucket + "/strata/wiki/",
		"The request signature we calculated does not match the signature you provided"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("strata ingest output does not say %q:\n%s", want, out)
		}
	}
	if objects := srv.Objects(t); len(objects) != 0 {
		t.Fatalf("objects in the bucket: %v", objects)
	}
}

// wikiTotals counts the rows of an NDJSON file and sums their "added".
func wikiTotals(t *testing.T, path string) (rows, added int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ Added int64 }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows++
		added += r.Added
	}
	return rows, added
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}
