package audit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"strata/commands"
	"strata/fsm"
	"strata/interval"
)

// Record is one command of the log as the audit listing shows it: who asked
// for what and when, the objects it names (for the filters), a one-line
// summary, and the command itself with its secrets redacted.
type Record struct {
	Index       uint64          `json:"index"`
	Time        string          `json:"time"` // the leader's time, ISO-8601 UTC
	TimeMs      int64           `json:"-"`
	Type        string          `json:"type"`
	Author      string          `json:"author"`
	Comment     string          `json:"comment"`
	IP          string          `json:"ip"`
	DataSources []string        `json:"dataSources,omitempty"`
	Supervisor  string          `json:"supervisor,omitempty"`
	Task        string          `json:"task,omitempty"`
	Summary     string          `json:"summary"`
	Command     json.RawMessage `json:"command"`
}

// description is what a command's describer tells about it.
type description struct {
	dataSources []string
	supervisor  string
	task        string
	summary     string
	// command, when set, replaces the command's own JSON in the record
	// (before redaction): PublishSegments' binary segments are shown as
	// segment objects.
	command any
}

// describers holds one function per command tag. A command type without one
// is listed with a generic summary; TestEveryCommandIsDescribed keeps the
// table complete.
var describers = map[string]func(commands.Command) description{}

// describe registers the describer of command type C.
func describe[C commands.Command](fn func(C) description) {
	var zero C
	describers[zero.CommandType()] = func(cmd commands.Command) description {
		switch c := any(cmd).(type) {
		case C:
			return fn(c)
		case *C:
			return fn(*c)
		}
		return description{summary: "command of an unexpected Go type"}
	}
}

// Describe turns one log entry's command into its record. cmd is nil for a
// tag this binary does not know (an ignorable command of a newer version):
// the record then shows the envelope's payload as it is, redacted.
func Describe(index uint64, env commands.Envelope, cmd commands.Command) Record {
	rec, d := describeMeta(index, env, cmd)
	rec.Command = commandJSON(env, d)
	return rec
}

// describeMeta is the record without its command JSON, which a listing
// renders (and redacts) only for the records it returns.
func describeMeta(index uint64, env commands.Envelope, cmd commands.Command) (Record, description) {
	rec := Record{
		Index: index, Time: interval.FormatMillis(env.TimeMs), TimeMs: env.TimeMs, Type: env.Type,
		Author: env.Audit.Author, Comment: env.Audit.Comment, IP: env.Audit.IP,
	}
	var d description
	fn := describers[env.Type]
	switch {
	case cmd == nil:
		d.summary = fmt.Sprintf("%s (a command type this version does not know)", env.Type)
	case fn == nil:
		d.summary = env.Type
	default:
		d = fn(cmd)
	}
	rec.DataSources, rec.Supervisor, rec.Task, rec.Summary = d.dataSources, d.supervisor, d.task, d.summary
	return rec, d
}

// commandJSON is the command as the record shows it, secrets redacted.
func commandJSON(env commands.Envelope, d description) json.RawMessage {
	raw := []byte(env.Payload)
	if d.command != nil {
		if b, err := json.Marshal(d.command); err == nil {
			raw = b
		}
	}
	if len(raw) == 0 {
		raw = []byte("null")
	}
	return Redact(raw)
}

// one returns ds as a datasource list ("" is none).
func one(ds string) []string {
	if ds == "" {
		return nil
	}
	return []string{ds}
}

// quoteList prints at most n items, then how many more.
func quoteList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// jsonKeys lists, sorted, the members of v marshalled as a JSON object: for a
// patch whose fields are all omitempty, the fields it sets.
func jsonKeys(v any) []string {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func init() {
	describe(func(c commands.SetCoordinatorConfig) description {
		fields := jsonKeys(c.Patch)
		if len(fields) == 0 {
			return description{summary: "set the coordinator dynamic config (no field changed)"}
		}
		return description{summary: "set the coordinator dynamic config: " + quoteList(fields, 6)}
	})
	describe(func(c commands.SetWorkerConfig) description {
		strategy := "none"
		if c.Config.SelectStrategy != nil {
			strategy = c.Config.SelectStrategy.Type
		}
		return description{summary: fmt.Sprintf("set the overlord worker config (type %s, selectStrategy %s)", c.Config.Type, strategy)}
	})
	describe(func(c commands.SetRules) description {
		var rules []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(c.Rules, &rules) // a body the FSM refused still gets a summary
		types := make([]string, len(rules))
		for i, r := range rules {
			types[i] = r.Type
		}
		what := "no rules"
		if len(types) > 0 {
			what = quoteList(types, 5)
		}
		if c.DataSource == "_default" {
			return description{summary: "set the default retention rules: " + what}
		}
		return description{dataSources: one(c.DataSource), summary: fmt.Sprintf("set the retention rules of %s: %s", c.DataSource, what)}
	})
	describe(describePublish)
	describe(func(c commands.MarkSegments) description {
		state := "unused"
		if c.Used {
			state = "used"
		}
		var which string
		switch {
		case c.All:
			which = "all segments"
		case c.Interval != "":
			which = "the segments in " + c.Interval
		default:
			which = fmt.Sprintf("%d segments (%s)", len(c.IDs), quoteList(c.IDs, 3))
		}
		return description{dataSources: one(c.DataSource), summary: fmt.Sprintf("mark %s of %s %s", which, c.DataSource, state)}
	})
	describe(func(c commands.KillSegments) description {
		return description{dataSources: one(c.DataSource), task: c.TaskID,
			summary: fmt.Sprintf("kill the unused segments of %s in %s (task %s)", c.DataSource, c.Interval, c.TaskID)}
	})
	describe(func(c commands.AckFileDeletions) description {
		return description{summary: fmt.Sprintf("%d deep-storage files deleted", len(c.LoadSpecs))}
	})
	describe(func(c commands.JoinServer) description {
		return description{summary: fmt.Sprintf("server %s (%s) joined at %s", c.ID, strings.Join(c.Roles, ","), c.URL)}
	})
	describe(func(c commands.LeaveServer) description {
		s := "server " + c.ID + " left"
		if c.Reason != "" {
			s += ": " + c.Reason
		}
		return description{summary: s}
	})
	describe(func(c commands.SetSupervisor) description {
		verb := "store supervisor %s for %s (running)"
		if c.Suspended {
			verb = "store supervisor %s for %s (suspended)"
		}
		return description{dataSources: one(c.DataSource), supervisor: c.ID, summary: fmt.Sprintf(verb, c.ID, c.DataSource)}
	})
	describe(func(c commands.TerminateSupervisor) description {
		return description{supervisor: c.ID, summary: "terminate supervisor " + c.ID}
	})
	describe(func(c commands.ResetSupervisorOffsets) description {
		if len(c.Offsets) == 0 || string(c.Offsets) == "null" {
			return description{dataSources: one(c.DataSource), summary: "reset the stored stream offsets of " + c.DataSource}
		}
		return description{dataSources: one(c.DataSource), summary: "set stored stream offsets of " + c.DataSource + ": " + string(c.Offsets)}
	})
	describe(func(c commands.SetSupervisorState) description {
		s := fmt.Sprintf("supervisor %s is %s", c.ID, c.State)
		if c.DetailedState != c.State {
			s += " (" + c.DetailedState + ")"
		}
		return description{supervisor: c.ID, summary: s}
	})
	describe(func(c commands.SubmitTask) description {
		return description{dataSources: one(c.DataSource), task: c.ID, summary: fmt.Sprintf("submit %s task %s on %s", c.Type, c.ID, c.DataSource)}
	})
	describe(func(c commands.AssignTask) description {
		return description{task: c.ID, summary: fmt.Sprintf("assign task %s to worker %s", c.ID, c.Worker)}
	})
	describe(func(c commands.TaskStatusUpdate) description {
		s := fmt.Sprintf("task %s is %s on %s", c.ID, c.Status, c.Worker)
		if c.ErrorMsg != "" {
			s += ": " + c.ErrorMsg
		}
		return description{task: c.ID, summary: s}
	})
	describe(func(c commands.ShutdownTask) description {
		reason := c.Reason
		if reason == "" {
			reason = commands.ShutdownByUser
		}
		return description{task: c.ID, summary: fmt.Sprintf("shut task %s down (%s)", c.ID, reason)}
	})
	describe(func(c commands.AcquireLock) description {
		return description{task: c.TaskID, summary: fmt.Sprintf("task %s locks %s", c.TaskID, c.Interval)}
	})
	describe(func(c commands.ReleaseLock) description {
		what := c.Interval
		if what == "" {
			what = "all its locks"
		}
		return description{task: c.TaskID, summary: fmt.Sprintf("task %s releases %s", c.TaskID, what)}
	})
	describe(func(c commands.RegisterWorker) description {
		return description{summary: fmt.Sprintf("worker %s registered (capacity %d, category %q, version %s, %d running tasks)",
			c.Host, c.Capacity, c.Category, c.Version, len(c.Running))}
	})
	describe(func(c commands.SetWorkerEnabled) description {
		verb := "disable"
		if c.Enabled {
			verb = "enable"
		}
		return description{summary: fmt.Sprintf("%s worker %s", verb, c.Host)}
	})
	describeSecurity()
	describeLookups()
}

// describeSecurity registers the basic-security commands' describers. The
// listing's command JSON has its "credentials" redacted (audit.Redact): a
// hash is no password, but it is still what an offline guess is checked
// against.
func describeSecurity() {
	describe(func(c commands.CreateUser) description {
		return description{summary: "create user " + c.Name + " in the authenticator"}
	})
	describe(func(c commands.DeleteUser) description {
		return description{summary: "delete user " + c.Name + " from the authenticator"}
	})
	describe(func(c commands.SetCredentials) description {
		return description{summary: "set the password of user " + c.Name}
	})
	describe(func(c commands.CreateAuthzUser) description {
		return description{summary: "create user " + c.Name + " in the authorizer"}
	})
	describe(func(c commands.DeleteAuthzUser) description {
		return description{summary: "delete user " + c.Name + " from the authorizer"}
	})
	describe(func(c commands.CreateRole) description {
		return description{summary: "create role " + c.Name}
	})
	describe(func(c commands.DeleteRole) description {
		return description{summary: "delete role " + c.Name}
	})
	describe(func(c commands.AssignRole) description {
		return description{summary: fmt.Sprintf("assign role %s to user %s", c.Role, c.User)}
	})
	describe(func(c commands.UnassignRole) description {
		return description{summary: fmt.Sprintf("unassign role %s from user %s", c.Role, c.User)}
	})
	describe(func(c commands.SetRolePermissions) description {
		perms := make([]string, len(c.Permissions))
		for i, p := range c.Permissions {
			perms[i] = fmt.Sprintf("%s %s:%s", p.Action, p.Resource.Type, p.Resource.Name)
		}
		what := "none"
		if len(perms) > 0 {
			what = quoteList(perms, 4)
		}
		return description{summary: fmt.Sprintf("set the permissions of role %s: %s", c.Role, what)}
	})
	describe(func(c commands.RecordAuthFailures) description {
		return description{summary: fmt.Sprintf("%d authentication failures from %d addresses (%d without credentials, %d wrong, %d throttled)",
			c.Missing+c.Wrong+c.Throttled, len(c.ByAddress), c.Missing, c.Wrong, c.Throttled)}
	})
	describe(func(c commands.BootstrapSecurity) description {
		var who []string
		if c.Admin != nil {
			who = append(who, "admin")
		}
		if c.Internal != nil {
			who = append(who, c.InternalUser)
		}
		return description{summary: "create the initial users if absent (" + strings.Join(who, ", ") + ") with the admin role"}
	})
}

// describePublish shows the segments of a publish as Druid's segment
// objects, not as their binary encoding.
func describePublish(c commands.PublishSegments) description {
	d := description{dataSources: one(c.DataSource), task: c.TaskID}
	segs, err := fsm.DecodeSegments(c.Segments, c.Count)
	if err != nil {
		d.summary = fmt.Sprintf("publish %d segments of %s (their encoding does not decode: %v)", c.Count, c.DataSource, err)
		return d
	}
	ids := make([]string, len(segs))
	for i, s := range segs {
		ids[i] = s.ID().String()
	}
	d.summary = fmt.Sprintf("publish %d segments of %s: %s", len(segs), c.DataSource, quoteList(ids, 2))
	if c.TaskID != "" {
		d.summary += " (task " + c.TaskID + ")"
	}
	if len(c.EndMetadata) > 0 {
		d.summary += ", stream offsets " + string(c.EndMetadata)
	}
	type shown struct {
		commands.PublishSegments
		Segments any `json:"segments"`
	}
	d.command = shown{PublishSegments: c, Segments: segs}
	return d
}

func describeLookups() {
	describe(func(c commands.UpdateLookups) description {
		if len(c.Tiers) == 0 {
			return description{summary: "initialise the lookup configuration"}
		}
		var names []string
		for _, tier := range slices.Sorted(maps.Keys(c.Tiers)) {
			for _, name := range slices.Sorted(maps.Keys(c.Tiers[tier])) {
				names = append(names, tier+"/"+name)
			}
		}
		return description{summary: "set lookups " + quoteList(names, 5)}
	})
	describe(func(c commands.DeleteLookup) description {
		return description{summary: fmt.Sprintf("delete lookup %s from tier %s", c.Lookup, c.Tier)}
	})
	describe(func(c commands.DeleteLookupTier) description {
		return description{summary: "delete lookup tier " + c.Tier + " and its lookups"}
	})
}
