package process

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/commands"
	"strata/fsm"
	"strata/ingest"
	"strata/internal/eventually"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

// killFixture is one control node (coordinator with its deep-storage
// sweeper, overlord) on real ports with local deep storage, holding wiki's
// segment for 2024-01-01 and its file.
type killFixture struct {
	t        *testing.T
	proc     *Process
	url      string
	store    deep.DeepStorage
	wiki     *segmeta.DataSegment
	wikiFile string
}

func newKillFixture(t *testing.T) *killFixture {
	t.Helper()
	ports := freePorts(t, 2)
	p := nodeProps("solo", ports[0], ports[1], t.TempDir(), "")
	proc, err := StartServer(p, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Close() })
	eventually.True(t, "leadership", proc.Node.IsLeader, slow)
	store, err := ingest.DeepStorageFromProps(p)
	if err != nil {
		t.Fatal(err)
	}
	f := &killFixture{t: t, proc: proc, url: "http://" + ports[0], store: store}
	f.wiki = f.segment("wiki", "v1")
	src := filepath.Join(t.TempDir(), "index.seg")
	os.WriteFile(src, []byte("wiki's only copy of 2024-01-01"), 0o644)
	ls, err := store.Put(context.Background(), deep.SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0), src)
	if err != nil {
		t.Fatal(err)
	}
	f.wikiFile = ls.Path
	b, _ := json.Marshal(ls)
	f.wiki.LoadSpec = segmeta.RawJSON(b)
	if code, body := f.publish(f.wiki); code != 200 {
		t.Fatalf("publish wiki: %d %s", code, body)
	}
	return f
}

func (f *killFixture) segment(ds, version string) *segmeta.DataSegment {
	iv, _ := interval.Parse("2024-01-01/2024-01-02")
	return &segmeta.DataSegment{DataSource: ds, Interval: iv, Version: version, Dimensions: []string{"page"}, Metrics: []string{"count"},
		ShardSpec: segmeta.NumberedShard(0, 1), Size: 30}
}

func (f *killFixture) publish(seg *segmeta.DataSegment) (int, string) {
	f.t.Helper()
	code, _, body := do(f.t, "POST", f.url+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"`+seg.DataSource+`","segments":[`+string(seg.AppendJSON(nil))+`]}`, nil)
	return code, body
}

// markUnusedAndKill is the rest of the attack: mark the datasource's segments
// unused and kill 2024-01-01.
func (f *killFixture) markUnusedAndKill(ds string) {
	f.t.Helper()
	if code, _, body := do(f.t, "DELETE", f.url+"/svc/coordinator/v1/datasources/"+ds, "", "", nil); code != 200 {
		f.t.Fatalf("mark %s unused: %d %s", ds, code, body)
	}
	if code, _, body := do(f.t, "DELETE", f.url+"/svc/coordinator/v1/datasources/"+ds+"/intervals/2024-01-01_2024-01-02", "", "", nil); code != 200 {
		f.t.Fatalf("kill %s: %d %s", ds, code, body)
	}
}

func (f *killFixture) wikiFileIntact() {
	f.t.Helper()
	if b, err := os.ReadFile(f.wikiFile); err != nil || string(b) != "wiki's only copy of 2024-01-01" {
		f.t.Fatalf("wiki's live file is gone or changed: %q %v", b, err)
	}
}

// The attack of issue 19: a segment of a new datasource published with
// wiki's load spec, then marked unused and killed, deleted wiki's live file.
// The publish is now refused with a 400 naming the segment and why, and no
// state changes; so are load specs outside deep storage, under another key,
// or with a version that would path-clean into wiki's directory.
func TestPublishRefusesForeignLoadSpec(t *testing.T) {
	f := newKillFixture(t)
	var stolenLs deep.LoadSpec
	json.Unmarshal([]byte(f.wiki.LoadSpec), &stolenLs)
	cases := map[string]func(s *segmeta.DataSegment){
		"wiki's file": func(s *segmeta.DataSegment) { s.LoadSpec = f.wiki.LoadSpec },
		"wiki's file, spelled otherwise": func(s *segmeta.DataSegment) {
			s.LoadSpec = segmeta.RawJSON(`{"path":"` + strings.Replace(stolenLs.Path, "/wiki/", "/evil/../wiki/", 1) + `","type":"local"}`)
		},
		"a file outside deep storage": func(s *segmeta.DataSegment) {
			s.LoadSpec = segmeta.RawJSON(`{"type":"local","path":"/etc/hostname"}`)
		},
		"a version that cleans into wiki's key": func(s *segmeta.DataSegment) {
			s.Version = "../../wiki/2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z/v1"
			s.LoadSpec = f.wiki.LoadSpec
		},
		"no load spec": func(s *segmeta.DataSegment) { s.LoadSpec = "" },
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			evil := f.segment("evil", "v1")
			spoil(evil)
			code, body := f.publish(evil)
			var e struct{ Error string }
			if code != 400 || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, evil.ID().String()) || !strings.Contains(e.Error, "loadSpec") {
				t.Errorf("publish answered %d %s, want 400 naming segment %s and its loadSpec", code, body, evil.ID())
			}
		})
	}
	f.proc.Node.FSM().Read(func(s *fsm.State) {
		if segs := s.Segments(""); len(segs) != 1 || segs[0].Segment.DataSource != "wiki" {
			t.Fatalf("refused publishes changed the state: %d segments", len(segs))
		}
	})
	// The rest of the attack finds nothing of evil's to kill.
	f.markUnusedAndKill("evil")
	f.wikiFileIntact()
}

// Even where the state already holds two segments naming one file (published
// before the check, put here with a command that skips it), killing one of
// them leaves the file to the other: the sweeper takes it off the queue
// without deleting it.
func TestKillKeepsFileAnotherSegmentNames(t *testing.T) {
	f := newKillFixture(t)
	evil := f.segment("evil", "v1")
	evil.LoadSpec = f.wiki.LoadSpec
	if _, err := f.proc.Node.Propose(commands.PublishSegments{DataSource: "evil", Segments: fsm.EncodeSegments([]*segmeta.DataSegment{evil}), Count: 1},
		commands.Audit{Author: "test"}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	f.markUnusedAndKill("evil")
	eventually.True(t, "the sweeper to drain the deletion queue", func() bool {
		n := -1
		f.proc.Node.FSM().Read(func(s *fsm.State) { n = len(s.PendingFileDeletions()) })
		return n == 0
	}, slow)
	f.wikiFileIntact()
	f.proc.Node.FSM().Read(func(s *fsm.State) {
		if _, ok := s.Segment(evil.ID()); ok {
			t.Fatal("evil's segment was not killed")
		}
		if r, ok := s.Segment(f.wiki.ID()); !ok || !r.Used {
			t.Fatal("wiki's segment changed")
		}
	})
}

// With internal credentials configured, the internal API answers 401 with a
// challenge to requests without them (or with wrong ones) and serves
// requests that carry them; public endpoints stay open. Other processes
// (historical, broker, middle manager) send them, as
// TestInternalCredentialsAcrossProcesses shows.
func TestInternalEndpointsNeedCredentials(t *testing.T) {
	ports := freePorts(t, 2)
	p := nodeProps("solo", ports[0], ports[1], t.TempDir(), "")
	p.Set("svc.escalator.internalClientPassword", "s3cret")
	proc, err := StartServer(p, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	eventually.True(t, "leadership", proc.Node.IsLeader, slow)
	url := "http://" + ports[0]
	const publish = `{"dataSource":"wiki","segments":[]}`
	for name, hdr := range map[string]map[string]string{
		"no credentials":  nil,
		"wrong password":  {"Authorization": basic("svc_system", "guess")},
		"wrong user":      {"Authorization": basic("admin", "s3cret")},
		"not basic":       {"Authorization": "Bearer s3cret"},
		"empty user/pass": {"Authorization": basic("", "")},
	} {
		code, h, body := do(t, "POST", url+"/svc-internal/v1/segments/publish", "application/json", publish, hdr)
		if code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %q %s, want 401 with a Basic challenge and a JSON error", name, code, h.Get("WWW-Authenticate"), body)
		}
	}
	if code, _, body := do(t, "POST", url+"/svc-internal/v1/segments/publish", "application/json", publish,
		map[string]string{"Authorization": basic("svc_system", "s3cret")}); code != 200 || body != `{"published":0}` {
		t.Errorf("with the credentials: %d %s", code, body)
	}
	if code, _, body := do(t, "GET", url+"/svc/coordinator/v1/datasources", "", "", nil); code != 200 {
		t.Errorf("public endpoint: %d %s", code, body)
	}
	// The password is not served with the other properties.
	if _, _, body := do(t, "GET", url+"/status/properties", "", "", nil); strings.Contains(body, "s3cret") {
		t.Error("/status/properties shows the internal password")
	}
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// With internal credentials configured on every process, the processes that
// call each other's internal endpoints send them: the middle manager
// registers with the overlord, the historical polls its assignment from the
// coordinator, the coordinator and the broker read the historical's
// announcements and the broker its sub-query answers. The historical's
// internal endpoints refuse requests without them too.
func TestInternalCredentialsAcrossProcesses(t *testing.T) {
	const password = "s3cret"
	deepDir := t.TempDir()
	ports := freePorts(t, 5)
	p := nodeProps("solo", ports[0], ports[1], t.TempDir(), "")
	p.Set("svc.escalator.internalClientPassword", password)
	p.Set("svc.storage.storageDirectory", deepDir)
	p.Set("svc.coordinator.inventory.period", "50ms")
	ctl, err := StartServer(p, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	eventually.True(t, "leadership", ctl.Node.IsLeader, slow)
	coord := "http://" + ports[0]
	common := map[string]string{"svc.escalator.internalClientPassword": password, "svc.storage.storageDirectory": deepDir}
	with := func(m map[string]string) map[string]string {
		for k, v := range common {
			m[k] = v
		}
		return m
	}
	startRole(t, "middleManager", ports[2], with(map[string]string{"svc.worker.overlordUrls": coord, "svc.worker.heartbeatPeriod": "100ms"}))
	startRole(t, "historical", ports[3], with(map[string]string{"svc.historical.coordinatorUrls": coord, "svc.historical.pollPeriod": "20ms"}))
	startRole(t, "broker", ports[4], with(map[string]string{"svc.broker.historicalUrls": "http://" + ports[3], "svc.broker.pollPeriod": "20ms"}))

	eventually.True(t, "the middle manager to register", func() bool {
		_, _, body := do(t, "GET", coord+"/svc/indexer/v1/workers", "", "", nil)
		return strings.Contains(body, ports[2])
	}, slow)
	// A real segment in the shared deep storage, published with the credentials.
	iv, _ := interval.Parse("2013-08-31/2013-09-01")
	w, err := stseg.NewWriter(stseg.Spec{Fields: []stseg.Field{{Name: "page", Kind: stseg.KindString}, {Name: "n", Kind: stseg.KindLong}},
		Dimensions: []stseg.Dimension{{Name: "page"}}, Metrics: []stseg.Metric{{Type: "longSum", Name: "n", FieldName: "n"}},
		Interval: stseg.Interval{Start: iv.Start, End: iv.End}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.Add(stseg.Row{Time: iv.Start + int64(i)*1000, Values: []stseg.Value{stseg.String("p"), stseg.Long(int64(i))}})
	}
	file := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(file)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := deep.NewLocal(deepDir)
	spec, err := store.Put(context.Background(), deep.SegmentKey("wiki", interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), "v1", 0), file)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	seg := &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: "v1", LoadSpec: segmeta.RawJSON(ls),
		Dimensions: []string{"page"}, Metrics: []string{"n"}, ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes}
	if code, _, body := do(t, "POST", coord+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"wiki","segments":[`+string(seg.AppendJSON(nil))+`]}`, map[string]string{"Authorization": basic("svc_system", password)}); code != 200 {
		t.Fatalf("publish: %d %s", code, body)
	}
	q := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-08-31/2013-09-01"],"granularity":"all","aggregations":[{"type":"longSum","name":"n","fieldName":"n"}]}`
	eventually.True(t, "the broker to answer from the historical", func() bool {
		code, _, body := do(t, "POST", "http://"+ports[4]+"/svc/v2/", "application/json", q, nil)
		return code == 200 && body == `[{"timestamp":"2013-08-31T00:00:00.000Z","result":{"n":10}}]`
	}, slow)
	eventually.True(t, "the coordinator to see the segment loaded", func() bool {
		_, _, body := do(t, "GET", coord+"/svc/coordinator/v1/loadstatus", "", "", nil)
		return body == `{"wiki":100.0}`
	}, slow)
	if code, _, _ := do(t, "GET", "http://"+ports[3]+"/svc-internal/v1/historical/segments", "", "", nil); code != 401 {
		t.Errorf("historical's internal endpoint without credentials: %d, want 401", code)
	}
}
