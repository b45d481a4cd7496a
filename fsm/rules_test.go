package fsm

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/interval"
	"strata/rules"
	"strata/segmeta"
)

func setRules(t *testing.T, i uint64, ms int64, ds, body string) *raft.Log {
	return entry(t, i, ms, commands.SetRules{DataSource: ds, Rules: json.RawMessage(body)}, "ops")
}

func TestApplySetRules(t *testing.T) {
	f := New(nil)
	f.Read(func(s *State) {
		if got := s.RulesJSON(DefaultRulesKey); got != string(rules.AppendJSON(nil, rules.Default())) {
			t.Fatalf("default rules before any change: %s", got)
		}
		if got := s.RulesJSON("wiki"); got != "[]" {
			t.Fatalf("unset datasource rules: %s", got)
		}
	})
	res := f.Apply(setRules(t, 1, 1000, "wiki", `[{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"},{"type":"loadForever","tieredReplicants":{"hot":1}}]`)).(Result)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	f.Read(func(s *State) {
		rs, ok := s.Rules("wiki")
		if !ok || len(rs) != 2 || rs[0].Kind() != rules.Drop || rs[1].Replicants()["hot"] != 1 {
			t.Fatalf("stored rules: %+v", rs)
		}
		jan := interval.Interval{Start: 1672531200000, End: 1672617600000} // 2023-01-01/02
		if r, ok := rules.Match(rs, s.DefaultRules(), jan, 0); !ok || r.Kind() != rules.Drop {
			t.Fatalf("match: %+v %v", r, ok)
		}
		want := `[{"interval":"2023-01-01T00:00:00.000Z/2023-02-01T00:00:00.000Z","type":"dropByInterval"},`
		if got := s.RulesJSON("wiki"); !bytes.HasPrefix([]byte(got), []byte(want)) {
			t.Fatalf("canonical rules: %s", got)
		}
		a := s.Audit(AuditQuery{Type: AuditRules, Key: "wiki", Limit: 5})
		if len(a) != 1 || a[0].Payload != s.RulesJSON("wiki") || a[0].Audit.Author != "ops" || a[0].TimeMs != 1000 {
			t.Fatalf("audit: %+v", a)
		}
		if keys := s.RulesKeys(); len(keys) != 2 || keys[0] != "_default" || keys[1] != "wiki" {
			t.Fatalf("keys: %v", keys)
		}
	})
	// Clearing keeps an empty list; defaults can be replaced.
	f.Apply(setRules(t, 2, 2000, "wiki", `[]`))
	f.Apply(setRules(t, 3, 3000, "_default", `[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`))
	f.Read(func(s *State) {
		if rs, ok := s.Rules("wiki"); !ok || len(rs) != 0 || s.RulesJSON("wiki") != "[]" {
			t.Fatalf("cleared rules: %v %v", rs, ok)
		}
		if d := s.DefaultRules(); len(d) != 1 || d[0].Replicants()["_default_tier"] != 1 {
			t.Fatalf("defaults: %+v", d)
		}
	})
}

func TestSetRulesRejectsInvalid(t *testing.T) {
	f := New(nil)
	f.Apply(setRules(t, 1, 1000, "wiki", `[{"type":"loadForever"}]`))
	before := snapshotBytes(t, f)
	for i, c := range []struct{ ds, body string }{
		{"wiki", `[{"type":"loadSometimes"}]`},
		{"wiki", `[{"type":"dropByInterval"}]`},
		{"wiki", `[{"type":"loadByPeriod","period":"1 month"}]`},
		{"wiki", `[{"type":"loadForever","tieredReplicants":{"t":-1}}]`},
		{"wiki", `{"type":"loadForever"}`},
		{"wiki", `null`},
		{"", `[]`},
		{"a/b", `[]`},
	} {
		t.Run(c.ds+" "+c.body, func(t *testing.T) {
			res := f.Apply(setRules(t, uint64(2+i), 2000, c.ds, c.body)).(Result)
			if res.Err == nil || IsFatal(res.Err) {
				t.Fatalf("%s %s: want a client error, got %v", c.ds, c.body, res.Err)
			}
		})
	}
	after := snapshotBytes(t, f)
	// Only the header (index, time) may differ: no table changed.
	if !bytes.Equal(tablesOf(before), tablesOf(after)) {
		t.Fatal("a rejected rules change altered the state")
	}
}

// tablesOf strips the snapshot header frame.
func tablesOf(snap []byte) []byte {
	n := int(snap[0]) // header frames are short: one length byte
	return snap[1+n:]
}

func TestRulesSnapshotAndDeterminism(t *testing.T) {
	log := []*raft.Log{
		setRules(t, 1, 1000, "b", `[{"type":"loadByPeriod","period":"P1M","tieredReplicants":{"z":1,"a":2}},{"type":"dropForever"}]`),
		setRules(t, 2, 2000, "a", `[{"type":"broadcastForever"}]`),
		setRules(t, 3, 3000, "_default", `[{"type":"loadForever","tieredReplicants":{}}]`),
		setRules(t, 4, 4000, "c", `[{"type":"dropBeforeByPeriod","period":"P7D"},{"type":"loadForever","useDefaultTierForNull":false}]`),
	}
	var first []byte
	for i := 0; i < 10; i++ {
		f := New(nil)
		for _, l := range log {
			if res := f.Apply(l).(Result); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
		snap := snapshotBytes(t, f)
		if first == nil {
			first = snap
		} else if !bytes.Equal(first, snap) {
			t.Fatal("snapshot bytes vary between runs")
		}
		if got := snapshotBytes(t, restore(t, snap)); !bytes.Equal(got, snap) {
			t.Fatalf("round trip differs:\n%s\n%s", snap, got)
		}
	}
	r := restore(t, first)
	r.Read(func(s *State) {
		if rs, _ := s.Rules("c"); len(rs) != 2 || len(rs[1].Replicants()) != 0 {
			t.Fatalf("restored rules of c: %+v", rs)
		}
		if len(s.Audit(AuditQuery{Type: AuditRules, Limit: 10})) != 4 {
			t.Fatal("restored audit lacks the rules changes")
		}
	})
}

// The placement version moves with what placement reads (used segments,
// rules, coordinator config) and not with other changes.
func TestPlacementVersion(t *testing.T) {
	f := New(nil)
	version := func() PlacementVersion {
		var v PlacementVersion
		f.Read(func(s *State) { v = s.PlacementVersion() })
		return v
	}
	v0 := version()
	f.Apply(entry(t, 1, 1000, commands.SetWorkerConfig{Config: commands.WorkerBehaviorConfig{Type: "default"}}, "a"))
	if version() != v0 {
		t.Fatal("a worker config change moved the placement version")
	}
	f.Apply(setRules(t, 2, 2000, "wiki", `[{"type":"dropForever"}]`))
	v1 := version()
	if v1 == v0 {
		t.Fatal("a rules change did not move the placement version")
	}
	f.Apply(entry(t, 3, 3000, commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(3)}}, "a"))
	v2 := version()
	if v2 == v1 {
		t.Fatal("a coordinator config change did not move the placement version")
	}
	iv, _ := interval.Parse("2024-01-01/2024-01-02")
	ps := publishCmd([]*segmeta.DataSegment{{DataSource: "wiki", Interval: iv, Version: "v1", LoadSpec: `{"type":"local","path":"/x"}`,
		ShardSpec: segmeta.NumberedShard(0, 1), Size: 1}}, "", "")
	if res := f.Apply(entry(t, 4, 4000, ps, "a")).(Result); res.Err != nil {
		t.Fatal(res.Err)
	}
	v3 := version()
	if v3 == v2 {
		t.Fatal("a publish did not move the placement version")
	}
	if res := f.Apply(entry(t, 5, 5000, commands.MarkSegments{DataSource: "wiki", All: true}, "a")).(Result); res.Err != nil {
		t.Fatal(res.Err)
	}
	if version() == v3 {
		t.Fatal("marking segments unused did not move the placement version")
	}
	if restored := restore(t, snapshotBytes(t, f)); func() bool {
		var v PlacementVersion
		restored.Read(func(s *State) { v = s.PlacementVersion() })
		return v == version()
	}() {
		t.Fatal("a restored state has the version of the state it was restored from")
	}
}
