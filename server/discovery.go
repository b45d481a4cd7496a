package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"strata/discovery"
	"strata/javacompat"
)

// discoveryAnnounce serves POST /svc-internal/v1/discovery/announce on the
// leader: a process renews its lease (joining if new) and gets the
// membership back.
func (s *Server) discoveryAnnounce(w http.ResponseWriter, r *http.Request) {
	if s.discovery == nil {
		writeError(w, http.StatusServiceUnavailable, "discovery does not run on this control node")
		return
	}
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var a discovery.Announcement
	if err := json.Unmarshal(body, &a); err != nil {
		writeError(w, http.StatusBadRequest, "invalid announcement: "+err.Error())
		return
	}
	reply, err := s.discovery.Announce(a)
	var ve discovery.ValidationError
	switch {
	case errors.As(err, &ve):
		writeError(w, http.StatusBadRequest, "invalid announcement: "+ve.Error())
	case errors.Is(err, discovery.ErrNotLeader):
		writeUnavailable(w, "this node lost the leadership; announce to the new leader")
	case err != nil:
		writeUnavailable(w, err.Error())
	default:
		writeJSONPlain(w, http.StatusOK, reply)
	}
}

// discoveryLeave serves POST /svc-internal/v1/discovery/leave: a process
// that stops says so, and is gone at once rather than after its lease.
func (s *Server) discoveryLeave(w http.ResponseWriter, r *http.Request) {
	if s.discovery == nil {
		writeError(w, http.StatusServiceUnavailable, "discovery does not run on this control node")
		return
	}
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	var req discovery.LeaveRequest
	if err := json.Unmarshal(body, &req); err != nil || req.ID == "" {
		writeError(w, http.StatusBadRequest, "invalid leave request: want {\"id\":\"host:port\"}")
		return
	}
	if err := s.discovery.Leave(req.ID); err != nil {
		writeUnavailable(w, err.Error())
		return
	}
	writeJSONPlain(w, http.StatusOK, map[string]string{"id": req.ID})
}

// discoveredMembers is the membership for /servers (nil without discovery).
func (s *Server) discoveredMembers() []discovery.Member {
	if s.discovery == nil {
		return nil
	}
	return s.discovery.Members()
}

// serverType is Druid's server type of a process: what /servers calls it.
func serverType(m discovery.Member) string {
	switch {
	case m.HasRole(RoleHistorical):
		return "historical"
	case m.HasRole(RoleMiddleManager):
		return "indexer-executor" // it serves its tasks' rows to brokers
	case m.HasRole(RoleBroker):
		return "broker"
	}
	return strings.Join(m.Roles, ",")
}

// appendMember writes a process the historicals' inventory does not list in
// /servers' ?simple shape, plus its roles and state.
func appendMember(b []byte, m discovery.Member, full bool) []byte {
	b = append(b, `{"host":`...)
	b = javacompat.AppendJSONString(b, m.Host())
	b = append(b, `,"tier":`...)
	if m.Tier != "" {
		b = javacompat.AppendJSONString(b, m.Tier)
	} else {
		b = append(b, `null`...)
	}
	b = append(b, `,"type":`...)
	b = javacompat.AppendJSONString(b, serverType(m))
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, int64(m.Priority), 10)
	b = append(b, `,"currSize":0,"maxSize":`...)
	b = strconv.AppendInt(b, m.MaxSize, 10)
	if full {
		b = append(b, `,"segments":{}`...)
	}
	return appendRoleState(b, m)
}

// appendRoleState closes a /servers object with "role" (the process's roles,
// comma-separated) and "state" (live, unconfirmed, gone).
func appendRoleState(b []byte, m discovery.Member) []byte {
	b = append(b, `,"role":`...)
	b = javacompat.AppendJSONString(b, strings.Join(m.Roles, ","))
	b = append(b, `,"state":`...)
	b = javacompat.AppendJSONString(b, m.State)
	b = append(b, `,"version":`...)
	b = javacompat.AppendJSONString(b, m.Version)
	b = append(b, `,"startTime":`...)
	b = strconv.AppendInt(b, m.StartTimeMs, 10)
	if m.Capacity > 0 {
		b = append(b, `,"capacity":`...)
		b = strconv.AppendInt(b, int64(m.Capacity), 10)
	}
	return append(b, '}')
}
