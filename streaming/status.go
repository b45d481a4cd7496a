package streaming

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/props"
)

// Status is a supervisor's runtime state as the overlord reports it.
type Status struct {
	State, DetailedState string // ADMIN-API §10.1
	Healthy              bool
	Payload              json.RawMessage // the status report payload (API-SPEC §2.9)
	// Stats and ParseErrors are the bodies of the supervisor's /stats and
	// /parseErrors (stats.go); nil when the supervisor does not run here.
	Stats, ParseErrors json.RawMessage
}

// StatusSource gives the runtime status of a supervisor; false means it does
// not run here (the server then shows PENDING).
type StatusSource interface {
	// Status answers at once, with the lag last measured (health, lists).
	Status(id string) (Status, bool)
	// FreshStatus measures a stale lag anew first, within ctx (the status
	// report, whose lag drives alerts).
	FreshStatus(ctx context.Context, id string) (Status, bool)
}

// Basic and detailed supervisor states (Druid's SupervisorStateManager names).
const (
	StatePending             = "PENDING"
	StateRunning             = "RUNNING"
	StateSuspended           = "SUSPENDED"
	StateStopping            = "STOPPING"
	StateUnhealthySupervisor = "UNHEALTHY_SUPERVISOR"
	StateUnhealthyTasks      = "UNHEALTHY_TASKS"

	StateConnectingToStream      = "CONNECTING_TO_STREAM"
	StateDiscoveringInitialTasks = "DISCOVERING_INITIAL_TASKS"
	StateCreatingTasks           = "CREATING_TASKS"
	StateUnableToConnectToStream = "UNABLE_TO_CONNECT_TO_STREAM"
	StateLostContactWithStream   = "LOST_CONTACT_WITH_STREAM"
)

// Druid's exception classes for recentErrors, and the report's time format.
const (
	supExceptionClassStream       = "org.apache.druid.indexing.seekablestream.common.StreamException"
	supExceptionClassSupervisor   = "org.apache.druid.java.util.common.ISE"
	supISOMillis                  = "2006-01-02T15:04:05.000Z"
	supDefaultStateThresholdValue = 3
)

// StateConfig holds the svc.supervisor.* thresholds of the state machine.
type StateConfig struct {
	UnhealthinessThreshold     int // consecutive failed runs → unhealthy supervisor
	HealthinessThreshold       int // consecutive good runs to become healthy again
	TaskUnhealthinessThreshold int // consecutive failed tasks → UNHEALTHY_TASKS
	TaskHealthinessThreshold   int // consecutive successful tasks to recover
	MaxStoredExceptionEvents   int // recentErrors kept
}

// DefaultStateConfig returns Druid's defaults (all 3).
func DefaultStateConfig() StateConfig {
	n := supDefaultStateThresholdValue
	return StateConfig{n, n, n, n, n}
}

// StateConfigFromProps reads the svc.supervisor.* thresholds
// (config.ParseSupervisor); a value that is not a whole number in [1, 1000] is
// logged and its default kept.
func StateConfigFromProps(p *props.Properties, log hclog.Logger) StateConfig {
	c := config.ParseSupervisor(p, log)
	return StateConfig{
		UnhealthinessThreshold:     c.UnhealthinessThreshold,
		HealthinessThreshold:       c.HealthinessThreshold,
		TaskUnhealthinessThreshold: c.TaskUnhealthinessThreshold,
		TaskHealthinessThreshold:   c.TaskHealthinessThreshold,
		MaxStoredExceptionEvents:   c.MaxStoredExceptionEvents,
	}
}

func (c StateConfig) withDefaults() StateConfig {
	d := DefaultStateConfig()
	for _, p := range []struct{ v, def *int }{
		{&c.UnhealthinessThreshold, &d.UnhealthinessThreshold},
		{&c.HealthinessThreshold, &d.HealthinessThreshold},
		{&c.TaskUnhealthinessThreshold, &d.TaskUnhealthinessThreshold},
		{&c.TaskHealthinessThreshold, &d.TaskHealthinessThreshold},
	} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	if c.MaxStoredExceptionEvents <= 0 {
		c.MaxStoredExceptionEvents = max(c.UnhealthinessThreshold, c.HealthinessThreshold)
	}
	return c
}

// RecentError is one item of the report's recentErrors.
type RecentError struct {
	Timestamp       string `json:"timestamp"`
	ExceptionClass  string `json:"exceptionClass"`
	Message         string `json:"message"`
	StreamException bool   `json:"streamException"`
}

// supBasicState maps a detailed state to its basic state.
func supBasicState(detailed string) string {
	switch detailed {
	case StateConnectingToStream, StateDiscoveringInitialTasks, StateCreatingTasks:
		return StateRunning
	case StateUnableToConnectToStream, StateLostContactWithStream:
		return StateUnhealthySupervisor
	}
	return detailed
}

func supFirstRunOnly(detailed string) bool {
	switch detailed {
	case StateConnectingToStream, StateDiscoveringInitialTasks, StateCreatingTasks:
		return true
	}
	return false
}

// stateTracker is the supervisor state machine of ADMIN-API §10.1. A new
// supervisor object (created on every spec version) starts at PENDING.
type stateTracker struct {
	cfg      StateConfig
	detailed string

	atLeastOneSuccessfulRun bool
	everConnected           bool
	runOK                   bool // the current run has not failed so far
	runStreamErr            bool // the current run failed talking to Kafka
	lastFailStream          bool // the latest failed run's cause was Kafka
	failedRuns, goodRuns    int  // consecutive
	failedTasks, goodTasks  int  // consecutive completed tasks

	errors []RecentError // oldest first
}

func newStateTracker(cfg StateConfig) *stateTracker {
	return &stateTracker{cfg: cfg.withDefaults(), detailed: StatePending, runOK: true}
}

func (t *stateTracker) state() string { return supBasicState(t.detailed) }

func (t *stateTracker) healthy() bool {
	switch t.state() {
	case StateUnhealthySupervisor, StateUnhealthyTasks:
		return false
	}
	return true
}

// propose moves to a healthy state unless a rule of §10.1 refuses it.
func (t *stateTracker) propose(detailed string) {
	if t.failedRuns >= t.cfg.UnhealthinessThreshold {
		t.detailed = t.unhealthySupervisorState()
		return
	}
	switch t.state() {
	case StateUnhealthySupervisor:
		if t.goodRuns < t.cfg.HealthinessThreshold {
			return
		}
	case StateUnhealthyTasks:
		if t.goodTasks < t.cfg.TaskHealthinessThreshold {
			return
		}
	}
	if (detailed == StateRunning || detailed == StateSuspended) && !t.atLeastOneSuccessfulRun {
		return
	}
	if supFirstRunOnly(detailed) && t.atLeastOneSuccessfulRun {
		return
	}
	t.detailed = detailed
}

func (t *stateTracker) unhealthySupervisorState() string {
	switch {
	case !t.lastFailStream:
		return StateUnhealthySupervisor
	case t.everConnected:
		return StateLostContactWithStream
	}
	return StateUnableToConnectToStream
}

// fail marks the current run failed and records the error.
func (t *stateTracker) fail(now time.Time, stream bool, msg string) {
	t.runOK = false
	t.runStreamErr = t.runStreamErr || stream
	class := supExceptionClassSupervisor
	if stream {
		class = supExceptionClassStream
	}
	t.addError(now, class, msg, stream)
}

func (t *stateTracker) addError(now time.Time, class, msg string, stream bool) {
	t.errors = append(t.errors, RecentError{
		Timestamp: now.UTC().Format(supISOMillis), ExceptionClass: class, Message: msg, StreamException: stream,
	})
	if over := len(t.errors) - t.cfg.MaxStoredExceptionEvents; over > 0 {
		t.errors = append(t.errors[:0], t.errors[over:]...)
	}
}

// taskCompleted counts a finished task of this supervisor.
func (t *stateTracker) taskCompleted(success bool) {
	if success {
		t.goodTasks++
		t.failedTasks = 0
	} else {
		t.failedTasks++
		t.goodTasks = 0
	}
}

// finishRun ends a run: counters move, then the steady state is proposed
// (refused when unhealthy thresholds say otherwise).
func (t *stateTracker) finishRun(steady string) {
	if t.runOK {
		t.goodRuns++
		t.failedRuns = 0
		t.atLeastOneSuccessfulRun = true
	} else {
		t.failedRuns++
		t.goodRuns = 0
		t.lastFailStream = t.runStreamErr
	}
	t.runOK, t.runStreamErr = true, false
	switch {
	case t.failedRuns >= t.cfg.UnhealthinessThreshold:
		t.detailed = t.unhealthySupervisorState()
	case t.failedTasks >= t.cfg.TaskUnhealthinessThreshold:
		t.detailed = StateUnhealthyTasks
	default:
		t.propose(steady)
	}
}

// supReport is the status payload (API-SPEC §2.9), Druid's field names.
type supReport struct {
	DataSource         string           `json:"dataSource"`
	Stream             string           `json:"stream"`
	Partitions         int              `json:"partitions"`
	Replicas           int              `json:"replicas"`
	DurationSeconds    int64            `json:"durationSeconds"`
	ActiveTasks        []supTaskReport  `json:"activeTasks"`
	PublishingTasks    []supTaskReport  `json:"publishingTasks"`
	LatestOffsets      map[string]int64 `json:"latestOffsets"`
	MinimumLag         map[string]int64 `json:"minimumLag"`
	AggregateLag       *int64           `json:"aggregateLag"`
	OffsetsLastUpdated *string          `json:"offsetsLastUpdated"`
	Suspended          bool             `json:"suspended"`
	Healthy            bool             `json:"healthy"`
	State              string           `json:"state"`
	DetailedState      string           `json:"detailedState"`
	RecentErrors       []RecentError    `json:"recentErrors"`
}

// supTaskReport is an activeTasks / publishingTasks item.
type supTaskReport struct {
	ID               string           `json:"id"`
	StartingOffsets  map[string]int64 `json:"startingOffsets"`
	CurrentOffsets   map[string]int64 `json:"currentOffsets,omitempty"` // from the task's progress report
	Lag              map[string]int64 `json:"lag,omitempty"`
	StartTime        *string          `json:"startTime"`
	RemainingSeconds int64            `json:"remainingSeconds"`
	Type             string           `json:"type"`
}
