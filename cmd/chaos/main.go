// Command chaos is Strata's fault-injection suite (make chaos): it starts
// clusters of real strata processes, each in a network namespace of its own
// when it runs as root, injects faults (kill -9, SIGSTOP, partitions,
// whole-cluster crashes, corrupted segment files, task kills) while clients
// write and query, checks every answer, and prints a table. It exits 1 when
// an acknowledged write was lost, an answer was wrong or a history was not
// linearizable. See the chaos package for the scenarios and checkers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"strata/chaos"
)

func main() {
	bin := flag.String("bin", "bin/strata", "strata binary (a normal build, not -race)")
	dir := flag.String("dir", "", "working directory for data and logs (default: a new temporary directory, kept on failure)")
	dur := flag.Duration("duration", 3*time.Minute, "how long each scenario injects faults")
	scale := flag.Int("scale", 2, "multiplies data sizes and client counts")
	only := flag.String("scenarios", "", "comma-separated scenario names to run (default: all)")
	loopback := flag.Bool("loopback", false, "run on loopback without network namespaces (no partitions)")
	seed := flag.Int64("seed", time.Now().UnixNano(), "random seed of the fault schedule")
	flag.Parse()

	abs, err := filepath.Abs(*bin)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v (run make build)\n", err)
		os.Exit(2)
	}
	work := *dir
	if work == "" {
		if work, err = os.MkdirTemp("", "strata-chaos-"); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			os.Exit(2)
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer cancel()

	nw := chaos.NewNet(*loopback)
	defer nw.Close()
	if nw.Partitions() {
		fmt.Println("network: one namespace per process (10.213.0.0/24), partitions on")
	} else {
		fmt.Printf("network: loopback, partitions off (%s)\n", nw.Why)
	}
	var scenarios []chaos.Scenario
	for _, s := range chaos.Scenarios() {
		if *only == "" || strings.Contains(","+*only+",", ","+s.Name+",") {
			scenarios = append(scenarios, s)
		}
	}
	fmt.Printf("seed %d, %s of faults per scenario, work dir %s\n", *seed, *dur, work)
	opts := &chaos.Options{Bin: abs, Dir: work, Duration: *dur, Net: nw, Out: os.Stdout, Seed: *seed, Scale: *scale}
	results := chaos.Run(ctx, opts, scenarios)
	fmt.Println()
	chaos.PrintTable(os.Stdout, results)
	failed := false
	for _, r := range results {
		failed = failed || r.Failed()
	}
	if failed {
		fmt.Printf("FAIL: lost writes, wrong answers or linearizability violations (logs kept in %s)\n", work)
		nw.Close()
		os.Exit(1)
	}
	if *dir == "" {
		os.RemoveAll(work)
	}
	fmt.Println("PASS")
}
