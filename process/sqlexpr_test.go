package process

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/props"
)

// sameAnswerExprs are expressions over src (x, neg BIGINT; d DOUBLE; s
// VARCHAR; n BIGINT, NULL in the first row) whose translations once
// differed between SQL ingestion and interactive SQL: IS TRUE of a
// negative number and IS NOT FALSE of NULL (Druid's istrue/notfalse),
// COALESCE and GREATEST's types, BETWEEN SYMMETRIC and LPAD (interactive SQL
// refused them), and the time arithmetic both must do alike.
var sameAnswerExprs = []string{
	`CASE WHEN neg IS TRUE THEN 'y' ELSE 'n' END`,
	`CASE WHEN n IS NOT FALSE THEN 'y' ELSE 'n' END`,
	`CASE WHEN n IS FALSE THEN 'y' ELSE 'n' END`,
	`COALESCE(n, d)`,
	`GREATEST(x, d)`,
	`x / 2`,
	`MOD(x, 4)`,
	`CASE WHEN x BETWEEN SYMMETRIC 9 AND 1 THEN 'in' ELSE 'out' END`,
	`LPAD(s, 5, '*')`,
	`s || '!'`,
	`TIMESTAMPDIFF(HOUR, TIMESTAMP '2024-01-01 00:00:00', __time)`,
	`CAST(__time AS VARCHAR)`,
	`TIME_FORMAT(TIME_FLOOR(__time, 'PT6H'))`,
	`CAST(FLOOR(__time TO DAY) + INTERVAL '1' MONTH AS VARCHAR)`,
	`TIME_EXTRACT(__time, 'HOUR')`,
	`TIMESTAMPDIFF(MONTH, TIMESTAMP '2023-11-01 12:00:00', __time)`,
	`BITWISE_XOR(x, 5)`,
	`IPV4_STRINGIFY(x + 167772160)`,
}

// TestSQLExpressionsAgreeInsertAndSelect: the same expression gives the same
// answer written by an INSERT ... SELECT (SQL ingestion, on a middle
// manager) and then read back, as computed by an interactive SELECT over
// the source (on a broker): both translate through package sqlexpr. Before
// they shared it, the IS TRUE/IS NOT FALSE rows differed and interactive
// SQL refused BETWEEN SYMMETRIC and LPAD.
func TestSQLExpressionsAgreeInsertAndSelect(t *testing.T) {
	deepDir := t.TempDir()
	c := startCluster(t, 1, map[string]string{"svc.coordinator.inventory.period": "50ms", "svc.storage.storageDirectory": deepDir})
	l := c.leader()
	ports := freePorts(t, 3)
	mp := props.Defaults()
	mp.Set("svc.node.roles", "middleManager")
	mp.Set("svc.http.address", ports[0])
	mp.Set("svc.data.dir", t.TempDir())
	mp.Set("svc.storage.storageDirectory", deepDir)
	mp.Set("svc.worker.overlordUrls", c.url(l))
	mp.Set("svc.worker.capacity", "2")
	mp.Set("svc.worker.heartbeatPeriod", "100ms")
	// The cluster is wired by static URLs (no discovery), so the SQL tasks'
	// load waiter is told the broker too: without it, it asks the quickstart
	// default (127.0.0.1:8082), not this test's broker, and in the package's
	// full run the task waited there until this test gave up.
	mp.Set("svc.router.brokerUrls", "http://"+ports[2])
	mmProc, err := StartServer(mp, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
	if err != nil {
		t.Fatal(err)
	}
	worker := middlemanager.Attached(mp)
	t.Cleanup(func() {
		mmProc.Close()
		<-worker.Done()
	})
	startRole(t, "historical", ports[1], map[string]string{
		"svc.historical.coordinatorUrls": c.url(l), "svc.historical.pollPeriod": "20ms", "svc.storage.storageDirectory": deepDir,
	})
	startRole(t, "broker", ports[2], map[string]string{"svc.broker.historicalUrls": "http://" + ports[1], "svc.broker.pollPeriod": "20ms"})
	broker := "http://" + ports[2]

	ingest := func(q string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"query": q})
		if _, st, msg := runSQLTask(t, c.url(l), string(body)); st != "SUCCESS" {
			t.Fatalf("%s: %s", q, msg)
		}
	}
	query := func(q string) (int, string) {
		code, _, body := do(t, "POST", broker+"/svc/v2/sql", "application/json", `{"query":`+strconv.Quote(q)+`,"resultFormat":"array"}`, nil)
		return code, body
	}
	loaded := func(ds string) {
		t.Helper()
		var last string
		eventually.True(t, ds+" to be served", func() bool {
			_, last = query(`SELECT COUNT(*) FROM ` + ds)
			return last == `[[2]]`
		}, slow, eventually.Showing(func() string { return last }))
	}

	rows := `{"ts":"2024-01-01T10:20:30Z","x":7,"neg":-2,"d":2.5,"s":"abc"}\n` +
		`{"ts":"2024-01-02T23:59:59Z","x":-3,"neg":5,"d":-0.5,"s":"x\\ty","n":0}`
	ingest(`INSERT INTO src SELECT TIME_PARSE(ts) AS __time, x, neg, d, s, n FROM TABLE(EXTERN('{"type":"inline","data":"` +
		strings.ReplaceAll(rows, `"`, `\"`) + `"}', '{"type":"json"}')) EXTEND (ts VARCHAR, x BIGINT, neg BIGINT, d DOUBLE, s VARCHAR, n BIGINT) PARTITIONED BY ALL`)
	loaded("src")

	cols := make([]string, len(sameAnswerExprs))
	names := make([]string, len(sameAnswerExprs))
	for i, e := range sameAnswerExprs {
		names[i] = "e" + strconv.Itoa(i)
		cols[i] = e + " AS " + names[i]
	}
	ingest(`INSERT INTO derived SELECT __time, ` + strings.Join(cols, ", ") + ` FROM src PARTITIONED BY ALL`)
	loaded("derived")

	code, stored := query(`SELECT __time, ` + strings.Join(names, ", ") + ` FROM derived ORDER BY __time`)
	if code != 200 {
		t.Fatalf("reading the INSERT's rows: %d %s", code, stored)
	}
	code, direct := query(`SELECT __time, ` + strings.Join(cols, ", ") + ` FROM src ORDER BY __time`)
	if code != 200 {
		t.Fatalf("the SELECT over the source: %d %s", code, direct)
	}
	var a, b [][]any
	if json.Unmarshal([]byte(stored), &a) != nil || json.Unmarshal([]byte(direct), &b) != nil || len(a) != 2 || len(b) != 2 {
		t.Fatalf("rows: %s / %s", stored, direct)
	}
	for r := range a {
		for i := range sameAnswerExprs {
			if x, y := jsonText(a[r][i+1]), jsonText(b[r][i+1]); x != y {
				t.Errorf("row %d, %s: INSERT then SELECT %s, SELECT %s", r, sameAnswerExprs[i], x, y)
			}
		}
	}
	t.Logf("rows: %s", direct)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// runSQLTask submits a SQL task to the overlord at url and waits for it to
// end: its id, final status and error message.
func runSQLTask(t *testing.T, url, body string) (id, status, errMsg string) {
	t.Helper()
	code, _, resp := do(t, "POST", url+"/svc/v2/sql/task", "application/json", body, nil)
	var sub struct {
		TaskID string `json:"taskId"`
	}
	if code != 200 || json.Unmarshal([]byte(resp), &sub) != nil {
		t.Fatalf("submit: %d %s", code, resp)
	}
	var st struct {
		Status struct {
			Status   string `json:"status"`
			ErrorMsg string `json:"errorMsg"`
		} `json:"status"`
	}
	eventually.True(t, "the SQL task to end", func() bool {
		_, _, b := do(t, "GET", url+"/svc/indexer/v1/task/"+sub.TaskID+"/status", "", "", nil)
		return json.Unmarshal([]byte(b), &st) == nil && (st.Status.Status == "SUCCESS" || st.Status.Status == "FAILED")
	}, slow)
	return sub.TaskID, st.Status.Status, st.Status.ErrorMsg
}
