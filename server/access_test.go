package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/auth"
	"strata/console"
	"strata/escalator"
	"strata/internal/eventually"
	"strata/props"
	"strata/storage/deep"
)

// testUsers is an in-test authenticator and authorizer (the basic one lives
// in auth/basic): users with passwords "pw-<name>" and permissions with
// regular-expression names, as Druid's roles hold them.
type testUsers struct {
	mu    sync.Mutex
	perms map[string][]auth.Permission
	calls int // Authenticate calls with credentials
}

func (u *testUsers) Authenticate(r *http.Request) (*auth.Identity, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	name, pw, ok := auth.ParseBasic(h)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if _, known := u.perms[name]; !ok || !known || pw != "pw-"+name {
		return nil, auth.ErrBadCredentials
	}
	return &auth.Identity{Name: name}, nil
}

func (u *testUsers) authCalls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls
}

func (u *testUsers) Authorize(id *auth.Identity, r auth.Resource, a auth.Action) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, p := range u.perms[id.Name] {
		if p.Resource.Type == r.Type && p.Action == a && regexp.MustCompile("^(?:"+p.Resource.Name+")$").MatchString(r.Name) {
			return true
		}
	}
	return false
}

func perm(t auth.ResourceType, name string, a auth.Action) auth.Permission {
	return auth.Permission{Resource: auth.ResourcePattern{Type: t, Name: name}, Action: a}
}

// newTestUsers: admin (everything), plain (nothing), wikireader (READ on
// the datasource wiki), and for each type and action "only-T-A" (that
// permission on every name) and "allbut-T-A" (every other permission).
func newTestUsers() *testUsers {
	u := &testUsers{perms: map[string][]auth.Permission{"plain": nil,
		"wikireader": {perm(auth.Datasource, "wiki", auth.Read)},
		"statewiki":  {perm(auth.Datasource, "wiki", auth.Read), perm(auth.State, ".*", auth.Read)}}}
	var all []auth.Permission
	for _, typ := range auth.ResourceTypes {
		for _, a := range []auth.Action{auth.Read, auth.Write} {
			all = append(all, perm(typ, ".*", a))
		}
	}
	u.perms["admin"] = all
	for _, p := range all {
		u.perms[fmt.Sprintf("only-%s-%s", p.Resource.Type, p.Action)] = []auth.Permission{p}
		var rest []auth.Permission
		for _, q := range all {
			if q != p {
				rest = append(rest, q)
			}
		}
		u.perms[fmt.Sprintf("allbut-%s-%s", p.Resource.Type, p.Action)] = rest
	}
	return u
}

func (u *testUsers) security() *Security {
	return &Security{Chain: []Authn{{Name: "test", Authenticator: u, Authorizer: u}}}
}

// as returns the Authorization header of a user.
func as(user string) map[string]string {
	return map[string]string{"Authorization": auth.BasicHeader(user, "pw-"+user)}
}

const internalPassword = "internal-secret"

func asInternal() map[string]string {
	return map[string]string{"Authorization": auth.BasicHeader("svc_system", internalPassword)}
}

// secureCluster is a real control node, historical and broker whose APIs
// run with the test users: the same components as the data-plane harness,
// each also served by a second Server with security on.
type secureCluster struct {
	control, historical, broker string
	router                      string // the router role's own routes (the console's files)
	fixture                     *dpFixture
	taskID                      string
	segmentID                   string
	historicalName              string
}

func startSecureCluster(t *testing.T, users *testUsers) *secureCluster {
	t.Helper()
	// newDPFixture's control node, keeping its Server to rebuild it below.
	p := props.Defaults()
	p.Set("svc.coordinator.startDelay", "100ms")
	p.Set("svc.coordinator.inventory.period", "50ms")
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p.Set("svc.storage.storageDirectory", store.Root())
	coord, node, base := singleServer(t, p, RoleCoordinator, RoleOverlord)
	f := &dpFixture{t: t, coord: coord.URL, node: node, store: &countingStorage{Local: store}}
	seg := f.segment("wiki", "2020-01-01/2020-01-02", "v1", 0, 1, []dpRow{{"2020-01-01T01:00:00Z", "a", 1}})
	f.publish(seg)
	f.publish(f.segment("secret", "2020-01-01/2020-01-02", "v1", 0, 1, []dpRow{{"2020-01-01T01:00:00Z", "b", 2}}))
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 1)
	b.waitSegments(t, "secret", 1)

	secProps := func() *props.Properties {
		p := props.Defaults()
		p.Set("svc.storage.storageDirectory", store.Root())
		p.Set("svc.escalator.internalClientPassword", internalPassword)
		p.Set("svc.debug.pprof", "true")
		p.Set("svc.auth.authenticatorChain", `["test"]`)
		// The walk sends a wrong password to every route from one address.
		p.Set("svc.auth.failedLogins.limit", "100000")
		return p
	}
	serve := func(o Options) string {
		o.Security, o.Props = users.security(), secProps()
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		return ts.URL
	}
	// The fixture's control server, rebuilt with security and the middle
	// manager's role (its routes answer 503 without a worker, which is
	// neither 401 nor 403).
	o := base.opts
	o.Roles = []string{RoleCoordinator, RoleOverlord, RoleMiddleManager}
	c := &secureCluster{fixture: f, segmentID: seg.ID().String(), historicalName: strings.TrimPrefix(h.url, "http://")}
	c.control = serve(o)
	c.historical = serve(Options{Roles: []string{RoleHistorical}, Historical: h.node})
	c.broker = serve(Options{Roles: []string{RoleBroker}, Broker: b.b})
	c.router = serve(Options{Roles: []string{RoleRouter}})
	c.taskID = submitTaskAs(t, c.control, "admin", `{"type":"noop","id":"walk-task","runTime":600000}`)
	// A suspended supervisor (it reads no stream) for the *All routes.
	if code, body, _ := callWith(t, "POST", c.control+"/svc/indexer/v1/supervisor", "application/json", kafkaSpec("wiki", "t", 1, true), as("admin")); code != 200 {
		t.Fatalf("supervisor: %d %s", code, body)
	}
	return c
}

func submitTaskAs(t *testing.T, base, user, spec string) string {
	t.Helper()
	code, body, _ := callWith(t, "POST", base+"/svc/indexer/v1/task", "application/json", spec, as(user))
	var out struct {
		Task string `json:"task"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil {
		t.Fatalf("submit %s as %s: %d %s", spec, user, code, body)
	}
	return out.Task
}

// openRoutes are the only routes that may be open: the health check and
// the web console's static files (served by the router alone).
var openRoutes = map[string]bool{healthPath: true, "/": true, "/unified-console.html": true, console.AssetPrefix: true}

// TestRouteAccessDeclared: every route of the table declares its access;
// only /status/health and the console's files are open, and every internal
// route is the internal client's.
func TestRouteAccessDeclared(t *testing.T) {
	for _, e := range (&Server{}).endpoints() {
		key := routeKey(e.Methods, e.Path)
		a := e.Access
		switch {
		case a.Kind == undeclared:
			t.Errorf("%s declares no Access", key)
		case a.Kind == Open && !openRoutes[e.Path]:
			t.Errorf("%s is open: only %v may be", key, slices.Sorted(maps.Keys(openRoutes)))
		case a.Kind == Open && e.Path != healthPath && !slices.Equal(e.Roles, []string{RoleRouter}):
			t.Errorf("%s: the console's files are the router's alone, not %v", key, e.Roles)
		case strings.HasPrefix(e.Path, "/svc-internal/") != (a.Kind == InternalOnly):
			t.Errorf("%s: %s; /svc-internal/ routes, and only they, are internalOnly", key, a.Kind)
		case slices.ContainsFunc(e.Paths(), escalator.InternalPath) != (a.Kind == InternalOnly):
			t.Errorf("%s: %s; its paths %v are internal ones, and only internalOnly routes' may be", key, a.Kind, e.Paths())
		case a.Kind == OnResource && (a.Type == "" || a.Action == "" || a.Name == "" && a.Var == "" && a.Names == nil):
			t.Errorf("%s: a resource access needs a type, an action and a name", key)
		case a.Var != "" && !strings.Contains(e.Path, "{"+a.Var+"}"):
			t.Errorf("%s: the resource name is {%s}, which the path lacks", key, a.Var)
		}
	}
}

// TestRouteAccessWalk calls every route of the table on a real cluster with
// security on: without credentials 401 (with WWW-Authenticate and Druid's
// body), with a user holding every permission but the route's 403, with
// one holding only the route's permission neither. Internal routes: 403
// for admin, allowed for the internal client.
func TestRouteAccessWalk(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	vars := strings.NewReplacer("{dataSourceName}", "wiki", "{segmentId}", c.segmentID, "{taskId}", c.taskID,
		"{supervisorId}", "wiki", "{serverName}", "h1", "{interval}", "2020-01-01_2020-01-02", "{host}", "h1:8091", "{queryId}", "q1")
	walked := 0
	for _, e := range (&Server{}).endpoints() {
		var base string
		switch {
		case e.Needs == NeedsHistorical:
			base = c.historical
		case hasRole(e, RoleCoordinator) || hasRole(e, RoleOverlord) || hasRole(e, RoleMiddleManager):
			base = c.control
		case hasRole(e, RoleHistorical):
			base = c.historical
		case hasRole(e, RoleBroker):
			base = c.broker
		case hasRole(e, RoleRouter):
			base = c.router
		default:
			t.Errorf("%s: no test server has its roles %v", e.Path, e.Roles)
			continue
		}
		method := http.MethodGet
		if len(e.Methods) > 0 {
			method = e.Methods[0]
		}
		url := base + vars.Replace(e.Path)
		if e.Debug && e.Path != "/debug/pprof/" {
			url += "?seconds=1"
		}
		body, ctype := "", ""
		if method == http.MethodPost {
			body, ctype = "{}", "application/json"
		}
		name := method + " " + e.Path
		walked++
		t.Run(name, func(t *testing.T) {
			code, got, h := callWith(t, method, url, ctype, body, nil)
			if e.Access.Kind == Open {
				if code == 401 || code == 403 {
					t.Fatalf("open route: %d %s", code, got)
				}
				return
			}
			if code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), `Basic realm="strata"`) || !strings.Contains(got, `"errorCode":"unauthorized"`) {
				t.Errorf("no credentials: %d %s (WWW-Authenticate %q), want 401", code, got, h.Get("WWW-Authenticate"))
			}
			if code, got, _ := callWith(t, method, url, ctype, body, map[string]string{"Authorization": auth.BasicHeader("admin", "wrong")}); code != 401 {
				t.Errorf("wrong password: %d %s, want 401", code, got)
			}
			allowed := func(user string, hdr map[string]string) {
				t.Helper()
				if code, got, _ := callWith(t, method, url, ctype, body, hdr); code == 401 || code == 403 {
					t.Errorf("%s: %d %s, want neither 401 nor 403", user, code, got)
				}
			}
			forbidden := func(user string, hdr map[string]string) {
				t.Helper()
				code, got, _ := callWith(t, method, url, ctype, body, hdr)
				if code != 403 || !strings.Contains(got, `"errorCode":"forbidden"`) || !strings.Contains(got, `"category":"FORBIDDEN"`) {
					t.Errorf("%s: %d %s, want 403 forbidden", user, code, got)
				}
			}
			switch e.Access.Kind {
			case InternalOnly:
				forbidden("admin", as("admin"))
				allowed("the internal client", asInternal())
			case OnResource:
				need := fmt.Sprintf("%s-%s", e.Access.Type, e.Access.Action)
				// No query runs here: TestCancelNeedsWriteOnTheQuerysTables.
				if e.Path != "/svc/v2/{queryId}" && e.Path != "/svc/v2/sql/{queryId}" {
					forbidden("allbut-"+need, as("allbut-"+need))
				}
				allowed("only-"+need, as("only-"+need))
				allowed("the internal client", asInternal())
			case Authenticated, Filtered, InBody:
				// Any user may call; filtered listings and the resources
				// of a body are tested below.
				allowed("plain", as("plain"))
			default:
				t.Fatalf("access %v", e.Access.Kind)
			}
		})
		// Druid's alias and the trailing-slash forms are the same guarded
		// handler (routes): none of them answers without credentials.
		for _, alias := range e.Paths()[1:] {
			url := base + vars.Replace(alias)
			if e.Debug && e.Path != "/debug/pprof/" {
				url += "?seconds=1"
			}
			walked++
			t.Run(method+" "+alias, func(t *testing.T) {
				code, got, _ := callWith(t, method, url, ctype, body, nil)
				switch {
				case e.Access.Kind == Open && (code == 401 || code == 403):
					t.Fatalf("open route: %d %s", code, got)
				case e.Access.Kind != Open && code != 401:
					t.Errorf("no credentials: %d %s, want 401", code, got)
				}
				if e.Access.Kind == InternalOnly {
					if code, got, _ := callWith(t, method, url, ctype, body, as("admin")); code != 403 {
						t.Errorf("admin on an internal route: %d %s, want 403", code, got)
					}
				}
			})
		}
	}
	if walked < 100 {
		t.Fatalf("walked %d routes", walked)
	}
}

func hasRole(e Endpoint, role string) bool {
	for _, r := range e.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// TestQueryNeedsReadOnEveryTable: a native query needs READ on every table
// it reads, those of unions and subqueries included; the broker's candidate
// listing for a query too.
func TestQueryNeedsReadOnEveryTable(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	wiki := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2020/2021"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	union := `{"queryType":"timeseries","dataSource":{"type":"union","dataSources":["wiki","secret"]},"intervals":["2020/2021"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	sub := `{"queryType":"timeseries","dataSource":{"type":"query","query":{"queryType":"scan","dataSource":"secret","intervals":["2020/2021"]}},"intervals":["2020/2021"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	join := `{"queryType":"timeseries","dataSource":{"type":"join","left":"wiki","right":"secret","rightPrefix":"s.","condition":"page == \"s.page\"","joinType":"LEFT"},"intervals":["2020/2021"],"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`
	for _, c2 := range []struct {
		user, body string
		code       int
	}{
		{"wikireader", wiki, 200},
		{"plain", wiki, 403},
		{"wikireader", union, 403},
		{"wikireader", sub, 403},
		{"admin", union, 200},
		{"admin", sub, 200},
		{"wikireader", join, 403}, // the right side of a join is read too
		{"admin", join, 200},
	} {
		for _, path := range []string{"/svc/v2/", "/svc/v2/candidates"} {
			code, got, _ := callWith(t, "POST", c.broker+path, "application/json", c2.body, as(c2.user))
			if code != c2.code {
				t.Errorf("%s %s as %s: %d %s, want %d", path, c2.body, c2.user, code, got, c2.code)
			}
			if code == 403 && !strings.Contains(got, `"resource":"DATASOURCE:secret"`) && !strings.Contains(got, `"resource":"DATASOURCE:wiki"`) {
				t.Errorf("403 does not name the datasource: %s", got)
			}
		}
	}
}

// TestListingsShowOnlyReadable: a user allowed to read wiki sees only wiki
// in the datasource and task listings; admin sees both.
func TestListingsShowOnlyReadable(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	submitTaskAs(t, c.control, "admin", `{"type":"noop","id":"secret-task","dataSource":"secret","runTime":600000}`)
	submitTaskAs(t, c.control, "admin", `{"type":"noop","id":"wiki-task","dataSource":"wiki","runTime":600000}`)
	list := func(url, user string) string {
		t.Helper()
		code, got, _ := callWith(t, "GET", url, "", "", as(user))
		if code != 200 {
			t.Fatalf("%s as %s: %d %s", url, user, code, got)
		}
		return got
	}
	for _, url := range []string{c.control + "/svc/coordinator/v1/metadata/datasources", c.broker + "/svc/v2/datasources"} {
		if got := list(url, "wikireader"); got != `["wiki"]` {
			t.Errorf("%s as wikireader: %s, want [\"wiki\"]", url, got)
		}
		if got := list(url, "admin"); got != `["secret","wiki"]` {
			t.Errorf("%s as admin: %s", url, got)
		}
	}
	segs := list(c.control+"/svc/coordinator/v1/metadata/segments", "wikireader")
	if !strings.Contains(segs, `"dataSource":"wiki"`) || strings.Contains(segs, "secret") {
		t.Errorf("segments as wikireader: %s", segs)
	}
	tasks := list(c.control+"/svc/indexer/v1/tasks", "wikireader")
	if !strings.Contains(tasks, "wiki-task") || strings.Contains(tasks, "secret-task") {
		t.Errorf("tasks as wikireader: %s", tasks)
	}
	if tasks := list(c.control+"/svc/indexer/v1/tasks", "admin"); !strings.Contains(tasks, "secret-task") {
		t.Errorf("tasks as admin: %s", tasks)
	}
	// A server's segments: STATE READ shows the server, and of its
	// segments those the user may read.
	serverSegs := c.control + "/svc/coordinator/v1/servers/" + c.historicalName + "/segments"
	eventually.True(t, "the inventory to hold both datasources", func() bool {
		code, got, _ := callWith(t, "GET", serverSegs, "", "", as("admin"))
		return code == 200 && strings.Contains(got, "secret_") && strings.Contains(got, "wiki_")
	})
	for _, url := range []string{serverSegs, c.control + "/svc/coordinator/v1/servers?full", c.control + "/svc/coordinator/v1/servers/" + c.historicalName + "?full"} {
		if got := list(url, "statewiki"); !strings.Contains(got, "wiki_") || strings.Contains(got, "secret") {
			t.Errorf("%s as statewiki: %s", url, got)
		}
	}
	if got := list(c.control+"/svc/coordinator/v1/intervals?full", "wikireader"); !strings.Contains(got, `"wiki"`) || strings.Contains(got, "secret") {
		t.Errorf("intervals as wikireader: %s", got)
	}
	// A task of a datasource the user may not write is refused before it exists.
	code, got, _ := callWith(t, "POST", c.control+"/svc/indexer/v1/task", "application/json",
		`{"type":"noop","id":"sneaky","dataSource":"secret"}`, as("wikireader"))
	if code != 403 {
		t.Errorf("task submit as wikireader: %d %s, want 403", code, got)
	}
}

// TestFailedLoginsRateLimited: wrong credentials from one address beyond
// the limit get 429 with a JSON body, even with the right password then,
// while the internal client and the health check still pass; the window's
// failures are reported once, counted.
func TestFailedLoginsRateLimited(t *testing.T) {
	users := newTestUsers()
	p := props.Defaults()
	p.Set("svc.auth.authenticatorChain", `["test"]`)
	p.Set("svc.auth.failedLogins.limit", "3")
	p.Set("svc.auth.failedLogins.window", "1h")
	p.Set("svc.auth.failureAuditPeriod", "10ms")
	p.Set("svc.escalator.internalClientPassword", internalPassword)
	reports := make(chan FailureReport, 10)
	sec := users.security()
	sec.RecordFailures = func(r FailureReport) error { reports <- r; return nil }
	s, err := New(Options{Roles: []string{RoleBroker}, Props: p, Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	sts := httptest.NewServer(s.Handler())
	defer sts.Close()
	url := sts.URL + "/status"
	wrong := map[string]string{"Authorization": auth.BasicHeader("admin", "guess")}
	// Missing credentials are counted but not a failed login.
	if code, _, _ := callWith(t, "GET", url, "", "", nil); code != 401 {
		t.Fatalf("no credentials: %d", code)
	}
	for i := range 3 {
		if code, got, _ := callWith(t, "GET", url, "", "", wrong); code != 401 {
			t.Fatalf("attempt %d: %d %s, want 401", i, code, got)
		}
	}
	calls := users.authCalls()
	code, got, _ := callWith(t, "GET", url, "", "", as("admin"))
	if code != 429 || !strings.Contains(got, `"errorCode":"tooManyFailedLogins"`) {
		t.Fatalf("over the limit: %d %s, want 429", code, got)
	}
	if users.authCalls() != calls {
		t.Error("a throttled request reached the authenticator")
	}
	if code, _, _ := callWith(t, "GET", url, "", "", asInternal()); code != 200 {
		t.Errorf("internal client from a throttled address: %d", code)
	}
	if code, _, _ := call(t, "GET", sts.URL+healthPath, "", ""); code != 200 {
		t.Errorf("health from a throttled address: %d", code)
	}
	// The windows' reports, summed until every failure is in one.
	var got2 FailureReport
	got2.ByAddress = map[string]int{}
	for got2.Total() < 5 {
		select {
		case r := <-reports:
			got2.Missing, got2.Wrong, got2.Throttled = got2.Missing+r.Missing, got2.Wrong+r.Wrong, got2.Throttled+r.Throttled
			for a, n := range r.ByAddress {
				got2.ByAddress[a] += n
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("reports so far %+v, want 5 failures", got2)
		}
	}
	if got2.Wrong != 3 || got2.Throttled != 1 || got2.Missing != 1 || got2.ByAddress["127.0.0.1"] != 5 {
		t.Errorf("report %+v, want 3 wrong, 1 throttled, 1 missing, all from 127.0.0.1", got2)
	}
}

// TestAuthFailuresInTheAudit: a control node writes a window's failures to
// the audit as one counted entry, whatever the number of requests.
func TestAuthFailuresInTheAudit(t *testing.T) {
	users := newTestUsers()
	p := props.Defaults()
	p.Set("svc.auth.authenticatorChain", `["test"]`)
	p.Set("svc.auth.failureAuditPeriod", "200ms")
	p.Set("svc.escalator.internalClientPassword", internalPassword)
	_, _, base := singleServer(t, nil, RoleCoordinator, RoleOverlord)
	o := base.opts
	o.Props, o.Security = p, users.security()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for range 7 {
		callWith(t, "GET", ts.URL+"/status", "", "", map[string]string{"Authorization": auth.BasicHeader("admin", "guess")})
	}
	entries := func() []string {
		code, body, _ := callWith(t, "GET", ts.URL+"/svc/coordinator/v1/audit?type=security.authFailures", "", "", asInternal())
		if code != 200 {
			t.Fatalf("audit: %d %s", code, body)
		}
		var out struct {
			Records []json.RawMessage `json:"records"`
		}
		json.Unmarshal([]byte(body), &out)
		var s []string
		for _, e := range out.Records {
			s = append(s, string(e))
		}
		return s
	}
	eventually.True(t, "the failures in the audit", func() bool { return len(entries()) > 0 })
	got := entries()
	if len(got) != 1 || !strings.Contains(got[0], "7 authentication failures from 1 addresses") {
		t.Errorf("audit entries %v, want one counting 7 failures", got)
	}
}

// TestCancelNeedsWriteOnTheQuerysTables: cancelling a running query, native
// or SQL, needs WRITE on every table it reads, as Druid's cancel does
// (before, any signed-in user could cancel anyone's SQL query).
func TestCancelNeedsWriteOnTheQuerysTables(t *testing.T) {
	for _, c := range []struct{ name, path, body, id string }{
		{"native", "/svc/v2/", `{"queryType":"timeseries","dataSource":"wiki","intervals":["2020/2021"],"granularity":"all","context":{"queryId":"slow"}}`, "slow"},
		{"SQL", "/svc/v2/sql", `{"query":"SELECT COUNT(*) FROM wiki","context":{"sqlQueryId":"slowsql"}}`, "slowsql"},
	} {
		t.Run(c.name, func(t *testing.T) {
			users := newTestUsers()
			f := newDPFixture(t)
			f.publish(f.segment("wiki", "2020-01-01/2020-01-02", "v1", 0, 1, []dpRow{{"2020-01-01T01:00:00Z", "a", 1}}))
			release := make(chan struct{})
			var once sync.Once
			defer once.Do(func() { close(release) })
			h := f.startHistorical(t.TempDir(), func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/svc-internal/v1/query" {
						// SQL planning reads the columns (a segmentMetadata
						// query); the query itself runs until the test lets
						// it end.
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
				req, _ := http.NewRequest("POST", ts.URL+c.path, strings.NewReader(c.body))
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
			eventually.True(t, "the query to run", func() bool { return b.b.RunningTables(c.id) != nil })
			cancel := ts.URL + strings.TrimSuffix(c.path, "/") + "/" + c.id
			if code, got, _ := callWith(t, "DELETE", cancel, "", "", as("allbut-DATASOURCE-WRITE")); code != 403 || !strings.Contains(got, `"resource":"DATASOURCE:wiki"`) {
				t.Errorf("cancel without WRITE on wiki: %d %s, want 403", code, got)
			}
			if code, got, _ := callWith(t, "DELETE", cancel, "", "", as("only-DATASOURCE-WRITE")); code != 202 {
				t.Errorf("cancel with WRITE: %d %s, want 202", code, got)
			}
			once.Do(func() { close(release) })
			if code := <-done; code == 200 {
				t.Errorf("the cancelled query answered 200")
			}
		})
	}
}

// TestBodyResourcesChecked: a supervisor spec needs WRITE on its
// datasource, and a SQL task READ on every table it reads.
func TestBodyResourcesChecked(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	for _, x := range []struct {
		path, body, user string
		code             int
	}{
		{"/svc/indexer/v1/supervisor", kafkaSpec("secret", "t", 1, true), "wikireader", 403},
		{"/svc/indexer/v1/supervisor", kafkaSpec("secret", "t", 1, true), "only-DATASOURCE-WRITE", 200},
		{"/svc/v2/sql/task", `{"query":"INSERT INTO copy SELECT * FROM secret PARTITIONED BY DAY"}`, "allbut-DATASOURCE-READ", 403},
		{"/svc/v2/sql/task", `{"query":"INSERT INTO copy SELECT * FROM nothere PARTITIONED BY DAY"}`, "allbut-DATASOURCE-READ", 403}, // not told whether it exists
		{"/svc/v2/sql/task", `{"query":"INSERT INTO copy SELECT * FROM secret PARTITIONED BY DAY"}`, "admin", 200},
	} {
		code, got, _ := callWith(t, "POST", c.control+x.path, "application/json", x.body, as(x.user))
		if code != x.code {
			t.Errorf("%s %s as %s: %d %s, want %d", x.path, x.body, x.user, code, got, x.code)
		}
	}
}
