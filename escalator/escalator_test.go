package escalator

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"strata/props"
)

func TestClientSendsCredentialsOnlyToInternalEndpoints(t *testing.T) {
	p := props.New()
	p.Set(PropPassword, "s3cret")
	c := FromProps(p)
	if c.Username != DefaultUsername || !c.Enabled() {
		t.Fatalf("credentials %+v", c)
	}
	seen := map[string]bool{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/svc-internal/v1/moved" {
			http.Redirect(w, r, "/svc-internal/v1/here", http.StatusTemporaryRedirect)
			return
		}
		seen[r.URL.Path] = c.Authorized(r)
	}))
	defer ts.Close()
	base := &http.Client{}
	cl := c.Client(base)
	if base.Transport != nil {
		t.Fatal("Client changed its base")
	}
	for _, path := range []string{"/svc-internal/v1/query", "/svc-internal/v1/moved", "/svc/v2/sql"} {
		resp, err := cl.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := map[string]bool{"/svc-internal/v1/query": true, "/svc-internal/v1/here": true, "/svc/v2/sql": false}
	for path, ok := range want {
		if got, found := seen[path]; !found || got != ok {
			t.Errorf("%s: authorized %v (seen %v), want %v", path, got, found, ok)
		}
	}
	if (Credentials{Username: DefaultUsername}).Client(base) != base {
		t.Error("without a password the client must be left as it is")
	}
	r := httptest.NewRequest("GET", "/svc-internal/x", nil)
	r.SetBasicAuth(DefaultUsername, "wrong")
	if c.Authorized(r) {
		t.Error("wrong password accepted")
	}
}

// TestServiceClientSendsCredentialsEverywhere: a task's client to the
// cluster carries the internal credentials on public endpoints too (a SQL
// INSERT lists the segments it appends to on /svc/coordinator/v1/metadata/
// and got 401 with security on), keeps a caller's own Authorization, and
// leaves Client's choice for the others.
func TestServiceClientSendsCredentialsEverywhere(t *testing.T) {
	p := props.New()
	p.Set(PropPassword, "s3cret")
	c := FromProps(p)
	seen := map[string]bool{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen[r.URL.Path] = c.Authorized(r)
	}))
	defer ts.Close()
	sc := NodeServiceClient(p, 0)
	for _, path := range []string{"/svc-internal/v1/query", "/svc/coordinator/v1/metadata/datasources/wiki/segments"} {
		resp, err := sc.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !seen[path] {
			t.Errorf("%s: not authorized as the internal client", path)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/svc/own", nil)
	req.SetBasicAuth("alice", "pw")
	resp, err := sc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen["/svc/own"] {
		t.Error("a request's own credentials were replaced")
	}
	resp, err = NodeClient(p, 0).Get(ts.URL + "/svc/v2/sql")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen["/svc/v2/sql"] {
		t.Error("NodeClient sent the credentials to a public endpoint")
	}
}
