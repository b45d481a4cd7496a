package auth

import (
	"strings"
	"testing"
)

func TestParseBasic(t *testing.T) {
	for _, c := range []struct {
		header, user, pass string
		ok                 bool
	}{
		{BasicHeader("admin", "pw"), "admin", "pw", true},
		{"basic YWRtaW46cHc=", "admin", "pw", true},                             // scheme case-insensitive
		{"Basic   YWRtaW46cHc=", "admin", "pw", true},                           // several spaces
		{BasicHeader("a", "p:w:x"), "a", "p:w:x", true},                         // the password may hold colons
		{BasicHeader("a", ""), "a", "", true},                                   // an empty password parses (the authenticator refuses it)
		{BasicHeader("", "pw"), "", "", false},                                  // no user
		{"Basic YWRtaW4=", "", "", false},                                       // no colon
		{"Bearer YWRtaW46cHc=", "", "", false},                                  // another scheme
		{"Basic", "", "", false},                                                // nothing after the scheme
		{"Basic YWRtaW46cHc", "", "", false},                                    // unpadded
		{"Basic YWRtaW46cHc=\n", "", "", false},                                 // trailing junk
		{BasicHeader("ad\x00min", "pw"), "", "", false},                         // control character
		{BasicHeader("a", "p\xffw"), "", "", false},                             // not UTF-8
		{"Basic " + strings.Repeat("A", MaxAuthorizationLength), "", "", false}, // too long
	} {
		u, p, ok := ParseBasic(c.header)
		if u != c.user || p != c.pass || ok != c.ok {
			t.Errorf("ParseBasic(%q) = %q, %q, %v; want %q, %q, %v", c.header, u, p, ok, c.user, c.pass, c.ok)
		}
	}
}

// FuzzParseBasic: no input panics, what parses is within the limits, and
// what parses encodes back to a header that parses to the same credentials.
// The seed corpus runs with go test (make test); go test -fuzz=FuzzParseBasic
// ./auth explores.
func FuzzParseBasic(f *testing.F) {
	for _, s := range []string{BasicHeader("admin", "pw"), "basic Og==", "Basic", "Basic ====", "Basic YTpi\x00", "Digest x", BasicHeader("ü", "p:q")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		u, p, ok := ParseBasic(h)
		if !ok {
			if u != "" || p != "" {
				t.Fatalf("refused %q but returned %q, %q", h, u, p)
			}
			return
		}
		if u == "" || strings.Contains(u, ":") || !printable(u) || !printable(p) || len(h) > MaxAuthorizationLength {
			t.Fatalf("accepted %q as %q, %q", h, u, p)
		}
		u2, p2, ok2 := ParseBasic(BasicHeader(u, p))
		if !ok2 || u2 != u || p2 != p {
			t.Fatalf("%q, %q does not round-trip: %q, %q, %v", u, p, u2, p2, ok2)
		}
	})
}
