package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"strata/cluster/boltlog"
	"strata/commands"
	"strata/fsm"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/deep/s3test"
)

const day = int64(24 * time.Hour / time.Millisecond)

// t0 is the leader time of the first command; command i is stamped t0+i s.
var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// workload returns n commands of the kinds a cluster writes most: segment
// publishes, config changes, task submissions and their ends, and marks.
func workload(n int) []commands.Command {
	var out []commands.Command
	for i := 0; len(out) < n; i++ {
		start := int64(1704067200000) + int64(i)*day
		s := &segmeta.DataSegment{DataSource: "wiki", Interval: interval.Interval{Start: start, End: start + day}, Version: "v1",
			LoadSpec:   segmeta.RawJSON(fmt.Sprintf(`{"type":"local","path":"/deep/wiki/%d/index.seg"}`, i)),
			Dimensions: []string{"channel", "page"}, Metrics: []string{"count"}, ShardSpec: segmeta.NumberedShard(0, 1), Size: 1000}
		id := fmt.Sprintf("task_%d", i)
		moves := int32(i)
		payload, _ := json.Marshal(map[string]any{"type": "noop", "id": id,
			"ioConfig": map[string]any{"consumerProperties": map[string]string{"bootstrap.servers": "k:9092", "sasl.jaas.config": "secret-" + id}}})
		out = append(out,
			commands.PublishSegments{DataSource: "wiki", Segments: fsm.EncodeSegments([]*segmeta.DataSegment{s}), Count: 1},
			commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: &moves}},
			commands.SubmitTask{ID: id, Type: "noop", DataSource: "wiki", Payload: payload},
			commands.TaskStatusUpdate{ID: id, Status: commands.TaskSuccess},
		)
		if i%5 == 4 {
			out = append(out, commands.MarkSegments{DataSource: "wiki", Used: false, IDs: []string{s.ID().String()}})
		}
	}
	return out[:n]
}

// entries encodes cmds as Raft entries after a bootstrap configuration at
// index 1 (as a real cluster's log starts).
func entries(t testing.TB, cmds []commands.Command) []*raft.Log {
	logs := []*raft.Log{{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("cfg")}}
	for i, c := range cmds {
		ms := t0.Add(time.Duration(i) * time.Second).UnixMilli()
		data, err := commands.Encode(c, ms, commands.Audit{Author: "tester", IP: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, &raft.Log{Index: uint64(i + 2), Term: 2, Type: raft.LogCommand, Data: data, AppendedAt: time.UnixMilli(ms).UTC()})
	}
	return logs
}

// node is a stopped node's stores: a real bbolt log and file snapshots.
type node struct {
	dir   string
	store *boltlog.Store
	snaps *raft.FileSnapshotStore
	logs  []*raft.Log
}

func newNode(t testing.TB, n int) *node {
	dir := t.TempDir()
	raftDir := filepath.Join(dir, "raft")
	os.MkdirAll(raftDir, 0o755)
	// The store a running node's Raft writes and its audit replays read.
	store, err := boltlog.Open(filepath.Join(raftDir, "raft.db"), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	snaps, err := raft.NewFileSnapshotStoreWithLogger(raftDir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	nd := &node{dir: dir, store: store, snaps: snaps, logs: entries(t, workload(n))}
	if err := store.StoreLogs(nd.logs); err != nil {
		t.Fatal(err)
	}
	return nd
}

// stateAfter applies the node's first index entries to a fresh FSM.
func (nd *node) stateAfter(index uint64) *fsm.FSM {
	f := fsm.New(nil)
	for _, l := range nd.logs[:index] {
		f.Apply(l)
	}
	return f
}

// snapshot writes a snapshot of the state after index, as Raft would.
func (nd *node) snapshot(t testing.TB, index uint64) {
	f := nd.stateAfter(index)
	sink, err := nd.snaps.Create(raft.SnapshotVersionMax, index, 2, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.Snapshot()
	if err := s.Persist(sink); err != nil {
		t.Fatal(err)
	}
}

func digestFSM(t testing.TB, f *fsm.FSM, index uint64) Digest {
	var d Digest
	var err error
	f.Read(func(s *fsm.State) { d, err = DigestOf(s, index) })
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func digestAt(t testing.TB, h *History, index uint64) Digest {
	t.Helper()
	s, at, err := h.StateAt(index)
	if err != nil {
		t.Fatalf("StateAt(%d): %v", index, err)
	}
	d, err := DigestOf(s, at)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestArchiveKeepsTrimmedHistory(t *testing.T) {
	nd := newNode(t, 300)
	last := uint64(len(nd.logs))
	nd.snapshot(t, 200)
	a, err := OpenArchive(ArchiveDir(nd.dir), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &History{Archive: a, Live: nd.store, Snaps: nd.snaps}
	// Raft's trim after the snapshot: entries 1..150 leave the live log.
	if err := a.Trim(nd.store, nd.snaps, 1, 150, 150, func() error { return nd.store.DeleteRange(1, 150) }); err != nil {
		t.Fatal(err)
	}
	if first, _ := nd.store.FirstIndex(); first != 151 {
		t.Fatalf("live log starts at %d, want 151", first)
	}
	if first, _ := h.Log().FirstIndex(); first != 1 {
		t.Fatalf("history starts at %d, want 1", first)
	}
	// Every entry, archived or live, reads back as written, in order.
	var got []Entry
	if err := h.Log().Scan(1, last, func(e Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != int(last) {
		t.Fatalf("scanned %d entries, want %d", len(got), last)
	}
	for i, e := range got {
		l := nd.logs[i]
		if e.Index != l.Index || e.Term != l.Term || e.Type != l.Type || !bytes.Equal(e.Data, l.Data) || !e.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("entry %d read back as %+v", l.Index, e)
		}
	}
	// The state at any index equals the state of a node that applied the
	// log up to it: from the empty state through the archive, from the
	// snapshot through the live log.
	for _, i := range []uint64{0, 1, 100, 150, 151, 200, 250, last} {
		if got, want := digestAt(t, h, i), digestFSM(t, nd.stateAfter(i), i); got.SHA256 != want.SHA256 {
			t.Fatalf("state at %d: digest %s, want %s (first difference: %s)", i, got.SHA256, want.SHA256, FirstDifference(got, want))
		}
	}
	// The snapshot was archived too: with the live one gone, replay to 250
	// starts from the archived copy.
	metas, _ := nd.snaps.List()
	os.RemoveAll(filepath.Join(nd.dir, "raft", "snapshots", metas[0].ID))
	if got, want := digestAt(t, h, 250), digestFSM(t, nd.stateAfter(250), 250); got.SHA256 != want.SHA256 {
		t.Fatalf("state at 250 from the archived snapshot differs")
	}
	// Stopped, the node's directory reads the same (audit.OpenDir's own
	// reader of the bbolt file).
	nd.store.Close()
	stopped, closeDir, err := OpenDir(nd.dir)
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := stopped.Log().FirstIndex(); first != 1 {
		t.Fatalf("stopped node's history starts at %d", first)
	}
	var n int
	if err := stopped.Log().Scan(1, last, func(e Entry) error {
		if l := nd.logs[n]; e.Index != l.Index || !bytes.Equal(e.Data, l.Data) {
			t.Fatalf("stopped node's entry %d read back as %d", l.Index, e.Index)
		}
		n++
		return nil
	}); err != nil || n != int(last) {
		t.Fatalf("stopped node's scan: %d entries, %v", n, err)
	}
	for _, i := range []uint64{100, 250, last} {
		if got, want := digestAt(t, stopped, i), digestFSM(t, nd.stateAfter(i), i); got.SHA256 != want.SHA256 {
			t.Fatalf("stopped node's state at %d differs", i)
		}
	}
	var l raft.Log
	if err := stopped.Live.GetLog(last+1, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog past the end: %v", err)
	}
	closeDir()
	if nd.store, err = boltlog.Open(filepath.Join(nd.dir, "raft", "raft.db"), nil, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nd.store.Close() })
	h.Live = nd.store

	// A damaged archived snapshot is an error naming it.
	snap := filepath.Join(a.Dir(), a.m.Snapshots[0].File)
	b, _ := os.ReadFile(snap)
	good := append([]byte(nil), b...)
	b[len(b)/2] ^= 1
	os.WriteFile(snap, b, 0o644)
	if _, _, err := h.StateAt(250); err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), snap) {
		t.Fatalf("StateAt over a damaged archived snapshot: %v", err)
	}
	os.WriteFile(snap, good, 0o644)
	// Times resolve to the last index at or before them.
	if i, err := h.IndexAt(t0.Add(99*time.Second + 500*time.Millisecond)); err != nil || i != 101 {
		t.Fatalf("IndexAt(command 99 + 0.5s) = %d, %v; want 101", i, err)
	}
	if i, err := h.ParseAt(t0.Add(-time.Hour).Format(time.RFC3339)); err != nil || i != 1 {
		t.Fatalf("ParseAt(before every command) = %d, %v; want 1 (the bootstrap configuration)", i, err)
	}
	for _, bad := range []string{"", "yesterday", fmt.Sprint(last + 1), "-3"} {
		if _, err := h.ParseAt(bad); !errors.Is(err, ErrBadAt) {
			t.Errorf("ParseAt(%q) = %v, want ErrBadAt", bad, err)
		}
	}
}

func TestArchiveDamageIsAnError(t *testing.T) {
	nd := newNode(t, 100)
	a, _ := OpenArchive(ArchiveDir(nd.dir), 0, nil)
	if err := a.Trim(nd.store, nil, 1, 60, 60, func() error { return nd.store.DeleteRange(1, 60) }); err != nil {
		t.Fatal(err)
	}
	h := &History{Archive: a, Live: nd.store}
	chunk := filepath.Join(a.Dir(), a.m.Chunks[0].File)
	b, _ := os.ReadFile(chunk)
	b[len(b)/2] ^= 0xff
	os.WriteFile(chunk, b, 0o644)
	_, _, err := h.StateAt(80)
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), chunk) {
		t.Fatalf("StateAt over a damaged chunk: %v; want an error naming the damaged file", err)
	}
	if err := h.Log().Scan(1, 10, func(Entry) error { return nil }); err == nil {
		t.Fatal("Scan over a damaged chunk succeeded")
	}
	// A damaged manifest stops the opening, naming it.
	os.WriteFile(filepath.Join(a.Dir(), manifestFile), []byte(`{"format":`), 0o644)
	if _, err := OpenArchive(a.Dir(), 0, nil); err == nil || !strings.Contains(err.Error(), "damaged manifest") {
		t.Fatalf("OpenArchive(damaged manifest) = %v", err)
	}
}

func TestArchiveRetention(t *testing.T) {
	nd := newNode(t, 300)
	a, _ := OpenArchive(ArchiveDir(nd.dir), time.Hour, nil)
	// Command i is stamped t0+i s: an hour after command 150, the chunk of
	// 1..100 is past retention, 101..200 (archived later) is not.
	a.now = func() time.Time { return t0.Add(150*time.Second + time.Hour) }
	trim := func(first, last uint64) {
		t.Helper()
		if err := a.Trim(nd.store, nd.snaps, first, last, last, func() error { return nd.store.DeleteRange(first, last) }); err != nil {
			t.Fatal(err)
		}
	}
	trim(1, 100)
	if len(a.m.Chunks) != 0 || a.m.PrunedThrough != 100 {
		t.Fatalf("after the first trim: %d chunks, pruned through %d; want 0 and 100", len(a.m.Chunks), a.m.PrunedThrough)
	}
	nd.snapshot(t, 100)
	trim(101, 200)
	h := &History{Archive: a, Live: nd.store, Snaps: nd.snaps}
	if first, _ := h.Log().FirstIndex(); first != 101 {
		t.Fatalf("history starts at %d, want 101", first)
	}
	if _, _, err := h.StateAt(50); !errors.Is(err, ErrBadAt) {
		t.Fatalf("StateAt(before retention) = %v, want ErrBadAt", err)
	}
	if got, want := digestAt(t, h, 180), digestFSM(t, nd.stateAfter(180), 180); got.SHA256 != want.SHA256 {
		t.Fatal("state at 180 after retention differs")
	}
}

func TestRedact(t *testing.T) {
	in := `{"type":"kafka","spec":{"ioConfig":{"consumerProperties":{"bootstrap.servers":"k:9092","sasl.jaas.config":"x y password=\"p\"","ssl.key.password":"k"}},"s3":{"accessKeyId":"AK","secretAccessKey":"SK","password":{"type":"default","password":"p"}}},"keep":["key-less"]}`
	out := string(Redact([]byte(in)))
	for _, secret := range []string{`x y`, `"k"`, `"AK"`, `"SK"`, `"p"`} {
		if strings.Contains(out, secret) {
			t.Errorf("Redact left %s in %s", secret, out)
		}
	}
	for _, kept := range []string{`"bootstrap.servers":"k:9092"`, `"key-less"`, `"type":"kafka"`} {
		if !strings.Contains(out, kept) {
			t.Errorf("Redact dropped %s: %s", kept, out)
		}
	}
}

func TestDiff(t *testing.T) {
	nd := newNode(t, 12)
	h := &History{Live: nd.store}
	// 2..6: publish, config, submit, success (i=0), publish (i=1).
	d, err := h.DiffAt(1, 6)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]TableDiff{}
	for _, td := range d.Tables {
		tables[td.Table] = td
	}
	if td := tables["segments"]; len(td.Added) != 2 {
		t.Errorf("segments: %+v, want 2 added", td)
	}
	if td := tables["coordinatorConfig"]; len(td.Changed) != 1 || td.Changed[0].Field != "maxSegmentsToMove" || string(td.Changed[0].New) != "0" {
		t.Errorf("coordinatorConfig: %+v, want maxSegmentsToMove → 0", td)
	}
	if td := tables["tasks"]; len(td.Added) != 1 || strings.Contains(string(td.Added[0]), "secret-task_0") {
		t.Errorf("tasks: %s, want one task, its secret redacted", td.Added)
	}
	// Only one datasource: another's view has no segments or tasks, the
	// configs stay.
	va, _ := h.ViewAt(1)
	vb, _ := h.ViewAt(6)
	d = DiffViews(va.Only("other"), vb.Only("other"))
	if len(d.Tables) != 1 || d.Tables[0].Table != "coordinatorConfig" {
		t.Errorf("diff of datasource other: %+v, want the config change only", d.Tables)
	}
	if v := vb.Only("wiki"); len(v.Segments) != 2 || len(v.Tasks) != 1 || len(v.Rules) != 1 {
		t.Errorf("view of wiki: %d segments, %d tasks, rules %v", len(v.Segments), len(v.Tasks), v.Rules)
	}
}

// With S3 deep storage the chunks and snapshots are objects in the bucket
// (a real S3 server: s3test), under the node's prefix; the manifest stays
// in the data directory with a copy in the bucket.
func TestArchiveInDeepStorage(t *testing.T) {
	srv := s3test.Start(t)
	ds, err := deep.New(deep.Config{Type: "s3", Bucket: srv.Bucket, BaseKey: "base", S3Endpoint: srv.URL,
		S3AccessKey: srv.AccessKey, S3SecretKey: srv.SecretKey, S3Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	nd := newNode(t, 200)
	nd.snapshot(t, 150)
	a, _ := OpenArchive(ArchiveDir(nd.dir), 0, nil)
	a.InDeepStorage(ds, "_audit/n1")
	if err := a.Trim(nd.store, nd.snaps, 1, 120, 120, func() error { return nd.store.DeleteRange(1, 120) }); err != nil {
		t.Fatal(err)
	}
	objects := srv.Objects(t)
	for _, want := range []string{"base/_audit/n1/log/", "base/_audit/n1/snapshots/", "base/_audit/n1/manifest.json/"} {
		found := false
		for k := range objects {
			found = found || strings.HasPrefix(k, want)
		}
		if !found {
			t.Errorf("no object under %s in %v", want, objects)
		}
	}
	if _, err := os.Stat(filepath.Join(a.Dir(), "log")); !os.IsNotExist(err) {
		t.Errorf("chunks were written locally too: %v", err)
	}
	// A reopened archive (a restarted node) reads them back from the bucket.
	b, _ := OpenArchive(ArchiveDir(nd.dir), 0, nil)
	h := &History{Archive: b.InDeepStorage(ds, "_audit/n1"), Live: nd.store}
	if got, want := digestAt(t, h, 100), digestFSM(t, nd.stateAfter(100), 100); got.SHA256 != want.SHA256 {
		t.Fatal("state at 100 from the archive in S3 differs")
	}
	// Without the deep storage settings the reader is told what it lacks.
	c, _ := OpenArchive(ArchiveDir(nd.dir), 0, nil)
	_, _, err = (&History{Archive: c, Live: nd.store}).StateAt(100)
	if err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("StateAt without deep storage: %v", err)
	}
}

// The view shows a supervisor with its last recorded state and its spec's
// secrets redacted, and the processes that joined; the diff lists both.
func TestViewSupervisorsAndServers(t *testing.T) {
	spec, _ := json.Marshal(map[string]any{"type": "kafka", "id": "wiki", "suspended": false,
		"spec": map[string]any{"dataSchema": map[string]any{"dataSource": "wiki"},
			"ioConfig": map[string]any{"topic": "t", "consumerProperties": map[string]string{"sasl.jaas.config": "user=u password=hunter2"}}}})
	cmds := []commands.Command{
		commands.SetSupervisor{ID: "wiki", DataSource: "wiki", Spec: spec},
		// The spec version is index 2 (after the bootstrap configuration).
		commands.SetSupervisorState{ID: "wiki", SpecIndex: 2, State: "RUNNING", DetailedState: "CONNECTING_TO_STREAM"},
		commands.JoinServer{ID: "h1", Roles: []string{"historical"}, URL: "http://h1:8083", Tier: "hot", MaxSize: 1 << 30},
	}
	logs := entries(t, cmds)
	store := raft.NewInmemStore()
	store.StoreLogs(logs)
	h := &History{Live: store}
	v, err := h.ViewAt(uint64(len(logs)))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Supervisors) != 1 || v.Supervisors[0].State != "RUNNING" || v.Supervisors[0].DetailedState != "CONNECTING_TO_STREAM" {
		t.Fatalf("supervisors: %+v", v.Supervisors)
	}
	if strings.Contains(string(v.Supervisors[0].Spec), "hunter2") || !strings.Contains(string(v.Supervisors[0].Spec), Redacted) {
		t.Fatalf("spec not redacted: %s", v.Supervisors[0].Spec)
	}
	if len(v.Servers) != 1 || v.Servers[0].ID != "h1" {
		t.Fatalf("servers: %+v", v.Servers)
	}
	d, err := h.DiffAt(1, uint64(len(logs)))
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, td := range d.Tables {
		tables = append(tables, td.Table)
	}
	if got := strings.Join(tables, ","); got != "supervisors,servers" {
		t.Fatalf("diff tables %s, want supervisors,servers", got)
	}
}
