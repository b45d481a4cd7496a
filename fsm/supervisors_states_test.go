package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
)

func supState(id string, spec uint64, state, detailed string) commands.SetSupervisorState {
	return commands.SetSupervisorState{ID: id, SpecIndex: spec, State: state, DetailedState: detailed}
}

// timeline renders id's timeline oldest first as "spec:STATE/DETAILED@index".
func timeline(f *FSM, id string) string {
	var parts []string
	f.Read(func(s *State) {
		h := s.SupervisorStates(id)
		for i := len(h) - 1; i >= 0; i-- {
			c := h[i]
			parts = append(parts, fmt.Sprintf("%d:%s/%s@%d", c.SpecIndex, c.State, c.DetailedState, c.Index))
		}
	})
	return strings.Join(parts, " ")
}

func TestSupervisorStateTimeline(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "create", a.apply(setSup("wiki", false))) // index 1
	for _, c := range []struct {
		cmd     commands.SetSupervisorState
		changed bool
	}{
		{supState("wiki", 1, "PENDING", "PENDING"), true},                               // 2
		{supState("wiki", 1, "RUNNING", "CONNECTING_TO_STREAM"), true},                  // 3
		{supState("wiki", 1, "RUNNING", "CONNECTING_TO_STREAM"), false},                 // 4: the same again
		{supState("wiki", 1, "RUNNING", "RUNNING"), true},                               // 5
		{supState("wiki", 1, "UNHEALTHY_SUPERVISOR", "LOST_CONTACT_WITH_STREAM"), true}, // 6
	} {
		res := mustOK(t, c.cmd.DetailedState, a.apply(c.cmd))
		if res.Value != c.changed {
			t.Fatalf("%+v: changed=%v, want %v", c.cmd, res.Value, c.changed)
		}
	}
	mustOK(t, "suspend", a.apply(setSup("wiki", true)))                            // 7
	mustOK(t, "stopping", a.apply(supState("wiki", 1, "STOPPING", "STOPPING")))    // 8: the old version's runtime stops after the new version is stored
	mustOK(t, "suspended", a.apply(supState("wiki", 7, "SUSPENDED", "SUSPENDED"))) // 9
	want := "1:PENDING/PENDING@2 1:RUNNING/CONNECTING_TO_STREAM@3 1:RUNNING/RUNNING@5 1:UNHEALTHY_SUPERVISOR/LOST_CONTACT_WITH_STREAM@6 1:STOPPING/STOPPING@8 7:SUSPENDED/SUSPENDED@9"
	if got := timeline(a.f, "wiki"); got != want {
		t.Fatalf("timeline\n got %s\nwant %s", got, want)
	}
	a.f.Read(func(s *State) {
		if h := s.SupervisorStates("wiki"); h[0].TimeMs != 9000 || h[0].Index != 9 {
			t.Fatalf("newest %+v: want the leader time and index of its entry", h[0])
		}
		if s.SupervisorStates("nope") != nil {
			t.Fatal("a timeline for an unknown id")
		}
	})
	// A terminated supervisor keeps its timeline, and its runtime may still
	// report its last state.
	mustOK(t, "terminate", a.apply(commands.TerminateSupervisor{ID: "wiki"}))
	mustOK(t, "stopping after terminate", a.apply(supState("wiki", 7, "STOPPING", "STOPPING")))
	if got := timeline(a.f, "wiki"); !strings.HasSuffix(got, "7:STOPPING/STOPPING@11") {
		t.Fatalf("after terminate: %s", got)
	}
}

func TestSupervisorStateRejectsInvalidInput(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "create", a.apply(setSup("wiki", false)))                    // 1
	mustOK(t, "update", a.apply(setSup("wiki", false)))                    // 2
	mustOK(t, "state", a.apply(supState("wiki", 2, "RUNNING", "RUNNING"))) // 3
	before := snapshotBytes(t, a.f)
	cases := []struct {
		what     string
		cmd      commands.SetSupervisorState
		kind     Kind
		contains string
	}{
		{"its own index", supState("wiki", 4, "PENDING", "PENDING"), KindInvalid, "spec index 4"}, // first: applied at index 4
		{"empty id", supState("", 2, "RUNNING", "RUNNING"), KindInvalid, "must not be empty"},
		{"slash", supState("a/b", 2, "RUNNING", "RUNNING"), KindInvalid, "'/'"},
		{"unknown", supState("nope", 2, "RUNNING", "RUNNING"), KindNotFound, "[nope] does not exist"},
		{"empty state", supState("wiki", 2, "", "RUNNING"), KindInvalid, "a state is"},
		{"empty detailed", supState("wiki", 2, "RUNNING", ""), KindInvalid, "a state is"},
		{"lower case", supState("wiki", 2, "running", "RUNNING"), KindInvalid, "a state is"},
		{"long", supState("wiki", 2, strings.Repeat("A", 65), "RUNNING"), KindInvalid, "a state is"},
		{"future spec index", supState("wiki", 100, "PENDING", "PENDING"), KindInvalid, "spec index 100"},
		{"older version after newer", supState("wiki", 1, "PENDING", "PENDING"), KindConflict, "version 1 after one of version 2"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) { wantKind(t, c.what, a.apply(c.cmd), c.kind, c.contains) })
	}
	if !bytes.Equal(stripHeader(t, before), stripHeader(t, snapshotBytes(t, a.f))) {
		t.Fatal("rejected commands changed the state")
	}
}

func TestSupervisorStatesAreBounded(t *testing.T) {
	f := New(nil)
	f.Apply(entry(t, 1, 1000, setSup("wiki", false), "ops"))
	states := []string{"RUNNING", "UNHEALTHY_TASKS"}
	n := MaxSupervisorStates + 5
	var held [][]SupervisorStateChange
	for i := range n {
		f.Apply(entry(t, uint64(i+2), int64(i+2)*1000, supState("wiki", 1, states[i%2], states[i%2]), "supervisor"))
		if i%400 == 0 {
			f.Read(func(s *State) { held = append(held, s.supervisorStates.byID["wiki"]) })
		}
	}
	f.Read(func(s *State) {
		h := s.SupervisorStates("wiki")
		if len(h) != MaxSupervisorStates || h[0].Index != uint64(n+1) || h[len(h)-1].Index != uint64(n+1-MaxSupervisorStates+1) {
			t.Fatalf("%d states kept, newest %d, oldest %d", len(h), h[0].Index, h[len(h)-1].Index)
		}
	})
	// What a reader (or a snapshot) held is never written over.
	for _, h := range held {
		for i := 1; i < len(h); i++ {
			if h[i].Index != h[i-1].Index+1 {
				t.Fatalf("a held timeline changed under its reader at %d", i)
			}
		}
	}
}

func supervisorStatesLog(t *testing.T) []*raft.Log {
	cmds := []commands.Command{
		setSup("wiki", false), // 1
		setSup("logs", false), // 2
		supState("wiki", 1, "PENDING", "PENDING"),
		supState("logs", 2, "PENDING", "PENDING"),
		supState("wiki", 1, "RUNNING", "RUNNING"),
		supState("wiki", 1, "RUNNING", "RUNNING"), // no change
		supState("nope", 1, "RUNNING", "RUNNING"), // rejected
		setSup("wiki", true),                      // 8
		supState("wiki", 8, "SUSPENDED", "SUSPENDED"),
		supState("logs", 2, "UNHEALTHY_SUPERVISOR", "UNABLE_TO_CONNECT_TO_STREAM"),
	}
	var out []*raft.Log
	for i, c := range cmds {
		out = append(out, entry(t, uint64(i+1), int64(i+1)*1000, c, "supervisor"))
	}
	return out
}

func TestSupervisorStatesSnapshotAndDeterminism(t *testing.T) {
	log := supervisorStatesLog(t)
	f1, f2 := New(nil), New(nil)
	for _, l := range log {
		f1.Apply(l)
	}
	f2.ApplyBatch(log[:4])
	f2.ApplyBatch(log[4:])
	s1 := snapshotBytes(t, f1)
	if !bytes.Equal(s1, snapshotBytes(t, f2)) {
		t.Fatal("same log, different snapshots")
	}
	for range 10 { // map order must not leak into the bytes
		f := New(nil)
		f.ApplyBatch(log)
		if !bytes.Equal(snapshotBytes(t, f), s1) {
			t.Fatal("snapshot bytes vary between runs")
		}
	}
	if !bytes.Contains(s1, []byte(`{"table":"supervisor_states","records":2}`)) {
		t.Fatal("supervisor_states table missing from the snapshot")
	}
	r := restore(t, s1)
	if !bytes.Equal(snapshotBytes(t, r), s1) {
		t.Fatal("snapshot → restore → snapshot differs")
	}
	for _, id := range []string{"wiki", "logs"} {
		if a, b := timeline(f1, id), timeline(r, id); a != b || a == "" {
			t.Fatalf("%s: original %q, restored %q", id, a, b)
		}
	}
	// The restored state answers like the original: dedup against the
	// restored last state, the version order check.
	next := []commands.Command{
		supState("wiki", 8, "SUSPENDED", "SUSPENDED"),
		supState("wiki", 1, "STOPPING", "STOPPING"),
		supState("logs", 2, "RUNNING", "RUNNING"),
	}
	for i, c := range next {
		l := entry(t, uint64(100+i), int64(100+i)*1000, c, "supervisor")
		r1, r2 := f1.Apply(l).(Result), r.Apply(l).(Result)
		if errString(r1.Err) != errString(r2.Err) || r1.Value != r2.Value {
			t.Fatalf("command %d: original %v %v, restored %v %v", i, r1.Value, r1.Err, r2.Value, r2.Err)
		}
	}
	if !bytes.Equal(snapshotBytes(t, f1), snapshotBytes(t, r)) {
		t.Fatal("original and restored states diverged")
	}
}

func TestSupervisorStatesSnapshotRejectsBadRecords(t *testing.T) {
	f := New(nil)
	f.Apply(entry(t, 1, 1000, setSup("a", false), "ops"))
	f.Apply(entry(t, 2, 2000, supState("a", 1, "RUNNING", "RUNNING"), "ops"))
	b := snapshotBytes(t, f)
	var good []byte
	f.Read(func(s *State) {
		good, _ = json.Marshal(supervisorStatesRecord{ID: "a", States: s.supervisorStates.byID["a"]})
	})
	i := bytes.Index(b, good)
	if i < 0 {
		t.Fatalf("record %s not found in snapshot", good)
	}
	two := `{"index":2,"time":2000,"specIndex":1,"state":"RUNNING","detailedState":"RUNNING"},{"index":3,"time":2000,"specIndex":1,"state":"PENDING","detailedState":"PENDING"}`
	for _, rec := range []string{
		`{"id":"","states":[{"index":2,"time":2000,"specIndex":1,"state":"RUNNING","detailedState":"RUNNING"}]}`,
		`{"id":"a","states":[]}`,
		`{"id":"a","states":[{"index":2,"time":2000,"specIndex":1,"state":"running","detailedState":"RUNNING"}]}`,
		`{"id":"a","states":[` + strings.Replace(two, `"index":3`, `"index":1`, 1) + `]}`,
		`{"id":"a","states":[` + strings.Replace(two, `"specIndex":1,"state":"PENDING"`, `"specIndex":0,"state":"PENDING"`, 1) + `]}`,
	} {
		prefix := len(binary.AppendUvarint(nil, uint64(len(good))))
		out := append([]byte{}, b[:i-prefix]...)
		out = binary.AppendUvarint(out, uint64(len(rec)))
		out = append(out, rec...)
		out = append(out, b[i+len(good):]...)
		g := New(nil)
		if err := g.Restore(nopCloser{bytes.NewReader(out)}); err == nil || !strings.Contains(err.Error(), "supervisor states") {
			t.Errorf("restore of %s: %v", rec, err)
		}
	}
}
