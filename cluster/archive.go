package cluster

import (
	"errors"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"strata/audit"
)

// archivingStore is the bbolt log store as Raft sees it: a deletion of
// committed entries (the log trim after a snapshot) first archives them and
// the snapshots taken so far (audit.Archive.Trim); a deletion of uncommitted
// entries (a follower dropping a deposed leader's conflicting tail) is not
// history and is deleted only.
type archivingStore struct {
	raft.LogStore
	archive *audit.Archive
	snaps   raft.SnapshotStore
	raft    atomic.Pointer[raft.Raft] // set once Raft runs
	logger  hclog.Logger
	// appliedIndex, set by tests only, replaces Raft's applied index.
	appliedIndex func() uint64
}

func (s *archivingStore) DeleteRange(first, last uint64) error {
	applied, ok := s.appliedOK()
	if !ok {
		// Raft trims only from its own goroutines, which start inside
		// NewRaft: this never happens, and if it did, keeping the log is safe.
		return errors.New("audit archive: log trim before Raft started; log kept")
	}
	// Raft applies only committed entries: a range ending at or before the
	// applied index is committed history.
	if last > applied {
		return s.LogStore.DeleteRange(first, last)
	}
	// A follower sent the leader's snapshot trims what it held up to the
	// snapshot's index, which may include a deposed leader's entries that
	// were never committed. By Raft's log matching, this log's entries up to
	// the snapshot's index are the committed ones when it holds the
	// snapshot's own entry with the snapshot's term (always so after a
	// snapshot of its own). Otherwise they are deleted unarchived: the
	// archive has a hole there, which a read crossing it names.
	snapIndex, ok := s.matchesNewestSnapshot()
	if !ok {
		if s.logger != nil {
			s.logger.Warn("audit archive: log entries not archived: they cannot be told from a deposed leader's (the leader's snapshot replaced them)",
				"from", first, "to", last)
		}
		return s.LogStore.DeleteRange(first, last)
	}
	return s.archive.Trim(s.LogStore, s.snaps, first, last, snapIndex, func() error {
		return s.LogStore.DeleteRange(first, last)
	})
}

// matchesNewestSnapshot reports whether the log holds the newest
// snapshot's entry with the snapshot's term, and the snapshot's index.
func (s *archivingStore) matchesNewestSnapshot() (uint64, bool) {
	metas, err := s.snaps.List()
	if err != nil || len(metas) == 0 {
		return 0, false
	}
	var l raft.Log
	if err := s.LogStore.GetLog(metas[0].Index, &l); err != nil {
		return 0, false
	}
	return metas[0].Index, l.Term == metas[0].Term
}

// applied is Raft's applied index (0 before Raft runs): the end of the
// committed history this node can replay.
func (s *archivingStore) applied() uint64 {
	i, _ := s.appliedOK()
	return i
}

func (s *archivingStore) appliedOK() (uint64, bool) {
	if s.appliedIndex != nil {
		return s.appliedIndex(), true
	}
	if r := s.raft.Load(); r != nil {
		return r.AppliedIndex(), true
	}
	return 0, false
}

// ControlNodes returns the HTTP URL of every control node this node knows,
// by node id (the audit verification asks each).
func (n *Node) ControlNodes() map[string]string {
	n.peersMu.RLock()
	defer n.peersMu.RUnlock()
	out := make(map[string]string, len(n.httpURL))
	for id, url := range n.httpURL {
		out[string(id)] = url
	}
	return out
}

// History returns the node's history: its archive, its live log and its
// snapshots (audit.History).
func (n *Node) History() *audit.History { return n.history }
