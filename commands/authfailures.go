package commands

// RecordAuthFailures writes one window's authentication failures to the
// audit (issue 18), counted, so that a client guessing passwords costs one
// log entry per window (svc.auth.failureAuditPeriod), not one per request.
// It changes no state but the audit.
type RecordAuthFailures struct {
	StartMs int64 `json:"startMs"`
	EndMs   int64 `json:"endMs"`
	// Missing requests had no credentials, Wrong ones wrong credentials,
	// Throttled ones came from an address over the failed-login limit.
	Missing   int `json:"missing"`
	Wrong     int `json:"wrong"`
	Throttled int `json:"throttled"`
	// ByAddress counts the three by client address (at most 100, the rest
	// under "other").
	ByAddress map[string]int `json:"byAddress"`
}

// CommandType implements Command.
func (RecordAuthFailures) CommandType() string { return "security.authFailures" }

func init() { Register(RecordAuthFailures{}, false) }
