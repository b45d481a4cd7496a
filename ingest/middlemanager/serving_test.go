package middlemanager

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
	"strata/segmeta"
)

// recordingServer remembers what each owner serves.
type recordingServer struct {
	mu    sync.Mutex
	sets  map[string][]Served
	calls int
}

func (r *recordingServer) HoldLocal(owner string) func() { return func() {} }

func (r *recordingServer) ServeLocal(owner string, segs []Served) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if segs == nil {
		delete(r.sets, owner)
	} else {
		r.sets[owner] = segs
	}
	return nil
}

func (r *recordingServer) of(owner string) []Served {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sets[owner]
}

func testSegment(version string, part int32) *segmeta.DataSegment {
	return &segmeta.DataSegment{DataSource: "wiki", Interval: interval.Interval{Start: 1704067200000, End: 1704153600000},
		Version: version, ShardSpec: segmeta.NumberedShard(part, 0), Size: 3}
}

// handoffRunner serves a realtime segment, then hands off a published one.
type handoffRunner struct{ handoff bool }

func (h handoffRunner) Run(_ context.Context, t Task, env Env) (Report, error) {
	rt := filepath.Join(env.Dir(), "rt.seg")
	pub := filepath.Join(env.Dir(), "pub.seg")
	for _, p := range []string{rt, pub} {
		if err := os.WriteFile(p, []byte("seg"), 0o644); err != nil {
			return nil, err
		}
	}
	if err := env.Serve([]Served{{Segment: testSegment("realtime-"+t.ID, 0), Path: rt, Realtime: true}}); err != nil {
		return nil, err
	}
	if h.handoff {
		return nil, env.Handoff("wiki", []Served{{Segment: testSegment("v1", 0), Path: pub}})
	}
	return nil, nil
}

func init() {
	Register("test_handoff", handoffRunner{handoff: true})
	Register("test_realtime_only", handoffRunner{})
}

func TestServeAndHandoff(t *testing.T) {
	var asked atomic.Int32
	var query atomic.Value
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/handoffComplete") {
			w.WriteHeader(http.StatusServiceUnavailable) // no overlord: statuses stay unacknowledged
			return
		}
		query.Store(r.URL.RequestURI())
		if asked.Add(1) < 3 {
			w.Write([]byte("false"))
			return
		}
		w.Write([]byte("true"))
	}))
	defer coord.Close()
	rec := &recordingServer{sets: map[string][]Served{}}
	dir := t.TempDir()
	w, err := New(Config{Host: "127.0.0.1:9", Capacity: 2, DataDir: dir, Overlords: []string{coord.URL},
		HeartbeatPeriod: time.Hour, Serving: rec, HandoffPollPeriod: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Rows never published stop being served when the task ends.
	if err := w.Run(Task{ID: "rt1", Type: "test_realtime_only", DataSource: "wiki", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if st := finished(t, w, "rt1"); st.Status != "SUCCESS" {
		t.Fatalf("rt1: %+v", st)
	}
	if got := rec.of("rt1"); got != nil {
		t.Fatalf("rt1 still serves %v after it ended", got)
	}

	// Published segments outlive the task until the coordinator reports them
	// handed off; the worker owns their files meanwhile.
	if err := w.Run(Task{ID: "h1", Type: "test_handoff", DataSource: "wiki", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if st := finished(t, w, "h1"); st.Status != "SUCCESS" {
		t.Fatalf("h1: %+v", st)
	}
	var servedPath string
	if got := rec.of("h1"); len(got) == 1 && !got[0].Realtime && got[0].Segment.Version == "v1" {
		servedPath = got[0].Path
	}
	if servedPath == "" && asked.Load() < 3 {
		t.Fatalf("after the task ended, h1 serves %+v, want the published segment", rec.of("h1"))
	}
	eventually.True(t, "hand-off complete", func() bool { return rec.of("h1") == nil && asked.Load() >= 3 })
	want := "/svc/coordinator/v1/datasources/wiki/handoffComplete?interval=2024-01-01T00%3A00%3A00.000Z%2F2024-01-02T00%3A00%3A00.000Z&partitionNumber=0&version=v1"
	if got, _ := query.Load().(string); got != want {
		t.Fatalf("handoffComplete request %s, want %s", got, want)
	}
	eventually.True(t, "hand-off files removed", func() bool {
		_, err := os.Stat(filepath.Join(dir, "handoff", "h1"))
		return os.IsNotExist(err)
	})
	if servedPath != "" && filepath.Dir(filepath.Dir(servedPath)) != filepath.Join(dir, "handoff") {
		t.Fatalf("the published file was served from %s, not the worker's hand-off directory", servedPath)
	}
}

func TestServeWithoutServing(t *testing.T) {
	var e Env
	if err := e.Serve(nil); err != ErrNoServing {
		t.Fatalf("Serve: %v", err)
	}
	if err := e.Handoff("wiki", nil); err != ErrNoServing {
		t.Fatalf("Handoff: %v", err)
	}
}
