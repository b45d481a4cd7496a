package fsm

import "io"

// Freeze captures the state as of the last applied entry, cheaply under the
// lock as Snapshot does, for an online backup: index is that entry's, and
// snap writes the snapshot bytes (the format of snapshot.go, which Restore
// reads) while Apply goes on.
func (f *FSM) Freeze() (index uint64, snap io.WriterTo) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fr := f.state.freeze()
	return fr.header.Index, fr
}
