package cluster

import (
	"errors"
	"sync/atomic"

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
}

func (s *archivingStore) DeleteRange(first, last uint64) error {
	r := s.raft.Load()
	if r == nil {
		// Raft trims only from its own goroutines, which start inside
		// NewRaft: this never happens, and if it did, keeping the log is safe.
		return errors.New("audit archive: log trim before Raft started; log kept")
	}
	// Raft applies only committed entries: a range ending at or before the
	// applied index is committed history.
	if last > r.AppliedIndex() {
		return s.LogStore.DeleteRange(first, last)
	}
	return s.archive.Trim(s.LogStore, s.snaps, first, last, func() error {
		return s.LogStore.DeleteRange(first, last)
	})
}

// applied is Raft's applied index (0 before Raft runs): the end of the
// committed history this node can replay.
func (s *archivingStore) applied() uint64 {
	if r := s.raft.Load(); r != nil {
		return r.AppliedIndex()
	}
	return 0
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
