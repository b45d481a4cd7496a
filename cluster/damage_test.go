package cluster

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/internal/eventually"
)

// sampleLog returns the bytes of a real bbolt log store, large enough to have
// branch pages and overflow pages (a 9 KB entry), with the stable store's keys.
var sampleLog = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "strata-samplelog")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, logFileName)
	store, err := openLogStore(path, true)
	if err != nil {
		return nil, err
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 600; i++ {
		data := []byte(strings.Repeat("x", 100))
		if i == 300 {
			data = []byte(strings.Repeat("y", 9000))
		}
		logs = append(logs, &raft.Log{Index: i, Term: 3, Type: raft.LogCommand, Data: data})
	}
	if err := store.StoreLogs(logs); err != nil {
		store.Close()
		return nil, err
	}
	// Trim the head as a snapshot would: the freed pages are reused later.
	if err := store.DeleteRange(1, 100); err != nil {
		store.Close()
		return nil, err
	}
	for k, v := range map[string]uint64{"CurrentTerm": 3, "LastVoteTerm": 3} {
		if err := store.SetUint64([]byte(k), v); err != nil {
			store.Close()
			return nil, err
		}
	}
	if err := store.Set([]byte("LastVoteCand"), []byte("n2")); err != nil {
		store.Close()
		return nil, err
	}
	if err := store.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

func sample(t testing.TB) []byte {
	t.Helper()
	b, err := sampleLog()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// usedBytes is where the sample's pages end (its high-water mark): bytes past
// it are preallocated and unused.
func usedBytes(t testing.TB, b []byte) int {
	t.Helper()
	c := &boltChecker{f: bytesReaderAt(b), size: int64(len(b)), reachable: map[uint64]bool{}}
	m, err := c.meta()
	if err != nil {
		t.Fatal(err)
	}
	return int(m.hwm * m.pageSize)
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, errors.New("EOF")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("EOF")
	}
	return n, nil
}

// openAndRead opens a log file as a node does and, if that succeeds, reads
// every entry and the stable store, as Raft does when it starts. It must
// return (an error or nothing), never panic or fault.
func openAndRead(t testing.TB, path string) error {
	store, err := openLogStore(path, true)
	if err != nil {
		return err
	}
	defer store.Close()
	first, _ := store.FirstIndex()
	last, _ := store.LastIndex()
	for i := first; i <= last && i < first+2000; i++ {
		var l raft.Log
		store.GetLog(i, &l)
	}
	for _, k := range []string{"CurrentTerm", "LastVoteTerm"} {
		store.GetUint64([]byte(k))
	}
	store.Get([]byte("LastVoteCand"))
	return nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// A node whose log file was truncated refuses to start with an error that
// names the file and the command that recovers it (bbolt panicked on it).
func TestStartRefusesTruncatedLog(t *testing.T) {
	b := sample(t)
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, raftDirName, logFileName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:usedBytes(t, b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	n, err := Start(Config{ID: "n1", RaftAddr: addr, HTTPURL: "http://" + addr, DataDir: dataDir})
	if err == nil {
		n.Shutdown()
		t.Fatal("started on a truncated log")
	}
	var damaged *DamagedStoreError
	if !errors.As(err, &damaged) || damaged.File != path || damaged.DataDir != dataDir {
		t.Fatalf("error %v (%T), want a DamagedStoreError for %s", err, err, path)
	}
	msg := err.Error()
	for _, want := range []string{path, "truncated", "strata recover --data " + dataDir} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %s", msg)
	}
}

// Truncated anywhere, a log file gives an error or (cut only in its unused,
// preallocated tail) opens; it never panics or faults.
func TestTruncatedLogNeverPanics(t *testing.T) {
	b := sample(t)
	used := usedBytes(t, b)
	ps := os.Getpagesize()
	for _, off := range []int{1, 100, 1023, 1024, ps - 1, ps, ps + 1, 2*ps - 1, 2 * ps, 3 * ps, 4*ps + 7, used / 3, used / 2, used - ps, used - 1, used, len(b)} {
		path := filepath.Join(t.TempDir(), logFileName)
		if err := os.WriteFile(path, b[:off], 0o644); err != nil {
			t.Fatal(err)
		}
		err := openAndRead(t, path)
		if off < used {
			var damaged *DamagedStoreError
			if !errors.As(err, &damaged) || damaged.File != path {
				t.Errorf("truncated at %d of %d used bytes: got %v, want a DamagedStoreError", off, used, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("cut at %d, past the %d used bytes: %v", off, used, err)
		}
	}
	// An empty file (truncated to nothing) would be initialized as a new store.
	path := filepath.Join(t.TempDir(), logFileName)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := openAndRead(t, path); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
}

// FuzzOpenStore damages a real log file (a truncation and up to two byte
// changes) and opens it as a node does: an error or a working store, never
// a panic or a fault.
func FuzzOpenStore(f *testing.F) {
	b := sample(f)
	used := usedBytes(f, b)
	ps := os.Getpagesize()
	f.Add(uint32(len(b)), uint32(0), byte(0), uint32(0), byte(0))
	f.Add(uint32(used/2), uint32(0), byte(0), uint32(0), byte(0))
	f.Add(uint32(len(b)), uint32(2*ps), byte(1), uint32(0), byte(0))         // a page id
	f.Add(uint32(len(b)), uint32(3*ps+8), byte(3), uint32(0), byte(0))       // page flags
	f.Add(uint32(len(b)), uint32(3*ps+10), byte(0x40), uint32(0), byte(0))   // element count
	f.Add(uint32(len(b)), uint32(4*ps+20), byte(0x10), uint32(0), byte(0))   // element position
	f.Add(uint32(len(b)), uint32(16+40), byte(7), uint32(ps+16+40), byte(7)) // both metas' high-water marks
	f.Fuzz(func(t *testing.T, size uint32, off1 uint32, x1 byte, off2 uint32, x2 byte) {
		d := append([]byte(nil), b[:min(int(size), len(b))]...)
		if len(d) > 0 {
			d[int(off1)%len(d)] ^= x1
			d[int(off2)%len(d)] ^= x2
		}
		path := filepath.Join(t.TempDir(), logFileName)
		if err := os.WriteFile(path, d, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := openAndRead(t, path); err != nil {
			var damaged *DamagedStoreError
			if !errors.As(err, &damaged) || damaged.File != path {
				t.Fatalf("error %v (%T), want a DamagedStoreError for %s", err, err, path)
			}
		}
	})
}

// runNode starts a single-node cluster in dataDir, applies a few commands and
// takes a snapshot, leaving a real log and snapshot store.
func runNode(t *testing.T, dataDir string) {
	t.Helper()
	addr := freeAddr(t)
	n, err := Start(Config{ID: "n1", RaftAddr: addr, HTTPURL: "http://" + addr, DataDir: dataDir,
		HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	eventually.True(t, "a leader", n.IsLeader)
	for v := int32(1); v <= 5; v++ {
		if _, err := n.Propose(setMaxSegmentsToMove(v), commands.Audit{Author: "test"}, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
}

// A damaged snapshot is refused by name too (Raft would have skipped it, or
// failed with "failed to load any existing snapshots").
func TestStartRefusesDamagedSnapshot(t *testing.T) {
	dataDir := t.TempDir()
	runNode(t, dataDir)
	states, _ := filepath.Glob(filepath.Join(dataDir, raftDirName, snapDirName, "*", snapStateBin))
	if len(states) != 1 {
		t.Fatalf("snapshots: %v", states)
	}
	st, err := os.Stat(states[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(states[0], st.Size()-1); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	n, err := Start(Config{ID: "n1", RaftAddr: addr, HTTPURL: "http://" + addr, DataDir: dataDir})
	if err == nil {
		n.Shutdown()
		t.Fatal("started on a damaged snapshot")
	}
	var damaged *DamagedStoreError
	if !errors.As(err, &damaged) || damaged.File != states[0] || !strings.Contains(err.Error(), "strata recover --data "+dataDir) {
		t.Fatalf("error %v, want a DamagedStoreError for %s", err, states[0])
	}

	// Unreadable metadata: Raft would silently fall back to an older snapshot.
	metas, _ := filepath.Glob(filepath.Join(dataDir, raftDirName, snapDirName, "*", snapMetaName))
	if err := os.WriteFile(metas[0], []byte(`{"Version":1,`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckStore(dataDir); !errors.As(err, &damaged) || damaged.File != metas[0] {
		t.Fatalf("CheckStore: %v, want a DamagedStoreError for %s", err, metas[0])
	}
}

// Recover moves a damaged store aside (keeping it) and leaves an empty one
// marked to wait for the leader; a sound store is left alone.
func TestRecoverMovesStoreAside(t *testing.T) {
	dataDir := t.TempDir()
	runNode(t, dataDir)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := Recover(dataDir, false, now); !errors.Is(err, ErrStoreNotDamaged) {
		t.Fatalf("Recover of a sound store: %v", err)
	}
	path := filepath.Join(dataDir, raftDirName, logFileName)
	// A running node holds the log's lock: Recover refuses to move it.
	store, err := openLogStore(path, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Recover(dataDir, true, now)
	store.Close()
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("Recover of a store in use: %v", err)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:usedBytes(t, b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(dataDir, false, now)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dataDir, "raft.damaged-20260301T120000Z")
	if rec.MovedTo != want || rec.Damage == nil {
		t.Fatalf("Recover = %+v, want the store moved to %s", rec, want)
	}
	if kept, err := os.ReadFile(filepath.Join(want, logFileName)); err != nil || len(kept) != usedBytes(t, b)-1 {
		t.Fatalf("damaged log not kept: %d bytes, %v", len(kept), err)
	}
	if snaps, _ := filepath.Glob(filepath.Join(want, snapDirName, "*", snapStateBin)); len(snaps) != 1 {
		t.Fatalf("snapshots not kept: %v", snaps)
	}
	if _, err := os.Stat(filepath.Join(dataDir, raftDirName, rejoinMarker)); err != nil {
		t.Fatal(err)
	}
	if err := CheckStore(dataDir); err != nil {
		t.Fatalf("recovered store: %v", err)
	}

	// A single node has no leader to restore from.
	addr := freeAddr(t)
	if n, err := Start(Config{ID: "n1", RaftAddr: addr, HTTPURL: "http://" + addr, DataDir: dataDir}); err == nil {
		n.Shutdown()
		t.Fatal("a recovered single node started")
	} else if !strings.Contains(err.Error(), "no peer") {
		t.Fatalf("recovered single node: %v", err)
	}
	// A member waits for the leader instead of bootstrapping a configuration
	// of its own (it would campaign with an empty log).
	peers := []Peer{{ID: "n1", RaftAddr: addr, HTTPURL: "http://" + addr}, {ID: "n2", RaftAddr: freeAddr(t), HTTPURL: "http://127.0.0.1:1"}}
	n, err := Start(Config{ID: "n1", RaftAddr: addr, HTTPURL: "http://" + addr, DataDir: dataDir, Peers: peers})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil || len(cf.Configuration().Servers) != 0 {
		t.Fatalf("recovered node's configuration: %+v, %v", cf.Configuration(), err)
	}
	if last, _ := n.logs.LastIndex(); last != 0 {
		t.Fatalf("recovered node's log ends at %d", last)
	}
}
