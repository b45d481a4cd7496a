package process

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/fsm"
	"strata/ingest"
	"strata/internal/eventually"
	"strata/storage/deep"
)

// Kill deletes metadata first, then the leader's sweeper deletes the files and
// drains the queue; files of segments that were not killed stay.
func TestKillSweepsDeepStorage(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	p := nodeProps("solo", ports[0], ports[1], dir, "")
	proc, err := StartServer(p, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	eventually.True(t, "leadership", proc.Node.IsLeader, slow)
	store, err := ingest.DeepStorageFromProps(p)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "file")
	os.WriteFile(src, []byte("segment bytes"), 0o644)
	var segs []string
	var paths []string
	for day := 1; day <= 2; day++ {
		start, end := fmt.Sprintf("2024-01-0%dT00:00:00.000Z", day), fmt.Sprintf("2024-01-0%dT00:00:00.000Z", day+1)
		iv := start + "/" + end
		ls, err := store.Put(context.Background(), deep.SegmentKey("wiki", start, end, "v1", 0), src)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, ls.Path)
		lsJSON, _ := json.Marshal(ls)
		segs = append(segs, fmt.Sprintf(`{"dataSource":"wiki","interval":%q,"version":"v1","loadSpec":%s,"dimensions":"","metrics":"","shardSpec":{"type":"numbered","partitionNum":0,"partitions":1},"binaryVersion":9,"size":13}`, iv, lsJSON))
	}
	url := "http://" + ports[0]
	if code, _, body := do(t, "POST", url+"/svc-internal/v1/segments/publish", "application/json", `{"dataSource":"wiki","segments":[`+strings.Join(segs, ",")+`]}`, nil); code != 200 {
		t.Fatalf("publish: %d %s", code, body)
	}
	if code, _, body := do(t, "POST", url+"/svc/coordinator/v1/datasources/wiki/markUnused", "application/json", `{"interval":"2024-01-01/2024-01-02"}`, nil); code != 200 {
		t.Fatalf("markUnused: %d %s", code, body)
	}
	if code, _, body := do(t, "DELETE", url+"/svc/coordinator/v1/datasources/wiki/intervals/2024-01-01_2024-01-05", "", "", nil); code != 200 {
		t.Fatalf("kill: %d %s", code, body)
	}
	var pending int
	eventually.True(t, "the sweeper to delete the killed segment's file", func() bool {
		proc.Node.FSM().Read(func(s *fsm.State) { pending = len(s.PendingFileDeletions()) })
		_, err = os.Stat(paths[0])
		return pending == 0 && os.IsNotExist(err)
	}, eventually.Showing(func() string { return fmt.Sprintf("%d pending, stat %v", pending, err) }))
	if _, err := os.Stat(paths[1]); err != nil {
		t.Fatalf("file of a used segment was deleted: %v", err)
	}
}
