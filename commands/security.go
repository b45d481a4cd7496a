package commands

import "strata/auth"

// Druid's basic-security database as commands: the authenticator's users and
// their credentials, the authorizer's users, roles, role assignments and
// permissions. Passwords never travel in a command: the leader derives the
// PBKDF2 hash first (auth/basic.Hash) and proposes only the hash, so the log,
// the audit, the snapshots and `strata log dump` never hold a password.

// HashedCredentials is a password's salted PBKDF2-HMAC-SHA512 hash.
type HashedCredentials struct {
	Salt       []byte `json:"salt"`
	Hash       []byte `json:"hash"`
	Iterations int    `json:"iterations"`
}

// CreateUser adds a user to the authenticator, without credentials.
type CreateUser struct {
	Name string `json:"name"`
}

// CommandType implements Command.
func (CreateUser) CommandType() string { return "security.user.create" }

// DeleteUser removes a user and its credentials from the authenticator.
type DeleteUser struct {
	Name string `json:"name"`
}

// CommandType implements Command.
func (DeleteUser) CommandType() string { return "security.user.delete" }

// SetCredentials replaces an authenticator user's credentials.
type SetCredentials struct {
	Name        string            `json:"name"`
	Credentials HashedCredentials `json:"credentials"`
}

// CommandType implements Command.
func (SetCredentials) CommandType() string { return "security.credentials.set" }

// CreateAuthzUser adds a user, without roles, to the authorizer.
type CreateAuthzUser struct {
	Name string `json:"name"`
}

// CommandType implements Command.
func (CreateAuthzUser) CommandType() string { return "security.authzUser.create" }

// DeleteAuthzUser removes a user and its role assignments from the authorizer.
type DeleteAuthzUser struct {
	Name string `json:"name"`
}

// CommandType implements Command.
func (DeleteAuthzUser) CommandType() string { return "security.authzUser.delete" }

// CreateRole adds a role without permissions.
type CreateRole struct {
	Name string `json:"name"`
}

// CommandType implements Command.
func (CreateRole) CommandType() string { return "security.role.create" }

// DeleteRole removes a role and unassigns it from every user.
type DeleteRole struct {
	Name string `json:"name"`
}

// CommandType implements Command.
func (DeleteRole) CommandType() string { return "security.role.delete" }

// AssignRole gives an authorizer user a role.
type AssignRole struct {
	User string `json:"user"`
	Role string `json:"role"`
}

// CommandType implements Command.
func (AssignRole) CommandType() string { return "security.role.assign" }

// UnassignRole takes a role from an authorizer user.
type UnassignRole struct {
	User string `json:"user"`
	Role string `json:"role"`
}

// CommandType implements Command.
func (UnassignRole) CommandType() string { return "security.role.unassign" }

// SetRolePermissions replaces a role's permission list.
type SetRolePermissions struct {
	Role        string            `json:"role"`
	Permissions []auth.Permission `json:"permissions"`
}

// CommandType implements Command.
func (SetRolePermissions) CommandType() string { return "security.role.permissions.set" }

// BootstrapSecurity creates, once, what Druid's basic extension creates at
// its first start with initialAdminPassword and
// initialInternalClientPassword set: the users "admin" and InternalUser in
// both databases, with these credentials, and the role "admin" holding every
// permission, assigned to both. Anything that already exists is left as it
// is, so a changed password or role survives a restart.
type BootstrapSecurity struct {
	Admin        *HashedCredentials `json:"adminCredentials,omitempty"`
	InternalUser string             `json:"internalUser"`
	Internal     *HashedCredentials `json:"internalCredentials,omitempty"`
}

// CommandType implements Command.
func (BootstrapSecurity) CommandType() string { return "security.bootstrap" }

func init() {
	Register(CreateUser{}, false)
	Register(DeleteUser{}, false)
	Register(SetCredentials{}, false)
	Register(CreateAuthzUser{}, false)
	Register(DeleteAuthzUser{}, false)
	Register(CreateRole{}, false)
	Register(DeleteRole{}, false)
	Register(AssignRole{}, false)
	Register(UnassignRole{}, false)
	Register(SetRolePermissions{}, false)
	Register(BootstrapSecurity{}, false)
}
