package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// Result is what one scenario saw.
type Result struct {
	Scenario   string
	Ops        int           // operations the clients completed or gave up on
	Acked      int           // writes acknowledged (or queries answered 200, for read-only scenarios)
	Lost       int           // acknowledged writes missing at the end
	Wrong      int           // answers with status 200 that differ from the reference
	Violations int           // linearizability violations
	MaxUnavail time.Duration // longest time a client went without a successful operation
	Faults     map[string]int
	Skipped    string   // what part of the scenario did not run, and why
	Err        string   // why the scenario could not run (a setup failure)
	Examples   []string // the first few failures, for the report
	mu         sync.Mutex
}

// Failed reports whether the scenario found a correctness failure.
func (r *Result) Failed() bool { return r.Lost > 0 || r.Wrong > 0 || r.Violations > 0 || r.Err != "" }

func (r *Result) fault(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Faults == nil {
		r.Faults = map[string]int{}
	}
	r.Faults[kind]++
}

func (r *Result) example(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Examples) < 8 {
		r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
	}
}

// FaultSummary is "kill-9×3 sigstop×2 ...", sorted by kind.
func (r *Result) FaultSummary() string {
	var kinds []string
	for k := range r.Faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s×%d", k, r.Faults[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func (r *Result) faultCount() int {
	n := 0
	for _, c := range r.Faults {
		n += c
	}
	return n
}

// PrintTable writes the results as a table, then each scenario's examples of
// failures and skips.
func PrintTable(w io.Writer, results []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\toperations\tacknowledged\tlost\twrong answers\tlin. violations\tmax unavailable\tfaults\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1fs\t%d\t\n", r.Scenario, r.Ops, r.Acked, r.Lost, r.Wrong, r.Violations,
			r.MaxUnavail.Seconds(), r.faultCount())
	}
	tw.Flush()
	for _, r := range results {
		fmt.Fprintf(w, "%s faults: %s\n", r.Scenario, r.FaultSummary())
		if r.Err != "" {
			fmt.Fprintf(w, "%s ERROR: %s\n", r.Scenario, r.Err)
		}
		if r.Skipped != "" {
			fmt.Fprintf(w, "%s skipped: %s\n", r.Scenario, r.Skipped)
		}
		for _, e := range r.Examples {
			fmt.Fprintf(w, "%s: %s\n", r.Scenario, e)
		}
	}
}

// availability tracks, per client, the longest stretch without a successful
// operation: from the first failure after a success (or the start) to the
// next success.
type availability struct {
	mu      sync.Mutex
	failing map[int]time.Time
	max     time.Duration
}

func (a *availability) record(client int, ok bool, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failing == nil {
		a.failing = map[int]time.Time{}
	}
	since, down := a.failing[client]
	switch {
	case ok && down:
		a.max = max(a.max, at.Sub(since))
		delete(a.failing, client)
	case !ok && !down:
		a.failing[client] = at
	}
}

// finish closes the windows still open at the end of the run.
func (a *availability) finish(at time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, since := range a.failing {
		a.max = max(a.max, at.Sub(since))
	}
	return a.max
}
