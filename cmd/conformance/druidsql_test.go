package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// corpus is the druid-sql corpus the Makefile points at (../shared from the
// repository root), found from this package's folder.
func corpus(t *testing.T) string {
	t.Helper()
	d := os.Getenv("STRATA_CONFORMANCE_SQL_DIR")
	if d == "" {
		d = "../../../shared/conformance/druid-sql"
	}
	abs, _ := filepath.Abs(d)
	if !exists(filepath.Join(abs, "MANIFEST.md")) {
		t.Skipf("druid-sql corpus not at %s (set STRATA_CONFORMANCE_SQL_DIR)", abs)
	}
	return abs
}

// manifestRow matches a per-file row of MANIFEST.md's tables:
// | `cases/<file>` | `<source>` | <dataset> | ok | error | nativePlan |
var manifestRow = regexp.MustCompile("^\\| `cases/([^`]+)` \\| `[^`]+` \\| (\\S+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|$")

// TestParseEveryFileAgainstManifest parses the whole corpus and checks each
// file's dataset and its !ok / !error / !nativePlan counts against the
// manifest's own per-file table.
func TestParseEveryFileAgainstManifest(t *testing.T) {
	dir := corpus(t)
	f, err := os.Open(filepath.Join(dir, "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type counts struct {
		dataset          string
		ok, errs, native int
	}
	want := map[string]counts{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := manifestRow.FindStringSubmatch(sc.Text()); m != nil {
			ok, _ := strconv.Atoi(m[3])
			e, _ := strconv.Atoi(m[4])
			n, _ := strconv.Atoi(m[5])
			want[m[1]] = counts{m[2], ok, e, n}
		}
	}
	files, err := loadIQFiles(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 239 || len(want) != 239 {
		t.Fatalf("%d files parsed, %d in the manifest; want 239 each", len(files), len(want))
	}
	statements := 0
	for _, f := range files {
		var got counts
		got.dataset = f.Dataset
		for _, st := range f.Statements {
			switch {
			case st.Error:
				got.errs++
			default:
				got.ok++
				if st.Expected == nil {
					t.Errorf("%s:%d: !ok without a table", f.Path, st.Line)
				}
			}
			if st.NativePlan != "" {
				got.native++
				if !json.Valid([]byte(st.NativePlan)) {
					t.Errorf("%s:%d: plan block is not JSON", f.Path, st.Line)
				}
			}
			if st.SQL == "" || strings.HasSuffix(st.SQL, ";") {
				t.Errorf("%s:%d: statement %q", f.Path, st.Line, st.SQL)
			}
		}
		statements += len(f.Statements)
		if got != want[f.Path] {
			t.Errorf("%s: parsed %+v, manifest says %+v", f.Path, got, want[f.Path])
		}
		if _, err := os.Stat(filepath.Join(dir, "data", f.Dataset, "ingest.json")); err != nil {
			t.Errorf("%s: dataset %s has no spec: %v", f.Path, f.Dataset, err)
		}
	}
	if statements != 10325 {
		t.Errorf("%d statements, the manifest counts 10325", statements)
	}
}

// TestParseRealFile reads one real file in detail: context from !set,
// statements without their ';', error hints, and a table whose cells hold
// '|' (string_agg(x, '|')).
func TestParseRealFile(t *testing.T) {
	dir := corpus(t)
	f, err := parseIQFile(filepath.Join(dir, "cases/qaAggFuncs/string_agg_long_test001.01.all.iq"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if f.Dataset != "qaAggFuncs" {
		t.Errorf("dataset %q", f.Dataset)
	}
	first := f.Statements[0]
	if first.SQL != "SELECT count(*) cnt\nFROM test_agg_funcs" || first.Line != 7 {
		t.Errorf("first statement %d %q", first.Line, first.SQL)
	}
	if first.Context["useApproximateCountDistinct"] != false || len(first.Context) != 1 {
		t.Errorf("context %v, want only useApproximateCountDistinct=false (outputformat is Quidem's)", first.Context)
	}
	if got := first.Expected; got.Columns[0] != "cnt" || len(got.Rows) != 1 || got.Rows[0][0] != "18" {
		t.Errorf("first table %+v", got)
	}
	var errSt *iqStatement
	var pipes int
	for i, st := range f.Statements {
		if st.Error && errSt == nil {
			errSt = &f.Statements[i]
		}
		if st.Expected != nil {
			for _, r := range st.Expected.Rows {
				for _, c := range r {
					if strings.Contains(c, "|") {
						pipes++
					}
				}
			}
		}
	}
	if errSt == nil || errSt.SQL != "SELECT string_agg(1111111111, '|') AS col" || errSt.ErrorHint != "QueryInterruptedException" {
		t.Errorf("error statement %+v", errSt)
	}
	if pipes == 0 {
		t.Error("no cell holds '|': cells were split on it")
	}
}

func TestParseIQRejectsMalformed(t *testing.T) {
	use := "!use druidtest://?datasets=sql/src/test/quidem/qatests/qaAggFuncs\n"
	for name, text := range map[string]string{
		"no expectation":   use + "SELECT 1;\n",
		"unterminated":     use + "SELECT 1\n",
		"bad row count":    use + "SELECT 1;\n+---+\n| a |\n+---+\n| 1 |\n+---+\n(2 rows)\n\n!ok\n",
		"plan without ok":  use + "SELECT 1;\nx\n!error\n{}\n!nativePlan\n",
		"unknown":          use + "!plan\n",
		"no dataset":       "SELECT 1;\nx\n!error\n",
		"ragged row":       use + "SELECT 1;\n+---+\n| a |\n+---+\n| 1 | 2 |\n+---+\n(1 row)\n\n!ok\n",
		"dangling plan":    use + "SELECT 1;\n+---+\n| a |\n+---+\n| 1 |\n+---+\n(1 row)\n\n!ok\n{\n}\n",
		"not a border top": use + "SELECT 1;\n| a |\n+---+\n| 1 |\n+---+\n(1 row)\n\n!ok\n",
	} {
		if _, err := parseIQ(text); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestParseIQSetAndPlan(t *testing.T) {
	f, err := parseIQ(`!set useApproximateCountDistinct false
!use druidtest://?componentSupplier=X&datasets=sql/src/test/quidem/sampledataset&numMergeBuffers=3
!set outputformat mysql
SELECT 1;
+--------+
| EXPR$0 |
+--------+
|      1 |
+--------+
(1 row)

!ok
{
  "queryType" : "scan"
}
!nativePlan
!set maxSubqueryRows 10
SELECT x
  FROM t;
+---+
| x |
+---+
+---+
(0 rows)

!ok
`)
	if err != nil {
		t.Fatal(err)
	}
	if f.Dataset != "sampledataset" || len(f.Statements) != 2 {
		t.Fatalf("%+v", f)
	}
	a, b := f.Statements[0], f.Statements[1]
	if a.NativePlan == "" || b.NativePlan != "" {
		t.Errorf("plans %q %q", a.NativePlan, b.NativePlan)
	}
	if _, ok := a.Context["maxSubqueryRows"]; ok || b.Context["maxSubqueryRows"] != int64(10) {
		t.Errorf("contexts %v %v", a.Context, b.Context)
	}
	if len(b.Expected.Rows) != 0 || b.Expected.Columns[0] != "x" {
		t.Errorf("empty table %+v", b.Expected)
	}
}

func TestOrderMatters(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT a FROM t":                                     false,
		"SELECT a FROM t ORDER BY a":                          true,
		"select a from t order by a desc limit 2":             true,
		"SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 2)":  false,
		"SELECT ROW_NUMBER() OVER (ORDER BY a) FROM t":        false,
		"SELECT * FROM (SELECT a FROM t) ORDER BY f(a)":       true,
		"SELECT * FROM (SELECT a FROM t ORDER BY a) ORDER BY": true,
	} {
		if got := orderMatters(sql); got != want {
			t.Errorf("%q: %v, want %v", sql, got, want)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{6, 64, "6.0"}, {0.1, 64, "0.1"}, {229.1831180523293, 64, "229.1831180523293"}, {0, 64, "0.0"},
		{1e7, 64, "1.0E7"}, {1.234e-5, 64, "1.234E-5"}, {-2.5e10, 64, "-2.5E10"}, {0.001, 64, "0.001"},
		{9999999, 64, "9999999.0"}, {11.11111111, 32, "11.111111"},
	} {
		if got := javaDouble(c.f, c.bits); got != c.want {
			t.Errorf("javaDouble(%v, %d) = %s, want %s", c.f, c.bits, got, c.want)
		}
	}
}

func TestRenderCell(t *testing.T) {
	for _, c := range []struct {
		v, typ, sqlType, want string
	}{
		{`null`, "LONG", "BIGINT", ""},
		{`18`, "LONG", "BIGINT", "18"},
		{`6`, "DOUBLE", "DOUBLE", "6.0"},
		{`6.0`, "DOUBLE", "DOUBLE", "6.0"},
		{`"2020-01-01T01:01:01.000Z"`, "LONG", "TIMESTAMP", "2020-01-01 01:01:01.000"},
		{`1577840461000`, "LONG", "TIMESTAMP", "2020-01-01 01:01:01.000"},
		{`true`, "LONG", "BOOLEAN", "true"},
		{`0`, "LONG", "BOOLEAN", "false"},
		{`[0.1,0.2,null]`, "ARRAY<DOUBLE>", "ARRAY", "[0.1, 0.2, null]"},
		{`[1.0,2]`, "ARRAY<DOUBLE>", "ARRAY", "[1.0, 2.0]"},
		{`"[\"S1\",\"S2\",null]"`, "ARRAY<STRING>", "ARRAY", "[S1, S2, null]"},
		{`[[1,2],null]`, "ARRAY<ARRAY<LONG>>", "ARRAY", "[[1, 2], null]"},
		{`["-1","0","1"]`, "STRING", "VARCHAR", `["-1","0","1"]`},
		{`{"o1": {}, "o2": [], "o3": null}`, "COMPLEX<json>", "OTHER", `{"o1":{},"o2":[],"o3":null}`},
		{`{"b":1,"a":2}`, "COMPLEX<json>", "OTHER", `{"b":1,"a":2}`}, // key order kept
		{`"a|b"`, "STRING", "VARCHAR", "a|b"},
		{`""`, "STRING", "VARCHAR", ""},
	} {
		got, err := renderCell(json.RawMessage(c.v), c.typ, c.sqlType)
		if err != nil || got != c.want {
			t.Errorf("renderCell(%s, %s, %s) = %q, %v; want %q", c.v, c.typ, c.sqlType, got, err, c.want)
		}
	}
	if _, err := renderCell(json.RawMessage(`"yesterday"`), "LONG", "TIMESTAMP"); err == nil {
		t.Error("a malformed timestamp rendered")
	}
}

func TestCompareTables(t *testing.T) {
	exp := &boxTable{Columns: []string{"a", "b"}, Rows: [][]string{{"1", "x"}, {"2", ""}}}
	swapped := &boxTable{Columns: []string{"a", "b"}, Rows: [][]string{{"2", ""}, {"1", "x"}}}
	if err := compareTables(exp, swapped, false); err != nil {
		t.Errorf("unordered: %v", err)
	}
	if err := compareTables(exp, swapped, true); err == nil {
		t.Error("ordered comparison ignored the order")
	}
	for name, act := range map[string]*boxTable{
		"label":  {Columns: []string{"a", "c"}, Rows: exp.Rows},
		"count":  {Columns: exp.Columns, Rows: exp.Rows[:1]},
		"value":  {Columns: exp.Columns, Rows: [][]string{{"1", "x"}, {"2", "y"}}},
		"double": {Columns: exp.Columns, Rows: [][]string{{"1.0", "x"}, {"2", ""}}},
	} {
		if err := compareTables(exp, act, false); err == nil {
			t.Errorf("%s: no difference found", name)
		}
	}
}

// fakeSQL is an HTTP server standing in for /svc/v2/sql: it answers each
// statement with the handler the test gives and records the requests.
type fakeSQL struct {
	mu       sync.Mutex
	requests []map[string]any
	answer   func(sql string) (int, string)
}

func (f *fakeSQL) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/svc/v2/sql" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	code, body := f.answer(req["query"].(string))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, body)
}

// rollupAnswer is the rollup tutorial table as /svc/v2/sql answers it in
// resultFormat array with the three header rows; swap reverses the rows.
func rollupAnswer(swap bool) string {
	rows := []string{
		`["2018-01-01T01:01:00.000Z","1.1.1.1","2.2.2.2",35937,3,286]`,
		`["2018-01-01T01:02:00.000Z","1.1.1.1","2.2.2.2",366260,2,415]`,
		`["2018-01-01T01:03:00.000Z","1.1.1.1","2.2.2.2",10204,1,49]`,
		`["2018-01-02T21:33:00.000Z","7.7.7.7","8.8.8.8",100288,2,161]`,
		`["2018-01-02T21:35:00.000Z","7.7.7.7","8.8.8.8",2818,1,12]`,
	}
	if swap {
		rows[0], rows[4] = rows[4], rows[0]
	}
	return `[["__time","srcIP","dstIP","bytes","count","packets"],` +
		`["LONG","STRING","STRING","LONG","LONG","LONG"],` +
		`["TIMESTAMP","VARCHAR","VARCHAR","BIGINT","BIGINT","BIGINT"],` + strings.Join(rows, ",") + `]`
}

// TestRunnerAgainstFakeServer runs real corpus files through the runner
// against a fake SQL endpoint: a right answer passes, a wrong one fails as a
// wrong result, 405 (no endpoint) as unsupported, and the totals say so.
func TestRunnerAgainstFakeServer(t *testing.T) {
	dir := corpus(t)
	files, err := loadIQFiles(dir, "testframework_all_engines_dataset")
	if err != nil || len(files) != 1 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	for _, c := range []struct {
		name   string
		answer func(string) (int, string)
		want   string
	}{
		{"right", func(string) (int, string) { return 200, rollupAnswer(false) }, "1 passed (1 results, 0 expected errors of which 0 as unsupported), 0 failed"},
		// No ORDER BY: Quidem compares as a multiset.
		{"reordered", func(string) (int, string) { return 200, rollupAnswer(true) }, "1 passed (1 results, 0 expected errors of which 0 as unsupported), 0 failed"},
		{"wrong", func(string) (int, string) { return 200, strings.Replace(rollupAnswer(false), "35937", "35938", 1) }, "0 passed (0 results, 0 expected errors of which 0 as unsupported), 1 failed (wrong result 1)"},
		{"no endpoint", func(string) (int, string) { return 405, `{"error":"method not allowed"}` }, "1 failed (unsupported 1)"},
		{"error", func(string) (int, string) {
			return 400, `{"error":"druidException","errorCode":"invalidInput","category":"INVALID_INPUT"}`
		}, "1 failed (error where a result was expected 1)"},
		{"unsupported", func(string) (int, string) {
			return 400, `{"error":"druidException","errorCode":"unsupported","category":"UNSUPPORTED"}`
		}, "1 failed (unsupported 1)"},
		{"garbage", func(string) (int, string) { return 200, `{"rows":1}` }, "1 failed (malformed answer 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := &fakeSQL{answer: c.answer}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			var out bytes.Buffer
			var ingested []string
			r := &sqlRunner{base: srv.URL, corpus: dir, client: srv.Client(), out: &out,
				ingest: func(ds string) error { ingested = append(ingested, ds); return nil }}
			r.run(files)
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("output:\n%s\nwant %q", out.String(), c.want)
			}
			if len(ingested) != 1 || ingested[0] != "sampledataset" {
				t.Errorf("ingested %v", ingested)
			}
			req := fake.requests[0]
			ctx, _ := req["context"].(map[string]any)
			if req["query"] != `select * from "rollup-tutorial"` || req["resultFormat"] != "array" || req["sqlTypesHeader"] != true || ctx["sqlStringifyArrays"] != false {
				t.Errorf("request %v", req)
			}
		})
	}
}

// TestRunnerExpectedErrors runs a qaAggFuncs file whose statements include
// !error ones: with every statement failing (400), exactly the !error
// statements pass, and the others fail as errors; with every statement
// answering, the !error ones fail as results where an error was expected.
func TestRunnerExpectedErrors(t *testing.T) {
	dir := corpus(t)
	files, err := loadIQFiles(dir, "qaAggFuncs/string_agg_double_test001.01.all.iq")
	if err != nil || len(files) != 1 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	run := func(code int, body string) string {
		srv := httptest.NewServer(&fakeSQL{answer: func(string) (int, string) { return code, body }})
		defer srv.Close()
		var out bytes.Buffer
		r := &sqlRunner{base: srv.URL, corpus: dir, client: srv.Client(), out: &out, ingest: func(string) error { return nil }}
		r.run(files)
		return out.String()
	}
	if out := run(400, `{"error":"druidException","errorCode":"invalidInput","category":"INVALID_INPUT"}`); !strings.Contains(out, "50 statements: 1 passed (0 results, 1 expected errors of which 0 as unsupported), 49 failed (error where a result was expected 49)") ||
		!strings.Contains(out, "druid-sql qaAggFuncs: 1 files, 1/50 passed (error where a result was expected 49)") {
		t.Errorf("all failing:\n%s", out)
	}
	if out := run(400, `{"error":"druidException","errorCode":"unsupported","category":"UNSUPPORTED"}`); !strings.Contains(out, "1 passed (0 results, 1 expected errors of which 1 as unsupported), 49 failed (unsupported 49)") {
		t.Errorf("all unsupported:\n%s", out)
	}
	empty := `[["cnt"],["LONG"],["BIGINT"]]`
	if out := run(200, empty); !strings.Contains(out, "result where an error was expected 1") || !strings.Contains(out, "wrong result 49") {
		t.Errorf("all answering:\n%s", out)
	}
}

// TestRunnerDatasetNotLoaded: a dataset that fails to load fails all its
// files' statements, expected errors included, with that reason instead of
// querying a missing table.
func TestRunnerDatasetNotLoaded(t *testing.T) {
	dir := corpus(t)
	files, _ := loadIQFiles(dir, "qaAggFuncs/string_agg_double_test001.01.all.iq")
	fake := &fakeSQL{answer: func(string) (int, string) { return 200, rollupAnswer(false) }}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var out bytes.Buffer
	r := &sqlRunner{base: srv.URL, corpus: dir, client: srv.Client(), out: &out,
		ingest: func(string) error { return os.ErrPermission }}
	r.run(files)
	if !strings.Contains(out.String(), "0 passed (0 results, 0 expected errors of which 0 as unsupported), 50 failed (dataset not loaded 50)") || len(fake.requests) != 0 {
		t.Errorf("output:\n%s\n%d requests", out.String(), len(fake.requests))
	}
}

// TestDatasetSpec: an inline spec goes as written; a local one reads the
// corpus's rows file instead of Druid's source tree.
func TestDatasetSpec(t *testing.T) {
	dir := corpus(t)
	b, ds, err := datasetSpec(filepath.Join(dir, "data/qaAggFuncs"))
	if err != nil || ds != "test_agg_funcs" || !bytes.Contains(b, []byte(`"type":"inline"`)) {
		t.Errorf("inline: %s %v", ds, err)
	}
	local := filepath.Join(dir, "data/qaJsonCols/ingest/infmt_tsv_file")
	b, ds, err = datasetSpec(local)
	if err != nil || ds != "test_json_cols" {
		t.Fatalf("local: %s %v", ds, err)
	}
	var spec struct {
		Spec struct {
			IOConfig struct {
				InputSource map[string]any `json:"inputSource"`
			} `json:"ioConfig"`
		} `json:"spec"`
	}
	json.Unmarshal(b, &spec)
	src := spec.Spec.IOConfig.InputSource
	if src["baseDir"] != local || src["filter"] != "rows.tsv" {
		t.Errorf("local input source %v", src)
	}
}

// Columns expected lacks are set apart only when null in every row; a
// column with a value, or a difference elsewhere, stays a wrong result.
func TestWithoutEmptyExtraColumns(t *testing.T) {
	exp := &boxTable{Columns: []string{"a", "b"}, Rows: [][]string{{"1", "x"}, {"2", ""}}}
	act := &boxTable{Columns: []string{"a", "e", "b", "f"}, Rows: [][]string{{"1", "", "x", ""}, {"2", "", "", ""}}}
	got, dropped := withoutEmptyExtraColumns(exp, act)
	if !slices.Equal(dropped, []string{"e", "f"}) || compareTables(exp, got, true) != nil {
		t.Fatalf("dropped %v, left %v", dropped, got)
	}
	act.Rows[1][3] = "v"
	if got, dropped := withoutEmptyExtraColumns(exp, act); !slices.Equal(dropped, []string{"e"}) || compareTables(exp, got, true) == nil {
		t.Fatalf("a column with a value was dropped: %v, left %v", dropped, got)
	}
}

// TestTimestampArraysTypedByExpectedCells: the HTTP API says only ARRAY for a
// TIMESTAMP ARRAY (as Druid's does), so a LONG array column whose expected
// cells are timestamp arrays renders as JDBC prints one; the millis must
// still equal the expected times, and a BIGINT array stays numbers.
func TestTimestampArraysTypedByExpectedCells(t *testing.T) {
	body := []byte(`[["col"],["ARRAY<LONG>"],["ARRAY"],[[1577840461000,1580518861000]]]`)
	for _, c := range []struct {
		want string
		ok   bool
	}{
		{"[2020-01-01 01:01:01, 2020-02-01 01:01:01]", true},
		{"[2020-01-01 01:01:01, 2020-02-01 01:01:02]", false}, // one second off
		{"[1577840461000, 1580518861000]", true},              // a BIGINT array stays numbers
		{"[2020-01-01 01:01:01]", false},
	} {
		res, err := parseSQLResult(body)
		if err != nil {
			t.Fatal(err)
		}
		expected := &boxTable{Columns: []string{"col"}, Rows: [][]string{{c.want}}}
		res.typeTimestampArrays(expected)
		actual, err := res.render()
		if err != nil {
			t.Fatal(err)
		}
		if err := compareTables(expected, actual, true); (err == nil) != c.ok {
			t.Errorf("expected %s: compare error %v, want ok=%v", c.want, err, c.ok)
		}
	}
}
