package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/fsm"
)

// Paging bounds of a listing.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// stampSlack is how far a command's leader time may lag behind an earlier
// index's. The leader stamps a command when it proposes it, never earlier
// than the last applied stamp (cluster.Node.Propose), so times go backwards
// only among proposals in flight together, for at most a propose timeout. A
// newest-first listing with a start time stops scanning once it meets an
// entry stamped this long before that time.
const stampSlack = time.Minute

// Filter selects the records of a listing. Zero fields select everything.
type Filter struct {
	SinceMs, UntilMs   int64    // leader time, inclusive; UntilMs 0 = no end
	HasSince           bool     // SinceMs is set (0 is a valid time)
	FromIndex, ToIndex uint64   // Raft index, inclusive; ToIndex 0 = no end
	Types              []string // command tags; "area.*" matches a tag prefix
	Author             string
	DataSource         string
	Supervisor, Task   string
}

// Query is a filter and a page of the newest-first listing.
type Query struct {
	Filter
	Limit  int    // records per page (DefaultLimit when 0)
	Before uint64 // only entries before this index (the previous page's Next); 0 = from the newest
}

// Page is one page of a listing, newest first.
type Page struct {
	Records []Record `json:"records"`
	// Next, when set, is the Before of the next page: older records may
	// match. Absent on the last page.
	Next uint64 `json:"next,omitempty"`
}

// ErrBadQuery is wrapped by the errors of a query's parameters.
var ErrBadQuery = errors.New("bad audit query")

func badQuery(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// ParseQuery reads a listing's parameters: since, until (ISO-8601 times or
// dates), fromIndex, toIndex, type (comma-separated command tags, "area.*"
// for every tag of an area), author, dataSource, supervisor, task, limit
// (1 to MaxLimit) and before (an index: the page's Next). An unknown
// parameter is an error, so that a misspelt filter does not silently list
// everything.
func ParseQuery(v url.Values) (Query, error) {
	var q Query
	known := map[string]bool{"since": true, "until": true, "fromIndex": true, "toIndex": true, "type": true,
		"author": true, "dataSource": true, "supervisor": true, "task": true, "limit": true, "before": true}
	keys := mapsKeys(v)
	slices.Sort(keys)
	for _, k := range keys {
		if !known[k] {
			return q, badQuery("unknown parameter %q (known: since, until, fromIndex, toIndex, type, author, dataSource, supervisor, task, limit, before)", k)
		}
		if len(v[k]) > 1 {
			return q, badQuery("parameter %q given %d times", k, len(v[k]))
		}
	}
	var err error
	if s := v.Get("since"); v.Has("since") {
		if q.SinceMs, err = parseQueryTime("since", s); err != nil {
			return q, err
		}
		q.HasSince = true
	}
	if s := v.Get("until"); v.Has("until") {
		if q.UntilMs, err = parseQueryTime("until", s); err != nil {
			return q, err
		}
	}
	if q.UntilMs != 0 && q.HasSince && q.UntilMs < q.SinceMs {
		return q, badQuery("until (%s) is before since (%s)", v.Get("until"), v.Get("since"))
	}
	for _, p := range []struct {
		name string
		dst  *uint64
	}{{"fromIndex", &q.FromIndex}, {"toIndex", &q.ToIndex}, {"before", &q.Before}} {
		if !v.Has(p.name) {
			continue
		}
		n, err := strconv.ParseUint(v.Get(p.name), 10, 64)
		if err != nil || n == 0 {
			return q, badQuery("%s must be a Raft index (a whole number from 1), got %q", p.name, v.Get(p.name))
		}
		*p.dst = n
	}
	if q.ToIndex != 0 && q.ToIndex < q.FromIndex {
		return q, badQuery("toIndex %d is below fromIndex %d", q.ToIndex, q.FromIndex)
	}
	if v.Has("type") {
		for _, t := range strings.Split(v.Get("type"), ",") {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			if !knownType(t) {
				return q, badQuery("unknown command type %q (known: %s; \"area.*\" selects an area)", t, strings.Join(commands.Types(), ", "))
			}
			q.Types = append(q.Types, t)
		}
		if len(q.Types) == 0 {
			return q, badQuery("type is empty")
		}
	}
	q.Author, q.DataSource, q.Supervisor, q.Task = v.Get("author"), v.Get("dataSource"), v.Get("supervisor"), v.Get("task")
	for _, p := range []struct{ name, val string }{{"author", q.Author}, {"dataSource", q.DataSource}, {"supervisor", q.Supervisor}, {"task", q.Task}} {
		if v.Has(p.name) && p.val == "" {
			return q, badQuery("%s is empty", p.name)
		}
	}
	q.Limit = DefaultLimit
	if v.Has("limit") {
		n, err := strconv.Atoi(v.Get("limit"))
		if err != nil || n < 1 || n > MaxLimit {
			return q, badQuery("limit must be a whole number from 1 to %d, got %q", MaxLimit, v.Get("limit"))
		}
		q.Limit = n
	}
	return q, nil
}

func mapsKeys(v url.Values) []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	return out
}

func parseQueryTime(name, s string) (int64, error) {
	t, err := parseTime(strings.TrimSpace(s))
	if err != nil {
		return 0, badQuery("%s must be an ISO-8601 time (2026-11-26T09:00:00Z) or date, got %q", name, s)
	}
	return t.UnixMilli(), nil
}

// knownType reports whether t is a registered tag or "area.*" with an area
// some registered tag has.
func knownType(t string) bool {
	area, wild := strings.CutSuffix(t, ".*")
	for _, tag := range commands.Types() {
		if tag == t || wild && strings.HasPrefix(tag, area+".") {
			return true
		}
	}
	return false
}

// Values is q as URL parameters (ParseQuery's inverse), for clients.
func (q Query) Values() url.Values {
	v := url.Values{}
	if q.HasSince {
		v.Set("since", time.UnixMilli(q.SinceMs).UTC().Format(time.RFC3339Nano))
	}
	if q.UntilMs != 0 {
		v.Set("until", time.UnixMilli(q.UntilMs).UTC().Format(time.RFC3339Nano))
	}
	for _, p := range []struct {
		name string
		n    uint64
	}{{"fromIndex", q.FromIndex}, {"toIndex", q.ToIndex}, {"before", q.Before}} {
		if p.n != 0 {
			v.Set(p.name, strconv.FormatUint(p.n, 10))
		}
	}
	if len(q.Types) > 0 {
		v.Set("type", strings.Join(q.Types, ","))
	}
	for _, p := range []struct{ name, val string }{{"author", q.Author}, {"dataSource", q.DataSource}, {"supervisor", q.Supervisor}, {"task", q.Task}} {
		if p.val != "" {
			v.Set(p.name, p.val)
		}
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// matches applies the filter to a record.
func (f *Filter) matches(r *Record) bool {
	switch {
	case f.HasSince && r.TimeMs < f.SinceMs, f.UntilMs != 0 && r.TimeMs > f.UntilMs:
		return false
	case f.Author != "" && r.Author != f.Author:
		return false
	case f.DataSource != "" && !slices.Contains(r.DataSources, f.DataSource):
		return false
	case f.Supervisor != "" && r.Supervisor != f.Supervisor:
		return false
	case f.Task != "" && r.Task != f.Task:
		return false
	}
	if len(f.Types) == 0 {
		return true
	}
	for _, t := range f.Types {
		if area, wild := strings.CutSuffix(t, ".*"); wild && strings.HasPrefix(r.Type, area+".") || t == r.Type {
			return true
		}
	}
	return false
}

// Scan windows grow from the first to the last size as a page needs more.
const (
	firstWindow = 256
	lastWindow  = 64 << 10
)

// Names tells the datasource of a task or a supervisor: what a listing
// shows (and filters by) for the commands that name only the task or the
// supervisor (a task's assignment, status and locks, a supervisor's states
// and its terminate). "" means unknown.
type Names interface {
	TaskDataSource(id string) string
	SupervisorDataSource(id string) string
}

// StateNames is Names from a state machine's state, read through read (for
// a live node, its FSM's Read).
type StateNames func(fn func(*fsm.State))

// TaskDataSource implements Names.
func (n StateNames) TaskDataSource(id string) (ds string) {
	n(func(st *fsm.State) {
		if t, ok := st.Task(id); ok {
			ds = t.DataSource
		}
	})
	return ds
}

// SupervisorDataSource implements Names: the active supervisor's, else the
// one its newest history entry names (a terminated one's tombstone lists it).
func (n StateNames) SupervisorDataSource(id string) (ds string) {
	n(func(st *fsm.State) {
		if r, ok := st.Supervisor(id); ok {
			ds = r.DataSource
			return
		}
		if h := st.SupervisorHistory(id); len(h) > 0 {
			var spec struct {
				DataSources []string `json:"dataSources"`
				Spec        struct {
					DataSchema struct {
						DataSource string `json:"dataSource"`
					} `json:"dataSchema"`
				} `json:"spec"`
			}
			if json.Unmarshal(h[0].Spec, &spec) == nil {
				ds = spec.Spec.DataSchema.DataSource
				if len(spec.DataSources) > 0 {
					ds = spec.DataSources[0]
				}
			}
		}
	})
	return ds
}

// addNames fills in the datasource of a record that names only a task or a
// supervisor.
func addNames(r *Record, names Names) {
	if names == nil || len(r.DataSources) > 0 {
		return
	}
	var ds string
	switch {
	case r.Task != "":
		ds = names.TaskDataSource(r.Task)
	case r.Supervisor != "":
		ds = names.SupervisorDataSource(r.Supervisor)
	}
	r.DataSources = one(ds)
}

// Source is what a listing reads.
type Source struct {
	Log Log
	// UpTo bounds the listing to committed entries: the applied index of
	// the node serving it (0: the log's last index).
	UpTo uint64
	// Names, when set, gives the datasource of the records that name only a
	// task or a supervisor.
	Names Names
	// IndexAt, when set, is History.IndexAt: a listing with an end time
	// starts reading at the index stamped then instead of at the newest.
	IndexAt func(time.Time) (uint64, error)
}

// List returns one page of the commands of src that q selects, newest
// first. Entries that are not commands (Raft no-ops and configuration
// changes) are not listed.
func List(src Source, q Query) (Page, error) {
	log, names := src.Log, src.Names
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	first, err := log.FirstIndex()
	if err != nil {
		return Page{}, err
	}
	hi, err := log.LastIndex()
	if err != nil {
		return Page{}, err
	}
	if src.UpTo != 0 {
		hi = min(hi, src.UpTo)
	}
	if q.UntilMs != 0 && src.IndexAt != nil {
		// No entry stamped at or before until comes after the first one
		// stamped more than stampSlack later (stampSlack).
		ix, err := src.IndexAt(time.UnixMilli(q.UntilMs + stampSlack.Milliseconds()))
		switch {
		case errors.Is(err, ErrBadAt): // before the history held: nothing to list
			return Page{Records: []Record{}}, nil
		case err != nil:
			return Page{}, err
		}
		hi = min(hi, ix)
	}
	if q.ToIndex != 0 {
		hi = min(hi, q.ToIndex)
	}
	if q.Before != 0 {
		if q.Before <= 1 {
			return Page{Records: []Record{}}, nil
		}
		hi = min(hi, q.Before-1)
	}
	lo := max(first, q.FromIndex, 1)
	// A match keeps what rendering its command needs: only the records of
	// the page are rendered (and redacted).
	type match struct {
		rec Record
		env commands.Envelope
		d   description
	}
	out := []match{}
	var window []match
	done := false // an entry older than since (by more than the slack) was met
	for size := uint64(firstWindow); hi >= lo && first != 0 && len(out) <= limit && !done; size = min(size*2, lastWindow) {
		from := lo
		if hi-lo+1 > size {
			from = hi - size + 1
		}
		window = window[:0]
		err := log.Scan(from, hi, func(e Entry) error {
			if e.Type != raft.LogCommand {
				return nil
			}
			env, cmd, derr := commands.Decode(e.Data)
			if derr != nil {
				rec := Record{Index: e.Index, Type: env.Type, Summary: "an entry that does not decode: " + derr.Error(), Command: []byte("null")}
				if q.matches(&rec) {
					window = append(window, match{rec: rec})
				}
				return nil
			}
			rec, d := describeMeta(e.Index, env, cmd)
			addNames(&rec, names)
			if q.HasSince && rec.TimeMs < q.SinceMs-stampSlack.Milliseconds() {
				done = true
			}
			if q.matches(&rec) {
				window = append(window, match{rec: rec, env: env, d: d})
			}
			return nil
		})
		if err != nil {
			return Page{}, err
		}
		for i := len(window) - 1; i >= 0; i-- {
			out = append(out, window[i])
		}
		if from == lo {
			break
		}
		hi = from - 1
	}
	page := Page{Records: make([]Record, 0, min(len(out), limit))}
	for i, m := range out {
		if i == limit {
			page.Next = out[limit-1].rec.Index
			break
		}
		if m.rec.Command == nil {
			m.rec.Command = commandJSON(m.env, m.d)
		}
		page.Records = append(page.Records, m.rec)
	}
	return page, nil
}
