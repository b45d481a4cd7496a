package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/audit"
	"strata/commands"
	"strata/internal/eventually"
	"strata/storage/deep/s3test"
)

// With S3 deep storage, what a control node trims from its Raft log is
// archived in the bucket (a real S3 server), under the node's id, and
// replayed from there: the first command's state is rebuilt after its entry
// has left the log.
func TestAuditArchiveInS3(t *testing.T) {
	srv := s3test.Start(t)
	extra := srv.Properties("strata")
	extra["svc.raft.snapshotThreshold"] = "8"
	extra["svc.raft.snapshotInterval"] = "100ms"
	extra["svc.raft.trailingLogs"] = "2"
	c := startCluster(t, 1, extra)
	l := c.leader()
	for v := 1; v <= 20; v++ {
		if code, _, body := do(t, "POST", c.url(l)+"/svc/coordinator/v1/config", "application/json", fmt.Sprintf(`{"maxSegmentsToMove":%d}`, v), nil); code != 200 {
			t.Fatalf("write %d: %d %s", v, code, body)
		}
	}
	eventually.True(t, "archived chunks in the bucket", func() bool {
		for k := range srv.Objects(t) {
			if strings.HasPrefix(k, "strata/_audit/n1/log/") {
				return true
			}
		}
		return false
	}, slow)
	if chunks, _ := filepath.Glob(filepath.Join(c.props[l].String("svc.data.dir"), "audit-archive", "log", "*")); len(chunks) > 0 {
		t.Errorf("chunks written to the data directory too: %v", chunks)
	}
	h := c.procs[l].Node.History()
	if first, err := h.Log().FirstIndex(); err != nil || first != 1 {
		t.Fatalf("history starts at %d (%v), want 1", first, err)
	}
	// The first command, now only in the bucket.
	var idx uint64
	err := h.Log().Scan(1, 20, func(e audit.Entry) error {
		if e.Type == raft.LogCommand && idx == 0 {
			if env, _, _ := commands.Decode(e.Data); env.Type == (commands.SetCoordinatorConfig{}).CommandType() {
				idx = e.Index
			}
		}
		return nil
	})
	if err != nil || idx == 0 {
		t.Fatalf("first config command: index %d, %v", idx, err)
	}
	st, _, err := h.StateAt(idx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CoordinatorConfig().MaxSegmentsToMove; got != 1 {
		t.Fatalf("state at %d: maxSegmentsToMove %d, want 1", idx, got)
	}
	if _, err := os.Stat(filepath.Join(c.props[l].String("svc.data.dir"), "audit-archive", "manifest.json")); err != nil {
		t.Errorf("no local manifest: %v", err)
	}
}
