package coordinator

import (
	"slices"
	"testing"
	"time"

	"strata/segmeta"
)

func TestLoadTrackerAges(t *testing.T) {
	segs := planSegs(4, 1, 1)
	want := replicas(map[string]int{"t": 1})
	servers := planServers(2, "t", 0)
	plan := PlanAssignments(segs, want, servers)
	var tr loadTracker
	leader, t0 := time.Unix(100, 0), time.Unix(1000, 0)
	tr.update(leader, plan, servers, t0)
	if n := countIDs(tr.waiting(0, t0)); n != 4 {
		t.Fatalf("%d loads tracked, want 4", n)
	}
	if n := countIDs(tr.waiting(time.Minute, t0.Add(59*time.Second))); n != 0 {
		t.Fatalf("%d loads late after 59 s", n)
	}
	// One server loads its share; the other's loads keep their age.
	servers = holding(plan, servers[:1])
	servers = append(servers, planServers(2, "t", 0)[1])
	tr.update(leader, plan, servers, t0.Add(30*time.Second))
	late := tr.waiting(time.Minute, t0.Add(time.Minute))
	if len(late) != 1 || len(late[servers[1].Name]) == 0 || late[servers[0].Name] != nil {
		t.Fatalf("late loads %v", late)
	}
	// Each late load is reported once.
	if n := countIDs(tr.newlyLate(time.Minute, t0.Add(time.Minute))); n != len(late[servers[1].Name]) {
		t.Fatalf("first report: %d", n)
	}
	if n := countIDs(tr.newlyLate(time.Minute, t0.Add(2*time.Minute))); n != 0 {
		t.Fatalf("reported again: %d", n)
	}
	// A new leadership starts the clocks afresh.
	tr.update(time.Unix(200, 0), plan, servers, t0.Add(3*time.Minute))
	if n := countIDs(tr.waiting(time.Minute, t0.Add(3*time.Minute))); n != 0 {
		t.Fatalf("after a leader change: %d late", n)
	}
}

func countIDs(m map[string][]segmeta.ID) int {
	n := 0
	for _, ids := range m {
		n += len(ids)
	}
	return n
}

// A load that waited past the timeout gets one more replica in the same
// tier; the late server keeps its load, other tiers and decommissioning
// servers are not used.
func TestReplicateLate(t *testing.T) {
	segs := planSegs(6, 1, 1)
	want := replicas(map[string]int{"t": 1})
	servers := append(planServers(3, "t", 0), Candidate{Name: "o-00:8083", Tier: "other"})
	servers[2].Decommissioning = true
	plan := PlanAssignments(segs, want, servers)
	var slow string
	var id segmeta.ID
	for name, hold := range plan.Hold {
		if len(hold) > 0 && name != "o-00:8083" {
			slow, id = name, hold[0].ID()
			break
		}
	}
	out := replicateLate(plan, servers, map[string][]segmeta.ID{slow: {id}})
	var on []string
	for name, hold := range out.Hold {
		if slices.ContainsFunc(hold, func(s *segmeta.DataSegment) bool { return s.ID() == id }) {
			on = append(on, name)
		}
	}
	slices.Sort(on)
	if len(on) != 2 || !slices.Contains(on, slow) || slices.Contains(on, "o-00:8083") || slices.Contains(on, servers[2].Name) {
		t.Fatalf("segment %s now on %v (late on %s)", id, on, slow)
	}
	for name, hold := range out.Hold {
		if !slices.IsSortedFunc(hold, func(a, b *segmeta.DataSegment) int { return a.ID().Compare(b.ID()) }) {
			t.Fatalf("%s's hold list is not sorted", name)
		}
	}
	if again := replicateLate(plan, servers, map[string][]segmeta.ID{slow: {id}}); !equalHolds(again, out) {
		t.Fatal("not deterministic")
	}
	if same := replicateLate(plan, servers, nil); !equalHolds(same, plan) {
		t.Fatal("nothing late changed the plan")
	}
}

func equalHolds(a, b Plan) bool {
	if len(a.Hold) != len(b.Hold) {
		return false
	}
	for name, h := range a.Hold {
		if !slices.EqualFunc(h, b.Hold[name], func(x, y *segmeta.DataSegment) bool { return x.ID() == y.ID() }) {
			return false
		}
	}
	return true
}
