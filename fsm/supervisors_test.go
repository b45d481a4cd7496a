package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
)

func supSpec(id string, suspended bool) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "kafka", "id": id, "suspended": suspended,
		"spec": map[string]any{"dataSchema": map[string]any{"dataSource": id}, "ioConfig": map[string]any{"topic": "t"}}})
	return b
}

func setSup(id string, suspended bool) commands.SetSupervisor {
	return commands.SetSupervisor{ID: id, DataSource: id, Spec: supSpec(id, suspended), Suspended: suspended}
}

func kafkaOffsets(stream string, offs string) json.RawMessage {
	return json.RawMessage(`{"type":"kafka","partitions":{"type":"end","stream":"` + stream + `","partitionOffsetMap":` + offs + `}}`)
}

func TestSupervisorLifecycle(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	res := mustOK(t, "create", a.apply(setSup("wiki", false)))
	if rec := res.Value.(*SupervisorRecord); rec.ID != "wiki" || rec.Version != "1970-01-01T00:00:01.000Z" {
		t.Fatalf("create result %+v", rec)
	}
	mustOK(t, "create logs", a.apply(setSup("logs", false)))
	mustOK(t, "suspend wiki", a.apply(setSup("wiki", true)))
	a.f.Read(func(s *State) {
		recs := s.Supervisors()
		if len(recs) != 2 || recs[0].ID != "logs" || recs[1].ID != "wiki" || !recs[1].Suspended {
			t.Fatalf("active %+v", recs)
		}
		rec, ok := s.Supervisor("wiki")
		if !ok || !rec.Suspended || rec.Version != "1970-01-01T00:00:03.000Z" || !bytes.Contains(rec.Spec, []byte(`"suspended":true`)) {
			t.Fatalf("wiki %+v %s", rec, rec.Spec)
		}
		h := s.SupervisorHistory("wiki")
		if len(h) != 2 || h[0].Version != "1970-01-01T00:00:03.000Z" || h[1].Version != "1970-01-01T00:00:01.000Z" {
			t.Fatalf("history not newest first: %+v", h)
		}
		if _, ok := s.Supervisor("nope"); ok || s.SupervisorHistory("nope") != nil {
			t.Fatal("unknown supervisor found")
		}
		au := s.Audit(AuditQuery{Type: AuditSupervisor, Limit: 10})
		if len(au) != 3 || au[0].Key != "wiki" || au[0].Payload != "Update supervisor[wiki] for datasource[[wiki]]" || au[0].Audit.Author != "tester" {
			t.Fatalf("audit %+v", au)
		}
	})
	mustOK(t, "terminate wiki", a.apply(commands.TerminateSupervisor{ID: "wiki"}))
	wantKind(t, "terminate twice", a.apply(commands.TerminateSupervisor{ID: "wiki"}), KindNotFound, "[wiki] does not exist")
	wantKind(t, "terminate unknown", a.apply(commands.TerminateSupervisor{ID: "x"}), KindNotFound, "[x] does not exist")
	a.f.Read(func(s *State) {
		if _, ok := s.Supervisor("wiki"); ok {
			t.Fatal("terminated supervisor still active")
		}
		if ids := s.SupervisorIDsWithHistory(); strings.Join(ids, ",") != "logs,wiki" {
			t.Fatalf("ids with history %v", ids)
		}
		h := s.SupervisorHistory("wiki")
		want := `{"type":"NoopSupervisorSpec","id":null,"dataSources":["wiki"],"suspended":false,"source":"noop"}`
		if len(h) != 3 || string(h[0].Spec) != want || h[0].Version != "1970-01-01T00:00:04.000Z" {
			t.Fatalf("tombstone %+v", h)
		}
	})
	// A terminated id can be created again; its history goes on.
	mustOK(t, "recreate", a.apply(setSup("wiki", false)))
	a.f.Read(func(s *State) {
		if h := s.SupervisorHistory("wiki"); len(h) != 4 || bytes.Contains(h[0].Spec, []byte("Noop")) {
			t.Fatalf("history after recreate %+v", h)
		}
	})
}

func TestSupervisorCommandsRejectInvalidInput(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "create", a.apply(setSup("wiki", false)))
	before := snapshotBytes(t, a.f)
	cases := []struct {
		what     string
		cmd      commands.Command
		contains string
	}{
		{"empty id", commands.SetSupervisor{DataSource: "d", Spec: supSpec("d", false)}, "must not be empty"},
		{"slash", commands.SetSupervisor{ID: "a/b", DataSource: "d", Spec: supSpec("d", false)}, "'/'"},
		{"dot", commands.SetSupervisor{ID: ".a", DataSource: "d", Spec: supSpec("d", false)}, "'.'"},
		{"tab", commands.SetSupervisor{ID: "a\tb", DataSource: "d", Spec: supSpec("d", false)}, "whitespace"},
		{"no datasource", commands.SetSupervisor{ID: "a", Spec: supSpec("a", false)}, "no dataSource"},
		{"no spec", commands.SetSupervisor{ID: "a", DataSource: "a"}, "JSON object"},
		{"array spec", commands.SetSupervisor{ID: "a", DataSource: "a", Spec: json.RawMessage(`[1]`)}, "JSON object"},
		{"bad suspended", commands.SetSupervisor{ID: "a", DataSource: "a", Spec: json.RawMessage(`{"suspended":"yes"}`)}, "suspended"},
		{"suspended mismatch", commands.SetSupervisor{ID: "a", DataSource: "a", Spec: supSpec("a", true)}, "suspended=true"},
		{"reset no datasource", commands.ResetSupervisorOffsets{Offsets: kafkaOffsets("t", `{"0":1}`)}, "dataSource is empty"},
		{"reset kinesis", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(`{"type":"kinesis","partitions":{"type":"end","stream":"s","partitionOffsetMap":{"0":1}}}`)}, `is not "kafka"`},
		{"reset no partitions", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(`{"type":"kafka"}`)}, "without partitions"},
		{"reset bad partitions type", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(`{"type":"kafka","partitions":{"type":"middle","stream":"t","partitionOffsetMap":{"0":1}}}`)}, "middle"},
		{"reset no stream", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(`{"type":"kafka","partitions":{"type":"end","partitionOffsetMap":{"0":1}}}`)}, "without a stream"},
		{"reset negative offset", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"0":-1}`)}, "bad offset"},
		{"reset fractional offset", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"0":1.5}`)}, "bad offset"},
		{"reset bad partition", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"x":1}`)}, "bad partition"},
		{"reset huge partition", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"4294967296":1}`)}, "bad partition"},
		{"reset empty", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{}`)}, "no partition offsets"},
		{"reset not json", commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(`"x"`)}, "invalid Kafka metadata"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) { wantKind(t, c.what, a.apply(c.cmd), KindInvalid, c.contains) })
	}
	// Rejected commands change nothing but the applied index.
	after := snapshotBytes(t, a.f)
	if !bytes.Equal(stripHeader(t, before), stripHeader(t, after)) {
		t.Fatal("rejected commands changed the state")
	}
}

func TestResetSupervisorOffsets(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	meta := func() string {
		var v string
		a.f.Read(func(s *State) { v, _ = s.DataSourceMetadata("wiki") })
		return v
	}
	// Nothing stored: the given offsets are written, canonically.
	mustOK(t, "first", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"1":250, "0":100}`)}))
	if got := meta(); got != `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100,"1":250}}}` {
		t.Fatalf("stored %s", got)
	}
	// Same stream: only the listed partitions change (aliases accepted, start type too).
	res := mustOK(t, "merge", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki",
		Offsets: json.RawMessage(`{"type":"kafka","partitions":{"type":"start","topic":"t","partitionSequenceNumberMap":{"1":7,"2":9007199254740993}}}`)}))
	want := `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100,"1":7,"2":9007199254740993}}}`
	if got := meta(); got != want || res.Value.(ResetOffsetsResult).Metadata != want {
		t.Fatalf("merged %s (result %+v)", got, res.Value)
	}
	// Another stream: its offsets replace the old stream's (partitions in numeric order).
	mustOK(t, "other stream", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("u", `{"10":2,"3":1}`)}))
	if got := meta(); got != `{"type":"kafka","partitions":{"type":"end","stream":"u","partitionOffsetMap":{"3":1,"10":2}}}` {
		t.Fatalf("replaced %s", got)
	}
	// nil and JSON null both delete.
	mustOK(t, "reset", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki"}))
	if got := meta(); got != "" {
		t.Fatalf("after reset %q", got)
	}
	mustOK(t, "first again", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"0":1}`)}))
	mustOK(t, "reset null", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(" null ")}))
	if got := meta(); got != "" {
		t.Fatalf("after reset with null %q", got)
	}
	// Stored metadata of another kind cannot be merged into.
	a.f.state.segments.metadata["wiki"] = `{"type":"kinesis","partitions":{}}`
	wantKind(t, "merge into kinesis", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"0":1}`)}), KindInvalid, "not Kafka metadata")
	mustOK(t, "reset kinesis", a.apply(commands.ResetSupervisorOffsets{DataSource: "wiki"}))
}

func supervisorLog(t *testing.T) []*raft.Log {
	cmds := []commands.Command{
		setSup("wiki", false),
		setSup("logs", false),
		setSup("metrics", true),
		commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"0":5,"1":6}`)},
		setSup("wiki", true),
		commands.TerminateSupervisor{ID: "logs"},
		commands.TerminateSupervisor{ID: "logs"}, // rejected
		setSup("a/b", false),                     // rejected
		commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"1":60,"2":7}`)},
		commands.ResetSupervisorOffsets{DataSource: "logs", Offsets: kafkaOffsets("l", `{"0":1}`)},
		commands.ResetSupervisorOffsets{DataSource: "logs"},
		setSup("zeta", false),
	}
	var out []*raft.Log
	for i, c := range cmds {
		out = append(out, entry(t, uint64(i+1), int64(i+1)*1000, c, "ops"))
	}
	return out
}

func TestSupervisorSnapshotDeterminism(t *testing.T) {
	log := supervisorLog(t)
	f1, f2 := New(nil), New(nil)
	for _, l := range log {
		f1.Apply(l)
	}
	f2.ApplyBatch(log[:5])
	f2.ApplyBatch(log[5:])
	s1, s2 := snapshotBytes(t, f1), snapshotBytes(t, f2)
	if !bytes.Equal(s1, s2) {
		t.Fatal("same log, different snapshots")
	}
	for i := 0; i < 10; i++ { // map order must not leak into the bytes
		f := New(nil)
		for _, l := range log {
			f.Apply(l)
		}
		if !bytes.Equal(snapshotBytes(t, f), s1) {
			t.Fatal("snapshot bytes vary between runs")
		}
	}
	if !bytes.Contains(s1, []byte(`{"table":"supervisors","records":4}`)) {
		t.Fatal("supervisors table missing from the snapshot")
	}
	r := restore(t, s1)
	if !bytes.Equal(snapshotBytes(t, r), s1) {
		t.Fatal("snapshot → restore → snapshot differs")
	}
	r.Read(func(s *State) {
		if ids := s.SupervisorIDsWithHistory(); strings.Join(ids, ",") != "logs,metrics,wiki,zeta" {
			t.Fatalf("restored ids %v", ids)
		}
		recs := s.Supervisors()
		if len(recs) != 3 || recs[0].ID != "metrics" || !recs[0].Suspended || recs[1].ID != "wiki" || !recs[1].Suspended {
			t.Fatalf("restored active %+v", recs)
		}
		if h := s.SupervisorHistory("logs"); len(h) != 2 || !bytes.Contains(h[0].Spec, []byte("NoopSupervisorSpec")) {
			t.Fatalf("restored history %+v", h)
		}
		if m, _ := s.DataSourceMetadata("wiki"); !strings.Contains(m, `{"0":5,"1":60,"2":7}`) {
			t.Fatalf("restored metadata %s", m)
		}
	})
	// The restored state behaves like the original.
	next := []commands.Command{
		commands.TerminateSupervisor{ID: "wiki"},
		commands.TerminateSupervisor{ID: "logs"},
		setSup("logs", false),
		commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"3":1}`)},
	}
	for i, c := range next {
		l := entry(t, uint64(100+i), int64(100+i)*1000, c, "ops")
		r1, r2 := f1.Apply(l).(Result), r.Apply(l).(Result)
		if errString(r1.Err) != errString(r2.Err) {
			t.Fatalf("command %d: original %v, restored %v", i, r1.Err, r2.Err)
		}
	}
	if !bytes.Equal(snapshotBytes(t, f1), snapshotBytes(t, r)) {
		t.Fatal("original and restored states diverged")
	}
}

func TestSupervisorSnapshotRejectsBadRecords(t *testing.T) {
	for _, rec := range []string{
		`{"id":"","history":[{"spec":{},"version":"x"}]}`,
		`{"id":"a","history":[]}`,
		`{"id":"a","active":{"id":"b"},"history":[{"spec":{},"version":"x"}]}`,
	} {
		f := New(nil)
		f.Apply(entry(t, 1, 1000, setSup("a", false), "ops"))
		b := snapshotBytes(t, f)
		var good bytes.Buffer
		f.Read(func(s *State) {
			good.WriteString(`{"id":"a","active":`)
			j, _ := json.Marshal(s.supervisors.active["a"])
			good.Write(j)
			good.WriteString(`,"history":`)
			j, _ = json.Marshal(s.supervisors.history["a"])
			good.Write(j)
			good.WriteString(`}`)
		})
		i := bytes.Index(b, good.Bytes())
		if i < 0 {
			t.Fatalf("record %s not found in snapshot", good.String())
		}
		// Swap the record's frame for the bad one.
		prefix := len(binary.AppendUvarint(nil, uint64(good.Len())))
		out := append([]byte{}, b[:i-prefix]...)
		out = binary.AppendUvarint(out, uint64(len(rec)))
		out = append(out, rec...)
		out = append(out, b[i+good.Len():]...)
		g := New(nil)
		if err := g.Restore(nopCloser{bytes.NewReader(out)}); err == nil || !strings.Contains(err.Error(), "supervisor") {
			t.Fatalf("restore of %s: %v", rec, err)
		}
	}
}

// FuzzResetSupervisorOffsets feeds untrusted offsets (the resetOffsets body
// ends up here) to the apply function: it must never panic, and what it stores
// must be canonical (storing it again changes nothing).
func FuzzResetSupervisorOffsets(f *testing.F) {
	for _, seed := range []string{
		`{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":100,"1":250}}}`,
		`{"type":"kafka","partitions":{"type":"start","topic":"t","partitionSequenceNumberMap":{"10":1,"2":2}}}`,
		`{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":-1}}}`,
		`{"type":"kinesis","partitions":{}}`, `null`, ``, `[`, `{"type":"kafka","partitions":null}`,
	} {
		f.Add(seed, `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":5,"3":9}}}`)
	}
	f.Fuzz(func(t *testing.T, offsets, stored string) {
		s := newState()
		if stored != "" {
			s.segments.metadata["ds"] = stored
		}
		m := Meta{Index: 1, TimeMs: 1}
		res, err := applyResetSupervisorOffsets(s, m, commands.ResetSupervisorOffsets{DataSource: "ds", Offsets: json.RawMessage(offsets)})
		if err != nil {
			if KindOf(err) != KindInvalid {
				t.Fatalf("error of kind %d: %v", KindOf(err), err)
			}
			return
		}
		got := res.(ResetOffsetsResult).Metadata
		if have, _ := s.DataSourceMetadata("ds"); have != got {
			t.Fatalf("result %q but stored %q", got, have)
		}
		if got == "" {
			return
		}
		again, err := applyResetSupervisorOffsets(s, m, commands.ResetSupervisorOffsets{DataSource: "ds", Offsets: json.RawMessage(got)})
		if err != nil || again.(ResetOffsetsResult).Metadata != got {
			t.Fatalf("stored %q is not canonical: %v %+v", got, err, again)
		}
	})
}
