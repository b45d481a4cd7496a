package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"strata/internal/eventually"
	"strata/props"
)

// TestSQLCancelNeedsWriteOnTheQuerysTables: cancelling a SQL query needs
// WRITE on every datasource it reads, as cancelling a native query does
// (before, any signed-in user could cancel anyone's SQL query).
func TestSQLCancelNeedsWriteOnTheQuerysTables(t *testing.T) {
	users := newTestUsers()
	f := newDPFixture(t)
	f.publish(f.segment("wiki", "2020-01-01/2020-01-02", "v1", 0, 1, []dpRow{{"2020-01-01T01:00:00Z", "a", 1}}))
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	h := f.startHistorical(t.TempDir(), func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/svc-internal/v1/query" {
				// Planning reads the columns (a segmentMetadata query); the
				// planned query runs until the test lets it end.
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if !bytes.Contains(body, []byte("segmentMetadata")) {
					<-release
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	h.node.Start()
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 1)
	p := props.Defaults()
	p.Set("svc.auth.authenticatorChain", `["test"]`)
	s, err := New(Options{Roles: []string{RoleBroker}, Broker: b.b, Props: p, Security: users.security()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.URL+"/svc/v2/sql", strings.NewReader(`{"query":"SELECT COUNT(*) FROM wiki","context":{"sqlQueryId":"slowsql"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", as("admin")["Authorization"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	eventually.True(t, "the SQL query to run", func() bool { return b.b.RunningTables("slowsql") != nil })
	if code, got, _ := callWith(t, "DELETE", ts.URL+"/svc/v2/sql/slowsql", "", "", as("allbut-DATASOURCE-WRITE")); code != 403 || !strings.Contains(got, `"resource":"DATASOURCE:wiki"`) {
		t.Errorf("cancel without WRITE on wiki: %d %s, want 403", code, got)
	}
	if code, got, _ := callWith(t, "DELETE", ts.URL+"/svc/v2/sql/slowsql", "", "", as("only-DATASOURCE-WRITE")); code != 202 {
		t.Errorf("cancel with WRITE: %d %s, want 202", code, got)
	}
	once.Do(func() { close(release) })
	if code := <-done; code == 200 {
		t.Errorf("the cancelled query answered 200")
	}
}
