package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Task states (TaskStatus.status) and runner states (runnerStatusCode), as
// Druid names them.
const (
	TaskRunning = "RUNNING"
	TaskSuccess = "SUCCESS"
	TaskFailed  = "FAILED"

	RunnerWaiting = "WAITING" // stored; a time chunk it must lock is held by another task
	RunnerPending = "PENDING" // ready to run, waiting for a worker slot
	RunnerRunning = "RUNNING" // handed to a worker
	RunnerNone    = "NONE"    // complete
)

// DefaultWorkerCategory is the category of a worker that names none.
const DefaultWorkerCategory = "_default_worker_category"

// ShutdownByUser is the error message of a task shut down through the API.
const ShutdownByUser = "Shutdown request from user"

// TaskLocation is where a task serves (its worker's host and ports); Port and
// TLSPort are -1 when unknown.
type TaskLocation struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	TLSPort int    `json:"tlsPort"`
}

// SubmitTask stores a new task. Locks lists the time chunks (ISO intervals of
// DataSource) the task must hold before it may start; while another task holds
// an overlapping one the task waits (runner status WAITING).
type SubmitTask struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	GroupID    string          `json:"groupId"`
	DataSource string          `json:"dataSource"`
	Payload    json.RawMessage `json:"payload"` // the task JSON, a JSON object
	Locks      []string        `json:"locks,omitempty"`
}

// CommandType implements Command.
func (SubmitTask) CommandType() string { return "task.submit" }

// AssignTask hands a pending task to a worker the leader chose.
type AssignTask struct {
	ID     string `json:"id"`
	Worker string `json:"worker"` // host:port
}

// CommandType implements Command.
func (AssignTask) CommandType() string { return "task.assign" }

// TaskStatusUpdate is a worker's (or, for a lost worker, the leader's) report
// on a task: RUNNING once started, SUCCESS or FAILED at the end. A report may
// come with any of them, and alone for a task already complete.
type TaskStatusUpdate struct {
	ID       string          `json:"id"`
	Worker   string          `json:"worker"` // must be the assigned worker
	Status   string          `json:"status"`
	Location *TaskLocation   `json:"location,omitempty"`
	ErrorMsg string          `json:"errorMsg,omitempty"`
	Report   json.RawMessage `json:"report,omitempty"`
}

// CommandType implements Command.
func (TaskStatusUpdate) CommandType() string { return "task.status" }

// ShutdownTask ends an active task as FAILED with Reason (ShutdownByUser when
// empty); the worker running it is told to cancel it.
type ShutdownTask struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// CommandType implements Command.
func (ShutdownTask) CommandType() string { return "task.shutdown" }

// AcquireLock locks a time chunk of the task's datasource for a running task.
type AcquireLock struct {
	TaskID   string `json:"taskId"`
	Interval string `json:"interval"`
}

// CommandType implements Command.
func (AcquireLock) CommandType() string { return "task.lock.acquire" }

// ReleaseLock releases one of a task's locks, or all of them when Interval is "".
type ReleaseLock struct {
	TaskID   string `json:"taskId"`
	Interval string `json:"interval,omitempty"`
}

// CommandType implements Command.
func (ReleaseLock) CommandType() string { return "task.lock.release" }

// RegisterWorker records a middle manager that has started. Running lists the
// tasks it runs: tasks assigned to it that it does not run were lost with its
// previous process and fail.
type RegisterWorker struct {
	Host     string   `json:"host"` // host:port, the worker's identity
	Scheme   string   `json:"scheme"`
	IP       string   `json:"ip"`
	Capacity int      `json:"capacity"`
	Category string   `json:"category"`
	Version  string   `json:"version"`
	Running  []string `json:"running,omitempty"`
}

// CommandType implements Command.
func (RegisterWorker) CommandType() string { return "worker.register" }

// SetWorkerEnabled enables or disables assignments to a worker; running tasks
// are not affected.
type SetWorkerEnabled struct {
	Host    string `json:"host"`
	Enabled bool   `json:"enabled"`
}

// CommandType implements Command.
func (SetWorkerEnabled) CommandType() string { return "worker.enabled" }

func init() {
	Register(SubmitTask{}, false)
	Register(AssignTask{}, false)
	Register(TaskStatusUpdate{}, false)
	Register(ShutdownTask{}, false)
	Register(AcquireLock{}, false)
	Register(ReleaseLock{}, false)
	Register(RegisterWorker{}, false)
	Register(SetWorkerEnabled{}, false)
}

// MaxTaskIDLength bounds task ids (they name log files and directories).
const MaxTaskIDLength = 1024

// ValidateTaskID applies Druid's id rules (IdUtils.validateId): not empty, no
// '/', not starting with '.', no whitespace other than the plain space.
func ValidateTaskID(id string) error {
	switch {
	case id == "":
		return errors.New("task id must not be empty")
	case len(id) > MaxTaskIDLength:
		return fmt.Errorf("task id is %d bytes long; the limit is %d", len(id), MaxTaskIDLength)
	case !utf8.ValidString(id):
		return fmt.Errorf("task id %q is not valid UTF-8", id)
	case strings.HasPrefix(id, "."):
		return fmt.Errorf("task id [%s] cannot start with the '.' character", id)
	case strings.ContainsRune(id, '/'):
		return fmt.Errorf("task id [%s] cannot contain the '/' character", id)
	}
	for _, r := range id {
		if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r)) {
			return fmt.Errorf("task id [%s] cannot contain whitespace character except space", id)
		}
	}
	return nil
}
