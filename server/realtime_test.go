package server

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/interval"
	"strata/querynode/broker"
	"strata/querynode/historical"
)

// startTaskServer serves a local-only historical node (what a middle manager
// runs for its tasks' rows) over loopback with the middle manager's routes.
func startTaskServer(t *testing.T) (*historical.Node, string) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	n, err := historical.New(historical.Config{Name: ts.Listener.Addr().String(), LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	s, err := New(Options{Roles: []string{RoleMiddleManager}, Historical: n, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn})})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); n.Close() })
	return n, ts.URL
}

// TestRealtimeRowsAndHandoff follows a task's rows from realtime segments
// through publish and hand-off: the broker counts them once at every step.
func TestRealtimeRowsAndHandoff(t *testing.T) {
	f := newDPFixture(t)
	old := f.segment("wiki", "2013-09-01/2013-09-02", "v1", 0, 1, wikiRows("2013-09-01", 0)) // added 1+2+3+4 = 10
	f.publish(old)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	task, taskURL := startTaskServer(t)
	b := startBroker(t, []string{h.url, taskURL}, nil)
	b.b.Start()
	sum := func(b *dpBroker) string {
		t.Helper()
		code, got, _ := b.query(t, `{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-01-01/2014-01-01"],"granularity":"all","aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"rows"}]}`)
		if code != 200 {
			t.Fatalf("query: %d %s", code, got)
		}
		return got
	}
	waitSum := func(what, want string) {
		t.Helper()
		eventually.True(t, what, func() bool { return strings.Contains(sum(b), want) })
	}
	waitSum("the published day", `"added":10,"rows":4`)

	// Rows not yet published: two realtime segments of the running task.
	rt1, p1 := f.segmentFile("wiki", "2013-09-02/2013-09-03", "realtime-task1", 0, 0, wikiRows("2013-09-02", 100))  // 410
	rt2, p2 := f.segmentFile("wiki", "2013-09-02/2013-09-03", "realtime-task1", 1, 0, wikiRows("2013-09-02", 1000)) // 4010
	if err := task.ServeLocal("task1", []historical.Served{{Segment: rt1, Path: p1, Realtime: true}, {Segment: rt2, Path: p2, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	if ann := task.Announce(""); len(ann.Segments) != 0 || len(ann.Realtime) != 2 {
		t.Fatalf("announcement: %d segments, %d realtime", len(ann.Segments), len(ann.Realtime))
	}
	waitSum("realtime rows", `"added":4430,"rows":12`)
	if got := b.b.DataSources(); len(got) != 1 || got[0] != "wiki" {
		t.Fatalf("datasources: %v", got)
	}

	// A broker whose view is a poll behind meets the hand-off: the realtime
	// segments it asks for are gone.
	stale := startBroker(t, []string{h.url, taskURL}, func(c *broker.Config) { c.PollPeriod = time.Hour })
	stale.b.Start()
	eventually.True(t, "stale broker sees the realtime rows", func() bool { return strings.Contains(sum(stale), `"added":4430`) })

	// Publish: the task's rows become one segment of the chunk, which the
	// task serves itself until a historical has loaded it.
	final, finalPath := f.segmentFile("wiki", "2013-09-02/2013-09-03", "v1", 0, 1,
		append(wikiRows("2013-09-02", 100), wikiRows("2013-09-02", 1000)...))
	if err := task.ServeLocal("task1", []historical.Served{{Segment: final, Path: finalPath}}); err != nil {
		t.Fatal(err)
	}
	// The stale broker asks for the realtime ids; the task answers they were
	// published as the final segment, which the broker then reads from it.
	if got := sum(stale); !strings.Contains(got, `"added":4430,"rows":12`) {
		t.Fatalf("stale broker after the swap: %s, want every row once", got)
	}
	waitSum("the task serves the published segment", `"added":4430,"rows":12`)
	f.publish(final)
	eventually.True(t, "the historical loads the published segment", func() bool {
		for _, id := range h.served() {
			if id == final.ID().String() {
				return true
			}
		}
		return false
	})
	eventually.True(t, "the broker sees the published segment on both servers", func() bool {
		for _, c := range b.b.Candidates([]string{"wiki"}, []interval.Interval{interval.Eternity}, -1) {
			if c.Interval == final.Interval.String() && len(c.Locations) == 2 {
				return true
			}
		}
		return false
	})
	for i := 0; i < 20; i++ {
		if got := sum(b); !strings.Contains(got, `"added":4430,"rows":12`) {
			t.Fatalf("during hand-off: %s", got)
		}
	}
	if err := task.ServeLocal("task1", nil); err != nil {
		t.Fatal(err)
	}
	waitSum("after hand-off", `"added":4430,"rows":12`)

	// A replacement the broker reads already (from the historical) is not
	// read twice: another task's realtime rows, published as that same
	// segment, meet a broker a poll behind.
	stale2 := startBroker(t, []string{h.url, taskURL}, func(c *broker.Config) { c.PollPeriod = time.Hour })
	if err := task.ServeLocal("task2", []historical.Served{{Segment: rt1, Path: p1, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	stale2.b.Start()
	eventually.True(t, "second stale broker's view", func() bool { return strings.Contains(sum(stale2), `"added":4840,"rows":16`) })
	if err := task.ServeLocal("task2", []historical.Served{{Segment: final, Path: finalPath}}); err != nil {
		t.Fatal(err)
	}
	if got := sum(stale2); !strings.Contains(got, `"added":4430,"rows":12`) {
		t.Fatalf("a replacement read from the historical was read again from the task: %s", got)
	}
	if err := task.ServeLocal("task2", nil); err != nil {
		t.Fatal(err)
	}
	if ann := task.Announce(""); len(ann.Segments)+len(ann.Realtime) != 0 {
		t.Fatalf("the task still serves %d segments", len(ann.Segments)+len(ann.Realtime))
	}
	if err := task.ServeLocal("", nil); err == nil {
		t.Fatal("ServeLocal without an owner succeeded")
	}
}
