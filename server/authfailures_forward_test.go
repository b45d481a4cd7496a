package server

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"strata/escalator"
	"strata/fsm"
	"strata/props"
)

// TestForwardedAuthFailures: the leader records a data node's window as one
// audit entry naming the node; only the internal client may send one, and
// a bad report is a 400 (413 when too large) that records nothing.
func TestForwardedAuthFailures(t *testing.T) {
	users := newTestUsers()
	p := props.Defaults()
	p.Set("svc.auth.authenticatorChain", `["test"]`)
	p.Set("svc.escalator.internalClientPassword", internalPassword)
	_, node, base := singleServer(t, nil, RoleCoordinator, RoleOverlord)
	o := base.opts
	o.Props, o.Security = p, users.security()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	url := ts.URL + AuthFailuresPath
	count := func() (n int) {
		node.FSM().Read(func(st *fsm.State) { n = len(st.Audit(fsm.AuditQuery{Type: fsm.AuditAuthFailures, Limit: 100})) })
		return n
	}
	for _, bad := range []string{
		``, `{`, `[]`, `{"node":"http://b:8082","wrong":"x"}`, `{"node":"http://b:8082","wrong":1,"password":"p"}`,
		`{"wrong":1,"startMs":1,"endMs":2}`, `{"node":" ","wrong":1}`, `{"node":"http://b:8082","startMs":2,"endMs":1,"wrong":1}`,
		`{"node":"http://b:8082","startMs":1,"endMs":2}`, `{"node":"http://b:8082","startMs":1,"endMs":2,"wrong":-1,"missing":2}`,
		`{"node":"http://b:8082","startMs":1,"endMs":2,"wrong":1,"byAddress":{"":1}}`,
	} {
		code, body, _ := callWith(t, "POST", url, "application/json", bad, asInternal())
		if code != 400 || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("report %s: %d %s, want a 400 JSON error", bad, code, body)
		}
	}
	huge := `{"node":"` + strings.Repeat("a", maxForwardedFailuresBytes) + `"}`
	if code, body, _ := callWith(t, "POST", url, "application/json", huge, asInternal()); code != 413 {
		t.Errorf("a huge report: %d %s, want 413", code, body)
	}
	good := `{"node":"http://b:8082","startMs":1000,"endMs":61000,"wrong":3,"missing":1,"byAddress":{"10.0.0.9":4}}`
	if code, _, _ := callWith(t, "POST", url, "application/json", good, as("admin")); code != 403 {
		t.Errorf("a user (not the internal client) sent a report: %d, want 403", code)
	}
	if code, _, _ := callWith(t, "POST", url, "application/json", good, nil); code != 401 {
		t.Errorf("an anonymous report: %d, want 401", code)
	}
	if n := count(); n != 0 {
		t.Fatalf("refused reports wrote %d audit entries", n)
	}
	if code, body, _ := callWith(t, "POST", url, "application/json", good, asInternal()); code != 204 {
		t.Fatalf("report: %d %s", code, body)
	}
	var got []fsm.AuditEntry
	node.FSM().Read(func(st *fsm.State) { got = st.Audit(fsm.AuditQuery{Type: fsm.AuditAuthFailures, Limit: 100}) })
	if len(got) != 1 || got[0].Audit.Comment != "authentication failures on http://b:8082" || got[0].Audit.Author != "strata" {
		t.Fatalf("audit %+v, want one entry naming http://b:8082", got)
	}

	// The data node's side: the report reaches the leader as one entry.
	client := escalator.NodeClient(p, 5*time.Second)
	rec := ForwardAuthFailures(client, func() []string { return []string{ts.URL} }, "http://h:8083")
	if err := rec(FailureReport{Start: time.UnixMilli(1000), End: time.UnixMilli(2000), Wrong: 2, ByAddress: map[string]int{"10.0.0.1": 2}}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d audit entries after the forwarded window, want 2", n)
	}
}
