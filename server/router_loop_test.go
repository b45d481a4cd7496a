package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
)

// TestRouterDoesNotForwardToItself: a process that is both a control node
// and a router (strata server --roles coordinator,overlord,router) sends a
// path its own table lacks to the leader, which is itself: the request went
// round without end (each turn one more pending request) and the caller
// never got an answer. A request a router already forwarded is answered 404.
func TestRouterDoesNotForwardToItself(t *testing.T) {
	r := mux.NewRouter()
	ts := httptest.NewServer(r)
	defer ts.Close()
	p := NewProxy([]Route{{Prefix: "/svc/coordinator/", Backends: []string{ts.URL}, Leader: true}}, 1<<20)
	p.Mount(r)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	resp, err := client.Get(ts.URL + "/svc/coordinator/v1/nope")
	if err != nil {
		t.Fatalf("no answer after %s: %v", time.Since(start), err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	body.Write(buf[:n])
	if resp.StatusCode != 404 || !strings.Contains(body.String(), "no such endpoint: GET /svc/coordinator/v1/nope") {
		t.Fatalf("%d %s, want the JSON 404", resp.StatusCode, body.String())
	}
}
