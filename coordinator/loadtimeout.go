package coordinator

import (
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"

	"strata/segmeta"
)

// loadTracker remembers since when each load the leader handed out (a
// segment in a server's hold list that the server does not hold yet) has
// been waiting. It backs two settings of the coordinator dynamic config:
// replicantLifetime (warn about loads waiting too long) and
// replicateAfterLoadTimeout (place one more replica elsewhere when a load
// has waited past the load timeout, as a slow or broken historical may
// never finish it).
type loadTracker struct {
	leader time.Time // the leadership the times belong to
	since  map[string]map[segmeta.ID]time.Time
	warned map[string]map[segmeta.ID]bool
}

// update records the loads of plan as of now and forgets the ones that are
// done or no longer asked for. A new leadership starts afresh.
func (t *loadTracker) update(leader time.Time, plan Plan, servers []Candidate, now time.Time) {
	if !t.leader.Equal(leader) || t.since == nil {
		t.leader, t.since, t.warned = leader, map[string]map[segmeta.ID]time.Time{}, map[string]map[segmeta.ID]bool{}
	}
	for _, c := range servers {
		prev := t.since[c.Name]
		next := map[segmeta.ID]time.Time{}
		for _, seg := range plan.Hold[c.Name] {
			id := seg.ID()
			if _, held := c.Held[id]; held {
				continue
			}
			if at, ok := prev[id]; ok {
				next[id] = at
			} else {
				next[id] = now
			}
		}
		if len(next) == 0 {
			delete(t.since, c.Name)
			delete(t.warned, c.Name)
			continue
		}
		t.since[c.Name] = next
		for id := range t.warned[c.Name] {
			if _, ok := next[id]; !ok {
				delete(t.warned[c.Name], id)
			}
		}
	}
	for name := range t.since {
		if !slices.ContainsFunc(servers, func(c Candidate) bool { return c.Name == name }) {
			delete(t.since, name)
			delete(t.warned, name)
		}
	}
}

// waiting lists, per server, the loads that have waited at least d by now.
func (t *loadTracker) waiting(d time.Duration, now time.Time) map[string][]segmeta.ID {
	out := map[string][]segmeta.ID{}
	for name, loads := range t.since {
		for id, at := range loads {
			if now.Sub(at) >= d {
				out[name] = append(out[name], id)
			}
		}
		slices.SortFunc(out[name], segmeta.ID.Compare)
	}
	return out
}

// newlyLate returns the loads that have waited at least d and were not
// reported before, and marks them reported.
func (t *loadTracker) newlyLate(d time.Duration, now time.Time) map[string][]segmeta.ID {
	out := map[string][]segmeta.ID{}
	for name, ids := range t.waiting(d, now) {
		for _, id := range ids {
			if t.warned[name] == nil {
				t.warned[name] = map[segmeta.ID]bool{}
			}
			if !t.warned[name][id] {
				t.warned[name][id] = true
				out[name] = append(out[name], id)
			}
		}
	}
	return out
}

// replicateLate adds, for each load in late (server → segment ids), one
// more replica of the segment on another server of the same tier: not
// decommissioning, not already listing it, with room, the first by the
// planner's rendezvous order. The late server keeps its load: it may still
// finish. The result depends only on the inputs.
func replicateLate(plan Plan, servers []Candidate, late map[string][]segmeta.ID) Plan {
	if len(late) == 0 {
		return plan
	}
	byName := map[string]*Candidate{}
	for i := range servers {
		byName[servers[i].Name] = &servers[i]
	}
	listed := func(name string, id segmeta.ID) (*segmeta.DataSegment, bool) {
		for _, seg := range plan.Hold[name] {
			if seg.ID() == id {
				return seg, true
			}
		}
		return nil, false
	}
	used := map[string]int64{}
	for name, segs := range plan.Hold {
		for _, seg := range segs {
			used[name] += max(seg.Size, 0)
		}
	}
	out := Plan{Hold: make(map[string][]*segmeta.DataSegment, len(plan.Hold)), Targets: plan.Targets}
	for name, segs := range plan.Hold {
		out.Hold[name] = segs
	}
	names := make([]string, 0, len(late))
	for name := range late {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		from := byName[name]
		if from == nil {
			continue
		}
		for _, id := range late[name] {
			seg, ok := listed(name, id)
			if !ok {
				continue
			}
			h := xxhash.Sum64(id.AppendTo(nil))
			var best *Candidate
			var bestW uint64
			for i := range servers {
				c := &servers[i]
				if c.Name == name || c.Tier != from.Tier || c.Decommissioning {
					continue
				}
				if slices.ContainsFunc(out.Hold[c.Name], func(s *segmeta.DataSegment) bool { return s.ID() == id }) {
					continue
				}
				if c.MaxSize > 0 && used[c.Name]+max(seg.Size, 0) > c.MaxSize {
					continue
				}
				if w := mix(h ^ xxhash.Sum64String(c.Name)); best == nil || w > bestW || w == bestW && c.Name < best.Name {
					best, bestW = c, w
				}
			}
			if best == nil {
				continue
			}
			hold := slices.Clone(out.Hold[best.Name])
			i, _ := slices.BinarySearchFunc(hold, id, func(s *segmeta.DataSegment, id segmeta.ID) int { return s.ID().Compare(id) })
			out.Hold[best.Name] = slices.Insert(hold, i, seg)
			used[best.Name] += max(seg.Size, 0)
		}
	}
	return out
}
