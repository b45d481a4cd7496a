package broker

import (
	"context"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
)

func day(t *testing.T) interval.Interval {
	iv, err := interval.Parse("2020-01-01/2020-01-02")
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

// rtAnn announces realtime segments of tasks with their sequences.
func rtAnn(version string, seqs map[string]string, published []*segmeta.DataSegment, rt ...*segmeta.DataSegment) *protocol.Announcement {
	a := ann(version, published...)
	a.Realtime, a.Sequences = rt, seqs
	return a
}

// Replicas of a sequence on two servers: queries read one of them, all its
// segments and none of the other's; the choice sticks while its server
// announces it, moves when the server is gone, and every realtime segment
// of the sequence stops being read once a segment its task published is in
// the view (from any server). A task without a sequence is read as before.
func TestRealtimeReplicasReadOnce(t *testing.T) {
	v := newView([]string{"http://a:1", "http://b:2", "http://h:3"})
	a, b, h := v.servers[0], v.servers[1], v.servers[2]
	const seq = "index_kafka_ds_g0_0123456789abcdef"
	ra0 := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_0_aaaa", 0, 0)
	ra1 := seg(t, "ds", "2020-01-01T01/2020-01-01T02", "realtime-"+seq+"_0_aaaa", 1, 0)
	rb0 := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_1_bbbb", 0, 0)
	solo := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-index_kafka_ds_solo", 0, 0)
	// Seen at once (the first polls), the replica of the lower number
	// (task id: replica 0) is chosen.
	v.servers = []*server{b, a, h}
	b.sequences, b.realtime = map[string]string{rb0.Version: seq}, []*segmeta.DataSegment{rb0, solo}
	v.apply(a, rtAnn("a1", map[string]string{ra0.Version: seq}, nil, ra0, ra1), nil)
	v.apply(h, ann("h1"), nil)
	want := func(what string, ids ...*segmeta.DataSegment) {
		t.Helper()
		var got, exp []string
		for _, u := range v.resolve(queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{day(t)}}) {
			got = append(got, u.ref.ID)
		}
		for _, s := range ids {
			exp = append(exp, s.ID().String())
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("%s: read %v, want %v", what, got, exp)
		}
	}
	want("two replicas", ra0, ra1, solo)
	units := v.resolve(queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{day(t)}})
	i := slices.IndexFunc(units, func(u unit) bool { return u.ref.ID == ra0.ID().String() })
	if len(units[i].standby) != 1 || units[i].standby[0].srv != b || len(units[i].standby[0].refs) != 1 {
		t.Fatalf("standby of a's unit: %+v", units[i].standby)
	}
	// a fails during a query: all its units give way to b's.
	retry, added := replicaFailover(units, []int{0, 1, 2}, a, map[*server]bool{})
	var ids []string
	for _, u := range added {
		ids = append(ids, u.ref.ID)
	}
	if len(added) != 1 || ids[0] != rb0.ID().String() || added[0].servers[0] != b {
		t.Fatalf("failover read %v", ids)
	}
	for _, r := range retry {
		if units[r].seq != "" {
			t.Fatalf("a unit of the replicated sequence was retried on the failed server: %s", units[r].ref.ID)
		}
	}
	// a answers, but serves the sequence no more (every unit missing, none
	// replaced): b is read instead; a missing unit with a replacement (a
	// merge, a hand-off) is not a gone replica.
	r := reply{srv: a, units: []int{0, 1, 2}, missing: map[string]bool{ra0.ID().String(): true, ra1.ID().String(): true}}
	if gone := replicaGone(units, r); len(gone) != 2 {
		t.Fatalf("gone units %v", gone)
	}
	r.replaced = map[string][]protocol.SegmentRef{ra1.ID().String(): {{ID: "merged"}}}
	if gone := replicaGone(units, r); len(gone) != 0 {
		t.Fatalf("gone units %v with a replacement", gone)
	}
	// A newer announcement of b does not move the choice; a gone does.
	v.apply(b, rtAnn("b2", map[string]string{rb0.Version: seq}, nil, rb0, solo), nil)
	want("choice sticks", ra0, ra1, solo)
	v.apply(a, nil, errGone)
	want("a gone", rb0, solo)
	// a is back behind b (fewer bytes): b stays; once a caught up, a is read.
	small := *ra0
	small.Size = 5
	v.apply(a, rtAnn("a2", map[string]string{ra0.Version: seq}, nil, &small), nil)
	want("a back behind, b stays chosen", rb0, solo)
	v.apply(a, rtAnn("a3", map[string]string{ra0.Version: seq}, nil, ra0, ra1), nil)
	want("a caught up", ra0, ra1, solo)

	// A replica published: its segment (stored under its task's id) is on
	// the historical; no realtime segment of the sequence is read any more.
	pub := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "v1", 0, 1)
	pub.LoadSpec = segmeta.RawJSON(`{"type":"local","path":"/deep/ds/x/v1/0/` + seq + `_1_bbbb/index.zip"}`)
	v.apply(h, ann("h2", pub), nil)
	want("published", pub, solo)
	v.apply(b, rtAnn("b3", map[string]string{rb0.Version: seq}, nil, rb0, solo), nil)
	v.apply(a, rtAnn("a4", map[string]string{ra0.Version: seq}, nil, ra0, ra1), nil)
	want("published, announced again", pub, solo)
}

func TestReplicaNumber(t *testing.T) {
	const seq = "index_kafka_ds_g0_0123456789abcdef"
	for version, want := range map[string]int{
		"realtime-" + seq + "_2_ab":  2,
		"realtime-" + seq + "_10_ab": 10,
		"realtime-" + seq + "_x_ab":  math.MaxInt,
		"realtime-other_1_ab":        math.MaxInt,
	} {
		if got := replicaNumber(version, seq); got != want {
			t.Errorf("replicaNumber(%q) = %d, want %d", version, got, want)
		}
	}
}

// rtPosAnn announces realtime segments of one task of seq with the stream
// position they reach.
func rtPosAnn(version, seq string, pos map[int32]int64, rt ...*segmeta.DataSegment) *protocol.Announcement {
	a := rtAnn(version, map[string]string{rt[0].Version: seq}, nil, rt...)
	a.Offsets = map[string]map[int32]int64{rt[0].Version: pos}
	return a
}

// The replica that has read furthest is read, whatever its number; the
// choice sticks while another is only as far, and moves when one is
// further. A failover reads the furthest standby.
func TestReplicaChoiceFollowsOffsets(t *testing.T) {
	v := newView([]string{"http://a:1", "http://b:2", "http://c:3"})
	a, b, c := v.servers[0], v.servers[1], v.servers[2]
	const seq = "index_kafka_ds_g0_0123456789abcdef"
	ra := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_0_aaaa", 0, 0)
	rb := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_1_bbbb", 0, 0)
	rc := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_2_cccc", 0, 0)
	read := func() unit {
		t.Helper()
		units := v.resolve(queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{day(t)}})
		if len(units) != 1 {
			t.Fatalf("read %d units, want one replica's", len(units))
		}
		return units[0]
	}
	v.apply(a, rtPosAnn("a1", seq, map[int32]int64{0: 4, 1: 0}, ra), nil)
	v.apply(b, rtPosAnn("b1", seq, map[int32]int64{0: 6, 1: 2}, rb), nil)
	v.apply(c, rtPosAnn("c1", seq, map[int32]int64{0: 5}, rc), nil)
	if u := read(); u.ref.ID != rb.ID().String() || records(u.pos) != 8 {
		t.Fatalf("read %s at %v, want replica 1 (8 records read, replica 0 has 4)", u.ref.ID, u.pos)
	}
	// The standbys, furthest first.
	if u := read(); len(u.standby) != 2 || u.standby[0].srv != c || u.standby[1].srv != a {
		t.Fatalf("standby order: %+v", u.standby)
	}
	_, added := replicaFailover([]unit{read()}, []int{0}, b, map[*server]bool{})
	if len(added) != 1 || added[0].servers[0] != c || records(added[0].pos) != 5 {
		t.Fatalf("failover read %+v, want c's (5 records)", added)
	}
	v.apply(a, rtPosAnn("a2", seq, map[int32]int64{0: 8}, ra), nil)
	if u := read(); u.ref.ID != rb.ID().String() {
		t.Fatalf("a replica as far took over: read %s", u.ref.ID)
	}
	v.apply(a, rtPosAnn("a3", seq, map[int32]int64{0: 9}, ra), nil)
	if u := read(); u.ref.ID != ra.ID().String() {
		t.Fatalf("a replica further did not take over: read %s", u.ref.ID)
	}
	v.apply(a, nil, errGone)
	if u := read(); u.ref.ID != rb.ID().String() {
		t.Fatalf("after a is gone read %s, want the furthest left (b)", u.ref.ID)
	}
}

// What answers showed of a sequence: a read behind it is listed with the
// gap, the furthest position stays, a wait given up is remembered until a
// read catches up, and a handed-off sequence is forgotten. A sequence that
// a query of its time chunks reads nothing of is listed unread, unless a
// successor of its task group has read as far (then it is forgotten); a
// successor behind is listed with its position.
func TestShownPositions(t *testing.T) {
	var p shownPositions
	now := time.Unix(0, 0)
	hour := func(h string) interval.Interval {
		iv, err := interval.Parse("2020-01-01T" + h + "/PT1H")
		if err != nil {
			t.Fatal(err)
		}
		return iv
	}
	read := func(pos map[int32]int64) seqRead {
		return seqRead{pos: pos, ds: "ds", chunks: []interval.Interval{hour("00")}}
	}
	type reads = map[string]seqRead
	f := queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{day(t)}}
	const s, u = "ds_g0_aaaa", "ds_g0_bbbb" // two sequences of one task group
	p.record(now, reads{s: read(map[int32]int64{0: 10, 1: 5}), "t": read(nil)})
	if got := p.behind(reads{s: read(map[int32]int64{0: 15}), "x": read(map[int32]int64{0: 1})}, f); got != nil {
		t.Fatalf("behind %+v, want nothing (a read as far, an unknown sequence)", got)
	}
	got := p.behind(reads{s: read(map[int32]int64{0: 9, 1: 2})}, f)
	if len(got) != 1 || got[0].Sequence != s || got[0].Records != 4 || got[0].ShownOffsets[0] != 10 || got[0].ReadOffsets[1] != 2 || got[0].Unread {
		t.Fatalf("behind %+v", got)
	}
	p.record(now, reads{s: read(map[int32]int64{0: 9, 1: 2})}) // an answer flagged behind
	if again := p.behind(reads{s: read(map[int32]int64{0: 9, 1: 2})}, f); len(again) != 1 || again[0].Records != 4 {
		t.Fatalf("a read behind lowered what was shown: %+v", again)
	}
	if p.waitedFor(got) {
		t.Fatal("waited for before any wait")
	}
	p.giveUp(got)
	if !p.waitedFor(got) {
		t.Fatal("a given-up wait is not remembered")
	}
	p.record(now, reads{s: read(map[int32]int64{0: 12, 1: 5})})
	if p.waitedFor(got) {
		t.Fatal("still given up after a read caught up")
	}

	// Nothing of s read: unread in its time chunk, not elsewhere.
	if got := p.behind(nil, f); len(got) != 1 || !got[0].Unread || got[0].ReadOffsets != nil || got[0].ShownOffsets[0] != 12 {
		t.Fatalf("unread: %+v", got)
	}
	for _, other := range []queryFacts{
		{dataSources: []string{"ds"}, intervals: []interval.Interval{hour("05")}},
		{dataSources: []string{"other"}, intervals: []interval.Interval{day(t)}},
	} {
		if got := p.behind(nil, other); got != nil {
			t.Fatalf("a query of %v flagged %+v", other, got)
		}
	}
	// A successor of the group behind, then as far.
	if got := p.behind(reads{u: read(map[int32]int64{0: 11, 1: 5})}, f); len(got) != 1 || got[0].Sequence != s || got[0].Records != 1 || got[0].Unread {
		t.Fatalf("behind its successor: %+v", got)
	}
	if got := p.behind(reads{u: read(map[int32]int64{0: 3})}, f); len(got) != 1 || !got[0].Unread {
		t.Fatalf("a successor over other partitions is no successor: %+v", got)
	}
	if got := p.behind(reads{u: read(map[int32]int64{0: 12, 1: 6})}, f); got != nil || p.seqs[s] != nil {
		t.Fatalf("a successor as far: %+v, shown %v", got, p.seqs[s])
	}

	p.record(now, reads{s: read(map[int32]int64{0: 12})})
	p.forget(now.Add(time.Minute), map[string][]rtReplica{s: {{}}}, nil)
	if p.seqs[s] == nil {
		t.Fatal("forgot an announced sequence")
	}
	p.forget(now.Add(2*time.Minute), nil, map[string]time.Time{s: now})
	if p.seqs[s] != nil {
		t.Fatal("kept a handed-off sequence")
	}
}

// A query's wait for a replica to catch up ends when the view changes (read
// again), or when its budget runs out: then the sequences are given up and
// the next query does not wait for them. A budget of 0 never waits.
func TestCatchUpWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := New(Config{Name: "b:1", Historicals: []string{"http://h:1"}})
		if err != nil {
			t.Fatal(err)
		}
		behind := []RealtimeBehind{{Sequence: "s", Records: 3}}
		b.view.shown.record(time.Now(), map[string]seqRead{"s": {pos: map[int32]int64{0: 3}}})
		q := &nativeQuery{}
		q.Context.RealtimeCatchUpTimeout = -1
		ctx := context.Background()

		cu := b.newCatchUp(q)
		changed := b.view.changes()
		woke := make(chan bool)
		go func() { woke <- cu.wait(ctx, changed, behind) }()
		synctest.Wait()
		select {
		case <-woke:
			t.Fatal("the wait ended before the view changed or the budget ran out")
		default:
		}
		b.view.apply(b.view.servers[0], nil, errGone)
		if !<-woke {
			t.Fatal("a view change did not wake the wait to read again")
		}
		start := time.Now()
		if cu.wait(ctx, b.view.changes(), behind) {
			t.Fatal("the wait read again without a change")
		}
		if d := time.Since(start); d != defaultCatchUp {
			t.Fatalf("gave up after %v, want the default budget %v", d, defaultCatchUp)
		}
		cu.release()
		if !b.view.shown.waitedFor(behind) {
			t.Fatal("a budget run out is not remembered")
		}
		next := b.newCatchUp(q)
		defer next.release()
		if next.wait(ctx, b.view.changes(), behind) {
			t.Fatal("the next query waited for a sequence given up")
		}
		q.Context.RealtimeCatchUpTimeout = 0
		b.view.shown.record(time.Now(), map[string]seqRead{"s": {pos: map[int32]int64{0: 3}}}) // caught up
		none := b.newCatchUp(q)
		if none.wait(ctx, b.view.changes(), behind) {
			t.Fatal("a zero budget waited")
		}
	})
}

// A sequence answers read rows of, whose replicas are all gone, counts as
// handed off when a segment a replica started in their place published
// arrives (it may publish without serving hydrants first): answers are no
// longer flagged as lacking its rows.
func TestSequenceWithoutReplicasHandedOff(t *testing.T) {
	v := newView([]string{"http://a:1", "http://h:2"})
	a, h := v.servers[0], v.servers[1]
	const seq = "index_kafka_ds_g0_0123456789abcdef"
	ra := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_0_aaaa", 0, 0)
	v.apply(a, rtPosAnn("a1", seq, map[int32]int64{0: 4}, ra), nil)
	f := queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{day(t)}}
	v.shown.record(time.Now(), readPositions(v.resolve(f)))
	v.apply(a, nil, errGone)
	if got := v.shown.behind(readPositions(v.resolve(f)), f); len(got) != 1 || !got[0].Unread {
		t.Fatalf("no replica left: %+v, want the sequence unread", got)
	}
	pub := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "v1", 0, 1)
	pub.LoadSpec = segmeta.RawJSON(`{"type":"local","path":"/deep/ds/x/v1/0/` + seq + `_3_cccc/index.zip"}`)
	v.apply(h, ann("h1", pub), nil)
	if got := v.shown.behind(readPositions(v.resolve(f)), f); got != nil {
		t.Fatalf("after its publish: %+v, want nothing flagged", got)
	}
}

// A broker that polls the server holding a sequence's published segments
// before the one holding a replica's hydrants of it (a broker starting
// during a hand-off) reads the published rows only: the hand-off counts
// whatever order the announcements come in.
func TestHandOffSeenBeforeTheReplica(t *testing.T) {
	v := newView([]string{"http://a:1", "http://h:2"})
	a, h := v.servers[0], v.servers[1]
	const seq = "index_kafka_ds_g0_0123456789abcdef"
	pub := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "v1", 0, 1)
	pub.LoadSpec = segmeta.RawJSON(`{"type":"local","path":"/deep/ds/x/v1/0/` + seq + `_0_aaaa/index.zip"}`)
	v.apply(h, ann("h1", pub), nil)
	rb := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_1_bbbb", 0, 0)
	v.apply(a, rtPosAnn("a1", seq, map[int32]int64{0: 4}, rb), nil)
	var ids []string
	for _, u := range v.resolve(queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{day(t)}}) {
		ids = append(ids, u.ref.ID)
	}
	if len(ids) != 1 || ids[0] != pub.ID().String() {
		t.Fatalf("read %v, want only the published segment (its rows counted once)", ids)
	}
}
