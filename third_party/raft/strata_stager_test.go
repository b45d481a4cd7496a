// Not part of upstream hashicorp/raft: added by Strata with its patch
// (../raft.patch). It makes the tests' InmemStore a LogStager, so upstream's
// own suite runs every leader write through the patched, overlapping path of
// dispatchLogs: staged entries are readable by the replicators at once, and
// LastIndex moves only when StoreLogs stores them.

package raft

var _ LogStager = (*InmemStore)(nil)

// StageLogs makes logs readable through GetLog before StoreLogs.
func (i *InmemStore) StageLogs(logs []*Log) {
	i.l.Lock()
	defer i.l.Unlock()
	for _, l := range logs {
		i.logs[l.Index] = l
	}
}

// DropStaged forgets staged logs that StoreLogs did not store.
func (i *InmemStore) DropStaged(logs []*Log) {
	i.l.Lock()
	defer i.l.Unlock()
	for _, l := range logs {
		if l.Index > i.highIndex {
			delete(i.logs, l.Index)
		}
	}
}
