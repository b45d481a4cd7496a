package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/interval"
	"strata/segmeta"
)

const day = int64(24 * 3600 * 1000)

// seg builds a segment of ds for day d (days since 2024-01-01) at version v.
func seg(ds string, d int64, v string, part, parts int32) *segmeta.DataSegment {
	start := int64(1704067200000) + d*day
	s := &segmeta.DataSegment{
		DataSource: ds,
		Interval:   interval.Interval{Start: start, End: start + day},
		Version:    v,
		LoadSpec:   segmeta.RawJSON(fmt.Sprintf(`{"type":"local","path":"/deep/%s/%d/%s/%d/index.seg"}`, ds, d, v, part)),
		Dimensions: []string{"channel", "page"},
		Metrics:    []string{"count", "added"},
		ShardSpec:  segmeta.NumberedShard(part, parts),
		Size:       1000 + int64(part),
	}
	s.Intern()
	return s
}

func publishCmd(segs []*segmeta.DataSegment, start, end string) commands.PublishSegments {
	c := commands.PublishSegments{DataSource: segs[0].DataSource, Segments: EncodeSegments(segs), Count: len(segs)}
	if start != "" {
		c.StartMetadata = json.RawMessage(start)
	}
	if end != "" {
		c.EndMetadata = json.RawMessage(end)
	}
	return c
}

type applier struct {
	t  *testing.T
	f  *FSM
	ix uint64
}

func (a *applier) apply(cmd commands.Command) Result {
	a.t.Helper()
	a.ix++
	return a.f.Apply(entry(a.t, a.ix, int64(a.ix)*1000, cmd, "tester")).(Result)
}

func TestPublishAndCAS(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	res := a.apply(publishCmd([]*segmeta.DataSegment{seg("wiki", 0, "v1", 0, 2), seg("wiki", 0, "v1", 1, 2)}, "", ""))
	if res.Err != nil || res.Value.(PublishResult).Published != 2 {
		t.Fatalf("publish: %+v", res)
	}
	// Republishing the same ids is idempotent; other contents under a taken id are refused.
	if res = a.apply(publishCmd([]*segmeta.DataSegment{seg("wiki", 0, "v1", 0, 2)}, "", "")); res.Value.(PublishResult).Published != 0 {
		t.Fatalf("republish: %+v", res)
	}
	other := seg("wiki", 0, "v1", 1, 2)
	other.LoadSpec = segmeta.RawJSON(`{"type":"local","path":"/elsewhere"}`)
	if res = a.apply(publishCmd([]*segmeta.DataSegment{seg("wiki", 1, "v1", 0, 1), other}, "", "")); KindOf(res.Err) != KindConflict {
		t.Fatalf("id collision: %+v", res)
	}
	a.f.Read(func(s *State) {
		if _, ok := s.Segment(seg("wiki", 1, "v1", 0, 1).ID()); ok {
			t.Fatal("a refused publish added segments")
		}
	})
	// Exactly-once: the first CAS from null succeeds, a stale one fails and adds nothing.
	if res = a.apply(publishCmd([]*segmeta.DataSegment{seg("kafka", 0, "v1", 0, 0)}, `null`, `{"offsets":{"0":10}}`)); res.Err != nil {
		t.Fatal(res.Err)
	}
	res = a.apply(publishCmd([]*segmeta.DataSegment{seg("kafka", 0, "v1", 1, 0)}, `null`, `{"offsets":{"0":20}}`))
	if KindOf(res.Err) != KindConflict {
		t.Fatalf("stale CAS: %+v", res)
	}
	if res = a.apply(publishCmd([]*segmeta.DataSegment{seg("kafka", 0, "v1", 1, 0)}, `{"offsets": {"0": 10}}`, `{"offsets":{"0":20}}`)); res.Err != nil {
		t.Fatalf("CAS with equal metadata in another formatting: %v", res.Err)
	}
	a.f.Read(func(s *State) {
		if m, _ := s.DataSourceMetadata("kafka"); m != `{"offsets":{"0":20}}` {
			t.Fatalf("metadata %s", m)
		}
		if n := len(s.Segments("kafka")); n != 2 {
			t.Fatalf("kafka segments %d", n)
		}
		if got := s.DataSourceNames(false); strings.Join(got, ",") != "kafka,wiki" {
			t.Fatalf("datasources %v", got)
		}
	})
	// Invalid input is rejected whole.
	bad := publishCmd([]*segmeta.DataSegment{seg("wiki", 1, "v1", 0, 1)}, "", "")
	bad.DataSource = "other"
	if res = a.apply(bad); KindOf(res.Err) != KindInvalid {
		t.Fatalf("wrong datasource: %+v", res)
	}
	bad = publishCmd([]*segmeta.DataSegment{seg("wiki", 1, "v1", 0, 1)}, "", "")
	bad.Count = 5
	if res = a.apply(bad); KindOf(res.Err) != KindInvalid {
		t.Fatalf("wrong count: %+v", res)
	}
	bad.Segments, bad.Count = []byte{1, 2, 3}, 1
	if res = a.apply(bad); KindOf(res.Err) != KindInvalid {
		t.Fatalf("garbage segments: %+v", res)
	}
}

func TestMarkAndKill(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	old := []*segmeta.DataSegment{seg("wiki_x", 0, "v1", 0, 1), seg("wiki_x", 1, "v1", 0, 1), seg("wiki_x", 2, "v1", 0, 1)}
	a.apply(publishCmd(old, "", ""))
	newer := seg("wiki_x", 1, "v2", 0, 1)
	a.apply(publishCmd([]*segmeta.DataSegment{newer}, "", ""))
	a.f.Read(func(s *State) {
		r, _ := s.Segment(old[1].ID())
		if !s.IsOvershadowed(r.Segment) {
			t.Fatal("v1 of day 1 should be overshadowed by v2")
		}
	})
	// Mark days 0 and 1 unused by interval (containment; day 2 only overlaps at its start).
	res := a.apply(commands.MarkSegments{DataSource: "wiki_x", Interval: "2024-01-01/2024-01-03T00:00:01Z", AuditPayload: `{"interval":"x"}`})
	if res.Err != nil || res.Value.(MarkResult).Changed != 3 {
		t.Fatalf("mark unused by interval: %+v", res)
	}
	// markUsed by id revives v1 of day 0, not overshadowed... but day 1 v1 stays unused when v2 is used again.
	res = a.apply(commands.MarkSegments{DataSource: "wiki_x", Used: true, IDs: []string{newer.ID().String()}})
	if res.Value.(MarkResult).Changed != 1 {
		t.Fatalf("revive v2: %+v", res)
	}
	res = a.apply(commands.MarkSegments{DataSource: "wiki_x", Used: true, All: true})
	if res.Value.(MarkResult).Changed != 1 { // day 0 v1 only; day 1 v1 is overshadowed by v2
		t.Fatalf("mark all used: %+v", res)
	}
	res = a.apply(commands.MarkSegments{DataSource: "wiki_x", Used: true, IDs: []string{"wiki_x_nope", old[0].ID().String()}, FailOnUnknown: true})
	if KindOf(res.Err) != KindNotFound || !strings.Contains(res.Err.Error(), "wiki_x_nope") {
		t.Fatalf("unknown id: %+v", res)
	}
	if res = a.apply(commands.MarkSegments{DataSource: "wiki_x", IDs: []string{"a"}, All: true}); KindOf(res.Err) != KindInvalid {
		t.Fatalf("two selectors: %+v", res)
	}
	// Kill: only unused segments fully inside the interval.
	res = a.apply(commands.KillSegments{DataSource: "wiki_x", Interval: "2024-01-01/2024-01-05", TaskID: "kill-1"})
	if res.Err != nil || len(res.Value.(KillResult).Deleted) != 1 || res.Value.(KillResult).Deleted[0] != old[1].ID().String() {
		t.Fatalf("kill: %+v", res)
	}
	a.f.Read(func(s *State) {
		if _, ok := s.Segment(old[1].ID()); ok {
			t.Fatal("killed segment still in metadata")
		}
		if s.SegmentCount() != 3 {
			t.Fatalf("%d segments left", s.SegmentCount())
		}
		p := s.PendingFileDeletions()
		if len(p) != 1 || !strings.Contains(p[0], "/deep/wiki_x/1/v1/0/") {
			t.Fatalf("pending deletions %v", p)
		}
		if got := s.Audit(AuditQuery{Type: AuditSegmentKill, Limit: 5}); len(got) != 1 || !strings.Contains(got[0].Payload, "kill-1") || got[0].Key != "wiki_x" {
			t.Fatalf("kill audit %+v", got)
		}
		if got := s.Audit(AuditQuery{Type: AuditSegmentMarkUnused, Limit: 5}); len(got) != 1 || got[0].Payload != `{"interval":"x"}` {
			t.Fatalf("markUnused audit %+v", got)
		}
	})
	var pending []string
	a.f.Read(func(s *State) { pending = s.PendingFileDeletions() })
	if res = a.apply(commands.AckFileDeletions{LoadSpecs: pending}); res.Value.(int) != 1 {
		t.Fatalf("ack: %+v", res)
	}
}

func TestSegmentsSnapshotAndDeterminism(t *testing.T) {
	build := func() *FSM {
		a := &applier{t: t, f: New(nil)}
		for d := int64(0); d < 20; d++ {
			a.apply(publishCmd([]*segmeta.DataSegment{seg("b", d, "v1", 0, 2), seg("b", d, "v1", 1, 2)}, "", ""))
			a.apply(publishCmd([]*segmeta.DataSegment{seg("a", d, "v1", 0, 1)}, "", ""))
		}
		a.apply(publishCmd([]*segmeta.DataSegment{seg("b", 3, "v2", 0, 1)}, "", ""))
		a.apply(publishCmd([]*segmeta.DataSegment{seg("k", 0, "v1", 0, 0)}, "null", `{"p":1}`))
		a.apply(commands.MarkSegments{DataSource: "a", Interval: "2024-01-05/2024-01-10"})
		a.apply(commands.KillSegments{DataSource: "a", Interval: "2024-01-05/2024-01-08", TaskID: "k"})
		return a.f
	}
	f1, f2 := build(), build()
	s1, s2 := snapshotBytes(t, f1), snapshotBytes(t, f2)
	if !bytes.Equal(s1, s2) {
		t.Fatal("same log, different snapshots")
	}
	r := restore(t, s1)
	if !bytes.Equal(snapshotBytes(t, r), s1) {
		t.Fatal("restore round trip differs")
	}
	r.Read(func(s *State) {
		if s.SegmentCount() != 59 || len(s.PendingFileDeletions()) != 3 {
			t.Fatalf("restored %d segments, %d pending", s.SegmentCount(), len(s.PendingFileDeletions()))
		}
		hs := s.UsedIndex().Lookup("b", interval.Interval{Start: 1704067200000 + 3*day, End: 1704067200000 + 4*day})
		if len(hs) != 1 || hs[0].Version != "v2" {
			t.Fatalf("timeline after restore: %+v", hs)
		}
		if m, _ := s.DataSourceMetadata("k"); m != `{"p":1}` {
			t.Fatalf("metadata after restore: %q", m)
		}
	})
}

// Metadata at scale (issue 3 targets): with 1,000,000 segments in the FSM,
// publishing 1,000 applies in ≤ 10 ms, a one-day timeline lookup takes ≤ 1 ms,
// snapshot + restore ≤ 10 s, memory ≤ 1 KB per segment.
func BenchmarkSegmentsAtScale(b *testing.B) {
	const total = 1_000_000
	const dsCount, perDay = 100, 10 // 100 datasources × 1,000 days × 10 partitions
	f := New(nil)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	idx := uint64(0)
	for ds := 0; ds < dsCount; ds++ {
		name := fmt.Sprintf("ds%03d", ds)
		segs := make([]*segmeta.DataSegment, 0, total/dsCount)
		for d := int64(0); d < total/dsCount/perDay; d++ {
			for p := int32(0); p < perDay; p++ {
				segs = append(segs, seg(name, d, "2024-01-01T00:00:00.000Z", p, perDay))
			}
		}
		for i := 0; i < len(segs); i += 1000 {
			idx++
			data, _ := commands.Encode(publishCmd(segs[i:i+1000], "", ""), int64(idx), commands.Audit{})
			if res := f.Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: data}).(Result); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	heapPerSegment := float64(ms1.HeapAlloc-ms0.HeapAlloc) / total

	// Publish 1,000 new segments (one new day of one datasource) into the 1M.
	var publishTotal time.Duration
	var lookupTotal time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		segs := make([]*segmeta.DataSegment, 0, 1000)
		for p := int32(0); p < 1000; p++ {
			segs = append(segs, seg("ds000", int64(2000+i), "2024-02-01T00:00:00.000Z", p, 1000))
		}
		idx++
		data, _ := commands.Encode(publishCmd(segs, "", ""), int64(idx), commands.Audit{})
		t0 := time.Now()
		if res := f.Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: data}).(Result); res.Err != nil {
			b.Fatal(res.Err)
		}
		publishTotal += time.Since(t0)
		t0 = time.Now()
		var hs []segmeta.Holder
		f.Read(func(s *State) {
			hs = s.UsedIndex().Lookup("ds050", interval.Interval{Start: 1704067200000 + 500*day, End: 1704067200000 + 501*day})
		})
		lookupTotal += time.Since(t0)
		if len(hs) != 1 || len(hs[0].Segments) != perDay {
			b.Fatalf("lookup: %+v", hs)
		}
	}
	b.StopTimer()
	b.ReportMetric(heapPerSegment, "heapB/segment")
	b.ReportMetric(float64(publishTotal.Microseconds())/1000/float64(b.N), "ms/publish1000")
	b.ReportMetric(float64(lookupTotal.Nanoseconds())/1e6/float64(b.N), "ms/lookup1day")

	t0 := time.Now()
	snap, _ := f.Snapshot()
	var buf bytes.Buffer
	if _, err := snap.(*frozen).WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	snapDur := time.Since(t0)
	t0 = time.Now()
	g := New(nil)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(snapDur.Seconds(), "s/snapshot")
	b.ReportMetric(time.Since(t0).Seconds(), "s/restore")
	b.ReportMetric(float64(buf.Cap())/float64(total), "snapB/segment")
}
