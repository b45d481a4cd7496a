package coordinator

import (
	"reflect"
	"slices"
	"testing"

	"strata/commands"
	"strata/segmeta"
)

// loads lists, per server, the segments a plan asks it to load (targets it
// does not hold yet).
func loads(p Plan, servers []Candidate) map[string][]segmeta.ID {
	out := map[string][]segmeta.ID{}
	for _, c := range servers {
		for _, seg := range p.Hold[c.Name] {
			if _, ok := c.Held[seg.ID()]; !ok {
				out[c.Name] = append(out[c.Name], seg.ID())
			}
		}
	}
	return out
}

// copies counts the servers whose hold list has seg.
func copies(p Plan, servers []Candidate, seg *segmeta.DataSegment) int {
	n := 0
	for _, c := range servers {
		if slices.ContainsFunc(p.Hold[c.Name], func(s *segmeta.DataSegment) bool { return s.ID() == seg.ID() }) {
			n++
		}
	}
	return n
}

func countLoads(m map[string][]segmeta.ID) int {
	n := 0
	for _, ids := range m {
		n += len(ids)
	}
	return n
}

// holding gives each server what the plan has it hold, as if every load had finished.
func holding(p Plan, servers []Candidate) []Candidate {
	out := slices.Clone(servers)
	for i := range out {
		out[i].Held = map[segmeta.ID]*segmeta.DataSegment{}
		for _, seg := range p.Hold[out[i].Name] {
			out[i].Held[seg.ID()] = seg
		}
	}
	return out
}

// checkThrottled verifies that a throttled plan only leaves out loads of the
// full one: every server keeps a sorted sub-list of its full Hold list.
func checkThrottled(t *testing.T, p, full Plan) {
	t.Helper()
	if !reflect.DeepEqual(p.Targets, full.Targets) || len(p.Hold) != len(full.Hold) {
		t.Fatal("throttling changed the targets or the servers")
	}
	for name, segs := range p.Hold {
		j := 0
		for _, seg := range segs {
			for j < len(full.Hold[name]) && full.Hold[name][j].ID() != seg.ID() {
				j++
			}
			if j == len(full.Hold[name]) {
				t.Fatalf("%s holds %s, which the full plan does not give it (or out of order)", name, seg.ID())
			}
		}
	}
}

func TestThrottlePrimaryLoadsAreNotHeldBack(t *testing.T) {
	segs := planSegs(300, 1, 1)
	servers := planServers(3, "t", 0)
	want := replicas(map[string]int{"t": 2})
	lim := Limits{Replication: 10, NonPrimary: maxInt, Moves: 5, DecommissioningPercent: 100}
	p := Throttle(PlanAssignments(segs, want, servers), servers, want, lim)
	checkThrottled(t, p, PlanAssignments(segs, want, servers))
	// Nothing is held anywhere: one copy of every segment loads now, and at
	// most 10 second copies.
	if got := countLoads(loads(p, servers)); got != 300+10 {
		t.Fatalf("%d loads, want 310 (every primary and 10 replicas)", got)
	}
	for _, seg := range segs {
		if copies(p, servers, seg) == 0 {
			t.Fatalf("segment %s has no server", seg.ID())
		}
	}
	// The replicas that go first are the newest segments'.
	newest := prioritySorted(segs)[:10]
	for _, seg := range newest {
		if len(p.Targets[seg.ID()]) != 2 {
			t.Fatalf("newest segment %s lacks a target", seg.ID())
		}
		if n := copies(p, servers, seg); n != 2 {
			t.Errorf("newest segment %s placed %d times, want both replicas now", seg.ID(), n)
		}
	}
	// Once they are loaded, the next ten replicas go out, and so on until
	// every target holds its segment.
	cur := servers
	for round := 0; round < 40; round++ {
		cur = holding(p, cur)
		p = Throttle(PlanAssignments(segs, want, cur), cur, want, lim)
		n := countLoads(loads(p, cur))
		if n == 0 {
			break
		}
		if n > 10 {
			t.Fatalf("round %d: %d replica loads in flight, limit 10", round, n)
		}
	}
	if n := countLoads(loads(p, cur)); n != 0 {
		t.Fatalf("replication never finished: %d loads left", n)
	}
	if full := PlanAssignments(segs, want, cur); !reflect.DeepEqual(full.Hold, p.Hold) {
		t.Fatal("after the throttled rounds the cluster does not hold the unthrottled plan")
	}
}

func TestThrottleMovesAndLoadQueue(t *testing.T) {
	segs := planSegs(400, 1, 1)
	want := replicas(map[string]int{"t": 1})
	servers := holding(PlanAssignments(segs, want, planServers(4, "t", 0)), planServers(4, "t", 0))
	// A fifth server joins: its share moves over, at most Moves at a time,
	// and the servers giving a segment up keep it until it has moved.
	grown := append(slices.Clone(servers), Candidate{Name: "t-99:8083", Tier: "t"})
	lim := Limits{Replication: maxInt, NonPrimary: maxInt, Moves: 7, DecommissioningPercent: 100}
	p := Throttle(PlanAssignments(segs, want, grown), grown, want, lim)
	checkThrottled(t, p, PlanAssignments(segs, want, grown))
	l := loads(p, grown)
	if len(l["t-99:8083"]) != 7 || countLoads(l) != 7 {
		t.Fatalf("loads %v, want 7 moves onto the new server", l)
	}
	for _, seg := range segs {
		if copies(p, grown, seg) == 0 {
			t.Fatalf("segment %s unserved during the moves", seg.ID())
		}
	}
	// The load queue limit caps every kind of load, primaries included.
	empty := planServers(2, "t", 0)
	q := Throttle(PlanAssignments(segs, want, empty), empty, want, Limits{LoadQueue: 25, Replication: maxInt, NonPrimary: maxInt, Moves: maxInt})
	for name, ids := range loads(q, empty) {
		if len(ids) != 25 {
			t.Errorf("%s asked to load %d, queue limit 25", name, len(ids))
		}
	}
}

func TestThrottleDecommissioning(t *testing.T) {
	segs := planSegs(100, 1, 1)
	want := replicas(map[string]int{"t": 1})
	base := planServers(3, "t", 0)
	servers := holding(PlanAssignments(segs, want, base), base)
	servers[0].Decommissioning = true
	onFirst := len(servers[0].Held)
	plan := PlanAssignments(segs, want, servers)
	// 0% of the moves for decommissioning servers: maintenance mode, nothing leaves.
	p := Throttle(plan, servers, want, Limits{Replication: maxInt, NonPrimary: maxInt, Moves: 50, DecommissioningPercent: 0})
	if n := countLoads(loads(p, servers)); n != 0 || len(p.Hold[servers[0].Name]) != onFirst {
		t.Fatalf("maintenance mode moved %d segments; the server keeps %d of %d", n, len(p.Hold[servers[0].Name]), onFirst)
	}
	// 20% of 50: ten segments at a time leave it.
	p = Throttle(plan, servers, want, Limits{Replication: maxInt, NonPrimary: maxInt, Moves: 50, DecommissioningPercent: 20})
	if n := countLoads(loads(p, servers)); n != 10 {
		t.Fatalf("%d moves off the decommissioning server, want 10", n)
	}
}

func TestThrottleDeterministic(t *testing.T) {
	segs := planSegs(200, 2, 1)
	want := replicas(map[string]int{"t": 2})
	servers := planServers(5, "t", 0)
	lim := Limits{LoadQueue: 30, Replication: 20, NonPrimary: 15, Moves: 5, DecommissioningPercent: 70}
	a := Throttle(PlanAssignments(segs, want, servers), servers, want, lim)
	shuffled := slices.Clone(servers)
	slices.Reverse(shuffled)
	b := Throttle(PlanAssignments(segs, want, shuffled), shuffled, want, lim)
	if !reflect.DeepEqual(a.Hold, b.Hold) {
		t.Fatal("throttled plan depends on server order")
	}
	for name, ids := range loads(a, servers) {
		if len(ids) > 30 {
			t.Fatalf("%s has %d loads, queue limit 30", name, len(ids))
		}
	}
}

func TestLimitsOf(t *testing.T) {
	cfg := commands.DefaultCoordinatorConfig()
	if got := LimitsOf(cfg, 1000); got.Replication != 100 || got.Moves != 100 || got.LoadQueue != 0 || got.NonPrimary != maxInt {
		t.Errorf("smart, 1000 segments: %+v", got)
	}
	if got := LimitsOf(cfg, 100000); got.Replication != 2000 || got.Moves != 1000 {
		t.Errorf("smart, 100k segments: %+v", got)
	}
	cfg.SmartSegmentLoading = false
	cfg.MaxSegmentsToMove, cfg.ReplicationThrottleLimit, cfg.MaxSegmentsInNodeLoadingQueue = 7, 8, 9
	cfg.MaxNonPrimaryReplicantsToLoad, cfg.DecommissioningMaxPercentOfMaxSegmentsToMove = 10, 11
	want := Limits{LoadQueue: 9, Replication: 8, NonPrimary: 10, Moves: 7, DecommissioningPercent: 11}
	if got := LimitsOf(cfg, 1000); got != want {
		t.Errorf("configured: %+v, want %+v", got, want)
	}
}

// BenchmarkThrottle is the worst case: a fresh cluster of 20 servers where
// none of 100,000 segments is loaded yet, with smart loading's limits.
func BenchmarkThrottle(b *testing.B) {
	segs := planSegs(100000, 5, 1<<20)
	servers := planServers(20, "t", 0)
	want := replicas(map[string]int{"t": 2})
	plan := PlanAssignments(segs, want, servers)
	lim := LimitsOf(commands.DefaultCoordinatorConfig(), len(segs))
	b.ReportAllocs()
	for b.Loop() {
		Throttle(plan, servers, want, lim)
	}
}
