package main

import (
	"testing"

	"strata/server"
)

// strata version prints Strata's own version and the Druid release whose
// API it serves, which /status reports to Druid's clients.
func TestVersionPrintsBoth(t *testing.T) {
	code, out, errOut := capture(t, "version")
	want := "strata " + server.Version + " (Druid API " + server.DruidVersion + ")\n"
	if code != 0 || out != want {
		t.Fatalf("strata version: exit %d, %q %q; want %q", code, out, errOut, want)
	}
}
