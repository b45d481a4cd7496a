package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"strata/props"
)

func TestDruidPath(t *testing.T) {
	for in, want := range map[string]string{
		"/svc/v2/":                        "/druid/v2/",
		"/svc/v2":                         "/druid/v2",
		"/svc/v2/sql":                     "/druid/v2/sql",
		"/svc/coordinator/v1/rules":       "/druid/coordinator/v1/rules",
		"/svc/indexer/v1/task/{taskId}":   "/druid/indexer/v1/task/{taskId}",
		"/svc/worker/v1/enabled":          "/druid/worker/v1/enabled",
		"/svc/historical/v1/loadstatus":   "/druid/historical/v1/loadstatus",
		"/svc/broker/v1/readiness":        "/druid/broker/v1/readiness",
		"/svc/listen/v1/lookups":          "/druid/listen/v1/lookups",
		"/svc-ext/basic-security/authz/x": "/druid-ext/basic-security/authz/x",
		"/svc-internal/v1/query":          "/druid-internal/v1/query",
		"/status":                         "",
		"/status/health":                  "",
		"/debug/pprof/":                   "",
		"/svcx/v2":                        "",
		"/svc-other/v1":                   "",
	} {
		got, ok := DruidPath(in)
		if got != want || ok != (want != "") {
			t.Errorf("DruidPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	e := Endpoint{Path: "/svc/v2/"}
	if got := e.Paths(); !slices.Equal(got, []string{"/svc/v2/", "/svc/v2", "/druid/v2/", "/druid/v2"}) {
		t.Errorf("Paths of /svc/v2/: %v", got)
	}
	e = Endpoint{Path: "/status"}
	if got := e.Paths(); !slices.Equal(got, []string{"/status", "/status/"}) {
		t.Errorf("Paths of /status: %v", got)
	}
	e = Endpoint{Path: "/debug/pprof/", Prefix: true}
	if got := e.Paths(); !slices.Equal(got, []string{"/debug/pprof/"}) {
		t.Errorf("Paths of a prefix route: %v", got)
	}
}

// TestDruidAliasesAnswerTheSame calls every GET route of the table on a real
// cluster under each of its paths (Druid's alias, the trailing-slash forms)
// as a user allowed everything, and wants the answer its own path gives:
// the same status, and the same body where the calls of its own path just
// before and after agree (bodies with memory figures or times differ from
// call to call).
func TestDruidAliasesAnswerTheSame(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	vars := strings.NewReplacer("{dataSourceName}", "wiki", "{segmentId}", c.segmentID, "{taskId}", c.taskID,
		"{supervisorId}", "wiki", "{serverName}", c.historicalName, "{interval}", "2020-01-01_2020-01-02", "{host}", "h1:8091",
		"{queryId}", "q1", "{tier}", "__default", "{lookup}", "l", "{hostAndPort}", "h1:8083", "{lookupId}", "l",
		"{userName}", "admin", "{roleName}", "r")
	compared := 0
	for _, e := range (&Server{}).endpoints() {
		if e.Debug || !slices.Equal(e.Methods, get) {
			continue
		}
		var base string
		switch {
		case e.Needs == NeedsHistorical:
			base = c.historical
		case hasRole(e, RoleCoordinator) || hasRole(e, RoleOverlord) || hasRole(e, RoleMiddleManager):
			base = c.control
		case hasRole(e, RoleHistorical):
			base = c.historical
		case hasRole(e, RoleRouter):
			base = c.router
		default:
			base = c.broker
		}
		hdr := as("admin")
		if e.Access.Kind == InternalOnly {
			hdr = asInternal()
		}
		t.Run(e.Path, func(t *testing.T) {
			url := base + vars.Replace(e.Path)
			for _, alias := range e.Paths()[1:] {
				// The route's own answer before and after the alias's: when
				// those two agree, nothing changed in between.
				code, want, _ := callWith(t, "GET", url, "", "", hdr)
				if code == 404 && strings.Contains(want, "no such endpoint") {
					t.Fatalf("%s: %d %s", url, code, want)
				}
				got, body, _ := callWith(t, "GET", base+vars.Replace(alias), "", "", hdr)
				_, again, _ := callWith(t, "GET", url, "", "", hdr)
				if got != code || want == again && body != want {
					t.Errorf("%s: %d %s; %s answers %d %s", alias, got, body, e.Path, code, want)
				}
				compared++
			}
		})
	}
	if compared < 150 {
		t.Fatalf("compared %d aliases", compared)
	}
}

// Jersey takes a trailing slash, and plywood asks for /druid/v2/datasources/.
func TestTrailingSlashes(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	for _, path := range []string{"/svc/v2/datasources", "/svc/v2/datasources/", "/druid/v2/datasources", "/druid/v2/datasources/"} {
		code, body, _ := callWith(t, "GET", c.broker+path, "", "", as("admin"))
		if code != 200 || body != `["secret","wiki"]` {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	// Druid SQL as pydruid and Cube's driver send it.
	for _, path := range []string{"/svc/v2/sql", "/svc/v2/sql/", "/druid/v2/sql", "/druid/v2/sql/"} {
		code, body, _ := callWith(t, "POST", c.broker+path, "application/json", `{"query":"SELECT COUNT(*) AS n FROM wiki"}`, as("admin"))
		if code != 200 || body != `[{"n":1}]` {
			t.Errorf("POST %s: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/svc/v2", "/svc/v2/", "/druid/v2", "/druid/v2/"} {
		code, body, _ := callWith(t, "POST", c.broker+path, "application/json",
			`{"queryType":"timeseries","dataSource":"wiki","intervals":["2020-01-01/2020-01-02"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`, as("admin"))
		if code != 200 || !strings.Contains(body, `"result":{"n":1}`) {
			t.Errorf("POST %s: %d %s", path, code, body)
		}
	}
	// A path Druid does not have stays a JSON 404.
	if code, body, _ := callWith(t, "GET", c.broker+"/druid/v3/datasources", "", "", as("admin")); code != 404 || !strings.Contains(body, "no such endpoint") {
		t.Errorf("unknown path: %d %s", code, body)
	}
}

// Druid's X-Druid-Author and X-Druid-Comment are recorded in the audit as
// Strata's headers are; Strata's win when both are sent.
func TestDruidAuditHeaders(t *testing.T) {
	ts, _ := single(t, props.Defaults())
	post := func(v int, hdr map[string]string) {
		t.Helper()
		code, body, _ := callWith(t, "POST", ts.URL+"/druid/coordinator/v1/config", "application/json", fmt.Sprintf(`{"maxSegmentsToMove":%d}`, v), hdr)
		if code != 200 {
			t.Fatalf("config: %d %s", code, body)
		}
	}
	post(7, map[string]string{"X-Druid-Author": "druid-user", "X-Druid-Comment": "from a Druid tool"})
	post(8, map[string]string{"X-Druid-Author": "druid-user", "X-Svc-Author": "svc-user", "X-Svc-Comment": "svc comment", "X-Druid-Comment": "druid comment"})
	code, body, _ := call(t, "GET", ts.URL+"/druid/coordinator/v1/config/history?count=10", "", "")
	var hist []struct {
		AuditInfo struct {
			Author  string `json:"author"`
			Comment string `json:"comment"`
		} `json:"auditInfo"`
		Payload string `json:"payload"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &hist) != nil || len(hist) != 2 {
		t.Fatalf("history: %d %s", code, body)
	}
	got := map[string]string{}
	for _, h := range hist {
		got[h.AuditInfo.Author] = h.AuditInfo.Comment
	}
	if got["druid-user"] != "from a Druid tool" || got["svc-user"] != "svc comment" {
		t.Fatalf("audit: %s", body)
	}
}

// The router forwards Druid's paths where it forwards Strata's, keeping the
// path: /druid/v2/sql/task to the control plane (its leader), /druid/v2 and
// /druid/v2/... to brokers.
func TestRouterForwardsDruidPaths(t *testing.T) {
	backend := func(name string) string {
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", name, r.URL.Path)
		}))
		t.Cleanup(b.Close)
		return b.URL
	}
	control, broker, historical := backend("control"), backend("broker"), backend("historical")
	p := NewProxy([]Route{
		{Prefix: "/svc/coordinator/", Backends: []string{control}, Leader: true},
		{Prefix: "/svc/v2/sql/task", Backends: []string{control}, Leader: true},
		{Prefix: "/svc/v2/", Backends: []string{broker}},
		{Prefix: "/svc/v2", Backends: []string{broker}},
		{Prefix: "/svc/historical/", Backends: []string{historical}},
	}, 1<<20)
	r := mux.NewRouter()
	p.Mount(r)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	for path, want := range map[string]string{
		"/druid/coordinator/v1/rules":    "control /druid/coordinator/v1/rules",
		"/svc/coordinator/v1/rules":      "control /svc/coordinator/v1/rules",
		"/druid/v2/sql/task":             "control /druid/v2/sql/task",
		"/druid/v2/sql/task/":            "control /druid/v2/sql/task/",
		"/druid/v2/sql/":                 "broker /druid/v2/sql/",
		"/druid/v2":                      "broker /druid/v2",
		"/druid/v2/datasources/":         "broker /druid/v2/datasources/",
		"/druid/historical/v1/readiness": "historical /druid/historical/v1/readiness",
	} {
		if code, body, _ := call(t, "GET", ts.URL+path, "", ""); code != 200 || body != want {
			t.Errorf("%s: %d %q, want %q", path, code, body, want)
		}
	}
}

// Druid's clients gate on /status's version (plywood: at least 0.14.0);
// Strata's own is strataVersion.
func TestStatusVersion(t *testing.T) {
	ts, _ := single(t, props.Defaults())
	code, body, _ := call(t, "GET", ts.URL+"/status", "", "")
	var st struct {
		Version       string `json:"version"`
		StrataVersion string `json:"strataVersion"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Version != DruidVersion || st.StrataVersion != Version {
		t.Fatalf("/status: %d %s", code, body)
	}
	// plywood's check: the dotted numbers compared in order.
	var got [3]int
	if n, err := fmt.Sscanf(st.Version, "%d.%d.%d", &got[0], &got[1], &got[2]); n != 3 || err != nil {
		t.Fatalf("version %q is not dotted numbers", st.Version)
	}
	if slices.Compare(got[:], []int{0, 14, 0}) < 0 {
		t.Fatalf("version %s is below plywood's minimum 0.14.0", st.Version)
	}
}

// Through the router, Druid's /druid-ext/ reaches a real control node's
// handlers as its /svc-ext/ does; internal paths get a 404 saying routers
// do not forward them, while a route of the router's own process (its
// roles) still answers.
func TestRouterForwardsExtNotInternalPaths(t *testing.T) {
	ctl, _ := single(t, props.Defaults())
	p := NewProxy([]Route{
		{Prefix: "/svc/coordinator/", Backends: []string{ctl.URL}, Leader: true},
		{Prefix: "/svc-ext/", Backends: []string{ctl.URL}, Leader: true},
	}, 1<<20)
	r := mux.NewRouter()
	r.Path("/svc-internal/v1/own").HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "own") })
	p.Mount(r)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	for _, path := range []string{
		"/svc-ext/basic-security/authentication/loadStatus",
		"/druid-ext/basic-security/authentication/loadStatus",
		"/druid-ext/basic-security/authentication/loadStatus/",
	} {
		wantCode, want, _ := call(t, "GET", ctl.URL+path, "", "")
		if code, body, _ := call(t, "GET", ts.URL+path, "", ""); code != wantCode || body != want || code != http.StatusOK {
			t.Errorf("GET %s through the router: %d %q; the node answers %d %q", path, code, body, wantCode, want)
		}
	}
	for _, path := range []string{"/druid-internal/v1/timeline", "/svc-internal/v1/timeline/"} {
		if code, body, _ := call(t, "GET", ts.URL+path, "", ""); code != http.StatusNotFound || !strings.Contains(body, "routers do not forward") {
			t.Errorf("GET %s through the router: %d %s", path, code, body)
		}
	}
	if code, body, _ := call(t, "GET", ts.URL+"/svc-internal/v1/own", "", ""); code != 200 || body != "own" {
		t.Errorf("the router's own internal route: %d %s", code, body)
	}
}
