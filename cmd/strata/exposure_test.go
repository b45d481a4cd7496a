package main

import (
	"strings"
	"testing"
)

// TestServerRefusesOpenAPIBeyondLoopback: strata server on a non-loopback
// address without an authenticator stops before starting anything, and
// says how to proceed.
func TestServerRefusesOpenAPIBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		code, _, errOut := capture(t, "server", "--roles", "broker", "--http", addr, "--data", t.TempDir())
		if code == 0 || !strings.Contains(errOut, "not a loopback address") || !strings.Contains(errOut, "svc.auth.allowInsecure=true") {
			t.Errorf("--http %s: exit %d, %q", addr, code, errOut)
		}
	}
}
