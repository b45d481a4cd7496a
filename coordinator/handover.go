package coordinator

import (
	"slices"
	"time"

	"strata/segmeta"
)

// handover keeps the outgoing version of a time chunk loaded until its
// replacement is, so that brokers switch each chunk from one complete
// version to the next and never answer from a gap or a mix.
//
// A REPLACE (or a reindex, a Kafka hand-off, a mark used/unused) changes
// the used timeline at once, but loading the new segments takes time. The
// brokers only see what the historicals announce, and a new chunk counts
// for them only once all its partitions are announced; until then they
// answer from the old chunk, as long as some historical still serves it.
// So a segment that leaves the served view is held where it is while the
// segments now visible over its interval are not all loaded somewhere, and
// for Delay after they are, so that every broker has polled the new ones
// before the old ones go (brokers poll each historical every 250 ms by
// default). Segments that nothing replaces (marked unused without a newer
// version beneath, or matched by a drop rule) go at once: the data is meant
// to disappear.
//
// What a historical holds is learned by polling it, so the inventory lags:
// a historical may have loaded a segment the leader does not know it holds
// yet. The segments the previous plan asked a historical to hold therefore
// count as held by it too; otherwise a REPLACE published right after a load
// would take the old version away unseen.
type handover struct {
	readySince map[segmeta.ID]time.Time          // outgoing segment → when its replacement was first seen loaded
	assigned   map[string][]*segmeta.DataSegment // the hold lists of the last plan, by server
	leader     time.Time                         // the leadership they belong to
}

// outgoing is a segment held by reachable historicals that is no longer in
// the served view.
type outgoing struct {
	seg     *segmeta.DataSegment
	holders []string
}

// replacement describes what now answers over an outgoing segment's
// interval: the segments visible there in the used timeline and, per
// segment, whether any retention rule loads it.
type replacement func(seg *segmeta.DataSegment) (visible []*segmeta.DataSegment, wanted func(*segmeta.DataSegment) bool)

// keep adds to plan's hold lists the outgoing segments whose replacement is
// not ready yet (marked KeepOnly: the inventory and the last plan may be
// stale, so a listed server may have dropped one already and must not load
// it again), and returns when the plan must be recomputed because a
// replacement's Delay runs out (zero: not for the handover). inServed
// reports whether a segment is in the served view.
func (h *handover) keep(plan Plan, cands []Candidate, inServed func(segmeta.ID) bool, repl replacement, delay time.Duration, now time.Time) (Plan, time.Time) {
	out := outgoingOf(cands, h.assigned, inServed)
	if len(out) == 0 {
		h.readySince, h.assigned = nil, plan.Hold
		return plan, time.Time{}
	}
	// What the brokers can see: a timeline of everything loaded, per
	// datasource with outgoing segments. An outgoing segment it overshadows
	// answers no query already.
	loaded := map[string]*segmeta.Timeline{}
	for _, o := range out {
		ds := o.seg.DataSource
		if loaded[ds] != nil {
			continue
		}
		tl := segmeta.NewTimeline(ds)
		var segs []*segmeta.DataSegment
		for _, c := range cands {
			for id, seg := range c.Held {
				if id.DataSource == ds {
					segs = append(segs, seg)
				}
			}
		}
		if _, err := tl.Add(prioritySorted(segs)); err != nil {
			continue // unreachable: announced segments are valid; without a view, keep nothing
		}
		loaded[ds] = tl
	}
	heldSomewhere := func(id segmeta.ID) bool {
		for _, c := range cands {
			if _, ok := c.Held[id]; ok {
				return true
			}
		}
		return false
	}
	next := map[segmeta.ID]time.Time{}
	var recheck time.Time
	touched := map[string]bool{}
	for _, o := range out {
		id := o.seg.ID()
		// Ready: what replaces the segment is loaded (it overshadows the
		// segment among the loaded ones, or every segment now visible over
		// its interval that a rule loads is held somewhere).
		ready := true
		if tl := loaded[o.seg.DataSource]; tl != nil && !tl.IsOvershadowed(o.seg) {
			visible, wanted := repl(o.seg)
			for _, t := range visible {
				if wanted(t) && !heldSomewhere(t.ID()) {
					ready = false
					break
				}
			}
		}
		if ready {
			since, ok := h.readySince[id]
			if !ok {
				since = now
			}
			until := since.Add(delay)
			if !now.Before(until) {
				continue // replaced and seen by the brokers: let it go
			}
			next[id] = since
			if recheck.IsZero() || until.Before(recheck) {
				recheck = until
			}
		}
		for _, name := range o.holders {
			plan.Hold[name] = append(slices.Clip(plan.Hold[name]), o.seg)
			touched[name] = true
		}
		if plan.KeepOnly == nil {
			plan.KeepOnly = map[segmeta.ID]bool{}
		}
		plan.KeepOnly[id] = true
	}
	h.readySince, h.assigned = next, plan.Hold
	for name := range touched {
		hold := plan.Hold[name]
		slices.SortFunc(hold, func(a, b *segmeta.DataSegment) int { return a.ID().Compare(b.ID()) })
		plan.Hold[name] = slices.CompactFunc(hold, func(a, b *segmeta.DataSegment) bool { return a.ID() == b.ID() })
	}
	return plan, recheck
}

// outgoingOf lists the segments not in the served view that candidates
// hold or were last asked to hold, in id order, each with the names of
// those candidates.
func outgoingOf(cands []Candidate, assigned map[string][]*segmeta.DataSegment, inServed func(segmeta.ID) bool) []outgoing {
	byID := map[segmeta.ID]*outgoing{}
	add := func(name string, id segmeta.ID, seg *segmeta.DataSegment) {
		if inServed(id) {
			return
		}
		o := byID[id]
		if o == nil {
			o = &outgoing{seg: seg}
			byID[id] = o
		}
		if !slices.Contains(o.holders, name) {
			o.holders = append(o.holders, name)
		}
	}
	for _, c := range cands {
		for id, seg := range c.Held {
			add(c.Name, id, seg)
		}
		for _, seg := range assigned[c.Name] {
			add(c.Name, seg.ID(), seg)
		}
	}
	out := make([]outgoing, 0, len(byID))
	for _, o := range byID {
		slices.Sort(o.holders)
		out = append(out, *o)
	}
	slices.SortFunc(out, func(a, b outgoing) int { return a.seg.ID().Compare(b.seg.ID()) })
	return out
}
