package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/auth"
	"strata/commands"
)

func readPerm(name string) []auth.Permission {
	return []auth.Permission{{Resource: auth.ResourcePattern{Type: auth.Datasource, Name: name}, Action: auth.Read}}
}

func securityLog(t *testing.T) []*raft.Log {
	cmds := []commands.Command{
		commands.BootstrapSecurity{Admin: creds(1), InternalUser: "svc_system", Internal: creds(2)},
		commands.CreateUser{Name: "zed"},
		commands.CreateUser{Name: "analyst"},
		commands.SetCredentials{Name: "analyst", Credentials: *creds(3)},
		commands.CreateAuthzUser{Name: "analyst"},
		commands.CreateRole{Name: "reader"},
		commands.CreateRole{Name: "auditor"},
		commands.SetRolePermissions{Role: "reader", Permissions: readPerm("wiki.*")},
		commands.AssignRole{User: "analyst", Role: "reader"},
		commands.AssignRole{User: "analyst", Role: "auditor"},
	}
	out := make([]*raft.Log, len(cmds))
	for i, c := range cmds {
		out[i] = entry(t, uint64(i+1), int64(i+1)*1000, c, "admin")
	}
	return out
}

func TestSecurityCommands(t *testing.T) {
	f := New(nil)
	for _, l := range securityLog(t) {
		if res := f.Apply(l).(Result); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	f.Read(func(s *State) {
		db := s.SecurityDB()
		if db.Version != 10 {
			t.Fatalf("version %d, want the last change's index 10", db.Version)
		}
		if u := db.Users["analyst"]; u == nil || u.Credentials == nil || u.Credentials.Version != 4 {
			t.Fatalf("analyst: %+v", u)
		}
		if db.Users["zed"].Credentials != nil {
			t.Fatal("a user created without a password has credentials")
		}
		if got := db.AuthzUsers["analyst"].Roles; strings.Join(got, ",") != "auditor,reader" {
			t.Fatalf("roles %v, want sorted auditor,reader", got)
		}
		if !db.Allows("analyst", auth.Resource{Type: auth.Datasource, Name: "wikipedia"}, auth.Read) ||
			db.Allows("analyst", auth.Resource{Type: auth.Datasource, Name: "logs"}, auth.Read) {
			t.Fatal("analyst's permissions")
		}
		if !db.Allows("admin", auth.Resource{Type: auth.Config, Name: "CONFIG"}, auth.Write) || !db.Allows("svc_system", auth.Resource{Type: auth.State, Name: "STATE"}, auth.Write) {
			t.Fatal("the bootstrap's users lack the admin role")
		}
		// No audit entry holds credentials, hashed or not.
		for _, e := range s.Audit(AuditQuery{Type: AuditSecurity, Limit: 100}) {
			if strings.Contains(e.Payload, "salt") || strings.Contains(e.Payload, "hash") || strings.Contains(e.Payload, "credential") {
				t.Fatalf("audit payload holds credentials: %s", e.Payload)
			}
		}
		if n := len(s.Audit(AuditQuery{Type: AuditSecurity, Limit: 100})); n != 10 {
			t.Fatalf("%d audit entries, want 10", n)
		}
	})
	// Deleting a role unassigns it; deleting users removes them from one
	// database only (Druid keeps two).
	for i, c := range []commands.Command{commands.DeleteRole{Name: "auditor"}, commands.DeleteUser{Name: "analyst"}} {
		if res := f.Apply(entry(t, uint64(11+i), 11000, c, "admin")).(Result); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	f.Read(func(s *State) {
		db := s.SecurityDB()
		if got := db.AuthzUsers["analyst"].Roles; len(got) != 1 || got[0] != "reader" {
			t.Fatalf("roles after deleting auditor: %v", got)
		}
		if db.Users["analyst"] != nil || db.AuthzUsers["analyst"] == nil {
			t.Fatal("DeleteUser must remove the authenticator's user only")
		}
	})
	// The bootstrap leaves existing users alone: a changed password stays.
	if res := f.Apply(entry(t, 13, 13000, commands.BootstrapSecurity{Admin: creds(9), InternalUser: "svc_system", Internal: creds(9)}, "strata")).(Result); res.Err != nil {
		t.Fatal(res.Err)
	}
	f.Read(func(s *State) {
		if c := s.SecurityDB().Users["admin"].Credentials; !bytes.Equal(c.Salt, creds(1).Salt) {
			t.Fatal("a second bootstrap replaced the admin's credentials")
		}
	})
}

func TestSecurityCommandsRejectInvalidInput(t *testing.T) {
	f := New(nil)
	for _, l := range securityLog(t) {
		f.Apply(l)
	}
	before := snapshotBytes(t, f)
	for i, c := range []struct {
		cmd  commands.Command
		kind Kind
	}{
		{commands.CreateUser{Name: "analyst"}, KindInvalid},
		{commands.CreateUser{Name: ""}, KindInvalid},
		{commands.CreateUser{Name: "a/b"}, KindInvalid},
		{commands.CreateUser{Name: strings.Repeat("u", 256)}, KindInvalid},
		{commands.DeleteUser{Name: "nobody"}, KindNotFound},
		{commands.SetCredentials{Name: "nobody", Credentials: *creds(4)}, KindNotFound},
		{commands.SetCredentials{Name: "analyst", Credentials: commands.HashedCredentials{Salt: creds(1).Salt, Hash: []byte("short"), Iterations: 10000}}, KindInvalid},
		{commands.SetCredentials{Name: "analyst", Credentials: commands.HashedCredentials{Salt: creds(1).Salt, Hash: creds(1).Hash, Iterations: 1}}, KindInvalid},
		{commands.CreateAuthzUser{Name: "analyst"}, KindInvalid},
		{commands.DeleteAuthzUser{Name: "nobody"}, KindNotFound},
		{commands.CreateRole{Name: "reader"}, KindInvalid},
		{commands.DeleteRole{Name: "nobody"}, KindNotFound},
		{commands.AssignRole{User: "nobody", Role: "reader"}, KindNotFound},
		{commands.AssignRole{User: "analyst", Role: "nobody"}, KindNotFound},
		{commands.AssignRole{User: "analyst", Role: "reader"}, KindInvalid},
		{commands.UnassignRole{User: "admin", Role: "reader"}, KindInvalid},
		{commands.UnassignRole{User: "nobody", Role: "reader"}, KindNotFound},
		{commands.SetRolePermissions{Role: "nobody", Permissions: readPerm("x")}, KindNotFound},
		{commands.SetRolePermissions{Role: "reader", Permissions: readPerm("(")}, KindInvalid},
		{commands.SetRolePermissions{Role: "reader", Permissions: readPerm("a)|(b")}, KindInvalid},
		{commands.SetRolePermissions{Role: "reader", Permissions: []auth.Permission{{Resource: auth.ResourcePattern{Type: "TABLE", Name: "x"}, Action: auth.Read}}}, KindInvalid},
		{commands.BootstrapSecurity{Admin: creds(1), InternalUser: "admin"}, KindInvalid},
		{commands.BootstrapSecurity{Admin: &commands.HashedCredentials{}, InternalUser: "svc_system"}, KindInvalid},
	} {
		res := f.Apply(entry(t, uint64(100+i), 100000, c.cmd, "admin")).(Result)
		if KindOf(res.Err) != c.kind {
			t.Errorf("%s %+v: error %v, want kind %d", c.cmd.CommandType(), c.cmd, res.Err, c.kind)
		}
	}
	if !bytes.Equal(tablesOf(before), tablesOf(snapshotBytes(t, f))) {
		t.Fatal("a rejected security command altered the state")
	}
}

func TestSecuritySnapshotAndDeterminism(t *testing.T) {
	var first []byte
	for range 5 {
		f := New(nil)
		for _, l := range securityLog(t) {
			f.Apply(l)
		}
		snap := snapshotBytes(t, f)
		if first == nil {
			first = snap
		} else if !bytes.Equal(first, snap) {
			t.Fatal("snapshot bytes vary between runs")
		}
		if got := snapshotBytes(t, restore(t, snap)); !bytes.Equal(got, snap) {
			t.Fatal("restore then snapshot differs")
		}
	}
	r := restore(t, first)
	r.Read(func(s *State) {
		db := s.SecurityDB()
		if db.Version != 10 {
			t.Fatalf("restored version %d", db.Version)
		}
		// The restored roles are compiled: they grant as before.
		if !db.Allows("analyst", auth.Resource{Type: auth.Datasource, Name: "wiki"}, auth.Read) {
			t.Fatal("restored analyst cannot read wiki")
		}
		if c := db.Users["analyst"].Credentials; c == nil || !bytes.Equal(c.Salt, creds(3).Salt) {
			t.Fatal("restored credentials differ")
		}
	})
}

func TestSecuritySnapshotRejectsBadRecords(t *testing.T) {
	f := New(nil)
	for _, l := range securityLog(t) {
		f.Apply(l)
	}
	snap := snapshotBytes(t, f)
	var role, user []byte
	f.Read(func(s *State) {
		r := *s.SecurityDB().Roles["reader"]
		role, _ = json.Marshal(&r)
		u := *s.SecurityDB().AuthzUsers["analyst"]
		user, _ = json.Marshal(&u)
	})
	for _, c := range []struct {
		good []byte
		bad  string
	}{
		{role, `{"name":"reader","permissions":[{"resource":{"type":"DATASOURCE","name":"("},"action":"READ"}],"version":8}`},
		{role, `{"name":"","permissions":[],"version":8}`},
		{user, `{"name":"analyst","roles":["reader","ghost"]}`},
		{user, `{"name":"analyst","roles":["reader","auditor","auditor"]}`},
		{user, `{"name":"analyst","roles":["auditor","auditor"]}`},
	} {
		i := bytes.Index(snap, c.good)
		if i < 0 {
			t.Fatalf("record %s not in the snapshot", c.good)
		}
		prefix := len(binary.AppendUvarint(nil, uint64(len(c.good))))
		out := append([]byte{}, snap[:i-prefix]...)
		out = binary.AppendUvarint(out, uint64(len(c.bad)))
		out = append(out, c.bad...)
		out = append(out, snap[i+len(c.good):]...)
		if err := New(nil).Restore(nopCloser{bytes.NewReader(out)}); err == nil {
			t.Errorf("restore accepted %s", c.bad)
		}
	}
}
