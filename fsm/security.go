package fsm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"strata/auth"
	"strata/auth/basic"
	"strata/commands"
)

// AuditSecurity is the audit type of user, credential, role and permission
// changes; the key is the user or role changed. Payloads never hold
// credentials, not even hashed.
const AuditSecurity = "basic.security"

// AdminUser and AdminRole are what BootstrapSecurity creates, as Druid names them.
const (
	AdminUser = "admin"
	AdminRole = "admin"
)

// securityTable holds the basic-security database. The DB is immutable: each
// change publishes a changed clone, so readers (every authenticated request)
// keep a pointer without a lock.
type securityTable struct {
	db *basic.DB // nil: empty
}

func (t *securityTable) get() *basic.DB {
	if t.db == nil {
		return basic.Empty()
	}
	return t.db
}

// SecurityDB returns the current basic-security database. Never modify it.
func (s *State) SecurityDB() *basic.DB { return s.security.get() }

// Druid's messages.
func userMissing(name string) error { return NotFound("User [%s] does not exist.", name) }
func roleMissing(name string) error { return NotFound("Role [%s] does not exist.", name) }

func checkName(what, name string) error {
	if err := basic.ValidateName(what, name); err != nil {
		return Invalid("%s", err.Error())
	}
	return nil
}

// change clones the DB, lets fn change the clone and publishes it with the
// entry's index as its version, and records the audit entry.
func (s *State) changeSecurity(m Meta, key string, payload any, fn func(db *basic.DB) error) (any, error) {
	db := s.security.get().Clone()
	if err := fn(db); err != nil {
		return nil, err
	}
	db.Version = m.Index
	s.security.db = db
	b, _ := json.Marshal(payload)
	s.audit.add(m, key, AuditSecurity, string(b))
	return nil, nil
}

func credentialsFrom(c commands.HashedCredentials, version uint64) (*basic.Credentials, error) {
	cr := &basic.Credentials{Salt: c.Salt, Hash: c.Hash, Iterations: c.Iterations, Version: version}
	if err := basic.ValidateCredentials(cr); err != nil {
		return nil, Invalid("%s", err.Error())
	}
	return cr, nil
}

func applyCreateUser(s *State, m Meta, c commands.CreateUser) (any, error) {
	if err := checkName("user", c.Name); err != nil {
		return nil, err
	}
	if s.security.get().Users[c.Name] != nil {
		return nil, Invalid("User [%s] already exists.", c.Name)
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "createUser", "user": c.Name}, func(db *basic.DB) error {
		db.Users[c.Name] = &basic.User{Name: c.Name}
		return nil
	})
}

func applyDeleteUser(s *State, m Meta, c commands.DeleteUser) (any, error) {
	if s.security.get().Users[c.Name] == nil {
		return nil, userMissing(c.Name)
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "deleteUser", "user": c.Name}, func(db *basic.DB) error {
		delete(db.Users, c.Name)
		return nil
	})
}

func applySetCredentials(s *State, m Meta, c commands.SetCredentials) (any, error) {
	if s.security.get().Users[c.Name] == nil {
		return nil, userMissing(c.Name)
	}
	cr, err := credentialsFrom(c.Credentials, m.Index)
	if err != nil {
		return nil, err
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "updateCredentials", "user": c.Name}, func(db *basic.DB) error {
		db.Users[c.Name] = &basic.User{Name: c.Name, Credentials: cr}
		return nil
	})
}

func applyCreateAuthzUser(s *State, m Meta, c commands.CreateAuthzUser) (any, error) {
	if err := checkName("user", c.Name); err != nil {
		return nil, err
	}
	if s.security.get().AuthzUsers[c.Name] != nil {
		return nil, Invalid("User [%s] already exists.", c.Name)
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "createAuthorizerUser", "user": c.Name}, func(db *basic.DB) error {
		db.AuthzUsers[c.Name] = &basic.AuthzUser{Name: c.Name, Roles: []string{}}
		return nil
	})
}

func applyDeleteAuthzUser(s *State, m Meta, c commands.DeleteAuthzUser) (any, error) {
	if s.security.get().AuthzUsers[c.Name] == nil {
		return nil, userMissing(c.Name)
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "deleteAuthorizerUser", "user": c.Name}, func(db *basic.DB) error {
		delete(db.AuthzUsers, c.Name)
		return nil
	})
}

func applyCreateRole(s *State, m Meta, c commands.CreateRole) (any, error) {
	if err := checkName("role", c.Name); err != nil {
		return nil, err
	}
	if s.security.get().Roles[c.Name] != nil {
		return nil, Invalid("Role [%s] already exists.", c.Name)
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "createRole", "role": c.Name}, func(db *basic.DB) error {
		db.Roles[c.Name] = &basic.Role{Name: c.Name, Permissions: []auth.Permission{}, Version: m.Index}
		return nil
	})
}

func applyDeleteRole(s *State, m Meta, c commands.DeleteRole) (any, error) {
	if s.security.get().Roles[c.Name] == nil {
		return nil, roleMissing(c.Name)
	}
	return s.changeSecurity(m, c.Name, map[string]string{"action": "deleteRole", "role": c.Name}, func(db *basic.DB) error {
		delete(db.Roles, c.Name)
		for name, u := range db.AuthzUsers {
			if slices.Contains(u.Roles, c.Name) {
				db.AuthzUsers[name] = &basic.AuthzUser{Name: name, Roles: slices.DeleteFunc(slices.Clone(u.Roles), func(r string) bool { return r == c.Name })}
			}
		}
		return nil
	})
}

func applyAssignRole(s *State, m Meta, c commands.AssignRole) (any, error) {
	db := s.security.get()
	u := db.AuthzUsers[c.User]
	switch {
	case u == nil:
		return nil, userMissing(c.User)
	case db.Roles[c.Role] == nil:
		return nil, roleMissing(c.Role)
	case slices.Contains(u.Roles, c.Role):
		return nil, Invalid("User [%s] already has role [%s].", c.User, c.Role)
	}
	return s.changeSecurity(m, c.User, map[string]string{"action": "assignRole", "user": c.User, "role": c.Role}, func(db *basic.DB) error {
		roles := append(slices.Clone(u.Roles), c.Role)
		slices.Sort(roles)
		db.AuthzUsers[c.User] = &basic.AuthzUser{Name: c.User, Roles: roles}
		return nil
	})
}

func applyUnassignRole(s *State, m Meta, c commands.UnassignRole) (any, error) {
	db := s.security.get()
	u := db.AuthzUsers[c.User]
	switch {
	case u == nil:
		return nil, userMissing(c.User)
	case db.Roles[c.Role] == nil:
		return nil, roleMissing(c.Role)
	case !slices.Contains(u.Roles, c.Role):
		return nil, Invalid("User [%s] does not have role [%s].", c.User, c.Role)
	}
	return s.changeSecurity(m, c.User, map[string]string{"action": "unassignRole", "user": c.User, "role": c.Role}, func(db *basic.DB) error {
		roles := slices.DeleteFunc(slices.Clone(u.Roles), func(r string) bool { return r == c.Role })
		db.AuthzUsers[c.User] = &basic.AuthzUser{Name: c.User, Roles: roles}
		return nil
	})
}

func applySetRolePermissions(s *State, m Meta, c commands.SetRolePermissions) (any, error) {
	if s.security.get().Roles[c.Role] == nil {
		return nil, roleMissing(c.Role)
	}
	perms := c.Permissions
	if perms == nil {
		perms = []auth.Permission{}
	}
	r := &basic.Role{Name: c.Role, Permissions: perms, Version: m.Index}
	if err := r.Compile(); err != nil {
		return nil, Invalid("%s", err.Error())
	}
	payload := struct {
		Action      string            `json:"action"`
		Role        string            `json:"role"`
		Permissions []auth.Permission `json:"permissions"`
	}{"setPermissions", c.Role, perms}
	return s.changeSecurity(m, c.Role, payload, func(db *basic.DB) error {
		db.Roles[c.Role] = r
		return nil
	})
}

func applyBootstrapSecurity(s *State, m Meta, c commands.BootstrapSecurity) (any, error) {
	if err := checkName("user", c.InternalUser); err != nil {
		return nil, err
	}
	if c.InternalUser == AdminUser {
		return nil, Invalid("the internal client cannot be named %q", AdminUser)
	}
	var admin, internal *basic.Credentials
	var err error
	if c.Admin != nil {
		if admin, err = credentialsFrom(*c.Admin, m.Index); err != nil {
			return nil, err
		}
	}
	if c.Internal != nil {
		if internal, err = credentialsFrom(*c.Internal, m.Index); err != nil {
			return nil, err
		}
	}
	var created []string
	return s.changeSecurity(m, "bootstrap", map[string]any{"action": "bootstrap", "created": &created}, func(db *basic.DB) error {
		if db.Roles[AdminRole] == nil {
			r := &basic.Role{Name: AdminRole, Permissions: basic.AllPermissions(), Version: m.Index}
			if err := r.Compile(); err != nil {
				return Invalid("%s", err.Error())
			}
			db.Roles[AdminRole] = r
			created = append(created, "role "+AdminRole)
		}
		for _, u := range []struct {
			name string
			cr   *basic.Credentials
		}{{AdminUser, admin}, {c.InternalUser, internal}} {
			if u.cr == nil {
				continue
			}
			if db.Users[u.name] == nil {
				db.Users[u.name] = &basic.User{Name: u.name, Credentials: u.cr}
				created = append(created, "user "+u.name)
			}
			if db.AuthzUsers[u.name] == nil {
				db.AuthzUsers[u.name] = &basic.AuthzUser{Name: u.name, Roles: []string{AdminRole}}
				created = append(created, "authorizer user "+u.name)
			}
		}
		return nil
	})
}

// ---- snapshot ----

type securityVersionSnapshot struct {
	Version uint64 `json:"version"`
}

func securityTableOf[R any](name string, records func(db *basic.DB) []R, key func(R) string, restore func(db *basic.DB, r R) error) table {
	return table{
		name: name,
		freeze: func(s *State) (int, func(*recordWriter) error) {
			recs := records(s.security.get())
			return len(recs), func(w *recordWriter) error {
				slices.SortFunc(recs, func(a, b R) int { return strings.Compare(key(a), key(b)) })
				for i := range recs {
					if err := w.write(&recs[i]); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			if n == 0 {
				return nil // an empty table leaves the state as it is (nil: never changed)
			}
			db := s.security.get().Clone()
			for i := 0; i < n; i++ {
				var rec R
				if err := r.read(&rec); err != nil {
					return err
				}
				if err := restore(db, rec); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			s.security.db = db
			return nil
		},
	}
}

func init() {
	on(applyCreateUser)
	on(applyDeleteUser)
	on(applySetCredentials)
	on(applyCreateAuthzUser)
	on(applyDeleteAuthzUser)
	on(applyCreateRole)
	on(applyDeleteRole)
	on(applyAssignRole)
	on(applyUnassignRole)
	on(applySetRolePermissions)
	on(applyBootstrapSecurity)
	// Roles before the users that have them, so that restore can check
	// every assignment; the version last, as it validates the whole.
	tables = append(tables,
		securityTableOf("security_users",
			func(db *basic.DB) []basic.User {
				out := make([]basic.User, 0, len(db.Users))
				for _, u := range db.Users {
					out = append(out, *u)
				}
				return out
			},
			func(u basic.User) string { return u.Name },
			func(db *basic.DB, u basic.User) error {
				if db.Users[u.Name] != nil {
					return fmt.Errorf("user %q is duplicated", u.Name)
				}
				if u.Credentials != nil {
					if err := basic.ValidateCredentials(u.Credentials); err != nil {
						return fmt.Errorf("user %q: %w", u.Name, err)
					}
				}
				db.Users[u.Name] = &u
				return nil
			}),
		securityTableOf("security_roles",
			func(db *basic.DB) []basic.Role {
				out := make([]basic.Role, 0, len(db.Roles))
				for _, r := range db.Roles {
					out = append(out, basic.Role{Name: r.Name, Permissions: r.Permissions, Version: r.Version})
				}
				return out
			},
			func(r basic.Role) string { return r.Name },
			func(db *basic.DB, r basic.Role) error {
				if db.Roles[r.Name] != nil {
					return fmt.Errorf("role %q is duplicated", r.Name)
				}
				if r.Permissions == nil {
					r.Permissions = []auth.Permission{}
				}
				db.Roles[r.Name] = &r
				return nil
			}),
		securityTableOf("security_authz_users",
			func(db *basic.DB) []basic.AuthzUser {
				out := make([]basic.AuthzUser, 0, len(db.AuthzUsers))
				for _, u := range db.AuthzUsers {
					out = append(out, *u)
				}
				return out
			},
			func(u basic.AuthzUser) string { return u.Name },
			func(db *basic.DB, u basic.AuthzUser) error {
				if db.AuthzUsers[u.Name] != nil {
					return fmt.Errorf("authorizer user %q is duplicated", u.Name)
				}
				if u.Roles == nil {
					u.Roles = []string{}
				}
				db.AuthzUsers[u.Name] = &u
				return nil
			}),
		table{
			name: "security_version",
			freeze: func(s *State) (int, func(*recordWriter) error) {
				if s.security.db == nil {
					return 0, func(*recordWriter) error { return nil }
				}
				v := securityVersionSnapshot{Version: s.security.db.Version}
				return 1, func(w *recordWriter) error { return w.write(&v) }
			},
			restore: func(s *State, r *recordReader, n int) error {
				if n == 0 && s.security.db == nil {
					return nil // security never changed: stays nil, as it snapshots
				}
				db := s.security.get().Clone()
				if n > 1 {
					return fmt.Errorf("security_version has %d records", n)
				}
				if n == 1 {
					var v securityVersionSnapshot
					if err := r.read(&v); err != nil {
						return err
					}
					db.Version = v.Version
				}
				if err := db.Prepare(); err != nil {
					return fmt.Errorf("security: %w", err)
				}
				s.security.db = db
				return nil
			},
		})
}
