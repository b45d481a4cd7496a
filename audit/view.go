package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"strata/fsm"
)

// View is the state machine's tables at one index, as the state endpoint
// shows them. Specs and task payloads are redacted (Redact): credentials
// never leave the node.
type View struct {
	Index             uint64                     `json:"index"`
	Time              string                     `json:"time,omitempty"` // leader time of the entry at Index
	CoordinatorConfig json.RawMessage            `json:"coordinatorConfig"`
	WorkerConfig      json.RawMessage            `json:"workerConfig"` // null: never set
	Rules             map[string]json.RawMessage `json:"rules"`
	Segments          []SegmentView              `json:"segments"`
	Tasks             []TaskView                 `json:"tasks"`
	Locks             []fsm.TaskLock             `json:"locks"`
	Supervisors       []SupervisorView           `json:"supervisors"`
	Workers           []*fsm.WorkerRecord        `json:"workers"`
	Servers           []*fsm.ServerRecord        `json:"servers"` // processes that joined (discovery)
}

// SegmentView is one segment record, used or not.
type SegmentView struct {
	ID          string `json:"id"`
	DataSource  string `json:"dataSource"`
	Interval    string `json:"interval"`
	Version     string `json:"version"`
	Partition   int32  `json:"partitionNum"`
	Size        int64  `json:"size"`
	Used        bool   `json:"used"`
	UsedUpdated string `json:"usedStatusLastUpdated,omitempty"`
}

// TaskView is one task.
type TaskView struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	GroupID      string          `json:"groupId"`
	DataSource   string          `json:"dataSource"`
	Status       string          `json:"status"`
	RunnerStatus string          `json:"runnerStatus"`
	Created      string          `json:"createdTime"`
	Worker       string          `json:"worker,omitempty"`
	ErrorMsg     string          `json:"errorMsg,omitempty"`
	Payload      json.RawMessage `json:"payload,omitempty"`
}

// SupervisorView is one active supervisor, with its last recorded state.
type SupervisorView struct {
	ID            string          `json:"id"`
	DataSource    string          `json:"dataSource"`
	Suspended     bool            `json:"suspended"`
	Version       string          `json:"version"`
	State         string          `json:"state,omitempty"`
	DetailedState string          `json:"detailedState,omitempty"`
	Spec          json.RawMessage `json:"spec"`
}

func isoMs(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// NewView reads the tables of s.
func NewView(s *fsm.State, index uint64) View {
	v := View{Index: index, Rules: map[string]json.RawMessage{}, Segments: []SegmentView{}, Tasks: []TaskView{},
		Locks: []fsm.TaskLock{}, Supervisors: []SupervisorView{}, Workers: s.Workers(), Servers: s.Servers()}
	v.CoordinatorConfig, _ = json.Marshal(s.CoordinatorConfig())
	if wc, ok := s.WorkerConfig(); ok {
		v.WorkerConfig, _ = json.Marshal(wc)
	} else {
		v.WorkerConfig = json.RawMessage("null")
	}
	for _, ds := range s.RulesKeys() {
		v.Rules[ds] = json.RawMessage(s.RulesJSON(ds))
	}
	for _, r := range s.Segments("") {
		seg := r.Segment
		v.Segments = append(v.Segments, SegmentView{ID: seg.ID().String(), DataSource: seg.DataSource, Interval: seg.Interval.String(),
			Version: seg.Version, Partition: seg.ShardSpec.PartitionNum, Size: seg.Size, Used: r.Used, UsedUpdated: isoMs(r.UsedUpdatedMs)})
	}
	var tasks []*fsm.TaskRecord
	s.EachCompleteTask(func(r *fsm.TaskRecord) bool { tasks = append(tasks, r); return true })
	tasks = append(tasks, s.ActiveTasks()...)
	slices.SortFunc(tasks, func(a, b *fsm.TaskRecord) int { return cmpU64(a.Seq, b.Seq) })
	dataSources := map[string]bool{}
	for _, r := range tasks {
		tv := TaskView{ID: r.ID, Type: r.Type, GroupID: r.GroupID, DataSource: r.DataSource, Status: r.Status, RunnerStatus: r.RunnerStatus,
			Created: isoMs(r.CreatedMs), Worker: r.Worker, ErrorMsg: r.ErrorMsg}
		if r.Payload != "" {
			tv.Payload = Redact([]byte(r.Payload))
		}
		v.Tasks = append(v.Tasks, tv)
		dataSources[r.DataSource] = true
	}
	for _, ds := range slices.Sorted(maps.Keys(dataSources)) {
		v.Locks = append(v.Locks, s.DataSourceLocks(ds)...)
	}
	for _, r := range s.Supervisors() {
		sv := SupervisorView{ID: r.ID, DataSource: r.DataSource, Suspended: r.Suspended, Version: r.Version, Spec: Redact(r.Spec)}
		if states := s.SupervisorStates(r.ID); len(states) > 0 {
			sv.State, sv.DetailedState = states[0].State, states[0].DetailedState
		}
		v.Supervisors = append(v.Supervisors, sv)
	}
	return v
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Only keeps, of a view, what concerns one datasource: its segments, tasks,
// locks, rules (and the default rules) and supervisors. The configs, workers
// and servers, which belong to no datasource, stay.
func (v View) Only(dataSource string) View {
	out := v
	out.Rules = map[string]json.RawMessage{}
	for ds, r := range v.Rules {
		if ds == dataSource || ds == fsm.DefaultRulesKey {
			out.Rules[ds] = r
		}
	}
	out.Segments = filter(v.Segments, func(s SegmentView) bool { return s.DataSource == dataSource })
	out.Tasks = filter(v.Tasks, func(t TaskView) bool { return t.DataSource == dataSource })
	out.Locks = filter(v.Locks, func(l fsm.TaskLock) bool { return l.DataSource == dataSource })
	out.Supervisors = filter(v.Supervisors, func(s SupervisorView) bool { return s.DataSource == dataSource })
	return out
}

func filter[T any](rows []T, keep func(T) bool) []T {
	out := []T{}
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// ViewAt returns the tables as they were after index.
func (h *History) ViewAt(index uint64) (View, error) {
	s, at, err := h.StateAt(index)
	if err != nil {
		return View{}, err
	}
	v := NewView(s, at)
	v.Time = isoMs(h.timeOf(at))
	return v, nil
}

// timeOf is the time of the entry at index, or of the nearest command
// before it within the same scan (0: unknown).
func (h *History) timeOf(index uint64) int64 {
	var ms int64
	if index == 0 {
		return 0
	}
	h.Log().Scan(index, index, func(e Entry) error { ms = entryTimeMs(e); return nil })
	return ms
}

// Diff is what changed between two moments, table by table; tables without
// a change are left out.
type Diff struct {
	From     uint64      `json:"from"`
	To       uint64      `json:"to"`
	FromTime string      `json:"fromTime,omitempty"`
	ToTime   string      `json:"toTime,omitempty"`
	Tables   []TableDiff `json:"tables"`
}

// TableDiff is one table's changes: rows added and removed (whole), rows
// changed (field by field, old → new), and for segments the ones marked used
// or unused.
type TableDiff struct {
	Table        string            `json:"table"`
	Added        []json.RawMessage `json:"added,omitempty"`
	Removed      []json.RawMessage `json:"removed,omitempty"`
	MarkedUsed   []string          `json:"markedUsed,omitempty"`
	MarkedUnused []string          `json:"markedUnused,omitempty"`
	Changed      []Change          `json:"changed,omitempty"`
}

// Change is one field of one row that changed.
type Change struct {
	Key   string          `json:"key"` // the row: a datasource, segment id, task id, ...
	Field string          `json:"field,omitempty"`
	Old   json.RawMessage `json:"old"`
	New   json.RawMessage `json:"new"`
}

// DiffAt returns what changed from one index to another.
func (h *History) DiffAt(from, to uint64) (Diff, error) {
	a, err := h.ViewAt(from)
	if err != nil {
		return Diff{}, err
	}
	b, err := h.ViewAt(to)
	if err != nil {
		return Diff{}, err
	}
	d := DiffViews(a, b)
	return d, nil
}

// DiffViews compares two views.
func DiffViews(a, b View) Diff {
	d := Diff{From: a.Index, To: b.Index, FromTime: a.Time, ToTime: b.Time, Tables: []TableDiff{}}
	add := func(t TableDiff) {
		if len(t.Added)+len(t.Removed)+len(t.MarkedUsed)+len(t.MarkedUnused)+len(t.Changed) > 0 {
			d.Tables = append(d.Tables, t)
		}
	}
	add(diffRows("coordinatorConfig", map[string]json.RawMessage{"coordinatorConfig": a.CoordinatorConfig},
		map[string]json.RawMessage{"coordinatorConfig": b.CoordinatorConfig}))
	add(diffRows("workerConfig", single("workerConfig", a.WorkerConfig), single("workerConfig", b.WorkerConfig)))
	add(diffRows("rules", a.Rules, b.Rules))
	add(diffSegments(a.Segments, b.Segments))
	add(diffRows("tasks", keyed(a.Tasks, func(t TaskView) string { return t.ID }), keyed(b.Tasks, func(t TaskView) string { return t.ID })))
	lockKey := func(l fsm.TaskLock) string { return fmt.Sprintf("%s/%d/%d/%s", l.DataSource, l.Start, l.End, l.TaskID) }
	add(diffRows("locks", keyed(a.Locks, lockKey), keyed(b.Locks, lockKey)))
	supKey := func(s SupervisorView) string { return s.ID }
	add(diffRows("supervisors", keyed(a.Supervisors, supKey), keyed(b.Supervisors, supKey)))
	workerKey := func(w *fsm.WorkerRecord) string { return w.Host }
	add(diffRows("workers", keyed(a.Workers, workerKey), keyed(b.Workers, workerKey)))
	serverKey := func(s *fsm.ServerRecord) string { return s.ID }
	add(diffRows("servers", keyed(a.Servers, serverKey), keyed(b.Servers, serverKey)))
	return d
}

func single(key string, v json.RawMessage) map[string]json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return map[string]json.RawMessage{}
	}
	return map[string]json.RawMessage{key: v}
}

func keyed[T any](rows []T, key func(T) string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(rows))
	for _, r := range rows {
		b, _ := json.Marshal(r)
		out[key(r)] = b
	}
	return out
}

// diffRows compares two tables of JSON rows by key: whole rows added and
// removed; for rows in both, each top-level field that differs (or the
// whole row when it is not an object).
func diffRows(table string, a, b map[string]json.RawMessage) TableDiff {
	t := TableDiff{Table: table}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[k]; !ok {
			t.Removed = append(t.Removed, a[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		old, ok := a[k]
		if !ok {
			t.Added = append(t.Added, b[k])
			continue
		}
		t.Changed = append(t.Changed, diffFields(k, old, b[k])...)
	}
	return t
}

func diffFields(key string, a, b json.RawMessage) []Change {
	if bytes.Equal(a, b) {
		return nil
	}
	var oa, ob map[string]json.RawMessage
	if json.Unmarshal(a, &oa) != nil || json.Unmarshal(b, &ob) != nil {
		return []Change{{Key: key, Old: a, New: b}}
	}
	var out []Change
	fields := map[string]bool{}
	for f := range oa {
		fields[f] = true
	}
	for f := range ob {
		fields[f] = true
	}
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		va, vb := oa[f], ob[f]
		if bytes.Equal(va, vb) {
			continue
		}
		if va == nil {
			va = json.RawMessage("null")
		}
		if vb == nil {
			vb = json.RawMessage("null")
		}
		out = append(out, Change{Key: key, Field: f, Old: va, New: vb})
	}
	return out
}

// diffSegments is diffRows for segments, with a used flag flip reported as
// marked used or unused (its timestamp going with it) instead of as a change.
func diffSegments(a, b []SegmentView) TableDiff {
	t := TableDiff{Table: "segments"}
	old := make(map[string]SegmentView, len(a))
	for _, s := range a {
		old[s.ID] = s
	}
	seen := make(map[string]bool, len(b))
	for _, s := range b {
		seen[s.ID] = true
		o, ok := old[s.ID]
		switch {
		case !ok:
			j, _ := json.Marshal(s)
			t.Added = append(t.Added, j)
		case o.Used != s.Used:
			if s.Used {
				t.MarkedUsed = append(t.MarkedUsed, s.ID)
			} else {
				t.MarkedUnused = append(t.MarkedUnused, s.ID)
			}
		case o != s:
			ja, _ := json.Marshal(o)
			jb, _ := json.Marshal(s)
			t.Changed = append(t.Changed, diffFields(s.ID, ja, jb)...)
		}
	}
	for _, s := range a {
		if !seen[s.ID] {
			j, _ := json.Marshal(s)
			t.Removed = append(t.Removed, j)
		}
	}
	return t
}
