package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"
)

func proxyFor(t *testing.T, routes []Route, wait time.Duration) string {
	t.Helper()
	p := NewProxy(routes, 1<<20)
	p.LeaderWait = wait
	r := mux.NewRouter()
	p.Mount(r)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return ts.URL
}

// The router waits out a 503 that means "no leader yet" (RetryHeader) but
// hands any other 503, an answer such as an unhealthy supervisor, straight on.
func TestRouterRetriesOnlyElection503s(t *testing.T) {
	var calls atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/svc/indexer/v1/supervisor/x/health":
			writeJSON(w, http.StatusServiceUnavailable, map[string]bool{"healthy": false})
		default:
			if calls.Add(1) <= 3 {
				writeUnavailable(w, "no leader is elected right now")
				return
			}
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	defer backend.Close()
	url := proxyFor(t, []Route{{Prefix: "/svc/indexer/", Backends: []string{backend.URL}, Leader: true}}, 5*time.Second)

	start := time.Now()
	code, body, _ := call(t, "GET", url+"/svc/indexer/v1/supervisor/x/health", "", "")
	if code != 503 || body != `{"healthy":false}` || time.Since(start) > time.Second {
		t.Fatalf("answer 503: %d %s after %s", code, body, time.Since(start))
	}
	code, body, _ = call(t, "GET", url+"/svc/indexer/v1/tasks", "", "")
	if code != 200 || body != `{"ok":true}` || calls.Load() != 4 {
		t.Fatalf("election 503s: %d %s after %d calls", code, body, calls.Load())
	}
	// Past the wait, the election 503 is passed on as a JSON error.
	calls.Store(-1000)
	url = proxyFor(t, []Route{{Prefix: "/svc/indexer/", Backends: []string{backend.URL}, Leader: true}}, 300*time.Millisecond)
	code, body, _ = call(t, "GET", url+"/svc/indexer/v1/tasks", "", "")
	if code != 503 || !strings.Contains(body, "no leader is elected") {
		t.Fatalf("after the wait: %d %s", code, body)
	}
}

// A route whose backends come from discovery balances round-robin over the
// brokers it lists at each request, skips one that refuses the connection,
// follows the list as it changes, and says so when it is empty.
func TestRouterBalancesOverDiscoveredBrokers(t *testing.T) {
	var hits [2]atomic.Int64
	var brokers []string
	for i := range hits {
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			fmt.Fprintf(w, `{"broker":%d}`, i)
		}))
		t.Cleanup(b.Close)
		brokers = append(brokers, b.URL)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // refuses connections
	var live atomic.Pointer[[]string]
	set := func(l ...string) { live.Store(&l) }
	set(dead.URL, brokers[0], brokers[1])
	url := proxyFor(t, []Route{{Prefix: "/svc/v2/", Discover: func() []string { return *live.Load() }}}, time.Second)
	for i := 0; i < 30; i++ {
		resp, err := http.Post(url+"/svc/v2/", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("query %d: %d", i, resp.StatusCode)
		}
	}
	if a, b := hits[0].Load(), hits[1].Load(); a+b != 30 || a < 10 || b < 10 {
		t.Fatalf("queries per broker: %d, %d", a, b)
	}
	// The list changes: only the second broker is live now.
	set(brokers[1])
	before := hits[0].Load()
	for i := 0; i < 5; i++ {
		resp, err := http.Post(url+"/svc/v2/", "application/json", strings.NewReader(`{}`))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("query after the change: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	if hits[0].Load() != before {
		t.Fatal("a broker no longer listed got queries")
	}
	set()
	resp, err := http.Post(url+"/svc/v2/", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("no broker known: %d", resp.StatusCode)
	}
}
