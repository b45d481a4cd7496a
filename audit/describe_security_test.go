package audit

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"strata/commands"
)

// The audit listing shows security changes in words, and their credentials
// (salted hashes) redacted.
func TestSecurityCommandsDescribedWithoutCredentials(t *testing.T) {
	salt, hash := bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{5}, 64)
	hc := &commands.HashedCredentials{Salt: salt, Hash: hash, Iterations: 10000}
	for _, c := range []struct {
		cmd     commands.Command
		summary string
	}{
		{commands.SetCredentials{Name: "analyst", Credentials: *hc}, "set the password of user analyst"},
		{commands.BootstrapSecurity{Admin: hc, InternalUser: "svc_system", Internal: hc}, "create the initial users if absent (admin, svc_system) with the admin role"},
	} {
		data, err := commands.Encode(c.cmd, 1000, commands.Audit{Author: "admin"})
		if err != nil {
			t.Fatal(err)
		}
		env, cmd, err := commands.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		rec := Describe(7, env, cmd)
		if rec.Summary != c.summary {
			t.Errorf("summary %q, want %q", rec.Summary, c.summary)
		}
		for _, secret := range [][]byte{salt, hash} {
			if strings.Contains(string(rec.Command), base64.StdEncoding.EncodeToString(secret)) {
				t.Errorf("%s shows credentials: %s", env.Type, rec.Command)
			}
		}
		if !strings.Contains(string(rec.Command), Redacted) {
			t.Errorf("%s: %s", env.Type, rec.Command)
		}
	}
}
