package coordinator

import (
	"slices"
	"testing"
	"time"

	"strata/interval"
	"strata/segmeta"
)

// The handover decision, step by step: a REPLACE of one day over two
// partitions, a mark-unused without replacement, and a replacement no rule
// loads.
func TestHandoverKeepsOldVersionUntilReplacementLoaded(t *testing.T) {
	day := interval.Interval{Start: 0, End: 24 * hour}
	seg := func(version string, part, parts int32) *segmeta.DataSegment {
		return &segmeta.DataSegment{DataSource: "wiki", Interval: day, Version: version, ShardSpec: segmeta.NumberedShard(part, parts), Size: 1}
	}
	old := seg("v1", 0, 1)
	new0, new1 := seg("v2", 0, 2), seg("v2", 1, 2)
	held := func(segs ...*segmeta.DataSegment) map[segmeta.ID]*segmeta.DataSegment {
		m := map[segmeta.ID]*segmeta.DataSegment{}
		for _, s := range segs {
			m[s.ID()] = s
		}
		return m
	}
	const delay = time.Second
	t0 := time.Unix(1000, 0)

	type step struct {
		name     string
		a, b     []*segmeta.DataSegment // what each server holds
		served   []*segmeta.DataSegment // the served view (used, visible)
		wanted   bool                   // whether a rule loads the served segments
		at       time.Duration          // since t0
		keepOld  bool
		recheckA time.Duration // expected recheck since t0; 0: none
	}
	steps := []step{
		{name: "new version published, nothing loaded", a: []*segmeta.DataSegment{old}, served: []*segmeta.DataSegment{new0, new1}, wanted: true, keepOld: true},
		{name: "one of two partitions loaded", a: []*segmeta.DataSegment{old, new0}, served: []*segmeta.DataSegment{new0, new1}, wanted: true, at: 100 * time.Millisecond, keepOld: true},
		{name: "both loaded: kept for the delay", a: []*segmeta.DataSegment{old, new0}, b: []*segmeta.DataSegment{new1}, served: []*segmeta.DataSegment{new0, new1}, wanted: true, at: 200 * time.Millisecond, keepOld: true, recheckA: 1200 * time.Millisecond},
		{name: "still within the delay", a: []*segmeta.DataSegment{old, new0}, b: []*segmeta.DataSegment{new1}, served: []*segmeta.DataSegment{new0, new1}, wanted: true, at: 1100 * time.Millisecond, keepOld: true, recheckA: 1200 * time.Millisecond},
		{name: "delay over: dropped", a: []*segmeta.DataSegment{old, new0}, b: []*segmeta.DataSegment{new1}, served: []*segmeta.DataSegment{new0, new1}, wanted: true, at: 1200 * time.Millisecond},
	}
	run := func(t *testing.T, h *handover, st step) {
		t.Helper()
		cands := []Candidate{{Name: "a", Held: held(st.a...)}, {Name: "b", Held: held(st.b...)}}
		served := held(st.served...)
		plan := Plan{Hold: map[string][]*segmeta.DataSegment{}, Targets: map[segmeta.ID][]string{}}
		for _, c := range cands {
			plan.Hold[c.Name] = []*segmeta.DataSegment{}
		}
		// The plan places the served segments on a (their targets).
		for _, s := range st.served {
			plan.Hold["a"] = append(plan.Hold["a"], s)
		}
		slices.SortFunc(plan.Hold["a"], func(x, y *segmeta.DataSegment) int { return x.ID().Compare(y.ID()) })
		inServed := func(id segmeta.ID) bool { _, ok := served[id]; return ok }
		repl := func(*segmeta.DataSegment) ([]*segmeta.DataSegment, func(*segmeta.DataSegment) bool) {
			return st.served, func(*segmeta.DataSegment) bool { return st.wanted }
		}
		got, recheck := h.keep(plan, cands, inServed, repl, delay, t0.Add(st.at))
		kept := slices.ContainsFunc(got.Hold["a"], func(s *segmeta.DataSegment) bool { return s.ID() == old.ID() })
		if kept != st.keepOld {
			t.Fatalf("%s: old version kept = %v, want %v (hold %v)", st.name, kept, st.keepOld, got.Hold["a"])
		}
		if kept && !got.KeepOnly[old.ID()] && !inServed(old.ID()) {
			t.Fatalf("%s: the old version is held for the handover but not marked keepOnly", st.name)
		}
		if got.KeepOnly[new0.ID()] || got.KeepOnly[new1.ID()] {
			t.Fatalf("%s: a served segment is marked keepOnly", st.name)
		}
		if slices.ContainsFunc(got.Hold["b"], func(s *segmeta.DataSegment) bool { return s.ID() == old.ID() }) {
			t.Fatalf("%s: the old version was placed on a server that did not hold it", st.name)
		}
		if !slices.IsSortedFunc(got.Hold["a"], func(x, y *segmeta.DataSegment) int { return x.ID().Compare(y.ID()) }) {
			t.Fatalf("%s: hold list not sorted", st.name)
		}
		var wantRecheck time.Time
		if st.recheckA > 0 {
			wantRecheck = t0.Add(st.recheckA)
		}
		if !recheck.Equal(wantRecheck) {
			t.Fatalf("%s: recheck at %v, want %v", st.name, recheck, wantRecheck)
		}
	}
	t.Run("replace", func(t *testing.T) {
		var h handover
		for _, st := range steps {
			run(t, &h, st)
		}
	})
	t.Run("replacement unloaded again restarts the wait", func(t *testing.T) {
		var h handover
		run(t, &h, steps[2])
		run(t, &h, step{name: "a partition lost", a: []*segmeta.DataSegment{old, new0}, served: steps[2].served, wanted: true, at: 500 * time.Millisecond, keepOld: true})
		run(t, &h, step{name: "reloaded", a: []*segmeta.DataSegment{old, new0}, b: []*segmeta.DataSegment{new1}, served: steps[2].served, wanted: true, at: 1300 * time.Millisecond, keepOld: true, recheckA: 2300 * time.Millisecond})
	})
	t.Run("marked unused with nothing beneath", func(t *testing.T) {
		var h handover
		run(t, &h, step{name: "nothing replaces it", a: []*segmeta.DataSegment{old}, keepOld: true, recheckA: delay})
		run(t, &h, step{name: "after the delay", a: []*segmeta.DataSegment{old}, at: delay})
	})
	t.Run("replacement no rule loads", func(t *testing.T) {
		var h handover
		run(t, &h, step{name: "drop rule over the new version", a: []*segmeta.DataSegment{old}, served: []*segmeta.DataSegment{new0, new1}, keepOld: true, recheckA: delay})
	})
	t.Run("loaded but not yet in the inventory", func(t *testing.T) {
		var h handover
		// The plan asks a to load the old version; the inventory has not seen
		// a load it yet when the new version is published.
		run(t, &h, step{name: "old version assigned", served: []*segmeta.DataSegment{old}, wanted: true, keepOld: true})
		run(t, &h, step{name: "new version published", served: []*segmeta.DataSegment{new0, new1}, wanted: true, at: 10 * time.Millisecond, keepOld: true})
		run(t, &h, step{name: "both loaded", a: []*segmeta.DataSegment{old, new0}, b: []*segmeta.DataSegment{new1}, served: []*segmeta.DataSegment{new0, new1}, wanted: true, at: 20 * time.Millisecond, keepOld: true, recheckA: 1020 * time.Millisecond})
	})
	t.Run("no outgoing segments", func(t *testing.T) {
		var h handover
		run(t, &h, step{name: "steady", a: []*segmeta.DataSegment{new0, new1}, served: []*segmeta.DataSegment{new0, new1}, wanted: true})
	})
}
