package server

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"strata/auth"
	"strata/fsm"
	"strata/segmeta"
)

// Access is what a caller must be allowed to call an endpoint, declared in
// the route table beside the endpoint (issue 18). With security off (no
// authenticator configured) it is not checked.
type Access struct {
	Kind AccessKind
	// Type and Action are the permission OnResource needs.
	Type   auth.ResourceType
	Action auth.Action
	// Name is the resource's fixed name ("CONFIG", "STATE"), Var the path
	// variable holding it ({dataSourceName}); Names derives the names from
	// the request and the state (a task's or a supervisor's datasource):
	// every name it returns must be allowed. nil names mean the object does
	// not exist, and the handler answers its 404.
	Name  string
	Var   string
	Names func(s *Server, r *http.Request) []string
}

// AccessKind says how an endpoint is protected.
type AccessKind int

const (
	// undeclared is the zero value: a route without a declaration, which
	// TestRouteAccessDeclared refuses.
	undeclared AccessKind = iota
	// Open endpoints need no credentials (/status/health, for load balancers).
	Open
	// Authenticated endpoints need a known user and no permission: they say
	// nothing about any resource.
	Authenticated
	// InternalOnly endpoints are Strata's processes calling each other: only
	// the escalator's internal client may call them.
	InternalOnly
	// OnResource endpoints need Action on the resource Type named by Name,
	// Var or Names.
	OnResource
	// Filtered endpoints list resources: any known user may call them, and
	// they show only what the user may read (auth.Allowed on each item).
	Filtered
	// InBody endpoints act on resources named in the request body (a query's
	// datasources, a task's or supervisor spec's datasource): the handler
	// checks them with auth.Check after parsing, and answers 403.
	InBody
)

func (k AccessKind) String() string {
	switch k {
	case Open:
		return "open"
	case Authenticated:
		return "authenticated"
	case InternalOnly:
		return "internal"
	case OnResource:
		return "resource"
	case Filtered:
		return "filtered"
	case InBody:
		return "in body"
	}
	return "undeclared"
}

// Declarations of the route table.
var (
	open          = Access{Kind: Open}
	authenticated = Access{Kind: Authenticated}
	internalOnly  = Access{Kind: InternalOnly}
	filtered      = Access{Kind: Filtered}
	inBody        = Access{Kind: InBody}

	stateRead   = Access{Kind: OnResource, Type: auth.State, Name: "STATE", Action: auth.Read}
	stateWrite  = Access{Kind: OnResource, Type: auth.State, Name: "STATE", Action: auth.Write}
	configRead  = Access{Kind: OnResource, Type: auth.Config, Name: "CONFIG", Action: auth.Read}
	configWrite = Access{Kind: OnResource, Type: auth.Config, Name: "CONFIG", Action: auth.Write}

	// The datasource of the path ({dataSourceName}).
	dsRead  = Access{Kind: OnResource, Type: auth.Datasource, Var: "dataSourceName", Action: auth.Read}
	dsWrite = Access{Kind: OnResource, Type: auth.Datasource, Var: "dataSourceName", Action: auth.Write}
	// The datasource of the task {taskId}, of the supervisor {supervisorId},
	// of the segment {segmentId}, and of every supervisor (the *All routes).
	taskRead        = Access{Kind: OnResource, Type: auth.Datasource, Names: taskDataSource, Action: auth.Read}
	taskWrite       = Access{Kind: OnResource, Type: auth.Datasource, Names: taskDataSource, Action: auth.Write}
	supervisorRead  = Access{Kind: OnResource, Type: auth.Datasource, Names: supervisorDataSource, Action: auth.Read}
	supervisorWrite = Access{Kind: OnResource, Type: auth.Datasource, Names: supervisorDataSource, Action: auth.Write}
	segmentWrite    = Access{Kind: OnResource, Type: auth.Datasource, Names: segmentDataSource, Action: auth.Write}
	allSupervisors  = Access{Kind: OnResource, Type: auth.Datasource, Names: supervisorDataSources, Action: auth.Write}
	// Cancelling a running query: WRITE on every table it reads (Druid's).
	queryWrite = Access{Kind: OnResource, Type: auth.Datasource, Names: runningQueryDataSources, Action: auth.Write}
	// sqlWrite: cancelling a SQL query needs WRITE on what it reads, as a
	// native query's cancel does.
	sqlWrite = Access{Kind: OnResource, Type: auth.Datasource, Names: runningSQLDataSources, Action: auth.Write}
)

// runningQueryDataSources is what the running queries {queryId} read (nil
// when none runs: the handler's 202, as for an unknown id).
func runningQueryDataSources(s *Server, r *http.Request) []string {
	return s.opts.Broker.RunningTables(mux.Vars(r)["queryId"])
}

// taskDataSource is the datasource of the task {taskId}.
func taskDataSource(s *Server, r *http.Request) []string {
	var rec *fsm.TaskRecord
	s.node.FSM().Read(func(st *fsm.State) { rec, _ = st.Task(mux.Vars(r)["taskId"]) })
	if rec == nil {
		return nil
	}
	return []string{rec.DataSource}
}

// supervisorDataSource is the datasource of the supervisor {supervisorId};
// one the state does not know (terminated, or never created) is named by
// its id, which is its datasource's name unless the spec gave another.
func supervisorDataSource(s *Server, r *http.Request) []string {
	id := mux.Vars(r)["supervisorId"]
	var rec *fsm.SupervisorRecord
	var ok bool
	s.node.FSM().Read(func(st *fsm.State) { rec, ok = st.Supervisor(id) })
	if !ok {
		return []string{id}
	}
	return []string{rec.DataSource}
}

// supervisorDataSources is every supervisor's datasource: suspendAll and
// the like act on all of them, so the caller needs WRITE on all.
func supervisorDataSources(s *Server, r *http.Request) []string {
	out := []string{}
	for _, rec := range s.supervisorList() {
		out = append(out, rec.DataSource)
	}
	return out
}

// segmentDataSource is the datasource of the segment {segmentId} (a used or
// unused segment the state knows).
func segmentDataSource(s *Server, r *http.Request) []string {
	if ds := s.segmentDataSourceOf(mux.Vars(r)["segmentId"]); ds != "" {
		return []string{ds}
	}
	return nil
}

// guard wraps an endpoint's handler with its access check. Authentication
// has happened before routing (authenticate); here only the route's
// permission is checked.
func (s *Server) guard(e Endpoint, h http.HandlerFunc) http.HandlerFunc {
	a := e.Access
	switch a.Kind {
	case Open, Authenticated, Filtered, InBody:
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if !auth.Enabled(ctx) {
			h(w, r)
			return
		}
		id := auth.IdentityFrom(ctx)
		if a.Kind == InternalOnly {
			if id == nil || !id.Internal {
				writeForbidden(w, fmt.Sprintf("%s is for Strata's own processes (the internal client %s)", r.URL.Path, s.internal.Username))
				return
			}
			h(w, r)
			return
		}
		var names []string
		switch {
		case a.Names != nil:
			names = a.Names(s, r)
			if names == nil {
				h(w, r) // no such object: the handler's 404
				return
			}
		case a.Var != "":
			names = []string{mux.Vars(r)[a.Var]}
		default:
			names = []string{a.Name}
		}
		for _, n := range names {
			if err := auth.Check(ctx, auth.Resource{Type: a.Type, Name: n}, a.Action); err != nil {
				writeAuthError(w, err)
				return
			}
		}
		h(w, r)
	}
}

// segmentDataSourceOf is the datasource of the segment the state knows by id
// raw, or "".
func (s *Server) segmentDataSourceOf(raw string) string {
	var ds string
	s.node.FSM().Read(func(st *fsm.State) {
		for _, id := range segmeta.PossibleIDs(raw) {
			if _, ok := st.Segment(id); ok {
				ds = id.DataSource
				return
			}
		}
	})
	return ds
}

// readable reports whether the request's caller may read datasource ds:
// listings show only those (always true with security off).
func readable(r *http.Request, ds string) bool {
	return auth.Allowed(r.Context(), auth.Resource{Type: auth.Datasource, Name: ds}, auth.Read)
}

// readableOnly keeps the names the caller may read, and the items of
// parallel beside them (parallel may be nil).
func readableOnly[T any](r *http.Request, names []string, parallel []T) ([]string, []T) {
	if !auth.Enabled(r.Context()) {
		return names, parallel
	}
	var keptNames []string
	var kept []T
	for i, n := range names {
		if readable(r, n) {
			keptNames = append(keptNames, n)
			if parallel != nil {
				kept = append(kept, parallel[i])
			}
		}
	}
	return keptNames, kept
}

// callerTag distinguishes the ETag of a listing filtered for the caller.
func callerTag(r *http.Request) string {
	if !auth.Enabled(r.Context()) {
		return ""
	}
	if id := auth.IdentityFrom(r.Context()); id != nil {
		return "/" + url.PathEscape(id.Name)
	}
	return ""
}
