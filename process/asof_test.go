package process

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/ingest/middlemanager"
	"strata/internal/eventually"
	"strata/interval"
	"strata/props"
	"strata/querynode/broker"
	"strata/segmeta"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

// storeDay writes a one-day segment of wiki (page, added; rows of added each)
// into deep storage and returns its metadata, ready to publish.
func storeDay(t *testing.T, store *deep.Local, day, version string, added ...int64) *segmeta.DataSegment {
	t.Helper()
	start, err := interval.ParseTime(day)
	if err != nil {
		t.Fatal(err)
	}
	iv := interval.Interval{Start: start, End: start + 86_400_000}
	w, err := stseg.NewWriter(stseg.Spec{
		Fields:     []stseg.Field{{Name: "page", Kind: stseg.KindString}, {Name: "added", Kind: stseg.KindLong}},
		Dimensions: []stseg.Dimension{{Name: "page"}},
		Metrics:    []stseg.Metric{{Type: "count", Name: "count"}, {Type: "longSum", Name: "added", FieldName: "added"}},
		Interval:   stseg.Interval{Start: iv.Start, End: iv.End},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range added {
		if err := w.Add(stseg.Row{Time: iv.Start + int64(i)*1000, Values: []stseg.Value{stseg.String(fmt.Sprint("p", i)), stseg.Long(a)}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := store.Put(context.Background(), deep.SegmentKey("wiki", interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), version, 0), path)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	return &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: version, Dimensions: []string{"page"},
		Metrics: []string{"count", "added"}, ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes, LoadSpec: segmeta.RawJSON(ls)}
}

// SQL SELECTs run as tasks on a middle manager; with the context key asOf
// they read the tables as of that moment, here before and after a REPLACE
// (a new version of the day), and a segment killed since fails the task
// naming it. INSERT and REPLACE refuse asOf.
func TestSQLSelectAsOf(t *testing.T) {
	deepDir := t.TempDir()
	c := startCluster(t, 1, map[string]string{"svc.storage.storageDirectory": deepDir})
	l := c.leader()
	mp := props.Defaults()
	mp.Set("svc.node.roles", "middleManager")
	mp.Set("svc.http.address", freePorts(t, 1)[0])
	mp.Set("svc.data.dir", t.TempDir())
	mp.Set("svc.storage.storageDirectory", deepDir)
	mp.Set("svc.worker.overlordUrls", c.url(l))
	mp.Set("svc.worker.capacity", "2")
	mp.Set("svc.worker.heartbeatPeriod", "100ms")
	mmProc, err := StartServer(mp, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	worker := middlemanager.Attached(mp)
	t.Cleanup(func() {
		mmProc.Close()
		<-worker.Done()
	})
	host := mp.String("svc.http.address")
	eventually.True(t, "the worker to register", func() bool {
		_, _, body := do(t, "GET", c.url(l)+"/svc/indexer/v1/workers", "", "", nil)
		return strings.Contains(body, `"host":"`+host+`"`)
	}, slow)

	store, err := deep.NewLocal(deepDir)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(s *segmeta.DataSegment) {
		t.Helper()
		code, _, body := do(t, "POST", c.url(l)+"/svc-internal/v1/segments/publish", "application/json",
			`{"dataSource":"wiki","segments":[`+string(s.AppendJSON(nil))+`]}`, nil)
		if code != 200 {
			t.Fatalf("publish: %d %s", code, body)
		}
	}
	v1 := storeDay(t, store, "2024-01-01", "2024-06-01T00:00:00.000Z", 10, 10)
	publish(v1)
	idx1 := c.procs[l].Node.FSM().LastIndex()
	publish(storeDay(t, store, "2024-01-01", "2024-07-01T00:00:00.000Z", 100, 100, 100))

	// run submits a statement and waits for its task to end; it returns the
	// status and the SELECT's result rows.
	run := func(set, ctx string) (string, string, string) {
		t.Helper()
		body := `{"query":"` + set + `SELECT COUNT(*) AS n, SUM(added) AS s FROM wiki"` + ctx + `}`
		id, status, errMsg := runSQLTask(t, c.url(l), body)
		var rep struct {
			MSQ struct {
				Payload struct {
					Results struct {
						Results json.RawMessage `json:"results"`
					} `json:"results"`
				} `json:"payload"`
			} `json:"multiStageQuery"`
		}
		_, _, b := do(t, "GET", c.url(l)+"/svc/indexer/v1/task/"+id+"/reports", "", "", nil)
		json.Unmarshal([]byte(b), &rep)
		return status, errMsg, string(rep.MSQ.Payload.Results.Results)
	}
	for _, tc := range []struct{ what, set, ctx, want string }{
		{"now", ``, ``, `[[3,300]]`},
		{"as of before the REPLACE", ``, fmt.Sprintf(`,"context":{"asOf":%d}`, idx1), `[[2,20]]`},
		{"as of after it", ``, fmt.Sprintf(`,"context":{"asOf":"%d"}`, idx1+1), `[[3,300]]`},
		{"SET asOf overrides the context", fmt.Sprintf(`SET asOf = '%d'; `, idx1), fmt.Sprintf(`,"context":{"asOf":"%d"}`, idx1+1), `[[2,20]]`},
	} {
		if st, msg, rows := run(tc.set, tc.ctx); st != "SUCCESS" || rows != tc.want {
			t.Fatalf("%s: %s %s %s; want %s", tc.what, st, msg, rows, tc.want)
		}
	}

	var spec deep.LoadSpec
	json.Unmarshal([]byte(v1.LoadSpec), &spec)
	if err := store.Delete(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	st, msg, _ := run("", fmt.Sprintf(`,"context":{"asOf":%d}`, idx1))
	if st != "FAILED" || !strings.Contains(msg, v1.ID().String()) || !strings.Contains(msg, "killed") {
		t.Fatalf("a segment killed since: %s %q; want FAILED naming %s", st, msg, v1.ID())
	}

	for _, bad := range []struct{ what, body string }{
		{"malformed", `{"query":"SELECT COUNT(*) FROM wiki","context":{"asOf":"yesterday"}}`},
		{"not a string or index", `{"query":"SELECT COUNT(*) FROM wiki","context":{"asOf":true}}`},
		{"on a REPLACE", `{"query":"REPLACE INTO wiki OVERWRITE ALL SELECT __time, page, added FROM wiki PARTITIONED BY DAY","context":{"asOf":1}}`},
	} {
		if code, _, body := do(t, "POST", c.url(l)+"/svc/v2/sql/task", "application/json", bad.body, nil); code != 400 || !strings.Contains(body, "asOf") {
			t.Fatalf("%s: %d %s; want 400 naming asOf", bad.what, code, body)
		}
	}
}

// A broker given only svc.discovery.coordinators reads past timelines from
// those control nodes, as the other roles' control-node lists default to
// them; svc.broker.coordinatorUrls overrides.
func TestBrokerPastTimelinesFollowDiscovery(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"svc.discovery.coordinators": "c1:8081,http://c2:8081"}, "http://c1:8081,http://c2:8081"},
		{map[string]string{"svc.discovery.coordinators": "c1:8081", "svc.broker.coordinatorUrls": "http://x:1"}, "http://x:1"},
		{nil, "http://" + QuickstartCoordinator},
	} {
		p := props.Defaults()
		p.Set("svc.data.dir", t.TempDir())
		for k, v := range tc.set {
			p.Set(k, v)
		}
		dc, err := config.ParseDiscovery(p)
		if err != nil {
			t.Fatal(err)
		}
		applyDiscoveryDefaults(p, dc)
		cfg, err := BrokerConfig(p, "b:1", hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		cfg.PastSegments.Close()
		if got := strings.Join(cfg.PastTimelines.(*broker.HTTPPastTimelines).URLs, ","); got != tc.want {
			t.Errorf("%v: past timelines from %s, want %s", tc.set, got, tc.want)
		}
	}
}
