package coordinator

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"strata/segmeta"
)

// Want is what a segment's matching rule asks for.
type Want struct {
	Broadcast bool           // one replica on every reachable server, of every tier
	Replicas  map[string]int // tier → replica count (load rules); nil/empty and !Broadcast = not loaded anywhere
}

// Wanted reports whether the rule keeps the segment loaded somewhere.
func (w Want) Wanted() bool {
	if w.Broadcast {
		return true
	}
	for _, r := range w.Replicas {
		if r > 0 {
			return true
		}
	}
	return false
}

// Candidate is a historical the plan may use.
type Candidate struct {
	Name    string // host:port, unique
	Tier    string
	MaxSize int64                               // bytes it may hold; <= 0 means no limit
	Held    map[segmeta.ID]*segmeta.DataSegment // what it serves now (may be nil)
	// Decommissioning servers get no new targets; they keep what they hold
	// until its new holders have it (decommissioningNodes).
	Decommissioning bool
}

// Plan is the outcome.
type Plan struct {
	// Hold maps every candidate's name to the segments it should serve (its
	// targets and the copies it keeps for hand-over), sorted by ID.
	Hold map[string][]*segmeta.DataSegment
	// Targets maps a segment to the servers chosen for it, sorted by name;
	// segments with no target (unwanted, or no room anywhere) are absent.
	// After Throttle a target may lack the segment in Hold: its load is held
	// back for a later plan.
	Targets map[segmeta.ID][]string
	// KeepOnly marks the segments that are in Hold lists only so that the
	// servers holding them keep them for a handover (see handover): a
	// server that lacks one must not load it.
	KeepOnly map[segmeta.ID]bool
}

// PlanAssignments decides which server serves which segment. Replicas are
// placed by rendezvous hashing of (segment id, server name), so adding or
// removing a server moves only the placements it wins or held. Capacity goes
// to the newest segments first, as Druid loads the newest data first. A
// server keeps a wanted segment it is no longer a target of until every
// target holds it (or for good while it has no target), so a move never
// leaves the segment unserved. The plan depends only on the sets given, not
// their order; of duplicate ids or names only one is used.
func PlanAssignments(segs []*segmeta.DataSegment, want func(*segmeta.DataSegment) Want, servers []Candidate) Plan {
	p := newPlanner(servers)
	order := prioritySorted(segs)
	m, n, words := len(order), len(p.srv), p.words
	ids := make([]segmeta.ID, m)
	index := make(map[segmeta.ID]int32, m)
	for k, s := range order {
		ids[k] = s.ID()
		index[ids[k]] = int32(k)
	}
	held := make([]uint64, m*words) // per segment, a bit set of the servers holding it now
	for i := range p.srv {
		for id := range p.srv[i].Held {
			if k, ok := index[id]; ok {
				held[int(k)*words+i/64] |= 1 << (i % 64)
			}
		}
	}

	// Place targets, newest first; kept copies do not take room from them.
	wanted := make([]bool, m)
	off := make([]int32, m+1) // targets of segment k: tgt[off[k]:off[k+1]]
	tgt := make([]int32, 0, 2*m)
	var buf []byte
	for k, seg := range order {
		w := want(seg)
		wanted[k] = w.Wanted()
		size := max(seg.Size, 0)
		start := len(tgt)
		if w.Broadcast {
			for i := range int32(n) {
				if !p.srv[i].Decommissioning && p.take(i, size) {
					tgt = append(tgt, i)
				}
			}
		} else if wanted[k] {
			buf = ids[k].AppendTo(buf[:0])
			h := xxhash.Sum64(buf)
			for tier, r := range w.Replicas {
				tgt = p.pick(tgt, p.tiers[tier], r, h, size)
			}
			slices.Sort(tgt[start:])
		}
		off[k+1] = int32(len(tgt))
	}

	// Emit in id order so that every Hold list comes out sorted.
	byID := make([]int32, m)
	for k := range byID {
		byID[k] = int32(k)
	}
	slices.SortFunc(byID, func(a, b int32) int { return ids[a].Compare(ids[b]) })
	plan := Plan{Hold: make(map[string][]*segmeta.DataSegment, n), Targets: make(map[segmeta.ID][]string, m)}
	hold := make([][]*segmeta.DataSegment, n)
	for i := range hold {
		hold[i] = make([]*segmeta.DataSegment, 0, p.count[i])
	}
	names := make([]string, len(tgt))
	isTgt := make([]uint64, words)
	for _, k := range byID {
		ts, hs := tgt[off[k]:off[k+1]], held[int(k)*words:int(k+1)*words]
		all := true
		for j, i := range ts {
			hold[i] = append(hold[i], order[k])
			names[int(off[k])+j] = p.srv[i].Name
			isTgt[i/64] |= 1 << (i % 64)
			all = all && hs[i/64]&(1<<(i%64)) != 0
		}
		if len(ts) > 0 {
			plan.Targets[ids[k]] = names[off[k]:off[k+1]:off[k+1]]
		}
		if wanted[k] && (len(ts) == 0 || !all) {
			for wi, word := range hs {
				for rest := word &^ isTgt[wi]; rest != 0; rest &= rest - 1 {
					i := wi*64 + bits.TrailingZeros64(rest)
					hold[i] = append(hold[i], order[k])
				}
			}
		}
		clear(isTgt)
	}
	for i, s := range p.srv {
		plan.Hold[s.Name] = hold[i]
	}
	return plan
}

// prioritySorted returns the distinct non-nil segments, newest first:
// interval end descending, then start descending, then id.
func prioritySorted(segs []*segmeta.DataSegment) []*segmeta.DataSegment {
	out := make([]*segmeta.DataSegment, 0, len(segs))
	for _, s := range segs {
		if s != nil {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *segmeta.DataSegment) int {
		if c := cmp.Compare(b.Interval.End, a.Interval.End); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Interval.Start, a.Interval.Start); c != 0 {
			return c
		}
		return a.ID().Compare(b.ID())
	})
	return slices.CompactFunc(out, func(a, b *segmeta.DataSegment) bool { return a.ID() == b.ID() })
}

type planner struct {
	srv   []Candidate // by name
	words int         // uint64 words of a server bit set
	hash  []uint64    // of each server's name
	tiers map[string][]int32
	used  []int64 // bytes placed on each server
	count []int   // targets placed on each server
	cand  []weighted
}

type weighted struct {
	w uint64
	i int32
}

func newPlanner(servers []Candidate) *planner {
	srv := slices.Clone(servers)
	slices.SortStableFunc(srv, func(a, b Candidate) int { return strings.Compare(a.Name, b.Name) })
	srv = slices.CompactFunc(srv, func(a, b Candidate) bool { return a.Name == b.Name })
	n := len(srv)
	p := &planner{srv: srv, words: (n + 63) / 64, hash: make([]uint64, n), tiers: map[string][]int32{},
		used: make([]int64, n), count: make([]int, n), cand: make([]weighted, 0, n)}
	for i, s := range srv {
		p.hash[i] = xxhash.Sum64String(s.Name)
		if !s.Decommissioning {
			p.tiers[s.Tier] = append(p.tiers[s.Tier], int32(i))
		}
	}
	return p
}

// take places the segment of size bytes on server i if it has room.
func (p *planner) take(i int32, size int64) bool {
	if max := p.srv[i].MaxSize; max > 0 && p.used[i]+size > max {
		return false
	}
	p.used[i] += size
	p.count[i]++
	return true
}

// pick appends up to r of members with room, by descending rendezvous weight
// of the segment hashed h.
func (p *planner) pick(dst []int32, members []int32, r int, h uint64, size int64) []int32 {
	c := p.cand[:0]
	for _, i := range members {
		c = append(c, weighted{mix(h ^ p.hash[i]), i})
	}
	// Repeated selection beats sorting while servers have room; once a few
	// turn out full, sort the rest and walk them.
	for tries := 0; r > 0 && len(c) > 0; tries++ {
		if tries == 4 {
			slices.SortFunc(c, heavier)
			for _, x := range c {
				if r == 0 {
					break
				}
				if p.take(x.i, size) {
					dst, r = append(dst, x.i), r-1
				}
			}
			break
		}
		b := 0
		for j := range c {
			if heavier(c[j], c[b]) < 0 {
				b = j
			}
		}
		x := c[b]
		c[b] = c[len(c)-1]
		c = c[:len(c)-1]
		if p.take(x.i, size) {
			dst, r = append(dst, x.i), r-1
		}
	}
	return dst
}

// heavier orders by weight descending, ties by server index.
func heavier(a, b weighted) int {
	if c := cmp.Compare(b.w, a.w); c != 0 {
		return c
	}
	return cmp.Compare(a.i, b.i)
}

// mix is murmur3's 64-bit finalizer: every bit of the result depends on
// every bit of the segment and server hashes combined.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb93fe53ec22b
	return h ^ h>>33
}
