package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// capture runs a command line with stdout and stderr in buffers.
func capture(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	oldOut, oldErr, oldClient := stdout, stderr, httpClient
	stdout, stderr = &o, &e
	// --user replaces the client: one command's credentials stay its own.
	defer func() { stdout, stderr, httpClient = oldOut, oldErr, oldClient }()
	code = run(args)
	return code, o.String(), e.String()
}

func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"help"}, {"version"},
		{"quickstart", "-h"}, {"server", "--help"},
		{"segment", "-h"}, {"segment", "build", "-h"},
		{"ingest", "-h"}, {"ingest", "--help"},
		{"task", "-h"}, {"task", "help"}, {"task", "wait", "-h"}, {"task", "status", "some-id", "--help"}, {"task", "cancel", "-h"},
		{"log", "--help"}, {"log", "dump", "-h"}, {"log", "replay", "-h"}, {"recover", "-h"},
		{"audit", "-h"}, {"audit", "state", "-h"}, {"audit", "diff", "-h"}, {"audit", "verify", "--help"},
	} {
		code, out, errOut := capture(t, args...)
		if code != 0 {
			t.Errorf("strata %s: exit %d, want 0\n%s", strings.Join(args, " "), code, errOut)
		}
		if out+errOut == "" {
			t.Errorf("strata %s printed nothing", strings.Join(args, " "))
		}
		if strings.Contains(errOut, "help requested") {
			t.Errorf("strata %s: %s", strings.Join(args, " "), errOut)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{}, {"nope"}, {"task"}, {"task", "wait"}, {"task", "frob", "x"}, {"task", "wait", "a", "b"},
		{"ingest"}, {"ingest", "--bogus"}, {"log"}, {"log", "dump", "extra"}, {"segment", "build"},
		{"quickstart", "--set", "x=y"}, {"recover"}, {"recover", "--data", "d", "extra"},
	} {
		if code, _, errOut := capture(t, args...); code != 2 {
			t.Errorf("strata %s: exit %d, want 2\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	// The flag package reports a bad flag once, with the command's usage.
	_, _, errOut := capture(t, "ingest", "--bogus")
	if strings.Count(errOut, "not defined") != 1 || !strings.Contains(errOut, "usage: strata ingest") {
		t.Errorf("bad flag output:\n%s", errOut)
	}
}

func TestUsageListsEveryForm(t *testing.T) {
	code, _, errOut := capture(t)
	if code != 2 {
		t.Fatalf("no arguments: exit %d", code)
	}
	for _, form := range []string{
		"strata quickstart", "--set svc.key=value", "strata server --id ID --roles coordinator,overlord",
		"--roles broker|historical|middleManager|router", "--coordinators URL", "strata segment build",
		"--max-parse-exceptions", "strata ingest --sql", "--no-wait", "strata task status", "strata task wait",
		"strata task cancel", "strata log dump", "strata log replay", "strata audit log [--since T]", "strata audit state --at", "strata audit diff FROM TO",
		"strata audit verify", "strata recover --data DIR", "strata snapshot save --url URL --out FILE",
		"strata snapshot restore --in FILE", "strata version", "strata help",
	} {
		if !strings.Contains(errOut, form) {
			t.Errorf("usage does not show %q", form)
		}
	}
}

func TestUnknownTaskFailsClearly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"task":"nope","status":null}`)
	}))
	defer srv.Close()
	for _, verb := range []string{"wait", "status", "cancel"} {
		done := make(chan struct{})
		var code int
		var errOut string
		go func() {
			defer close(done)
			code, _, errOut = capture(t, "task", verb, "nope", "--url", srv.URL)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("task %s of an unknown task did not return", verb)
		}
		if code != 1 || !strings.Contains(errOut, "no such task: nope") || strings.Contains(errOut, "HTTP 404") {
			t.Errorf("task %s: exit %d, %q", verb, code, errOut)
		}
	}
}

// script is a fake overlord: each poll of /status moves to the next step.
type script struct {
	mu    sync.Mutex
	steps []step
	at    int
}

type step struct {
	status, runner string
	duration       int64
	report         string // "" = 404
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, "/status"):
		st := s.steps[min(s.at, len(s.steps)-1)]
		s.at++
		host := `null`
		if st.runner == "RUNNING" || st.runner == "NONE" {
			host = `"10.0.0.7"`
		}
		fmt.Fprintf(w, `{"task":"q1","status":{"id":"q1","dataSource":"wiki","createdTime":"%s","status":%q,"runnerStatusCode":%q,
			"duration":%d,"location":{"host":%s,"port":8091,"tlsPort":-1},"errorMsg":null}}`,
			time.Now().UTC().Add(-5*time.Second).Format("2006-01-02T15:04:05.000Z"), st.status, st.runner, st.duration, host)
	case strings.HasSuffix(r.URL.Path, "/shutdown"):
		// As the overlord answers for a task it knows, ended or not.
		fmt.Fprint(w, `{"task":"q1"}`)
	case r.URL.Path == "/svc/indexer/v1/workers":
		// One idle worker: a pending task waits to be assigned, not for a slot.
		fmt.Fprint(w, `[{"worker":{"scheme":"http","host":"10.0.0.7:8091","ip":"10.0.0.7","capacity":2,"version":"0","category":"_default_worker_category"},
			"currCapacityUsed":0,"currParallelIndexCapacityUsed":0,"availabilityGroups":[],"runningTasks":[],"lastCompletedTaskTime":"2024-01-01T00:00:00.000Z","blacklistedUntil":null}]`)
	case strings.HasSuffix(r.URL.Path, "/reports"):
		// The report that goes with the status served last.
		st := s.steps[min(max(s.at-1, 0), len(s.steps)-1)]
		if st.report == "" {
			http.Error(w, "No task reports were found for this task.", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, st.report)
	default:
		http.NotFound(w, r)
	}
}

func TestWaitShowsQueueStatesLiveProgressAndTaskDuration(t *testing.T) {
	live, final := msqReports(t)
	srv := httptest.NewServer(&script{steps: []step{
		{status: "RUNNING", runner: "WAITING", duration: -1},
		{status: "RUNNING", runner: "PENDING", duration: -1},
		{status: "RUNNING", runner: "RUNNING", duration: -1},
		{status: "RUNNING", runner: "RUNNING", duration: -1, report: live},
		{status: "SUCCESS", runner: "NONE", duration: 12345, report: final},
	}})
	defer srv.Close()
	defer func(p, q time.Duration) { pollPeriod, quietPeriod = p, q }(pollPeriod, quietPeriod)
	pollPeriod, quietPeriod = time.Millisecond, 0
	code, out, errOut := capture(t, "task", "wait", "q1", "--url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"waiting for a lock: another task holds an overlapping interval of wiki",
		"waiting to be assigned: 2 free slots on 1 middle manager",
		"started on 10.0.0.7:8091",
		"rows read",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("progress lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "no middle manager has a free slot") {
		t.Errorf("a task pending beside an idle worker was said to wait for a free slot:\n%s", errOut)
	}
	// The task's own duration, not the CLI's wait (a few milliseconds).
	if !strings.HasPrefix(out, "task q1 SUCCESS in 12.3s: 2 stages, 3 input rows read, 2 segments published and loaded") {
		t.Errorf("final line %q", out)
	}
}

func TestWaitReportsFailure(t *testing.T) {
	srv := httptest.NewServer(&script{steps: []step{
		{status: "FAILED", runner: "NONE", duration: 2000, report: failedNativeReport()},
	}})
	defer srv.Close()
	code, _, errOut := capture(t, "task", "wait", "q1", "--url", srv.URL)
	if code != 1 || !strings.Contains(errOut, "task q1 FAILED after 2.0s: Max parse exceptions[0] exceeded") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestReplaySummary(t *testing.T) {
	// Entries 1..8: 6 commands (one refused), a configuration entry and a
	// leader's no-op; the state's index is that of the last command.
	got := replaySummary(1, 8, 6, 1, map[raft.LogType]int{raft.LogConfiguration: 1, raft.LogNoop: 1}, 6)
	want := "read entries 1 to 8 (8): 6 commands applied (1 of them refused, as when they were first applied), " +
		"1 no-op (leader election) skipped, 1 configuration skipped; state at index 6 (its last command)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := replaySummary(9, 8, 0, 0, nil, 8); got != "no log entries after index 8; state at index 8" {
		t.Errorf("empty replay: %s", got)
	}
}

func TestSegmentProgressEndsAtFullBar(t *testing.T) {
	var e bytes.Buffer
	old := stderr
	stderr = &e
	defer func() { stderr = old }()
	p := newProgress(1000, time.Now())
	p.update(10, 500) // shown: the first update
	p.update(20, 999) // throttled
	p.done(20, true)
	if lines := strings.Split(strings.TrimSpace(e.String()), "\r"); !strings.Contains(lines[len(lines)-1], "100.0%") ||
		!strings.Contains(lines[len(lines)-1], strings.Repeat("#", 30)) {
		t.Errorf("last bar %q", lines[len(lines)-1])
	}
}

func TestNumAndSizes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %s", n, got)
		}
	}
	if byteSize(1500) != "1.5 KB" || byteSize(12) != "12 B" || byteSize(2_500_000_000) != "2.5 GB" {
		t.Error("byteSize")
	}
}

// Cancelling a task that has ended is not reported as a cancel requested:
// the overlord answers 200 to its shutdown all the same.
func TestCancelEndedTaskSaysSo(t *testing.T) {
	srv := httptest.NewServer(&script{steps: []step{{status: "SUCCESS", runner: "NONE", duration: 1000}}})
	defer srv.Close()
	code, out, errOut := capture(t, "task", "cancel", "q1", "--url", srv.URL)
	if code != 1 || strings.Contains(out, "cancel requested") || !strings.Contains(errOut, "task q1 has already ended (SUCCESS): nothing to cancel") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
