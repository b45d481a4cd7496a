package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
)

// A real strata server (coordinator, overlord, broker and historical in
// one process, basic auth on) answers the people-facing commands: SQL as a
// table, CSV and JSON, native queries from a file and stdin, a SQL error
// with its position underlined, the listings, and 401 without credentials.
func TestPeopleCommandsAgainstAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a strata process")
	}
	addrs := freeAddrs(t, 2)
	data := t.TempDir()
	u := "http://" + addrs[0]
	// The polls below send credentials the server cannot check yet (its user
	// database is created by the first leader): a high failed-login limit
	// keeps those from locking the test out for a minute.
	srv := strataCmd("server", "--id", "c1", "--roles", "coordinator,overlord,broker,historical", "--http", addrs[0],
		"--raft", addrs[1], "--data", data, "--coordinators", u, "--set", "svc.log.level=warn",
		"--set", `svc.auth.authenticatorChain=["basic"]`, "--set", `svc.auth.authorizers=["basic"]`,
		"--set", "svc.auth.authenticator.basic.initialAdminPassword=adminpw", "--set", "svc.auth.failedLogins.limit=100000",
		"--set", "svc.auth.authenticator.basic.initialInternalClientPassword=ipw", "--set", "svc.escalator.internalClientPassword=ipw")
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait(); logf.Close() })

	dir := t.TempDir()
	input := filepath.Join(dir, "wiki.json")
	os.WriteFile(input, []byte(`{"timestamp":"2024-01-01T00:00:00Z","page":"A","added":3}
{"timestamp":"2024-01-01T01:00:00Z","page":"B","added":5}
{"timestamp":"2024-01-02T00:00:00Z","page":"A","added":7}
`), 0o644)
	// The coordinator's properties need credentials: the storage settings
	// and the internal password come from a file, as on a secured cluster.
	cfg := filepath.Join(dir, "build.properties")
	os.WriteFile(cfg, []byte("svc.data.dir="+data+"\nsvc.escalator.internalClientPassword=ipw\n"), 0o644)
	eventually.True(t, "the segments published", func() bool {
		code, _, _ := capture(t, "segment", "build", "--datasource", "wiki", "--input", input, "--coordinator", u, "--config", cfg)
		return code == 0
	}, eventually.Within(time.Minute))

	t.Setenv("STRATA_USER", "admin")
	t.Setenv("STRATA_PASSWORD", "adminpw")
	sql := "SELECT page, SUM(added) AS s, COUNT(*) AS c FROM wiki GROUP BY page ORDER BY page"
	var out string
	eventually.True(t, "the broker answering from both segments", func() bool {
		var code int
		code, out, _ = capture(t, "query", sql, "--url", u)
		return code == 0 && strings.Contains(out, "A     10  2")
	}, eventually.Within(time.Minute), eventually.Showing(func() string { return out }))
	wantTable := "page  s   c\n----  --  -\nA     10  2\nB      5  1\n(2 rows in "
	if !strings.HasPrefix(out, wantTable) {
		t.Errorf("table:\n%s\nwant it to start\n%s", out, wantTable)
	}

	code, out, errOut := capture(t, "query", "--url", u, "--format", "csv", sql)
	if code != 0 || out != "page,s,c\nA,10,2\nB,5,1\n" || !strings.Contains(errOut, "(2 rows in ") {
		t.Errorf("csv: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = capture(t, "query", "--url", u, "--format", "json", sql)
	if code != 0 || strings.Join(strings.Fields(out), "") != `[{"page":"A","s":10,"c":2},{"page":"B","s":5,"c":1}]` {
		t.Errorf("json: exit %d\n%s", code, out)
	}

	// A SQL error: the message, the statement's line and a mark under the column.
	code, _, errOut = capture(t, "query", "--url", u, "SELECT page,\n  SUM(added) FROM nosuch GROUP BY page")
	// Indented by two, as the statement's line is: column 19 is 20 spaces in.
	if want := "  SUM(added) FROM nosuch GROUP BY page\n" + strings.Repeat(" ", 20) + "^~~~~~\n"; code != 1 || !strings.Contains(errOut, "(line [2], column [19])") || !strings.Contains(errOut, want) {
		t.Errorf("SQL error: exit %d\n%s\nwant\n%s", code, errOut, want)
	}

	// Native queries, from a file and from stdin.
	topN := filepath.Join(dir, "topn.json")
	os.WriteFile(topN, []byte(`{"queryType":"topN","dataSource":"wiki","intervals":["2024/2025"],"granularity":"all",
		"dimension":"page","metric":"a","threshold":5,"aggregations":[{"type":"longSum","name":"a","fieldName":"added"}]}`), 0o644)
	code, out, errOut = capture(t, "query", "--url", u, "--native", "-f", topN)
	if want := "timestamp                 page  a\n------------------------  ----  --\n2024-01-01T00:00:00.000Z  A     10\n2024-01-01T00:00:00.000Z  B      5\n(2 rows in "; code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("native topN: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	oldStdin := stdin
	defer func() { stdin = oldStdin }()
	stdin = strings.NewReader(`{"queryType":"timeseries","dataSource":"wiki","intervals":["2024/2025"],"granularity":"day",
		"aggregations":[{"type":"longSum","name":"a","fieldName":"added"}]}`)
	code, out, errOut = capture(t, "query", "--native", "--url", u)
	if want := "timestamp                 a\n------------------------  -\n2024-01-01T00:00:00.000Z  8\n2024-01-02T00:00:00.000Z  7\n(2 rows in "; code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("native timeseries from stdin: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}

	code, out, errOut = capture(t, "datasources", "--url", u)
	if code != 0 || !strings.Contains(out, "name  count  size  minTime                   maxTime") ||
		!strings.Contains(out, "wiki      2   470  2024-01-01T00:00:00.000Z  2024-01-03T00:00:00.000Z") {
		t.Errorf("datasources: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = capture(t, "segments", "wiki", "--url", u, "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 3 ||
		lines[0] != "interval,version,partitionNum,size,identifier" || !strings.HasPrefix(lines[1], "2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z,") {
		t.Errorf("segments: exit %d\n%s%s", code, out, errOut)
	}
	// A datasource that does not exist is named as such, with the nearest
	// one (a typo) or the list, not printed as an empty table.
	if code, out, errOut := capture(t, "segments", "wkii", "--url", u); code != 1 || out != "" ||
		!strings.Contains(errOut, `datasource "wkii" does not exist (did you mean "wiki"?)`) {
		t.Errorf("segments of a misspelt datasource: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := capture(t, "segments", "koalas", "--url", u); code != 1 || out != "" ||
		!strings.Contains(errOut, `datasource "koalas" does not exist; the datasources are: wiki`) {
		t.Errorf("segments of a missing datasource: exit %d\n%s%s", code, out, errOut)
	}
	for _, cmd := range []string{"tasks", "supervisors"} {
		if code, out, errOut := capture(t, cmd, "--url", u); code != 0 || !strings.HasSuffix(out, "(0)\n") {
			t.Errorf("%s: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}

	// task and ingest take the same credentials.
	if code, _, errOut := capture(t, "task", "status", "nosuch", "--url", u); code != 1 || !strings.Contains(errOut, "no such task: nosuch") {
		t.Errorf("task status with credentials: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := capture(t, "task", "status", "nosuch", "--url", u, "--user", "admin", "--password", "wrong"); code != 1 || !strings.Contains(errOut, "HTTP 401") {
		t.Errorf("task status with a wrong password: exit %d\n%s", code, errOut)
	}

	// ingest shows a refused statement as query does: the message, and the
	// statement's line with the position underlined.
	bad := filepath.Join(dir, "bad.sql")
	os.WriteFile(bad, []byte("INSERT INTO t2\nSELECT __time, page FROM nosuch\nPARTITIONED BY DAY"), 0o644)
	if code, _, errOut := capture(t, "ingest", "--url", u, "--sql", bad); code != 1 ||
		!strings.Contains(errOut, "HTTP 400: Object 'nosuch' not found (line [2], column [26])\n  SELECT __time, page FROM nosuch\n"+strings.Repeat(" ", 27)+"^~~~~~") {
		t.Errorf("ingest of a statement naming a missing table: exit %d\n%s", code, errOut)
	}

	// A datasource whose segments are all unused exists: an empty table and a note why.
	req, _ := http.NewRequest(http.MethodDelete, u+"/svc/coordinator/v1/datasources/wiki", nil)
	req.SetBasicAuth("admin", "adminpw")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("marking wiki unused: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, out, errOut := capture(t, "segments", "wiki", "--url", u); code != 0 || !strings.HasSuffix(out, "(0)\n") ||
		!strings.Contains(errOut, `datasource "wiki" has no used segments`) {
		t.Errorf("segments of a datasource with only unused segments: exit %d\n%s%s", code, out, errOut)
	}

	// Flags beat the environment; no credentials at all is a 401 that says what to give.
	if code, _, errOut := capture(t, "datasources", "--url", u, "--password", "wrong"); code != 1 || !strings.Contains(errOut, "HTTP 401") {
		t.Errorf("wrong password: exit %d\n%s", code, errOut)
	}
	t.Setenv("STRATA_USER", "")
	t.Setenv("STRATA_PASSWORD", "")
	if code, _, errOut := capture(t, "query", "--url", u, "SELECT 1"); code != 1 || !strings.Contains(errOut, "give --user and --password") {
		t.Errorf("no credentials: exit %d\n%s", code, errOut)
	}
}
