package basic

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"strata/auth"
)

func TestHashMatchesOnlyItsPassword(t *testing.T) {
	c, err := Hash("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if c.Iterations != 10000 || len(c.Hash) != 64 || len(c.Salt) != 32 {
		t.Fatalf("want Druid's PBKDF2 parameters (10000 iterations, 512-bit key, 32-byte salt), got %d, %d, %d", c.Iterations, len(c.Hash)*8, len(c.Salt))
	}
	if err := ValidateCredentials(c); err != nil {
		t.Fatal(err)
	}
	if !c.Matches("s3cret") || c.Matches("s3cret ") || c.Matches("") {
		t.Fatal("Matches must accept exactly the hashed password")
	}
	d, _ := Hash("s3cret")
	if string(d.Salt) == string(c.Salt) || string(d.Hash) == string(c.Hash) {
		t.Fatal("two hashes of one password share a salt or hash")
	}
	if _, err := Hash(""); err == nil {
		t.Fatal("an empty password was hashed")
	}
	if _, err := Hash(strings.Repeat("x", MaxPasswordLength+1)); err == nil {
		t.Fatal("an oversized password was hashed")
	}
}

// A known PBKDF2-HMAC-SHA512 vector, so that the hash is the one Druid
// stores for the same password, salt and iterations.
func TestHashIsPBKDF2HMACSHA512(t *testing.T) {
	h, err := derive("password", []byte("salt"), 1)
	if err != nil {
		t.Fatal(err)
	}
	const want = "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"
	if got := hexs(h); got != want {
		t.Fatalf("PBKDF2-HMAC-SHA512(password, salt, 1) = %s, want %s", got, want)
	}
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestParsePermissions(t *testing.T) {
	ok := `[{"resource":{"type":"DATASOURCE","name":"wiki.*"},"action":"READ"},{"resource":{"type":"STATE","name":"STATE"},"action":"WRITE"}]`
	ps, err := ParsePermissions([]byte(ok))
	if err != nil || len(ps) != 2 {
		t.Fatalf("valid list refused: %v %v", ps, err)
	}
	for _, body := range []string{"null", "", " [] "} {
		if ps, err := ParsePermissions([]byte(body)); err != nil || ps == nil || len(ps) != 0 {
			t.Errorf("%q: want the empty list, got %v %v", body, ps, err)
		}
	}
	for _, bad := range []string{
		`{}`, `[1]`, `[{"resource":{"type":"TABLE","name":"x"},"action":"READ"}]`,
		`[{"resource":{"type":"DATASOURCE","name":"x"},"action":"DELETE"}]`,
		`[{"resource":{"type":"DATASOURCE","name":"("},"action":"READ"}]`,
		`[{"resource":{"type":"DATASOURCE","name":""},"action":"READ"}]`,
		`[{"resource":{"type":"DATASOURCE","name":"x"},"action":"READ","extra":1}]`,
		`[] []`,
	} {
		if _, err := ParsePermissions([]byte(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

// Names match whole resource names, as Java's Matcher.matches does.
func TestRoleAllowsWholeNameMatches(t *testing.T) {
	ps, err := ParsePermissions([]byte(`[{"resource":{"type":"DATASOURCE","name":"wiki|logs_.*"},"action":"READ"}]`))
	if err != nil {
		t.Fatal(err)
	}
	r := &Role{Name: "r", Permissions: ps}
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"wiki": true, "logs_a": true, "wikipedia": false, "my_wiki": false, "xlogs_a": false} {
		if got := r.Allows(auth.Resource{Type: auth.Datasource, Name: name}, auth.Read); got != want {
			t.Errorf("READ %s: %v, want %v", name, got, want)
		}
	}
	if r.Allows(auth.Resource{Type: auth.Datasource, Name: "wiki"}, auth.Write) {
		t.Error("READ permission granted WRITE")
	}
	if r.Allows(auth.Resource{Type: auth.Config, Name: "wiki"}, auth.Read) {
		t.Error("DATASOURCE permission granted CONFIG")
	}
}

// countingSource is a Source whose Refresh reports calls and may switch
// the DB.
type countingSource struct {
	cur, next *DB
	refreshes atomic.Int64
}

func (s *countingSource) Current() *DB { return s.cur }
func (s *countingSource) Refresh(bool) *DB {
	s.refreshes.Add(1)
	if s.next != nil {
		s.cur = s.next
	}
	return s.cur
}

func dbWith(t *testing.T, user, password string, version uint64) *DB {
	t.Helper()
	db := Empty()
	db.Version = version
	c, err := Hash(password)
	if err != nil {
		t.Fatal(err)
	}
	c.Version = version
	db.Users[user] = &User{Name: user, Credentials: c}
	return db
}

func basicReq(user, pass string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	r.SetBasicAuth(user, pass)
	return r
}

func TestAuthenticatorCacheFollowsCredentialVersion(t *testing.T) {
	src := &countingSource{cur: dbWith(t, "alice", "one", 5)}
	a := NewAuthenticator("basic", "svc_system", src)
	id, err := a.Authenticate(basicReq("alice", "one"))
	if err != nil || id == nil || id.Name != "alice" || id.Authenticator != "basic" || id.Internal {
		t.Fatalf("got %+v, %v", id, err)
	}
	if len(a.verified) != 1 {
		t.Fatalf("the verified password is not cached: %d entries", len(a.verified))
	}
	// A new password (a new credential version) takes effect at once,
	// although the old one is cached.
	src.cur = dbWith(t, "alice", "two", 9)
	if _, err := a.Authenticate(basicReq("alice", "one")); err != auth.ErrBadCredentials {
		t.Fatalf("old password after a change: %v", err)
	}
	if id, err := a.Authenticate(basicReq("alice", "two")); err != nil || id == nil {
		t.Fatalf("new password: %v", err)
	}
	// A deleted user cannot log in, cached or not.
	src.cur = Empty()
	if _, err := a.Authenticate(basicReq("alice", "two")); err != auth.ErrBadCredentials {
		t.Fatalf("deleted user: %v", err)
	}
	// No credentials: not this authenticator's request.
	r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	if id, err := a.Authenticate(r); id != nil || err != nil {
		t.Fatalf("no credentials: %+v %v", id, err)
	}
}

// An unknown user makes the authenticator refresh its source once, so that
// a user created on the leader a moment ago logs in on a data node.
func TestAuthenticatorRefreshesOnUnknownUser(t *testing.T) {
	src := &countingSource{cur: Empty()}
	src.next = dbWith(t, "bob", "pw", 3)
	a := NewAuthenticator("basic", "bob", src)
	id, err := a.Authenticate(basicReq("bob", "pw"))
	if err != nil || id == nil || !id.Internal {
		t.Fatalf("got %+v, %v (bob is the internal client here)", id, err)
	}
	if n := src.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	if _, err := a.Authenticate(basicReq("bob", "pw")); err != nil || src.refreshes.Load() != 1 {
		t.Fatalf("a known user refreshed again (%d) or failed: %v", src.refreshes.Load(), err)
	}
}

func TestAuthorizer(t *testing.T) {
	db := Empty()
	ps, _ := ParsePermissions([]byte(`[{"resource":{"type":"DATASOURCE","name":"wiki"},"action":"READ"}]`))
	r := &Role{Name: "reader", Permissions: ps, Version: 2}
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	db.Roles["reader"] = r
	db.AuthzUsers["alice"] = &AuthzUser{Name: "alice", Roles: []string{"reader"}}
	src := &countingSource{cur: db}
	az := NewAuthorizer(src)
	wiki := auth.Resource{Type: auth.Datasource, Name: "wiki"}
	if !az.Authorize(&auth.Identity{Name: "alice"}, wiki, auth.Read) {
		t.Fatal("alice may read wiki")
	}
	if az.Authorize(&auth.Identity{Name: "alice"}, wiki, auth.Write) || az.Authorize(&auth.Identity{Name: "bob"}, wiki, auth.Read) {
		t.Fatal("granted what no role gives")
	}
	if !az.Authorize(&auth.Identity{Name: "svc_system", Internal: true}, wiki, auth.Write) {
		t.Fatal("the internal client may do everything")
	}
	if az.Authorize(nil, wiki, auth.Read) {
		t.Fatal("no identity was allowed")
	}
}

// A DB survives the JSON round trip data nodes fetch it by, compiled.
func TestDBJSONRoundTrip(t *testing.T) {
	db := dbWith(t, "alice", "pw", 4)
	r := &Role{Name: "admin", Permissions: AllPermissions(), Version: 4}
	db.Roles["admin"] = r
	db.AuthzUsers["alice"] = &AuthzUser{Name: "alice", Roles: []string{"admin"}}
	b, err := json.Marshal(db)
	if err != nil {
		t.Fatal(err)
	}
	var back DB
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Prepare(); err != nil {
		t.Fatal(err)
	}
	if !back.Allows("alice", auth.Resource{Type: auth.SystemTable, Name: "sys.segments"}, auth.Write) {
		t.Fatal("admin role lost its permissions")
	}
	if !back.Users["alice"].Credentials.Matches("pw") {
		t.Fatal("credentials lost")
	}
	back.AuthzUsers["alice"] = &AuthzUser{Name: "alice", Roles: []string{"ghost"}}
	if err := back.Prepare(); err == nil {
		t.Fatal("a user with a missing role was accepted")
	}
}

// The permission parser never panics, and what it accepts compiles and
// grants by whole-name matches only.
func FuzzParsePermissions(f *testing.F) {
	f.Add([]byte(`[{"resource":{"type":"DATASOURCE","name":"wiki.*"},"action":"READ"}]`))
	f.Add([]byte(`[{"resource":{"type":"EXTERNAL","name":"(a|b)+"},"action":"WRITE"}]`))
	f.Add([]byte(`[{"resource":{"type":"CONFIG","name":"a)|(b"},"action":"READ"}]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"resource":{"type":"STATE","name":"\\"},"action":"READ"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ps, err := ParsePermissions(body)
		if err != nil {
			return
		}
		r := &Role{Name: "f", Permissions: ps}
		if err := r.Compile(); err != nil {
			t.Fatalf("parsed permissions do not compile: %v", err)
		}
		for _, p := range ps {
			// What a permission grants, it grants for whole names only.
			name := p.Resource.Name + "x"
			if r.Allows(auth.Resource{Type: p.Resource.Type, Name: name}, p.Action) {
				re, _ := CompilePattern(p.Resource.Name)
				if loc := re.FindStringIndex(name); loc == nil || loc[0] != 0 || loc[1] != len(name) {
					t.Fatalf("pattern %q grants %q without matching it whole", p.Resource.Name, name)
				}
			}
		}
	})
}

func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{".*", "wiki", "a)|(b", "(?i)WIKI", "[", "a{1000}{1000}"} {
		f.Add(s, "wiki")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		re, err := CompilePattern(pattern)
		if err != nil {
			return
		}
		if loc := re.FindStringIndex(name); re.MatchString(name) && (loc == nil || loc[0] != 0 || loc[1] != len(name)) {
			t.Fatalf("%q matches %q without covering it whole (%v)", pattern, name, loc)
		}
	})
}

// A pattern that closes the anchoring group is refused, not widened: the
// fuzzer found "a)|(b" granting every name that starts with "a".
func TestPatternCannotEscapeAnchors(t *testing.T) {
	for _, p := range []string{"a)|(b", "x)|.*|(y", `a\`} {
		if re, err := CompilePattern(p); err == nil {
			t.Errorf("%q compiled to %s", p, re)
		}
	}
}
