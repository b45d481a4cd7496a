package server

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/ingest/middlemanager"
	"strata/protocol"
	"strata/querynode/broker"
	"strata/querynode/historical"
)

// routeKey names a route by its methods and path ("*" for any method).
func routeKey(methods []string, path string) string {
	if len(methods) == 0 {
		return "* " + path
	}
	m := slices.Clone(methods)
	slices.Sort(m)
	return strings.Join(m, ",") + " " + path
}

// TestRouteTable checks every entry of the route table: a full literal path
// (written out in routes.go, so grep finds it) with Druid's variable names,
// methods, known roles, a handler, leader routes only on control-plane roles,
// and no two entries for the same method and path.
func TestRouteTable(t *testing.T) {
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{RoleCoordinator: true, RoleOverlord: true, RoleBroker: true, RoleHistorical: true, RoleMiddleManager: true, RoleRouter: true}
	druidVars := map[string]bool{"dataSourceName": true, "segmentId": true, "interval": true, "serverName": true,
		"taskId": true, "supervisorId": true, "host": true, "queryId": true,
		"userName": true, "roleName": true, // the basic-security API's
		"tier": true, "lookup": true, "hostAndPort": true, "lookupId": true} // the lookups API's
	varRe := regexp.MustCompile(`\{([^}]*)\}`)
	seen := map[string]bool{}
	paths := map[string]bool{}
	for _, e := range (&Server{}).endpoints() {
		t.Run(routeKey(e.Methods, e.Path), func(t *testing.T) {
			if !strings.HasPrefix(e.Path, "/") {
				t.Errorf("path %q does not start with /", e.Path)
			}
			if !strings.Contains(string(src), "Path: "+strconv.Quote(e.Path)) {
				t.Errorf("path %q is not written out as a literal in routes.go", e.Path)
			}
			for _, m := range varRe.FindAllStringSubmatch(e.Path, -1) {
				if !druidVars[m[1]] {
					t.Errorf("path variable {%s} is not one of Druid's names %v", m[1], druidVars)
				}
			}
			if len(e.Methods) == 0 && !e.Debug {
				t.Error("no methods (only the profiler's routes take any method)")
			}
			if len(e.Roles) == 0 {
				t.Error("no roles")
			}
			for _, r := range e.Roles {
				if !known[r] {
					t.Errorf("unknown role %q", r)
				}
				// leaderOnly and leaderRead need the control node.
				if e.Leader != Local && r != RoleCoordinator && r != RoleOverlord {
					t.Errorf("leader route served by the %s role, which has no control node", r)
				}
			}
			if e.Handler == nil {
				t.Error("no handler")
			}
			methods := e.Methods
			if len(methods) == 0 {
				methods = []string{"*"}
			}
			for _, m := range methods {
				if seen[m+" "+e.Path] {
					t.Errorf("%s %s is in the table twice", m, e.Path)
				}
				seen[m+" "+e.Path] = true
			}
		})
		paths[e.Path] = true
	}
	// The internal paths other packages call are the table's.
	for _, p := range []string{middlemanager.PathRun, middlemanager.PathRegister, middlemanager.PathHeartbeat,
		middlemanager.PathTaskStatus, middlemanager.PathTaskAction, middlemanager.PathWorkerEnabled,
		protocol.AnnouncePath, protocol.QueryPath, protocol.AssignedPath + "{serverName}"} {
		if !paths[p] {
			t.Errorf("%s is not in the route table", p)
		}
	}
}

// TestRouterHoldsOnlyTheTable registers the routes of a process with every
// role and the profiler on, and checks that the router holds exactly the
// table's routes with their Druid aliases and trailing-slash forms
// (Endpoint.Paths), in the table's order (gorilla/mux takes the first match).
func TestRouterHoldsOnlyTheTable(t *testing.T) {
	s := &Server{
		roles:  map[string]bool{},
		router: mux.NewRouter(),
		pprof:  true,
		log:    hclog.NewNullLogger(),
		opts:   Options{Historical: new(historical.Node), Broker: new(broker.Broker)},
	}
	for _, r := range []string{RoleCoordinator, RoleOverlord, RoleBroker, RoleHistorical, RoleMiddleManager, RoleRouter} {
		s.roles[r] = true
	}
	s.routes()
	var registered []string
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		methods, _ := route.GetMethods() // none: any method
		registered = append(registered, routeKey(methods, path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for _, e := range s.endpoints() {
		for _, p := range e.Paths() {
			table = append(table, routeKey(e.Methods, p))
		}
	}
	if !slices.Equal(registered, table) {
		for _, k := range registered {
			if !slices.Contains(table, k) {
				t.Errorf("the router holds %s, which is not in the table", k)
			}
		}
		for _, k := range table {
			if !slices.Contains(registered, k) {
				t.Errorf("the table's %s is not registered", k)
			}
		}
		t.Errorf("the router's routes differ from the table (order or content):\nrouter: %v\ntable:  %v", registered, table)
	}
}

// A control role without its runtime is a wiring mistake, refused at start
// rather than answered with a nil dereference at the first request.
func TestControlRolesNeedTheirRuntime(t *testing.T) {
	for _, role := range []string{RoleCoordinator, RoleOverlord} {
		_, err := New(Options{Roles: []string{role}, Node: new(cluster.Node)})
		if err == nil || !strings.Contains(err.Error(), "Options.") {
			t.Errorf("%s without its runtime: %v", role, err)
		}
	}
}
