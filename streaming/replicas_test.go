package streaming

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
)

// With ioConfig.replicas 2 a sequence runs as two tasks reading the same
// offsets under one sequence name, replicas 0 and 1; a failed replica is
// replaced by one reading from the sequence's start, numbered 2 so that the
// replica reading since the start publishes first; once a replica publishes, the other is
// left to end on its own (shown as publishing, not shut down) and the next
// sequence starts from the published offsets, again with two replicas.
func TestSupervisorRunsReplicas(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	spec := strings.Replace(string(supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true})),
		`"taskCount":1`, `"taskCount":1,"replicas":2`, 1)
	c.setSpec(t, []byte(spec), false)
	eventually.True(t, "two replicas", func() bool { return len(c.tasks()) == 2 })
	first := c.tasks()
	seq := first[0].IOConfig.BaseSequenceName
	for _, p := range first {
		if p.GroupID != "index_kafka_wiki_g0" || p.IOConfig.BaseSequenceName != seq || !strings.HasPrefix(p.ID, seq+"_") ||
			!mapsEqual(startOffsets(p), map[string]int64{"0": 0, "1": 0}) {
			t.Fatalf("replica %+v of sequence %s", p, seq)
		}
	}
	i0, _ := replicaIndex(seq, first[0].ID)
	i1, ok := replicaIndex(seq, first[1].ID)
	if seq == "" || !ok || i0 != 0 || i1 != 1 {
		t.Fatalf("replicas %s and %s of sequence %q", first[0].ID, first[1].ID, seq)
	}
	a, b := first[0].ID, first[1].ID
	c.start(a)
	c.start(b)

	// b fails: a new replica of the same sequence, from its start.
	c.finish("wiki", "t", b, nil)
	eventually.True(t, "a replica in place of the failed one", func() bool { return len(c.tasks()) == 3 })
	repl := c.tasks()[2]
	if i, _ := replicaIndex(seq, repl.ID); i != 2 || repl.IOConfig.BaseSequenceName != seq || !mapsEqual(startOffsets(repl), map[string]int64{"0": 0, "1": 0}) {
		t.Fatalf("replacement %+v", repl)
	}
	c.start(repl.ID)

	// a publishes: the replacement ends on its own and the next sequence
	// starts where a ended.
	c.finish("wiki", "t", a, map[int32]int64{0: 5, 1: 7})
	eventually.True(t, "the next sequence", func() bool { return len(c.tasks()) == 5 })
	next := c.tasks()[3:]
	nseq := next[0].IOConfig.BaseSequenceName
	for _, p := range next {
		if p.IOConfig.BaseSequenceName != nseq || nseq == seq || !mapsEqual(startOffsets(p), map[string]int64{"0": 5, "1": 7}) {
			t.Fatalf("next sequence's replica %+v", p)
		}
	}
	eventually.True(t, "the ending replica shown as publishing", func() bool {
		_, rep := status(t, m, "wiki")
		return len(rep.PublishingTasks) == 1 && rep.PublishingTasks[0].ID == repl.ID
	})
	settle(t, m, "wiki")
	if n := len(c.tasks()); n != 5 || slices.Contains(c.stops(), repl.ID) {
		t.Fatalf("%d tasks (want 5); shut down: %v", n, c.stops())
	}

	// A replica that succeeds without the offsets moving left the publish
	// to the other (its worker stopped): the sequence goes on, with a new
	// replica in its place.
	c.start(next[0].ID)
	c.start(next[1].ID)
	c.finish("wiki", "t", next[1].ID, map[int32]int64{0: 5, 1: 7})
	eventually.True(t, "a replica in place of the one that left", func() bool { return len(c.tasks()) == 6 })
	if p := c.tasks()[5]; p.IOConfig.BaseSequenceName != nseq || !mapsEqual(startOffsets(p), map[string]int64{"0": 5, "1": 7}) {
		t.Fatalf("after a replica left: %+v", p)
	}
	settle(t, m, "wiki")
	if n := len(c.tasks()); n != 6 {
		t.Fatalf("%d tasks, want 6", n)
	}
}

// A new leader adopts the replicas of the running sequence, and leaves a
// replica whose sequence was published meanwhile to end on its own (shown
// as publishing, not stopped) instead of taking it for the group's task.
func TestSupervisorAdoptsReplicas(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	_, stop := runManager(t, c)
	spec := strings.Replace(string(supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true})),
		`"taskCount":1`, `"taskCount":1,"replicas":2`, 1)
	c.setSpec(t, []byte(spec), false)
	eventually.True(t, "two replicas", func() bool { return len(c.tasks()) == 2 })
	first := c.tasks()
	for _, p := range first {
		c.start(p.ID)
	}
	stop()
	// While no supervisor runs, replica 0 publishes (its status is still
	// to come); replica 1 runs on.
	c.setOffsets("wiki", "t", map[int32]int64{0: 9})
	m2, _ := runManager(t, c)
	eventually.True(t, "the next sequence", func() bool { return len(c.tasks()) == 4 })
	for _, p := range c.tasks()[2:] {
		if p.IOConfig.BaseSequenceName == first[0].IOConfig.BaseSequenceName || !mapsEqual(startOffsets(p), map[string]int64{"0": 9}) {
			t.Fatalf("next sequence's replica %+v", p)
		}
	}
	settle(t, m2, "wiki")
	_, rep := status(t, m2, "wiki")
	if len(c.stops()) != 0 || len(rep.PublishingTasks) != 2 || len(rep.ActiveTasks) != 2 {
		t.Fatalf("stopped %v; report %+v", c.stops(), rep)
	}
}

// A replica that stopped behind the furthest one reads the records between
// them, and only those, onto its spool: each partition up to (not
// including) the furthest offset, a partition already there untouched.
func TestReadToTheFurthestReplica(t *testing.T) {
	_, addr := supCluster(t, 2, "t")
	produce(t, addr, "t", 10, 0, 1)
	spool := filepath.Join(t.TempDir(), "records")
	if err := os.WriteFile(spool, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := &kafkaTask{topic: "t", bootstrap: []string{addr}}
	from := Offsets{Stream: "t", Partitions: map[int32]int64{0: 4, 1: 7}}
	to := Offsets{Stream: "t", Partitions: map[int32]int64{0: 9, 1: 7}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next, n, err := k.readTo(ctx, spool, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 || next.Partitions[0] != 9 || next.Partitions[1] != 7 {
		t.Fatalf("read %d records, next %v; want 5 and 0:9 1:7", n, next.Partitions)
	}
	b, err := os.ReadFile(spool)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 || lines[0] != "{}" || !strings.Contains(lines[1], `"p4"`) || !strings.Contains(lines[5], `"p8"`) {
		t.Fatalf("spool %q", lines)
	}
}
