package historical

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

// A coordinator still electing its first leader answers 503 at start:
// routine, so it is logged at debug, not at info once per message. A 503
// after the first assignment was read (a failover) is news, at info.
func TestStartupUnavailableIsDebug(t *testing.T) {
	var mu sync.Mutex
	answers := []string{"no leader is elected right now", "this node was just elected leader and is catching up", "", "no leader is elected right now"}
	at := 0
	coord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := answers[min(at, len(answers)-1)]
		at++
		mu.Unlock()
		if a != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":%q}`, a)
			return
		}
		w.Write([]byte("[]"))
	}))
	defer coord.Close()
	var logs bytes.Buffer
	n, err := New(Config{Name: "h:1", Locations: []Location{{t.TempDir(), 1 << 20}}, Coordinators: []string{coord.URL}, Storage: deepNone{},
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs})})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.syncOnce()
	n.syncOnce()
	if logs.Len() > 0 {
		t.Fatalf("503s before the first assignment logged at info:\n%s", logs.String())
	}
	n.syncOnce() // read
	if logs.Len() > 0 {
		t.Fatalf("a first read after startup 503s logged a recovery:\n%s", logs.String())
	}
	n.syncOnce() // 503 after a read: a failover
	if got := logs.String(); strings.Count(got, "[INFO]") != 1 || !strings.Contains(got, "no leader is elected") {
		t.Fatalf("a 503 after the first read:\n%s", got)
	}
}
