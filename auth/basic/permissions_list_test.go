package basic

import (
	"slices"
	"testing"

	"strata/auth"
)

// TestAuthorizerListsPermissions: what GET /svc/v1/self shows, the union of
// the user's roles' permissions, each once; everything for the internal
// client; nothing for a user without roles or an unknown one.
func TestAuthorizerListsPermissions(t *testing.T) {
	db := Empty()
	read, _ := ParsePermissions([]byte(`[{"resource":{"type":"DATASOURCE","name":"wiki"},"action":"READ"}]`))
	both, _ := ParsePermissions([]byte(`[{"resource":{"type":"DATASOURCE","name":"wiki"},"action":"READ"},{"resource":{"type":"STATE","name":"STATE"},"action":"READ"}]`))
	for name, ps := range map[string][]auth.Permission{"reader": read, "ops": both} {
		r := &Role{Name: name, Permissions: ps, Version: 2}
		if err := r.Compile(); err != nil {
			t.Fatal(err)
		}
		db.Roles[name] = r
	}
	db.AuthzUsers["alice"] = &AuthzUser{Name: "alice", Roles: []string{"ops", "reader"}}
	db.AuthzUsers["bob"] = &AuthzUser{Name: "bob", Roles: nil}
	az := NewAuthorizer(&countingSource{cur: db})
	if got := az.Permissions(&auth.Identity{Name: "alice"}); !slices.Equal(got, both) {
		t.Errorf("alice: %v, want %v once each", got, both)
	}
	if got := az.Permissions(&auth.Identity{Name: "bob"}); got == nil || len(got) != 0 {
		t.Errorf("bob: %v, want an empty list", got)
	}
	if got := az.Permissions(&auth.Identity{Name: "nobody"}); len(got) != 0 {
		t.Errorf("an unknown user: %v", got)
	}
	if got := az.Permissions(&auth.Identity{Name: "svc_system", Internal: true}); !slices.Equal(got, AllPermissions()) {
		t.Errorf("the internal client: %v", got)
	}
}
