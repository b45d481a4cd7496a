package fsm

import (
	"encoding/json"

	"strata/commands"
)

// AuditAuthFailures is the audit type of counted authentication failures
// (commands.RecordAuthFailures); the key is "authentication".
const AuditAuthFailures = "auth.failures"

func init() { on(applyRecordAuthFailures) }

// applyRecordAuthFailures adds the window's counts to the audit. The
// payload is the command itself: encoding/json writes the address map in
// key order, so the bytes are the same on every replica.
func applyRecordAuthFailures(s *State, m Meta, c commands.RecordAuthFailures) (any, error) {
	if c.EndMs < c.StartMs {
		return nil, Invalid("authentication failures: the window ends (%d) before it starts (%d)", c.EndMs, c.StartMs)
	}
	if c.Missing < 0 || c.Wrong < 0 || c.Throttled < 0 || c.Missing+c.Wrong+c.Throttled == 0 {
		return nil, Invalid("authentication failures: the counts must be at least 0 and not all 0")
	}
	for addr, n := range c.ByAddress {
		if addr == "" || n <= 0 {
			return nil, Invalid("authentication failures: address %q has count %d", addr, n)
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, Invalid("authentication failures: %v", err)
	}
	s.audit.add(m, "authentication", AuditAuthFailures, string(b))
	return nil, nil
}
