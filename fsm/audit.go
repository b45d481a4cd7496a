package fsm

import "strata/commands"

// AuditEntry is one recorded change (spec 2.3). It is FSM state, so it survives
// log compaction and replays identically.
type AuditEntry struct {
	Index   uint64         `json:"index"` // Raft index of the change: a total order
	Key     string         `json:"key"`
	Type    string         `json:"type"`
	Audit   commands.Audit `json:"auditInfo"`
	Payload string         `json:"payload"`
	TimeMs  int64          `json:"time"`
}

// auditTable is append-only: entries are never modified once written, which lets
// a snapshot share the backing array with the live table.
type auditTable struct {
	entries []AuditEntry
	byType  map[string][]int // positions in entries, per type, ascending
}

func (t *auditTable) add(m Meta, key, typ, payload string) {
	if t.byType == nil {
		t.byType = map[string][]int{}
	}
	t.entries = append(t.entries, AuditEntry{Index: m.Index, Key: key, Type: typ, Audit: m.Audit, Payload: payload, TimeMs: m.TimeMs})
	t.byType[typ] = append(t.byType[typ], len(t.entries)-1)
}

func (t *auditTable) rebuildIndex() {
	t.byType = map[string][]int{}
	for i, e := range t.entries {
		t.byType[e.Type] = append(t.byType[e.Type], i)
	}
}

// AuditQuery selects audit entries of one type (and optionally one key).
type AuditQuery struct {
	Type string
	Key  string // "" = any key
	// Either a time window (inclusive, oldest first) ...
	FromMs, ToMs int64
	// ... or, when Limit > 0, the Limit newest entries, newest first.
	Limit int
}

// Audit returns the entries matching q.
func (s *State) Audit(q AuditQuery) []AuditEntry {
	pos := s.audit.byType[q.Type]
	out := []AuditEntry{}
	if q.Limit > 0 {
		for i := len(pos) - 1; i >= 0 && len(out) < q.Limit; i-- {
			e := s.audit.entries[pos[i]]
			if q.Key == "" || e.Key == q.Key {
				out = append(out, e)
			}
		}
		return out
	}
	for _, p := range pos {
		e := s.audit.entries[p]
		if e.TimeMs >= q.FromMs && e.TimeMs <= q.ToMs && (q.Key == "" || e.Key == q.Key) {
			out = append(out, e)
		}
	}
	return out
}

// AuditLen is the number of audit entries.
func (s *State) AuditLen() int { return len(s.audit.entries) }
