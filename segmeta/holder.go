package segmeta

import (
	"cmp"
	"slices"

	"strata/interval"
)

// entry holds the segments of one (interval, version) of a datasource: the
// time chunk's partitions (Druid's TimelineEntry with its PartitionHolder).
// segs and visible are copy-on-write, so slices handed out by lookups stay
// valid after later changes.
type entry struct {
	iv       interval.Interval
	version  string
	segs     []*DataSegment // sorted by partition number
	visible  []*DataSegment // visible chunks in root-partition order; may alias segs
	complete bool           // the visible chunks form a complete set
	hasData  bool           // some visible chunk is not a tombstone
	maxMinor int16          // largest minor version among visible chunks
}

// refresh recomputes the derived state after segs changed.
func (e *entry) refresh() {
	e.visible = visibleChunks(e.segs)
	e.complete = isComplete(e.visible)
	e.hasData = false
	e.maxMinor = 0
	for _, s := range e.visible {
		if !s.IsTombstone() {
			e.hasData = true
		}
		e.maxMinor = max(e.maxMinor, s.ShardSpec.Minor())
	}
}

// visibleChunks resolves atomic update groups (segment-lock overwrites within
// one version). A group is the segments sharing root partition range and
// minor version; it is full when it holds atomicUpdateGroupSize segments.
// Visible are the full groups that no full group with a higher minor version
// and a covering root range overshadows. Druid's OvershadowableManager also
// falls back to incomplete groups in some histories; that only ever makes the
// chunk incomplete, which this rule yields too, without depending on history.
func visibleChunks(segs []*DataSegment) []*DataSegment {
	overwrite := false
	for _, s := range segs {
		if s.ShardSpec.Type == ShardNumberedOverwrite {
			overwrite = true
			break
		}
	}
	if !overwrite {
		return segs // every segment is its own full group of minor version 0
	}
	type aug struct {
		start, end int32
		minor      int16
		members    []*DataSegment
	}
	type augKey struct {
		start, end int32
		minor      int16
	}
	var groups, overwriters []*aug
	byKey := map[augKey]*aug{}
	for _, s := range segs {
		st, en := s.ShardSpec.RootPartitionRange()
		k := augKey{st, en, s.ShardSpec.Minor()}
		g := byKey[k]
		if g == nil {
			g = &aug{start: st, end: en, minor: k.minor}
			byKey[k] = g
			groups = append(groups, g) // first-appearance order: deterministic
		}
		g.members = append(g.members, s)
	}
	full := func(g *aug) bool { return len(g.members) == g.members[0].ShardSpec.augSize() }
	for _, g := range groups {
		if g.minor > 0 && full(g) {
			overwriters = append(overwriters, g)
		}
	}
	var out []*DataSegment
	for _, g := range groups {
		if !full(g) {
			continue
		}
		shadowed := false
		for _, h := range overwriters {
			if h.minor > g.minor && h.start <= g.start && h.end >= g.end {
				shadowed = true
				break
			}
		}
		if !shadowed {
			out = append(out, g.members...)
		}
	}
	slices.SortFunc(out, func(a, b *DataSegment) int {
		as, ae := a.ShardSpec.RootPartitionRange()
		bs, be := b.ShardSpec.RootPartitionRange()
		return cmp.Or(cmp.Compare(as, bs), cmp.Compare(ae, be), cmp.Compare(a.ShardSpec.PartitionNum, b.ShardSpec.PartitionNum))
	})
	return out
}

// isComplete is PartitionHolder.isComplete: the first visible chunk must
// start the set and a chain of abutting chunks must reach one that ends it.
func isComplete(visible []*DataSegment) bool {
	if len(visible) == 0 {
		return false
	}
	cur := visible[0].ShardSpec
	if !cur.chunkIsStart() {
		return false
	}
	if cur.chunkIsEnd() {
		return true
	}
	for _, s := range visible[1:] {
		next := s.ShardSpec
		if !cur.chunkAbuts(next) {
			return false
		}
		if next.chunkIsEnd() {
			return true
		}
		cur = next
	}
	return false
}

// overshadowsChunk reports whether a visible chunk of e overshadows a
// segment of the same version (a higher minor version whose root range
// covers the segment's, as in DataSegment.overshadows).
func (e *entry) overshadowsChunk(s *DataSegment) bool {
	minor := s.ShardSpec.Minor()
	if e.maxMinor <= minor {
		return false
	}
	st, en := s.ShardSpec.RootPartitionRange()
	for _, v := range e.visible {
		vs, ve := v.ShardSpec.RootPartitionRange()
		if v.ShardSpec.Minor() > minor && vs <= st && ve >= en {
			return true
		}
	}
	return false
}

// beats orders complete entries competing for the same instant: the higher
// version wins. Druid refuses overlapping entries of one version; here the
// tie goes to the later start, then the earlier end, so the result never
// depends on the order segments arrived in.
func (e *entry) beats(o *entry) bool {
	if c := cmp.Compare(e.version, o.version); c != 0 {
		return c > 0
	}
	if e.iv.Start != o.iv.Start {
		return e.iv.Start > o.iv.Start
	}
	return e.iv.End < o.iv.End
}

// mergeSegs returns a new slice holding old plus run (both sorted by
// partition number); a run segment replaces an old one with the same
// partition, and within run the last of equal partitions wins. It also
// returns how many partitions are new.
func mergeSegs(old, run []*DataSegment) ([]*DataSegment, int) {
	out := make([]*DataSegment, 0, len(old)+len(run))
	added := 0
	i, j := 0, 0
	for i < len(old) || j < len(run) {
		switch {
		case j == len(run) || (i < len(old) && old[i].ShardSpec.PartitionNum < run[j].ShardSpec.PartitionNum):
			out = append(out, old[i])
			i++
		default:
			p := run[j].ShardSpec.PartitionNum
			for j+1 < len(run) && run[j+1].ShardSpec.PartitionNum == p {
				j++
			}
			if i < len(old) && old[i].ShardSpec.PartitionNum == p {
				i++
			} else {
				added++
			}
			out = append(out, run[j])
			j++
		}
	}
	return out, added
}
