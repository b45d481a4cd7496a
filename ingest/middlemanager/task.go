// Package middlemanager is Strata's worker process (Druid's middle manager):
// it registers with the overlord leader, heartbeats, runs the tasks the leader
// assigns to it (up to its capacity, each with its own context and log file)
// and reports their status back. Task types are pluggable Runners.
package middlemanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"strata/commands"
	"strata/ingest/input"
	"strata/interval"
)

// Task is a task as the worker runs it. Payload is the whole task JSON with
// id, groupId, type and dataSource filled in.
type Task struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	GroupID    string          `json:"groupId"`
	DataSource string          `json:"dataSource"`
	Payload    json.RawMessage `json:"payload"`
}

// Report is a task's report JSON (an object keyed by report type, e.g.
// {"killUnusedSegments": {...}}); nil when the task writes none.
type Report json.RawMessage

// Runner runs tasks of one type. Run returns when the task is done or ctx is
// cancelled (shutdown); a nil error means SUCCESS.
type Runner interface {
	Run(ctx context.Context, t Task, env Env) (Report, error)
}

// Validator is implemented by runners that check a task when it is submitted.
// Validate may fill in defaults (t.DataSource) and returns the time chunks the
// task must lock before it may start.
type Validator interface {
	Validate(t *Task) ([]interval.Interval, error)
}

// InputReader is implemented by runners whose tasks read input sources a
// user names (native batch, SQL): the node that takes such a task
// authorizes each (READ on EXTERNAL) and checks it against the input policy
// before the task exists.
type InputReader interface {
	InputSources(t Task) ([]input.Source, error)
}

// InputSources returns the input sources a parsed task reads; none for a
// task type that reads none a user names.
func InputSources(t Task) ([]input.Source, error) {
	r, ok := RunnerFor(t.Type)
	if !ok {
		return nil, nil
	}
	ir, ok := r.(InputReader)
	if !ok {
		return nil, nil
	}
	return ir.InputSources(t)
}

var (
	regMu   sync.RWMutex
	runners = map[string]Runner{}
)

// Register binds a task type to its runner. Registering a type twice panics (a
// programming error).
func Register(typ string, r Runner) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := runners[typ]; dup {
		panic("middlemanager: duplicate runner for task type " + typ)
	}
	runners[typ] = r
}

// RunnerFor returns the runner of a task type.
func RunnerFor(typ string) (Runner, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	r, ok := runners[typ]
	return r, ok
}

// Types lists the registered task types, sorted.
func Types() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(runners))
	for k := range runners {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ParseTask reads a submitted task JSON: it checks the common fields, lets the
// type's runner validate the rest, and gives the task an id when it has none
// (<type>_<dataSource>_<8 letters a–p>[_<start>_<end>]_<now>, Druid's form).
// It returns the task and the time chunks it must lock before it starts.
func ParseTask(body []byte, now time.Time) (Task, []interval.Interval, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		if err == nil {
			err = errors.New("got null")
		}
		return Task{}, nil, fmt.Errorf("a task must be a JSON object: %v", err)
	}
	str := func(name string) (string, error) {
		raw, ok := fields[name]
		if !ok || string(raw) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("task field %q must be a string, got %s", name, raw)
		}
		return s, nil
	}
	var t Task
	var err error
	if t.Type, err = str("type"); err != nil {
		return t, nil, err
	}
	if t.Type == "" {
		return t, nil, fmt.Errorf("missing type id property 'type' (known task types: %s)", strings.Join(Types(), ", "))
	}
	r, ok := RunnerFor(t.Type)
	if !ok {
		return t, nil, fmt.Errorf("Could not resolve type id '%s' as a subtype of Task: known type ids = %v", t.Type, Types())
	}
	if t.ID, err = str("id"); err != nil {
		return t, nil, err
	}
	if t.GroupID, err = str("groupId"); err != nil {
		return t, nil, err
	}
	if t.DataSource, err = str("dataSource"); err != nil {
		return t, nil, err
	}
	t.Payload = body
	var locks []interval.Interval
	if v, ok := r.(Validator); ok {
		if locks, err = v.Validate(&t); err != nil {
			return t, nil, err
		}
	}
	if strings.TrimSpace(t.DataSource) == "" {
		return t, nil, errors.New("task field \"dataSource\" must not be empty")
	}
	if strings.ContainsRune(t.DataSource, '/') {
		return t, nil, fmt.Errorf("invalid dataSource %q: it must not contain '/'", t.DataSource)
	}
	if t.ID == "" {
		t.ID = newTaskID(t.Type, t.DataSource, locks, now)
	}
	if err := commands.ValidateTaskID(t.ID); err != nil {
		return t, nil, err
	}
	if t.GroupID == "" {
		t.GroupID = t.ID
	}
	for k, v := range map[string]string{"id": t.ID, "groupId": t.GroupID, "type": t.Type, "dataSource": t.DataSource} {
		b, _ := json.Marshal(v)
		fields[k] = b
	}
	if t.Payload, err = json.Marshal(fields); err != nil {
		return t, nil, fmt.Errorf("task JSON: %v", err)
	}
	return t, locks, nil
}

func newTaskID(typ, ds string, locks []interval.Interval, now time.Time) string {
	var suffix [8]byte
	for i := range suffix {
		suffix[i] = 'a' + byte(rand.IntN(16))
	}
	parts := []string{typ, ds, string(suffix[:])}
	// The interval goes in when the task names one; a task that locks all
	// of time (no intervals given) would carry two 9-digit years.
	if len(locks) == 1 && locks[0] != interval.Eternity {
		parts = append(parts, interval.FormatMillis(locks[0].Start), interval.FormatMillis(locks[0].End))
	}
	parts = append(parts, interval.FormatMillis(now.UnixMilli()))
	return strings.Join(parts, "_")
}

// Task actions: requests a running task makes to the overlord leader, which
// checks and replicates them (Druid's task actions).
const (
	ActionLockAcquire  = "lockAcquire"  // lock Interval of the task's datasource → {"interval","version"}
	ActionLockRelease  = "lockRelease"  // release Interval ("" = every lock) → {"released": n}
	ActionKillSegments = "killSegments" // delete unused segments inside Interval (lock required) → {"killed": [ids], "markedUnused": n}
	// ActionDataSourceMetadata reads the stored ingestion metadata of the
	// task's datasource (Druid's KafkaDataSourceMetadata; null when none): a
	// stream task learns from it that a replica published its records.
	ActionDataSourceMetadata = "dataSourceMetadata"
	// ActionGroupTasks lists the other tasks of the task's group running on
	// a worker, and the reports of those active or recently ended →
	// {"active": [ids], "reports": {id: report}}: a stream replica learns
	// whether one that publishes before it still runs, and where the others
	// stopped reading.
	ActionGroupTasks = "groupTasks"
)

// Action is one task action.
type Action struct {
	Type         string `json:"type"`
	Interval     string `json:"interval,omitempty"`
	MarkAsUnused bool   `json:"markAsUnused,omitempty"`
}

// ActionError is the overlord's refusal of an action.
type ActionError struct {
	Status int // HTTP status: 400 invalid, 404 unknown, 409 conflict (e.g. a lock held by another task)
	Msg    string
}

func (e *ActionError) Error() string {
	return fmt.Sprintf("task action refused (%d): %s", e.Status, e.Msg)
}

// IsConflict reports an action refused because of the current state (a lock
// another task holds): retrying later may succeed.
func IsConflict(err error) bool {
	var ae *ActionError
	return errors.As(err, &ae) && ae.Status == 409
}

// Env is what a running task gets from its worker: its log, a scratch
// directory, the overlord for task actions, and (serving.go) a way to make
// its rows queryable before and while they are handed off.
type Env struct {
	log     *taskLog
	dir     string
	host    string
	act     func(ctx context.Context, a Action) (json.RawMessage, error)
	report  func(ctx context.Context, r Report) error
	serve   func(segs []Served) error
	handoff func(dataSource string, segs []Served) error
	hold    func() (release func())
	metrics *taskMetrics // metrics.go
}

// Logf appends a timestamped line to the task's log.
func (e Env) Logf(format string, args ...any) { e.log.printf(format, args...) }

// Log is the task's log file, for runners that stream output into it.
func (e Env) Log() io.Writer { return e.log }

// Dir is the task's own scratch directory (it holds the log too).
func (e Env) Dir() string { return e.dir }

// Host is the worker's host:port.
func (e Env) Host() string { return e.host }

// Act submits a task action to the overlord leader and returns its result.
func (e Env) Act(ctx context.Context, a Action) (json.RawMessage, error) {
	if e.act == nil {
		return nil, errors.New("task actions are not available")
	}
	return e.act(ctx, a)
}

// PublishReport makes a live report visible (GET .../task/{id}/reports) while
// the task runs; the report Run returns replaces it at the end.
func (e Env) PublishReport(ctx context.Context, r Report) error {
	if e.report == nil {
		return errors.New("reports cannot be published")
	}
	return e.report(ctx, r)
}

// taskLog is a task's log file; runners may log from several goroutines.
type taskLog struct {
	mu sync.Mutex
	w  io.Writer
	id string
}

func (l *taskLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *taskLog) printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	line := fmt.Sprintf("%s INFO [task-runner-%s] %s\n", interval.FormatMillis(time.Now().UnixMilli()), l.id, strings.TrimRight(msg, "\n"))
	l.Write([]byte(line))
}
