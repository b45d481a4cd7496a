package historical

import (
	"fmt"
	"os"
	"slices"
	"strings"

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
		l := &loaded{seg: s.Segment, owner: owner, rt: s.Realtime}
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
	// which segments hold their rows now instead of losing them for a poll.
	for id, rep := range n.replaced {
		if rep.owner == owner {
			delete(n.replaced, id)
		}
	}
	var published []protocol.SegmentRef
	for _, l := range fresh {
		if !l.rt {
			published = append(published, protocol.SegmentRef{ID: l.seg.ID().String(), Interval: l.seg.Interval.String()})
		}
	}
	slices.SortFunc(published, func(a, b protocol.SegmentRef) int { return strings.Compare(a.ID, b.ID) })
	for id, l := range n.served {
		if l.owner != owner {
			continue
		}
		if l.rt && len(published) > 0 {
			if n.replaced == nil {
				n.replaced = map[string]replacement{}
			}
			n.replaced[id] = replacement{owner: owner, refs: published}
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
