package ingest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/ingest"
	"strata/internal/eventually"
	"strata/interval"
	"strata/protocol"
	"strata/querynode/broker"
	"strata/querynode/historical"
	"strata/segmeta"
	"strata/server"
	"strata/storage/segment"
)

// heldPolls is a broker's transport to its data servers that lets the
// first announcement poll through and holds every later one until release
// is closed: a broker slow to learn what the historicals loaded.
type heldPolls struct {
	polls   atomic.Int32
	held    chan struct{} // closed when a poll is being held
	release chan struct{}
	once    sync.Once
}

func (h *heldPolls) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == protocol.AnnouncePath && h.polls.Add(1) > 1 {
		h.once.Do(func() { close(h.held) })
		select {
		case <-h.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// The trust problem of issue 20: right after a task's load waiter saw its
// segments on one broker, queries through the routers went to the other
// broker, which had not polled the historicals since, and answered 0 rows.
// The waiter now returns only once every live broker lists the segments: it
// keeps waiting while one broker's inventory poll is held, returns once
// that broker has learned them, and stops waiting for a broker that
// discovery no longer lists.
func TestWaitLoadedWaitsForEveryLiveBroker(t *testing.T) {
	quiet := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: io.Discard})
	// A data server that serves a segment file it is handed (a middle
	// manager's historical node), behind its real HTTP handler.
	hist, err := historical.New(historical.Config{Name: "h", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hist.Start()
	hs, err := server.New(server.Options{Roles: []string{server.RoleMiddleManager}, Historical: hist, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	histSrv := httptest.NewServer(hs.Handler())
	t.Cleanup(func() { histSrv.Close(); hist.Close() })

	// count wraps a broker's handler to count the load waiter's questions.
	startBroker := func(rt http.RoundTripper, asked *atomic.Int32) (*broker.Broker, string) {
		ts := httptest.NewUnstartedServer(nil)
		b, err := broker.New(broker.Config{Name: ts.Listener.Addr().String(), Historicals: []string{histSrv.URL},
			PollPeriod: 10 * time.Millisecond, Client: &http.Client{Transport: rt}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		s, err := server.New(server.Options{Roles: []string{server.RoleBroker}, Broker: b, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		h := s.Handler()
		ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/candidates") {
				asked.Add(1)
			}
			h.ServeHTTP(w, r)
		})
		ts.Start()
		b.Start()
		t.Cleanup(func() { b.Close(); ts.CloseClientConnections(); ts.Close() })
		return b, ts.URL
	}
	slow := &heldPolls{held: make(chan struct{}), release: make(chan struct{})}
	stuck := &heldPolls{held: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(stuck.release) })
	var fastAsked, slowAsked, stuckAsked atomic.Int32
	fast, fastURL := startBroker(http.DefaultTransport, &fastAsked)
	slowB, slowURL := startBroker(slow, &slowAsked)
	_, stuckURL := startBroker(stuck, &stuckAsked)
	<-slow.held // each has polled once (nothing served yet) and is held in its second poll
	<-stuck.held

	seg, path := segmentFile(t, "2024-01-01/2024-01-02", 3)
	if err := hist.ServeLocal("task", []historical.Served{{Segment: seg, Path: path}}); err != nil {
		t.Fatal(err)
	}
	sees := func(b *broker.Broker) bool {
		return len(b.Candidates([]string{"wiki"}, []interval.Interval{interval.Eternity}, -1)) == 1
	}
	eventually.True(t, "the fast broker to list the segment", func() bool { return sees(fast) })

	var mu sync.Mutex
	live := []string{fastURL, slowURL, stuckURL}
	c := &ingest.Cluster{Coordinators: []string{"http://127.0.0.1:1"}, FailoverWait: time.Millisecond, HTTP: http.DefaultClient,
		Brokers: func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(live) }}
	done := make(chan error, 1)
	go func() { done <- c.WaitLoaded(context.Background(), []*segmeta.DataSegment{seg}, time.Minute) }()
	returned := func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
			return false
		}
	}

	// Two full rounds of questions while the slow broker cannot learn.
	eventually.True(t, "the waiter to ask every broker twice", func() bool { return returned() || slowAsked.Load() >= 2 && stuckAsked.Load() >= 2 })
	if returned() {
		t.Fatalf("the load waiter returned (%v) while broker %s did not list the segment yet", <-done, slowURL)
	}
	close(slow.release)
	eventually.True(t, "the slow broker to list the segment", func() bool { return sees(slowB) })
	n := stuckAsked.Load()
	eventually.True(t, "the waiter to ask again", func() bool { return returned() || stuckAsked.Load() >= n+2 })
	if returned() {
		t.Fatalf("the load waiter returned (%v) while broker %s did not list the segment yet", <-done, stuckURL)
	}

	// The stuck broker leaves the cluster: it is no longer waited for.
	mu.Lock()
	live = live[:2]
	mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("load wait: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the load waiter still waits for a broker that left")
	}
}

// segmentFile writes a published segment of datasource wiki with rows rows.
func segmentFile(t *testing.T, ivs string, rows int) (*segmeta.DataSegment, string) {
	t.Helper()
	iv, err := interval.Parse(ivs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := segment.NewWriter(segment.Spec{Fields: []segment.Field{{Name: "x", Kind: segment.KindLong}},
		Metrics: []segment.Metric{{Type: "longSum", Name: "x", FieldName: "x"}}, Interval: segment.Interval{Start: iv.Start, End: iv.End}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		w.Add(segment.Row{Time: iv.Start + int64(i), Values: []segment.Value{segment.Long(int64(i + 1))}})
	}
	path := filepath.Join(t.TempDir(), "f.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: "v1", Metrics: []string{"x"},
		ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes}, path
}
