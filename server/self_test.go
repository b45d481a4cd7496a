package server

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"strata/auth"
	"strata/props"
)

// Permissions lists a test user's grants (auth.PermissionLister), as the
// basic authorizer lists its roles'.
func (u *testUsers) Permissions(id *auth.Identity) []auth.Permission {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.perms[id.Name])
}

func getSelf(t *testing.T, url string, hdr map[string]string) (int, selfAnswer, string) {
	t.Helper()
	code, body, _ := callWith(t, "GET", url+"/svc/v1/self", "", "", hdr)
	var out selfAnswer
	if code == 200 {
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("self: %v: %s", err, body)
		}
	}
	return code, out, body
}

// TestSelf: GET /svc/v1/self names the caller and its permissions, so the
// console offers what the API allows: with security off everything for an
// anonymous caller; with security on 401 without credentials, and each
// user exactly its grants (an analyst one datasource's READ, an admin all).
func TestSelf(t *testing.T) {
	ts, _ := single(t, nil)
	code, off, body := getSelf(t, ts.URL, nil)
	if code != 200 || off.SecurityEnabled || off.Identity != "" || len(off.Permissions) != 2*len(auth.ResourceTypes) {
		t.Fatalf("security off: %d %s", code, body)
	}
	for _, typ := range auth.ResourceTypes {
		for _, a := range []auth.Action{auth.Read, auth.Write} {
			if !slices.Contains(off.Permissions, perm(typ, ".*", a)) {
				t.Errorf("security off: %s %s missing from %s", typ, a, body)
			}
		}
	}

	users := newTestUsers()
	p := props.Defaults()
	p.Set("svc.auth.authenticatorChain", `["test"]`)
	s, err := New(Options{Roles: []string{RoleRouter}, Props: p, Security: users.security()})
	if err != nil {
		t.Fatal(err)
	}
	sec := httptest.NewServer(s.Handler())
	t.Cleanup(sec.Close)
	if code, _, body := getSelf(t, sec.URL, nil); code != 401 {
		t.Fatalf("no credentials: %d %s, want 401", code, body)
	}
	if code, _, body := getSelf(t, sec.URL, map[string]string{"Authorization": auth.BasicHeader("wikireader", "wrong")}); code != 401 {
		t.Fatalf("wrong password: %d %s, want 401", code, body)
	}
	code, analyst, body := getSelf(t, sec.URL, as("wikireader"))
	want := []auth.Permission{perm(auth.Datasource, "wiki", auth.Read)}
	if code != 200 || !analyst.SecurityEnabled || analyst.Identity != "wikireader" || analyst.Authenticator != "test" || !slices.Equal(analyst.Permissions, want) {
		t.Fatalf("analyst: %d %s, want its one grant %v", code, body, want)
	}
	code, admin, body := getSelf(t, sec.URL, as("admin"))
	if code != 200 || admin.Identity != "admin" || !slices.Equal(admin.Permissions, users.perms["admin"]) {
		t.Fatalf("admin: %d %s", code, body)
	}
	// A user without grants gets an empty list, not null: a client reads
	// "may do nothing".
	if code, _, body := getSelf(t, sec.URL, as("plain")); code != 200 || !json.Valid([]byte(body)) || !strings.Contains(body, `"permissions":[]`) {
		t.Fatalf("plain: %d %s, want an empty permission list", code, body)
	}
}

// TestOpenPathsAreTheTables: authenticate lets through without credentials
// exactly the table's Open routes (the health check and the console's
// files), and a path that only looks like one (dot segments) is not.
func TestOpenPathsAreTheTables(t *testing.T) {
	for p, want := range map[string]bool{
		"/status/health": true, "/status/health/": true, "/": true, "/unified-console.html": true,
		"/console/app.js": true, "/console/lib/api.js": true, "/console/": true,
		"/console/../svc/coordinator/v1/config": false, "/console//x": false, "/console": false,
		"/svc/v1/self": false, "/status": false, "/svc/v2/sql": false, "/druid/": false, "": false,
	} {
		if got := isOpen(p); got != want {
			t.Errorf("isOpen(%q) = %v, want %v", p, got, want)
		}
	}
}
