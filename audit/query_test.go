package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/fsm"
	"strata/interval"
	"strata/segmeta"
)

// memLog is a Log over entries held in memory, indexes first..last.
type memLog struct {
	entries []Entry
	scans   int // entries handed to Scan callbacks
}

func (l *memLog) FirstIndex() (uint64, error) {
	if len(l.entries) == 0 {
		return 0, nil
	}
	return l.entries[0].Index, nil
}

func (l *memLog) LastIndex() (uint64, error) {
	if len(l.entries) == 0 {
		return 0, nil
	}
	return l.entries[len(l.entries)-1].Index, nil
}

func (l *memLog) Scan(from, to uint64, fn func(Entry) error) error {
	for _, e := range l.entries {
		if e.Index >= from && e.Index <= to {
			l.scans++
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexAt is History.IndexAt over the entries: the last index before the
// first command stamped after t (not counted as scanned).
func (l *memLog) indexAt(t time.Time) (uint64, error) {
	var best uint64
	for _, e := range l.entries {
		if e.Type == raft.LogCommand {
			env, _, err := commands.Decode(e.Data)
			if err != nil {
				return 0, err
			}
			if env.TimeMs > t.UnixMilli() {
				break
			}
		}
		best = e.Index
	}
	return best, nil
}

type logged struct {
	cmd    commands.Command
	author string
	ms     int64
}

func newMemLog(t *testing.T, items []logged) *memLog {
	t.Helper()
	l := &memLog{entries: []Entry{{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("cfg")}}}
	for _, it := range items {
		ix := uint64(len(l.entries) + 1)
		if it.cmd == nil {
			l.entries = append(l.entries, Entry{Index: ix, Term: 1, Type: raft.LogNoop})
			continue
		}
		data, err := commands.Encode(it.cmd, it.ms, commands.Audit{Author: it.author, Comment: "because", IP: "10.0.0.9"})
		if err != nil {
			t.Fatal(err)
		}
		l.entries = append(l.entries, Entry{Index: ix, Term: 1, Type: raft.LogCommand, Data: data})
	}
	return l
}

// Every registered command type has a describer: a new command must say what
// the audit listing shows of it.
func TestEveryCommandIsDescribed(t *testing.T) {
	for _, tag := range commands.Types() {
		if describers[tag] == nil {
			t.Errorf("command %s has no describer in audit/describe.go", tag)
		}
	}
	for tag := range describers {
		if _, ok := commands.New(tag); !ok {
			t.Errorf("describer for %s, which package commands does not register", tag)
		}
	}
}

const kafkaSpecWithSecrets = `{"type":"kafka","spec":{"dataSchema":{"dataSource":"wiki"},
  "ioConfig":{"topic":"t","consumerProperties":{"bootstrap.servers":"k:9093",
    "security.protocol":"SASL_SSL","sasl.mechanism":"PLAIN",
    "sasl.jaas.config":"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter2\";",
    "ssl.truststore.password":"trustpass1","ssl.keystore.password":"keypass2","ssl.key.password":"keypass3"}}},"suspended":false}`

const taskWithS3Keys = `{"type":"index_parallel","id":"t1","spec":{"ioConfig":{"inputSource":{"type":"s3",
  "uris":["s3://bucket/a.json"],
  "properties":{"accessKeyId":{"type":"default","password":"AKIAEXAMPLE7"},"secretAccessKey":{"type":"default","password":"s3cr3tKeyValue"}}}}}}`

func TestDescribeRedactsSecrets(t *testing.T) {
	for _, c := range []struct {
		cmd     commands.Command
		secrets []string
		kept    []string
	}{
		{commands.SetSupervisor{ID: "wiki", DataSource: "wiki", Spec: json.RawMessage(kafkaSpecWithSecrets)},
			[]string{"hunter2", "trustpass1", "keypass2", "keypass3"}, []string{"k:9093", "SASL_SSL", "PLAIN"}},
		{commands.SubmitTask{ID: "t1", Type: "index_parallel", DataSource: "wiki", Payload: json.RawMessage(taskWithS3Keys)},
			[]string{"AKIAEXAMPLE7", "s3cr3tKeyValue"}, []string{"s3://bucket/a.json"}},
	} {
		data, err := commands.Encode(c.cmd, 1000, commands.Audit{Author: "ops"})
		if err != nil {
			t.Fatal(err)
		}
		env, cmd, err := commands.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		rec := Describe(7, env, cmd)
		out, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.secrets {
			if strings.Contains(string(out), s) {
				t.Errorf("%s: secret %q shown: %s", env.Type, s, out)
			}
		}
		for _, s := range append(c.kept, "redacted") {
			if !strings.Contains(string(out), s) {
				t.Errorf("%s: %q missing: %s", env.Type, s, out)
			}
		}
	}
}

func TestDescribeShowsPublishedSegments(t *testing.T) {
	s := &segmeta.DataSegment{DataSource: "wiki", Interval: interval.Interval{Start: 1704067200000, End: 1704153600000}, Version: "v1",
		LoadSpec: `{"type":"local","path":"/deep/wiki/0/index.seg"}`, ShardSpec: segmeta.NumberedShard(0, 1), Size: 10}
	cmd := commands.PublishSegments{DataSource: "wiki", Segments: fsm.EncodeSegments([]*segmeta.DataSegment{s}), Count: 1, TaskID: "task_1"}
	data, _ := commands.Encode(cmd, 1000, commands.Audit{Author: "ops"})
	env, c, err := commands.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	rec := Describe(3, env, c)
	if rec.Task != "task_1" || len(rec.DataSources) != 1 || rec.DataSources[0] != "wiki" ||
		!strings.Contains(rec.Summary, "publish 1 segments of wiki: "+s.ID().String()) {
		t.Fatalf("record %+v", rec)
	}
	var shown struct {
		Segments []struct {
			Identifier string `json:"identifier"`
		} `json:"segments"`
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(rec.Command, &shown); err != nil || len(shown.Segments) != 1 || shown.Segments[0].Identifier != s.ID().String() || shown.TaskID != "task_1" {
		t.Fatalf("command %s: %v", rec.Command, err)
	}
}

// A log of a few kinds of commands by three authors, one a minute.
func sampleLog(t *testing.T) *memLog {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var items []logged
	for i := range 60 {
		ms := base + int64(i)*60000
		ds := []string{"wiki", "logs"}[i%2]
		author := []string{"alice", "bob", "supervisor"}[i%3]
		var cmd commands.Command
		switch i % 6 {
		case 0:
			cmd = commands.SetRules{DataSource: ds, Rules: json.RawMessage(`[{"type":"loadForever"}]`)}
		case 1:
			cmd = commands.SubmitTask{ID: fmt.Sprintf("task_%d", i), Type: "noop", DataSource: ds, Payload: json.RawMessage(`{}`)}
		case 2:
			cmd = commands.MarkSegments{DataSource: ds, Interval: "2024-01-01/2024-01-02"}
		case 3:
			cmd = commands.SetSupervisor{ID: ds, DataSource: ds, Spec: json.RawMessage(`{"type":"kafka"}`)}
		case 4:
			cmd = commands.SetSupervisorState{ID: ds, SpecIndex: 1, State: "RUNNING", DetailedState: "RUNNING"}
		case 5:
			cmd = nil // a leader's no-op: not a command, not listed
		}
		items = append(items, logged{cmd: cmd, author: author, ms: ms})
	}
	return newMemLog(t, items)
}

// listAll pages through a query and returns every record, checking the
// pages are newest first with no record twice.
func listAll(t *testing.T, l *memLog, q Query) []Record {
	t.Helper()
	var all []Record
	seen := map[uint64]bool{}
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		p, err := List(Source{Log: l, IndexAt: l.indexAt}, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Records {
			if seen[r.Index] {
				t.Fatalf("record %d listed twice", r.Index)
			}
			if len(all) > 0 && r.Index >= all[len(all)-1].Index {
				t.Fatalf("record %d after %d: not newest first", r.Index, all[len(all)-1].Index)
			}
			seen[r.Index] = true
			all = append(all, r)
		}
		if p.Next == 0 {
			return all
		}
		if len(p.Records) != q.Limit {
			t.Fatalf("a page of %d records with more to come (limit %d)", len(p.Records), q.Limit)
		}
		q.Before = p.Next
	}
}

func TestListFiltersAndPages(t *testing.T) {
	l := sampleLog(t)
	parse := func(qs string) Query {
		t.Helper()
		v, _ := url.ParseQuery(qs)
		q, err := ParseQuery(v)
		if err != nil {
			t.Fatalf("%s: %v", qs, err)
		}
		return q
	}
	count := func(qs string, check func(Record) bool) int {
		t.Helper()
		recs := listAll(t, l, parse(qs))
		for _, r := range recs {
			if !check(r) {
				t.Fatalf("%s: record %+v does not match", qs, r)
			}
		}
		return len(recs)
	}
	every := func(Record) bool { return true }
	if n := count("", every); n != 50 {
		t.Fatalf("%d commands listed, want 50 (no-ops are not commands)", n)
	}
	// Pages of every size give the same records.
	full := listAll(t, l, parse(""))
	for _, limit := range []int{1, 3, 7, 49, 50, 51} {
		got := listAll(t, l, Query{Limit: limit})
		if len(got) != len(full) || got[0].Index != full[0].Index || got[len(got)-1].Index != full[len(full)-1].Index {
			t.Fatalf("limit %d: %d records", limit, len(got))
		}
	}
	if full[0].Index != 60 || full[0].Type != "supervisor.state" || full[0].Author != "bob" || full[0].Comment != "because" ||
		full[0].IP != "10.0.0.9" || full[0].Time != "2026-11-01T00:58:00.000Z" || full[0].Summary != "supervisor wiki is RUNNING" {
		t.Fatalf("newest %+v", full[0])
	}
	// Each filter lists exactly the records of the full listing it selects.
	for _, c := range []struct {
		qs    string
		want  int
		check func(Record) bool
	}{
		{"author=bob", 20, func(r Record) bool { return r.Author == "bob" }},
		{"type=rules.set", 10, func(r Record) bool { return r.Type == "rules.set" }},
		{"type=rules.set,segments.mark", 20, func(r Record) bool { return r.Type == "rules.set" || r.Type == "segments.mark" }},
		{"type=supervisor.*", 20, func(r Record) bool { return strings.HasPrefix(r.Type, "supervisor.") }},
		{"dataSource=wiki", 20, func(r Record) bool { return len(r.DataSources) == 1 && r.DataSources[0] == "wiki" }}, // supervisor.state names no datasource
		{"supervisor=logs", 10, func(r Record) bool { return r.Supervisor == "logs" }},
		{"task=task_7", 1, func(r Record) bool { return r.Task == "task_7" }},
		{"fromIndex=10&toIndex=20", 9, func(r Record) bool { return r.Index >= 10 && r.Index <= 20 }},
		{"since=2026-11-01T00:30:00Z", 25, func(r Record) bool { return r.Time >= "2026-11-01T00:30:00.000Z" }},
		{"until=2026-11-01T00:09:00Z", 9, func(r Record) bool { return r.Time <= "2026-11-01T00:09:00.000Z" }},
		{"since=2026-11-01T00:10:00Z&until=2026-11-01T00:19:00Z&author=alice&type=rules.set", 2,
			func(r Record) bool {
				return r.Author == "alice" && r.Type == "rules.set" && r.Time >= "2026-11-01T00:10" && r.Time <= "2026-11-01T00:19:00.000Z"
			}},
		{"author=nobody", 0, func(r Record) bool { return r.Author == "nobody" }},
	} {
		want := 0
		for _, r := range full {
			if c.check(r) {
				want++
			}
		}
		if want != c.want {
			t.Fatalf("%s: the sample log has %d such records, the test expects %d", c.qs, want, c.want)
		}
		if n := count(c.qs+"&limit=4", c.check); n != c.want {
			t.Errorf("%s: %d records, want %d", c.qs, n, c.want)
		}
	}
	// A page up to an index goes on from there.
	p, err := List(Source{Log: l}, parse("before=30&limit=2"))
	if err != nil || len(p.Records) != 2 || p.Records[0].Index != 29 || p.Records[1].Index != 28 || p.Next != 28 {
		t.Fatalf("page before 30: %+v %v", p, err)
	}
	// upTo hides entries not yet committed.
	if p, _ := List(Source{Log: l, UpTo: 40}, Query{Limit: 1}); p.Records[0].Index != 40 {
		t.Fatalf("newest up to 40: %d", p.Records[0].Index)
	}
}

// A listing with a start time stops reading the log where the entries are
// older than that, instead of reading the whole log for each page.
func TestListSinceStopsEarly(t *testing.T) {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var items []logged
	for i := range 20000 {
		items = append(items, logged{cmd: commands.SetWorkerEnabled{Host: "mm1:8091", Enabled: i%2 == 0}, author: "ops", ms: base + int64(i)*1000})
	}
	l := newMemLog(t, items)
	since := time.UnixMilli(base + 19900*1000).UTC().Format(time.RFC3339)
	v := url.Values{"since": {since}, "limit": {"1000"}}
	q, err := ParseQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	p, err := List(Source{Log: l}, q)
	if err != nil || len(p.Records) != 100 || p.Next != 0 {
		t.Fatalf("%d records, next %d, %v", len(p.Records), p.Next, err)
	}
	if l.scans > 1000 {
		t.Fatalf("read %d entries for the last 100", l.scans)
	}
}

func TestParseQueryRejectsBadValues(t *testing.T) {
	for _, qs := range []string{
		"since=yesterday", "until=2026-13-01", "since=2026-11-02&until=2026-11-01",
		"fromIndex=0", "fromIndex=-1", "toIndex=x", "fromIndex=10&toIndex=5", "before=1.5",
		"type=nope", "type=nope.*", "type=,", "limit=0", "limit=1001", "limit=ten",
		"author=", "dataSource=", "colour=red", "author=a&author=b",
	} {
		v, err := url.ParseQuery(qs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseQuery(v); !errors.Is(err, ErrBadQuery) {
			t.Errorf("%s: %v, want a bad query", qs, err)
		}
	}
	// Values is ParseQuery's inverse.
	v, _ := url.ParseQuery("since=2026-11-01T00:10:00Z&until=2026-11-01T00:19:00Z&author=alice&type=rules.set,task.*&fromIndex=3&toIndex=9&before=8&limit=5&dataSource=wiki&supervisor=s&task=t")
	q, err := ParseQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	q2, err := ParseQuery(q.Values())
	if err != nil || fmt.Sprint(q2) != fmt.Sprint(q) {
		t.Fatalf("round trip: %+v vs %+v (%v)", q2, q, err)
	}
}

type fakeNames map[string]string

func (n fakeNames) TaskDataSource(id string) string       { return n["task:"+id] }
func (n fakeNames) SupervisorDataSource(id string) string { return n["supervisor:"+id] }

// Commands that name only a task or a supervisor are listed (and filtered)
// under the datasource Names gives; commands naming one keep theirs.
func TestListNamesTheDataSourceOfTasksAndSupervisors(t *testing.T) {
	l := newMemLog(t, []logged{
		{cmd: commands.SubmitTask{ID: "t1", Type: "noop", DataSource: "wiki", Payload: json.RawMessage(`{}`)}, ms: 1000},
		{cmd: commands.AssignTask{ID: "t1", Worker: "mm1:8091"}, ms: 2000},
		{cmd: commands.TaskStatusUpdate{ID: "t1", Worker: "mm1:8091", Status: commands.TaskSuccess}, ms: 3000},
		{cmd: commands.SetSupervisorState{ID: "s1", SpecIndex: 1, State: "RUNNING", DetailedState: "RUNNING"}, ms: 4000},
		{cmd: commands.TerminateSupervisor{ID: "s1"}, ms: 5000},
		{cmd: commands.AssignTask{ID: "other", Worker: "mm1:8091"}, ms: 6000},
	})
	names := fakeNames{"task:t1": "wiki", "supervisor:s1": "wiki", "task:other": "logs"}
	p, err := List(Source{Log: l, Names: names}, Query{Filter: Filter{DataSource: "wiki"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Records {
		got = append(got, r.Type)
	}
	if want := "supervisor.terminate supervisor.state task.status task.assign task.submit"; strings.Join(got, " ") != want {
		t.Fatalf("wiki's commands: %v, want %s", got, want)
	}
	// Without names, only the commands that name wiki.
	if p, _ := List(Source{Log: l}, Query{Filter: Filter{DataSource: "wiki"}, Limit: 10}); len(p.Records) != 1 {
		t.Fatalf("without names: %+v", p.Records)
	}
}

// A listing with an end time starts reading the log where that time is,
// not at the newest entry.
func TestListUntilStartsAtItsIndex(t *testing.T) {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var items []logged
	for i := range 20000 {
		items = append(items, logged{cmd: commands.SetWorkerEnabled{Host: "mm1:8091", Enabled: i%2 == 0}, author: "ops", ms: base + int64(i)*1000})
	}
	l := newMemLog(t, items)
	until := time.UnixMilli(base + 99*1000).UTC().Format(time.RFC3339)
	q, err := ParseQuery(url.Values{"until": {until}, "limit": {"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := List(Source{Log: l, IndexAt: l.indexAt}, q)
	if err != nil || len(p.Records) != 100 || p.Records[0].Index != 101 || p.Next != 0 {
		t.Fatalf("%d records from %d, next %d, %v", len(p.Records), p.Records[0].Index, p.Next, err)
	}
	if l.scans > 1000 {
		t.Fatalf("read %d entries for the first 100", l.scans)
	}
	// Before the first command: nothing.
	q.UntilMs = base - 120000
	if p, err := List(Source{Log: l, IndexAt: l.indexAt}, q); err != nil || len(p.Records) != 0 {
		t.Fatalf("before the first command: %+v %v", p.Records, err)
	}
}
