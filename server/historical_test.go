package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strata/internal/eventually"
)

func wikiRows(day string, base int64) []dpRow {
	return []dpRow{
		{day + "T01:00:00Z", "Apple", base + 1},
		{day + "T02:00:00Z", "Banana", base + 2},
		{day + "T03:00:00Z", "Apple", base + 3},
		{day + "T23:00:00Z", "Cherry", base + 4},
	}
}

func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestHistoricalLoadsPublishedAndDropsUnused(t *testing.T) {
	f := newDPFixture(t)
	s1 := f.segment("wiki", "2013-08-31/2013-09-01", "v1", 0, 1, wikiRows("2013-08-31", 0))
	s2 := f.segment("wiki", "2013-09-01/2013-09-02", "v1", 0, 1, wikiRows("2013-09-01", 10))
	f.publish(s1, s2)
	dir := t.TempDir()
	h := f.startHistorical(dir, nil)
	if code, body, _ := call(t, "GET", h.url+"/svc/historical/v1/loadstatus", "", ""); code != 200 || !strings.Contains(body, `"cacheInitialized"`) {
		t.Fatalf("loadstatus: %d %s", code, body)
	}
	if code, _, _ := call(t, "GET", h.url+"/svc/historical/v1/readiness", "", ""); code != 503 {
		t.Fatalf("readiness before start: %d, want 503", code)
	}
	h.node.Start()
	want := []string{s1.ID().String(), s2.ID().String()}
	eventually.True(t, "both segments served", func() bool { return slices.Equal(h.served(), want) })
	if code, body, _ := call(t, "GET", h.url+"/svc/historical/v1/loadstatus", "", ""); code != 200 || body != `{"cacheInitialized":true}` {
		t.Fatalf("loadstatus: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", h.url+"/svc/historical/v1/readiness", "", ""); code != 200 || body != "" {
		t.Fatalf("readiness: %d %q", code, body)
	}
	if n := len(cacheEntries(t, dir)); n != 2 {
		t.Fatalf("cache holds %d entries, want 2", n)
	}

	// The announcement is cheap to poll: the current version gets "unchanged".
	ann := h.node.Announce("")
	if again := h.node.Announce(ann.Version); !again.Unchanged || len(again.Segments) != 0 {
		t.Fatalf("poll with the current version: %+v", again)
	}

	// Marked unused: unannounced and deleted from the cache.
	f.markUnused("wiki", s1.ID().String())
	eventually.True(t, "s1 dropped", func() bool { return slices.Equal(h.served(), want[1:]) })
	eventually.True(t, "s1 removed from the cache", func() bool { return len(cacheEntries(t, dir)) == 1 })
	if h.node.Announce(ann.Version).Unchanged {
		t.Fatal("version did not change after a drop")
	}

	// A newer version overshadows s2: the historical swaps it.
	s2b := f.segment("wiki", "2013-09-01/2013-09-02", "v2", 0, 1, wikiRows("2013-09-01", 100))
	f.publish(s2b)
	eventually.True(t, "v2 replaces v1", func() bool { return slices.Equal(h.served(), []string{s2b.ID().String()}) })
	eventually.True(t, "cache holds v2 only", func() bool { return len(cacheEntries(t, dir)) == 1 })
}

func TestHistoricalReusesCacheAfterRestart(t *testing.T) {
	f := newDPFixture(t)
	s1 := f.segment("wiki", "2013-08-31/2013-09-01", "v1", 0, 1, wikiRows("2013-08-31", 0))
	s2 := f.segment("wiki", "2013-09-01/2013-09-02", "v1", 0, 1, wikiRows("2013-09-01", 10))
	f.publish(s1, s2)
	dir := t.TempDir()
	h := f.startHistorical(dir, nil)
	h.node.Start()
	want := []string{s1.ID().String(), s2.ID().String()}
	eventually.True(t, "segments served", func() bool { return slices.Equal(h.served(), want) })
	h.stop()
	if got := f.store.gets.Load(); got != 2 {
		t.Fatalf("%d downloads, want 2", got)
	}

	// Restart on the same cache: nothing is downloaded again, and the cached
	// segments are served before the first coordinator poll answers.
	h2 := f.startHistorical(dir, nil)
	h2.node.Start()
	eventually.True(t, "cache loaded", h2.node.Ready)
	if got := h2.served(); !slices.Equal(got, want) {
		t.Fatalf("after restart serves %v, want %v", got, want)
	}
	b := startBroker(t, []string{h2.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 2)
	code, body, _ := b.query(t, `{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-08-31/2013-09-02"],"granularity":"all",
		"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`)
	if code != 200 || body != `[{"timestamp":"2013-08-31T01:00:00.000Z","result":{"added":60}}]` {
		t.Fatalf("query on the reused cache: %d %s", code, body)
	}
	h2.stop()
	if got := f.store.gets.Load(); got != 2 {
		t.Fatalf("%d downloads after a restart, want still 2", got)
	}

	// A damaged cache file is detected at start-up and downloaded again;
	// an interrupted download (no descriptor) is cleaned up.
	var victim string
	for _, e := range cacheEntries(t, dir) {
		if strings.Contains(e, "2013-09-01T00") && victim == "" {
			victim = filepath.Join(dir, e, "index.seg")
		}
	}
	data, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(victim, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".tmp-leftover"), 0o755); err != nil {
		t.Fatal(err)
	}
	h3 := f.startHistorical(dir, nil)
	h3.node.Start()
	eventually.True(t, "damaged segment downloaded again", func() bool { return slices.Equal(h3.served(), want) })
	if got := f.store.gets.Load(); got != 3 {
		t.Fatalf("%d downloads, want 3 (one re-download)", got)
	}
	if n := len(cacheEntries(t, dir)); n != 2 {
		t.Fatalf("cache holds %d entries after cleanup, want 2: %v", n, cacheEntries(t, dir))
	}
}
