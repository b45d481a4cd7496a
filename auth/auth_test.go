package auth

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// onlyWiki allows READ on DATASOURCE wiki to user "ana".
type onlyWiki struct{}

func (onlyWiki) Authorize(id *Identity, r Resource, a Action) bool {
	return id.Name == "ana" && r == Resource{Type: Datasource, Name: "wiki"} && a == Read
}

func TestCheck(t *testing.T) {
	wiki := Resource{Type: Datasource, Name: "wiki"}
	if err := Check(context.Background(), wiki, Write); err != nil {
		t.Fatalf("security off: %v, want nil", err)
	}
	on := WithAuthorizer(context.Background(), onlyWiki{})
	if err := Check(on, wiki, Read); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("no identity: %v, want ErrUnauthenticated", err)
	}
	ana := WithIdentity(on, &Identity{Name: "ana", Authenticator: "basic"})
	if err := Check(ana, wiki, Read); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	err := Check(ana, wiki, Write)
	if !errors.Is(err, ErrForbidden) || err.Error() != "not allowed to WRITE DATASOURCE:wiki" {
		t.Fatalf("forbidden: %v", err)
	}
	internal := WithIdentity(on, &Identity{Name: "svc_system", Internal: true})
	if !Allowed(internal, Resource{Type: Config, Name: "CONFIG"}, Write) {
		t.Fatal("the internal client is allowed everything")
	}
}

func TestPermissionJSON(t *testing.T) {
	var p Permission
	if err := json.Unmarshal([]byte(`{"resource":{"type":"DATASOURCE","name":"wiki.*"},"action":"READ"}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Resource.Type != Datasource || p.Resource.Name != "wiki.*" || p.Action != Read {
		t.Fatalf("decoded %+v", p)
	}
}
