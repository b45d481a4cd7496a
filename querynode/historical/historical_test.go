package historical

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"0": 0, "123": 123, "1k": 1000, "1KB": 1000, "300g": 300_000_000_000, "2KiB": 2048,
		"1 MiB": 1 << 20, "1gib": 1 << 30, "1t": 1e12, "1p": 1e15}
	for s, want := range good {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "k", "-1", "1x", "1kk", "1.5g", "99999999999999999999", "9223372036854775807k"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q) accepted", s)
		}
	}
}

func TestParseLocations(t *testing.T) {
	got, err := ParseLocations(`[{"path":"/a","maxSize":"10g"},{"path":"/b","maxSize":500},{"path":"/c"}]`, 7)
	want := []Location{{"/a", 10_000_000_000}, {"/b", 500}, {"/c", 7}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("JSON form: %v %v", got, err)
	}
	got, err = ParseLocations(" /x , /y ", 9)
	if err != nil || !slices.Equal(got, []Location{{"/x", 9}, {"/y", 9}}) {
		t.Fatalf("list form: %v %v", got, err)
	}
	for _, bad := range []string{"", `[{"maxSize":1}]`, `[{"path":"/a","maxSize":"lots"}]`, `[{"path":`, `[]`} {
		if _, err := ParseLocations(bad, 1); err == nil {
			t.Errorf("ParseLocations(%q) accepted", bad)
		}
	}
}

func FuzzParseLocations(f *testing.F) {
	for _, s := range []string{`[{"path":"/a","maxSize":"10g"}]`, "/x,/y", `[{"path":"/b","maxSize":5}]`, "[{", "1kib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		locs, err := ParseLocations(s, 1)
		if err != nil {
			return
		}
		for _, l := range locs {
			if l.Path == "" || l.MaxSize < 0 {
				t.Fatalf("%q gave %+v", s, l)
			}
		}
	})
}

func TestDirName(t *testing.T) {
	id := "wiki_2013-08-31T00:00:00.000Z_2013-09-01T00:00:00.000Z_v1"
	if got := dirName(id); got != "wiki_2013-08-31T00%3A00%3A00.000Z_2013-09-01T00%3A00%3A00.000Z_v1" {
		t.Errorf("dirName = %s", got)
	}
	if got := dirName(".hidden/../x é"); strings.ContainsAny(got, "/ ") || got[0] == '.' {
		t.Errorf("unsafe dir name %q", got)
	}
	long1, long2 := dirName(strings.Repeat("a", 300)+"1"), dirName(strings.Repeat("a", 300)+"2")
	if len(long1) > 180 || long1 == long2 {
		t.Errorf("long names: %q %q", long1, long2)
	}
}

func TestNeedsClip(t *testing.T) {
	iv := func(s string) interval.Interval {
		x, err := interval.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	seg := segment.Interval{Start: iv("2013-01-01/2013-01-02").Start, End: iv("2013-01-01/2013-01-02").End}
	q := []interval.Interval{iv("2013-01-01T06/2013-01-03")}
	if needsClip(q, seg, iv("2013-01-01T06/2013-01-02")) {
		t.Error("a piece clipped only by the query interval needs no clip")
	}
	if !needsClip(q, seg, iv("2013-01-01T06/2013-01-01T12")) {
		t.Error("a partly overshadowed piece needs a clip")
	}
}

// A node against a coordinator serving a static listing: what it loads,
// skips and reports as missing.
func TestNodeLoadsListingAndAnswersSubQueries(t *testing.T) {
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(ivs, version string, rows int) *segmeta.DataSegment {
		seg, path := localSegment(t, ivs, version, 0, rows)
		seg.ShardSpec = segmeta.NumberedShard(0, 1)
		spec, err := store.Put(context.Background(), "ds/"+version+"/"+strings.ReplaceAll(ivs, "/", "_"), path)
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := json.Marshal(spec)
		seg.LoadSpec = segmeta.RawJSON(ls)
		return seg
	}
	good := mk("2020-01-01/2020-01-02", "v1", 3)
	old := mk("2020-01-02/2020-01-03", "v0", 2)
	broken := mk("2020-01-03/2020-01-04", "v1", 2)
	broken.LoadSpec = segmeta.RawJSON(`{"type":"local","path":"` + filepath.Join(store.Root(), "nothing/index.seg") + `"}`)
	tomb := &segmeta.DataSegment{DataSource: "ds", Version: "v2", ShardSpec: segmeta.TombstoneShard(), LoadSpec: `{"type":"tombstone"}`}
	tomb.Interval, _ = interval.Parse("2020-01-05/2020-01-06")
	var mu sync.Mutex
	listing := func() []byte {
		mu.Lock()
		defer mu.Unlock()
		var parts []string
		for _, s := range []*segmeta.DataSegment{good, old, broken, tomb} {
			over := "false"
			if s == old {
				over = "true"
			}
			b := s.AppendJSON(nil)
			parts = append(parts, string(b[:len(b)-1])+`,"overshadowed":`+over+`}`)
		}
		return []byte("[" + strings.Join(parts, ",") + "]")
	}
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RequestURI() != protocol.AssignedPath+"h:1" {
			http.NotFound(w, r)
			return
		}
		w.Write(listing())
	}))
	defer coord.Close()
	dir := t.TempDir()
	n, err := New(Config{Name: "h:1", Locations: []Location{{dir, 1 << 20}}, Coordinators: []string{"http://127.0.0.1:1", coord.URL},
		Storage: store, PollPeriod: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	want := []string{good.ID().String(), tomb.ID().String()}
	var got []string
	eventually.True(t, fmt.Sprintf("%v served (the overshadowed and the unloadable segment are not)", want), func() bool {
		got = got[:0]
		for _, s := range n.Announce("").Segments {
			got = append(got, s.ID().String())
		}
		return slices.Equal(got, want)
	}, eventually.Showing(func() string { return fmt.Sprint(got) }))
	n.mu.Lock()
	retry := n.failures[broken.ID().String()]
	n.mu.Unlock()
	if retry == 0 {
		t.Error("the failed load was not recorded for retry")
	}
	ann := n.Announce("")
	if ann.Server.Name != "h:1" || ann.Server.Type != "historical" || ann.Server.MaxSize != 1<<20 || ann.CurrSize != good.Size {
		t.Errorf("announcement: %+v", ann)
	}

	q := json.RawMessage(`{"queryType":"timeseries","dataSource":"ds","intervals":["2020-01-01/2020-01-10"],"granularity":"all","aggregations":[{"type":"longSum","name":"x","fieldName":"x"}]}`)
	res, err := n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{
		{ID: good.ID().String(), Interval: "2020-01-01/2020-01-02"},
		{ID: tomb.ID().String(), Interval: "2020-01-05/2020-01-06"},
		{ID: old.ID().String(), Interval: "2020-01-02/2020-01-03"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Missing, []string{old.ID().String()}) || len(res.Partial) == 0 {
		t.Fatalf("sub-query result: missing %v, partial %s", res.Missing, res.Partial)
	}
	if _, err := n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{{ID: good.ID().String(), Interval: "yesterday"}}}); err == nil {
		t.Error("a bad interval was accepted")
	}
	if _, err := n.Query(context.Background(), &protocol.SubQuery{Query: json.RawMessage(`{"queryType":"nope"}`)}); err == nil {
		t.Error("a bad query was accepted")
	}
	// A cancelled sub-query reports the cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := n.Query(ctx, &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{{ID: good.ID().String(), Interval: "2020-01-01/2020-01-02"}}}); err == nil ||
		queryError(err).Kind != queryError(cancelledError("")).Kind {
		t.Errorf("cancelled sub-query: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, dirName(good.ID().String()), descriptorFile)); err != nil {
		t.Errorf("descriptor not written: %v", err)
	}
}

func TestNodeRejectsSegmentsThatDoNotFit(t *testing.T) {
	n, err := New(Config{Name: "h:1", Locations: []Location{{t.TempDir(), 100}, {t.TempDir(), 300}}, Storage: deepNone{}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	loc, err := n.reserve(250)
	if err != nil || loc.MaxSize != 300 {
		t.Fatalf("reserve 250: %v %v", loc, err)
	}
	if _, err := n.reserve(100); err != nil {
		t.Fatalf("reserve 100: %v", err)
	}
	if _, err := n.reserve(60); err == nil {
		t.Fatal("reserved beyond every location's size")
	}
	if _, err := New(Config{Name: "h", Storage: deepNone{}}); err == nil {
		t.Fatal("a node without locations was accepted")
	}
}

type deepNone struct{}

func (deepNone) Get(context.Context, deep.LoadSpec, string) error { return os.ErrNotExist }

// Segments listed keepOnly (a coordinator's handover) are kept while held
// but never downloaded: the coordinator's picture of what a historical holds
// may be out of date.
func TestNodeKeepsButNeverLoadsKeepOnlySegments(t *testing.T) {
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(ivs string) *segmeta.DataSegment {
		seg, path := localSegment(t, ivs, "v1", 0, 2)
		seg.ShardSpec = segmeta.NumberedShard(0, 1)
		spec, err := store.Put(context.Background(), "ds/v1/"+strings.ReplaceAll(ivs, "/", "_"), path)
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := json.Marshal(spec)
		seg.LoadSpec = segmeta.RawJSON(ls)
		return seg
	}
	held := mk("2020-01-01/2020-01-02")
	other := mk("2020-01-02/2020-01-03")
	var mu sync.Mutex
	var listing string
	polls := 0
	setListing := func(entries ...string) {
		mu.Lock()
		defer mu.Unlock()
		listing, polls = "["+strings.Join(entries, ",")+"]", 0
	}
	entry := func(s *segmeta.DataSegment, keepOnly bool) string {
		b := s.AppendJSON(nil)
		if keepOnly {
			return string(b[:len(b)-1]) + `,"keepOnly":true}`
		}
		return string(b)
	}
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		polls++
		w.Write([]byte(listing))
	}))
	defer coord.Close()
	n, err := New(Config{Name: "h:1", Locations: []Location{{t.TempDir(), 1 << 20}}, Coordinators: []string{coord.URL},
		Storage: store, PollPeriod: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	served := func() []string {
		var ids []string
		for _, s := range n.Announce("").Segments {
			ids = append(ids, s.ID().String())
		}
		return ids
	}
	// polled waits until the node has fetched the current listing twice:
	// the first fetch's reconcile is done once the second is asked for.
	polled := func() {
		t.Helper()
		eventually.True(t, "two more polls of the listing", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return polls >= 2
		})
	}
	setListing(entry(held, false))
	n.Start()
	eventually.True(t, "the held segment served", func() bool { return slices.Equal(served(), []string{held.ID().String()}) },
		eventually.Showing(func() string { return fmt.Sprint(served()) }))
	setListing(entry(held, true), entry(other, true))
	polled()
	n.mu.Lock()
	loading := n.loading[other.ID().String()]
	n.mu.Unlock()
	if got := served(); !slices.Equal(got, []string{held.ID().String()}) || loading {
		t.Fatalf("with a keepOnly listing: served %v, loading the other segment %v; want only the held one kept", got, loading)
	}
	setListing()
	polled()
	setListing(entry(held, true))
	polled()
	n.mu.Lock()
	loading = n.loading[held.ID().String()]
	n.mu.Unlock()
	if got := served(); len(got) != 0 || loading {
		t.Fatalf("a dropped segment listed keepOnly: served %v, loading %v; want it not loaded again", got, loading)
	}
}
