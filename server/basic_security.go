package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"strata/auth"
	"strata/auth/basic"
	"strata/commands"
	"strata/fsm"
)

// Druid's basic-security API (druid-basic-security's
// /druid-ext/basic-security/..., with svc for druid) over the Raft log's
// user and role database (fsm/security.go). Reads are answered by the
// leader from its FSM; changes are commands proposed by the leader. Unknown
// users and roles are 404 with Druid's messages ("User [x] does not exist.").
//
// The internal endpoint basic.DBPath is where data nodes fetch the database
// from (basic.Remote): hashes and roles, never passwords.

func (s *Server) securityDB() *basic.DB {
	var db *basic.DB
	s.node.FSM().Read(func(st *fsm.State) { db = st.SecurityDB() })
	return db
}

// loadStatus answers {"basic": true}: the FSM is the database, loaded
// whenever the node answers at all.
func (s *Server) securityLoadStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"basic": true})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ---- authentication ----

func (s *Server) authnUsers(w http.ResponseWriter, r *http.Request) {
	writeJSONPlain(w, http.StatusOK, sortedKeys(s.securityDB().Users))
}

// authnUser answers {"name": ..., "credentials": {"iterations": ...}}. Druid
// shows the salt and hash too; Strata leaves them out: anyone who may read
// the security config could otherwise guess passwords offline.
func (s *Server) authnUser(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["userName"]
	u := s.securityDB().Users[name]
	if u == nil {
		writeError(w, http.StatusNotFound, "User ["+name+"] does not exist.")
		return
	}
	type creds struct {
		Iterations int `json:"iterations"`
	}
	out := struct {
		Name        string `json:"name"`
		Credentials *creds `json:"credentials"`
	}{Name: u.Name}
	if u.Credentials != nil {
		out.Credentials = &creds{Iterations: u.Credentials.Iterations}
	}
	writeJSONPlain(w, http.StatusOK, out)
}

func (s *Server) createAuthnUser(w http.ResponseWriter, r *http.Request) {
	s.proposeSecurity(w, r, commands.CreateUser{Name: mux.Vars(r)["userName"]})
}

func (s *Server) deleteAuthnUser(w http.ResponseWriter, r *http.Request) {
	s.proposeSecurity(w, r, commands.DeleteUser{Name: mux.Vars(r)["userName"]})
}

// setCredentials hashes {"password": ...} here, on the leader, and proposes
// only the hash.
func (s *Server) setCredentials(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["userName"]
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Password *string `json:"password"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "cannot parse the body (want {\"password\": \"...\"}): "+err.Error())
		return
	}
	if req.Password == nil {
		writeError(w, http.StatusBadRequest, "Invalid password: the body needs \"password\".")
		return
	}
	if err := basic.ValidatePassword(*req.Password); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid password: "+err.Error())
		return
	}
	// Unknown users are refused before paying for the hash (the FSM
	// checks again).
	if s.securityDB().Users[name] == nil {
		writeError(w, http.StatusNotFound, "User ["+name+"] does not exist.")
		return
	}
	c, err := basic.Hash(*req.Password)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot hash the password: "+err.Error())
		return
	}
	s.proposeSecurity(w, r, commands.SetCredentials{Name: name, Credentials: commands.HashedCredentials{Salt: c.Salt, Hash: c.Hash, Iterations: c.Iterations}})
}

// ---- authorization ----

// druidPermission is a permission as Druid's GET answers show it.
type druidPermission struct {
	ResourceAction      auth.Permission `json:"resourceAction"`
	ResourceNamePattern string          `json:"resourceNamePattern"`
}

// permissionsJSON is a role's permissions in Druid's full form, or as
// posted ({"resource", "action"}) with ?simplifyPermissions.
func permissionsJSON(ps []auth.Permission, simple bool) any {
	if simple {
		return slices.Clone(ps)
	}
	out := make([]druidPermission, len(ps))
	for i, p := range ps {
		out[i] = druidPermission{ResourceAction: p, ResourceNamePattern: p.Resource.Name}
	}
	return out
}

type roleJSON struct {
	Name        string `json:"name"`
	Permissions any    `json:"permissions"`
}

func (s *Server) authzUsers(w http.ResponseWriter, r *http.Request) {
	writeJSONPlain(w, http.StatusOK, sortedKeys(s.securityDB().AuthzUsers))
}

// authzUser answers {"name", "roles": [names]}; ?full lists the roles with
// their permissions (?simplifyPermissions: in the posted form).
func (s *Server) authzUser(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["userName"]
	db := s.securityDB()
	u := db.AuthzUsers[name]
	if u == nil {
		writeError(w, http.StatusNotFound, "User ["+name+"] does not exist.")
		return
	}
	if !flag(r, "full") {
		writeJSONPlain(w, http.StatusOK, map[string]any{"name": u.Name, "roles": u.Roles})
		return
	}
	roles := []roleJSON{}
	for _, role := range db.UserRoles(name) {
		roles = append(roles, roleJSON{Name: role.Name, Permissions: permissionsJSON(role.Permissions, flag(r, "simplifyPermissions"))})
	}
	writeJSONPlain(w, http.StatusOK, map[string]any{"name": u.Name, "roles": roles})
}

func (s *Server) createAuthzUser(w http.ResponseWriter, r *http.Request) {
	s.proposeSecurity(w, r, commands.CreateAuthzUser{Name: mux.Vars(r)["userName"]})
}

func (s *Server) deleteAuthzUser(w http.ResponseWriter, r *http.Request) {
	s.proposeSecurity(w, r, commands.DeleteAuthzUser{Name: mux.Vars(r)["userName"]})
}

func (s *Server) listRoles(w http.ResponseWriter, r *http.Request) {
	writeJSONPlain(w, http.StatusOK, sortedKeys(s.securityDB().Roles))
}

// role answers {"name", "permissions"}; ?full adds "users", the users that
// have the role; ?simplifyPermissions shows permissions as posted.
func (s *Server) role(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["roleName"]
	db := s.securityDB()
	role := db.Roles[name]
	if role == nil {
		writeError(w, http.StatusNotFound, "Role ["+name+"] does not exist.")
		return
	}
	out := map[string]any{"name": role.Name, "permissions": permissionsJSON(role.Permissions, flag(r, "simplifyPermissions"))}
	if flag(r, "full") {
		out["users"] = db.RoleUsers(name)
	}
	writeJSONPlain(w, http.StatusOK, out)
}

func (s *Server) rolePermissions(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["roleName"]
	role := s.securityDB().Roles[name]
	if role == nil {
		writeError(w, http.StatusNotFound, "Role ["+name+"] does not exist.")
		return
	}
	writeJSONPlain(w, http.StatusOK, permissionsJSON(role.Permissions, flag(r, "simplifyPermissions")))
}

func (s *Server) createRole(w http.ResponseWriter, r *http.Request) {
	s.proposeSecurity(w, r, commands.CreateRole{Name: mux.Vars(r)["roleName"]})
}

func (s *Server) deleteRole(w http.ResponseWriter, r *http.Request) {
	s.proposeSecurity(w, r, commands.DeleteRole{Name: mux.Vars(r)["roleName"]})
}

func (s *Server) assignRole(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	s.proposeSecurity(w, r, commands.AssignRole{User: v["userName"], Role: v["roleName"]})
}

func (s *Server) unassignRole(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	s.proposeSecurity(w, r, commands.UnassignRole{User: v["userName"], Role: v["roleName"]})
}

// setRolePermissions replaces a role's permissions with the posted list.
func (s *Server) setRolePermissions(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	perms, err := basic.ParsePermissions(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.proposeSecurity(w, r, commands.SetRolePermissions{Role: mux.Vars(r)["roleName"], Permissions: perms})
}

// proposeSecurity proposes a change and answers Druid's empty 200.
func (s *Server) proposeSecurity(w http.ResponseWriter, r *http.Request, cmd commands.Command) {
	if _, ok := s.propose(w, r, cmd); ok {
		writeEmpty(w, http.StatusOK)
	}
}

// ---- data nodes ----

// maxSecurityWait bounds the long poll of SecurityDBPath.
const maxSecurityWait = 5 * time.Minute

// securityDBExport answers the whole database for a data node's copy. With
// ?version=V it waits (up to ?waitMs, at most maxSecurityWait) until the
// database is at another version, so that data nodes hear of each change as
// it commits without polling, and answers 304 if it is not.
func (s *Server) securityDBExport(w http.ResponseWriter, r *http.Request) {
	// The route is the internal client's (guard) when security is on; with
	// it off, /svc-internal/ is guarded by the escalator's password alone,
	// and without one the password hashes would be anyone's.
	if !auth.Enabled(r.Context()) && !s.internal.Enabled() {
		writeError(w, http.StatusForbidden, "the user database is served to the internal client only: set svc.escalator.internalClientPassword")
		return
	}
	db := s.securityDB()
	q := r.URL.Query()
	if vs := q.Get("version"); vs != "" {
		known, err := strconv.ParseUint(vs, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "version must be a non-negative integer, got "+strconv.Quote(vs))
			return
		}
		wait, err := strconv.ParseInt(q.Get("waitMs"), 10, 64)
		if q.Get("waitMs") == "" {
			wait, err = 0, nil
		}
		if err != nil || wait < 0 {
			writeError(w, http.StatusBadRequest, "waitMs must be a non-negative integer")
			return
		}
		deadline := time.NewTimer(min(time.Duration(wait)*time.Millisecond, maxSecurityWait))
		defer deadline.Stop()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	wait:
		for db.Version == known {
			select {
			case <-r.Context().Done():
				return
			case <-deadline.C:
				break wait
			case <-tick.C:
				if !s.node.IsLeader() {
					break wait
				}
				db = s.securityDB()
			}
		}
	}
	if q.Get("version") == strconv.FormatUint(db.Version, 10) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSONPlain(w, http.StatusOK, db)
}
