package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// stagingStore lets a leader replicate a batch of new entries while it is still
// writing them to its own log (Raft thesis §10.2.1). Without it the leader pays
// its fsync and then a follower's fsync, one after the other, on every write.
//
// It implements raft.LogStager, an interface of Strata's patched copy of
// hashicorp/raft (third_party/raft): the leader stages a batch, wakes the
// replicators (which read it through GetLog), then calls StoreLogs. The leader
// counts itself towards the commit quorum only once StoreLogs has returned, so
// an entry is acknowledged only when a majority holds it on disk.
//
// The leader writes one batch at a time, so one batch is staged at most.
//
// Nothing here names the patch's API, so the same code builds against
// upstream hashicorp/raft, where the store is a plain pass-through: that is the
// build `bench-control --compare-unpatched` measures against. The test asserts
// that the store is a raft.LogStager.
type stagingStore struct {
	raft.LogStore

	mu     sync.RWMutex
	staged []*raft.Log // consecutive indexes; nil when no leader write is in flight
}

func newStagingStore(inner raft.LogStore) *stagingStore {
	return &stagingStore{LogStore: inner}
}

// StageLogs makes logs readable before their StoreLogs.
func (s *stagingStore) StageLogs(logs []*raft.Log) {
	s.mu.Lock()
	s.staged = logs
	s.mu.Unlock()
}

// DropStaged forgets the staged batch after its StoreLogs failed.
func (s *stagingStore) DropStaged([]*raft.Log) {
	s.mu.Lock()
	s.staged = nil
	s.mu.Unlock()
}

// StoreLogs writes through; once the batch is in the inner store (and its
// cache), the staged copy is no longer needed.
func (s *stagingStore) StoreLogs(logs []*raft.Log) error {
	if err := s.LogStore.StoreLogs(logs); err != nil {
		return err
	}
	s.mu.Lock()
	s.staged = nil
	s.mu.Unlock()
	return nil
}

// StoreLog writes one entry through StoreLogs, so a staged batch is cleared
// the same way.
func (s *stagingStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// GetLog serves a staged entry from memory and everything else from the inner store.
func (s *stagingStore) GetLog(index uint64, out *raft.Log) error {
	s.mu.RLock()
	if n := len(s.staged); n > 0 {
		first := s.staged[0].Index
		if index >= first && index < first+uint64(n) {
			*out = *s.staged[index-first]
			s.mu.RUnlock()
			return nil
		}
	}
	s.mu.RUnlock()
	return s.LogStore.GetLog(index, out)
}
