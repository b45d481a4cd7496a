package lookupcache

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// A control plane still electing its first leader answers 503 at start:
// routine, so it is logged at debug, not once per process and message at
// info. A 503 after lookups were read once (a failover) is news, at info.
func TestStartupUnavailableIsDebug(t *testing.T) {
	var mu sync.Mutex
	answers := []string{"no leader is elected right now", "this node was just elected leader and is catching up", "", "no leader is elected right now"}
	at := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := answers[min(at, len(answers)-1)]
		at++
		mu.Unlock()
		if a != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":%q}`, a)
			return
		}
		fmt.Fprint(w, `{"etag":"1","lookups":{}}`)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	s := NewSyncer(New(""), SyncerConfig{Coordinators: []string{srv.URL}, Node: "127.0.0.1:1",
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs})})
	defer s.cancel() // never started: Close would wait for the poll loop
	s.poll()
	s.poll()
	if logs.Len() > 0 {
		t.Fatalf("503s before the first sync logged at info:\n%s", logs.String())
	}
	s.poll() // read
	if logs.Len() > 0 {
		t.Fatalf("a first sync after startup 503s logged a recovery:\n%s", logs.String())
	}
	s.poll() // 503 after a sync: a failover
	if got := logs.String(); strings.Count(got, "[INFO]") != 1 || !strings.Contains(got, "no leader is elected") {
		t.Fatalf("a 503 after the first sync:\n%s", got)
	}
}
