package coordinator

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"strata/interval"
	"strata/segmeta"
)

const hour = 3600000

// planSegs returns n one-hour segments of size bytes, hour i ending newest
// last, with parts partitions per hour.
func planSegs(n, parts int, size int64) []*segmeta.DataSegment {
	out := make([]*segmeta.DataSegment, 0, n)
	for i := 0; len(out) < n; i++ {
		for p := 0; p < parts && len(out) < n; p++ {
			out = append(out, &segmeta.DataSegment{DataSource: "wiki", Interval: interval.Interval{Start: int64(i) * hour, End: int64(i+1) * hour},
				Version: "v1", ShardSpec: segmeta.NumberedShard(int32(p), int32(parts)), Size: size})
		}
	}
	return out
}

func planServers(n int, tier string, maxSize int64) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		out[i] = Candidate{Name: fmt.Sprintf("%s-%02d:8083", tier, i), Tier: tier, MaxSize: maxSize}
	}
	return out
}

func replicas(tiers map[string]int) func(*segmeta.DataSegment) Want {
	return func(*segmeta.DataSegment) Want { return Want{Replicas: tiers} }
}

func tierOf(servers []Candidate) map[string]string {
	m := map[string]string{}
	for _, s := range servers {
		m[s.Name] = s.Tier
	}
	return m
}

// checkPlan verifies the invariants every plan has: every server listed,
// Hold sorted and containing all targets, Targets sorted and distinct.
func checkPlan(t *testing.T, p Plan, servers []Candidate) {
	t.Helper()
	if len(p.Hold) != len(servers) {
		t.Fatalf("Hold lists %d servers, want %d", len(p.Hold), len(servers))
	}
	in := map[string]map[segmeta.ID]bool{}
	for _, s := range servers {
		h, ok := p.Hold[s.Name]
		if !ok || h == nil {
			t.Fatalf("server %s missing from Hold (or nil)", s.Name)
		}
		in[s.Name] = map[segmeta.ID]bool{}
		for j, seg := range h {
			if j > 0 && h[j-1].ID().Compare(seg.ID()) >= 0 {
				t.Fatalf("Hold[%s] not sorted by id at %d", s.Name, j)
			}
			in[s.Name][seg.ID()] = true
		}
	}
	for id, names := range p.Targets {
		if len(names) == 0 || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("targets of %s: %v", id, names)
		}
		for _, n := range names {
			if !in[n][id] {
				t.Fatalf("target %s of %s does not hold it", n, id)
			}
		}
	}
}

func TestPlanReplicasPerTier(t *testing.T) {
	servers := append(planServers(5, "hot", 0), planServers(3, "cold", 0)...)
	segs := planSegs(500, 3, 10)
	p := PlanAssignments(segs, replicas(map[string]int{"hot": 2, "cold": 1, "nowhere": 0}), servers)
	checkPlan(t, p, servers)
	tiers := tierOf(servers)
	for _, s := range segs {
		count := map[string]int{}
		for _, n := range p.Targets[s.ID()] {
			count[tiers[n]]++
		}
		if count["hot"] != 2 || count["cold"] != 1 || len(count) != 2 {
			t.Fatalf("%s: replicas per tier %v", s.ID(), count)
		}
	}
	// More replicas than servers: every server of the tier.
	p = PlanAssignments(segs[:10], replicas(map[string]int{"cold": 7}), servers)
	for _, s := range segs[:10] {
		if got := p.Targets[s.ID()]; len(got) != 3 {
			t.Fatalf("%s: %v, want the 3 cold servers", s.ID(), got)
		}
	}
}

func TestPlanBalance(t *testing.T) {
	servers := planServers(10, "t", 0)
	p := PlanAssignments(planSegs(10000, 4, 1), replicas(map[string]int{"t": 2}), servers)
	checkPlan(t, p, servers)
	const mean = 10000 * 2 / 10
	for name, h := range p.Hold {
		if len(h) < mean*85/100 || len(h) > mean*115/100 {
			t.Errorf("%s holds %d segments, mean %d", name, len(h), mean)
		}
	}
}

func TestPlanCapacityNewestFirst(t *testing.T) {
	servers := planServers(3, "t", 1000) // room for 10 segments each
	segs := planSegs(60, 1, 100)
	p := PlanAssignments(segs, replicas(map[string]int{"t": 1}), servers)
	checkPlan(t, p, servers)
	for name, h := range p.Hold {
		var bytes int64
		for _, s := range h {
			bytes += s.Size
		}
		if bytes > 1000 {
			t.Errorf("%s holds %d bytes, max 1000", name, bytes)
		}
	}
	// 30 slots: exactly the 30 newest segments are placed.
	for i, s := range segs {
		if placed := len(p.Targets[s.ID()]) > 0; placed != (i >= 30) {
			t.Errorf("segment of hour %d placed=%v", i, placed)
		}
	}
	// A segment larger than any server is placed nowhere; smaller ones still are.
	big := &segmeta.DataSegment{DataSource: "wiki", Interval: interval.Interval{Start: 100 * hour, End: 101 * hour}, Version: "v1", Size: 5000}
	p = PlanAssignments(append(segs[:5:5], big), replicas(map[string]int{"t": 2}), servers)
	if len(p.Targets[big.ID()]) != 0 || len(p.Targets[segs[0].ID()]) != 2 {
		t.Errorf("big %v, small %v", p.Targets[big.ID()], p.Targets[segs[0].ID()])
	}
}

// Under tight capacity each segment, newest first, gets the r servers of
// highest rendezvous weight that still have room, as a plain sort finds them.
func TestPlanMatchesReference(t *testing.T) {
	segs := planSegs(400, 2, 0)
	for i, s := range segs {
		s.Size = int64(1 + i*37%100)
	}
	servers := planServers(9, "t", 0)
	for i := range servers {
		servers[i].MaxSize = int64(800 + 300*i)
	}
	p := PlanAssignments(segs, replicas(map[string]int{"t": 3}), servers)
	checkPlan(t, p, servers)

	order := slices.Clone(segs)
	slices.SortFunc(order, func(a, b *segmeta.DataSegment) int {
		if a.Interval.End != b.Interval.End {
			return int(b.Interval.End - a.Interval.End)
		}
		return a.ID().Compare(b.ID())
	})
	used := map[string]int64{}
	full := 0
	for _, s := range order {
		byWeight := slices.Clone(servers)
		h := xxhash.Sum64String(s.ID().String())
		weight := func(c Candidate) uint64 { return mix(h ^ xxhash.Sum64String(c.Name)) }
		slices.SortFunc(byWeight, func(a, b Candidate) int { return cmp.Compare(weight(b), weight(a)) })
		var want []string
		for _, c := range byWeight {
			if len(want) < 3 && used[c.Name]+s.Size <= c.MaxSize {
				used[c.Name] += s.Size
				want = append(want, c.Name)
			}
		}
		slices.Sort(want)
		if got := p.Targets[s.ID()]; !slices.Equal(got, want) {
			t.Fatalf("%s: targets %v, want %v", s.ID(), got, want)
		}
		if len(want) < 3 {
			full++
		}
	}
	if full < 50 {
		t.Fatalf("only %d segments short of replicas; capacity does not bind", full)
	}
}

func TestPlanBroadcast(t *testing.T) {
	servers := append(planServers(3, "hot", 0), planServers(2, "cold", 150)...)
	segs := planSegs(3, 1, 100)
	p := PlanAssignments(segs, func(*segmeta.DataSegment) Want { return Want{Broadcast: true} }, servers)
	checkPlan(t, p, servers)
	for _, s := range servers {
		want := 3
		if s.Tier == "cold" {
			want = 1 // room for one
		}
		if got := len(p.Hold[s.Name]); got != want {
			t.Errorf("%s holds %d, want %d", s.Name, got, want)
		}
	}
	if got := p.Hold["cold-00:8083"]; len(got) != 1 || got[0] != segs[2] {
		t.Errorf("cold server should hold the newest segment, holds %v", got)
	}
}

func TestPlanTierWithoutServers(t *testing.T) {
	servers := planServers(3, "hot", 0)
	segs := planSegs(20, 1, 1)
	servers[1].Held = map[segmeta.ID]*segmeta.DataSegment{segs[4].ID(): segs[4]}
	p := PlanAssignments(segs, replicas(map[string]int{"cold": 2}), servers)
	checkPlan(t, p, servers)
	if len(p.Targets) != 0 {
		t.Errorf("targets %v, want none", p.Targets)
	}
	// The last copy stays where it is.
	if got := p.Hold[servers[1].Name]; len(got) != 1 || got[0] != segs[4] {
		t.Errorf("hold %v, want the held segment kept", got)
	}
	if len(p.Hold[servers[0].Name]) != 0 {
		t.Errorf("hold %v, want nothing", p.Hold[servers[0].Name])
	}
}

func TestPlanHandOver(t *testing.T) {
	servers := planServers(4, "t", 0)
	segs := planSegs(50, 2, 1)
	seg := segs[7]
	want := replicas(map[string]int{"t": 2})
	targets := PlanAssignments(segs, want, servers).Targets[seg.ID()]
	var others []string
	for _, s := range servers {
		if !slices.Contains(targets, s.Name) {
			others = append(others, s.Name)
		}
	}
	old := others[0]
	with := func(holders ...string) []Candidate {
		out := slices.Clone(servers)
		for i := range out {
			if slices.Contains(holders, out[i].Name) {
				out[i].Held = map[segmeta.ID]*segmeta.DataSegment{seg.ID(): seg}
			}
		}
		return out
	}
	holds := func(p Plan, name string) bool { return slices.Contains(p.Hold[name], seg) }

	cases := []struct {
		name    string
		segs    []*segmeta.DataSegment
		want    func(*segmeta.DataSegment) Want
		holders []string
		kept    bool
	}{
		{"no target holds it", segs, want, []string{old}, true},
		{"first of two targets holds it", segs, want, []string{old, targets[0]}, true},
		{"second of two targets holds it", segs, want, []string{old, targets[1]}, true},
		{"all targets hold it", segs, want, []string{old, targets[0], targets[1]}, false},
		{"unwanted", segs, replicas(map[string]int{"t": 0}), []string{old}, false},
		{"no rule", segs, func(*segmeta.DataSegment) Want { return Want{} }, []string{old}, false},
		{"not used any more", slices.DeleteFunc(slices.Clone(segs), func(s *segmeta.DataSegment) bool { return s == seg }), want, []string{old}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := with(c.holders...)
			p := PlanAssignments(c.segs, c.want, cs)
			checkPlan(t, p, cs)
			if holds(p, old) != c.kept {
				t.Errorf("old server keeps it = %v, want %v", holds(p, old), c.kept)
			}
			for _, n := range others[1:] {
				if holds(p, n) {
					t.Errorf("bystander %s holds it", n)
				}
			}
		})
	}
}

// A copy kept for hand-over does not take the room a new target needs.
func TestPlanKeptDoesNotBlock(t *testing.T) {
	segs := planSegs(2, 1, 100)
	servers := []Candidate{
		{Name: "old:1", Tier: "cold", MaxSize: 100, Held: map[segmeta.ID]*segmeta.DataSegment{segs[0].ID(): segs[0]}},
		{Name: "new:1", Tier: "hot", MaxSize: 100},
	}
	p := PlanAssignments(segs, func(s *segmeta.DataSegment) Want {
		if s == segs[0] {
			return Want{Replicas: map[string]int{"hot": 1}}
		}
		return Want{Replicas: map[string]int{"cold": 1}}
	}, servers)
	checkPlan(t, p, servers)
	if got := p.Hold["old:1"]; !reflect.DeepEqual(got, segs) {
		t.Errorf("old holds %v, want both (one kept, one target)", got)
	}
	if got := p.Targets[segs[1].ID()]; !reflect.DeepEqual(got, []string{"old:1"}) {
		t.Errorf("targets %v", got)
	}
}

func TestPlanDeterministic(t *testing.T) {
	segs := planSegs(2000, 3, 7)
	servers := append(planServers(6, "hot", 2000), planServers(4, "cold", 0)...)
	for i := range servers {
		servers[i].Held = map[segmeta.ID]*segmeta.DataSegment{}
		for _, s := range segs[i*100 : i*100+150] {
			servers[i].Held[s.ID()] = s
		}
	}
	want := func(s *segmeta.DataSegment) Want {
		switch s.ShardSpec.PartitionNum {
		case 0:
			return Want{Replicas: map[string]int{"hot": 2, "cold": 1}}
		case 1:
			return Want{Replicas: map[string]int{"cold": 2}}
		}
		return Want{Broadcast: s.Interval.Start%(5*hour) == 0}
	}
	base := PlanAssignments(segs, want, servers)
	checkPlan(t, base, servers)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		s2, c2 := slices.Clone(segs), slices.Clone(servers)
		rng.Shuffle(len(s2), func(i, j int) { s2[i], s2[j] = s2[j], s2[i] })
		rng.Shuffle(len(c2), func(i, j int) { c2[i], c2[j] = c2[j], c2[i] })
		s2 = append(s2, nil, s2[0]) // nils and duplicates are ignored
		if p := PlanAssignments(s2, want, c2); !reflect.DeepEqual(p, base) {
			t.Fatal("plan depends on input order")
		}
	}
}

func TestPlanStability(t *testing.T) {
	segs := planSegs(3000, 4, 1)
	want := replicas(map[string]int{"t": 2})
	servers := planServers(11, "t", 0)
	small := PlanAssignments(segs, want, servers[:10]).Targets
	large := PlanAssignments(segs, want, servers).Targets
	added, removed := servers[10].Name, servers[9].Name
	without := PlanAssignments(segs, want, append(slices.Clone(servers[:9]), servers[10])).Targets

	// moved counts placements of a that are not in b, and fails if one went
	// anywhere but to (or from) the server that changed.
	moved := func(a, b map[segmeta.ID][]string, changed string) int {
		n := 0
		for id, ta := range a {
			for _, s := range ta {
				if !slices.Contains(b[id], s) {
					n++
					if s != changed && !slices.Contains(b[id], changed) {
						t.Fatalf("%s moved from %s to %v though neither changed", id, s, b[id])
					}
				}
			}
		}
		return n
	}
	total := len(segs) * 2
	if n := moved(small, large, added); n == 0 || n > total*15/100 {
		t.Errorf("adding a server to 10 moved %d of %d placements", n, total)
	}
	if n := moved(large, without, removed); n == 0 || n > total*15/100 {
		t.Errorf("removing a server of 11 moved %d of %d placements", n, total)
	}
}

func BenchmarkPlanAssignments(b *testing.B) {
	segs := planSegs(100000, 5, 1<<20)
	servers := planServers(20, "t", 0)
	want := replicas(map[string]int{"t": 2})
	// Steady state: every server already holds what it is planned to hold.
	servers = holding(PlanAssignments(segs, want, servers), servers)
	b.ReportAllocs()
	for b.Loop() {
		PlanAssignments(segs, want, servers)
	}
}

// A decommissioning server gets no new targets and keeps what it holds until
// the new holders have it.
func TestPlanDecommissioning(t *testing.T) {
	servers := planServers(3, "hot", 0)
	segs := planSegs(30, 1, 1)
	held := map[segmeta.ID]*segmeta.DataSegment{}
	for _, s := range segs {
		held[s.ID()] = s
	}
	servers[0].Held, servers[0].Decommissioning = held, true
	p := PlanAssignments(segs, replicas(map[string]int{"hot": 1}), servers)
	checkPlan(t, p, servers)
	for id, names := range p.Targets {
		if slices.Contains(names, servers[0].Name) {
			t.Fatalf("segment %s targets the decommissioning server", id)
		}
	}
	if len(p.Targets) != len(segs) || len(p.Hold[servers[0].Name]) != len(segs) {
		t.Fatalf("%d segments placed; the decommissioning server keeps %d of %d until they move",
			len(p.Targets), len(p.Hold[servers[0].Name]), len(segs))
	}
	// Once the others hold their targets, it gives everything up.
	for i := 1; i < 3; i++ {
		servers[i].Held = map[segmeta.ID]*segmeta.DataSegment{}
		for _, s := range p.Hold[servers[i].Name] {
			servers[i].Held[s.ID()] = s
		}
	}
	p = PlanAssignments(segs, replicas(map[string]int{"hot": 1}), servers)
	if n := len(p.Hold[servers[0].Name]); n != 0 {
		t.Fatalf("the decommissioning server still holds %d moved segments", n)
	}
	// Broadcast skips it too.
	p = PlanAssignments(segs[:2], func(*segmeta.DataSegment) Want { return Want{Broadcast: true} }, servers)
	for _, names := range p.Targets {
		if slices.Contains(names, servers[0].Name) {
			t.Fatal("a broadcast segment targets the decommissioning server")
		}
	}
}
