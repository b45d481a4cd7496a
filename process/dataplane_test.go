package process

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/interval"
	"strata/props"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// startRole starts a one-role process with the given properties.
func startRole(t *testing.T, role, addr string, set map[string]string) *Process {
	t.Helper()
	p := props.Defaults()
	p.Set("svc.node.roles", role)
	p.Set("svc.http.address", addr)
	p.Set("svc.data.dir", t.TempDir())
	for k, v := range set {
		p.Set(k, v)
	}
	proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard}))
	if err != nil {
		t.Fatalf("start %s: %v", role, err)
	}
	t.Cleanup(func() { proc.Close() })
	return proc
}

// Three control nodes, a historical (polling a follower, which redirects it
// to the leader), a broker and a router as separate processes: a published
// segment is loaded, and a query through the router is answered.
func TestDataPlaneProcesses(t *testing.T) {
	// Deep storage is shared: the control nodes accept only load specs in it.
	deepDir := t.TempDir()
	c := startCluster(t, 3, map[string]string{"svc.coordinator.inventory.period": "50ms", "svc.storage.storageDirectory": deepDir})
	leader := c.leader()
	follower := (leader + 1) % 3
	ports := freePorts(t, 3)
	hist := startRole(t, "historical", ports[0], map[string]string{
		"svc.historical.coordinatorUrls": c.url(follower), "svc.historical.pollPeriod": "20ms",
		"svc.storage.storageDirectory": deepDir, "svc.segmentCache.dropSegmentDelayMillis": "0",
	})
	brk := startRole(t, "broker", ports[1], map[string]string{
		"svc.broker.historicalUrls": "http://" + ports[0], "svc.broker.pollPeriod": "20ms",
	})
	startRole(t, "router", ports[2], map[string]string{
		"svc.router.coordinatorUrls": c.url(0) + "," + c.url(1) + "," + c.url(2), "svc.router.brokerUrls": "http://" + ports[1],
		"svc.router.historicalUrls": "http://" + ports[0],
	})
	router := "http://" + ports[2]

	// A segment written by the storage writer into the deep storage the
	// historical reads, published on the control node.
	iv, _ := interval.Parse("2013-08-31/2013-09-01")
	w, err := segment.NewWriter(segment.Spec{Fields: []segment.Field{{Name: "page", Kind: segment.KindString}, {Name: "n", Kind: segment.KindLong}},
		Dimensions: []segment.Dimension{{Name: "page"}}, Metrics: []segment.Metric{{Type: "longSum", Name: "n", FieldName: "n"}},
		Interval: segment.Interval{Start: iv.Start, End: iv.End}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.Add(segment.Row{Time: iv.Start + int64(i)*1000, Values: []segment.Value{segment.String(fmt.Sprint("p", i%2)), segment.Long(int64(i))}})
	}
	file := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(file)
	if err != nil {
		t.Fatal(err)
	}
	store, err := deep.NewLocal(deepDir)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := store.Put(context.Background(), deep.SegmentKey("wiki", interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), "v1", 0), file)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	seg := &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: "v1", LoadSpec: segmeta.RawJSON(ls),
		Dimensions: []string{"page"}, Metrics: []string{"n"}, ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes}
	code, _, body := do(t, "POST", c.url(leader)+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"wiki","segments":[`+string(seg.AppendJSON(nil))+`]}`, nil)
	if code != 200 {
		t.Fatalf("publish: %d %s", code, body)
	}

	q := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-08-31/2013-09-01"],"granularity":"all","aggregations":[{"type":"longSum","name":"n","fieldName":"n"}]}`
	var lastCode int
	var lastBody string
	eventually.True(t, "the query through the router", func() bool {
		var hdr http.Header
		lastCode, hdr, lastBody = do(t, "POST", router+"/svc/v2/", "application/json", q, nil)
		if lastCode == 200 && lastBody == `[{"timestamp":"2013-08-31T00:00:00.000Z","result":{"n":10}}]` {
			if hdr.Get("X-Druid-Query-Id") == "" {
				t.Fatal("no query id header through the router")
			}
			return true
		}
		return false
	}, slow, eventually.Showing(func() string { return fmt.Sprintf("%d %s", lastCode, lastBody) }))
	// pydruid posts to /svc/v2 without the trailing slash.
	if code, _, body := do(t, "POST", router+"/svc/v2", "application/json", q, nil); code != 200 || !strings.Contains(body, `"n":10`) {
		t.Fatalf("POST /svc/v2 through the router: %d %s", code, body)
	}
	for path, want := range map[string]string{
		"/svc/broker/v1/loadstatus":     `{"inventoryInitialized":true}`,
		"/svc/historical/v1/loadstatus": `{"cacheInitialized":true}`,
		"/svc/v2/datasources":           `["wiki"]`,
	} {
		if code, _, body := do(t, "GET", router+path, "", "", nil); code != 200 || body != want {
			t.Errorf("GET %s through the router: %d %s", path, code, body)
		}
	}

	// The coordinator knows the historical (it polls through a follower, which
	// redirects it to the leader) and what it holds.
	coord := c.url(leader) + "/svc/coordinator/v1"
	host := ports[0]
	eventually.True(t, "the coordinator to see the segment loaded", func() bool {
		_, _, body := do(t, "GET", coord+"/loadstatus", "", "", nil)
		return body == `{"wiki":100.0}`
	}, slow)
	id := seg.ID().String()
	for path, want := range map[string]string{
		"/servers":                                 `["` + host + `"]`,
		"/loadstatus?simple":                       `{"wiki":0}`,
		"/loadqueue":                               `{"` + host + `":{"segmentsToLoad":[],"segmentsToDrop":[]}}`,
		"/loadqueue?simple":                        `{"` + host + `":{"segmentsToLoad":0,"segmentsToDrop":0,"segmentsToLoadSize":0,"segmentsToDropSize":0}}`,
		"/servers/" + host + "/segments":           `["` + id + `"]`,
		"/servers/" + host + "/segments/" + id:     string(seg.AppendJSON(nil)),
		"/loadstatus?full":                         `{"_default_tier":{"wiki":1}}`, // the default rule wants 2 replicas
		"/loadstatus?full&computeUsingClusterView": `{"_default_tier":{"wiki":0}}`,
	} {
		if code, _, body := do(t, "GET", coord+path, "", "", nil); code != 200 || body != want {
			t.Errorf("GET %s: %d %s, want %s", path, code, body, want)
		}
	}
	// The served segment views name the historical holding the segment.
	if _, _, body := do(t, "GET", coord+"/datasources/wiki/segments/"+id, "", "", nil); body != `{"metadata":`+string(seg.AppendJSON(nil))+`,"servers":["`+host+`"]}` {
		t.Errorf("served segment: %s", body)
	}
	if _, _, body := do(t, "GET", coord+"/datasources/wiki/intervals?full", "", "", nil); !strings.Contains(body, `"servers":["`+host+`"]`) {
		t.Errorf("intervals?full: %s", body)
	}
	if _, _, body := do(t, "GET", coord+"/datasources/wiki/intervals/2013-08-31_2013-09-01/serverview", "", "", nil); !strings.Contains(body, `"servers":[{"name":"`+host+`","host":"`+host+`"`) {
		t.Errorf("serverview: %s", body)
	}
	_, _, simple := do(t, "GET", coord+"/servers?simple", "", "", nil)
	var servers []map[string]any
	if json.Unmarshal([]byte(simple), &servers) != nil || len(servers) != 1 || servers[0]["host"] != host ||
		servers[0]["tier"] != "_default_tier" || servers[0]["type"] != "historical" || servers[0]["currSize"].(float64) <= 0 {
		t.Errorf("servers?simple: %s", simple)
	}
	if code, _, _ := do(t, "GET", coord+"/servers/127.0.0.1:1", "", "", nil); code != 404 {
		t.Errorf("unknown server: %d", code)
	}

	// The nodes stop with their processes, promptly.
	start := time.Now()
	brk.Close()
	hist.Close()
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("closing the data plane took %v", el)
	}
	if code, _, body := do(t, "POST", router+"/svc/v2/", "application/json", q, nil); code != 503 || !strings.Contains(body, "no backend answered") {
		t.Fatalf("query with the broker gone: %d %s", code, body)
	}
	// With the historical gone, the coordinator counts its segment as not loaded.
	eventually.True(t, "the coordinator to see the segment unloaded", func() bool {
		_, _, body := do(t, "GET", coord+"/loadstatus", "", "", nil)
		return body == `{"wiki":0.0}`
	}, slow)
}

func TestDataPlaneConfigErrors(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.node.roles", "historical")
	p.Set("svc.http.address", "127.0.0.1:0")
	p.Set("svc.data.dir", t.TempDir())
	p.Set("svc.segmentCache.locations", `[{"path":"/x","maxSize":"lots"}]`)
	if _, err := StartServer(p, hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "svc.segmentCache.locations") {
		t.Fatalf("bad cache locations: %v", err)
	}
	p.Set("svc.node.roles", "broker")
	p.Set("svc.query.segmentMetadata.defaultHistory", "a week")
	if _, err := StartServer(p, hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "defaultHistory") {
		t.Fatalf("bad default history: %v", err)
	}
	cfg, err := BrokerConfig(props.Defaults(), "b:1", hclog.NewNullLogger())
	if err != nil || cfg.DefaultTimeout != 300*time.Second || cfg.Historicals[0] != "http://"+QuickstartHistorical || cfg.FailOnMissingSegments {
		t.Fatalf("broker defaults: %+v %v", cfg, err)
	}
	bp := props.Defaults()
	bp.Set("svc.query.failOnMissingSegments", "true")
	if cfg, err := BrokerConfig(bp, "b:1", hclog.NewNullLogger()); err != nil || !cfg.FailOnMissingSegments {
		t.Fatalf("svc.query.failOnMissingSegments=true: %+v %v", cfg, err)
	}
	bp.Set("svc.query.failOnMissingSegments", "sometimes")
	if _, err := BrokerConfig(bp, "b:1", hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "svc.query.failOnMissingSegments") {
		t.Fatalf("bad svc.query.failOnMissingSegments: %v", err)
	}
}
