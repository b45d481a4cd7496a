package server

import (
	"net/http"
)

// leaderOnly serves h on the caught-up leader; a follower answers 307 to the
// leader's URL with the same path and query (ADMIN-API §2), and with no leader
// known the answer is 503 with a JSON error.
func (s *Server) leaderOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.node.IsLeader() {
			h(w, r)
			return
		}
		s.notLeader(w, r)
	}
}

// leaderRead is leaderOnly plus a leadership check by heartbeat round, so a
// deposed leader that has not noticed yet never serves stale state.
func (s *Server) leaderRead(h http.HandlerFunc) http.HandlerFunc {
	return s.leaderOnly(func(w http.ResponseWriter, r *http.Request) {
		if err := s.node.VerifyRead(); err != nil {
			s.notLeader(w, r)
			return
		}
		h(w, r)
	})
}

func (s *Server) notLeader(w http.ResponseWriter, r *http.Request) {
	if s.node.RaftLeader() {
		writeUnavailable(w, "this node was just elected leader and is catching up; retry in a moment")
		return
	}
	leader := s.node.LeaderURL()
	if leader == "" || leader == s.node.HTTPURL() {
		writeUnavailable(w, "no leader is elected right now (election in progress or quorum lost); retry in a moment")
		return
	}
	w.Header().Set("Location", leader+r.URL.RequestURI())
	w.WriteHeader(http.StatusTemporaryRedirect)
}

// leaderURL answers GET .../leader with the raw leader URL (any node). Druid's
// resource is a JSON endpoint that writes the string unquoted, so the body is
// raw text labelled application/json (ADMIN-API §0).
func (s *Server) leaderURL(w http.ResponseWriter, r *http.Request) {
	leader := s.node.LeaderURL()
	if leader == "" {
		writeError(w, http.StatusServiceUnavailable, "no leader is elected right now; retry in a moment")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(leader))
}

// isLeader answers 200 {"leader":true} on the leader, 404 {"leader":false} elsewhere.
func (s *Server) isLeader(w http.ResponseWriter, r *http.Request) {
	if s.node.IsLeader() {
		writeJSON(w, http.StatusOK, map[string]bool{"leader": true})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]bool{"leader": false})
}

// RetryHeader marks a 503 that means "no leader can answer yet" (an election,
// or a new leader still starting up), as opposed to a 503 that is the answer
// (an unhealthy supervisor, say). The router retries only the former.
const RetryHeader = "X-Svc-Retry-After-Election"

func writeUnavailable(w http.ResponseWriter, msg string) {
	w.Header().Set(RetryHeader, "true")
	writeError(w, http.StatusServiceUnavailable, msg)
}
