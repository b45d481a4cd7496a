package props

import (
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	p := New()
	err := p.Read(strings.NewReader(`# comment
! also a comment
svc.a=1
svc.b : two words
svc.c   spaced
svc.list=["x","y"]
svc.multi=first,\
    second
svc.esc=tab\there\u0041
  svc.indented = yes
svc.empty=
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"svc.a": "1", "svc.b": "two words", "svc.c": "spaced", "svc.list": `["x","y"]`,
		"svc.multi": "first,second", "svc.esc": "tab\thereA", "svc.indented": "yes", "svc.empty": ""}
	for k, v := range want {
		if got, ok := p.Get(k); !ok || got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if got := p.List("svc.list"); len(got) != 2 || got[1] != "y" {
		t.Errorf("List = %v", got)
	}
	if got := p.List("svc.multi"); len(got) != 2 || got[0] != "first" {
		t.Errorf("List csv = %v", got)
	}
}

func TestVisibleHidesExactKeys(t *testing.T) {
	p := Defaults()
	p.Set("svc.s3.secretKey", "s")
	p.Set("password", "p")
	p.Set("svc.db.password", "kept: only exact names are hidden")
	v := p.Visible()
	if _, ok := v["svc.s3.secretKey"]; ok {
		t.Error("secret shown")
	}
	if _, ok := v["password"]; ok {
		t.Error("password shown")
	}
	if v["svc.db.password"] == "" || v["svc.server.hiddenProperties"] == "" {
		t.Error("visible keys missing")
	}
}

func FuzzRead(f *testing.F) {
	f.Add("a=b\nc:d\\\n e\n")
	f.Add("\\u12")
	f.Fuzz(func(t *testing.T, s string) {
		New().Read(strings.NewReader(s))
	})
}

// The initial passwords are hidden even when svc.server.hiddenProperties
// is replaced by a list that leaves them out.
func TestVisibleHidesInitialPasswords(t *testing.T) {
	p := Defaults()
	p.Set("svc.server.hiddenProperties", `["x"]`)
	p.Set("svc.auth.authenticator.basic.initialAdminPassword", "a")
	p.Set("svc.auth.authenticator.basic.initialInternalClientPassword", "b")
	p.Set("svc.escalator.internalClientPassword", "b")
	v := p.Visible()
	for _, k := range []string{"svc.auth.authenticator.basic.initialAdminPassword", "svc.auth.authenticator.basic.initialInternalClientPassword", "svc.escalator.internalClientPassword"} {
		if _, ok := v[k]; ok {
			t.Errorf("%s shown", k)
		}
	}
}
