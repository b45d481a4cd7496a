package segmeta

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"strata/interval"
)

// Timeline is the versioned timeline of one datasource (Druid's
// VersionedIntervalTimeline): it knows every used segment and, for any
// instant, which (interval, version) chunk is visible there.
//
// Visibility: the segments of one interval and version form a chunk; a chunk
// counts only when complete (see isComplete). At each instant the complete
// chunk with the highest version (string order) among those covering it is
// visible, so a newer version overshadows an older one only where they
// overlap and the older one serves the rest. Tombstone chunks take part like
// any other and read empty (Holder.HasData is false).
//
// The visible timeline is stored as sorted, non-overlapping maximal pieces,
// so a lookup costs a binary search plus the pieces it returns. Changes
// recompute only the time ranges of chunks whose completeness changed.
//
// A Timeline is not safe for concurrent use; readers and writers need an
// external lock. Results of lookups stay valid (and unchanged) after later
// updates.
type Timeline struct {
	dataSource string
	groups     map[interval.Interval]*group
	// byClass indexes groups by duration class k (duration in [2^k, 2^(k+1)))
	// sorted by (start, end): the groups overlapping a range then lie in a
	// bounded start window per class.
	byClass   [64]chunkList[*group]
	classMask uint64
	pieces    chunkList[piece]
	size      int
	// scratch buffers reused by updates
	cands  []*entry
	bounds []int64
	out    []piece
}

// group holds the entries of one exact interval, sorted by version.
type group struct {
	iv      interval.Interval
	entries []*entry
}

// piece is a maximal run of time where one entry is visible.
type piece struct {
	start, end int64
	e          *entry
}

// Holder is one visible piece of the timeline returned by a lookup.
type Holder struct {
	Interval     interval.Interval // the piece, clipped to the lookup interval
	TrueInterval interval.Interval // the chunk's own interval
	Version      string
	// Segments are the chunk's visible partitions in partition order. The
	// slice is shared: do not modify it.
	Segments []*DataSegment
	HasData  bool // false when every segment is a tombstone
}

// NewTimeline returns an empty timeline for dataSource.
func NewTimeline(dataSource string) *Timeline {
	return &Timeline{dataSource: dataSource, groups: map[interval.Interval]*group{}}
}

// DataSource returns the timeline's datasource.
func (t *Timeline) DataSource() string { return t.dataSource }

// Len returns the number of segments in the timeline.
func (t *Timeline) Len() int { return t.size }

func durationClass(iv interval.Interval) int {
	return bits.Len64(uint64(iv.End)-uint64(iv.Start)) - 1
}

// compareInChunk orders segments of one datasource by interval, version and
// partition, which groups each chunk's segments together.
func compareInChunk(a, b *DataSegment) int {
	return cmp.Or(cmp.Compare(a.Interval.Start, b.Interval.Start), cmp.Compare(a.Interval.End, b.Interval.End),
		strings.Compare(a.Version, b.Version), cmp.Compare(a.ShardSpec.PartitionNum, b.ShardSpec.PartitionNum))
}

func (t *Timeline) check(s *DataSegment) error {
	if s == nil {
		return errors.New("segment: nil segment")
	}
	if s.DataSource != t.dataSource {
		return fmt.Errorf("segment: %s does not belong to datasource %q", s.ID(), t.dataSource)
	}
	if s.Interval.IsEmpty() {
		return fmt.Errorf("segment: %s has an empty interval", s.ID())
	}
	return s.Validate()
}

// Add adds segments (a publish or mark-used batch) and returns how many were
// new; a segment whose id is already present replaces the stored one. If any
// segment is invalid nothing is added.
func (t *Timeline) Add(segs []*DataSegment) (int, error) {
	for _, s := range segs {
		if err := t.check(s); err != nil {
			return 0, err
		}
	}
	batch := slices.Clone(segs)
	slices.SortStableFunc(batch, compareInChunk)
	var dirty []interval.Interval
	added := 0
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].Interval == batch[i].Interval && batch[j].Version == batch[i].Version {
			j++
		}
		e := t.entryFor(batch[i].Interval, batch[i].Version, true)
		was := e.complete
		var n int
		e.segs, n = mergeSegs(e.segs, batch[i:j])
		added += n
		e.refresh()
		if e.complete != was {
			dirty = append(dirty, e.iv)
		}
		i = j
	}
	t.size += added
	t.refreshRanges(dirty)
	return added, nil
}

// Remove removes the segments with the given ids (mark unused, kill) and
// returns how many were present.
func (t *Timeline) Remove(ids []ID) int {
	batch := make([]ID, 0, len(ids))
	for _, id := range ids {
		if id.DataSource == t.dataSource {
			batch = append(batch, id)
		}
	}
	slices.SortFunc(batch, ID.Compare)
	var dirty []interval.Interval
	removed := 0
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].Interval == batch[i].Interval && batch[j].Version == batch[i].Version {
			j++
		}
		run := batch[i:j]
		i = j
		e := t.entryFor(run[0].Interval, run[0].Version, false)
		if e == nil {
			continue
		}
		kept := make([]*DataSegment, 0, len(e.segs))
		r := 0
		for _, s := range e.segs {
			for r < len(run) && run[r].PartitionNum < s.ShardSpec.PartitionNum {
				r++
			}
			if r < len(run) && run[r].PartitionNum == s.ShardSpec.PartitionNum {
				continue
			}
			kept = append(kept, s)
		}
		if len(kept) == len(e.segs) {
			continue
		}
		removed += len(e.segs) - len(kept)
		was := e.complete
		if len(kept) == 0 {
			t.dropEntry(e)
			e.segs, e.visible, e.complete, e.hasData = nil, nil, false, false
		} else {
			e.segs = kept
			e.refresh()
		}
		if e.complete != was {
			dirty = append(dirty, e.iv)
		}
	}
	t.size -= removed
	t.refreshRanges(dirty)
	return removed
}

// entryFor finds (or with create, makes) the entry of an interval and version.
func (t *Timeline) entryFor(iv interval.Interval, version string, create bool) *entry {
	g := t.groups[iv]
	if g == nil {
		if !create {
			return nil
		}
		g = &group{iv: iv}
		t.groups[iv] = g
		k := durationClass(iv)
		l := &t.byClass[k]
		p := l.search(func(x **group) bool { return compareIntervals((*x).iv, iv) < 0 })
		l.replace(p, 0, []*group{g})
		t.classMask |= 1 << k
	}
	i, found := slices.BinarySearchFunc(g.entries, version, func(e *entry, v string) int { return strings.Compare(e.version, v) })
	if found {
		return g.entries[i]
	}
	if !create {
		return nil
	}
	e := &entry{iv: iv, version: version}
	g.entries = slices.Insert(g.entries, i, e)
	return e
}

// dropEntry removes an emptied entry, and its group when that empties too.
func (t *Timeline) dropEntry(e *entry) {
	g := t.groups[e.iv]
	i := slices.Index(g.entries, e)
	g.entries = slices.Delete(g.entries, i, i+1)
	if len(g.entries) > 0 {
		return
	}
	delete(t.groups, g.iv)
	k := durationClass(g.iv)
	l := &t.byClass[k]
	p := l.search(func(x **group) bool { return compareIntervals((*x).iv, g.iv) < 0 })
	l.replace(p, 1, nil)
	if l.len() == 0 {
		t.classMask &^= 1 << k
	}
}

func compareIntervals(a, b interval.Interval) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
}

// best returns the group's highest-version complete entry, or nil.
func (g *group) best() *entry {
	for i := len(g.entries) - 1; i >= 0; i-- {
		if g.entries[i].complete {
			return g.entries[i]
		}
	}
	return nil
}

// forGroupsOverlapping calls fn for every group overlapping [a, b).
func (t *Timeline) forGroupsOverlapping(a, b int64, fn func(*group)) {
	for mask := t.classMask; mask != 0; mask &= mask - 1 {
		k := bits.TrailingZeros64(mask)
		// Durations in class k are below 2^(k+1): a group starting at or
		// before a-2^(k+1) ends before a.
		lo := int64(math.MinInt64)
		if k < 62 {
			if span := int64(1) << (k + 1); a >= math.MinInt64+span {
				lo = a - span + 1
			}
		}
		l := &t.byClass[k]
		for p := l.search(func(x **group) bool { return (*x).iv.Start < lo }); l.valid(p); p = l.next(p) {
			g := *l.at(p)
			if g.iv.Start >= b {
				break
			}
			if g.iv.End > a {
				fn(g)
			}
		}
	}
}

// refreshRanges recomputes the visible pieces over the given time ranges.
func (t *Timeline) refreshRanges(dirty []interval.Interval) {
	if len(dirty) == 0 {
		return
	}
	slices.SortFunc(dirty, compareIntervals)
	cur := dirty[0]
	for _, r := range dirty[1:] {
		if r.Start <= cur.End {
			cur.End = max(cur.End, r.End)
			continue
		}
		t.recompute(cur.Start, cur.End)
		cur = r
	}
	t.recompute(cur.Start, cur.End)
}

// recompute rebuilds the pieces covering [a, b), widened to whole pieces at
// both ends so that only whole pieces are replaced.
func (t *Timeline) recompute(a, b int64) {
	pl := &t.pieces
	p := pl.search(func(x *piece) bool { return x.end <= a })
	k := 0
	for q := p; pl.valid(q); q = pl.next(q) {
		x := pl.at(q)
		if x.start >= b {
			break
		}
		if k == 0 {
			a = min(a, x.start)
		}
		b = max(b, x.end)
		k++
	}
	out := t.envelope(a, b)
	// Keep pieces maximal: absorb a neighbour showing the same entry.
	if len(out) > 0 {
		if pp, ok := pl.prev(p); ok {
			if x := pl.at(pp); x.end == out[0].start && x.e == out[0].e {
				out[0].start = x.start
				p = pp
				k++
			}
		}
		q := p
		for range k {
			q = pl.next(q)
		}
		if pl.valid(q) {
			if x := pl.at(q); x.start == out[len(out)-1].end && x.e == out[len(out)-1].e {
				out[len(out)-1].end = x.end
				k++
			}
		}
	}
	pl.replace(p, k, out)
	clear(out)
	t.out = out[:0]
}

// envelope computes the visible pieces within [a, b) from scratch: at each
// instant the winning complete entry among the groups covering it.
func (t *Timeline) envelope(a, b int64) []piece {
	cands := t.cands[:0]
	t.forGroupsOverlapping(a, b, func(g *group) {
		if e := g.best(); e != nil {
			cands = append(cands, e)
		}
	})
	out := t.out[:0]
	switch len(cands) {
	case 0:
	case 1:
		out = append(out, piece{max(a, cands[0].iv.Start), min(b, cands[0].iv.End), cands[0]})
	default:
		out = t.sweep(a, b, cands, out)
	}
	clear(cands)
	t.cands = cands[:0]
	return out
}

// sweep computes the upper envelope of several candidates over [a, b).
func (t *Timeline) sweep(a, b int64, cands []*entry, out []piece) []piece {
	bounds := t.bounds[:0]
	for _, e := range cands {
		bounds = append(bounds, max(a, e.iv.Start), min(b, e.iv.End))
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	slices.SortFunc(cands, func(x, y *entry) int { return cmp.Compare(x.iv.Start, y.iv.Start) })
	var h entryHeap
	next := 0
	for i := 0; i+1 < len(bounds); i++ {
		x, y := bounds[i], bounds[i+1]
		for next < len(cands) && max(a, cands[next].iv.Start) <= x {
			h.push(cands[next])
			next++
		}
		for len(h) > 0 && h[0].iv.End <= x {
			h.pop()
		}
		if len(h) == 0 {
			continue
		}
		top := h[0]
		if n := len(out); n > 0 && out[n-1].e == top && out[n-1].end == x {
			out[n-1].end = y
		} else {
			out = append(out, piece{x, y, top})
		}
	}
	t.bounds = bounds[:0]
	return out
}

// entryHeap is a binary max-heap by entry.beats.
type entryHeap []*entry

func (h *entryHeap) push(e *entry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].beats(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *entryHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s[n] = nil
	s = s[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s[l].beats(s[m]) {
			m = l
		}
		if r < n && s[r].beats(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
}

// Lookup returns the visible pieces overlapping iv in time order, each
// clipped to iv (Druid's lookup): the complete chunks that answer a query
// over iv, including tombstone pieces (HasData false).
func (t *Timeline) Lookup(iv interval.Interval) []Holder {
	var out []Holder
	t.LookupFunc(iv, func(h Holder) bool {
		out = append(out, h)
		return true
	})
	return out
}

// LookupFunc calls fn for each visible piece overlapping iv until fn
// returns false.
func (t *Timeline) LookupFunc(iv interval.Interval, fn func(Holder) bool) {
	if iv.IsEmpty() {
		return
	}
	pl := &t.pieces
	for p := pl.search(func(x *piece) bool { return x.end <= iv.Start }); pl.valid(p); p = pl.next(p) {
		x := pl.at(p)
		if x.start >= iv.End {
			return
		}
		h := Holder{
			Interval:     interval.Interval{Start: max(x.start, iv.Start), End: min(x.end, iv.End)},
			TrueInterval: x.e.iv,
			Version:      x.e.version,
			Segments:     x.e.visible,
			HasData:      x.e.hasData,
		}
		if !fn(h) {
			return
		}
	}
}

// VisibleSegments returns the distinct segments visible somewhere in iv,
// sorted by id (Druid's findNonOvershadowedObjectsInInterval).
func (t *Timeline) VisibleSegments(iv interval.Interval) []*DataSegment {
	if iv.IsEmpty() {
		return nil
	}
	var out []*DataSegment
	var last *entry
	pl := &t.pieces
	for p := pl.search(func(x *piece) bool { return x.end <= iv.Start }); pl.valid(p); p = pl.next(p) {
		x := pl.at(p)
		if x.start >= iv.End {
			break
		}
		if x.e != last {
			out = append(out, x.e.visible...)
			last = x.e
		}
	}
	slices.SortFunc(out, func(a, b *DataSegment) int { return compareInChunk(a, b) })
	return slices.Compact(out)
}

// Get returns the segment with the given id, or nil.
func (t *Timeline) Get(id ID) *DataSegment {
	if id.DataSource != t.dataSource {
		return nil
	}
	e := t.entryFor(id.Interval, id.Version, false)
	if e == nil {
		return nil
	}
	i, found := slices.BinarySearchFunc(e.segs, id.PartitionNum, func(s *DataSegment, p int32) int {
		return cmp.Compare(s.ShardSpec.PartitionNum, p)
	})
	if !found {
		return nil
	}
	return e.segs[i]
}

// IsOvershadowed reports whether seg (in the timeline or not) is
// overshadowed: every instant of its interval is covered by visible chunks of
// a higher version, or of its own version holding a visible chunk that
// overshadows it (segment-lock minor versions). A segment that is itself
// visible is never overshadowed.
func (t *Timeline) IsOvershadowed(seg *DataSegment) bool {
	if seg.DataSource != t.dataSource || seg.Interval.IsEmpty() {
		return false
	}
	return t.coveredAbove(seg.Interval, seg.Version, func(e *entry) bool { return e.overshadowsChunk(seg) })
}

// coveredAbove walks the pieces over iv and reports whether each has a
// version above version, or equal with sameVersion(entry) true.
func (t *Timeline) coveredAbove(iv interval.Interval, version string, sameVersion func(*entry) bool) bool {
	pl := &t.pieces
	cur := iv.Start
	for p := pl.search(func(x *piece) bool { return x.end <= iv.Start }); cur < iv.End; p = pl.next(p) {
		if !pl.valid(p) {
			return false
		}
		x := pl.at(p)
		if x.start > cur {
			return false // a gap
		}
		switch c := strings.Compare(version, x.e.version); {
		case c > 0:
			return false
		case c == 0 && !sameVersion(x.e):
			return false
		}
		cur = x.end
	}
	return true
}

// Overshadowed returns every overshadowed segment of the timeline, sorted by
// id (the segments the coordinator marks unused).
func (t *Timeline) Overshadowed() []*DataSegment {
	var out []*DataSegment
	t.forEachEntry(func(e *entry) bool {
		// One walk decides for the whole chunk unless a piece of the same
		// version has segment-lock minor versions.
		if t.coveredAbove(e.iv, e.version, func(*entry) bool { return false }) {
			out = append(out, e.segs...)
			return true
		}
		minors := false
		if !t.coveredAbove(e.iv, e.version, func(x *entry) bool { minors = minors || x.maxMinor > 0; return true }) || !minors {
			return true
		}
		for _, s := range e.segs {
			if t.IsOvershadowed(s) {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// Segments calls fn for every segment in id order until fn returns false.
func (t *Timeline) Segments(fn func(*DataSegment) bool) {
	t.forEachEntry(func(e *entry) bool {
		for _, s := range e.segs {
			if !fn(s) {
				return false
			}
		}
		return true
	})
}

// forEachEntry visits entries in (start, end, version) order, merging the
// per-class group lists, until fn returns false.
func (t *Timeline) forEachEntry(fn func(*entry) bool) {
	type cursor struct {
		l *chunkList[*group]
		p cpos
	}
	var cs []cursor
	for mask := t.classMask; mask != 0; mask &= mask - 1 {
		l := &t.byClass[bits.TrailingZeros64(mask)]
		cs = append(cs, cursor{l, cpos{}})
	}
	for {
		best := -1
		for i, c := range cs {
			if !c.l.valid(c.p) {
				continue
			}
			if best < 0 || compareIntervals((*c.l.at(c.p)).iv, (*cs[best].l.at(cs[best].p)).iv) < 0 {
				best = i
			}
		}
		if best < 0 {
			return
		}
		g := *cs[best].l.at(cs[best].p)
		cs[best].p = cs[best].l.next(cs[best].p)
		for _, e := range g.entries {
			if !fn(e) {
				return
			}
		}
	}
}
