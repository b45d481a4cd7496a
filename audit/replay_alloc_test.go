package audit

import (
	"testing"
)

// A running node's live log is replayed range by range (issue 17's replay
// target, ≥ 100,000 commands per CPU-second): the read path costs a few
// allocations per entry (the entry and its data), not a read transaction
// and a msgpack decoder per entry as raft-boltdb's GetLog does.
func TestLiveReplayReadsRangesAtOnce(t *testing.T) {
	nd := newNode(t, 2000)
	h := &History{Live: nd.store}
	last, err := h.Log().LastIndex()
	if err != nil || last < 2000 {
		t.Fatalf("last index %d: %v", last, err)
	}
	var n uint64
	allocs := testing.AllocsPerRun(3, func() {
		n = 0
		if err := h.Log().Scan(1, last, func(Entry) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	})
	if n != last {
		t.Fatalf("scanned %d of %d entries", n, last)
	}
	t.Logf("%.1f allocations per entry", allocs/float64(last))
	if per := allocs / float64(last); per > 6 {
		t.Fatalf("%.1f allocations per entry replayed from the live log, want at most 6", per)
	}
}
