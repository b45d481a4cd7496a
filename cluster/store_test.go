package cluster

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// BenchmarkStoreLogs measures one fsync'd append of the Raft log store (the cost
// every proposal pays on the leader and again on a follower) for a single entry
// and for a batch, with entries the size of a coordinator config change.
func BenchmarkStoreLogs(b *testing.B) {
	for _, batch := range []int{1, 16} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			store, err := openLogStore(filepath.Join(b.TempDir(), "raft.db"), false)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			data := make([]byte, 180)
			logs := make([]*raft.Log, batch)
			index := uint64(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range logs {
					index++
					logs[j] = &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
				}
				if err := store.StoreLogs(logs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/entry")
		})
	}
}

func TestOpenLogStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	store, err := openLogStore(path, false)
	if err != nil {
		t.Fatal(err)
	}
	logs := []*raft.Log{{Index: 1, Term: 1, Data: []byte("a")}, {Index: 2, Term: 1, Data: []byte("b")}}
	if err := store.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := store.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	store.Close()
	// Reopened, the entries and the stable value are there (the freelist, not
	// synced, is rebuilt).
	store, err = openLogStore(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var got raft.Log
	if err := store.GetLog(2, &got); err != nil || string(got.Data) != "b" {
		t.Fatalf("GetLog(2) = %q, %v", got.Data, err)
	}
	if last, _ := store.LastIndex(); last != 2 {
		t.Fatalf("LastIndex = %d, want 2", last)
	}
	if term, err := store.GetUint64([]byte("CurrentTerm")); err != nil || term != 7 {
		t.Fatalf("CurrentTerm = %d, %v", term, err)
	}
}

// The first election of a node is logged at info, a later one (a leader was
// lost) as a warning.
func TestStartupElectionQuiet(t *testing.T) {
	var buf bytes.Buffer
	l := startupElectionQuiet{hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})}
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", raft.ServerAddress(""), "last-leader-id", raft.ServerID(""))
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", raft.ServerAddress("127.0.0.1:8300"), "last-leader-id", raft.ServerID("a"))
	l.Warn("something else")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "[INFO]") || !strings.Contains(lines[1], "[WARN]") || !strings.Contains(lines[2], "[WARN]") {
		t.Fatalf("levels:\n%s", buf.String())
	}
}
