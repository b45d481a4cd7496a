package process

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"strata/props"
)

// The router role's own forwarding (routerProxy) sends Druid's paths where
// it sends Strata's, as Druid's tools call them: SQL tasks to the control
// plane, queries and SQL to brokers, worker calls to the middle manager;
// /svc-ext/ (Druid's /druid-ext/) too, with or without a trailing slash;
// internal calls never.
func TestRouterProxyForwardsDruidPaths(t *testing.T) {
	backend := func(name string) string {
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s", name, r.Method, r.URL.RequestURI())
		}))
		t.Cleanup(b.Close)
		return b.URL
	}
	p := props.Defaults()
	p.Set("svc.router.coordinatorUrls", backend("control"))
	p.Set("svc.router.brokerUrls", backend("broker"))
	p.Set("svc.router.historicalUrls", backend("historical"))
	p.Set("svc.router.workerUrls", backend("worker"))
	r := mux.NewRouter()
	routerProxy(p, nil).Mount(r)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	for _, c := range []struct{ method, path, want string }{
		{"POST", "/druid/v2/?pretty", "broker POST /druid/v2/?pretty"},
		{"POST", "/druid/v2", "broker POST /druid/v2"},
		{"POST", "/druid/v2/sql/", "broker POST /druid/v2/sql/"},
		{"GET", "/druid/v2/datasources/", "broker GET /druid/v2/datasources/"},
		{"GET", "/druid/broker/v1/loadstatus", "broker GET /druid/broker/v1/loadstatus"},
		{"POST", "/druid/v2/sql/task/", "control POST /druid/v2/sql/task/"},
		{"GET", "/druid/coordinator/v1/datasources", "control GET /druid/coordinator/v1/datasources"},
		{"GET", "/druid/indexer/v1/tasks", "control GET /druid/indexer/v1/tasks"},
		{"GET", "/druid/historical/v1/loadstatus", "historical GET /druid/historical/v1/loadstatus"},
		{"GET", "/druid/worker/v1/enabled", "worker GET /druid/worker/v1/enabled"},
		{"GET", "/svc/v2/datasources", "broker GET /svc/v2/datasources"},
		// Trailing slashes, as Jersey takes them.
		{"GET", "/druid/coordinator/v1/datasources/", "control GET /druid/coordinator/v1/datasources/"},
		{"GET", "/druid/historical/v1/loadstatus/", "historical GET /druid/historical/v1/loadstatus/"},
		{"GET", "/druid/worker/v1/enabled/", "worker GET /druid/worker/v1/enabled/"},
		// The security API (README, Security, calls it through the router)
		// lives on the control plane, as Druid's coordinator serves it.
		{"GET", "/svc-ext/basic-security/authentication/loadStatus", "control GET /svc-ext/basic-security/authentication/loadStatus"},
		{"GET", "/druid-ext/basic-security/authentication/loadStatus", "control GET /druid-ext/basic-security/authentication/loadStatus"},
		{"POST", "/druid-ext/basic-security/authorization/db/basic/roles/r/", "control POST /druid-ext/basic-security/authorization/db/basic/roles/r/"},
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != c.want {
			t.Errorf("%s %s: %d %q, want %q", c.method, c.path, resp.StatusCode, body, c.want)
		}
	}
	// Calls between processes are not forwarded: the router is what clients
	// reach, and the internal API is open without an internal password.
	for _, path := range []string{"/svc-internal/v1/segments/publish", "/druid-internal/v1/segments/publish", "/druid-internal/v1/query"} {
		req, _ := http.NewRequest("POST", ts.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.Contains(string(body), "routers do not forward") {
			t.Errorf("POST %s: %d %q, want a 404 saying routers do not forward it", path, resp.StatusCode, body)
		}
	}
}
