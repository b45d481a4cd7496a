package config

import (
	"strings"
	"testing"
)

func TestPasswordProviders(t *testing.T) {
	t.Setenv("STRATA_PW_TEST", "from-env")
	for in, want := range map[string]string{
		"plain": "plain",
		" {x":   " {x", // not JSON after all: refused below
		`{"type":"environment","variable":"STRATA_PW_TEST"}`: "from-env",
		`{"type":"default","password":"p"}`:                  "p",
	} {
		got, err := ResolvePassword(in)
		if in == " {x" {
			if err == nil {
				t.Errorf("%q: want an error for a malformed provider", in)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"type":"environment","variable":"STRATA_PW_UNSET_X"}`, `{"type":"environment"}`, `{"type":"vault"}`} {
		if _, err := ResolvePassword(bad); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestParseBasicAuth(t *testing.T) {
	t.Setenv("STRATA_PW_TEST", "adm")
	c, err := ParseBasicAuth(mapSource{
		"svc.auth.authenticator.basic.initialAdminPassword": `{"type":"environment","variable":"STRATA_PW_TEST"}`,
		"svc.escalator.internalClientPassword":              `{"type":"environment","variable":"STRATA_PW_TEST"}`,
	})
	if err != nil || c.InitialAdminPassword != "adm" || c.InternalClientPassword != "adm" || c.InternalClientUsername != "svc_system" {
		t.Fatalf("%+v %v", c, err)
	}
	if e := ParseEscalator(mapSource{"svc.escalator.internalClientPassword": `{"type":"environment","variable":"STRATA_PW_TEST"}`}); e.Password != "adm" {
		t.Fatalf("escalator password %q", e.Password)
	}
	_, err = ParseBasicAuth(mapSource{
		"svc.auth.authenticator.basic.initialAdminPassword": `{"type":"environment","variable":"STRATA_PW_UNSET_X"}`,
		"svc.escalator.type": "noop",
	})
	if err == nil || !strings.Contains(err.Error(), "STRATA_PW_UNSET_X") || !strings.Contains(err.Error(), "svc.escalator.type") {
		t.Fatalf("want both errors, got %v", err)
	}
}
