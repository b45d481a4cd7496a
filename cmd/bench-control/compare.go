package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// compare and compareRounds are set by --compare-unpatched and --rounds.
var (
	compare       bool
	compareRounds int
)

const raftModule = "github.com/hashicorp/raft"

// build is one strata binary of the comparison.
type build struct {
	name, bin string
}

// compareUnpatched builds strata with and without the Raft patch and runs the
// same write loads against a fresh cluster of each build, in alternating order
// over the rounds so that a drift of the shared machine's speed does not favour
// one build, then prints both builds' figures and the patch's effect.
func compareUnpatched(dur time.Duration, clients int) error {
	patched, upstream, version, err := buildBoth()
	if err != nil {
		return fmt.Errorf("compare-unpatched: %w", err)
	}
	defer os.RemoveAll(filepath.Dir(patched.bin))
	fmt.Printf("\nRaft patch: strata built with third_party/raft (patched) and with upstream %s %s, same loads, %d rounds in alternating order\n",
		raftModule, version, compareRounds)
	results := map[string][][2]loadResult{} // build name → rounds of {1 client, many clients}
	for r := 0; r < compareRounds; r++ {
		order := []build{patched, upstream}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, b := range order {
			one, many, err := writeLoads(b.bin, dur, clients)
			if err != nil {
				return fmt.Errorf("compare-unpatched, %s build: %w", b.name, err)
			}
			results[b.name] = append(results[b.name], [2]loadResult{one, many})
			fmt.Printf("  round %d %-8s  1 client: p50 %6.3f ms %6.0f writes/s | %d clients: %6.0f writes/s p50 %6.3f ms p99 %6.3f ms | leader CPU %4.0f µs/write  (%d failed)\n",
				r+1, b.name, ms(one.pct(0.5)), rate(one), clients, rate(many), ms(many.pct(0.5)), ms(many.pct(0.99)),
				leaderCPUPerWrite(many), one.failures+many.failures)
		}
	}
	p50 := func(name string) float64 {
		return medianOf(results[name], func(x [2]loadResult) float64 { return ms(x[0].pct(0.5)) })
	}
	thr := func(name string) float64 {
		return medianOf(results[name], func(x [2]loadResult) float64 { return rate(x[1]) })
	}
	pp, up := p50(patched.name), p50(upstream.name)
	pt, ut := thr(patched.name), thr(upstream.name)
	fmt.Printf("  patch effect (median of rounds): 1-client p50 %.3f ms vs %.3f ms upstream (%+.0f%%); %d clients %.0f vs %.0f writes/s upstream (%+.0f%%)\n",
		pp, up, 100*(pp/up-1), clients, pt, ut, 100*(pt/ut-1))
	return nil
}

// writeLoads starts a cluster of bin and measures the 1-client and the
// many-client write loads after a warm-up.
func writeLoads(bin string, dur time.Duration, clients int) (one, many loadResult, err error) {
	c, l, _, stop, err := startCluster(bin)
	if err != nil {
		return one, many, err
	}
	defer stop()
	op := writeOp(l)
	load(8, time.Second, op) // warm-up
	one = c.phase(l, "1client", dur, func() loadResult { return load(1, dur, op) })
	many = c.phase(l, fmt.Sprintf("%dclients", clients), dur, func() loadResult { return load(clients, dur, op) })
	return one, many, nil
}

func rate(r loadResult) float64 { return float64(r.n) / r.elapsed.Seconds() }

func leaderCPUPerWrite(r loadResult) float64 {
	for _, x := range r.cpu {
		if x.leader && r.n > 0 {
			return float64(x.d.Microseconds()) / float64(r.n)
		}
	}
	return 0
}

func medianOf[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// buildBoth builds cmd/strata of the module in the working directory twice,
// into a temporary directory: as is (go.mod's replace points at the patched
// copy in third_party/raft) and with that replace dropped, which builds against
// upstream's release of the version go.mod requires. The second build uses
// go build -modfile with an edited copy of go.mod and go.sum, so the tree is
// not touched. Returns the upstream version built.
func buildBoth() (patched, upstream build, version string, err error) {
	gomod, err := goOutput("", "env", "GOMOD")
	if err != nil {
		return patched, upstream, "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return patched, upstream, "", fmt.Errorf("run from Strata's module (no go.mod here)")
	}
	root := filepath.Dir(gomod)
	replaced, err := goOutput(root, "list", "-m", "-f", "{{with .Replace}}{{.Path}}{{end}}", raftModule)
	if err != nil {
		return patched, upstream, "", err
	}
	if replaced == "" {
		return patched, upstream, "", fmt.Errorf("go.mod does not replace %s: there is no patch to compare", raftModule)
	}
	dir, err := tempDir("strata-raft-compare-")
	if err != nil {
		return patched, upstream, "", err
	}
	modDir := filepath.Join(dir, "upstream-mod")
	if err := os.Mkdir(modDir, 0o755); err != nil {
		return patched, upstream, "", err
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return patched, upstream, "", err
		}
		if err := os.WriteFile(filepath.Join(modDir, f), b, 0o644); err != nil {
			return patched, upstream, "", err
		}
	}
	modfile := filepath.Join(modDir, "go.mod")
	if _, err := goOutput(root, "mod", "edit", "-dropreplace", raftModule, modfile); err != nil {
		return patched, upstream, "", err
	}
	if version, err = goOutput(root, "list", "-modfile", modfile, "-m", "-f", "{{.Version}}", raftModule); err != nil {
		return patched, upstream, "", err
	}
	patched = build{"patched", filepath.Join(dir, "strata-patched")}
	upstream = build{"upstream", filepath.Join(dir, "strata-upstream")}
	fmt.Printf("building strata with and without the Raft patch into %s\n", dir)
	if _, err := goOutput(root, "build", "-o", patched.bin, "./cmd/strata"); err != nil {
		return patched, upstream, "", err
	}
	if _, err := goOutput(root, "build", "-modfile", modfile, "-o", upstream.bin, "./cmd/strata"); err != nil {
		return patched, upstream, "", err
	}
	return patched, upstream, version, nil
}

// goOutput runs the go command in dir and returns its trimmed standard output.
func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
