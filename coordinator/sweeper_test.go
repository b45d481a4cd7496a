package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/ingest"
	"strata/internal/eventually"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
)

func startNode(t *testing.T) *cluster.Node {
	t.Helper()
	var n *cluster.Node
	var err error
	// A port picked free can be taken by a parallel test before Raft binds it: retry.
	for attempt := 0; attempt < 10; attempt++ {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		n, err = cluster.Start(cluster.Config{ID: "solo", RaftAddr: addr, HTTPURL: "http://127.0.0.1:1", DataDir: t.TempDir(),
			HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown() })
	eventually.True(t, "a leader", n.IsLeader)
	return n
}

func propose(t *testing.T, n *cluster.Node, cmd commands.Command) any {
	t.Helper()
	v, err := n.Propose(cmd, commands.Audit{Author: "test"}, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", cmd.CommandType(), err)
	}
	return v
}

// killDay publishes a segment of ds for 2024-01-01 with loadSpec ls, marks
// it unused and kills it, which queues ls for deletion. Published without
// OwnFiles, as entries from before that check were.
func killDay(t *testing.T, n *cluster.Node, ds, ls string) {
	t.Helper()
	publish(t, n, ds, ls)
	propose(t, n, commands.MarkSegments{DataSource: ds, All: true})
	propose(t, n, commands.KillSegments{DataSource: ds, Interval: "2024-01-01/2024-01-02", TaskID: "kill"})
}

func publish(t *testing.T, n *cluster.Node, ds, ls string) {
	t.Helper()
	iv, _ := interval.Parse("2024-01-01/2024-01-02")
	seg := &segmeta.DataSegment{DataSource: ds, Interval: iv, Version: "v1", LoadSpec: segmeta.RawJSON(ls), ShardSpec: segmeta.NumberedShard(0, 1), Size: 1}
	propose(t, n, commands.PublishSegments{DataSource: ds, Segments: fsm.EncodeSegments([]*segmeta.DataSegment{seg}), Count: 1})
}

// countingRemover counts the attempts at each load spec.
type countingRemover struct {
	FileRemover
	mu       sync.Mutex
	attempts map[string]int
}

func (c *countingRemover) RemoveLoadSpec(ctx context.Context, ls string) error {
	c.mu.Lock()
	c.attempts[ls]++
	c.mu.Unlock()
	return c.FileRemover.RemoveLoadSpec(ctx, ls)
}

func putFile(t *testing.T, st deep.DeepStorage, key string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "seg")
	os.WriteFile(src, []byte("segment bytes"), 0o644)
	ls, err := st.Put(context.Background(), key, src)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ls)
	return string(b)
}

// A load spec outside deep storage cannot be deleted: the sweeper retries it
// with exponential backoff up to MaxBackoff (not every tick), logs it once,
// and goes on deleting the other files. The clock is injected, so the test
// sweeps a minute of ticks without waiting.
func TestSweeperBacksOffAndLogsOnce(t *testing.T) {
	n := startNode(t)
	st, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := `{"type":"local","path":"/elsewhere/wiki/index.seg"}`
	killDay(t, n, "ghost", outside)
	var logs bytes.Buffer
	clock := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rm := &countingRemover{FileRemover: ingest.DeepRemover{Storage: st}, attempts: map[string]int{}}
	sw := &Sweeper{Node: n, Storage: rm, Interval: time.Second, MaxBackoff: 8 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs}), Now: func() time.Time { return clock }}
	start := clock
	for i := 0; i <= 60; i++ {
		clock = start.Add(time.Duration(i) * time.Second)
		if i == 20 {
			// A deletable file queued meanwhile is not held up by the failing one.
			killDay(t, n, "wiki", putFile(t, st, "wiki/d1/v1/0"))
		}
		sw.SweepOnce(context.Background())
	}
	// Attempts at 0, 1, 3, 7, then every 8 s: 15, 23, 31, 39, 47, 55.
	if got := rm.attempts[outside]; got != 10 {
		t.Errorf("%d attempts at the undeletable file over 60 ticks, want 10 (backoff 1, 2, 4, 8, 8, ...)", got)
	}
	if c := strings.Count(logs.String(), "cannot delete segment files"); c != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", c, logs.String())
	}
	var pending []string
	n.FSM().Read(func(s *fsm.State) { pending = s.PendingFileDeletions() })
	if len(pending) != 1 || pending[0] != outside {
		t.Errorf("pending %v, want only the undeletable file", pending)
	}
}

// A queued file that another segment (used or unused) still names is kept
// and taken off the queue; the killed segment's own file is deleted.
func TestSweeperKeepsFileAnotherSegmentNames(t *testing.T) {
	n := startNode(t)
	st, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shared := putFile(t, st, "wiki/d1/v1/0")
	own := putFile(t, st, "evil2/d1/v1/0")
	publish(t, n, "wiki", shared)
	killDay(t, n, "evil", shared) // state from before OwnFiles: two segments, one file
	killDay(t, n, "evil2", own)
	sw := &Sweeper{Node: n, Storage: ingest.DeepRemover{Storage: st}}
	if got := sw.SweepOnce(context.Background()); got != 2 {
		t.Fatalf("acknowledged %d, want 2", got)
	}
	var sl, ol deep.LoadSpec
	json.Unmarshal([]byte(shared), &sl)
	json.Unmarshal([]byte(own), &ol)
	if _, err := os.Stat(sl.Path); err != nil {
		t.Fatalf("the file wiki's segment names was deleted: %v", err)
	}
	if _, err := os.Stat(ol.Path); !os.IsNotExist(err) {
		t.Fatalf("the killed segment's own file is still there: %v", err)
	}
	n.FSM().Read(func(s *fsm.State) {
		if p := s.PendingFileDeletions(); len(p) != 0 {
			t.Fatalf("pending %v", p)
		}
	})
}
