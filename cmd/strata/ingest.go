package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"strata/tlsconf"
)

// httpClient is the CLI's client: a cluster that stops answering must not
// hang a command for good. --cacert gives it the CA an https --url is
// verified against.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// cacertFlag adds --cacert FILE to a command that calls a cluster, as curl's:
// a PEM CA bundle the cluster's https certificates are verified against
// (without it, the system's roots). Verification is never turned off.
func cacertFlag(fs *flag.FlagSet) {
	fs.Func("cacert", "PEM CA bundle an https --url is verified against (default: the system's roots)", func(path string) error {
		pool, err := tlsconf.LoadCAs(path)
		if err != nil {
			return err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		httpClient.Transport = tr
		return nil
	})
}

// pollPeriod is how often a followed task is polled; quietPeriod is the
// least time between two progress lines when stderr is not a terminal.
var (
	pollPeriod  = 250 * time.Millisecond
	quietPeriod = 3 * time.Second
)

// runIngest implements `strata ingest --sql FILE|-`: submit SQL-based ingestion,
// follow the task with a progress line (stage, phase, rows read), and print the
// report's summary.
func runIngest(args []string) error {
	fs := newFlagSet("ingest", "ingest --sql FILE|- [--url URL] [--context JSON] [--no-wait]")
	cacertFlag(fs)
	sqlFile := fs.String("sql", "", "file holding the INSERT/REPLACE statement, or - for stdin (required)")
	url := fs.String("url", "http://127.0.0.1:8888", "router (or overlord/broker) URL")
	ctxJSON := fs.String("context", "", `query context as JSON, e.g. {"maxNumTasks":3}`)
	noWait := fs.Bool("no-wait", false, "submit and print the task id without following it")
	useCredentials := credentialFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	useCredentials()
	if *sqlFile == "" {
		return usagef("--sql FILE (or --sql -) is required")
	}
	var src []byte
	var err error
	if *sqlFile == "-" {
		src, err = io.ReadAll(os.Stdin)
	} else {
		src, err = os.ReadFile(*sqlFile)
	}
	if err != nil {
		return err
	}
	body := map[string]any{"query": string(src)}
	if *ctxJSON != "" {
		var c map[string]any
		if err := json.Unmarshal([]byte(*ctxJSON), &c); err != nil {
			return usagef("--context: %v", err)
		}
		body["context"] = c
	}
	b, _ := json.Marshal(body)
	resp, err := httpClient.Post(strings.TrimRight(*url, "/")+"/svc/v2/sql/task", "application/json", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("submit: %w (is the cluster up? strata quickstart)", err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		// The cluster's message, with the position it names underlined, as
		// strata query shows a refused statement.
		return fmt.Errorf("submit rejected: %w", sqlFailure(string(src), resp.StatusCode, out))
	}
	var sub struct {
		TaskID string `json:"taskId"`
		State  string `json:"state"`
	}
	if err := json.Unmarshal(out, &sub); err != nil {
		return fmt.Errorf("submit: unexpected answer %s", out)
	}
	fmt.Fprintf(stderr, "task %s %s\n", sub.TaskID, sub.State)
	if *noWait {
		fmt.Fprintln(stdout, sub.TaskID)
		return nil
	}
	// The task was just stored; a follower may not have it yet.
	return waitTask(*url, sub.TaskID, 2*time.Second)
}

// runTask implements `strata task status|wait|cancel ID`.
func runTask(args []string) error {
	const synopsis = "task status|wait|cancel ID [--url URL]"
	if len(args) > 0 && isHelp(args[0]) {
		return verbHelp("task", synopsis)
	}
	if len(args) < 1 {
		return usagef("usage: strata %s", synopsis)
	}
	verb := args[0]
	switch verb {
	case "status", "wait", "cancel":
	default:
		return usagef("unknown task command %q%s: use status, wait or cancel", verb, didYouMean(verb, "status", "wait", "cancel"))
	}
	fs := newFlagSet("task "+verb, "task "+verb+" ID [--url URL]")
	cacertFlag(fs)
	url := fs.String("url", "http://127.0.0.1:8888", "router (or overlord) URL")
	useCredentials := credentialFlags(fs)
	// Go's flag package stops at the first argument: let the id come first.
	rest := args[1:]
	var id string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		id, rest = rest[0], rest[1:]
	}
	if err := parseFlagsArgs(fs, rest); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
		rest = fs.Args()[1:]
	} else {
		rest = fs.Args()
	}
	if len(rest) > 0 {
		return unexpectedArg(fs, rest[0])
	}
	if id == "" {
		return usagef("usage: strata task %s ID [--url URL]", verb)
	}
	useCredentials()
	base := taskURL(*url, id)
	switch verb {
	case "status":
		code, body, err := httpGet(base + "/status")
		if err != nil {
			return err
		}
		if code == http.StatusNotFound {
			return noSuchTask(id, *url)
		}
		if code != 200 {
			return fmt.Errorf("task %s: HTTP %d %s", id, code, body)
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, body, "", "  ")
		fmt.Fprintln(stdout, pretty.String())
		return nil
	case "wait":
		return waitTask(*url, id, 0)
	}
	// The overlord answers 200 to a shutdown of a task that has ended (as
	// Druid's does): "cancel requested" would then be a false report.
	if st, found, err := fetchStatus(base); err == nil && !found {
		return noSuchTask(id, *url)
	} else if err == nil && (st.Status == "SUCCESS" || st.Status == "FAILED") {
		return fmt.Errorf("task %s has already ended (%s): nothing to cancel", id, st.Status)
	}
	resp, err := httpClient.Post(base+"/shutdown", "application/json", nil)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return noSuchTask(id, *url)
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("cancel %s: HTTP %d %s", id, resp.StatusCode, b)
	}
	fmt.Fprintf(stdout, "cancel requested for %s\n", id)
	return nil
}

func taskURL(url, id string) string {
	return strings.TrimRight(url, "/") + "/svc/indexer/v1/task/" + id
}

func noSuchTask(id, url string) error {
	return fmt.Errorf("no such task: %s (unknown to the cluster at %s)", id, url)
}

func httpGet(url string) (int, []byte, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// taskStatus is what the CLI reads of GET .../task/{id}/status.
type taskStatus struct {
	ID               string `json:"id"`
	DataSource       string `json:"dataSource"`
	CreatedTime      string `json:"createdTime"`
	Status           string `json:"status"`
	RunnerStatusCode string `json:"runnerStatusCode"`
	Duration         int64  `json:"duration"` // ms; -1 until the task ends
	Location         struct {
		Host    *string `json:"host"`
		Port    int     `json:"port"`
		TLSPort int     `json:"tlsPort"`
	} `json:"location"`
	ErrorMsg *string `json:"errorMsg"`
}

// fetchStatus returns a task's status; found is false on 404.
func fetchStatus(base string) (st taskStatus, found bool, err error) {
	code, body, err := httpGet(base + "/status")
	if err != nil {
		return st, false, err
	}
	if code == http.StatusNotFound {
		return st, false, nil
	}
	var doc struct {
		Status *taskStatus `json:"status"`
	}
	if code != 200 || json.Unmarshal(body, &doc) != nil || doc.Status == nil {
		return st, false, fmt.Errorf("status: HTTP %d %s", code, bytes.TrimSpace(body))
	}
	return *doc.Status, true, nil
}

// waitTask follows a task to its end, showing its live progress on stderr,
// and prints its summary. A task the cluster does not know (404) fails the
// wait once grace has passed since it started (a task just submitted may
// not be visible everywhere at once).
func waitTask(url, id string, grace time.Duration) error {
	base := taskURL(url, id)
	start := time.Now()
	pr := newProgressLine(stderr)
	defer pr.end()
	for {
		st, found, err := fetchStatus(base)
		if err != nil {
			return fmt.Errorf("task %s: %w", id, err)
		}
		if !found {
			if time.Since(start) >= grace {
				return noSuchTask(id, url)
			}
			time.Sleep(pollPeriod)
			continue
		}
		var rep []byte
		if code, b, err := httpGet(base + "/reports"); err == nil && code == 200 {
			rep = b
		}
		sum := summarize(rep)
		switch st.Status {
		case "SUCCESS":
			pr.end()
			fmt.Fprintln(stdout, finalLine(id, st, sum))
			return nil
		case "FAILED":
			pr.end()
			return fmt.Errorf("%s", failureLine(id, st, sum))
		}
		waiting := ""
		if st.RunnerStatusCode == "PENDING" {
			waiting = pendingReason(url)
		}
		pr.show(liveLine(st, sum, start, waiting), st.Status+" "+st.RunnerStatusCode+" "+waiting+" "+sum.line)
		time.Sleep(pollPeriod)
	}
}

// pendingReason says why a pending task has no worker yet, from the
// overlord's workers: a task is pending for a moment even beside an idle
// worker (until the overlord's next assignment round), and saying there is
// no free slot then would send its reader looking for a busy worker.
func pendingReason(url string) string {
	code, body, err := httpGet(strings.TrimRight(url, "/") + "/svc/indexer/v1/workers")
	var workers []struct {
		Worker struct {
			Capacity int    `json:"capacity"`
			Version  string `json:"version"` // "" when disabled
		} `json:"worker"`
		Used int `json:"currCapacityUsed"`
	}
	if err != nil || code != http.StatusOK || json.Unmarshal(body, &workers) != nil {
		return "waiting to be assigned to a worker"
	}
	enabled, capacity, free := 0, 0, 0
	for _, w := range workers {
		if w.Worker.Version == "" {
			continue
		}
		enabled++
		capacity += w.Worker.Capacity
		free += max(0, w.Worker.Capacity-w.Used)
	}
	switch {
	case len(workers) == 0:
		return "waiting for a worker: no middle manager is registered"
	case enabled == 0:
		return "waiting for a worker: every middle manager is disabled"
	case free == 0:
		return fmt.Sprintf("waiting for a worker: all %d slots are busy", capacity)
	}
	return fmt.Sprintf("waiting to be assigned: %s on %s", plural(free, "free slot"), plural(enabled, "middle manager"))
}

// liveLine is the progress line of a task that has not ended; waiting is
// pendingReason's line for a pending task.
func liveLine(st taskStatus, sum reportSummary, since time.Time, waiting string) string {
	if t, err := time.Parse(time.RFC3339Nano, st.CreatedTime); err == nil && !t.After(time.Now()) {
		since = t
	}
	head := fmt.Sprintf("%-8s %6.1fs  ", st.Status, time.Since(since).Seconds())
	switch st.RunnerStatusCode {
	case "WAITING":
		what := "the datasource"
		if st.DataSource != "" {
			what = st.DataSource
		}
		return head + "waiting for a lock: another task holds an overlapping interval of " + what
	case "PENDING":
		return head + waiting
	}
	where := ""
	if h := st.Location.Host; h != nil && *h != "" {
		port := st.Location.Port
		if port <= 0 {
			port = st.Location.TLSPort
		}
		where = fmt.Sprintf(" on %s:%d", *h, port)
	}
	if sum.line == "" {
		return head + "started" + where + ", no progress report yet"
	}
	return head + sum.line
}

// finalLine is the summary of a task that succeeded; the time is the
// task's own (status duration), not how long the CLI waited.
func finalLine(id string, st taskStatus, sum reportSummary) string {
	s := "task " + id + " SUCCESS"
	if st.Duration >= 0 {
		s += fmt.Sprintf(" in %.1fs", float64(st.Duration)/1000)
	}
	if sum.final != "" {
		s += ": " + sum.final
	}
	return s
}

// failureLine is the error of a task that failed: its status errorMsg and
// the report's error when it says more.
func failureLine(id string, st taskStatus, sum reportSummary) string {
	s := "task " + id + " FAILED"
	if st.Duration >= 0 {
		s += fmt.Sprintf(" after %.1fs", float64(st.Duration)/1000)
	}
	msg := ""
	if st.ErrorMsg != nil {
		msg = *st.ErrorMsg
	}
	if sum.errorText != "" && !strings.Contains(msg, sum.errorText) {
		if msg != "" {
			msg += "; "
		}
		msg += sum.errorText
	}
	if msg != "" {
		s += ": " + msg
	}
	if sum.final != "" {
		s += " (" + sum.final + ")"
	}
	return s
}

// progressLine shows a line that changes: redrawn in place on a terminal;
// elsewhere (a log file, CI) printed as a new line when its text changes, at
// most every few seconds.
type progressLine struct {
	w      io.Writer
	tty    bool
	shown  bool
	last   string
	lastAt time.Time
}

func newProgressLine(w io.Writer) *progressLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressLine{w: w, tty: tty}
}

// show shows line; key is what the line says besides the time, so that
// the time alone is no news off a terminal.
func (p *progressLine) show(line, key string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
		return
	}
	if key == p.last || time.Since(p.lastAt) < quietPeriod {
		return
	}
	p.last, p.lastAt = key, time.Now()
	fmt.Fprintln(p.w, line)
}

// end finishes the line on a terminal.
func (p *progressLine) end() {
	if p.tty && p.shown {
		fmt.Fprintln(p.w)
	}
	p.shown = false
}
