package chaos

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestChaosShort is the short fault-injection run of make test: every
// scenario for about 30 s of faults on a strata binary built without the race
// detector (the servers would be too slow with it). The long run is make
// chaos.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault-injection run takes about two minutes")
	}
	bin := filepath.Join(t.TempDir(), "strata")
	build := exec.Command("go", "build", "-o", bin, "./cmd/strata")
	build.Dir = moduleRoot(t)
	// A plain build whatever the test binary was built with.
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/strata: %v\n%s", err, out)
	}
	nw := NewNet(false)
	defer nw.Close()
	if nw.Partitions() {
		t.Log("network namespaces: one per process; partitions are injected")
	} else {
		t.Logf("NO NETWORK NAMESPACES (%s): running on loopback with process faults only; partition faults are NOT tested", nw.Why)
	}
	work, err := os.MkdirTemp("", "strata-chaos-test-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	o := &Options{Bin: bin, Dir: work, Duration: 30 * time.Second, Net: nw, Out: testWriter{t}, Seed: time.Now().UnixNano(), Scale: 1}
	t.Logf("seed %d, %d CPUs", o.Seed, runtime.NumCPU())
	results := Run(ctx, o, Scenarios())
	var table bytes.Buffer
	PrintTable(&table, results)
	t.Log("\n" + table.String())
	failed := false
	for _, r := range results {
		if r.Failed() {
			failed = true
			t.Errorf("%s: %d lost, %d wrong, %d linearizability violations %s", r.Scenario, r.Lost, r.Wrong, r.Violations, r.Err)
		}
		if r.Ops == 0 && r.Err == "" {
			t.Errorf("%s ran no operations", r.Scenario)
		}
		if len(r.Faults) == 0 && r.Err == "" {
			t.Errorf("%s injected no faults", r.Scenario)
		}
	}
	if nw.Partitions() && results[0].Faults["partition-leader"]+results[0].Faults["partition-follower"] == 0 && !failed {
		t.Errorf("control plane: no partition was injected")
	}
	if failed {
		t.Logf("logs and data kept in %s", work)
	} else {
		os.RemoveAll(work)
	}
}

// moduleRoot is the directory of go.mod above the package.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
