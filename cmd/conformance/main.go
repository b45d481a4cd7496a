// Command conformance runs Druid's own conformance corpus (MANIFEST.md of
// ../shared/conformance/druid, or $STRATA_CONFORMANCE_DIR) against a Strata
// cluster: it ingests each profile through SQL-based ingestion
// (POST /svc/v2/sql/task), runs the native queries through the router
// (POST /svc/v2/) and MSQ SELECTs through the task API, and compares results
// exactly as Druid's harness does (ordered rows, JSON numbers compared by their
// text so 905 and 905.0 differ, fieldsToTest honoured).
//
// Every case prints PASS, FAIL or SKIP with its reason; the exit status is 1 when
// any case fails. Skips are listed in the README with the reason.
//
// Then it runs the druid-sql corpus (../shared/conformance/druid-sql, or
// $STRATA_CONFORMANCE_SQL_DIR; druidsql.go): one line per file and totals by
// failure reason, which do not change the exit status while SQL is incomplete.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

var (
	router = "http://127.0.0.1:8888"
	dir    string
	client = &http.Client{Timeout: 2 * time.Minute}
)

func main() {
	bin := flag.String("bin", "bin/strata", "strata binary; a quickstart is started unless --url is given")
	url := flag.String("url", "", "router URL of a running cluster")
	only := flag.String("only", "", "run only cases whose name contains this")
	sqlOnly := flag.Bool("sql-only", false, "run only the druid-sql corpus")
	noSQL := flag.Bool("no-sql", false, "skip the druid-sql corpus")
	sqlFilter := flag.String("sql", "", "run only druid-sql files whose path (under cases/) contains this")
	sqlVerbose := flag.Bool("sql-v", false, "print every failing druid-sql statement, not only each file's first")
	clientsOnly := flag.Bool("clients-only", false, "run only the npm clients (clients.go); needs neither corpus")
	noClients := flag.Bool("no-clients", false, "skip the npm clients")
	clientsDir := flag.String("clients-dir", "cmd/conformance/testdata/clients", "the npm clients' package (package-lock.json, clients.mjs, fixtures/)")
	clientsUpdate := flag.Bool("clients-update", false, "rewrite the npm clients' request fixtures from what they send now")
	flag.Parse()
	var allowed []string
	sqlDir := ""
	if !*clientsOnly {
		dir = os.Getenv("STRATA_CONFORMANCE_DIR")
		if dir == "" {
			dir = "../shared/conformance/druid"
		}
		abs, err := filepath.Abs(dir)
		if err != nil || !exists(filepath.Join(abs, "MANIFEST.md")) {
			fmt.Fprintf(os.Stderr, "conformance corpus not found at %s (set STRATA_CONFORMANCE_DIR)\n", dir)
			os.Exit(2)
		}
		dir = abs
		allowed = append(allowed, dir)
	}
	if !*noSQL && !*clientsOnly {
		if sqlDir = sqlCorpusDir(); sqlDir == "" {
			fmt.Fprintln(os.Stderr, "conformance: druid-sql corpus not found (set STRATA_CONFORMANCE_SQL_DIR); running the native corpus only")
		}
	}
	// The corpora's files are read as local input: allow exactly the native
	// corpus, the SQL corpus's data folder and the harness's own scratch
	// directory (files laid out for a spec), deliberately, under the
	// ingestion safety rules (svc.ingestion.local.allowedBaseDirs).
	var err error
	if scratch, err = os.MkdirTemp("", "strata-conformance-inputs-"); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(scratch)
	allowed = append(allowed, scratch)
	if sqlDir != "" {
		allowed = append(allowed, filepath.Join(sqlDir, "data"))
	}
	quickstartSets = append(quickstartSets, "svc.ingestion.local.allowedBaseDirs="+strings.Join(allowed, ","))
	stop := func() {}
	if *url != "" {
		router = strings.TrimRight(*url, "/")
	} else {
		var err error
		if stop, err = startQuickstart(*bin); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			os.Exit(2)
		}
	}
	code := 0
	if !*sqlOnly {
		if !*clientsOnly {
			runCases(*only)
		}
		if *clientsOnly || (!*noClients && *only == "") {
			runClients(*clientsDir, *clientsUpdate)
		}
		code = summarize()
	}
	if sqlDir != "" {
		runSQLCorpus(sqlDir, *sqlFilter, *sqlVerbose)
	}
	stop() // before os.Exit, which skips deferred calls: never leave the quickstart behind
	os.RemoveAll(scratch)
	os.Exit(code)
}

// scratch holds files the harness lays out for a spec; the quickstart may
// read it.
var scratch string

// quickstartSets are the --set flags of the quickstart the harness starts.
var quickstartSets = []string{"svc.log.level=warn"}

// runSQLCorpus runs the druid-sql corpus. Its failures do not change the exit
// status while interactive SQL is incomplete; the totals say where it stands.
func runSQLCorpus(corpus, filter string, verbose bool) {
	files, err := loadIQFiles(corpus, filter)
	if err != nil {
		fmt.Println("SQL  corpus unreadable:", err)
		return
	}
	fmt.Println()
	r := &sqlRunner{base: router, corpus: corpus, client: client, out: os.Stdout, verbose: verbose}
	r.ingest = r.ingestDataset
	r.run(files)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// quickstartPorts are the fixed ports of `strata quickstart`.
var quickstartPorts = []string{"127.0.0.1:8888", "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083", "127.0.0.1:8091", "127.0.0.1:8300"}

func startQuickstart(bin string) (func(), error) {
	// Refuse to run against whatever else holds the ports: results would mix with
	// that cluster's data.
	for _, addr := range quickstartPorts {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("port %s is in use (another strata running?): stop it or pass --url", addr)
		}
		l.Close()
	}
	data, err := os.MkdirTemp("", "strata-conformance-")
	if err != nil {
		return nil, err
	}
	args := []string{"quickstart", "--data", data}
	for _, kv := range quickstartSets {
		args = append(args, "--set", kv)
	}
	cmd := exec.Command(bin, args...)
	logf, _ := os.Create(filepath.Join(data, "quickstart.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		os.RemoveAll(data)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(data, "quickstart.log"))
			return nil, fmt.Errorf("quickstart exited: %s", trim(b))
		default:
		}
		if code, _, err := get("/svc/broker/v1/readiness"); err == nil && code == 200 {
			if code, _, err := get("/svc/indexer/v1/isLeader"); err == nil && code == 200 {
				return stop, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	return nil, fmt.Errorf("quickstart did not become ready in 60 s (log: %s)", filepath.Join(data, "quickstart.log"))
}

func get(path string) (int, []byte, error) {
	resp, err := client.Get(router + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func post(path string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Post(router+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// ---- results ----

type outcome struct {
	name, status, detail string
}

var results []outcome

func record(name, status, detail string) {
	results = append(results, outcome{name, status, detail})
	line := fmt.Sprintf("%-4s %s", status, name)
	if detail != "" {
		line += ": " + detail
	}
	fmt.Println(line)
}

func runCases(only string) {
	for _, c := range cases() {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		c.run(c.name)
	}
}

// summarize prints the totals of every recorded result and returns the exit
// status: 1 when any failed.
func summarize() int {
	var pass, fail, skip int
	for _, r := range results {
		switch r.status {
		case "PASS":
			pass++
		case "FAIL":
			fail++
		default:
			skip++
		}
	}
	fmt.Printf("\nconformance: %d passed, %d failed, %d skipped\n", pass, fail, skip)
	if fail > 0 {
		return 1
	}
	return 0
}

// ---- ingestion ----

// sqlTask submits SQL and waits for the task; it returns the report.
func sqlTask(sql string, qctx map[string]any) (map[string]any, error) {
	code, body, err := post("/svc/v2/sql/task", map[string]any{"query": sql, "context": qctx})
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("submit: HTTP %d: %s", code, trim(body))
	}
	var sub struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(body, &sub); err != nil || sub.TaskID == "" {
		return nil, fmt.Errorf("submit: unexpected answer %s", trim(body))
	}
	return waitTask(sub.TaskID)
}

// nativeTask submits a native task spec (POST /svc/indexer/v1/task) and waits for it.
func nativeTask(spec []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(spec, &v); err != nil {
		return nil, err
	}
	code, body, err := post("/svc/indexer/v1/task", v)
	if err != nil {
		return nil, err
	}
	var sub struct {
		Task string `json:"task"`
	}
	if code != 200 || json.Unmarshal(body, &sub) != nil || sub.Task == "" {
		return nil, fmt.Errorf("submit: HTTP %d: %s", code, trim(body))
	}
	return waitTask(sub.Task)
}

// waitTask polls a task until it ends and returns its report.
func waitTask(id string) (map[string]any, error) {
	sub := struct{ TaskID string }{id}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		code, body, err := get("/svc/indexer/v1/task/" + sub.TaskID + "/status")
		if err != nil {
			return nil, err
		}
		var st struct {
			Status struct {
				Status   string `json:"status"`
				ErrorMsg string `json:"errorMsg"`
			} `json:"status"`
		}
		if code == 200 && json.Unmarshal(body, &st) == nil {
			switch st.Status.Status {
			case "SUCCESS", "FAILED":
				_, rep, err := get("/svc/indexer/v1/task/" + sub.TaskID + "/reports")
				if err != nil {
					return nil, err
				}
				var report map[string]any
				json.Unmarshal(rep, &report)
				if st.Status.Status == "FAILED" {
					return report, fmt.Errorf("task %s failed: %s", sub.TaskID, st.Status.ErrorMsg)
				}
				return report, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("task %s did not finish in 5 minutes", sub.TaskID)
}

var ingestContext = map[string]any{"finalizeAggregations": false, "maxNumTasks": 5, "groupByEnableMultiValueUnnesting": false}

func withContext(extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range ingestContext {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// waitQueryable waits until the broker serves every published segment of
// ds that is not overshadowed: a timeBoundary answers as soon as one segment
// is loaded, and a dataset spanning several segments (one per month, say)
// would be queried with some of its rows missing.
func waitQueryable(ds string) error {
	deadline := time.Now().Add(60 * time.Second)
	var missing []string
	for time.Now().Before(deadline) {
		var err error
		if missing, err = unservedSegments(ds); err == nil && len(missing) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("datasource %s not queryable after 60 s (segments not served: %v)", ds, missing)
}

// unservedSegments lists the published, not overshadowed segments of ds
// that the broker's segmentMetadata does not answer for yet; an error while
// none is published or either call fails.
func unservedSegments(ds string) ([]string, error) {
	code, body, err := get("/svc/coordinator/v1/metadata/segments?includeOvershadowedStatus&datasources=" + url.QueryEscape(ds))
	if err != nil || code != 200 {
		return nil, fmt.Errorf("published segments of %s: HTTP %d %v", ds, code, err)
	}
	var published []struct {
		ID           string `json:"identifier"`
		Overshadowed bool   `json:"overshadowed"`
		ShardSpec    struct {
			Type string `json:"type"`
		} `json:"shardSpec"`
	}
	if err := json.Unmarshal(body, &published); err != nil {
		return nil, err
	}
	code, body, err = post("/svc/v2/", map[string]any{"queryType": "segmentMetadata", "dataSource": ds, "merge": false,
		"analysisTypes": []string{}, "intervals": []string{"1000-01-01/3000-01-01"}})
	if err != nil || code != 200 {
		return nil, fmt.Errorf("segmentMetadata of %s: HTTP %d %v", ds, code, err)
	}
	var served []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &served); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, s := range served {
		have[s.ID] = true
	}
	var missing []string
	n := 0
	for _, p := range published {
		if p.Overshadowed {
			continue
		}
		n++
		// A tombstone (a REPLACE's emptied interval) holds no rows and no
		// server loads it: it is in place as soon as it is published.
		if p.ShardSpec.Type == "tombstone" {
			continue
		}
		if !have[p.ID] {
			missing = append(missing, p.ID)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("no published segment of %s", ds)
	}
	return missing, nil
}

// ---- comparison ----

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// equal compares JSON values; numbers by their text, so 905 ≠ 905.0.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	default:
		return a == b
	}
}

// compareRows compares ordered result rows; with fields only those keys of each
// row (but the row count must match).
func compareRows(expected, actual []any, fields []string) error {
	if len(expected) != len(actual) {
		return fmt.Errorf("%d rows, want %d; got %s", len(actual), len(expected), short(actual))
	}
	for i := range expected {
		e, a := expected[i], actual[i]
		if len(fields) > 0 {
			em, _ := e.(map[string]any)
			am, _ := a.(map[string]any)
			for _, f := range fields {
				if !equal(em[f], am[f]) {
					return fmt.Errorf("row %d field %s: got %s, want %s", i, f, short(am[f]), short(em[f]))
				}
			}
			continue
		}
		if !equal(e, a) {
			return fmt.Errorf("row %d: got %s, want %s", i, short(a), short(e))
		}
	}
	return nil
}

func short(v any) string {
	b, _ := json.Marshal(v)
	return trim(b)
}

func trim(b []byte) string {
	s := string(b)
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

// ---- query files ----

type entry struct {
	Description     string          `json:"description"`
	Query           json.RawMessage `json:"query"`
	ExpectedResults json.RawMessage `json:"expectedResults"`
	FieldsToTest    []string        `json:"fieldsToTest"`
}

func loadQueries(file string, subst map[string]string) ([]entry, error) {
	b, err := os.ReadFile(filepath.Join(dir, "queries", file))
	if err != nil {
		return nil, err
	}
	text := string(b)
	for k, v := range subst {
		text = strings.ReplaceAll(text, k, v)
	}
	var out []entry
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// skipRule marks entries that need a feature Strata does not have, with the reason.
type skipRule struct {
	contains, reason string
}

// runQueries runs every entry of a native query file.
func runQueries(name, file string, subst map[string]string, skips []skipRule) {
	entries, err := loadQueries(file, subst)
	if err != nil {
		record(name, "FAIL", err.Error())
		return
	}
	for i, e := range entries {
		label := fmt.Sprintf("%s #%d %s", name, i+1, e.Description)
		if reason := skipReason(string(e.Query), skips); reason != "" {
			record(label, "SKIP", reason)
			continue
		}
		expected, err := decode(e.ExpectedResults)
		if err != nil {
			record(label, "FAIL", "bad expected results: "+err.Error())
			continue
		}
		var actual any
		if len(e.Query) > 0 && e.Query[0] == '"' || isSQLObject(e.Query) {
			actual, err = runSQLQuery(e.Query)
		} else {
			actual, err = runNative(e.Query)
		}
		if err != nil {
			record(label, "FAIL", err.Error())
			continue
		}
		exp, _ := expected.([]any)
		act, _ := actual.([]any)
		fields := e.FieldsToTest
		if err := compareRows(exp, act, fields); err != nil {
			record(label, "FAIL", err.Error())
			continue
		}
		record(label, "PASS", "")
	}
}

func isSQLObject(q json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(q, &m) != nil {
		return false
	}
	_, hasSQL := m["query"].(string)
	_, hasType := m["queryType"]
	return hasSQL && !hasType
}

func skipReason(q string, skips []skipRule) string {
	for _, s := range skips {
		if strings.Contains(q, s.contains) {
			return s.reason
		}
	}
	return ""
}

func runNative(q json.RawMessage) (any, error) {
	resp, err := client.Post(router+"/svc/v2/", "application/json", bytes.NewReader(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, trim(body))
	}
	return decode(body)
}

// runSQLQuery runs a SQL string (or {"query": sql}) as an MSQ SELECT task and
// turns the report's results into row objects named by the signature.
func runSQLQuery(q json.RawMessage) (any, error) {
	var sql string
	if json.Unmarshal(q, &sql) != nil {
		var m map[string]any
		json.Unmarshal(q, &m)
		sql, _ = m["query"].(string)
	}
	report, err := sqlTask(sql, map[string]any{})
	if err != nil {
		return nil, err
	}
	return reportRows(report)
}

func reportRows(report map[string]any) ([]any, error) {
	b, _ := json.Marshal(report)
	var r struct {
		MSQ struct {
			Payload struct {
				Results struct {
					Signature []struct {
						Name string `json:"name"`
					} `json:"signature"`
					Results []json.RawMessage `json:"results"`
				} `json:"results"`
			} `json:"payload"`
		} `json:"multiStageQuery"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	res := r.MSQ.Payload.Results
	if len(res.Signature) == 0 {
		return nil, fmt.Errorf("report has no results signature: %s", trim(b))
	}
	var rows []any
	for _, raw := range res.Results {
		v, err := decode(raw)
		if err != nil {
			return nil, err
		}
		vals, _ := v.([]any)
		row := map[string]any{}
		for i, col := range res.Signature {
			if i < len(vals) {
				row[col.Name] = vals[i]
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// sortRows orders row objects by their JSON text (for unordered comparisons).
func sortRows(rows []any) {
	sort.Slice(rows, func(i, j int) bool { return short(rows[i]) < short(rows[j]) })
}

var errSkip = errors.New("skip")
