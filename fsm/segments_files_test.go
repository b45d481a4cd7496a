package fsm

import (
	"testing"

	"strata/commands"
	"strata/segmeta"
)

// With OwnFiles, a segment may not name a file another segment (used or
// unused) names, nor one awaiting deletion; without it (older log entries)
// the publish applies as it did.
func TestPublishOwnFiles(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	wiki := seg("wiki", 0, "v1", 0, 1)
	own := func(segs ...*segmeta.DataSegment) commands.PublishSegments {
		c := publishCmd(segs, "", "")
		c.OwnFiles = true
		return c
	}
	if res := a.apply(own(wiki)); res.Err != nil {
		t.Fatal(res.Err)
	}
	// Another datasource's segment onto wiki's file, spelled differently.
	thief := seg("evil", 0, "v1", 0, 1)
	thief.LoadSpec = segmeta.RawJSON(`{"path":"/deep/wiki/0/./v1/0/index.seg","type":"local"}`)
	if res := a.apply(own(thief)); KindOf(res.Err) != KindConflict {
		t.Fatalf("publish onto another segment's file: %+v", res)
	}
	a.apply(commands.MarkSegments{DataSource: "wiki", All: true})
	if res := a.apply(own(thief)); KindOf(res.Err) != KindConflict {
		t.Fatalf("publish onto an unused segment's file: %+v", res)
	}
	// Two segments of one publish sharing a file.
	x, y := seg("x", 0, "v1", 0, 2), seg("x", 0, "v1", 1, 2)
	y.LoadSpec = x.LoadSpec
	if res := a.apply(own(x, y)); KindOf(res.Err) != KindInvalid {
		t.Fatalf("two segments, one file: %+v", res)
	}
	// A killed segment's file stays off limits until its deletion is acknowledged.
	a.apply(commands.KillSegments{DataSource: "wiki", Interval: "2024-01-01/2024-01-02", TaskID: "k"})
	again := seg("wiki", 0, "v2", 0, 1)
	again.LoadSpec = wiki.LoadSpec
	if res := a.apply(own(again)); KindOf(res.Err) != KindConflict {
		t.Fatalf("publish onto a file awaiting deletion: %+v", res)
	}
	a.f.Read(func(s *State) {
		if s.SegmentCount() != 0 {
			t.Fatalf("refused publishes stored %d segments", s.SegmentCount())
		}
	})
	a.apply(commands.AckFileDeletions{LoadSpecs: []string{string(wiki.LoadSpec)}})
	if res := a.apply(own(again)); res.Err != nil {
		t.Fatalf("publish after the deletion: %+v", res)
	}
	// An entry without OwnFiles applies as before.
	thief.Version = "v3"
	if res := a.apply(publishCmd([]*segmeta.DataSegment{thief}, "", "")); res.Err != nil {
		t.Fatalf("legacy publish: %+v", res)
	}
}

// FileInUse sees every record naming a file, across mark, kill and a
// snapshot round trip, so that the sweeper keeps a file another segment
// still names even when the state already holds such sharing.
func TestFileInUseAcrossKillAndRestore(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	wiki := seg("wiki", 0, "v1", 0, 1)
	evil := seg("evil", 0, "v1", 0, 1)
	evil.LoadSpec = wiki.LoadSpec // state from before OwnFiles: two segments, one file
	a.apply(publishCmd([]*segmeta.DataSegment{wiki}, "", ""))
	a.apply(publishCmd([]*segmeta.DataSegment{evil}, "", ""))
	a.apply(commands.MarkSegments{DataSource: "evil", All: true})
	a.apply(commands.KillSegments{DataSource: "evil", Interval: "2024-01-01/2024-01-02", TaskID: "k"})
	check := func(f *FSM, inUse bool) {
		t.Helper()
		f.Read(func(s *State) {
			p := s.PendingFileDeletions()
			if len(p) != 1 || p[0] != string(wiki.LoadSpec) {
				t.Fatalf("pending %v", p)
			}
			if s.FileInUse(p[0]) != inUse {
				t.Fatalf("FileInUse(%s) = %v, want %v", p[0], !inUse, inUse)
			}
		})
	}
	check(a.f, true)
	r := restore(t, snapshotBytes(t, a.f))
	check(r, true)
	// Once wiki's segment is killed too, nothing names the file.
	a.apply(commands.MarkSegments{DataSource: "wiki", All: true})
	a.apply(commands.KillSegments{DataSource: "wiki", Interval: "2024-01-01/2024-01-02", TaskID: "k2"})
	check(a.f, false)
	// The pending index survives a restore: the file stays off limits.
	r = restore(t, snapshotBytes(t, a.f))
	c := publishCmd([]*segmeta.DataSegment{seg("wiki", 0, "v2", 0, 1)}, "", "")
	c.OwnFiles = true
	shared, _ := DecodeSegments(c.Segments, 1)
	shared[0].LoadSpec = wiki.LoadSpec
	c.Segments = EncodeSegments(shared)
	ra := &applier{t: t, f: r, ix: a.ix}
	if res := ra.apply(c); KindOf(res.Err) != KindConflict {
		t.Fatalf("publish onto a pending file after restore: %+v", res)
	}
}
