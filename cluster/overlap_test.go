package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/fsm"
	"strata/internal/eventually"
)

// gatedLog wraps a node's bbolt log so a test can hold or fail its writes.
type gatedLog struct {
	raft.LogStore

	mu      sync.Mutex
	hold    chan struct{} // non-nil: StoreLogs waits until it is closed
	fail    error         // non-nil: StoreLogs fails with it (once)
	entered chan struct{} // signalled when a held or failed StoreLogs starts
}

func (g *gatedLog) StoreLogs(logs []*raft.Log) error {
	g.mu.Lock()
	hold, fail := g.hold, g.fail
	g.fail = nil
	g.mu.Unlock()
	if hold != nil || fail != nil {
		select {
		case g.entered <- struct{}{}:
		default:
		}
	}
	if fail != nil {
		return fail
	}
	if hold != nil {
		<-hold
	}
	return g.LogStore.StoreLogs(logs)
}

func (g *gatedLog) StoreLog(l *raft.Log) error { return g.StoreLogs([]*raft.Log{l}) }

// holdWrites makes StoreLogs wait until release.
func (g *gatedLog) holdWrites() {
	g.mu.Lock()
	g.hold = make(chan struct{})
	g.mu.Unlock()
}

// failNext makes the next StoreLogs fail.
func (g *gatedLog) failNext(err error) {
	g.mu.Lock()
	g.fail = err
	g.mu.Unlock()
}

// release lets held writes (and later ones) through.
func (g *gatedLog) release() {
	g.mu.Lock()
	if g.hold != nil {
		close(g.hold)
		g.hold = nil
	}
	g.mu.Unlock()
}

type testNodes struct {
	nodes []*Node
	gates []*gatedLog
}

// startNodes starts three control nodes with real TCP transports and bbolt
// files on loopback.
func startNodes(t *testing.T) *testNodes {
	t.Helper()
	var addrs []string
	for i := 0; i < 3; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		l.Close()
	}
	var peers []Peer
	for i, a := range addrs {
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i+1), RaftAddr: a, HTTPURL: "http://" + a})
	}
	tn := &testNodes{}
	for i := range addrs {
		g := &gatedLog{entered: make(chan struct{}, 1)}
		cfg := Config{
			ID: peers[i].ID, RaftAddr: addrs[i], HTTPURL: peers[i].HTTPURL, DataDir: t.TempDir(), Peers: peers,
			// Generous timeouts: the race detector on 2 busy cores.
			HeartbeatTimeout: time.Second, ElectionTimeout: time.Second, LeaderLeaseTimeout: 500 * time.Millisecond,
			wrapLog: func(s raft.LogStore) raft.LogStore { g.LogStore = s; return g },
		}
		n, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tn.nodes = append(tn.nodes, n)
		tn.gates = append(tn.gates, g)
	}
	t.Cleanup(func() {
		for i, n := range tn.nodes {
			tn.gates[i].release()
			n.Shutdown()
		}
	})
	return tn
}

func (tn *testNodes) leader(t *testing.T) int {
	t.Helper()
	leader := -1
	eventually.True(t, "a leader", func() bool {
		for i, n := range tn.nodes {
			if n.IsLeader() {
				leader = i
				return true
			}
		}
		return false
	}, eventually.Within(15*time.Second))
	return leader
}

func setMaxSegmentsToMove(v int32) commands.Command {
	return commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: &v}}
}

func maxSegmentsToMove(n *Node) int32 {
	var v int32
	n.FSM().Read(func(s *fsm.State) { v = s.CoordinatorConfig().MaxSegmentsToMove })
	return v
}

func propose(n *Node, v int32) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := n.Propose(setMaxSegmentsToMove(v), commands.Audit{Author: "test"}, 10*time.Second)
		done <- err
	}()
	return done
}

// waitLastIndex waits until node n's log holds index (durably: read from bbolt).
func waitLastIndex(t *testing.T, n *Node, index uint64) {
	t.Helper()
	var last uint64
	eventually.True(t, fmt.Sprintf("%s's log to hold index %d", n.ID(), index), func() bool {
		last, _ = n.logs.LastIndex()
		return last >= index
	}, eventually.Showing(func() string { return fmt.Sprintf("index %d", last) }))
}

// The leader replicates a new entry while its own write is still in flight, and
// the write is acknowledged only after the leader's write finishes.
func TestReplicationOverlapsLeaderWrite(t *testing.T) {
	tn := startNodes(t)
	li := tn.leader(t)
	leader := tn.nodes[li]
	tn.gates[li].holdWrites()
	next := leader.raft.LastIndex() + 1
	done := propose(leader, 11)
	<-tn.gates[li].entered

	for i, n := range tn.nodes {
		if i != li {
			waitLastIndex(t, n, next)
		}
	}
	if last, _ := leader.logs.LastIndex(); last >= next {
		t.Fatalf("leader's held write is already in its log (index %d)", last)
	}
	select {
	case err := <-done:
		t.Fatalf("write acknowledged while the leader's own write was held (err %v)", err)
	default:
	}
	tn.gates[li].release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := maxSegmentsToMove(leader); got != 11 {
		t.Fatalf("leader state %d, want 11", got)
	}
}

// A failed local write after replication started: the proposer gets an error,
// the leader steps down, and the cluster goes on with one history on every node.
func TestLeaderWriteFailureAfterReplication(t *testing.T) {
	tn := startNodes(t)
	li := tn.leader(t)
	leader := tn.nodes[li]
	if _, err := leader.Propose(setMaxSegmentsToMove(1), commands.Audit{}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	tn.gates[li].failNext(errors.New("disk on fire"))
	if err := <-propose(leader, 33); err == nil {
		t.Fatal("write succeeded although the leader could not store it")
	}

	// Whoever leads next, writes succeed and every node converges on the same
	// state and applied index.
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		l := tn.nodes[tn.leader(t)]
		if _, err = l.Propose(setMaxSegmentsToMove(44), commands.Audit{}, 10*time.Second); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := tn.nodes[tn.leader(t)].FSM().LastIndex()
	for i := 0; i < 3; i++ {
		eventually.True(t, fmt.Sprintf("node %d to apply index %d", i, want), func() bool { return tn.nodes[i].FSM().LastIndex() >= want })
		if got := maxSegmentsToMove(tn.nodes[i]); got != 44 {
			t.Fatalf("node %d: state %d, want 44", i, got)
		}
	}
	var first []byte
	for i, n := range tn.nodes {
		snap := snapshotBytes(t, n)
		if i == 0 {
			first = snap
		} else if string(snap) != string(first) {
			t.Fatalf("node %d's snapshot differs from node 0's", i)
		}
	}
}

type memSink struct {
	bytes.Buffer
}

func (*memSink) ID() string    { return "mem" }
func (*memSink) Cancel() error { return nil }
func (*memSink) Close() error  { return nil }

func snapshotBytes(t *testing.T, n *Node) []byte {
	t.Helper()
	snap, err := n.FSM().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	return sink.Bytes()
}

// The patched raft stages through this store only if it is a raft.LogStager.
var _ raft.LogStager = (*stagingStore)(nil)

func TestStagingStoreServesStagedBatch(t *testing.T) {
	inner := raft.NewInmemStore()
	s := newStagingStore(inner)
	batch := []*raft.Log{{Index: 1, Term: 1, Data: []byte("a")}, {Index: 2, Term: 1, Data: []byte("b")}}
	var out raft.Log
	if err := s.GetLog(1, &out); err == nil {
		t.Fatal("index 1 found before staging")
	}
	s.StageLogs(batch)
	for _, l := range batch {
		if err := s.GetLog(l.Index, &out); err != nil || string(out.Data) != string(l.Data) {
			t.Fatalf("staged index %d: %v %q", l.Index, err, out.Data)
		}
	}
	if err := s.GetLog(3, &out); err == nil {
		t.Fatal("index 3 found")
	}
	s.DropStaged(batch)
	if err := s.GetLog(1, &out); err == nil {
		t.Fatal("dropped index 1 still found")
	}
	s.StageLogs(batch)
	if err := s.StoreLogs(batch); err != nil {
		t.Fatal(err)
	}
	if s.staged != nil {
		t.Fatal("batch still staged after StoreLogs")
	}
	if err := s.GetLog(2, &out); err != nil || string(out.Data) != "b" {
		t.Fatalf("stored index 2: %v %q", err, out.Data)
	}
}
