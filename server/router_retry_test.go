package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"strata/querynode/broker"
)

// The restarts of issue 20: brokers b1 and b2 restarted back to back gave
// about a second of 503s from the routers, whose broker list (from their
// last heartbeat) still lacked b1 when b2 went down. A router now re-reads
// discovery when no listed broker takes a query, and sends it on when a
// broker answers that it did not run it (a broker shutting down); a 503
// that does not say so passes on untouched, since the query may have run.
func TestRouterFindsRestartedBrokerAndSkipsNotExecuted(t *testing.T) {
	// A real broker behind its real handler, counting the queries it gets.
	type realBroker struct {
		b       *broker.Broker
		url     string
		queries atomic.Int32
		ts      *httptest.Server
	}
	start := func() *realBroker {
		rb := &realBroker{}
		rb.ts = httptest.NewUnstartedServer(nil)
		b, err := broker.New(broker.Config{Name: rb.ts.Listener.Addr().String(), PollPeriod: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Options{Roles: []string{RoleBroker}, Broker: b})
		if err != nil {
			t.Fatal(err)
		}
		h := s.Handler()
		rb.ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rb.queries.Add(1)
			h.ServeHTTP(w, r)
		})
		rb.ts.Start()
		b.Start()
		rb.b, rb.url = b, rb.ts.URL
		t.Cleanup(func() { b.Close(); rb.ts.CloseClientConnections(); rb.ts.Close() })
		return rb
	}
	b1, b2 := start(), start()

	// Discovery as the router sees it: its list is the leader's membership
	// as of its last heartbeat, and Refresh fetches the current one.
	var mu sync.Mutex
	membership := []string{b1.url} // the leader's: b1 is back
	routerList := []string{b2.url} // the router's, one heartbeat old
	var refreshes atomic.Int32
	rt := Route{Prefix: "/svc/v2/",
		Discover: func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(routerList) },
		Refresh: func(context.Context, time.Time) {
			refreshes.Add(1)
			mu.Lock()
			routerList = slices.Clone(membership)
			mu.Unlock()
		}}
	proxy := NewProxy([]Route{rt}, 1<<20)
	r := mux.NewRouter()
	proxy.Mount(r)
	router := httptest.NewServer(r)
	defer router.Close()
	query := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`

	// b2 stops (connection refused); the router's list does not know b1.
	b2.ts.Close()
	code, body, _ := call(t, "POST", router.URL+"/svc/v2/", "application/json", query)
	if code != 200 || b1.queries.Load() != 1 {
		t.Fatalf("query through the router while its list named only a stopped broker: %d %s (b1 got %d queries)", code, body, b1.queries.Load())
	}
	if refreshes.Load() != 1 {
		t.Fatalf("discovery refreshed %d times, want once", refreshes.Load())
	}

	// A broker shutting down answers 503 "did not run": the router sends
	// the query to another broker.
	b3 := start()
	b3.b.Close()
	mu.Lock()
	routerList, membership = []string{b3.url, b1.url}, []string{b3.url, b1.url}
	mu.Unlock()
	code, body, hdr := call(t, "POST", b3.url+"/svc/v2/", "application/json", query)
	if code != http.StatusServiceUnavailable || hdr.Get(NotExecutedHeader) == "" {
		t.Fatalf("a closing broker answered %d %s (header %q)", code, body, hdr.Get(NotExecutedHeader))
	}
	before1, before3 := b1.queries.Load(), b3.queries.Load()
	for i := range 2 { // the round-robin starts at each broker once
		code, body, _ = call(t, "POST", router.URL+"/svc/v2/", "application/json", query)
		if code != 200 {
			t.Fatalf("query %d through the router with a closing broker listed: %d %s", i, code, body)
		}
	}
	if got := b1.queries.Load() - before1; got != 2 {
		t.Fatalf("b1 ran %d of 2 queries (b3 was asked %d times)", got, b3.queries.Load()-before3)
	}

	// Any other 503 is the backend's answer: passed on, not resent (the
	// query may have run).
	var plain atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plain.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error":"the backend's own answer"}`)
	}))
	defer other.Close()
	mu.Lock()
	routerList, membership = []string{other.URL}, []string{other.URL, b1.url}
	mu.Unlock()
	before1 = b1.queries.Load()
	code, body, _ = call(t, "POST", router.URL+"/svc/v2/", "application/json", query)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "the backend's own answer") || plain.Load() != 1 || b1.queries.Load() != before1 {
		t.Fatalf("a plain 503: %d %s (backend asked %d times, b1 %d)", code, body, plain.Load(), b1.queries.Load()-before1)
	}

	// Every broker gone for good: 503 once the wait is over.
	proxy.BackendWait = 300 * time.Millisecond
	b1.ts.Close()
	mu.Lock()
	routerList, membership = []string{b1.url}, nil
	mu.Unlock()
	code, body, _ = call(t, "POST", router.URL+"/svc/v2/", "application/json", query)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "no backend answered") {
		t.Fatalf("with no broker: %d %s", code, body)
	}
}
