package server

import (
	"net/http"

	"strata/auth"
	"strata/auth/basic"
)

// selfAnswer is GET /svc/v1/self: who the caller is and what it may do. The
// web console reads it to offer only the views and actions the API would
// allow (it still shows a 403 if one happens).
type selfAnswer struct {
	Identity        string            `json:"identity"`
	Authenticator   string            `json:"authenticator"`
	SecurityEnabled bool              `json:"securityEnabled"`
	Permissions     []auth.Permission `json:"permissions"`
}

// self answers the caller's identity and resolved permissions: the union of
// its roles' grants, in Druid's shape, resource names as the regular
// expressions the authorizer matches. With security off, everyone may do
// everything: every action on every resource.
func (s *Server) self(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	out := selfAnswer{Permissions: []auth.Permission{}}
	id := auth.IdentityFrom(ctx)
	switch {
	case !auth.Enabled(ctx) || id == nil:
		out.Permissions = basic.AllPermissions()
	case id.Internal:
		out = selfAnswer{Identity: id.Name, Authenticator: id.Authenticator, SecurityEnabled: true, Permissions: basic.AllPermissions()}
	default:
		out.Identity, out.Authenticator, out.SecurityEnabled = id.Name, id.Authenticator, true
		if l, ok := auth.AuthorizerFrom(ctx).(auth.PermissionLister); ok {
			if p := l.Permissions(id); p != nil {
				out.Permissions = p
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}
