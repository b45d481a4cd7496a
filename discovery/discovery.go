// Package discovery lets Strata's processes find each other through the
// control plane instead of static URL lists. Every process announces itself
// (Announcement) to the control-plane leader and renews a lease by
// announcing again every heartbeat period (Announcer); the leader's Registry
// holds the leases in memory and turns only joins, changes and departures
// into Raft commands (commands.JoinServer, commands.LeaveServer), so a new
// leader starts from the membership and gives every member one lease
// timeout to reach it. Each reply carries the live membership, which is how
// brokers find historicals and middle managers, and middle managers and
// routers find brokers and the leader.
package discovery

import (
	"slices"
	"strings"
)

// Internal endpoints of the leader (server/routes.go).
const (
	AnnouncePath = "/svc-internal/v1/discovery/announce"
	LeavePath    = "/svc-internal/v1/discovery/leave"
)

// Member states.
const (
	// StateLive: its lease is current.
	StateLive = "live"
	// StateUnconfirmed: a member a new leader has not heard from yet; it
	// has one lease timeout from the leader's start to announce itself.
	StateUnconfirmed = "unconfirmed"
	// StateGone: it missed its lease or left; shown for a while, then
	// forgotten.
	StateGone = "gone"
)

// Announcement is what a process says about itself. ID is its advertised
// host:port, unique in the cluster.
type Announcement struct {
	ID          string   `json:"id"`
	Roles       []string `json:"roles"`
	URL         string   `json:"url"`
	Tier        string   `json:"tier,omitempty"`
	Priority    int      `json:"priority,omitempty"`
	Capacity    int      `json:"capacity,omitempty"` // middle managers: task slots
	MaxSize     int64    `json:"maxSize,omitempty"`  // historicals: segment cache bytes
	Version     string   `json:"version,omitempty"`
	StartTimeMs int64    `json:"startTimeMs"`
	// SentMs is the sender's clock as it sent this.
	SentMs int64 `json:"sentMs,omitempty"`
}

// HasRole reports whether the process has role.
func (a Announcement) HasRole(role string) bool { return slices.Contains(a.Roles, role) }

// Host is the host:port of URL.
func (a Announcement) Host() string {
	h := strings.TrimPrefix(strings.TrimPrefix(a.URL, "http://"), "https://")
	if i := strings.IndexByte(h, '/'); i >= 0 {
		h = h[:i]
	}
	return h
}

// Member is one process as the leader knows it.
type Member struct {
	Announcement
	State      string `json:"state"`
	JoinedMs   int64  `json:"joinedMs,omitempty"`
	LastSeenMs int64  `json:"lastSeenMs,omitempty"`
	// ClockSkewMs is the member's clock minus the leader's at its last
	// announcement (network delay included).
	ClockSkewMs int64 `json:"clockSkewMs"`
}

// Reply answers an announcement: the leader, its clock and version, and
// the membership.
type Reply struct {
	Leader         string   `json:"leader"`
	TimeMs         int64    `json:"timeMs"`
	Version        string   `json:"version"`
	LeaseTimeoutMs int64    `json:"leaseTimeoutMs"`
	Members        []Member `json:"members"`
}

// LeaveRequest is a process saying goodbye.
type LeaveRequest struct {
	ID string `json:"id"`
}
