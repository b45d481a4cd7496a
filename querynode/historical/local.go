package historical

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"strata/protocol"
	"strata/segmeta"
	"strata/storage/segment"
)

// Served is a segment file a process serves on its own account rather than
// on the coordinator's assignment: a running ingestion task's rows, or the
// segments it published until a historical has loaded them.
type Served struct {
	Segment  *segmeta.DataSegment
	Path     string // the segment file (storage/segment format)
	Realtime bool   // rows not yet published: brokers query them beside the timeline, never in it
	// Sequence names the sequence of a realtime segment's rows when replicas
	// of its task read the same records (protocol.Announcement.Sequences).
	Sequence string
	// Offsets, for a realtime segment of a sequence, is the stream position
	// the task's served rows reach (protocol.Announcement.Offsets).
	Offsets map[int32]int64
}

// ServeLocal replaces everything owner serves with segs, in one step: a
// broker's poll sees the old set or the new one, never a mix. Segments that
// leave the set stop being announced and answering at once (no drop delay,
// so no row is read twice: a broker a poll behind that asks for a swapped-out
// realtime id gets "missing" with the published segments that replaced it),
// and are unmapped when their running queries finish. The
// caller owns the files (mapped files may be deleted on Linux). nil segs
// stops serving owner's segments.
func (n *Node) ServeLocal(owner string, segs []Served) error {
	if owner == "" {
		return fmt.Errorf("historical: local segments need an owner")
	}
	fresh := make(map[string]*loaded, len(segs))
	closeAll := func() {
		for _, l := range fresh {
			if l.es != nil {
				l.es.Data.Close()
			}
		}
	}
	for _, s := range segs {
		if s.Segment == nil {
			closeAll()
			return fmt.Errorf("historical: a local segment of %s has no metadata", owner)
		}
		id := s.Segment.ID().String()
		if _, dup := fresh[id]; dup {
			closeAll()
			return fmt.Errorf("historical: %s serves segment %s twice", owner, id)
		}
		l := &loaded{seg: s.Segment, owner: owner, rt: s.Realtime, seq: s.Sequence, offsets: s.Offsets}
		if !s.Segment.IsTombstone() {
			data, err := segment.Open(s.Path)
			if err != nil {
				closeAll()
				return fmt.Errorf("historical: open %s for %s: %w", s.Path, owner, err)
			}
			st, err := os.Stat(s.Path)
			if err != nil {
				data.Close()
				closeAll()
				return err
			}
			l.size, l.es = st.Size(), newEngineSegment(id, data)
		}
		fresh[id] = l
	}
	var closeNow []*loaded
	n.mu.Lock()
	for id := range fresh {
		if l := n.served[id]; l != nil && l.owner != owner && l.owner != "" {
			n.mu.Unlock()
			closeAll()
			return fmt.Errorf("historical: segment %s is already served for %s", id, l.owner)
		}
	}
	// A hand-off (realtime segments replaced by published ones) is recorded,
	// so that a broker a poll behind, asking for the realtime ids, learns
	// which segments hold their rows now instead of losing them for a poll;
	// so is a merge of realtime segments (the new realtime segments hold the
	// rows of those that left the set).
	for id, rep := range n.replaced {
		if rep.owner == owner {
			delete(n.replaced, id)
		}
	}
	var published, merged []protocol.SegmentRef
	for id, l := range fresh {
		ref := protocol.SegmentRef{ID: id, Interval: l.seg.Interval.String()}
		switch old := n.served[id]; {
		case !l.rt:
			published = append(published, ref)
		case old == nil || old.owner != owner:
			merged = append(merged, ref)
		}
	}
	byID := func(a, b protocol.SegmentRef) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(published, byID)
	slices.SortFunc(merged, byID)
	for id, l := range n.served {
		if l.owner != owner {
			continue
		}
		_, stays := fresh[id]
		rep := published
		if len(rep) == 0 {
			rep = merged
		}
		if l.rt && !stays && len(rep) > 0 {
			if n.replaced == nil {
				n.replaced = map[string]replacement{}
			}
			n.replaced[id] = replacement{owner: owner, refs: rep}
		}
		delete(n.served, id)
		l.gone = true
		if l.refs == 0 {
			closeNow = append(closeNow, l)
		}
	}
	for id, l := range fresh {
		if old := n.served[id]; old != nil { // the coordinator's copy: keep it, drop ours
			if l.es != nil {
				closeNow = append(closeNow, &loaded{es: l.es})
			}
			continue
		}
		n.served[id] = l
	}
	n.version++
	n.mu.Unlock()
	for _, l := range closeNow {
		if l.es != nil {
			l.es.Data.Close()
		}
	}
	return nil
}

// replacement is what a realtime segment's rows were published as.
type replacement struct {
	owner string
	refs  []protocol.SegmentRef
}

// HoldLocal makes sub-queries that read owner's realtime segments wait until
// the returned release is called. A task holds its realtime rows while it
// publishes them: until the publish settles, they may be answered neither
// from the realtime segments (a historical may load the published ones at
// any moment, and a broker reading both would count the rows twice) nor not
// at all. On release the task has either replaced them by the published
// segments (ServeLocal; a reader then gets "missing" and the replacements,
// which it skips where it reads them already) or kept them (nothing was
// published). Release is idempotent.
func (n *Node) HoldLocal(owner string) (release func()) {
	ch := make(chan struct{})
	n.mu.Lock()
	if n.holds == nil {
		n.holds = map[string]chan struct{}{}
	}
	prev := n.holds[owner]
	n.holds[owner] = ch
	n.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			n.mu.Lock()
			if n.holds[owner] == ch {
				if prev != nil {
					n.holds[owner] = prev
				} else {
					delete(n.holds, owner)
				}
			}
			n.mu.Unlock()
			close(ch)
		})
	}
}

// awaitHolds waits, with n.mu held (and released while waiting), until no
// realtime segment of refs belongs to an owner holding its reads.
func (n *Node) awaitHolds(ctx context.Context, refs []protocol.SegmentRef) error {
	for {
		var wait chan struct{}
		for _, ref := range refs {
			if l := n.served[ref.ID]; l != nil && l.rt {
				if ch := n.holds[l.owner]; ch != nil {
					wait = ch
					break
				}
			}
		}
		if wait == nil {
			return nil
		}
		n.holdWait++
		n.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
		}
		n.mu.Lock()
		n.holdWait--
		if err := ctx.Err(); err != nil {
			return cancelledError(err.Error())
		}
	}
}
