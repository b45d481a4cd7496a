package historical

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"strata/internal/eventually"
	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
	"strata/storage/segment"
)

// localSegment writes a one-column segment file of rows x=1..rows.
func localSegment(t *testing.T, ivs, version string, part int32, rows int) (*segmeta.DataSegment, string) {
	t.Helper()
	iv, _ := interval.Parse(ivs)
	w, err := segment.NewWriter(segment.Spec{Fields: []segment.Field{{Name: "x", Kind: segment.KindLong}},
		Metrics: []segment.Metric{{Type: "longSum", Name: "x", FieldName: "x"}}, Interval: segment.Interval{Start: iv.Start, End: iv.End}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		w.Add(segment.Row{Time: iv.Start + int64(i), Values: []segment.Value{segment.Long(int64(i + 1))}})
	}
	path := filepath.Join(t.TempDir(), "f.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &segmeta.DataSegment{DataSource: "ds", Interval: iv, Version: version, Metrics: []string{"x"},
		ShardSpec: segmeta.NumberedShard(part, 0), Size: info.Bytes}, path
}

// A local-only node serves what ServeLocal hands it: realtime segments
// apart in the announcement, swaps in one step, and a hand-off's
// replacements for the realtime ids it no longer has.
func TestServeLocal(t *testing.T) {
	n, err := New(Config{Name: "mm:1", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	if !n.Ready() || n.Metadata().Type != "indexer-executor" {
		t.Fatalf("local-only node: ready %v, type %s", n.Ready(), n.Metadata().Type)
	}
	rt1, p1 := localSegment(t, "2024-01-01/2024-01-02", "realtime-t", 0, 3)
	rt2, p2 := localSegment(t, "2024-01-01/2024-01-02", "realtime-t", 1, 2)
	if err := n.ServeLocal("t", []Served{{Segment: rt1, Path: p1, Realtime: true}, {Segment: rt2, Path: p2, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	ann := n.Announce("")
	if len(ann.Segments) != 0 || len(ann.Realtime) != 2 {
		t.Fatalf("announced %d published and %d realtime", len(ann.Segments), len(ann.Realtime))
	}
	q := json.RawMessage(`{"queryType":"timeseries","dataSource":"ds","intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"longSum","name":"x","fieldName":"x"}]}`)
	ref := func(s *segmeta.DataSegment) protocol.SegmentRef {
		return protocol.SegmentRef{ID: s.ID().String(), Interval: s.Interval.String()}
	}
	res, err := n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{ref(rt1), ref(rt2)}})
	if err != nil || len(res.Missing) != 0 {
		t.Fatalf("query: %v, missing %v", err, res.Missing)
	}

	// Hand-off: the published segment replaces both realtime ones.
	pub, pp := localSegment(t, "2024-01-01/2024-01-02", "v1", 0, 5)
	if err := n.ServeLocal("t", []Served{{Segment: pub, Path: pp}}); err != nil {
		t.Fatal(err)
	}
	if ann2 := n.Announce(ann.Version); ann2.Unchanged || len(ann2.Segments) != 1 || len(ann2.Realtime) != 0 {
		t.Fatalf("after the hand-off: %+v", ann2)
	}
	res, err = n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{ref(rt1), ref(rt2)}})
	if err != nil || len(res.Missing) != 2 {
		t.Fatalf("stale query: %v, missing %v", err, res.Missing)
	}
	for _, id := range []string{rt1.ID().String(), rt2.ID().String()} {
		if got := res.Replaced[id]; len(got) != 1 || got[0] != ref(pub) {
			t.Fatalf("replacement of %s: %+v", id, got)
		}
	}

	// Another owner cannot take a served id; ending the hand-off forgets the
	// replacements.
	if err := n.ServeLocal("u", []Served{{Segment: pub, Path: pp}}); err == nil {
		t.Fatal("a second owner served the same segment")
	}
	if err := n.ServeLocal("t", nil); err != nil {
		t.Fatal(err)
	}
	res, _ = n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{ref(rt1)}})
	if len(res.Missing) != 1 || len(res.Replaced) != 0 {
		t.Fatalf("after the hand-off ended: missing %v, replaced %v", res.Missing, res.Replaced)
	}
	if err := n.ServeLocal("t", []Served{{Segment: rt1, Path: filepath.Join(t.TempDir(), "absent")}}); err == nil {
		t.Fatal("served a file that does not exist")
	}
	if len(n.Announce("").Segments) != 0 {
		t.Fatal("a failed ServeLocal changed what is served")
	}
}

// While a task publishes, reads of its realtime segments wait: once the
// publish settles they meet either the realtime rows (nothing published) or
// "missing" with the published replacements, never the realtime rows beside
// a historical already serving the published ones.
func TestHoldLocalDefersRealtimeReadsUntilHandOff(t *testing.T) {
	n, err := New(Config{Name: "mm:1", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	rt, p := localSegment(t, "2024-01-01/2024-01-02", "realtime-t", 0, 3)
	if err := n.ServeLocal("t", []Served{{Segment: rt, Path: p, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	q := json.RawMessage(`{"queryType":"timeseries","dataSource":"ds","intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"longSum","name":"x","fieldName":"x"}]}`)
	ref := protocol.SegmentRef{ID: rt.ID().String(), Interval: rt.Interval.String()}
	read := func() chan *protocol.SubQueryResult {
		out := make(chan *protocol.SubQueryResult, 1)
		go func() {
			res, err := n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{ref}})
			if err != nil {
				t.Error(err)
			}
			out <- res
		}()
		return out
	}
	waiting := func(k int) func() bool {
		return func() bool {
			n.mu.Lock()
			defer n.mu.Unlock()
			return n.holdWait == k
		}
	}

	// The publish fails: the held read answers from the realtime rows.
	release := n.HoldLocal("t")
	got := read()
	eventually.True(t, "the read to wait on the hold", waiting(1))
	release()
	if res := <-got; res == nil || len(res.Missing) != 0 || len(res.Partial) == 0 {
		t.Fatalf("after a failed publish: %+v", res)
	}

	// The publish succeeds: the held read learns the replacement.
	release = n.HoldLocal("t")
	got = read()
	eventually.True(t, "the read to wait on the hold", waiting(1))
	pub, pp := localSegment(t, "2024-01-01/2024-01-02", "v1", 0, 3)
	if err := n.ServeLocal("t", []Served{{Segment: pub, Path: pp}}); err != nil {
		t.Fatal(err)
	}
	release()
	release() // idempotent
	res := <-got
	if res == nil || len(res.Missing) != 1 || len(res.Replaced[ref.ID]) != 1 {
		t.Fatalf("after the hand-off: %+v", res)
	}
	// A cancelled read stops waiting.
	release = n.HoldLocal("t")
	defer release()
	if err := n.ServeLocal("t", []Served{{Segment: rt, Path: p, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := n.Query(ctx, &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{ref}}); err == nil {
		t.Fatal("a cancelled read waited on through the hold")
	}
}

// A task merging its realtime segments (hydrants) swaps them for one that
// holds their rows: a broker a poll behind, asking for the merged-away ids,
// learns which segment holds their rows now instead of losing them from
// its answer.
func TestServeLocalMergeNamesTheMergedSegment(t *testing.T) {
	n, err := New(Config{Name: "mm:1", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	rt1, p1 := localSegment(t, "2024-01-01/2024-01-02", "realtime-t", 0, 3)
	rt2, p2 := localSegment(t, "2024-01-01/2024-01-02", "realtime-t", 1, 2)
	if err := n.ServeLocal("t", []Served{{Segment: rt1, Path: p1, Realtime: true}, {Segment: rt2, Path: p2, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	// rt2 and new rows are merged into rt3; rt1 stays.
	rt3, p3 := localSegment(t, "2024-01-01/2024-01-02", "realtime-t", 2, 4)
	if err := n.ServeLocal("t", []Served{{Segment: rt1, Path: p1, Realtime: true}, {Segment: rt3, Path: p3, Realtime: true}}); err != nil {
		t.Fatal(err)
	}
	ref := func(s *segmeta.DataSegment) protocol.SegmentRef {
		return protocol.SegmentRef{ID: s.ID().String(), Interval: s.Interval.String()}
	}
	q := json.RawMessage(`{"queryType":"timeseries","dataSource":"ds","intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"longSum","name":"x","fieldName":"x"}]}`)
	res, err := n.Query(context.Background(), &protocol.SubQuery{Query: q, Segments: []protocol.SegmentRef{ref(rt1), ref(rt2)}})
	if err != nil || len(res.Missing) != 1 || res.Missing[0] != rt2.ID().String() {
		t.Fatalf("stale query: %v, missing %v", err, res.Missing)
	}
	if got := res.Replaced[rt2.ID().String()]; len(got) != 1 || got[0] != ref(rt3) {
		t.Fatalf("replacement of the merged-away segment: %+v", got)
	}
}
