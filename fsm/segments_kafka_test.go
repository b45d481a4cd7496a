package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"strata/commands"
	"strata/segmeta"
)

func kmeta(stream string, kv ...int64) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf(`"%d":%d`, kv[i], kv[i+1]))
	}
	return fmt.Sprintf(`{"type":"kafka","partitions":{"type":"end","stream":%q,"partitionOffsetMap":{%s}}}`, stream, strings.Join(parts, ","))
}

func kafkaPublish(segs []*segmeta.DataSegment, start, end string) commands.PublishSegments {
	c := publishCmd(segs, start, end)
	c.MetadataMode = commands.MetadataModeKafka
	return c
}

func storedMeta(t *testing.T, f *FSM, ds string) string {
	t.Helper()
	var m string
	f.Read(func(s *State) { m, _ = s.DataSourceMetadata(ds) })
	return m
}

func TestKafkaMetadataCAS(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	// Nothing stored: any start matches; the end offsets are stored canonically.
	res := a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 0, "v1", 0, 0)}, kmeta("t", 1, 5, 0, 0), kmeta("t", 1, 7, 0, 10)))
	if res.Err != nil || res.Value.(PublishResult).Published != 1 {
		t.Fatalf("first publish: %+v", res)
	}
	if got, want := storedMeta(t, a.f, "k"), kmeta("t", 0, 10, 1, 7); got != want {
		t.Fatalf("stored %s, want %s", got, want)
	}
	// Matching start for one partition; partition 1 untouched; partition 2 is new (absent: matches).
	res = a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 0, "v1", 1, 0)}, kmeta("t", 0, 10, 2, 3), kmeta("t", 0, 15, 2, 4)))
	if res.Err != nil {
		t.Fatalf("matching publish: %v", res.Err)
	}
	if got, want := storedMeta(t, a.f, "k"), kmeta("t", 0, 15, 1, 7, 2, 4); got != want {
		t.Fatalf("merged %s, want %s", got, want)
	}
	// A stale start (partition 0 moved on) is a conflict and changes nothing.
	res = a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, kmeta("t", 0, 10), kmeta("t", 0, 20)))
	if KindOf(res.Err) != KindConflict || !strings.Contains(res.Err.Error(), "partition 0 is 15") {
		t.Fatalf("stale start: %+v", res)
	}
	a.f.Read(func(s *State) {
		if _, ok := s.Segment(seg("k", 1, "v1", 0, 0).ID()); ok {
			t.Fatal("a refused publish added a segment")
		}
	})
	if got, want := storedMeta(t, a.f, "k"), kmeta("t", 0, 15, 1, 7, 2, 4); got != want {
		t.Fatalf("after conflict %s, want %s", got, want)
	}
	// Another stream is a conflict; start and end naming different streams is invalid.
	if res = a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, kmeta("u", 0, 15), kmeta("u", 0, 16))); KindOf(res.Err) != KindConflict {
		t.Fatalf("stream mismatch: %+v", res)
	}
	if res = a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, kmeta("t", 0, 15), kmeta("u", 0, 16))); KindOf(res.Err) != KindInvalid {
		t.Fatalf("start/end streams differ: %+v", res)
	}
	// Druid's aliases (topic, partitionSequenceNumberMap) are accepted.
	alias := `{"type":"kafka","partitions":{"type":"start","topic":"t","partitionSequenceNumberMap":{"1":7}}}`
	if res = a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, alias, kmeta("t", 1, 9))); res.Err != nil {
		t.Fatalf("aliases: %v", res.Err)
	}
	if got, want := storedMeta(t, a.f, "k"), kmeta("t", 0, 15, 1, 9, 2, 4); got != want {
		t.Fatalf("after alias %s, want %s", got, want)
	}
	// Bad metadata and unknown modes are invalid.
	for _, bad := range []string{`{"type":"kinesis","partitions":{}}`, kmeta("t", 0, -1), `{"type":"kafka","partitions":{"stream":"t","partitionOffsetMap":{"x":1}}}`, `[1]`} {
		if res = a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 2, "v1", 0, 0)}, bad, kmeta("t", 0, 1))); KindOf(res.Err) != KindInvalid {
			t.Fatalf("bad start %s: %+v", bad, res)
		}
	}
	c := publishCmd([]*segmeta.DataSegment{seg("k", 2, "v1", 0, 0)}, "", "")
	c.MetadataMode = "kinesis"
	if res = a.apply(c); KindOf(res.Err) != KindInvalid {
		t.Fatalf("unknown mode: %+v", res)
	}
}

func TestKafkaMetadataOverForeignDocument(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	if res := a.apply(publishCmd([]*segmeta.DataSegment{seg("k", 0, "v1", 0, 0)}, "null", `{"offset":1}`)); res.Err != nil {
		t.Fatal(res.Err)
	}
	// Stored metadata that is not Kafka's cannot be compared per partition.
	if res := a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, kmeta("t", 0, 1), kmeta("t", 0, 2))); KindOf(res.Err) != KindConflict {
		t.Fatalf("foreign stored metadata: %+v", res)
	}
	// The whole-document mode still works on Kafka metadata stored per partition.
	b := &applier{t: t, f: New(nil)}
	b.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 0, "v1", 0, 0)}, "", kmeta("t", 0, 3)))
	if res := b.apply(publishCmd([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, kmeta("t", 0, 3), kmeta("t", 0, 4))); res.Err != nil {
		t.Fatalf("whole-document CAS over kafka metadata: %v", res.Err)
	}
}

func TestKafkaMetadataSnapshotAndDeterminism(t *testing.T) {
	build := func() *FSM {
		a := &applier{t: t, f: New(nil)}
		a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 0, "v1", 0, 0)}, kmeta("t", 0, 0, 1, 0, 10, 0), kmeta("t", 10, 4, 0, 3, 1, 2)))
		a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 1, "v1", 0, 0)}, kmeta("t", 1, 2), kmeta("t", 1, 8)))
		a.apply(kafkaPublish([]*segmeta.DataSegment{seg("k", 2, "v1", 0, 0)}, kmeta("t", 1, 2), kmeta("t", 1, 9))) // rejected
		return a.f
	}
	f1, f2 := build(), build()
	s1 := snapshotBytes(t, f1)
	if !bytes.Equal(s1, snapshotBytes(t, f2)) {
		t.Fatal("same log, different snapshots")
	}
	r := restore(t, s1)
	if !bytes.Equal(snapshotBytes(t, r), s1) {
		t.Fatal("restore round trip differs")
	}
	want := kmeta("t", 0, 3, 1, 8, 10, 4)
	if got := storedMeta(t, r, "k"); got != want {
		t.Fatalf("restored %s, want %s", got, want)
	}
	stream, offs, err := ParseKafkaMetadata(want)
	if err != nil || stream != "t" || len(offs) != 3 || offs[10] != 4 {
		t.Fatalf("parse back: %q %v %v", stream, offs, err)
	}
	var v any
	if json.Unmarshal([]byte(want), &v) != nil {
		t.Fatal("stored metadata is not JSON")
	}
}

func TestParseKafkaMetadataEmpty(t *testing.T) {
	for _, s := range []string{"", " null "} {
		stream, offs, err := ParseKafkaMetadata(s)
		if err != nil || stream != "" || len(offs) != 0 || offs == nil {
			t.Fatalf("%q: %q %v %v", s, stream, offs, err)
		}
	}
	if _, _, err := ParseKafkaMetadata(`{"type":"kafka","partitions":{"stream":"t","partitionOffsetMap":{"0":1}}} x`); err == nil {
		t.Fatal("trailing data accepted")
	}
}

// A publish naming its task needs the task running and holding locks on the
// segments: a task the overlord ended (a supervisor reset kills them) cannot
// publish its stale offsets afterwards.
func TestPublishByTaskNeedsRunningTaskAndLock(t *testing.T) {
	a := &applier{t: t, f: New(nil)}
	mustOK(t, "submit", a.apply(submitCmd("kt", "k")))
	pub := func(part int32) commands.PublishSegments {
		c := kafkaPublish([]*segmeta.DataSegment{seg("k", 0, "v1", part, 0)}, kmeta("t", 0, int64(part)), kmeta("t", 0, int64(part)+1))
		c.TaskID = "kt"
		return c
	}
	if res := a.apply(pub(0)); KindOf(res.Err) != KindConflict || !strings.Contains(res.Err.Error(), "holds no lock") {
		t.Fatalf("publish without a lock: %+v", res)
	}
	mustOK(t, "lock", a.apply(commands.AcquireLock{TaskID: "kt", Interval: "2024-01-01/2024-01-02"}))
	mustOK(t, "publish", a.apply(pub(0)))
	if res := a.apply(commands.PublishSegments{DataSource: "k", TaskID: "nope"}); KindOf(res.Err) != KindConflict || !strings.Contains(res.Err.Error(), "not running") {
		t.Fatalf("publish by an unknown task: %+v", res)
	}
	mustOK(t, "shutdown", a.apply(commands.ShutdownTask{ID: "kt"}))
	before := storedMeta(t, a.f, "k")
	if res := a.apply(pub(1)); KindOf(res.Err) != KindConflict || !strings.Contains(res.Err.Error(), "not running") {
		t.Fatalf("publish after shutdown: %+v", res)
	}
	if got := storedMeta(t, a.f, "k"); got != before {
		t.Fatalf("a refused publish moved the offsets: %s -> %s", before, got)
	}
}
