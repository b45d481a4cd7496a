package segmeta

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"strata/interval"
)

const hour = int64(3600_000)

func iv(a, b int64) interval.Interval { return interval.Interval{Start: a * hour, End: b * hour} }

func mk(ds string, i interval.Interval, version string, sp ShardSpec) *DataSegment {
	s := &DataSegment{DataSource: ds, Interval: i, Version: version, ShardSpec: sp, Size: 1,
		LoadSpec: `{"type":"local"}`, BinaryVersion: NullInt32{V: 9, Valid: true}}
	s.Intern()
	return s
}

func num(p, n int32) ShardSpec { return NumberedShard(p, n) }

func ids(segs ...*DataSegment) []ID {
	out := make([]ID, len(segs))
	for i, s := range segs {
		out[i] = s.ID()
	}
	return out
}

func add(t *testing.T, tl *Timeline, segs ...*DataSegment) {
	t.Helper()
	if _, err := tl.Add(segs); err != nil {
		t.Fatal(err)
	}
	checkPieces(t, tl)
}

// render prints a lookup compactly: [start,end)version:partitions per holder.
func render(hs []Holder) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "[%d,%d)%s:", h.Interval.Start/hour, h.Interval.End/hour, h.Version)
		for i, s := range h.Segments {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, s.ShardSpec.PartitionNum)
		}
		if !h.HasData {
			b.WriteString("(empty)")
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// checkPieces verifies the stored pieces are sorted, disjoint and maximal.
func checkPieces(t testing.TB, tl *Timeline) {
	t.Helper()
	pl := &tl.pieces
	var prev *piece
	n := 0
	for p := (cpos{}); pl.valid(p); p = pl.next(p) {
		x := pl.at(p)
		if x.start >= x.end || !x.e.complete || len(x.e.segs) == 0 {
			t.Fatalf("bad piece %+v", *x)
		}
		if prev != nil && (prev.end > x.start || (prev.end == x.start && prev.e == x.e)) {
			t.Fatalf("pieces out of order or not maximal: %+v then %+v", *prev, *x)
		}
		prev = x
		n++
	}
	if n != pl.len() {
		t.Fatalf("piece count %d, list says %d", n, pl.len())
	}
}

func TestOverlappingVersions(t *testing.T) {
	tl := NewTimeline("wiki")
	v1 := mk("wiki", iv(0, 24), "v1", num(0, 1))
	v2 := mk("wiki", iv(0, 24), "v2", num(0, 1))
	add(t, tl, v1)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v1:0" {
		t.Errorf("got %s", got)
	}
	add(t, tl, v2)
	if got := render(tl.Lookup(iv(-5, 50))); got != "[0,24)v2:0" {
		t.Errorf("got %s", got)
	}
	if !tl.IsOvershadowed(v1) || tl.IsOvershadowed(v2) {
		t.Errorf("v1 must be overshadowed by v2")
	}
	if got := tl.Overshadowed(); len(got) != 1 || got[0] != v1 {
		t.Errorf("Overshadowed() = %v", got)
	}
	// Mark v2 unused: v1 serves again; mark it used again: v2 wins again.
	if n := tl.Remove(ids(v2)); n != 1 {
		t.Errorf("removed %d", n)
	}
	checkPieces(t, tl)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v1:0" || tl.IsOvershadowed(v1) {
		t.Errorf("after removing v2: %s", got)
	}
	add(t, tl, v2)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v2:0" {
		t.Errorf("after re-adding v2: %s", got)
	}
	if tl.Len() != 2 {
		t.Errorf("len %d", tl.Len())
	}
}

func TestPartialOvershadow(t *testing.T) {
	tl := NewTimeline("wiki")
	month := mk("wiki", iv(0, 30), "v1", num(0, 1))
	mid := mk("wiki", iv(10, 15), "v2", num(0, 1))
	add(t, tl, month, mid)
	hs := tl.Lookup(iv(5, 20))
	if got := render(hs); got != "[5,10)v1:0 [10,15)v2:0 [15,20)v1:0" {
		t.Errorf("got %s", got)
	}
	if hs[0].TrueInterval != iv(0, 30) || hs[1].TrueInterval != iv(10, 15) {
		t.Errorf("true intervals %+v", hs)
	}
	if tl.IsOvershadowed(month) || tl.IsOvershadowed(mid) {
		t.Errorf("partially overshadowed segments are not overshadowed")
	}
	// A newer segment covering all of it overshadows both; removing it
	// restores the split view.
	all := mk("wiki", iv(0, 30), "v3", num(0, 1))
	add(t, tl, all)
	if got := render(tl.Lookup(iv(0, 30))); got != "[0,30)v3:0" {
		t.Errorf("got %s", got)
	}
	if !tl.IsOvershadowed(month) || !tl.IsOvershadowed(mid) {
		t.Errorf("both must be overshadowed")
	}
	tl.Remove(ids(all))
	checkPieces(t, tl)
	if got := render(tl.Lookup(iv(0, 30))); got != "[0,10)v1:0 [10,15)v2:0 [15,30)v1:0" {
		t.Errorf("got %s", got)
	}
	// An older segment under a newer one is overshadowed only where covered.
	old := mk("wiki", iv(12, 14), "v0", num(0, 1))
	add(t, tl, old)
	if !tl.IsOvershadowed(old) {
		t.Errorf("v0 inside v2's range must be overshadowed")
	}
	oldEdge := mk("wiki", iv(14, 16), "v0", num(0, 1))
	add(t, tl, oldEdge)
	if !tl.IsOvershadowed(oldEdge) {
		t.Errorf("v0 covered by v2 then v1 must be overshadowed")
	}
	outside := &DataSegment{DataSource: "wiki", Interval: iv(29, 31), Version: "v0"}
	if tl.IsOvershadowed(outside) {
		t.Errorf("a segment reaching past the data is not overshadowed")
	}
}

func TestCoreSetsAndAppends(t *testing.T) {
	tl := NewTimeline("wiki")
	base := mk("wiki", iv(0, 24), "v1", num(0, 1))
	add(t, tl, base)
	p0 := mk("wiki", iv(0, 24), "v2", num(0, 3))
	p1 := mk("wiki", iv(0, 24), "v2", num(1, 3))
	p2 := mk("wiki", iv(0, 24), "v2", num(2, 3))
	add(t, tl, p0, p1)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v1:0" {
		t.Errorf("incomplete v2 must not be visible: %s", got)
	}
	if tl.IsOvershadowed(base) || tl.IsOvershadowed(p0) {
		t.Errorf("nothing is overshadowed yet")
	}
	add(t, tl, p2)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v2:0,1,2" || !tl.IsOvershadowed(base) {
		t.Errorf("complete v2: %s", got)
	}
	// Appended partitions join while the core stays complete.
	a3 := mk("wiki", iv(0, 24), "v2", num(3, 3))
	a5 := mk("wiki", iv(0, 24), "v2", num(5, 3))
	add(t, tl, a5, a3)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v2:0,1,2,3,5" {
		t.Errorf("appended: %s", got)
	}
	// Losing a core partition hides the chunk, appended ones included.
	tl.Remove(ids(p1))
	checkPieces(t, tl)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v1:0" {
		t.Errorf("core partition missing: %s", got)
	}
	add(t, tl, p1)
	if got := render(tl.Lookup(iv(0, 24))); got != "[0,24)v2:0,1,2,3,5" {
		t.Errorf("core restored: %s", got)
	}

	// Only appended partitions, no core: incomplete.
	tl2 := NewTimeline("wiki")
	add(t, tl2, mk("wiki", iv(0, 1), "v1", num(2, 2)), mk("wiki", iv(0, 1), "v1", num(3, 2)))
	if got := render(tl2.Lookup(iv(0, 1))); got != "" {
		t.Errorf("appends without core: %s", got)
	}
	// partitions: 0 has no core requirement.
	add(t, tl2, mk("wiki", iv(1, 2), "v1", num(4, 0)))
	if got := render(tl2.Lookup(iv(0, 2))); got != "[1,2)v1:4" {
		t.Errorf("partitions 0: %s", got)
	}
	// linear never requires completeness.
	add(t, tl2, mk("wiki", iv(2, 3), "v1", LinearShard(3)), mk("wiki", iv(2, 3), "v1", LinearShard(7)))
	if got := render(tl2.Lookup(iv(2, 3))); got != "[2,3)v1:3,7" {
		t.Errorf("linear: %s", got)
	}
	// hashed and range with a known core behave like numbered.
	h := func(p int32) ShardSpec {
		return ShardSpec{Type: ShardHashed, PartitionNum: p, CorePartitions: 2,
			Detail: &ShardDetail{BucketID: p, NumBuckets: 2, Dimensions: []string{"d"}}}
	}
	add(t, tl2, mk("wiki", iv(3, 4), "v1", h(1)))
	if got := render(tl2.Lookup(iv(3, 4))); got != "" {
		t.Errorf("hashed incomplete: %s", got)
	}
	add(t, tl2, mk("wiki", iv(3, 4), "v1", h(0)))
	if got := render(tl2.Lookup(iv(3, 4))); got != "[3,4)v1:0,1" {
		t.Errorf("hashed complete: %s", got)
	}
}

func TestLegacyRangeChain(t *testing.T) {
	single := func(p int32, start, end *string) ShardSpec {
		d := &ShardDetail{Dimensions: []string{"page"}}
		if start != nil {
			d.Start = Bound{{S: *start, Valid: true}}
		}
		if end != nil {
			d.End = Bound{{S: *end, Valid: true}}
		}
		return ShardSpec{Type: ShardSingle, PartitionNum: p, CorePartitions: UnknownCorePartitions, Detail: d}
	}
	m, x := "m", "x"
	tl := NewTimeline("wiki")
	add(t, tl, mk("wiki", iv(0, 1), "v1", single(0, nil, &m)), mk("wiki", iv(0, 1), "v1", single(2, &x, nil)))
	if got := render(tl.Lookup(iv(0, 1))); got != "" {
		t.Errorf("gap in the chain must be incomplete: %s", got)
	}
	add(t, tl, mk("wiki", iv(0, 1), "v1", single(1, &m, &x)))
	if got := render(tl.Lookup(iv(0, 1))); got != "[0,1)v1:0,1,2" {
		t.Errorf("full chain: %s", got)
	}
}

func TestTombstones(t *testing.T) {
	tl := NewTimeline("wiki")
	data := mk("wiki", iv(0, 48), "v1", num(0, 1))
	tomb := mk("wiki", iv(24, 48), "v2", TombstoneShard())
	add(t, tl, data, tomb)
	hs := tl.Lookup(iv(0, 48))
	if got := render(hs); got != "[0,24)v1:0 [24,48)v2:0(empty)" {
		t.Errorf("got %s", got)
	}
	if tl.IsOvershadowed(data) {
		t.Errorf("data is only partly covered")
	}
	tomb2 := mk("wiki", iv(0, 24), "v2", TombstoneShard())
	add(t, tl, tomb2)
	if !tl.IsOvershadowed(data) {
		t.Errorf("tombstones overshadow")
	}
	if got := render(tl.Lookup(iv(0, 48))); got != "[0,24)v2:0(empty) [24,48)v2:0(empty)" {
		t.Errorf("got %s", got)
	}
	if got := tl.VisibleSegments(iv(0, 48)); len(got) != 2 || got[0] != tomb2 || got[1] != tomb {
		t.Errorf("VisibleSegments %v", got)
	}
}

func TestSegmentLockOverwrite(t *testing.T) {
	ow := func(p int32, minor, size int16) ShardSpec {
		return ShardSpec{Type: ShardNumberedOverwrite, PartitionNum: p, StartRootPartitionID: 0,
			EndRootPartitionID: 2, MinorVersion: minor, AtomicUpdateGroupSize: size}
	}
	tl := NewTimeline("wiki")
	r0 := mk("wiki", iv(0, 1), "v1", num(0, 2))
	r1 := mk("wiki", iv(0, 1), "v1", num(1, 2))
	o0 := mk("wiki", iv(0, 1), "v1", ow(32768, 1, 2))
	o1 := mk("wiki", iv(0, 1), "v1", ow(32769, 1, 2))
	add(t, tl, r0, r1, o0)
	if got := render(tl.Lookup(iv(0, 1))); got != "[0,1)v1:0,1" {
		t.Errorf("half an overwrite group stays invisible: %s", got)
	}
	if tl.IsOvershadowed(r0) || tl.IsOvershadowed(o0) {
		t.Errorf("nothing overshadowed yet")
	}
	add(t, tl, o1)
	if got := render(tl.Lookup(iv(0, 1))); got != "[0,1)v1:32768,32769" {
		t.Errorf("full overwrite group: %s", got)
	}
	if !tl.IsOvershadowed(r0) || !tl.IsOvershadowed(r1) || tl.IsOvershadowed(o1) {
		t.Errorf("root partitions must be overshadowed by the overwrite group")
	}
	if got := tl.Overshadowed(); len(got) != 2 || got[0] != r0 || got[1] != r1 {
		t.Errorf("Overshadowed() = %v", got)
	}
	tl.Remove(ids(o1))
	if got := render(tl.Lookup(iv(0, 1))); got != "[0,1)v1:0,1" {
		t.Errorf("falls back to the root partitions: %s", got)
	}
}

func TestSameVersionOverlapIsDeterministic(t *testing.T) {
	day := mk("wiki", iv(0, 24), "v1", num(0, 1))
	hr := mk("wiki", iv(5, 6), "v1", num(0, 1))
	for _, order := range [][]*DataSegment{{day, hr}, {hr, day}} {
		tl := NewTimeline("wiki")
		for _, s := range order {
			add(t, tl, s)
		}
		if got := render(tl.Lookup(iv(0, 24))); got != "[0,5)v1:0 [5,6)v1:0 [6,24)v1:0" {
			t.Errorf("got %s", got)
		}
		if hs := tl.Lookup(iv(5, 6)); hs[0].TrueInterval != iv(5, 6) {
			t.Errorf("the later-starting chunk wins the tie")
		}
	}
}

func TestAddRemoveEdgeCases(t *testing.T) {
	tl := NewTimeline("wiki")
	if _, err := tl.Add([]*DataSegment{mk("other", iv(0, 1), "v1", num(0, 1))}); err == nil {
		t.Errorf("foreign datasource accepted")
	}
	good := mk("wiki", iv(0, 1), "v1", num(0, 1))
	empty := mk("wiki", iv(1, 1), "v1", num(0, 1))
	if _, err := tl.Add([]*DataSegment{good, empty}); err == nil || tl.Len() != 0 {
		t.Errorf("a batch with an invalid segment must add nothing")
	}
	if _, err := tl.Add([]*DataSegment{good, nil}); err == nil {
		t.Errorf("nil accepted")
	}
	add(t, tl, good)
	// Re-adding the same id replaces the metadata without counting.
	again := mk("wiki", iv(0, 1), "v1", num(0, 1))
	again.Size = 99
	if n, _ := tl.Add([]*DataSegment{again, again}); n != 0 || tl.Get(good.ID()).Size != 99 || tl.Len() != 1 {
		t.Errorf("replace: n=%d len=%d", n, tl.Len())
	}
	if tl.Remove(ids(mk("wiki", iv(0, 1), "v1", num(1, 1)), mk("other", iv(0, 1), "v1", num(0, 1)))) != 0 {
		t.Errorf("removed unknown ids")
	}
	if tl.Remove(ids(good, good)) != 1 || tl.Len() != 0 || len(tl.Lookup(interval.Eternity)) != 0 || len(tl.groups) != 0 {
		t.Errorf("timeline not empty after removing everything")
	}
	if tl.classMask != 0 || tl.pieces.len() != 0 {
		t.Errorf("index not empty: mask %b pieces %d", tl.classMask, tl.pieces.len())
	}
	// Eternity-sized segments work like any other.
	eternal := mk("wiki", interval.Eternity, "v0", num(0, 1))
	add(t, tl, eternal, good)
	if got := tl.Lookup(iv(0, 2)); len(got) != 2 || got[0].Version != "v1" || got[1].Version != "v0" {
		t.Errorf("eternity: %s", render(got))
	}
	if len(tl.Lookup(interval.Interval{Start: 5, End: 5})) != 0 {
		t.Errorf("empty lookup interval returns nothing")
	}
}

func TestIndex(t *testing.T) {
	x := NewIndex()
	a := mk("b_ds", iv(0, 1), "v1", num(0, 1))
	b := mk("a_ds", iv(0, 1), "v1", num(0, 1))
	c := mk("a_ds", iv(0, 1), "v2", num(0, 1))
	if n, err := x.Add([]*DataSegment{a, b, c}); n != 3 || err != nil {
		t.Fatalf("add: %d %v", n, err)
	}
	if got := x.DataSources(); !slices.Equal(got, []string{"a_ds", "b_ds"}) {
		t.Errorf("datasources %v", got)
	}
	if !x.IsOvershadowed(b) || x.IsOvershadowed(a) || x.Get(c.ID()) != c || x.Len() != 3 {
		t.Errorf("index queries")
	}
	if got := render(x.Lookup("a_ds", iv(0, 1))); got != "[0,1)v2:0" {
		t.Errorf("lookup %s", got)
	}
	if _, err := x.Add([]*DataSegment{mk("z", iv(0, 1), "v", num(0, 1)), {DataSource: "", Interval: iv(0, 1)}}); err == nil || x.Len() != 3 {
		t.Errorf("invalid batch changed the index")
	}
	if x.Remove(ids(a, b)) != 2 || x.Timeline("b_ds") != nil || x.Len() != 1 {
		t.Errorf("remove")
	}
	var seen []*DataSegment
	x.Timeline("a_ds").Segments(func(s *DataSegment) bool { seen = append(seen, s); return true })
	if len(seen) != 1 || seen[0] != c {
		t.Errorf("segments %v", seen)
	}
	if _, err := x.Add([]*DataSegment{a, b}); err != nil {
		t.Fatal(err)
	}
	seen = nil
	x.Segments(func(s *DataSegment) bool { seen = append(seen, s); return true })
	if !slices.Equal(seen, []*DataSegment{b, c, a}) {
		t.Errorf("index segments not in id order: %v", seen)
	}
	seen = nil
	x.Segments(func(s *DataSegment) bool { seen = append(seen, s); return len(seen) < 2 })
	if len(seen) != 2 {
		t.Errorf("index segments did not stop: %d", len(seen))
	}
}

// --- property test against a brute-force model ---

type refModel map[*DataSegment]bool

// refEntries groups the model's segments into chunks with their state.
func (m refModel) entries() []*entry {
	byKey := map[string]*entry{}
	var out []*entry
	for s := range m {
		k := fmt.Sprint(s.Interval, s.Version)
		e := byKey[k]
		if e == nil {
			e = &entry{iv: s.Interval, version: s.Version}
			byKey[k] = e
			out = append(out, e)
		}
		e.segs = append(e.segs, s)
	}
	for _, e := range out {
		slices.SortFunc(e.segs, compareInChunk)
		e.refresh()
	}
	return out
}

// winner returns the visible complete entry at instant ms, or nil.
func refWinner(es []*entry, ms int64) *entry {
	var best *entry
	for _, e := range es {
		if e.complete && e.iv.ContainsTime(ms) && (best == nil || e.beats(best)) {
			best = e
		}
	}
	return best
}

type refPiece struct {
	start, end int64
	e          *entry
}

func refLookup(es []*entry, q interval.Interval) []refPiece {
	bounds := []int64{q.Start, q.End}
	for _, e := range es {
		for _, b := range []int64{e.iv.Start, e.iv.End} {
			if b > q.Start && b < q.End {
				bounds = append(bounds, b)
			}
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var out []refPiece
	for i := 0; i+1 < len(bounds); i++ {
		w := refWinner(es, bounds[i])
		if w == nil {
			continue
		}
		if n := len(out); n > 0 && out[n-1].end == bounds[i] && out[n-1].e.iv == w.iv && out[n-1].e.version == w.version {
			out[n-1].end = bounds[i+1]
		} else {
			out = append(out, refPiece{bounds[i], bounds[i+1], w})
		}
	}
	return out
}

func refOvershadowed(es []*entry, s *DataSegment) bool {
	for ms := s.Interval.Start; ms < s.Interval.End; ms += hour {
		w := refWinner(es, ms)
		if w == nil {
			return false
		}
		switch c := strings.Compare(s.Version, w.version); {
		case c > 0:
			return false
		case c == 0 && !w.overshadowsChunk(s):
			return false
		}
	}
	return true
}

func randomSegment(r *rand.Rand) *DataSegment {
	a := r.Int64N(20)
	b := a + 1 + r.Int64N(min(8, 21-a))
	if r.IntN(10) == 0 {
		a, b = 0, 24
	}
	version := fmt.Sprintf("v%d", r.IntN(4))
	var sp ShardSpec
	switch k := r.IntN(20); {
	case k < 12:
		sp = num(r.Int32N(4), r.Int32N(3))
	case k < 14:
		sp = LinearShard(r.Int32N(3))
	case k < 16:
		sp = TombstoneShard()
	case k < 18:
		sp = ShardSpec{Type: ShardNumberedOverwrite, PartitionNum: 32768 + r.Int32N(2), StartRootPartitionID: 0,
			EndRootPartitionID: 1 + r.Int32N(2), MinorVersion: int16(1 + r.IntN(2)), AtomicUpdateGroupSize: int16(1 + r.IntN(2))}
	default:
		sp = ShardSpec{Type: ShardRange, PartitionNum: r.Int32N(3), CorePartitions: r.Int32N(3),
			Detail: &ShardDetail{Dimensions: []string{"d"}}}
	}
	return mk("ds", iv(a, b), version, sp)
}

func TestTimelineMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 150 {
		tl := NewTimeline("ds")
		model := refModel{}
		present := map[ID]*DataSegment{}
		var removed []*DataSegment
		for step := range 12 {
			switch op := r.IntN(3); {
			case op < 2 || len(present) == 0: // publish a batch (or re-add unused ones)
				var batch []*DataSegment
				for range 1 + r.IntN(6) {
					s := randomSegment(r)
					if len(removed) > 0 && r.IntN(3) == 0 {
						s = removed[r.IntN(len(removed))]
					}
					batch = append(batch, s)
				}
				if _, err := tl.Add(batch); err != nil {
					t.Fatal(err)
				}
				for _, s := range batch {
					if old := present[s.ID()]; old != nil {
						delete(model, old)
					}
					present[s.ID()] = s
					model[s] = true
				}
			default: // mark some unused
				var batch []ID
				for id, s := range present {
					if r.IntN(3) == 0 {
						batch = append(batch, id)
						delete(model, s)
						delete(present, id)
						removed = append(removed, s)
					}
				}
				if n := tl.Remove(batch); n != len(batch) {
					t.Fatalf("removed %d of %d", n, len(batch))
				}
			}
			checkPieces(t, tl)
			if tl.Len() != len(model) {
				t.Fatalf("round %d step %d: len %d want %d", round, step, tl.Len(), len(model))
			}
			es := model.entries()
			for range 5 {
				a := r.Int64N(26) - 1
				q := iv(a, a+1+r.Int64N(26))
				got, want := tl.Lookup(q), refLookup(es, q)
				if !sameLookup(got, want) {
					t.Fatalf("round %d step %d lookup %v:\n got %s\nwant %s", round, step, q, render(got), renderRef(want))
				}
			}
			var wantShadowed []*DataSegment
			for s := range model {
				if got, want := tl.IsOvershadowed(s), refOvershadowed(es, s); got != want {
					t.Fatalf("round %d step %d: IsOvershadowed(%s) = %v want %v\n%s", round, step, s.ID(), got, want, render(tl.Lookup(iv(-1, 30))))
				}
				if refOvershadowed(es, s) {
					wantShadowed = append(wantShadowed, s)
				}
			}
			slices.SortFunc(wantShadowed, compareInChunk)
			if got := tl.Overshadowed(); !slices.Equal(got, wantShadowed) {
				t.Fatalf("Overshadowed() = %d segments, want %d", len(got), len(wantShadowed))
			}
			var all, want []*DataSegment
			tl.Segments(func(s *DataSegment) bool { all = append(all, s); return true })
			for s := range model {
				want = append(want, s)
			}
			slices.SortFunc(want, compareInChunk)
			if !slices.Equal(all, want) {
				t.Fatalf("Segments() is not the model in id order")
			}
			n := 0
			tl.Segments(func(*DataSegment) bool { n++; return false })
			if n != min(1, len(model)) {
				t.Fatalf("Segments() did not stop")
			}
			probe := randomSegment(r)
			if got, want := tl.IsOvershadowed(probe), refOvershadowed(es, probe); got != want {
				t.Fatalf("probe %s: got %v want %v", probe.ID(), got, want)
			}
		}
	}
}

func sameLookup(got []Holder, want []refPiece) bool {
	if len(got) != len(want) {
		return false
	}
	for i, h := range got {
		w := want[i]
		if h.Interval.Start != w.start || h.Interval.End != w.end || h.TrueInterval != w.e.iv || h.Version != w.e.version ||
			!slices.Equal(h.Segments, w.e.visible) || h.HasData != w.e.hasData {
			return false
		}
	}
	return true
}

func renderRef(ps []refPiece) string {
	hs := make([]Holder, len(ps))
	for i, p := range ps {
		hs[i] = Holder{Interval: interval.Interval{Start: p.start, End: p.end}, Version: p.e.version, Segments: p.e.visible, HasData: p.e.hasData}
	}
	return render(hs)
}

func TestChunkListAgainstSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c chunkList[int]
	var ref []int
	for range 3000 {
		// replace a random run by a random sorted run keeping order: use
		// values as positions only, the list does not care about order.
		p := r.IntN(len(ref) + 1)
		k := r.IntN(min(len(ref)-p, 300) + 1)
		items := make([]int, r.IntN(200))
		for i := range items {
			items[i] = r.Int()
		}
		pos := c.search(func(*int) bool { return false })
		for range p {
			pos = c.next(pos)
		}
		c.replace(pos, k, items)
		ref = slices.Concat(ref[:p], items, ref[p+k:])
		if c.len() != len(ref) {
			t.Fatalf("len %d want %d", c.len(), len(ref))
		}
		i := 0
		for q := (cpos{}); c.valid(q); q = c.next(q) {
			if *c.at(q) != ref[i] {
				t.Fatalf("element %d differs", i)
			}
			i++
		}
		for _, l := range c.leaves {
			if len(l) == 0 || len(l) > leafMax {
				t.Fatalf("leaf size %d", len(l))
			}
		}
	}
}
