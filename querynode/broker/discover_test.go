package broker

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/protocol"
)

// With Discover, the broker polls the data servers it lists: a newcomer's
// segments become readable, and a server the list drops stops being polled
// and its segments leave the view (a replica elsewhere stays).
func TestBrokerFollowsDiscoveredDataServers(t *testing.T) {
	s1 := seg(t, "ds", "2020-01-01/2020-01-02", "v1", 0, 1)
	s2 := seg(t, "ds", "2020-01-02/2020-01-03", "v1", 0, 1)
	var polls [2]atomic.Int64
	serve := func(i int, a *protocol.Announcement) *httptest.Server {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			polls[i].Add(1)
			json.NewEncoder(w).Encode(a)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	h1 := serve(0, ann("v1", s1, s2))
	h2 := serve(1, ann("v1", s1))
	var list atomic.Pointer[[]string]
	set := func(l ...string) { list.Store(&l) }
	set(h1.URL + "/")
	b, err := New(Config{Name: "b:1", PollPeriod: 20 * time.Millisecond, Discover: func() []string { return *list.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	if b.Ready() {
		t.Fatal("ready before discovery listed any data server")
	}
	b.Start()
	defer b.Close()
	holders := func(ivs string) []string {
		out := resolved(b.view, "ds", ivs)
		slices.Sort(out)
		return out
	}
	h1host, h2host := h1.Listener.Addr().String(), h2.Listener.Addr().String()
	eventually.True(t, "ready once h1 was polled", b.Ready)
	if got := holders("2020-01-01/2020-01-03"); len(got) != 2 {
		t.Fatalf("ready without h1's segments: %v", got)
	}
	set(h1.URL, h2.URL)
	want := s1.ID().String() + "@" + s1.Interval.String() + "@"
	eventually.True(t, "h2 polled and holding s1 too", func() bool {
		got := holders("2020-01-01/2020-01-02")
		return len(got) == 1 && (got[0] == want+h1host+"+"+h2host || got[0] == want+h2host+"+"+h1host)
	})
	set(h2.URL) // h1 is gone
	eventually.True(t, "h1's segments gone, h2's replica left", func() bool {
		got := holders("2020-01-01/2020-01-03")
		return len(got) == 1 && got[0] == want+h2host
	})
	n := polls[0].Load()
	b.view.mu.RLock()
	count := len(b.view.servers)
	b.view.mu.RUnlock()
	if count != 1 {
		t.Fatalf("%d servers in the view, want 1", count)
	}
	// An empty list (the control plane not reached) changes nothing.
	set()
	p := polls[1].Load()
	eventually.True(t, "h2 still polled", func() bool { return polls[1].Load() > p+3 })
	if len(holders("2020-01-01/2020-01-02")) != 1 {
		t.Fatal("an empty discovery list dropped the data servers")
	}
	if polls[0].Load() != n {
		t.Fatalf("h1 polled %d more times after it left", polls[0].Load()-n)
	}
}
