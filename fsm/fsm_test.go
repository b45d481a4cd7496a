package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
)

// entry encodes cmd as a log entry at index i with leader time ms.
func entry(t *testing.T, i uint64, ms int64, cmd commands.Command, author string) *raft.Log {
	t.Helper()
	b, err := commands.Encode(cmd, ms, commands.Audit{Author: author, Comment: "c" + author, IP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: b}
}

func i32(v int32) *int32 { return &v }

func snapshotBytes(t *testing.T, f *FSM) []byte {
	t.Helper()
	s, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.(*frozen).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func restore(t *testing.T, b []byte) *FSM {
	t.Helper()
	f := New(nil)
	if err := f.Restore(io.NopCloser(bytes.NewReader(b))); err != nil {
		t.Fatal(err)
	}
	return f
}

// recordedLog is a short log of config commands, including a rejected entry and
// a no-op; fullLog (coverage_test.go) holds every command type.
func recordedLog(t *testing.T) []*raft.Log {
	wl := commands.StringList{"wiki", "other"}
	return []*raft.Log{
		entry(t, 1, 1000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(7)}}, "alice"),
		entry(t, 2, 2000, commands.SetWorkerConfig{Config: commands.WorkerBehaviorConfig{Type: "default", SelectStrategy: &commands.SelectStrategy{Type: "fillCapacity"}, AutoScaler: json.RawMessage("null")}}, "bob"),
		entry(t, 3, 3000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{DecommissioningMaxPercentOfMaxSegmentsToMove: i32(500)}}, "mallory"),
		{Index: 4, Term: 2, Type: raft.LogNoop},
		entry(t, 5, 4000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{KillDataSourceWhitelist: &wl, DebugDimensions: json.RawMessage(`{"b":"2","a":"1"}`)}}, "carol"),
		entry(t, 6, 3500, commands.SetWorkerConfig{Config: commands.WorkerBehaviorConfig{Type: "default", SelectStrategy: &commands.SelectStrategy{Type: "equalDistributionWithCategorySpec", WorkerCategorySpec: &commands.WorkerCategorySpec{CategoryMap: map[string]commands.CategoryConfig{"z": {}, "a": {CategoryAffinity: map[string]string{"y": "1", "x": "2"}}}}}}}, "dave"),
	}
}

func TestApplyCoordinatorConfig(t *testing.T) {
	f := New(nil)
	res := f.Apply(entry(t, 1, 1000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(7)}}, "alice")).(Result)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Value.(commands.CoordinatorDynamicConfig).MaxSegmentsToMove != 7 {
		t.Fatalf("result %+v", res.Value)
	}
	// A partial update keeps earlier fields.
	f.Apply(entry(t, 2, 2000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MergeSegmentsLimit: i32(3)}}, "bob"))
	// An out-of-bounds one is rejected and changes nothing, not even the audit trail.
	res = f.Apply(entry(t, 3, 3000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxNonPrimaryReplicantsToLoad: i32(-1)}}, "eve")).(Result)
	if KindOf(res.Err) != KindInvalid {
		t.Fatalf("bound violation: %v", res.Err)
	}
	f.Read(func(s *State) {
		c := s.CoordinatorConfig()
		if c.MaxSegmentsToMove != 7 || c.MergeSegmentsLimit != 3 || c.MaxNonPrimaryReplicantsToLoad != 2147483647 {
			t.Fatalf("config %+v", c)
		}
		all := s.Audit(AuditQuery{Type: AuditCoordinatorConfig, FromMs: 0, ToMs: 1 << 62})
		if len(all) != 2 || all[0].Audit.Author != "alice" || all[1].TimeMs != 2000 || all[1].Audit.IP != "10.0.0.1" {
			t.Fatalf("audit %+v", all)
		}
		if !strings.Contains(all[1].Payload, `"mergeSegmentsLimit":3`) || !strings.Contains(all[1].Payload, `"maxSegmentsToMove":7`) {
			t.Fatalf("audit payload %s", all[1].Payload)
		}
		if s.Index() != 3 {
			t.Fatalf("index %d", s.Index())
		}
	})
}

func TestApplyWorkerConfig(t *testing.T) {
	f := New(nil)
	f.Read(func(s *State) {
		if _, set := s.WorkerConfig(); set {
			t.Fatal("worker config set on a fresh FSM")
		}
	})
	res := f.Apply(entry(t, 1, 10, commands.SetWorkerConfig{Config: commands.WorkerBehaviorConfig{Type: "bogus"}}, "x")).(Result)
	if KindOf(res.Err) != KindInvalid {
		t.Fatalf("invalid worker config accepted: %v", res.Err)
	}
	res = f.Apply(entry(t, 2, 20, commands.SetWorkerConfig{Config: commands.WorkerBehaviorConfig{SelectStrategy: &commands.SelectStrategy{Type: "fillCapacity"}}}, "x")).(Result)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	f.Read(func(s *State) {
		c, set := s.WorkerConfig()
		if !set || c.Type != "default" || c.SelectStrategy.Type != "fillCapacity" {
			t.Fatalf("worker config %+v", c)
		}
		if got := s.Audit(AuditQuery{Type: AuditWorkerConfig, Limit: 5}); len(got) != 1 || got[0].Key != "worker.config" {
			t.Fatalf("audit %+v", got)
		}
	})
}

func TestAuditQueries(t *testing.T) {
	f := New(nil)
	for i := 1; i <= 5; i++ {
		f.Apply(entry(t, uint64(i), int64(i*1000), commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(int32(i))}}, "a"))
	}
	f.Read(func(s *State) {
		newest := s.Audit(AuditQuery{Type: AuditCoordinatorConfig, Limit: 2})
		if len(newest) != 2 || newest[0].TimeMs != 5000 || newest[1].TimeMs != 4000 {
			t.Fatalf("count query: %+v", newest)
		}
		win := s.Audit(AuditQuery{Type: AuditCoordinatorConfig, FromMs: 2000, ToMs: 4000})
		if len(win) != 3 || win[0].TimeMs != 2000 || win[2].TimeMs != 4000 {
			t.Fatalf("window query (inclusive, oldest first): %+v", win)
		}
		if got := s.Audit(AuditQuery{Type: AuditWorkerConfig, Limit: 3}); len(got) != 0 || got == nil {
			t.Fatalf("other type: %#v", got)
		}
	})
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	f := New(nil)
	empty := snapshotBytes(t, f)
	if got := snapshotBytes(t, restore(t, empty)); !bytes.Equal(got, empty) {
		t.Fatalf("empty snapshot round trip differs:\n%s\n%s", empty, got)
	}
	for _, l := range recordedLog(t) {
		f.Apply(l)
	}
	snap := snapshotBytes(t, f)
	r := restore(t, snap)
	if got := snapshotBytes(t, r); !bytes.Equal(got, snap) {
		t.Fatalf("snapshot round trip differs:\n%s\n%s", snap, got)
	}
	var a, b commands.CoordinatorDynamicConfig
	f.Read(func(s *State) { a = s.CoordinatorConfig() })
	r.Read(func(s *State) { b = s.CoordinatorConfig() })
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) || r.LastIndex() != 6 || r.LastTime() != 4000 {
		t.Fatalf("restored state differs: %s vs %s (index %d)", ja, jb, r.LastIndex())
	}
	// The restored FSM keeps working, and its audit index was rebuilt.
	r.Apply(entry(t, 7, 5000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(1)}}, "z"))
	r.Read(func(s *State) {
		if got := s.Audit(AuditQuery{Type: AuditCoordinatorConfig, Limit: 10}); len(got) != 3 || got[0].Audit.Author != "z" {
			t.Fatalf("audit after restore: %+v", got)
		}
	})
}

// Same log ⇒ byte-identical snapshots, applied one by one or in batches, for
// a log holding every command type; and a restored snapshot snapshots to the
// same bytes.
func TestDeterminism(t *testing.T) {
	log := fullLog(t)
	a, b := New(nil), New(nil)
	for _, l := range log {
		a.Apply(l)
	}
	b.ApplyBatch(log[:len(log)/3])
	b.ApplyBatch(log[len(log)/3:])
	sa, sb := snapshotBytes(t, a), snapshotBytes(t, b)
	if !bytes.Equal(sa, sb) {
		t.Fatalf("snapshots differ:\n%s\n%s", sa, sb)
	}
	for i := 0; i < 20; i++ { // map iteration order must not leak into the bytes
		c := New(nil)
		for _, l := range log {
			c.Apply(l)
		}
		if !bytes.Equal(snapshotBytes(t, c), sa) {
			t.Fatal("snapshot bytes vary between runs")
		}
	}
	r := restore(t, sa)
	if got := snapshotBytes(t, r); !bytes.Equal(got, sa) {
		t.Fatalf("snapshot → restore → snapshot differs:\n%q\n%q", sa, got)
	}
	if r.LastIndex() != a.LastIndex() || r.LastTime() != a.LastTime() {
		t.Fatalf("restored index %d time %d, want %d %d", r.LastIndex(), r.LastTime(), a.LastIndex(), a.LastTime())
	}
}

func TestRestoreRejectsGarbage(t *testing.T) {
	frames := func(parts ...string) string {
		var b []byte
		for _, p := range parts {
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
		}
		return string(b)
	}
	hdr := `{"format":"strata-fsm","version":1}`
	for _, in := range []string{"", "{}", frames(`{"format":"strata-fsm","version":9}`),
		frames(hdr, `{"table":"nope","records":0}`),
		frames(hdr, `{"table":"audit","records":2}`, `{}`),
		frames(hdr, `{"table":"audit","records":-1}`),
		frames(hdr)[:5],
		string(binary.AppendUvarint(nil, 1<<40)),
	} {
		f := New(nil)
		if err := f.Restore(io.NopCloser(strings.NewReader(in))); err == nil {
			t.Errorf("Restore(%q) succeeded", in)
		}
	}
	// Every truncation of a real snapshot, with records in every table, is an
	// error, never a panic.
	f := New(nil)
	f.ApplyBatch(fullLog(t))
	snap := snapshotBytes(t, f)
	for cut := 0; cut < len(snap); cut++ {
		if err := New(nil).Restore(io.NopCloser(bytes.NewReader(snap[:cut]))); err == nil {
			t.Fatalf("snapshot cut at %d of %d bytes restored without error", cut, len(snap))
		}
	}
}

func TestUnknownCommandIsFatalUnlessIgnorable(t *testing.T) {
	f := New(nil)
	ign, _ := json.Marshal(commands.Envelope{Version: 1, Type: "future.thing", Ignorable: true, TimeMs: 9, Payload: json.RawMessage(`{}`)})
	if res := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: ign}).(Result); res.Err != nil {
		t.Fatalf("ignorable: %v", res.Err)
	}
	if f.LastIndex() != 1 {
		t.Fatal("ignored entry did not advance the index")
	}
	bad, _ := json.Marshal(commands.Envelope{Version: 1, Type: "future.thing", Payload: json.RawMessage(`{}`)})
	defer func() {
		if recover() == nil {
			t.Fatal("unknown non-ignorable command applied silently")
		}
	}()
	f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: bad})
}

func BenchmarkApplyCoordinatorConfig(b *testing.B) {
	f := New(nil)
	data, _ := commands.Encode(commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(3)}}, 1, commands.Audit{Author: "bench"})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: data})
	}
}
