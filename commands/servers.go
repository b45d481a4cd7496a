package commands

// JoinServer records that a process announced itself to the leader
// (discovery): the membership a new leader starts from, so that it can tell
// which processes went away during an election. Heartbeats renewing a
// process's lease are not commands; only joining, a change of what the
// process announces, and leaving are.
type JoinServer struct {
	ID          string   `json:"id"`
	Roles       []string `json:"roles"`
	URL         string   `json:"url"`
	Tier        string   `json:"tier,omitempty"`
	Priority    int      `json:"priority,omitempty"`
	Capacity    int      `json:"capacity,omitempty"`
	MaxSize     int64    `json:"maxSize,omitempty"`
	Version     string   `json:"version,omitempty"`
	StartTimeMs int64    `json:"startTimeMs,omitempty"`
}

// CommandType implements Command.
func (JoinServer) CommandType() string { return "server.join" }

// LeaveServer removes a process from the membership: it missed its lease or
// said goodbye. Reason is shown in the leader's log.
type LeaveServer struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// CommandType implements Command.
func (LeaveServer) CommandType() string { return "server.leave" }

func init() {
	// Ignorable: the membership is optional state. A control node of an
	// older version skips these entries during a rolling upgrade and only
	// lacks what discovery adds.
	Register(JoinServer{}, true)
	Register(LeaveServer{}, true)
}
