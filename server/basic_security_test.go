package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"strata/auth/basic"
	"strata/cluster"
	"strata/escalator"
	"strata/fsm"
	"strata/internal/eventually"
	"strata/props"
)

// The basic-security API without an authenticator configured (the API is
// open): Druid's shapes, and every bad request answered with a JSON 4xx
// that leaves the state unchanged.
func TestBasicSecurityAPI(t *testing.T) {
	ts, node := single(t, nil)
	authn := ts.URL + "/svc-ext/basic-security/authentication"
	authz := ts.URL + "/svc-ext/basic-security/authorization"
	expect(t, "GET", authn+"/loadStatus", "", "", 200, `{"basic":true}`)
	expect(t, "GET", authz+"/loadStatus", "", "", 200, `{"basic":true}`)
	expect(t, "GET", authn+"/db/basic/users", "", "", 200, `[]`)
	expect(t, "POST", authn+"/db/basic/users/alice", "", "", 200, ``)
	expect(t, "GET", authn+"/db/basic/users/alice", "", "", 200, `{"name":"alice","credentials":null}`)
	expect(t, "POST", authn+"/db/basic/users/alice/credentials", "application/json", `{"password":"correct-horse"}`, 200, ``)
	expect(t, "GET", authn+"/db/basic/users/alice", "", "", 200, `{"name":"alice","credentials":{"iterations":10000}}`)
	expect(t, "POST", authz+"/db/basic/users/alice", "", "", 200, ``)
	expect(t, "POST", authz+"/db/basic/roles/reader", "", "", 200, ``)
	perms := `[{"resource":{"type":"DATASOURCE","name":"wiki"},"action":"READ"}]`
	expect(t, "POST", authz+"/db/basic/roles/reader/permissions", "application/json", perms, 200, ``)
	expect(t, "POST", authz+"/db/basic/users/alice/roles/reader", "", "", 200, ``)
	expect(t, "GET", authz+"/db/basic/users", "", "", 200, `["alice"]`)
	expect(t, "GET", authz+"/db/basic/roles", "", "", 200, `["reader"]`)
	expect(t, "GET", authz+"/db/basic/users/alice", "", "", 200, `{"name":"alice","roles":["reader"]}`)
	full := `{"name":"alice","roles":[{"name":"reader","permissions":[{"resourceAction":{"resource":{"type":"DATASOURCE","name":"wiki"},"action":"READ"},"resourceNamePattern":"wiki"}]}]}`
	expect(t, "GET", authz+"/db/basic/users/alice?full", "", "", 200, full)
	expect(t, "GET", authz+"/db/basic/roles/reader", "", "", 200, `{"name":"reader","permissions":[{"resourceAction":{"resource":{"type":"DATASOURCE","name":"wiki"},"action":"READ"},"resourceNamePattern":"wiki"}]}`)
	expect(t, "GET", authz+"/db/basic/roles/reader?full&simplifyPermissions", "", "", 200, `{"name":"reader","permissions":`+perms+`,"users":["alice"]}`)
	expect(t, "GET", authz+"/db/basic/roles/reader/permissions?simplifyPermissions", "", "", 200, perms)

	before := snapshotTables(t, node)
	for _, c := range []struct {
		method, path, ctype, body string
		code                      int
		msg                       string
	}{
		{"POST", authn + "/db/basic/users/alice", "", "", 400, "User [alice] already exists."},
		{"GET", authn + "/db/basic/users/bob", "", "", 404, "User [bob] does not exist."},
		{"DELETE", authn + "/db/basic/users/bob", "", "", 404, "User [bob] does not exist."},
		{"POST", authn + "/db/basic/users/bob/credentials", "application/json", `{"password":"x"}`, 404, "User [bob] does not exist."},
		{"POST", authn + "/db/basic/users/alice/credentials", "application/json", `{"password":""}`, 400, "Invalid password"},
		{"POST", authn + "/db/basic/users/alice/credentials", "application/json", `{}`, 400, "Invalid password"},
		{"POST", authn + "/db/basic/users/alice/credentials", "application/json", `{"password":`, 400, "cannot parse"},
		{"POST", authn + "/db/basic/users/alice/credentials", "text/plain", `{"password":"x"}`, 415, "unsupported content type"},
		{"POST", authn + "/db/basic/users/" + strings.Repeat("u", 300), "", "", 400, "limit is 255"},
		{"GET", authz + "/db/basic/roles/ghost", "", "", 404, "Role [ghost] does not exist."},
		{"GET", authz + "/db/basic/users/bob", "", "", 404, "User [bob] does not exist."},
		{"POST", authz + "/db/basic/users/alice/roles/ghost", "", "", 404, "Role [ghost] does not exist."},
		{"POST", authz + "/db/basic/users/bob/roles/reader", "", "", 404, "User [bob] does not exist."},
		{"POST", authz + "/db/basic/users/alice/roles/reader", "", "", 400, "User [alice] already has role [reader]."},
		{"POST", authz + "/db/basic/roles/reader", "", "", 400, "Role [reader] already exists."},
		{"POST", authz + "/db/basic/roles/reader/permissions", "application/json", `[{"resource":{"type":"TABLE","name":"x"},"action":"READ"}]`, 400, "unknown resource type"},
		{"POST", authz + "/db/basic/roles/reader/permissions", "application/json", `[{"resource":{"type":"DATASOURCE","name":"a)|(b"},"action":"READ"}]`, 400, "not a regular expression"},
		{"POST", authz + "/db/basic/roles/reader/permissions", "application/json", `{"x":1}`, 400, "cannot parse the permission list"},
		{"POST", authz + "/db/basic/roles/ghost/permissions", "application/json", perms, 404, "Role [ghost] does not exist."},
		{"DELETE", authz + "/db/basic/users/alice/roles/ghost", "", "", 404, "Role [ghost] does not exist."},
	} {
		code, body, _ := call(t, c.method, c.path, c.ctype, c.body)
		if code != c.code || !strings.Contains(body, c.msg) || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("%s %s %s: %d %s, want %d with %q", c.method, c.path, c.body, code, body, c.code, c.msg)
		}
	}
	if !bytes.Equal(before, snapshotTables(t, node)) {
		t.Fatal("a refused request changed the state")
	}
	// The password is nowhere in the state: only its hash.
	if bytes.Contains(before, []byte(`correct-horse`)) {
		t.Fatal("the snapshot holds the password")
	}
	// Deleting a role unassigns it; the lists follow.
	expect(t, "DELETE", authz+"/db/basic/roles/reader", "", "", 200, ``)
	expect(t, "GET", authz+"/db/basic/users/alice", "", "", 200, `{"name":"alice","roles":[]}`)
	expect(t, "DELETE", authn+"/db/basic/users/alice", "", "", 200, ``)
	expect(t, "GET", authn+"/db/basic/users", "", "", 200, `[]`)
	node.FSM().Read(func(s *fsm.State) {
		if n := len(s.Audit(fsm.AuditQuery{Type: fsm.AuditSecurity, Limit: 100})); n != 8 {
			t.Errorf("%d audit entries, want one per accepted change (8)", n)
		}
	})
}

// snapshotTables is the security database as JSON, with the audit's length.
func snapshotTables(t *testing.T, node *cluster.Node) []byte {
	t.Helper()
	var b []byte
	var n int
	node.FSM().Read(func(s *fsm.State) {
		b, _ = json.Marshal(s.SecurityDB())
		n = s.AuditLen()
	})
	return append(b, fmt.Sprint(n)...)
}

// Data nodes' copy: the export answers at once for an old version, holds a
// current one until it changes (304 when it does not), and basic.Remote's
// long poll picks a change up as it commits.
func TestSecurityDBExportAndRemote(t *testing.T) {
	// Without an internal password (and no authenticator) the export, which
	// holds password hashes, is not served to anyone.
	open, _ := single(t, nil)
	expect(t, "GET", open.URL+basic.DBPath, "", "", 403, `{"error":"the user database is served to the internal client only: set svc.escalator.internalClientPassword"}`)

	p := props.Defaults()
	p.Set("svc.escalator.internalClientPassword", "internal-pw")
	ts, node := single(t, p)
	internal := escalator.Credentials{Username: "svc_system", Password: "internal-pw"}.Client(nil)
	call := func(t *testing.T, method, url, ctype, body string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := internal.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	expect := func(t *testing.T, method, url, ctype, body string, code int, want string) {
		t.Helper()
		if c, got, _ := call(t, method, url, ctype, body); c != code || got != want {
			t.Fatalf("%s %s: %d %s, want %d %s", method, url, c, got, code, want)
		}
	}
	expect(t, "POST", ts.URL+"/svc-ext/basic-security/authentication/db/basic/users/alice", "", "", 200, ``)
	var v uint64
	node.FSM().Read(func(s *fsm.State) { v = s.SecurityDB().Version })
	code, body, _ := call(t, "GET", ts.URL+basic.DBPath+"?version=0&waitMs=60000", "", "")
	if code != 200 || !strings.Contains(body, `"alice"`) {
		t.Fatalf("old version: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", ts.URL+basic.DBPath+fmt.Sprintf("?version=%d&waitMs=1", v), "", ""); code != 304 {
		t.Fatalf("unchanged: %d %s", code, body)
	}
	expect(t, "GET", ts.URL+basic.DBPath+"?version=x", "", "", 400, `{"error":"version must be a non-negative integer, got \"x\""}`)

	r := &basic.Remote{URLs: func() []string { return []string{ts.URL} }, Client: internal, PollWait: time.Minute, MinGap: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	eventually.True(t, "the first fetch", func() bool { return r.Current() != nil && r.Current().Users["alice"] != nil })
	expect(t, "POST", ts.URL+"/svc-ext/basic-security/authentication/db/basic/users/bob", "", "", 200, ``)
	eventually.True(t, "the long poll to bring bob", func() bool { return r.Current().Users["bob"] != nil }, eventually.Within(2*time.Second))
	// Refresh after an acknowledged change sees it, long poll or not.
	expect(t, "POST", ts.URL+"/svc-ext/basic-security/authentication/db/basic/users/carol", "", "", 200, ``)
	if db := r.Refresh(true); db.Users["carol"] == nil {
		t.Fatal("a refresh after the change does not see it")
	}
	cancel()
	<-done
}
