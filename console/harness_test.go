package console_test

// The browser-test harness: one small cluster per package and option set
// (a control node, a router, a historical, a broker and a middle manager,
// each a real process.StartServer on free ports, finding each other through
// discovery, as scripts/cluster-up.sh --full runs them),
// one headless Chromium driven by chromedp, and helpers to open views, type,
// click and take screenshots. A page fails its test on any console error or
// uncaught exception.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hashicorp/go-hclog"
	"github.com/twmb/franz-go/pkg/kfake"

	"strata/internal/eventually"
	"strata/process"
	"strata/props"
)

// The users of the security-on cluster: the initial admin, and an analyst
// whose one permission is READ on analystDatasource.
const (
	adminUser         = "admin"
	adminPassword     = "admin-pw"
	analystUser       = "analyst"
	analystPassword   = "analyst-pw"
	analystDatasource = "wiki"
	internalPassword  = "internal-pw"
	// kafkaTopic is seeded in the kfake cluster of a Kafka env (2 partitions).
	kafkaTopic = "console-events"
)

// slow bounds the waits on the cluster: CI runs under the race detector on
// 2 busy cores.
var slow = eventually.Within(60 * time.Second)

type consoleOpts struct {
	Security bool
	Kafka    bool
}

// consoleEnv is a running cluster the console is served from.
type consoleEnv struct {
	opts    consoleOpts
	url     string // the router, which serves the console
	control string // the control node (coordinator and overlord)
	procs   []*process.Process
	kafka   string // kfake's seed broker address (Kafka envs)
	kc      *kfake.Cluster
	dir     string
	// logPath is the five processes' log (INFO and up, or
	// $STRATA_CONSOLE_LOG_LEVEL), outside dir: a failed test prints its
	// tail, and the file is kept when any test of the cluster failed.
	logPath string
	logFile *os.File
	failed  bool

	mu       sync.Mutex
	ingested map[string]bool
}

var (
	envMu sync.Mutex
	envs  = map[consoleOpts]*consoleEnv{}

	browserOnce sync.Once
	browserCtx  context.Context // the one Chromium, shared by every test's tab
	browserStop context.CancelFunc
	browserErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	envMu.Lock()
	for _, e := range envs {
		e.close()
	}
	envMu.Unlock()
	if browserStop != nil {
		browserStop()
	}
	os.Exit(code)
}

// startConsole returns the package's cluster for opts, starting it on first
// use: consecutive tests share it (a cluster per test would cost seconds
// each). Only one cluster runs at a time: some settings are still one per
// Go process, whichever cluster's process set them last (the ingestion
// input policy, the query lookups). The tasks' cluster access was one too
// (process's TestTwoMiddleManagersInOneProcessPublishToTheirOwnCluster):
// with three clusters in this binary a task published into another
// cluster, reported SUCCESS, and its datasource never showed in its own.
// A test asking for the other security setting closes the running cluster
// and starts its own. Kafka (kfake) is added to the running cluster when a
// test asks for it.
func startConsole(t *testing.T, opts consoleOpts) *consoleEnv {
	t.Helper()
	requireBrowser(t)
	envMu.Lock()
	defer envMu.Unlock()
	key := consoleOpts{Security: opts.Security}
	e := envs[key]
	if e == nil {
		for k, other := range envs {
			other.close()
			delete(envs, k)
		}
		var err error
		if e, err = newEnv(key); err != nil {
			t.Fatalf("starting the console's cluster %+v: %v", key, err)
		}
		envs[key] = e
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.printLogTail(t)
		}
	})
	if opts.Kafka && e.kc == nil {
		kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, kafkaTopic))
		if err != nil {
			t.Fatalf("kfake: %v", err)
		}
		e.kc, e.kafka = kc, kc.ListenAddrs()[0]
	}
	return e
}

func (e *consoleEnv) close() {
	// Data processes first, the control node last, as cluster-down does.
	for i := len(e.procs) - 1; i >= 0; i-- {
		e.procs[i].Close()
	}
	if e.kc != nil {
		e.kc.Close()
	}
	os.RemoveAll(e.dir)
	if e.logFile != nil {
		e.logFile.Close()
		if e.failed {
			fmt.Fprintf(os.Stderr, "console harness: the cluster's log is kept at %s\n", e.logPath)
		} else {
			os.Remove(e.logPath)
		}
	}
}

// logTailLines is how much of the cluster's log a failed test prints.
const logTailLines = 80

// printLogTail logs the last lines of the cluster's log into a failed
// test's output, and keeps the whole file: a cluster that stopped serving
// (a task that succeeded but whose segments never loaded, a process marked
// gone) says why there, while the test only sees a timeout.
func (e *consoleEnv) printLogTail(t *testing.T) {
	envMu.Lock()
	e.failed = true
	envMu.Unlock()
	b, err := os.ReadFile(e.logPath)
	if err != nil {
		t.Logf("the cluster's log %s: %v", e.logPath, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	t.Logf("the cluster's log (whole file kept at %s), last %d lines:\n%s", e.logPath, len(lines), strings.Join(lines, "\n"))
}

// clusterLogLevel is the level of the cluster's log file: INFO by default
// (joins, leaves, loads, hand-offs), $STRATA_CONSOLE_LOG_LEVEL to change it.
func clusterLogLevel() hclog.Level {
	if l := hclog.LevelFromString(os.Getenv("STRATA_CONSOLE_LOG_LEVEL")); l != hclog.NoLevel {
		return l
	}
	return hclog.Info
}

func freePorts(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

func newEnv(opts consoleOpts) (*consoleEnv, error) {
	dir, err := os.MkdirTemp("", "strata-console-")
	if err != nil {
		return nil, err
	}
	e := &consoleEnv{opts: opts, dir: dir, ingested: map[string]bool{}}
	ok := false
	defer func() {
		if !ok {
			e.close()
		}
	}()
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	examples, err := filepath.Abs("../examples")
	if err != nil {
		return nil, err
	}
	ingestDir := filepath.Join(dir, "ingest")
	control := "http://" + ports[0]
	common := func(id, roles, addr string) *props.Properties {
		p := props.Defaults()
		p.Set("svc.node.id", id)
		p.Set("svc.node.roles", roles)
		p.Set("svc.http.address", addr)
		p.Set("svc.data.dir", filepath.Join(dir, id))
		p.Set("svc.storage.storageDirectory", filepath.Join(dir, "deep"))
		p.Set("svc.discovery.coordinators", control)
		p.Set("svc.ingestion.local.allowedBaseDirs", examples+","+ingestDir)
		p.Set("svc.log.level", clusterLogLevel().String())
		if opts.Security {
			for k, v := range map[string]string{
				// The README's Security properties, passwords inline.
				"svc.auth.authenticatorChain":                                `["basic"]`,
				"svc.auth.authenticator.basic.type":                          "basic",
				"svc.auth.authenticator.basic.initialAdminPassword":          adminPassword,
				"svc.auth.authenticator.basic.initialInternalClientPassword": internalPassword,
				"svc.auth.authenticator.basic.authorizerName":                "basic",
				"svc.auth.authorizers":                                       `["basic"]`,
				"svc.auth.authorizer.basic.type":                             "basic",
				"svc.escalator.type":                                         "basic",
				"svc.escalator.internalClientPassword":                       internalPassword,
			} {
				p.Set(k, v)
			}
		}
		return p
	}
	ctl := common("control", "coordinator,overlord", ports[0])
	ctl.Set("svc.raft.address", ports[1])
	// Generous Raft timeouts (as process tests use): 2 busy cores under -race.
	ctl.Set("svc.raft.heartbeatTimeout", "1s")
	ctl.Set("svc.raft.electionTimeout", "1s")
	ctl.Set("svc.raft.leaderLeaseTimeout", "500ms")
	// Place segments at once rather than after the production delay.
	ctl.Set("svc.coordinator.startDelay", "200ms")
	ctl.Set("svc.coordinator.inventory.period", "250ms")
	mm := common("middlemanager", "middleManager", ports[4])
	mm.Set("svc.worker.capacity", "4")
	logDir := filepath.Join(os.TempDir(), "strata-console-logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	e.logPath = filepath.Join(logDir, filepath.Base(dir)+".log")
	if e.logFile, err = os.Create(e.logPath); err != nil {
		return nil, err
	}
	logger := hclog.New(&hclog.LoggerOptions{Level: clusterLogLevel(), Output: e.logFile, TimeFormat: "15:04:05.000"})
	// The router on its own, as in a deployment and in the quickstart.
	router := common("router", "router", ports[5])
	for _, p := range []*props.Properties{ctl, common("historical", "historical", ports[2]), common("broker", "broker", ports[3]), mm, router} {
		proc, err := process.StartServer(p, logger.Named(p.String("svc.node.id")))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.String("svc.node.id"), err)
		}
		e.procs = append(e.procs, proc)
		if len(e.procs) == 1 {
			if err := waitFor(func() bool { return proc.Node.IsLeader() }); err != nil {
				return nil, fmt.Errorf("the control node to lead: %w", err)
			}
		}
	}
	e.url, e.control = "http://"+ports[5], control
	// Every process has announced itself: the views list them all.
	if err := waitFor(func() bool {
		var servers []map[string]any
		return e.getJSON("/svc/coordinator/v1/servers?simple", &servers) == nil && len(servers) >= 5
	}); err != nil {
		return nil, fmt.Errorf("the five processes in discovery: %w", err)
	}
	if opts.Security {
		if err := e.createAnalyst(); err != nil {
			return nil, err
		}
	}
	ok = true
	return e, nil
}

// waitFor polls cond until it holds or a minute passes (startup, outside a
// test: eventually needs a *testing.T).
func waitFor(cond func() bool) error {
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// httpClient bounds every call: a hung answer fails the test, not the package.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// call sends a request to the router as the admin (when security is on).
func (e *consoleEnv) call(method, path, ctype, body string) (int, string, error) {
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if e.opts.Security {
		req.SetBasicAuth(adminUser, adminPassword)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func (e *consoleEnv) getJSON(path string, into any) error {
	code, body, err := e.call("GET", path, "", "")
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("GET %s: %d %s", path, code, body)
	}
	return json.Unmarshal([]byte(body), into)
}

// createAnalyst makes the analyst user: a password and one role with READ
// on analystDatasource, through the basic-security API as the README shows.
func (e *consoleEnv) createAnalyst() error {
	if err := waitFor(func() bool {
		code, _, _ := e.call("GET", "/svc-ext/basic-security/authentication/db/basic/users/admin", "", "")
		return code == 200
	}); err != nil {
		return fmt.Errorf("the initial admin: %w", err)
	}
	b := "/svc-ext/basic-security/"
	perms := fmt.Sprintf(`[{"resource":{"type":"DATASOURCE","name":%q},"action":"READ"}]`, analystDatasource)
	for _, c := range []struct{ path, ctype, body string }{
		{b + "authentication/db/basic/users/" + analystUser, "", ""},
		{b + "authentication/db/basic/users/" + analystUser + "/credentials", "application/json", `{"password":"` + analystPassword + `"}`},
		{b + "authorization/db/basic/users/" + analystUser, "", ""},
		{b + "authorization/db/basic/roles/analyst", "", ""},
		{b + "authorization/db/basic/roles/analyst/permissions", "application/json", perms},
		{b + "authorization/db/basic/users/" + analystUser + "/roles/analyst", "", ""},
	} {
		if code, body, err := e.call("POST", c.path, c.ctype, c.body); err != nil || code != 200 {
			return fmt.Errorf("POST %s: %d %s %v", c.path, code, body, err)
		}
	}
	return nil
}

// ingestWiki loads examples/wiki.json (36 rows, 2024-01-01..03) into
// datasource with a SQL task, once per cluster, and waits until a query
// counts its rows. REPLACE ... OVERWRITE ALL: a datasource a test wrote
// before holds exactly these rows after.
func (e *consoleEnv) ingestWiki(t *testing.T, datasource string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ingested[datasource] {
		return
	}
	file, err := filepath.Abs("../examples/wiki.json")
	if err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`REPLACE INTO %q OVERWRITE ALL SELECT TIME_PARSE("timestamp") AS __time, page, "user", added, deleted
FROM TABLE(EXTERN('{"type":"local","files":[%q]}', '{"type":"json"}',
 '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"added","type":"long"},{"name":"deleted","type":"long"}]'))
PARTITIONED BY DAY`, datasource, file)
	body, _ := json.Marshal(map[string]string{"query": q})
	code, got, err := e.call("POST", "/svc/v2/sql/task", "application/json", string(body))
	if err != nil || code != 200 {
		t.Fatalf("SQL task for %s: %d %s %v", datasource, code, got, err)
	}
	var task struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal([]byte(got), &task); err != nil || task.TaskID == "" {
		t.Fatalf("SQL task answer %s: %v", got, err)
	}
	eventually.True(t, "the SQL task to succeed", func() bool {
		var st struct {
			Status struct {
				Status   string `json:"status"`
				ErrorMsg string `json:"errorMsg"`
			} `json:"status"`
		}
		if err := e.getJSON("/svc/indexer/v1/task/"+task.TaskID+"/status", &st); err != nil {
			return false
		}
		if st.Status.Status == "FAILED" {
			t.Fatalf("task %s failed: %s", task.TaskID, st.Status.ErrorMsg)
		}
		return st.Status.Status == "SUCCESS"
	}, slow)
	count, _ := json.Marshal(map[string]string{"query": fmt.Sprintf(`SELECT COUNT(*) AS n FROM %q`, datasource)})
	eventually.True(t, datasource+"'s rows to be queryable", func() bool {
		code, body, err := e.call("POST", "/svc/v2/sql", "application/json", string(count))
		return err == nil && code == 200 && strings.Contains(body, `"n":36`)
	}, slow)
	e.ingested[datasource] = true
}

// ---- the browser ----------------------------------------------------------

func chromiumPath() string {
	if p := os.Getenv("STRATA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// requireBrowser skips without Chromium on a developer's machine, and fails
// where the browser tests must run (CI sets CI; STRATA_REQUIRE_BROWSER too).
func requireBrowser(t *testing.T) {
	t.Helper()
	if chromiumPath() != "" {
		return
	}
	msg := "no Chromium found (install Debian's chromium package, or set STRATA_CHROMIUM to a Chrome binary)"
	if os.Getenv("CI") != "" || os.Getenv("STRATA_REQUIRE_BROWSER") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg + "; the browser tests are skipped")
}

func sharedBrowser(t *testing.T) context.Context {
	t.Helper()
	browserOnce.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromiumPath()),
			chromedp.WindowSize(1280, 800),
			// Root in a container has no user namespace for the sandbox.
			chromedp.NoSandbox,
			chromedp.Flag("disable-gpu", true),
		)
		alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, stopBrowser := chromedp.NewContext(alloc)
		browserCtx = ctx
		browserStop = func() { stopBrowser(); stopAlloc() }
		// Start Chromium now, with its first (blank) tab, so tabs opened
		// by tests come from a running browser.
		browserErr = chromedp.Do(ctx)
	})
	if browserErr != nil {
		t.Fatalf("starting Chromium: %v", browserErr)
	}
	return browserCtx
}

// page is one browser tab on the console.
type page struct {
	t   *testing.T
	env *consoleEnv
	ctx context.Context

	mu     sync.Mutex
	errs   []string // console errors and uncaught exceptions
	allow  []string // substrings of errors a test expects
	opened bool
}

// browser opens a tab for user (none: no credentials; the login dialog
// will ask). The tab closes, and its console errors fail the test, when the
// test ends.
func (e *consoleEnv) browser(t *testing.T, user, password string) *page {
	t.Helper()
	root := sharedBrowser(t)
	ctx, cancel := chromedp.NewContext(root)
	p := &page{t: t, env: e, ctx: ctx}
	// Subscribe before the first navigation, so that nothing is missed.
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			p.note(m)
		}
	}()
	if user != "" {
		// Logged in as the login dialog leaves it: credentials in the
		// tab's sessionStorage, before any of the console's scripts runs.
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: fmt.Sprintf(`sessionStorage.getItem('strata.auth') || sessionStorage.setItem('strata.auth', %q)`, auth),
		})
		if err != nil {
			cancel()
			t.Fatalf("browser: %v", err)
		}
	}
	t.Cleanup(func() {
		cancel()
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.errs {
			t.Errorf("browser console: %s", e)
		}
	})
	return p
}

// note records a console error or an uncaught exception. A 401 from the
// network is the login flow's (the console asks for credentials then).
func (p *page) note(m chromedp.ConsoleMessage) {
	if m.Type != chromedp.ConsoleError && !m.IsException() {
		return
	}
	text := m.Text
	if m.Exception != nil && m.Exception.Exception != nil && m.Exception.Exception.Description != "" {
		text += " " + m.Exception.Exception.Description
	}
	if m.URL != "" {
		text += fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.Source == "network" && strings.Contains(text, "status of 401") {
		return
	}
	for _, a := range p.allow {
		if strings.Contains(text, a) {
			return
		}
	}
	p.errs = append(p.errs, string(m.Type)+": "+text)
}

// allowConsole lets console errors containing substr pass (a test that
// provokes a 403 on purpose).
func (p *page) allowConsole(substr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allow = append(p.allow, substr)
}

// consoleErrors returns the errors so far.
func (p *page) consoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v (console errors so far: %v)", err, p.consoleErrors())
	}
}

func run[T any](p *page, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.t.Fatalf("browser: %v (console errors so far: %v)", err, p.consoleErrors())
	}
	return v
}

// open goes to the console's view at hash ("/home", "/datasources/wiki")
// and waits until the view says its first data rendered (data-ready).
func (p *page) open(hash string) {
	p.t.Helper()
	hash = "#" + strings.TrimPrefix(hash, "#")
	if !p.opened {
		p.do(chromedp.Navigate(p.env.url + "/" + hash))
		p.opened = true
	} else {
		// A hash change, as the nav's links make: no reload.
		p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, hash)))
	}
	p.waitReady()
	if errs := p.consoleErrors(); len(errs) > 0 {
		p.t.Fatalf("opening %s: browser console errors: %v", hash, errs)
	}
}

// waitReady waits for the current view's data-ready.
func (p *page) waitReady() {
	p.t.Helper()
	p.waitVisible(`section#view[data-ready="true"]`)
}

func (p *page) click(sel string) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (p *page) typeText(sel, text string) {
	p.t.Helper()
	p.do(chromedp.SendKeys(chromedp.CSS(sel), text, chromedp.NodeVisible))
}

// text is the element's visible text (innerText).
func (p *page) text(sel string) string {
	p.t.Helper()
	return run(p, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (p *page) waitVisible(sel string) {
	p.t.Helper()
	p.do(chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (p *page) waitGone(sel string) {
	p.t.Helper()
	p.do(chromedp.WaitNotPresent(chromedp.CSS(sel)))
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	return run(p, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// viewport sets the window's size (a narrow phone-sized one, say).
func (p *page) viewport(width, height int64) {
	p.t.Helper()
	p.do(chromedp.EmulateViewport(width, height))
}

// screenshot saves the whole page as a PNG, logs and returns the path:
// under $STRATA_CONSOLE_SCREENSHOTS when set, else under the system's temp
// directory, strata-console-screenshots/<test name>/ (not t.TempDir(),
// which is removed when the test ends: the screenshots are its artifacts).
func (p *page) screenshot(name string) string {
	p.t.Helper()
	dir := os.Getenv("STRATA_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "strata-console-screenshots", strings.ReplaceAll(p.t.Name(), "/", "_"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	png := run(p, chromedp.FullScreenshot(100))
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", path)
	return path
}
