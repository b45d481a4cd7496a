package console_test

// The query view in a real browser: SQL runs and its rows and chart render,
// Ctrl+Enter runs, a syntax error's position is marked in the editor, EXPLAIN
// shows the native plan (which then runs in the native mode), the history
// survives a reload, and the native mode runs a timeseries. Expected values
// come from the same API the view calls, asked directly.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// queryPage opens the query view on the shared cluster with wiki loaded.
func queryPage(t *testing.T) (*consoleEnv, *page) {
	t.Helper()
	e := startConsole(t, consoleOpts{})
	e.ingestWiki(t, "wiki")
	p := e.browser(t, "", "")
	p.open("/query")
	// The view reopens in the mode last used (kept in localStorage, which
	// the tests' tabs share): each test starts in SQL.
	p.click("#query-mode-sql")
	return e, p
}

// setEditor replaces the editor's text as typing would (an input event), so
// the highlighting and the saved draft follow.
func setEditor(p *page, text string) {
	p.t.Helper()
	js, _ := json.Marshal(text)
	eval[bool](p, fmt.Sprintf(`(() => { const el = document.querySelector('#query-editor');
		el.value = %s; el.dispatchEvent(new Event('input')); return true; })()`, js))
}

// finished waits for the run that was just started to end and returns the
// status line ("3 rows in 12 ms", "Plan in 5 ms", "Failed").
func finished(p *page) string {
	p.t.Helper()
	return run(p, chromedp.Poll[string](`(() => {
		const s = document.querySelector('#query-status').textContent;
		return !document.querySelector('#query-run').disabled && s && !s.endsWith('…') ? s : '';
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
}

// expectStatus waits for the run and fails, with the error the view shows,
// unless the status line starts with prefix.
func expectStatus(p *page, prefix string) string {
	p.t.Helper()
	s := finished(p)
	if !strings.HasPrefix(s, prefix) {
		errText := eval[string](p, `document.querySelector('#query-error').textContent`)
		p.t.Fatalf("status %q, want %q… (error shown: %q)", s, prefix, errText)
	}
	return s
}

// startRun clears the status line (so finished sees this run's) and clicks sel.
func startRun(p *page, sel string) {
	p.t.Helper()
	eval[bool](p, `(document.querySelector('#query-status').textContent = '', true)`)
	p.click(sel)
}

// resultRows is the results table's cells as text, in the order shown.
func resultRows(p *page) [][]string {
	p.t.Helper()
	return eval[[][]string](p, `[...document.querySelectorAll('#query-results table.data tbody tr')]
		.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))`)
}

// sqlArray asks the API for query's rows in the array format (no header).
func sqlArray(t *testing.T, e *consoleEnv, query string) [][]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "resultFormat": "array"})
	code, got, err := e.call("POST", "/svc/v2/sql", "application/json", string(body))
	if err != nil || code != 200 {
		t.Fatalf("SQL %s: %d %s %v", query, code, got, err)
	}
	var rows [][]any
	if err := json.Unmarshal([]byte(got), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// asText renders API values as the table shows them.
func asText(rows [][]any) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		for _, v := range r {
			out[i] = append(out[i], fmt.Sprint(v))
		}
	}
	return out
}

func sameRows(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: the table shows %v, the API answers %v", what, got, want)
	}
}

// chartInside fails unless every point of every chart lies within its
// chart's y axis (the scale covers the values).
func chartInside(t *testing.T, p *page) {
	t.Helper()
	out := eval[[]string](p, `[...document.querySelectorAll('#query-chart svg')].flatMap((svg) => {
		const axis = [...svg.querySelectorAll('line.axis')].find((l) => l.getAttribute('x1') === l.getAttribute('x2'));
		const [top, bottom] = [+axis.getAttribute('y1'), +axis.getAttribute('y2')].sort((a, b) => a - b);
		return [...svg.querySelectorAll('circle')].filter((c) => +c.getAttribute('cy') < top - 0.5 || +c.getAttribute('cy') > bottom + 0.5)
			.map((c) => svg.getAttribute('aria-label') + ': ' + c.textContent);
	})`)
	if len(out) > 0 {
		t.Errorf("points drawn outside their chart's axis: %q", out)
	}
}

func TestQueryViewRunsSQLAndCharts(t *testing.T) {
	e, p := queryPage(t)
	q := `SELECT FLOOR(__time TO DAY) AS "day", COUNT(*) AS edits, SUM(added) AS added FROM wiki GROUP BY 1 ORDER BY 1`
	want := asText(sqlArray(t, e, q))
	if len(want) != 3 {
		t.Fatalf("the premise: wiki spans 3 days, the API answers %v", want)
	}
	setEditor(p, q)
	startRun(p, "#query-run")
	expectStatus(p, "3 rows in ")
	sameRows(t, "SQL result", resultRows(p), want)
	// The highlighted layer paints the query's keywords and quoted name.
	if kw := eval[[]string](p, `[...document.querySelectorAll('.qe-paint .tok-kw')].map((s) => s.textContent)`); strings.Join(kw, " ") != "SELECT TO DAY AS AS AS FROM GROUP BY ORDER BY" {
		t.Errorf("keywords painted: %v", kw)
	}
	if fn := eval[[]string](p, `[...document.querySelectorAll('.qe-paint .tok-fn')].map((s) => s.textContent)`); strings.Join(fn, " ") != "FLOOR COUNT SUM" {
		t.Errorf("functions painted: %v", fn)
	}
	if id := eval[string](p, `document.querySelector('.qe-paint .tok-qid').textContent`); id != `"day"` {
		t.Errorf("quoted identifier painted: %q", id)
	}

	// A time column and two numbers: a chart each (own scale), a point per day.
	charts := eval[[]string](p, `[...document.querySelectorAll('#query-chart svg')].map((s) => s.getAttribute('aria-label'))`)
	lines := eval[int](p, `document.querySelectorAll('#query-chart svg path.series').length`)
	points := eval[int](p, `document.querySelectorAll('#query-chart svg circle').length`)
	if fmt.Sprint(charts) != "[edits over time: edits added over time: added]" || lines != 2 || points != 6 {
		t.Fatalf("charts %q with %d lines and %d points, want edits and added, a line each, 6 points", charts, lines, points)
	}
	chartInside(t, p)
	p.screenshot("query-sql-results")

	// Sorting by "added", descending on the second click.
	p.click(`#query-results th:nth-child(3) button`)
	p.click(`#query-results th:nth-child(3) button`)
	if sort := eval[string](p, `document.querySelector('#query-results th:nth-child(3)').getAttribute('aria-sort')`); sort != "descending" {
		t.Fatalf("aria-sort %q after two clicks", sort)
	}
	sorted := resultRows(p)
	for i := 1; i < len(sorted); i++ {
		var a, b int
		fmt.Sscan(sorted[i-1][2], &a)
		fmt.Sscan(sorted[i][2], &b)
		if a < b {
			t.Fatalf("not sorted by added, descending: %v", sorted)
		}
	}

	// Copy as JSON through the clipboard: the browser's clipboard is
	// replaced by one that records, so the test reads what was copied.
	eval[bool](p, `(navigator.clipboard.writeText = (t) => { window.copied = t; return Promise.resolve(); }, true)`)
	p.click("#query-copy-json")
	copied := run(p, chromedp.Poll[string](`window.copied`))
	var objs []map[string]any
	if err := json.Unmarshal([]byte(copied), &objs); err != nil || len(objs) != 3 || objs[0]["edits"] == nil || objs[0]["day"] == nil {
		t.Fatalf("copied JSON %q: %v", copied, err)
	}
	// Copy as CSV with no clipboard: the fallback link holds the CSV.
	// (The console's CSP forbids fetching the blob: URL back, so the test
	// keeps the Blob the link was made from.)
	eval[bool](p, `(navigator.clipboard.writeText = () => Promise.reject(new Error('denied')),
		URL.createObjectURL = ((make) => (b) => { window.downloaded = b; return make(b); })(URL.createObjectURL), true)`)
	p.click("#query-copy-csv")
	p.waitVisible("#query-download")
	if name := eval[string](p, `document.querySelector('#query-download').download`); name != "query-result.csv" {
		t.Errorf("download name %q", name)
	}
	csv := run(p, chromedp.Evaluate[string](`window.downloaded.text()`, chromedp.EvalAwaitPromise))
	lines2 := strings.Split(strings.TrimSpace(csv), "\r\n")
	if len(lines2) != 4 || lines2[0] != "day,edits,added" || lines2[1] != strings.Join(want[0], ",") {
		t.Fatalf("CSV download:\n%s\nwant the header and %v", csv, want)
	}
}

func TestQueryViewCtrlEnterRuns(t *testing.T) {
	e, p := queryPage(t)
	q := "SELECT COUNT(*) AS n, SUM(deleted) AS d\nFROM wiki"
	want := asText(sqlArray(t, e, q))
	setEditor(p, "")
	p.typeText("#query-editor", q) // real key presses, the newline too
	eval[bool](p, `(document.querySelector('#query-status').textContent = '', true)`)
	p.do(chromedp.Focus(chromedp.CSS("#query-editor")), chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	expectStatus(p, "1 row in ")
	sameRows(t, "Ctrl+Enter result", resultRows(p), want)
	// Ctrl+Enter ran the query and typed nothing into it.
	if v := eval[string](p, `document.querySelector('#query-editor').value`); v != q {
		t.Fatalf("editor after Ctrl+Enter: %q, want %q", v, q)
	}
	p.screenshot("query-ctrl-enter")
}

func TestQueryViewMarksSyntaxError(t *testing.T) {
	e, p := queryPage(t)
	p.allowConsole("status of 400") // the browser logs the API's 400 it shows
	q := "SELECT page,\n  COUNT(*) AS n\nFRM wiki GROUP BY page"
	body, _ := json.Marshal(map[string]string{"query": q})
	code, apiErr, _ := e.call("POST", "/svc/v2/sql", "application/json", string(body))
	if code != 400 || !strings.Contains(apiErr, "(line [3], column [1])") {
		t.Fatalf("the premise: the API places the error at line 3, column 1: %d %s", code, apiErr)
	}
	setEditor(p, q)
	startRun(p, "#query-run")
	if s := finished(p); s != "Failed" {
		t.Fatalf("status %q", s)
	}
	if msg := p.text("#query-error .error-box"); !strings.Contains(msg, "Error 400: ") || !strings.Contains(msg, "(line [3], column [1])") {
		t.Fatalf("error shown: %q", msg)
	}
	if mark := eval[string](p, `document.querySelector('.qe-paint mark.sql-error').textContent`); mark != "FRM" {
		t.Fatalf("marked in the editor: %q, want FRM", mark)
	}
	if inv := eval[string](p, `document.querySelector('#query-editor').getAttribute('aria-invalid')`); inv != "true" {
		t.Errorf("editor aria-invalid %q", inv)
	}
	p.screenshot("query-syntax-error")
	// The button puts the caret on the error.
	if b := p.text("#query-error-goto"); b != "Go to line 3, column 1" {
		t.Fatalf("goto button %q", b)
	}
	p.click("#query-error-goto")
	at := eval[int](p, `document.querySelector('#query-editor').selectionStart`)
	if want := strings.Index(q, "FRM"); at != want {
		t.Fatalf("caret at %d, want %d", at, want)
	}
	// Editing clears the mark.
	p.typeText("#query-editor", " ")
	if n := eval[int](p, `document.querySelectorAll('.qe-paint mark.sql-error').length`); n != 0 {
		t.Fatalf("%d marks after an edit", n)
	}

	// EXPLAIN puts its words before the query (after any SET): the mark
	// still lands on the editor's own text.
	setEditor(p, "SET sqlTimeZone = 'UTC';\nSELECT page FRM wiki")
	startRun(p, "#query-explain")
	expectStatus(p, "Failed")
	if mark := eval[string](p, `document.querySelector('.qe-paint mark.sql-error').textContent`); mark != "wiki" {
		t.Fatalf("EXPLAIN's error marked on %q, want wiki (error: %s)", mark, p.text("#query-error"))
	}
}

func TestQueryViewExplainThenNative(t *testing.T) {
	e, p := queryPage(t)
	q := "SELECT page, COUNT(*) AS n FROM wiki GROUP BY page"
	plan := sqlArray(t, e, "EXPLAIN PLAN FOR "+q)
	var natives []struct {
		Query map[string]any `json:"query"`
	}
	if err := json.Unmarshal([]byte(plan[0][0].(string)), &natives); err != nil || len(natives) != 1 {
		t.Fatalf("the API's plan %v: %v", plan, err)
	}
	queryType := natives[0].Query["queryType"].(string)
	setEditor(p, q)
	startRun(p, "#query-explain")
	expectStatus(p, "Plan in ")
	shown := p.text("#query-plan")
	if !strings.Contains(shown, "Native query: "+queryType) || !strings.Contains(shown, `"queryType": "`+queryType+`"`) ||
		!strings.Contains(shown, `"name": "wiki"`) || !strings.Contains(shown, `Resources`) {
		t.Fatalf("plan shown:\n%s\nwant the %s query on wiki", shown, queryType)
	}
	p.screenshot("query-explain")

	// The plan opens in the native mode and runs there, answering what SQL does.
	p.click("#query-plan button")
	if pressed := eval[string](p, `document.querySelector('#query-mode-native').getAttribute('aria-pressed')`); pressed != "true" {
		t.Fatalf("native mode not selected: %q", pressed)
	}
	startRun(p, "#query-run")
	want := sqlArray(t, e, "SELECT COUNT(DISTINCT page) FROM wiki")
	expectStatus(p, fmt.Sprint(want[0][0], " rows in "))
}

func TestQueryViewHistorySurvivesReload(t *testing.T) {
	_, p := queryPage(t)
	marker := fmt.Sprintf("history-%d", time.Now().UnixNano())
	q := fmt.Sprintf("SELECT '%s' AS marker", marker)
	setEditor(p, q)
	startRun(p, "#query-run")
	expectStatus(p, "1 row in ")
	setEditor(p, "SELECT 1")
	p.do(chromedp.Reload())
	p.waitReady()
	first := p.text("#query-history li:first-child button")
	if !strings.Contains(first, marker) || !strings.Contains(first, "1 row,") {
		t.Fatalf("history's newest entry after a reload: %q, want the %s query", first, marker)
	}
	p.screenshot("query-history")
	p.click("#query-history li:first-child button")
	if v := eval[string](p, `document.querySelector('#query-editor').value`); v != q {
		t.Fatalf("the history item loaded %q, want %q", v, q)
	}
	p.click("#query-history-clear")
	if n := eval[int](p, `JSON.parse(localStorage.getItem('strata.console.query.history')).length`); n != 0 {
		t.Fatalf("%d entries stored after Clear", n)
	}
	if s := p.text("#query-history"); !strings.Contains(s, "Queries you run appear here.") {
		t.Fatalf("history after Clear: %q", s)
	}
}

func TestQueryViewNativeTimeseries(t *testing.T) {
	e, p := queryPage(t)
	q := `{"queryType":"timeseries","dataSource":"wiki","granularity":"day","intervals":["2024-01-01/2024-02-01"],
 "aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"added","fieldName":"added"}]}`
	code, body, err := e.call("POST", "/svc/v2/", "application/json", q)
	if err != nil || code != 200 {
		t.Fatalf("native query: %d %s %v", code, body, err)
	}
	var answer []struct {
		Timestamp string `json:"timestamp"`
		Result    struct {
			N     int `json:"n"`
			Added int `json:"added"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer) != 3 {
		t.Fatalf("the premise: 3 days, got %s %v", body, err)
	}
	var want [][]string
	for _, a := range answer {
		want = append(want, []string{a.Timestamp, fmt.Sprint(a.Result.N), fmt.Sprint(a.Result.Added)})
	}
	p.click("#query-mode-native")
	if l := p.text("#query-editor-label"); l != "Native query (JSON)" {
		t.Fatalf("editor label in native mode %q", l)
	}
	setEditor(p, q)
	startRun(p, "#query-run")
	expectStatus(p, "3 rows in ")
	if cols := eval[[]string](p, `[...document.querySelectorAll('#query-results th')].map((th) => th.textContent)`); fmt.Sprint(cols) != "[timestamp n added]" {
		t.Fatalf("columns %v", cols)
	}
	sameRows(t, "native timeseries", resultRows(p), want)
	if lines := eval[int](p, `document.querySelectorAll('#query-chart svg path.series').length`); lines != 2 {
		t.Fatalf("chart lines %d, want 2", lines)
	}
	chartInside(t, p)
	p.screenshot("query-native")
	// Back to SQL: each mode keeps its own text.
	p.click("#query-mode-sql")
	if v := eval[string](p, `document.querySelector('#query-editor').value`); strings.HasPrefix(strings.TrimSpace(v), "{") {
		t.Fatalf("SQL mode shows the native query: %q", v)
	}
}

// TestQueryViewCancels holds the query's POST in the page (wiki answers in
// milliseconds, too fast to cancel for real; the server's side of DELETE is
// TestSQLCancel's) and checks that Cancel sends DELETE with the id the view
// put in the query's context, then ends the run as cancelled, in both modes.
func TestQueryViewCancels(t *testing.T) {
	_, p := queryPage(t)
	p.allowConsole("status of 404") // the held query never reached the server: DELETE answers 404
	eval[bool](p, `(() => {
		window.calls = [];
		const real = window.fetch;
		window.fetch = (url, opts = {}) => {
			const call = { url: String(url), method: opts.method || 'GET', body: opts.body || '' };
			window.calls.push(call);
			if (call.method === 'POST' && (call.url === '/svc/v2/sql' || call.url === '/svc/v2/')) {
				return new Promise((_, reject) => opts.signal.addEventListener('abort',
					() => reject(new DOMException('The user aborted a request.', 'AbortError'))));
			}
			return real(url, opts);
		};
		return true;
	})()`)
	for _, c := range []struct{ mode, query, post, idKey, cancelPath string }{
		{"#query-mode-sql", "SELECT COUNT(*) FROM wiki", "/svc/v2/sql", "sqlQueryId", "/svc/v2/sql/"},
		{"#query-mode-native", `{"queryType":"timeBoundary","dataSource":"wiki"}`, "/svc/v2/", "queryId", "/svc/v2/"},
	} {
		p.click(c.mode)
		setEditor(p, c.query)
		startRun(p, "#query-run")
		if s := p.text("#query-status"); s != "Running…" {
			t.Fatalf("%s: status while held %q", c.mode, s)
		}
		if d := eval[bool](p, `document.querySelector('#query-cancel').disabled`); d {
			t.Fatalf("%s: Cancel is disabled while the query runs", c.mode)
		}
		p.click("#query-cancel")
		expectStatus(p, "Cancelled after ")
		calls := eval[[]struct{ URL, Method, Body string }](p, `window.calls.splice(0)`)
		var id, deleted string
		for _, call := range calls {
			if call.Method == "POST" && call.URL == c.post {
				var body struct{ Context map[string]any }
				json.Unmarshal([]byte(call.Body), &body)
				id, _ = body.Context[c.idKey].(string)
			}
			if call.Method == "DELETE" {
				deleted = call.URL
			}
		}
		if !strings.HasPrefix(id, "console-") || deleted != c.cancelPath+id {
			t.Fatalf("%s: the query's %s %q, DELETE %q; calls %+v", c.mode, c.idKey, id, deleted, calls)
		}
		if d := eval[bool](p, `document.querySelector('#query-run').disabled`); d {
			t.Fatalf("%s: Run stays disabled after the cancel", c.mode)
		}
		p.screenshot("query-cancelled-" + strings.TrimPrefix(c.mode, "#query-mode-"))
	}
}

// TestQueryViewTables: the side panel lists the datasources, opens one onto
// its columns and types (as INFORMATION_SCHEMA answers), and a column's
// button types its quoted name at the caret.
func TestQueryViewTables(t *testing.T) {
	e, p := queryPage(t)
	want := sqlArray(t, e, "SELECT COLUMN_NAME || ' ' || DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'druid' AND TABLE_NAME = 'wiki' ORDER BY ORDINAL_POSITION")
	p.click(`#query-tables details[data-table="wiki"] summary`)
	p.waitVisible(`#query-tables details[data-table="wiki"] .query-column`)
	got := eval[[]string](p, `[...document.querySelectorAll('#query-tables details[data-table="wiki"] .query-column')].map((b) => b.innerText.replace(/\s+/g, ' '))`)
	var names []string
	for _, r := range want {
		names = append(names, fmt.Sprint(r[0]))
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("wiki's columns shown %v, INFORMATION_SCHEMA answers %v", got, want)
	}
	setEditor(p, "SELECT  FROM wiki")
	eval[bool](p, `(document.querySelector('#query-editor').setSelectionRange(7, 7), true)`)
	p.click(`#query-tables button[aria-label="Insert column page"]`)
	if v := eval[string](p, `document.querySelector('#query-editor').value`); v != `SELECT "page" FROM wiki` {
		t.Fatalf("editor after inserting page: %q", v)
	}
	p.screenshot("query-tables")
}

// TestQueryViewForbidden: with security on, the analyst's query on a
// datasource it may not read shows the API's 403 plainly, naming the
// permission it lacks.
func TestQueryViewForbidden(t *testing.T) {
	e := startConsole(t, consoleOpts{Security: true})
	p := e.browser(t, analystUser, analystPassword)
	p.allowConsole("status of 403") // the browser logs the 403 the view shows
	p.open("/query")
	p.click("#query-mode-sql")
	setEditor(p, "SELECT COUNT(*) FROM not_the_analysts")
	startRun(p, "#query-run")
	expectStatus(p, "Failed")
	if msg := p.text("#query-error .error-box"); msg != "Forbidden: Unauthorized" {
		t.Fatalf("error shown %q", msg)
	}
	if need := p.text("#query-error-need"); need != "This needs READ on DATASOURCE:not_the_analysts, which your user does not have." {
		t.Fatalf("what is missing: %q", need)
	}
	// The history is the analyst's own: kept under its name.
	if own := eval[string](p, `localStorage.getItem('strata.console.query.history:analyst') || ''`); !strings.Contains(own, "not_the_analysts") {
		t.Fatalf("the analyst's history: %q", own)
	}
	p.screenshot("query-forbidden")
}

// TestQueryViewHandsInsertToIngestion: an INSERT run here gets the API's
// answer (tasks run elsewhere) and a button that opens the Ingestion view's
// SQL editor with the statement in it.
func TestQueryViewHandsInsertToIngestion(t *testing.T) {
	_, p := queryPage(t)
	p.allowConsole("status of 400")
	q := "INSERT INTO wiki_copy SELECT * FROM wiki PARTITIONED BY DAY"
	setEditor(p, q)
	startRun(p, "#query-run")
	expectStatus(p, "Failed")
	if msg := p.text("#query-error .error-box"); !strings.Contains(msg, "run as tasks") {
		t.Fatalf("error shown %q", msg)
	}
	p.screenshot("query-insert-handover")
	p.click("#query-to-ingestion")
	v := run(p, chromedp.Poll[string](`location.hash === '#/ingestion/sql' && document.querySelector('#c4-sql') && document.querySelector('#c4-sql').value`))
	if v != q {
		t.Fatalf("after the hand-over: %q", v)
	}
}

// TestQueryViewChartSeries: a GROUP BY time and a dimension draws a line per
// value; raw rows, whose dimensions are nearly all distinct, draw one line
// per number (not a dot per row).
func TestQueryViewChartSeries(t *testing.T) {
	_, p := queryPage(t)
	for i, c := range []struct{ query, want string }{
		{"SELECT FLOOR(__time TO HOUR) AS h, page, COUNT(*) AS n FROM wiki WHERE page IN ('Raft', 'Kafka') GROUP BY 1, 2 ORDER BY 1",
			"[n over time: Raft, Kafka]"},
		{"SELECT __time, page, \"user\", added FROM wiki ORDER BY __time LIMIT 12", "[added over time: added]"},
	} {
		setEditor(p, c.query)
		startRun(p, "#query-run")
		expectStatus(p, "")
		if got := eval[[]string](p, `[...document.querySelectorAll('#query-chart svg')].map((s) => s.getAttribute('aria-label'))`); fmt.Sprint(got) != c.want {
			t.Errorf("%s: charts %q, want %s", c.query, got, c.want)
		}
		p.screenshot(fmt.Sprintf("query-chart-series-%d", i+1))
	}
}

// TestQueryViewMaxRows: Max rows asks for one row more than it shows
// (sqlOuterLimit), so a result past it says there were more.
func TestQueryViewMaxRows(t *testing.T) {
	e, p := queryPage(t)
	q := "SELECT a.page, b.page AS other FROM wiki a CROSS JOIN wiki b"
	if n := len(sqlArray(t, e, q)); n != 36*36 {
		t.Fatalf("the premise: %d rows, want %d", n, 36*36)
	}
	eval[bool](p, `(() => { const s = document.querySelector('#query-limit'); s.value = '100'; s.dispatchEvent(new Event('change')); return true; })()`)
	// The bodies the page posts, to see the limit go to the broker.
	eval[bool](p, `(() => { window.bodies = []; const real = window.fetch;
		window.fetch = (url, opts = {}) => { if (opts.body) window.bodies.push(opts.body); return real(url, opts); }; return true; })()`)
	setEditor(p, q)
	startRun(p, "#query-run")
	expectStatus(p, "First 100 rows in ")
	if body := eval[string](p, `window.bodies.join(' ')`); !strings.Contains(body, `"sqlOuterLimit":101`) {
		t.Fatalf("the query did not ask for 101 rows: %s", body)
	}
	if n := len(resultRows(p)); n != 100 {
		t.Fatalf("the table shows %d rows, want 100", n)
	}
	if sent := eval[string](p, `JSON.parse(localStorage.getItem('strata.console.query.draft')).limit`); sent != "100" {
		t.Errorf("Max rows kept in the draft as %q", sent)
	}
	// Under the limit, the count is the result's own.
	setEditor(p, "SELECT page FROM wiki")
	startRun(p, "#query-run")
	expectStatus(p, "36 rows in ")
	// No time column: no chart, and nothing in its place.
	if shown := eval[string](p, `(document.querySelector('#query-chart') ? 'a chart ' : '') + document.querySelector('#query-results').innerText.split('Filter')[0]`); strings.TrimSpace(shown) != "Results\nCopy as CSV\nCopy as JSON" {
		t.Fatalf("above the table: %q", shown)
	}
	p.screenshot("query-max-rows")
}
