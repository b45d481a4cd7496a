// Package basic is Druid's basic-security model on Strata's Raft log: users
// with PBKDF2 credentials (the authenticator's database), users with roles and
// roles with permissions (the authorizer's database). A DB is an immutable
// value: the FSM replaces it on every change (fsm/security.go), data nodes
// replace theirs with each copy fetched from the leader (Remote), so readers
// on the query path hold a pointer and never a lock.
//
// As in Druid, a user exists twice: in the authenticator (who may log in) and
// in the authorizer (which roles it has); each API creates and deletes its own.
package basic

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"strata/auth"
)

// Credentials is a user's stored password: a salted, iterated PBKDF2 hash
// (never the password). Version is the Raft index that set it, so that a
// cache of verified passwords keyed by it forgets a changed password at once.
type Credentials struct {
	Salt       []byte `json:"salt"`
	Hash       []byte `json:"hash"`
	Iterations int    `json:"iterations"`
	Version    uint64 `json:"version"`
}

// User is a user of the authenticator. Credentials is nil until a password
// is set: such a user cannot log in (as in Druid).
type User struct {
	Name        string       `json:"name"`
	Credentials *Credentials `json:"credentials,omitempty"`
}

// AuthzUser is a user of the authorizer with its role names, sorted.
type AuthzUser struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
}

// Role is a named set of permissions. Version is the Raft index of its last
// change: the compiled patterns belong to that version only.
type Role struct {
	Name        string            `json:"name"`
	Permissions []auth.Permission `json:"permissions"`
	Version     uint64            `json:"version"`

	compiled []compiledPermission
}

type compiledPermission struct {
	typ    auth.ResourceType
	action auth.Action
	name   *regexp.Regexp
}

// DB is the whole user, credential and role database. Never modify a DB that
// others may hold: Clone it, change the clone, then publish the clone.
type DB struct {
	// Version is the Raft index of the last change (0: none yet). Data nodes
	// compare it to the leader's to know when to fetch.
	Version    uint64                `json:"version"`
	Users      map[string]*User      `json:"users"`
	AuthzUsers map[string]*AuthzUser `json:"authzUsers"`
	Roles      map[string]*Role      `json:"roles"`
}

// Empty is a DB without users or roles.
func Empty() *DB {
	return &DB{Users: map[string]*User{}, AuthzUsers: map[string]*AuthzUser{}, Roles: map[string]*Role{}}
}

// Clone returns a copy whose maps may be changed; the records are shared
// (they are never changed in place, only replaced).
func (d *DB) Clone() *DB {
	if d == nil {
		return Empty()
	}
	return &DB{Version: d.Version, Users: maps.Clone(d.Users), AuthzUsers: maps.Clone(d.AuthzUsers), Roles: maps.Clone(d.Roles)}
}

// Prepare validates a DB read from elsewhere (a snapshot, the leader's
// answer) and compiles its roles' patterns. It fills nil maps.
func (d *DB) Prepare() error {
	if d.Users == nil {
		d.Users = map[string]*User{}
	}
	if d.AuthzUsers == nil {
		d.AuthzUsers = map[string]*AuthzUser{}
	}
	if d.Roles == nil {
		d.Roles = map[string]*Role{}
	}
	for k, u := range d.Users {
		if u == nil || u.Name != k {
			return fmt.Errorf("authenticator user %q is malformed", k)
		}
		if err := ValidateName("user", k); err != nil {
			return err
		}
		if c := u.Credentials; c != nil && (len(c.Salt) == 0 || len(c.Hash) == 0 || c.Iterations <= 0) {
			return fmt.Errorf("credentials of user %q are malformed", k)
		}
	}
	for k, r := range d.Roles {
		if r == nil || r.Name != k {
			return fmt.Errorf("role %q is malformed", k)
		}
		if err := ValidateName("role", k); err != nil {
			return err
		}
		if err := r.Compile(); err != nil {
			return fmt.Errorf("role %q: %w", k, err)
		}
	}
	for k, u := range d.AuthzUsers {
		if u == nil || u.Name != k {
			return fmt.Errorf("authorizer user %q is malformed", k)
		}
		if err := ValidateName("user", k); err != nil {
			return err
		}
		if !slices.IsSorted(u.Roles) {
			return fmt.Errorf("roles of user %q are not sorted", k)
		}
		for i, rn := range u.Roles {
			if i > 0 && u.Roles[i-1] == rn {
				return fmt.Errorf("user %q has role %q twice", k, rn)
			}
			if d.Roles[rn] == nil {
				return fmt.Errorf("user %q has role %q, which does not exist", k, rn)
			}
		}
	}
	return nil
}

// MaxNameLength bounds user and role names.
const MaxNameLength = 255

// ValidateName checks a user or role name: not empty, not too long, and free
// of characters that would make its API path ambiguous.
func ValidateName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name must not be empty", what)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%s name is %d bytes long; the limit is %d", what, len(name), MaxNameLength)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%s name %q cannot contain '/'", what, name)
	}
	return nil
}

// UserRoles returns the roles of an authorizer user (nil if unknown).
func (d *DB) UserRoles(name string) []*Role {
	u := d.AuthzUsers[name]
	if u == nil {
		return nil
	}
	out := make([]*Role, 0, len(u.Roles))
	for _, rn := range u.Roles {
		if r := d.Roles[rn]; r != nil {
			out = append(out, r)
		}
	}
	return out
}

// RoleUsers returns, sorted, the authorizer users that have role name.
func (d *DB) RoleUsers(name string) []string {
	out := []string{}
	for un, u := range d.AuthzUsers {
		if slices.Contains(u.Roles, name) {
			out = append(out, un)
		}
	}
	slices.Sort(out)
	return out
}

// Allows reports whether any of the user's roles grants a on r.
func (d *DB) Allows(user string, r auth.Resource, a auth.Action) bool {
	for _, role := range d.UserRoles(user) {
		if role.Allows(r, a) {
			return true
		}
	}
	return false
}

// Allows reports whether one of the role's permissions grants a on r: same
// type and action, and a pattern matching the whole name.
func (r *Role) Allows(res auth.Resource, a auth.Action) bool {
	for _, p := range r.compiled {
		if p.typ == res.Type && p.action == a && p.name.MatchString(res.Name) {
			return true
		}
	}
	return false
}

// Compile compiles the role's permission patterns (done once per role
// version, when the record is made).
func (r *Role) Compile() error {
	c, err := compilePermissions(r.Permissions)
	if err != nil {
		return err
	}
	r.compiled = c
	return nil
}
