package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/interval"
	"strata/querynode/historical"
	"strata/segmeta"
	"strata/storage/deep"
)

// gatedStorage holds back the downloads of chosen segment versions until
// released, and tells who waits on it when a held-back download starts.
type gatedStorage struct {
	historical.DeepStorage
	mu      sync.Mutex
	blocked map[string]chan struct{} // version → closed on release
	started chan string              // the load spec of each held-back download
}

func newGatedStorage(inner historical.DeepStorage) *gatedStorage {
	return &gatedStorage{DeepStorage: inner, blocked: map[string]chan struct{}{}, started: make(chan string, 64)}
}

// hold makes downloads of segments of version wait for release.
func (g *gatedStorage) hold(version string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.blocked[version] = make(chan struct{})
}

func (g *gatedStorage) release(version string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch := g.blocked[version]; ch != nil {
		close(ch)
		delete(g.blocked, version)
	}
}

func (g *gatedStorage) Get(ctx context.Context, spec deep.LoadSpec, localPath string) error {
	g.mu.Lock()
	var wait chan struct{}
	for v, ch := range g.blocked {
		if strings.Contains(spec.Path+spec.Key, "/"+strings.ReplaceAll(v, ":", "-")+"/") {
			wait = ch
		}
	}
	g.mu.Unlock()
	if wait != nil {
		g.started <- spec.Path + spec.Key
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.DeepStorage.Get(ctx, spec, localPath)
}

// startGatedHistorical is startHistorical with its own deep storage.
func (f *dpFixture) startGatedHistorical(dir string, store historical.DeepStorage) *dpHistorical {
	t := f.t
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	name := ts.Listener.Addr().String()
	node, err := historical.New(historical.Config{Name: name, Locations: []historical.Location{{Path: dir, MaxSize: 1 << 30}},
		Coordinators: []string{f.coord}, Storage: store, PollPeriod: 20 * time.Millisecond,
		// As svc.segmentCache.dropSegmentDelayMillis does in production, a
		// dropped segment stays queryable a while for the queries that
		// brokers routed to it just before they saw it go.
		DropDelay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Roles: []string{RoleHistorical}, Historical: node, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn})})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	dh := &dpHistorical{node: node, ts: ts, url: ts.URL, dir: dir}
	t.Cleanup(dh.stop)
	return dh
}

// cachedOnlyServed reports whether a historical's cache holds exactly the
// segments it serves: none is still dropping (queryable, unannounced).
func cachedOnlyServed(t *testing.T, h *dpHistorical) bool {
	entries, err := os.ReadDir(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs++
		}
	}
	return dirs == len(h.served())
}

// holdsAll reports whether the historicals together announce every id.
func holdsAll(hs []*dpHistorical, ids []string) bool {
	var have []string
	for _, h := range hs {
		have = append(have, h.served()...)
	}
	for _, id := range ids {
		if !slices.Contains(have, id) {
			return false
		}
	}
	return true
}

// A REPLACE publishes a new version of every time chunk over byte-identical
// data. Until a chunk's new segments are loaded, the old version must keep
// answering: never a gap, never a mix of days. Loads of the new version are
// held back, so the window in which the old segments could go is as long as
// the test wants; then they are let through while queries keep checking.
// Marking the new version unused afterwards switches back the same way.
func TestReplaceSwitchesEachChunkOnlyOnceLoaded(t *testing.T) {
	f := newDPFixture(t)
	gate := newGatedStorage(f.store)
	hs := []*dpHistorical{f.startGatedHistorical(t.TempDir(), gate), f.startGatedHistorical(t.TempDir(), gate)}
	for _, h := range hs {
		h.node.Start()
	}
	b := startBroker(t, []string{hs[0].url, hs[1].url}, nil)
	b.b.Start()

	days := []string{"2024-01-01", "2024-01-02", "2024-01-03"}
	rowsOf := func(day string) []dpRow {
		return []dpRow{{day + "T01:00:00Z", "a", 1}, {day + "T02:00:00Z", "b", 10}, {day + "T03:00:00Z", "a", 100}}
	}
	// version builds a version's segments: two partitions for the first day
	// (a chunk spread over both historicals), one for the others.
	version := func(v string) (segs []*segmeta.DataSegment, ids []string) {
		for i, day := range days {
			iv := day + "/" + fmt.Sprintf("2024-01-%02d", i+2)
			rows := rowsOf(day)
			if i == 0 {
				segs = append(segs, f.segment("wiki", iv, v, 0, 2, rows[:2]), f.segment("wiki", iv, v, 1, 2, rows[2:]))
			} else {
				segs = append(segs, f.segment("wiki", iv, v, 0, 1, rows))
			}
		}
		for _, s := range segs {
			ids = append(ids, s.ID().String())
		}
		return segs, ids
	}
	v1, v1ids := version("2024-06-01T00:00:00.000Z")
	v2, v2ids := version("2024-07-01T00:00:00.000Z")

	const q = `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-04"],"granularity":"day",` +
		`"aggregations":[{"type":"count","name":"rows"},{"type":"longSum","name":"added","fieldName":"added"}]}`
	want := `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":3,"added":111}},` +
		`{"timestamp":"2024-01-02T00:00:00.000Z","result":{"rows":3,"added":111}},` +
		`{"timestamp":"2024-01-03T00:00:00.000Z","result":{"rows":3,"added":111}}]`
	check := func(when string) {
		t.Helper()
		if code, body, _ := b.query(t, q); code != 200 || body != want {
			t.Fatalf("%s: %d %s\nwant %s", when, code, body, want)
		}
	}

	f.publish(v1...)
	b.waitSegments(t, "wiki", len(v1))
	check("v1 loaded")

	// switch publishes (or marks unused, revealing) the next version while its
	// loads are held back, checks the old one stays, then lets them through
	// and checks every answer until only the next version is served.
	switchTo := func(what, nextVersion string, act func(), oldIDs, newIDs []string) {
		t.Helper()
		gate.hold(nextVersion)
		act()
		// Every new segment's download has started: the historicals have read
		// the assignment that lists them and acted on it (a historical drops
		// what it no longer holds before it starts loads).
		for range newIDs {
			select {
			case <-gate.started:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the new segments' downloads did not start", what)
			}
		}
		if !holdsAll(hs, oldIDs) {
			t.Fatalf("%s: the historicals dropped the old version before the new one was loaded: serving %v", what, append(hs[0].served(), hs[1].served()...))
		}
		check(what + ", new version loading")

		var stop atomic.Bool
		var wrong atomic.Value
		var queries atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					code, body, _ := b.query(t, q)
					queries.Add(1)
					if code != 200 || body != want {
						cs := b.b.Candidates([]string{"wiki"}, []interval.Interval{interval.Eternity}, -1)
						wrong.CompareAndSwap(nil, fmt.Sprintf("%d %s\ncands %+v\nA %v\nB %v", code, body, cs, hs[0].served(), hs[1].served()))
					}
				}
			}()
		}
		gate.release(nextVersion)
		eventually.True(t, what+": only the new version served", func() bool {
			var have []string
			for _, h := range hs {
				have = append(have, h.served()...)
			}
			for _, id := range oldIDs {
				if slices.Contains(have, id) {
					return false
				}
			}
			return holdsAll(hs, newIDs) && queries.Load() > 20 && cachedOnlyServed(t, hs[0]) && cachedOnlyServed(t, hs[1])
		})
		stop.Store(true)
		wg.Wait()
		if w := wrong.Load(); w != nil {
			t.Fatalf("%s: a query answered %s during the switch; want %s", what, w, want)
		}
		check(what + ", switched")
	}
	switchTo("REPLACE", v2[0].Version, func() { f.publish(v2...) }, v1ids, v2ids)
	switchTo("mark the new version unused", v1[0].Version, func() { f.markUnused("wiki", v2ids...) }, v2ids, v1ids)
}
