package basic

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"sync"

	"strata/auth"
)

// Source gives the current DB. Refresh brings it up to date when it may be
// stale (a data node's or a follower's copy) and returns it; limit asks for
// the rate limit of refreshes anyone can cause (failed logins).
type Source interface {
	Current() *DB
	Refresh(limit bool) *DB
}

// Authenticator is the basic authenticator: HTTP Basic credentials checked
// against the DB's PBKDF2 hashes, with a cache of verified passwords so that
// only the first request of a user pays the hash's cost (about 10 ms).
type Authenticator struct {
	// Name is the authenticator's name in the chain ("basic"), recorded in
	// the identities it makes.
	Name string
	// InternalUser is the escalator's internal client
	// (svc.escalator.internalClientUsername): its identity is Internal.
	InternalUser string
	src          Source

	cacheKey []byte // HMAC key of the cache, random per process
	mu       sync.RWMutex
	verified map[verifiedKey]struct{}
}

// verifiedKey is a verified (user, password, credential version): a new
// password has a new version, so the old entry no longer matches, and a
// deleted user is not found before the cache is asked.
type verifiedKey struct {
	user    string
	digest  [sha256.Size]byte // HMAC of the password under cacheKey: the password itself is not kept
	version uint64
}

// maxVerified bounds the cache; when full it starts over.
const maxVerified = 10000

// NewAuthenticator returns the basic authenticator over src.
func NewAuthenticator(name, internalUser string, src Source) *Authenticator {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return &Authenticator{Name: name, InternalUser: internalUser, src: src, cacheKey: k, verified: map[verifiedKey]struct{}{}}
}

// Authenticate implements auth.Authenticator. A user unknown to this node's
// copy or a wrong password make a data node fetch the leader's DB once
// (rate-limited) before the answer is no: a user created or a password
// changed on the leader logs in on every node as soon as the write is
// acknowledged.
func (a *Authenticator) Authenticate(r *http.Request) (*auth.Identity, error) {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return nil, nil
	}
	db := a.src.Current()
	if !a.Verify(db, user, pass) {
		fresh := a.src.Refresh(true)
		if fresh == db || !a.Verify(fresh, user, pass) {
			return nil, auth.ErrBadCredentials
		}
	}
	return &auth.Identity{Name: user, Authenticator: a.Name, Internal: user == a.InternalUser}, nil
}

// Verify reports whether password is user's in db, from the cache when this
// exact password was verified for the user's current credentials before.
func (a *Authenticator) Verify(db *DB, user, password string) bool {
	if db == nil {
		return false
	}
	u := db.Users[user]
	if u == nil || u.Credentials == nil {
		return false
	}
	mac := hmac.New(sha256.New, a.cacheKey)
	mac.Write([]byte(password))
	k := verifiedKey{user: user, version: u.Credentials.Version}
	mac.Sum(k.digest[:0])
	a.mu.RLock()
	_, hit := a.verified[k]
	a.mu.RUnlock()
	if hit {
		return true
	}
	if !u.Credentials.Matches(password) {
		return false
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerified {
		a.verified = map[verifiedKey]struct{}{}
	}
	a.verified[k] = struct{}{}
	a.mu.Unlock()
	return true
}

// Authorizer is the basic authorizer: an identity may do what one of its
// roles' permissions grants. The internal client may do everything.
type Authorizer struct {
	src Source
}

// NewAuthorizer returns the basic authorizer over src.
func NewAuthorizer(src Source) *Authorizer { return &Authorizer{src: src} }

// Authorize implements auth.Authorizer. A denial on a data node or a
// follower first brings its copy up to date, so that a permission granted
// and acknowledged a moment ago on the leader is seen.
func (a *Authorizer) Authorize(id *auth.Identity, r auth.Resource, act auth.Action) bool {
	if id == nil {
		return false
	}
	if id.Internal {
		return true
	}
	db := a.src.Current()
	if db != nil && db.Allows(id.Name, r, act) {
		return true
	}
	fresh := a.src.Refresh(false)
	return fresh != db && fresh != nil && fresh.Allows(id.Name, r, act)
}

// Permissions implements auth.PermissionLister: the permissions of the
// identity's roles, each once, in role order.
func (a *Authorizer) Permissions(id *auth.Identity) []auth.Permission {
	if id == nil {
		return nil
	}
	if id.Internal {
		return AllPermissions()
	}
	db := a.src.Current()
	if db == nil {
		return nil
	}
	out := []auth.Permission{}
	seen := map[auth.Permission]bool{}
	for _, role := range db.UserRoles(id.Name) {
		for _, p := range role.Permissions {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
