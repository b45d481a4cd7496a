package main

// The druid-sql corpus (MANIFEST.md of ../shared/conformance/druid-sql, or
// $STRATA_CONFORMANCE_SQL_DIR): Druid's quidem scripts run through the
// interactive SQL API (POST /svc/v2/sql). Each file's dataset is ingested
// with its own native batch spec first. Results are reported per file and
// in totals by reason; while SQL is incomplete they do not change the exit
// status (the native corpus still gates).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Reasons a statement fails, in the order the totals print them.
const (
	failWrong      = "wrong result"
	failError      = "error where a result was expected"
	failResult     = "result where an error was expected"
	failUnsupport  = "unsupported"
	failNoDataset  = "dataset not loaded"
	failBadAnswer  = "malformed answer"
	failNoResponse = "no answer"
	// failEmptyCols is a SELECT * answer that matches but for columns null
	// in every row which Druid's expected table lacks: a Druid native batch
	// task stores the dimensions its spec lists even when empty
	// (storeEmptyColumns, true by default), and so does Strata; Druid's
	// quidem harness builds its test segments without them. Not a wrong
	// value, and not counted as passed.
	failEmptyCols = "empty columns stored (storeEmptyColumns)"
)

// passUnsupported marks an expected error that failed as unsupported.
const passUnsupported = "passed as unsupported"

var failOrder = []string{failWrong, failEmptyCols, failError, failResult, failUnsupport, failNoDataset, failBadAnswer, failNoResponse}

// sqlTally counts statement outcomes.
type sqlTally struct {
	statements, passedRows, passedErrors, plansSkipped int
	// passedUnsupported counts the expected errors that failed as
	// unsupported: right that they fail, but not for Druid's reason.
	passedUnsupported int
	failed            map[string]int
}

func newTally() *sqlTally { return &sqlTally{failed: map[string]int{}} }

func (t *sqlTally) passed() int { return t.passedRows + t.passedErrors }

func (t *sqlTally) add(o *sqlTally) {
	t.statements += o.statements
	t.passedRows += o.passedRows
	t.passedErrors += o.passedErrors
	t.plansSkipped += o.plansSkipped
	t.passedUnsupported += o.passedUnsupported
	for k, v := range o.failed {
		t.failed[k] += v
	}
}

// failures prints "wrong result 3, unsupported 2" in failOrder.
func (t *sqlTally) failures() string {
	var parts []string
	for _, r := range failOrder {
		if n := t.failed[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	return strings.Join(parts, ", ")
}

// sqlRunner runs the corpus against one cluster.
type sqlRunner struct {
	base    string // router URL
	corpus  string // absolute corpus folder
	client  *http.Client
	out     io.Writer
	verbose bool // print every failing statement, not only each file's first
	// ingest loads a dataset folder; nil loads with the native task API.
	ingest func(dataset string) error
}

// loadIQFiles parses every cases/**/*.iq whose path contains filter.
func loadIQFiles(corpus, filter string) ([]*iqFile, error) {
	root := filepath.Join(corpus, "cases")
	var files []*iqFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".iq") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if filter != "" && !strings.Contains(rel, filter) {
			return nil
		}
		f, err := parseIQFile(p, rel)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// run runs the files grouped by dataset (tables are reused across datasets,
// so each dataset is loaded once, in turn) and prints one line per file and
// the totals.
func (r *sqlRunner) run(files []*iqFile) *sqlTally {
	var order []string
	byDataset := map[string][]*iqFile{}
	for _, f := range files {
		if _, ok := byDataset[f.Dataset]; !ok {
			order = append(order, f.Dataset)
		}
		byDataset[f.Dataset] = append(byDataset[f.Dataset], f)
	}
	total := newTally()
	byFolder := map[string]*sqlTally{} // per QA folder, the targets
	filesIn := map[string]int{}
	for _, ds := range order {
		ingestErr := r.ingest(ds)
		if ingestErr != nil {
			fmt.Fprintf(r.out, "SQL  dataset %s not loaded: %v\n", ds, ingestErr)
		}
		for _, f := range byDataset[ds] {
			t := r.runFile(f, ingestErr)
			fmt.Fprintf(r.out, "SQL  %s: %d/%d passed", f.Path, t.passed(), t.statements)
			if s := t.failures(); s != "" {
				fmt.Fprintf(r.out, " (%s)", s)
			}
			fmt.Fprintln(r.out)
			total.add(t)
			folder := folderOf(f.Path)
			if byFolder[folder] == nil {
				byFolder[folder] = newTally()
			}
			byFolder[folder].add(t)
			filesIn[folder]++
		}
	}
	fmt.Fprintln(r.out)
	for _, folder := range slices.Sorted(maps.Keys(byFolder)) {
		t := byFolder[folder]
		fmt.Fprintf(r.out, "druid-sql %s: %d files, %d/%d passed", folder, filesIn[folder], t.passed(), t.statements)
		if s := t.failures(); s != "" {
			fmt.Fprintf(r.out, " (%s)", s)
		}
		fmt.Fprintln(r.out)
	}
	fmt.Fprintf(r.out, "druid-sql: %d files, %d statements: %d passed (%d results, %d expected errors of which %d as unsupported), %d failed",
		len(files), total.statements, total.passed(), total.passedRows, total.passedErrors, total.passedUnsupported, total.statements-total.passed())
	if s := total.failures(); s != "" {
		fmt.Fprintf(r.out, " (%s)", s)
	}
	fmt.Fprintf(r.out, "; %d nativePlan blocks not compared\n", total.plansSkipped)
	return total
}

// runFile runs one file's statements; a dataset that did not load fails
// every statement unrun (a missing table would make any expected error
// pass, and any result fail, for the wrong reason).
func (r *sqlRunner) runFile(f *iqFile, ingestErr error) *sqlTally {
	t := newTally()
	shown := ingestErr != nil // the dataset line already says why
	for _, st := range f.Statements {
		t.statements++
		if st.NativePlan != "" {
			t.plansSkipped++
		}
		reason, detail := failNoDataset, ""
		if ingestErr == nil {
			reason, detail = r.runStatement(st)
		}
		switch {
		case reason == passUnsupported:
			t.passedErrors++
			t.passedUnsupported++
		case reason == "" && st.Error:
			t.passedErrors++
		case reason == "":
			t.passedRows++
		default:
			t.failed[reason]++
			if r.verbose || !shown {
				fmt.Fprintf(r.out, "     %s:%d %s: %s\n", f.Path, st.Line, reason, oneLine(detail))
				shown = true
			}
		}
	}
	return t
}

// druidError is Druid's error JSON (current and legacy fields).
type druidError struct {
	Error        string `json:"error"`
	ErrorCode    string `json:"errorCode"`
	Category     string `json:"category"`
	ErrorMessage string `json:"errorMessage"`
	ErrorClass   string `json:"errorClass"`
}

// runStatement sends one statement and returns "" when it behaved as
// expected, else the failure reason and a detail.
func (r *sqlRunner) runStatement(st iqStatement) (reason, detail string) {
	ctx := map[string]any{"sqlStringifyArrays": false}
	for k, v := range st.Context {
		ctx[k] = v
	}
	body, _ := json.Marshal(map[string]any{
		"query": st.SQL, "resultFormat": "array", "header": true, "typesHeader": true, "sqlTypesHeader": true, "context": ctx,
	})
	resp, err := r.client.Post(r.base+"/svc/v2/sql", "application/json", bytes.NewReader(body))
	if err != nil {
		return failNoResponse, err.Error()
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return failNoResponse, err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		var de druidError
		json.Unmarshal(out, &de)
		switch {
		case resp.StatusCode == http.StatusNotFound && de.Error == "" && de.ErrorCode == "",
			resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotImplemented:
			// No SQL endpoint answered: nothing about the statement was learnt,
			// whatever it expects.
			return failUnsupport, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, trim(out))
		case isUnsupported(de) && st.Error:
			return passUnsupported, ""
		case st.Error:
			return "", ""
		case isUnsupported(de):
			return failUnsupport, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, trim(out))
		default:
			return failError, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, trim(out))
		}
	}
	if st.Error {
		return failResult, fmt.Sprintf("want an error (%s), got %s", st.ErrorHint, trim(out))
	}
	res, err := parseSQLResult(out)
	if err != nil {
		return failBadAnswer, err.Error()
	}
	res.typeTimestampArrays(st.Expected)
	actual, err := res.render()
	if err != nil {
		return failBadAnswer, err.Error()
	}
	if err := compareTables(st.Expected, actual, orderMatters(st.SQL)); err != nil {
		if trimmed, dropped := withoutEmptyExtraColumns(st.Expected, actual); len(dropped) > 0 &&
			compareTables(st.Expected, trimmed, orderMatters(st.SQL)) == nil {
			return failEmptyCols, fmt.Sprintf("columns %v are null in every row", dropped)
		}
		return failWrong, err.Error()
	}
	return "", ""
}

func isUnsupported(de druidError) bool {
	return strings.EqualFold(de.Category, "UNSUPPORTED") || strings.Contains(strings.ToLower(de.ErrorCode), "unsupported")
}

// folderOf is a case file's QA folder ("(top level)" for the one at the top).
func folderOf(path string) string {
	if i := strings.IndexByte(path, '/'); i > 0 {
		return path[:i]
	}
	return "(top level)"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// ---- datasets ----

// ingestDataset loads data/<dataset> with its native batch spec: the
// datasource is dropped first (datasets reuse table names, and a variant may
// cover fewer intervals than the one before), a spec reading a local file of
// Druid's source tree reads the corpus's rows file instead (the quickstart
// allows the corpus's data folder as a local input directory).
func (r *sqlRunner) ingestDataset(dataset string) error {
	dir := filepath.Join(r.corpus, "data", filepath.FromSlash(dataset))
	spec, ds, err := datasetSpec(dir)
	if err != nil {
		return err
	}
	if err := r.dropDataSource(ds); err != nil {
		return err
	}
	if _, err := nativeTask(spec); err != nil {
		return fmt.Errorf("ingest %s: %v", dataset, err)
	}
	return waitQueryable(ds)
}

// datasetSpec reads dir/ingest.json, pointing a local input source at the
// rows file beside it; it returns the spec and its datasource.
func datasetSpec(dir string) ([]byte, string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ingest.json"))
	if err != nil {
		return nil, "", err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, "", fmt.Errorf("%s/ingest.json: %w", dir, err)
	}
	s, _ := spec["spec"].(map[string]any)
	ioc, _ := s["ioConfig"].(map[string]any)
	src, _ := ioc["inputSource"].(map[string]any)
	schema, _ := s["dataSchema"].(map[string]any)
	ds, _ := schema["dataSource"].(string)
	if src == nil || ds == "" {
		return nil, "", fmt.Errorf("%s/ingest.json: no inputSource or dataSource", dir)
	}
	if src["type"] == "local" {
		rows, _ := filepath.Glob(filepath.Join(dir, "rows.*"))
		if len(rows) != 1 {
			return nil, "", fmt.Errorf("%s: want one rows.* file, found %d", dir, len(rows))
		}
		ioc["inputSource"] = map[string]any{"type": "local", "baseDir": dir, "filter": filepath.Base(rows[0])}
	}
	out, err := json.Marshal(spec)
	return out, ds, err
}

// dropDataSource marks every segment of ds unused and waits until the broker
// no longer answers for it.
func (r *sqlRunner) dropDataSource(ds string) error {
	req, _ := http.NewRequest(http.MethodDelete, r.base+"/svc/coordinator/v1/datasources/"+url.PathEscape(ds), nil)
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("drop %s: HTTP %d", ds, resp.StatusCode)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		code, body, err := post("/svc/v2/", map[string]any{"queryType": "timeBoundary", "dataSource": ds})
		if err == nil && (code != 200 || bytes.Equal(bytes.TrimSpace(body), []byte("[]"))) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("datasource %s still served 60 s after it was dropped", ds)
}

// sqlCorpusDir is the druid-sql corpus folder, or "" when it is absent.
func sqlCorpusDir() string {
	d := os.Getenv("STRATA_CONFORMANCE_SQL_DIR")
	if d == "" {
		d = "../shared/conformance/druid-sql"
	}
	abs, err := filepath.Abs(d)
	if err != nil || !exists(filepath.Join(abs, "MANIFEST.md")) {
		return ""
	}
	return abs
}
