package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strata/internal/eventually"
)

// setField sets an input's (or textarea's, or select's) value as typing or
// choosing would, firing input and change so the view sees it.
func c4SetField(p *page, sel, value string) {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	v, _ := json.Marshal(value)
	ok := eval[bool](p, fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) return false;
		el.value = %s; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, q, v))
	if !ok {
		p.t.Fatalf("no element %s", sel)
	}
}

// present reports whether sel matches an element now.
func c4Present(p *page, sel string) bool {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	return eval[bool](p, fmt.Sprintf(`!!document.querySelector(%s)`, q))
}

// textOf is sel's textContent, "" when absent (no wait, unlike page.text).
func c4TextOf(p *page, sel string) string {
	p.t.Helper()
	q, _ := json.Marshal(sel)
	return eval[string](p, fmt.Sprintf(`(document.querySelector(%s) || {}).textContent || ''`, q))
}

// rerendered runs act, which changes the route, and waits for the new
// view's data-ready: the old section is marked first, as its data-ready
// would otherwise answer before the hashchange reaches the router.
func c4Rerendered(p *page, act func()) {
	p.t.Helper()
	eval[bool](p, `(document.querySelector('section#view').dataset.c4old = '1') === '1'`)
	act()
	p.waitVisible(`section#view[data-ready="true"]:not([data-c4old])`)
}

// confirm accepts the open confirmation dialog.
func c4Confirm(p *page) {
	p.t.Helper()
	p.waitVisible(`dialog[open] button[value="ok"]`)
	p.click(`dialog[open] button[value="ok"]`)
	p.waitGone(`dialog[open]`)
}

// A running SQL task has no report until its first progress report, and no
// log until it starts: the API answers 404 then, which the browser logs.
func c4AllowTaskNotYet(p *page) {
	p.allowConsole("/reports")
	p.allowConsole("/log?offset=")
}

// c4Diagnose logs, when the test fails, what the cluster says about its
// processes and segment loading: a data server the control node lost under
// load shows there, rather than as a bare timeout.
func c4Diagnose(t *testing.T, e *consoleEnv) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, path := range []string{"/svc/coordinator/v1/servers?simple", "/svc/coordinator/v1/loadstatus?simple", "/svc/coordinator/v1/loadqueue?simple"} {
			code, body, err := e.call("GET", path, "", "")
			t.Logf("diagnosis: GET %s: %d %v %.2000s", path, code, err, body)
		}
	})
}

// TestConsoleSQLIngestion submits an INSERT with EXTERN from the SQL
// ingestion editor, follows its task to SUCCESS in the page, and finds the
// datasource through the API (its rows counted) and in the Datasources view.
func TestConsoleSQLIngestion(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	c4Diagnose(t, e)
	p := e.browser(t, "", "")
	c4AllowTaskNotYet(p)
	p.open("/ingestion/sql")
	const ds = "console_sql_ingest"
	sql := `INSERT INTO ` + ds + `
SELECT TIME_PARSE("ts") AS __time, page, added
FROM TABLE(EXTERN(
  '{"type":"inline","data":"{\"ts\":\"2026-01-01T00:00:00Z\",\"page\":\"Main\",\"added\":3}\n{\"ts\":\"2026-01-02T00:00:00Z\",\"page\":\"Talk\",\"added\":5}"}',
  '{"type":"json"}',
  '[{"name":"ts","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"}]'))
PARTITIONED BY DAY`
	c4SetField(p, "#c4-sql", sql)
	if note := p.text("#c4-sql-note"); !strings.Contains(note, "Writes datasource "+ds) {
		t.Fatalf("the editor's note %q does not name the target %s", note, ds)
	}
	p.click("#c4-sql-submit")
	eventually.True(t, "the page to follow the task to SUCCESS", func() bool {
		if box := c4TextOf(p, "#c4-sql-out .error-box"); box != "" {
			t.Fatalf("submitting: %s", box)
		}
		return c4Present(p, "#c4-sql-ds")
	}, slow)
	if got := p.text("#c4-sql-ds"); got != ds {
		t.Fatalf("the link to the datasource says %q, want %s", got, ds)
	}
	if stages := p.text("#c4-sql-out .c4-msq"); !strings.Contains(stages, "segmentGenerator") || !strings.Contains(stages, "SUCCESS") {
		t.Fatalf("the followed task shows no finished MSQ stages: %q", stages)
	}
	p.screenshot("ingestion-sql-done")

	// The coordinator lists a datasource once its inventory poll sees the
	// segments served, which may be a moment after the task's own check.
	eventually.True(t, ds+" among the coordinator's datasources", func() bool {
		var names []string
		return e.getJSON("/svc/coordinator/v1/datasources", &names) == nil && slices.Contains(names, ds)
	}, slow)
	count, _ := json.Marshal(map[string]string{"query": "SELECT COUNT(*) AS n, SUM(added) AS a FROM " + ds})
	if code, body, err := e.call("POST", "/svc/v2/sql", "application/json", string(count)); err != nil || code != 200 || !strings.Contains(body, `"n":2`) || !strings.Contains(body, `"a":8`) {
		t.Fatalf("counting %s: %d %s %v", ds, code, body, err)
	}

	// The link leads to the datasource's page in the Datasources view.
	c4Rerendered(p, func() { p.click("#c4-sql-ds") })
	if got := eval[string](p, `location.hash`); got != "#/datasources/"+ds {
		t.Fatalf("the datasource link went to %s", got)
	}
	if view := p.text("section#view"); !strings.Contains(view, ds) {
		t.Fatalf("the Datasources view does not show %s: %q", ds, view)
	}
}

// TestConsoleTasksAndTaskPage lists the tasks, opens a finished SQL task's
// page from the list and checks its status, stages, counters and log.
func TestConsoleTasksAndTaskPage(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	c4Diagnose(t, e)
	e.ingestWiki(t, "wiki")
	var tasks []struct {
		ID, Status, DataSource string
	}
	if err := e.getJSON("/svc/indexer/v1/tasks?datasource=wiki&state=complete", &tasks); err != nil || len(tasks) == 0 {
		t.Fatalf("wiki's tasks: %v %v", tasks, err)
	}
	id := tasks[0].ID

	p := e.browser(t, "", "")
	p.open("/ingestion")
	row := fmt.Sprintf(`tr[data-key=%q]`, id)
	p.waitVisible(row)
	if cells := p.text(row); !strings.Contains(cells, "query_controller") || !strings.Contains(cells, "wiki") || !strings.Contains(cells, tasks[0].Status) {
		t.Fatalf("the row of %s says %q", id, cells)
	}
	p.screenshot("ingestion-tasks")

	// A state filter goes to the API: no complete task is running.
	c4Rerendered(p, func() { c4SetField(p, "#c4-task-state", "running") })
	if c4Present(p, row) {
		t.Fatalf("task %s is listed among the running ones", id)
	}

	c4Rerendered(p, func() { p.open("/ingestion/tasks") })
	p.waitVisible(row)
	c4Rerendered(p, func() { p.click(row + " a") })
	p.waitVisible(".c4-msq")
	status := p.text("section#view dl.kv")
	if !strings.Contains(status, "SUCCESS") || !strings.Contains(status, "query_controller") {
		t.Fatalf("the task's status block says %q", status)
	}
	msq := p.text(".c4-msq")
	for _, want := range []string{"scan", "segmentGenerator", "FINISHED", "100%", "36"} {
		if !strings.Contains(msq, want) {
			t.Fatalf("the MSQ progress lacks %q: %q", want, msq)
		}
	}
	eventually.True(t, "the log tail", func() bool {
		return strings.Contains(c4TextOf(p, "section#view pre.mono"), "completed with status SUCCESS")
	}, slow)
	if c4Present(p, "#c4-cancel") {
		t.Fatal("a finished task offers to cancel it")
	}
	p.screenshot("ingestion-task-page")
}

// TestConsoleSupervisorSuspendResume creates a Kafka supervisor through the
// API against the harness's kfake, then suspends, resumes, resets and
// terminates it from its page, each confirmed, checking the overlord's state
// after each.
func TestConsoleSupervisorSuspendResume(t *testing.T) {
	e := startConsole(t, consoleOpts{Kafka: true})
	const id = "console_kafka"
	spec := fmt.Sprintf(`{"type":"kafka","spec":{
 "dataSchema":{"dataSource":%q,"timestampSpec":{"column":"ts","format":"iso"},
   "dimensionsSpec":{"dimensions":["page"]},
   "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
 "ioConfig":{"topic":%q,"consumerProperties":{"bootstrap.servers":%q},"taskCount":1,"useEarliestOffset":true,"inputFormat":{"type":"json"}},
 "tuningConfig":{"type":"kafka"}}}`, id, kafkaTopic, e.kafka)
	if code, body, err := e.call("POST", "/svc/indexer/v1/supervisor", "application/json", spec); err != nil || code != 200 {
		t.Fatalf("creating the supervisor: %d %s %v", code, body, err)
	}
	t.Cleanup(func() { e.call("POST", "/svc/indexer/v1/supervisor/"+id+"/terminate", "", "") })
	c4Produce(t, e.kafka, 20)
	suspended := func() (bool, bool) {
		var sups []struct {
			ID        string
			Suspended bool
		}
		if err := e.getJSON("/svc/indexer/v1/supervisor?system", &sups); err != nil {
			t.Fatal(err)
		}
		for _, s := range sups {
			if s.ID == id {
				return s.Suspended, true
			}
		}
		return false, false
	}

	p := e.browser(t, "", "")
	c4AllowTaskNotYet(p)
	p.open("/ingestion/supervisors")
	p.waitVisible(fmt.Sprintf(`tr[data-key=%q]`, id))
	if row := p.text(fmt.Sprintf(`tr[data-key=%q]`, id)); !strings.Contains(row, "kafka") || !strings.Contains(row, kafkaTopic) {
		t.Fatalf("the supervisor's row says %q", row)
	}
	p.screenshot("ingestion-supervisors")

	p.open("/ingestion/supervisors/" + id)
	p.waitVisible("#c4-sup-suspend")
	// The partitions of the seeded topic show once the supervisor read offsets.
	eventually.True(t, "both partitions listed", func() bool {
		parts := c4TextOf(p, "section#view table")
		return strings.Contains(parts, "Partition") && !strings.Contains(parts, "No partitions known yet")
	}, slow)
	p.screenshot("ingestion-supervisor-running")

	p.click("#c4-sup-suspend")
	c4Confirm(p)
	p.waitVisible("#c4-sup-resume")
	if s, ok := suspended(); !ok || !s {
		t.Fatalf("after Suspend the overlord says suspended=%v (listed %v)", s, ok)
	}
	if got := p.text("#c4-sup-suspended"); got != "yes" {
		t.Fatalf("the page says suspended %q after suspending", got)
	}
	p.screenshot("ingestion-supervisor-suspended")

	p.click("#c4-sup-resume")
	c4Confirm(p)
	p.waitVisible("#c4-sup-suspend")
	if s, ok := suspended(); !ok || s {
		t.Fatalf("after Resume the overlord says suspended=%v (listed %v)", s, ok)
	}
	// The lag was sampled while the page was open: a chart of both partitions.
	eventually.True(t, "the lag chart", func() bool {
		return c4Present(p, "section#view svg") && strings.Contains(c4TextOf(p, "section#view svg"), "partition 1")
	}, slow)
	// Both changes are spec versions in the history the page shows.
	eventually.True(t, "three spec versions in the history", func() bool {
		return eval[int](p, `document.querySelectorAll('#c4-sup-versions > li').length`) >= 3
	}, slow)

	// The spec edited on the page is posted as a new version.
	p.click(`details:has(#c4-sup-edit) > summary`)
	edited := eval[string](p, `document.querySelector('#c4-sup-edit').value`)
	if !strings.Contains(edited, `"taskCount": 1`) {
		t.Fatalf("the edit form does not start from the spec: %q", edited)
	}
	c4SetField(p, "#c4-sup-edit", strings.Replace(edited, `"maxRowsInMemory": 150000`, `"maxRowsInMemory": 150001`, 1))
	p.click("#c4-sup-edit-submit")
	eventually.True(t, "four spec versions after the edit", func() bool {
		return eval[int](p, `document.querySelectorAll('#c4-sup-versions > li').length`) >= 4
	}, slow)
	var stored struct {
		Spec struct{ TuningConfig struct{ MaxRowsInMemory int } }
	}
	if err := e.getJSON("/svc/indexer/v1/supervisor/"+id, &stored); err != nil || stored.Spec.TuningConfig.MaxRowsInMemory != 150001 {
		t.Fatalf("the spec after the edit: %+v %v", stored, err)
	}

	// Reset, confirmed by typing the id, stops the reading task (it ends
	// FAILED) so that reading restarts from the reset offsets.
	var reading string
	eventually.True(t, "a reading task after Resume", func() bool {
		var st struct {
			Payload struct{ ActiveTasks []struct{ ID string } }
		}
		if err := e.getJSON("/svc/indexer/v1/supervisor/"+id+"/status", &st); err != nil || len(st.Payload.ActiveTasks) == 0 {
			return false
		}
		reading = st.Payload.ActiveTasks[0].ID
		return true
	}, slow)
	p.click("#c4-sup-reset")
	p.waitVisible(`dialog[open] input`)
	p.typeText(`dialog[open] input`, id)
	c4Confirm(p)
	eventually.True(t, "the reading task to end with the reset", func() bool {
		var st struct{ Status struct{ Status string } }
		return e.getJSON("/svc/indexer/v1/task/"+reading+"/status", &st) == nil && st.Status.Status == "FAILED"
	}, slow)
	if box := c4TextOf(p, "section#view .error-box"); box != "" {
		t.Fatalf("the reset said %q", box)
	}

	// Terminate asks for the id to be typed before it enables.
	p.click("#c4-sup-terminate")
	p.waitVisible(`dialog[open] input`)
	if !eval[bool](p, `document.querySelector('dialog[open] button[value="ok"]').disabled`) {
		t.Fatal("Terminate is enabled before the id is typed")
	}
	p.typeText(`dialog[open] input`, id)
	c4Rerendered(p, func() { c4Confirm(p) })
	if got := eval[string](p, `location.hash`); got != "#/ingestion/supervisors" {
		t.Fatalf("after Terminate the page is %s", got)
	}
	if _, ok := suspended(); ok {
		t.Fatal("the supervisor is still listed after Terminate")
	}

	// A terminated supervisor's page says so once (the API's 404).
	p.allowConsole("/supervisor/" + id)
	c4Rerendered(p, func() { p.open("/ingestion/supervisors/" + id) })
	if n := eval[int](p, `document.querySelectorAll('section#view .error-box').length`); n != 1 {
		t.Fatalf("%d error boxes on a terminated supervisor's page", n)
	}
	if msg := p.text("section#view .error-box"); !strings.Contains(msg, "404") {
		t.Fatalf("a terminated supervisor's page says %q", msg)
	}
}

// produce writes n JSON records to the harness's topic, so the supervisor
// has offsets and lag to show.
func c4Produce(t *testing.T, broker string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic(kafkaTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		v := fmt.Sprintf(`{"ts":"2026-01-01T00:%02d:00Z","page":"p%d"}`, i%60, i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsoleCancelTask cancels a task from its page: with the only middle
// manager disabled, a submitted SQL task stays PENDING, the page offers
// Cancel, and after the confirmation the overlord ends the task.
func TestConsoleCancelTask(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	var workers []struct {
		Worker struct{ Host string }
	}
	if err := e.getJSON("/svc/indexer/v1/workers", &workers); err != nil || len(workers) != 1 {
		t.Fatalf("workers: %+v %v", workers, err)
	}
	host := workers[0].Worker.Host
	enable := func() { e.call("POST", "/svc/indexer/v1/worker/"+host+"/enable", "", "") }
	if code, body, err := e.call("POST", "/svc/indexer/v1/worker/"+host+"/disable", "", ""); err != nil || code != 200 {
		t.Fatalf("disabling %s: %d %s %v", host, code, body, err)
	}
	t.Cleanup(enable)
	q, _ := json.Marshal(map[string]string{"query": `INSERT INTO console_cancelled SELECT TIME_PARSE("ts") AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"{\"ts\":\"2026-01-01T00:00:00Z\",\"page\":\"x\"}"}', '{"type":"json"}',
 '[{"name":"ts","type":"string"},{"name":"page","type":"string"}]')) PARTITIONED BY DAY`})
	code, body, err := e.call("POST", "/svc/v2/sql/task", "application/json", string(q))
	var task struct{ TaskID string }
	if err != nil || code != 200 || json.Unmarshal([]byte(body), &task) != nil {
		t.Fatalf("submitting: %d %s %v", code, body, err)
	}
	status := func() string {
		var st struct {
			Status struct{ Status, StatusCode string }
		}
		if err := e.getJSON("/svc/indexer/v1/task/"+task.TaskID+"/status", &st); err != nil {
			t.Fatal(err)
		}
		return st.Status.Status
	}

	p := e.browser(t, "", "")
	c4AllowTaskNotYet(p)
	p.open("/ingestion/tasks/" + task.TaskID)
	p.waitVisible("#c4-cancel")
	if s := status(); s != "RUNNING" && s != "PENDING" && s != "WAITING" {
		t.Fatalf("the task is %s before Cancel, with no worker enabled", s)
	}
	p.click("#c4-cancel")
	c4Confirm(p)
	eventually.True(t, "the overlord to end the task", func() bool { return status() == "FAILED" }, slow)
	eventually.True(t, "the page to show it ended", func() bool {
		return !c4Present(p, "#c4-cancel") && strings.Contains(c4TextOf(p, "section#view dl.kv"), "FAILED")
	}, slow)
	p.screenshot("ingestion-task-cancelled")
	enable()
}

// TestConsoleIngestionAsAnalyst: with security on, the analyst (READ on
// wiki only) gets no way to submit an ingestion it may not write, a task of
// another datasource answers the API's 403 shown as "Forbidden: …", and the
// config forms are not offered.
func TestConsoleIngestionAsAnalyst(t *testing.T) {
	e := startConsole(t, consoleOpts{Security: true})
	q, _ := json.Marshal(map[string]string{"query": `INSERT INTO c4_secret SELECT TIME_PARSE("ts") AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"{\"ts\":\"2026-01-01T00:00:00Z\",\"page\":\"x\"}"}', '{"type":"json"}',
 '[{"name":"ts","type":"string"},{"name":"page","type":"string"}]')) PARTITIONED BY DAY`})
	code, body, err := e.call("POST", "/svc/v2/sql/task", "application/json", string(q))
	var task struct{ TaskID string }
	if err != nil || code != 200 || json.Unmarshal([]byte(body), &task) != nil {
		t.Fatalf("submitting as admin: %d %s %v", code, body, err)
	}

	p := e.browser(t, analystUser, analystPassword)
	p.allowConsole(task.TaskID) // the 403 the test provokes on purpose
	p.open("/ingestion/sql")
	c4SetField(p, "#c4-sql", "INSERT INTO "+analystDatasource+" SELECT * FROM "+analystDatasource+" PARTITIONED BY DAY")
	if note := p.text("#c4-sql-note"); !strings.Contains(note, "may not write to datasource "+analystDatasource) {
		t.Fatalf("the analyst's editor note says %q", note)
	}
	if !eval[bool](p, `document.querySelector('#c4-sql-submit').disabled`) {
		t.Fatal("the analyst may press Run ingestion for a datasource it cannot write")
	}
	p.screenshot("ingestion-sql-analyst")

	c4Rerendered(p, func() { p.open("/ingestion/tasks/" + task.TaskID) })
	p.waitVisible("section#view .error-box")
	if msg := p.text("section#view .error-box"); !strings.HasPrefix(msg, "Forbidden: ") {
		t.Fatalf("the task of another datasource says %q, not Forbidden", msg)
	}
	if n := eval[int](p, `document.querySelectorAll('section#view .error-box').length`); n != 1 {
		t.Fatalf("%d error boxes for one refusal", n)
	}
	if c4Present(p, "#c4-cancel") {
		t.Fatal("the analyst is offered Cancel on a task it may not write")
	}

	c4Rerendered(p, func() { p.open("/config/coordinator") })
	if c4Present(p, "#c4-cfg-save") || c4Present(p, `input[name="maxSegmentsToMove"]`) {
		t.Fatal("the analyst gets the coordinator config form")
	}
	if view := p.text("section#view"); !strings.Contains(view, "Forbidden") {
		t.Fatalf("the config view for the analyst says %q", view)
	}
}

// TestConsoleLiveProgressAndCancel follows a running SQL ingestion from the
// editor: its datasource's rule wants a tier no historical has, so the task
// keeps waiting for its segments to load, and the page shows the live report
// (stages done, the load waiting) until the user cancels it from there.
func TestConsoleLiveProgressAndCancel(t *testing.T) {
	e := startConsole(t, consoleOpts{})
	c4Diagnose(t, e)
	const ds = "c4_live"
	rules := `[{"type":"loadForever","tieredReplicants":{"c4_no_such_tier":1}}]`
	if code, body, err := e.call("POST", "/svc/coordinator/v1/rules/"+ds, "application/json", rules); err != nil || code != 200 {
		t.Fatalf("rules: %d %s %v", code, body, err)
	}
	p := e.browser(t, "", "")
	c4AllowTaskNotYet(p)
	p.open("/ingestion/sql")
	c4SetField(p, "#c4-sql", `INSERT INTO `+ds+` SELECT TIME_PARSE("ts") AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"{\"ts\":\"2026-01-01T00:00:00Z\",\"page\":\"x\"}"}', '{"type":"json"}',
 '[{"name":"ts","type":"string"},{"name":"page","type":"string"}]')) PARTITIONED BY DAY`)
	p.click("#c4-sql-submit")
	eventually.True(t, "the live report: stages done, segments waiting to load", func() bool {
		msq := c4TextOf(p, "#c4-sql-out .c4-msq")
		return strings.Contains(msq, "RUNNING") && strings.Contains(msq, "WAITING") && strings.Contains(msq, "segmentGenerator")
	}, slow)
	// Both stages have produced their results: neither shows less than done.
	if pct := c4TextOf(p, "#c4-sql-out .c4-msq tbody"); strings.Count(pct, "100%") != 2 {
		t.Fatalf("the stages of a query waiting only for its segments to load show %q", pct)
	}
	p.screenshot("ingestion-sql-live")
	taskID := c4TextOf(p, "#c4-sql-out > p a.mono")
	p.click("#c4-sql-out #c4-cancel")
	c4Confirm(p)
	eventually.True(t, "the page to say the task ended", func() bool {
		return strings.Contains(c4TextOf(p, "#c4-sql-done"), "FAILED")
	}, slow)
	var st struct{ Status struct{ Status string } }
	if err := e.getJSON("/svc/indexer/v1/task/"+taskID+"/status", &st); err != nil || st.Status.Status != "FAILED" {
		t.Fatalf("task %s after Cancel: %+v %v", taskID, st, err)
	}
	p.screenshot("ingestion-sql-cancelled")
}
