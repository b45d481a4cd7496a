package process

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/fsm"
	"strata/ingest"
	"strata/internal/eventually"
	"strata/storage/deep"
	"strata/storage/deep/s3test"
)

// The sweeper on S3 deep storage (a real S3 server): while the bucket
// refuses deletes (a policy without s3:DeleteObject) a killed segment's
// object stays and its deletion stays queued, never acknowledged; once
// deletes are allowed the object goes and the queue drains, and the object
// of the segment that was not killed stays throughout.
func TestSweeperOnS3(t *testing.T) {
	srv := s3test.Start(t)
	ports := freePorts(t, 2)
	p := nodeProps("solo", ports[0], ports[1], t.TempDir(), "")
	for k, v := range srv.Properties("sweep") {
		p.Set(k, v)
	}
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
	var segs, keys []string
	for day := 1; day <= 2; day++ {
		start, end := fmt.Sprintf("2024-01-0%dT00:00:00.000Z", day), fmt.Sprintf("2024-01-0%dT00:00:00.000Z", day+1)
		ls, err := store.Put(context.Background(), deep.SegmentKey("wiki", start, end, "v1", 0), src)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ls.Key)
		lsJSON, _ := json.Marshal(ls)
		segs = append(segs, fmt.Sprintf(`{"dataSource":"wiki","interval":"%s/%s","version":"v1","loadSpec":%s,"dimensions":"","metrics":"","shardSpec":{"type":"numbered","partitionNum":0,"partitions":1},"binaryVersion":9,"size":13}`, start, end, lsJSON))
	}
	url := "http://" + ports[0]
	if code, _, body := do(t, "POST", url+"/svc-internal/v1/segments/publish", "application/json", `{"dataSource":"wiki","segments":[`+strings.Join(segs, ",")+`]}`, nil); code != 200 {
		t.Fatalf("publish: %d %s", code, body)
	}
	srv.Deny("DELETE", true)
	if code, _, body := do(t, "POST", url+"/svc/coordinator/v1/datasources/wiki/markUnused", "application/json", `{"interval":"2024-01-01/2024-01-02"}`, nil); code != 200 {
		t.Fatalf("markUnused: %d %s", code, body)
	}
	if code, _, body := do(t, "DELETE", url+"/svc/coordinator/v1/datasources/wiki/intervals/2024-01-01_2024-01-05", "", "", nil); code != 200 {
		t.Fatalf("kill: %d %s", code, body)
	}
	pending := func() (n int) {
		proc.Node.FSM().Read(func(s *fsm.State) { n = len(s.PendingFileDeletions()) })
		return n
	}
	refused := func() (n int) {
		for _, r := range srv.Requests() {
			if r.Method == "DELETE" && r.Status == 403 {
				n++
			}
		}
		return n
	}
	// The sweeper tries, S3 refuses: the deletion stays queued and the object stays.
	eventually.True(t, "the sweeper's delete refused", func() bool { return refused() > 0 }, slow)
	if n := pending(); n != 1 {
		t.Fatalf("%d deletions pending after a refused delete, want 1", n)
	}
	if got := slices.Sorted(maps.Keys(srv.Objects(t))); !slices.Equal(got, keys) {
		t.Fatalf("objects after a refused delete: %v, want %v", got, keys)
	}
	srv.Deny("DELETE", false)
	var objects []string
	eventually.True(t, "the killed segment's object deleted and the queue drained", func() bool {
		objects = slices.Sorted(maps.Keys(srv.Objects(t)))
		return pending() == 0 && slices.Equal(objects, keys[1:])
	}, slow, eventually.Showing(func() string { return fmt.Sprintf("%d pending, objects %v", pending(), objects) }))
}
