package broker

import (
	"math"
	"slices"
	"testing"

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
