package middlemanager

import (
	"encoding/json"

	"strata/commands"
)

// Internal endpoints between the overlord leader and its workers. The worker
// serves PathRun; the overlord (leader only; followers redirect) serves the rest.
const (
	PathRun           = "/svc-internal/v1/worker/run"             // POST Task → {"task": id}
	PathRegister      = "/svc-internal/v1/overlord/register"      // POST Registration → HeartbeatReply
	PathHeartbeat     = "/svc-internal/v1/overlord/heartbeat"     // POST Heartbeat → HeartbeatReply; 404 unknown worker
	PathTaskStatus    = "/svc-internal/v1/overlord/taskStatus"    // POST StatusReport → 200
	PathTaskAction    = "/svc-internal/v1/overlord/taskAction"    // POST ActionRequest → action result
	PathWorkerEnabled = "/svc-internal/v1/overlord/workerEnabled" // POST EnableRequest → 200
)

// Registration announces a worker that has started.
type Registration struct {
	Host     string   `json:"host"`
	Scheme   string   `json:"scheme"`
	IP       string   `json:"ip"`
	Capacity int      `json:"capacity"`
	Category string   `json:"category"`
	Version  string   `json:"version"`
	Running  []string `json:"running"` // tasks this process runs (none on a fresh start)
}

// Heartbeat is a worker's periodic report: the tasks it runs and the
// completions the leader has not acknowledged yet.
type Heartbeat struct {
	Host      string         `json:"host"`
	Running   []string       `json:"running"`
	Completed []StatusReport `json:"completed,omitempty"`
}

// HeartbeatReply tells a worker whether it takes new tasks, which tasks to
// cancel (the leader no longer expects them there) and which completions it
// has recorded.
type HeartbeatReply struct {
	Enabled  bool     `json:"enabled"`
	Shutdown []string `json:"shutdown,omitempty"`
	Ack      []string `json:"ack,omitempty"`
}

// StatusReport is a task's status as its worker reports it.
type StatusReport struct {
	ID       string                 `json:"id"`
	Worker   string                 `json:"worker"`
	Status   string                 `json:"status"` // RUNNING, SUCCESS, FAILED
	Location *commands.TaskLocation `json:"location,omitempty"`
	ErrorMsg string                 `json:"errorMsg,omitempty"`
	Report   json.RawMessage        `json:"report,omitempty"`
}

// ActionRequest carries a task action to the overlord.
type ActionRequest struct {
	TaskID string `json:"taskId"`
	Worker string `json:"worker"`
	Action Action `json:"action"`
}

// EnableRequest is a worker's own enable/disable (its /svc/worker/v1/enable|disable).
type EnableRequest struct {
	Host    string `json:"host"`
	Enabled bool   `json:"enabled"`
}
