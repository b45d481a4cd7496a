package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/internal/eventually"
	"strata/interval"
	"strata/props"
	"strata/querynode/broker"
	"strata/querynode/historical"
	"strata/segmeta"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

// The data-plane harness: a real one-node control plane (single), segment
// files written by the storage writer into a real local deep storage and
// published through the internal publish endpoint, historicals and brokers
// served over loopback HTTP.

type dpRow struct {
	time  string
	page  string
	added int64
}

type dpFixture struct {
	t     *testing.T
	coord string
	node  *cluster.Node
	store *countingStorage
}

// countingStorage is the local deep storage, counting downloads per file.
type countingStorage struct {
	*deep.Local
	gets atomic.Int64
}

func (c *countingStorage) Get(ctx context.Context, spec deep.LoadSpec, localPath string) error {
	c.gets.Add(1)
	return c.Local.Get(ctx, spec, localPath)
}

func newDPFixture(t *testing.T) *dpFixture {
	t.Helper()
	p := props.Defaults()
	p.Set("svc.coordinator.startDelay", "100ms") // a test cluster's historicals are all there at once
	p.Set("svc.coordinator.inventory.period", "50ms")
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p.Set("svc.storage.storageDirectory", store.Root()) // publishing checks load specs against it
	coord, node := single(t, p)
	return &dpFixture{t: t, coord: coord.URL, node: node, store: &countingStorage{Local: store}}
}

func dpTime(t *testing.T, s string) int64 {
	t.Helper()
	ms, err := interval.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// segment writes one segment file of the rows, stores it and returns its
// metadata (not yet published).
func (f *dpFixture) segment(ds, ivs, version string, part, parts int, rows []dpRow) *segmeta.DataSegment {
	f.t.Helper()
	seg, _ := f.segmentFile(ds, ivs, version, part, parts, rows)
	return seg
}

// segmentFile is segment, also returning the local segment file.
func (f *dpFixture) segmentFile(ds, ivs, version string, part, parts int, rows []dpRow) (*segmeta.DataSegment, string) {
	t := f.t
	t.Helper()
	iv, err := interval.Parse(ivs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := stseg.NewWriter(stseg.Spec{
		Fields:     []stseg.Field{{Name: "page", Kind: stseg.KindString}, {Name: "added", Kind: stseg.KindLong}},
		Dimensions: []stseg.Dimension{{Name: "page"}},
		Metrics:    []stseg.Metric{{Type: "count", Name: "count"}, {Type: "longSum", Name: "added", FieldName: "added"}},
		Interval:   stseg.Interval{Start: iv.Start, End: iv.End},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Add(stseg.Row{Time: dpTime(t, r.time), Values: []stseg.Value{stseg.String(r.page), stseg.Long(r.added)}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seg := &segmeta.DataSegment{DataSource: ds, Interval: iv, Version: version, Dimensions: []string{"page"},
		Metrics: []string{"count", "added"}, ShardSpec: segmeta.NumberedShard(int32(part), int32(parts)), Size: info.Bytes}
	// The segment's own key (publishing refuses any other), with one more
	// element as ingestion tasks add their id: here the version without ':',
	// which tests that hold back downloads match paths on.
	key := deep.SegmentKey(ds, interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), version, part) +
		"/" + strings.ReplaceAll(version, ":", "-")
	spec, err := f.store.Put(context.Background(), key, path)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	seg.LoadSpec = segmeta.RawJSON(ls)
	return seg, path
}

func (f *dpFixture) publish(segs ...*segmeta.DataSegment) {
	f.t.Helper()
	docs := make([]string, len(segs))
	for i, s := range segs {
		docs[i] = string(s.AppendJSON(nil))
	}
	code, body, _ := call(f.t, "POST", f.coord+"/svc-internal/v1/segments/publish", "application/json",
		fmt.Sprintf(`{"dataSource":%q,"segments":[%s]}`, segs[0].DataSource, strings.Join(docs, ",")))
	if code != 200 {
		f.t.Fatalf("publish: %d %s", code, body)
	}
}

func (f *dpFixture) markUnused(ds string, ids ...string) {
	f.t.Helper()
	list, _ := json.Marshal(ids)
	code, body, _ := call(f.t, "POST", f.coord+"/svc/coordinator/v1/datasources/"+ds+"/markUnused", "application/json",
		`{"segmentIds":`+string(list)+`}`)
	if code != 200 {
		f.t.Fatalf("markUnused: %d %s", code, body)
	}
}

// dpHistorical is a historical served over loopback.
type dpHistorical struct {
	node *historical.Node
	ts   *httptest.Server
	url  string
	dir  string
}

// startHistorical starts a historical with its cache in dir; wrap, when
// set, sits in front of its HTTP handler.
func (f *dpFixture) startHistorical(dir string, wrap func(http.Handler) http.Handler) *dpHistorical {
	f.t.Helper()
	return f.startHistoricalIn("", dir, wrap)
}

// startHistoricalIn is startHistorical in a tier ("" = the default tier).
func (f *dpFixture) startHistoricalIn(tier, dir string, wrap func(http.Handler) http.Handler) *dpHistorical {
	t := f.t
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	name := ts.Listener.Addr().String()
	node, err := historical.New(historical.Config{Name: name, Locations: []historical.Location{{Path: dir, MaxSize: 1 << 30}},
		Coordinators: []string{f.coord}, Storage: f.store, PollPeriod: 20 * time.Millisecond, Tier: tier})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Roles: []string{RoleHistorical}, Historical: node, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn})})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts.Config.Handler = h
	ts.Start()
	dh := &dpHistorical{node: node, ts: ts, url: ts.URL, dir: dir}
	t.Cleanup(dh.stop)
	return dh
}

// stop kills the historical: connections are cut, in-flight requests fail.
func (h *dpHistorical) stop() {
	h.ts.CloseClientConnections()
	h.ts.Close()
	h.node.Close()
}

// served lists the ids the historical announces.
func (h *dpHistorical) served() []string {
	var ids []string
	for _, s := range h.node.Announce("").Segments {
		ids = append(ids, s.ID().String())
	}
	return ids
}

type dpBroker struct {
	b   *broker.Broker
	srv *Server
	url string
}

func startBroker(t *testing.T, urls []string, tweak func(*broker.Config)) *dpBroker {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	cfg := broker.Config{Name: ts.Listener.Addr().String(), Historicals: urls, PollPeriod: 20 * time.Millisecond}
	if tweak != nil {
		tweak(&cfg)
	}
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Roles: []string{RoleBroker}, Broker: b})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(func() { b.Close(); ts.CloseClientConnections(); ts.Close() })
	return &dpBroker{b: b, srv: s, url: ts.URL}
}

// query posts a native query to the broker.
func (b *dpBroker) query(t *testing.T, q string) (int, string, http.Header) {
	t.Helper()
	return call(t, "POST", b.url+"/svc/v2/", "application/json", q)
}

// servesAll waits until the broker can see exactly the given number of
// available segments (over every datasource).
func (b *dpBroker) waitSegments(t *testing.T, ds string, n int) {
	t.Helper()
	eventually.True(t, fmt.Sprintf("broker to see %d segments of %s", n, ds), func() bool {
		return len(b.b.Candidates([]string{ds}, []interval.Interval{interval.Eternity}, -1)) == n
	})
}
