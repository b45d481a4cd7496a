// Package auth is Strata's security model, after Druid's: an Authenticator
// turns a request's credentials into an Identity, an Authorizer says whether
// an Identity may perform an Action on a Resource. The HTTP server runs the
// configured authenticator chain on every request and puts the Identity in
// the request's context; handlers that act on resources named only inside
// the request (a query's datasources, an ingestion's input sources) call
// Check with that context.
//
// The package holds only the types and the context plumbing, so that the
// data plane can import it: the basic authenticator and authorizer (users,
// roles and permissions in the Raft log) live elsewhere.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Identity is an authenticated caller.
type Identity struct {
	// Name is the user name.
	Name string
	// Authenticator is the name of the authenticator of the chain that
	// recognised the credentials ("basic"); the authorizer it names decides.
	Authenticator string
	// Internal marks the escalator's internal client: Strata's own processes
	// calling each other, which alone may call /svc-internal/ and are allowed
	// everything.
	Internal bool
}

// ResourceType is one of Druid's resource types.
type ResourceType string

// Druid's resource types.
const (
	Datasource   ResourceType = "DATASOURCE"
	Config       ResourceType = "CONFIG"
	State        ResourceType = "STATE"
	External     ResourceType = "EXTERNAL"
	SystemTable  ResourceType = "SYSTEM_TABLE"
	QueryContext ResourceType = "QUERY_CONTEXT"
)

// ResourceTypes lists every resource type, in Druid's order.
var ResourceTypes = []ResourceType{Datasource, Config, State, External, SystemTable, QueryContext}

// Action is what is done to a resource.
type Action string

// Druid's actions.
const (
	Read  Action = "READ"
	Write Action = "WRITE"
)

// Resource is a named resource of a type. Druid names the fixed CONFIG and
// STATE resources "CONFIG" and "STATE"; datasources by their name; EXTERNAL
// by the input source type.
type Resource struct {
	Type ResourceType `json:"type"`
	Name string       `json:"name"`
}

func (r Resource) String() string { return string(r.Type) + ":" + r.Name }

// ResourcePattern is a permission's resource: Name is a regular expression
// that must match the whole resource name (Druid's ResourcePattern).
type ResourcePattern struct {
	Type ResourceType `json:"type"`
	Name string       `json:"name"`
}

// Permission is one grant of a role, in Druid's JSON shape:
// {"resource": {"type": "DATASOURCE", "name": "wiki.*"}, "action": "READ"}.
type Permission struct {
	Resource ResourcePattern `json:"resource"`
	Action   Action          `json:"action"`
}

// Authenticator recognises a request's credentials. It returns nil, nil when
// the request carries none it handles (the next authenticator of the chain
// is asked), and ErrBadCredentials (possibly wrapped) when it carries
// credentials it handles that are wrong.
type Authenticator interface {
	Authenticate(r *http.Request) (*Identity, error)
}

// Authorizer decides whether an identity may perform an action on a
// resource. It must be safe for concurrent use and cheap: it runs on every
// request.
type Authorizer interface {
	Authorize(id *Identity, r Resource, a Action) bool
}

// PermissionLister is an Authorizer that can list an identity's grants (the
// union of its roles' permissions), for GET /svc/v1/self. An authorizer
// that cannot list them leaves the list empty: a client then offers
// nothing, and the API still decides every call.
type PermissionLister interface {
	Permissions(id *Identity) []Permission
}

// Errors of authentication and authorization; the server answers them with
// 401 and 403.
var (
	ErrBadCredentials  = errors.New("wrong user name or password")
	ErrUnauthenticated = errors.New("no credentials")
	ErrForbidden       = errors.New("not allowed")
)

// ForbiddenError names what an identity may not do; errors.Is(err,
// ErrForbidden) holds for it.
type ForbiddenError struct {
	Resource Resource
	Action   Action
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("not allowed to %s %s", e.Action, e.Resource)
}

func (e *ForbiddenError) Is(target error) bool { return target == ErrForbidden }

type identityKey struct{}
type authorizerKey struct{}

// WithIdentity returns ctx carrying the request's identity.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity ctx carries, or nil.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// WithAuthorizer returns ctx carrying the authorizer that decides for the
// request's identity. Without one, security is off and Check allows all.
func WithAuthorizer(ctx context.Context, a Authorizer) context.Context {
	return context.WithValue(ctx, authorizerKey{}, a)
}

// AuthorizerFrom returns the authorizer ctx carries, or nil (security off).
func AuthorizerFrom(ctx context.Context) Authorizer {
	a, _ := ctx.Value(authorizerKey{}).(Authorizer)
	return a
}

// Enabled reports whether ctx is a request on which security is on.
func Enabled(ctx context.Context) bool { return AuthorizerFrom(ctx) != nil }

// Check returns nil when the context's identity may perform a on r, or when
// security is off (no authorizer in ctx); ErrUnauthenticated when security is
// on and there is no identity; otherwise a *ForbiddenError. The internal
// client may do everything.
func Check(ctx context.Context, r Resource, a Action) error {
	az := AuthorizerFrom(ctx)
	if az == nil {
		return nil
	}
	id := IdentityFrom(ctx)
	if id == nil {
		return ErrUnauthenticated
	}
	if id.Internal || az.Authorize(id, r, a) {
		return nil
	}
	return &ForbiddenError{Resource: r, Action: a}
}

// Allowed is Check as a boolean, for filtering listings.
func Allowed(ctx context.Context, r Resource, a Action) bool { return Check(ctx, r, a) == nil }
