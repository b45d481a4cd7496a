package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"strata/cluster"
	"strata/internal/eventually"
)

// asStrata makes the test binary run as strata (the real command line, in a
// process of its own) when a test starts it with this variable set.
const asStrata = "STRATA_TEST_RUN_AS_STRATA"

func TestMain(m *testing.M) {
	if os.Getenv(asStrata) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// strataCmd is a strata command line run by the test binary as a process.
func strataCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asStrata+"=1")
	return cmd
}

// procNode is one control node run as a real strata server process.
type procNode struct {
	id, http, raft, data string
	cmd                  *exec.Cmd
	done                 chan error
	stderr               string // file the process logs to
}

type procCluster struct {
	t     *testing.T
	peers string
	nodes []*procNode
}

func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

func newProcCluster(t *testing.T, n int) *procCluster {
	addrs := freeAddrs(t, 2*n)
	c := &procCluster{t: t}
	var peers []string
	for i := range n {
		nd := &procNode{id: fmt.Sprintf("n%d", i+1), http: addrs[2*i], raft: addrs[2*i+1], data: t.TempDir()}
		nd.stderr = filepath.Join(t.TempDir(), nd.id+".log")
		c.nodes = append(c.nodes, nd)
		peers = append(peers, fmt.Sprintf("%s=%s=http://%s", nd.id, nd.raft, nd.http))
	}
	c.peers = strings.Join(peers, ",")
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.cmd != nil {
				nd.cmd.Process.Kill()
				<-nd.done
			}
		}
	})
	return c
}

// start starts node i's process; its log goes to a file of its own.
func (c *procCluster) start(i int) *procNode {
	c.t.Helper()
	nd := c.nodes[i]
	nd.cmd = strataCmd("server", "--id", nd.id, "--roles", "coordinator,overlord", "--http", nd.http, "--raft", nd.raft,
		"--data", nd.data, "--peers", c.peers,
		// Small thresholds: the leader snapshots and trims its log within the test.
		"--set", "svc.raft.snapshotThreshold=8", "--set", "svc.raft.snapshotInterval=100ms", "--set", "svc.raft.trailingLogs=4",
		// Generous timeouts: the race detector on 2 busy cores.
		"--set", "svc.raft.heartbeatTimeout=1s", "--set", "svc.raft.electionTimeout=1s", "--set", "svc.raft.leaderLeaseTimeout=500ms",
		"--set", "svc.log.level=warn")
	f, err := os.OpenFile(nd.stderr, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	nd.cmd.Stdout, nd.cmd.Stderr = f, f
	if err := nd.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	f.Close()
	nd.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(nd.cmd, nd.done)
	return nd
}

// stop ends node i with SIGTERM (a clean shutdown) and waits for it.
func (c *procCluster) stop(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.done:
	case <-time.After(15 * time.Second):
		c.t.Fatalf("%s did not stop", nd.id)
	}
	nd.cmd = nil
}

func (c *procCluster) leader() int {
	c.t.Helper()
	l := -1
	eventually.True(c.t, "a leader", func() bool {
		for i, nd := range c.nodes {
			if nd.cmd == nil {
				continue
			}
			if resp, err := http.Get("http://" + nd.http + "/svc/coordinator/v1/isLeader"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					l = i
					return true
				}
			}
		}
		return false
	}, eventually.Within(20*time.Second))
	return l
}

// write sets maxSegmentsToMove through node i (redirected to the leader),
// retrying through elections.
func (c *procCluster) write(i, v int) {
	c.t.Helper()
	var last string
	eventually.True(c.t, fmt.Sprintf("write %d acknowledged", v), func() bool {
		resp, err := http.Post("http://"+c.nodes[i].http+"/svc/coordinator/v1/config", "application/json",
			strings.NewReader(fmt.Sprintf(`{"maxSegmentsToMove":%d}`, v)))
		if err != nil {
			last = err.Error()
			return false
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK
	}, eventually.Within(20*time.Second), eventually.Showing(func() string { return last }))
}

// snapshotIndexes lists the indexes of a node's snapshots (from the
// directory names hashicorp/raft gives them: term-index-millis).
func snapshotIndexes(dataDir string) []uint64 {
	dirs, _ := filepath.Glob(filepath.Join(dataDir, "raft", "snapshots", "*", "meta.json"))
	var out []uint64
	for _, d := range dirs {
		parts := strings.Split(filepath.Base(filepath.Dir(d)), "-")
		if len(parts) == 3 {
			if idx, err := strconv.ParseUint(parts[1], 10, 64); err == nil {
				out = append(out, idx)
			}
		}
	}
	return out
}

var digestLine = regexp.MustCompile(`(?m)^state: \d+ bytes, sha256 [0-9a-f]+$`)

// replay runs `strata log replay` on a stopped node and returns its output
// and the state digest line.
func replay(t *testing.T, dataDir string) (out, digest string) {
	t.Helper()
	b, err := strataCmd("log", "replay", "--data", dataDir).CombinedOutput()
	if err != nil {
		t.Fatalf("log replay --data %s: %v\n%s", dataDir, err, b)
	}
	return string(b), digestLine.FindString(string(b))
}

// A follower whose bbolt log was truncated refuses to start with one clear
// line; `strata recover` moves its store aside; restarted, it rejoins, gets
// the leader's snapshot and ends with the same state as the leader.
func TestRecoverDamagedFollowerFromLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three strata processes")
	}
	c := newProcCluster(t, 3)
	for i := range c.nodes {
		c.start(i)
	}
	l := c.leader()
	v := 0
	for range 12 {
		v++
		c.write(l, v)
	}
	// The leader has snapshotted and trimmed the head of its log: an empty
	// follower can only be restored from its snapshot.
	eventually.True(t, "a snapshot on the leader", func() bool { return len(snapshotIndexes(c.nodes[l].data)) > 0 }, eventually.Within(15*time.Second))

	f, h := (l+1)%3, (l+2)%3
	c.stop(f)
	for range 10 {
		v++
		c.write(l, v)
	}

	// Damage the stopped follower's log: cut it inside its pages.
	logFile := filepath.Join(c.nodes[f].data, "raft", "raft.db")
	if err := os.Truncate(logFile, int64(3*os.Getpagesize()+123)); err != nil {
		t.Fatal(err)
	}
	var damaged *cluster.DamagedStoreError
	if err := cluster.CheckStore(c.nodes[f].data); !errors.As(err, &damaged) {
		t.Fatalf("the truncated store is not reported damaged: %v", err)
	}

	// Started, it refuses: a non-zero exit, one structured line naming the
	// file and the command, no panic or goroutine dump.
	nd := c.start(f)
	var exitErr error
	select {
	case exitErr = <-nd.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the node with a damaged store kept running")
	}
	nd.cmd = nil
	logged, _ := os.ReadFile(nd.stderr)
	var ee *exec.ExitError
	if !errors.As(exitErr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want exit status 1", exitErr)
	}
	for _, want := range []string{logFile, "strata recover --data " + nd.data, "[ERROR]"} {
		if !bytes.Contains(logged, []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, logged)
		}
	}
	t.Logf("refused to start:\n%s", logged)
	if bytes.Contains(logged, []byte("panic")) || bytes.Contains(logged, []byte("goroutine ")) || bytes.Count(logged, []byte("\n")) > 2 {
		t.Errorf("output is not one clear line:\n%s", logged)
	}

	// recover moves the store aside (kept) and leaves an empty one.
	out, err := strataCmd("recover", "--data", nd.data).CombinedOutput()
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, out)
	}
	t.Logf("strata recover --data %s:\n%s", nd.data, out)
	aside, _ := filepath.Glob(filepath.Join(nd.data, "raft.damaged-*", "raft.db"))
	if len(aside) != 1 || !bytes.Contains(out, []byte(filepath.Dir(aside[0]))) {
		t.Fatalf("recover output:\n%s\nmoved-aside logs: %v", out, aside)
	}
	if st, err := os.Stat(aside[0]); err != nil || st.Size() != int64(3*os.Getpagesize()+123) {
		t.Fatalf("the damaged log was not kept as it was: %v", err)
	}

	// Restarted, it rejoins: the leader finds its log empty and installs
	// its snapshot.
	c.start(f)
	eventually.True(t, "the leader's snapshot on the recovered node", func() bool {
		return len(snapshotIndexes(nd.data)) > 0
	}, eventually.Within(25*time.Second))
	// With the other follower stopped, a write is acknowledged only once the
	// recovered node holds it (and, by Raft's log matching, all before it).
	c.stop(h)
	v++
	c.write(l, v)
	c.stop(l)
	c.stop(f)

	leaderOut, leaderDigest := replay(t, c.nodes[l].data)
	recOut, recDigest := replay(t, nd.data)
	if leaderDigest == "" || recDigest != leaderDigest {
		t.Fatalf("state digests differ:\nleader:\n%s\nrecovered:\n%s", leaderOut, recOut)
	}
	t.Logf("log replay of the recovered node:\n%s", recOut)
	if !strings.Contains(recOut, "restored snapshot") {
		t.Errorf("the recovered node's state did not come from a snapshot:\n%s", recOut)
	}
}

// The offline log tools name a damaged store instead of reading it (bbolt
// faults on a truncated file).
func TestLogToolsRefuseDamagedStore(t *testing.T) {
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, "raft", "raft.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 300; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte("x"), 200)})
	}
	if err := store.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	store.Close()
	if err := os.Truncate(path, int64(3*os.Getpagesize()+123)); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"dump", "replay"} {
		code, _, errOut := capture(t, "log", verb, "--data", dataDir)
		if code != 1 || !strings.Contains(errOut, path) || !strings.Contains(errOut, "strata recover --data "+dataDir) {
			t.Errorf("log %s: exit %d, %s", verb, code, errOut)
		}
	}
}
