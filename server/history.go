package server

import (
	"net/http"
	"strconv"
	"time"

	"strata/fsm"
	"strata/interval"
)

// auditEntryJSON is spec 2.3.
type auditEntryJSON struct {
	Key       string        `json:"key"`
	Type      string        `json:"type"`
	AuditInfo auditInfoJSON `json:"auditInfo"`
	Payload   string        `json:"payload"`
	AuditTime string        `json:"auditTime"`
}

type auditInfoJSON struct {
	Author  string `json:"author"`
	Comment string `json:"comment"`
	IP      string `json:"ip"`
}

// history serves an audit history endpoint with Druid's interval/count rules
// (ADMIN-API §8): no parameters = the last svc.audit.manager.auditHistoryMillis,
// oldest first; interval = that window, oldest first (count ignored); count = the
// n newest, newest first; count ≤ 0 → 400.
func (s *Server) history(typ, key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := fsm.AuditQuery{Type: typ, Key: key}
		qs := r.URL.Query()
		ivText, hasInterval := qs.Get("interval"), qs.Has("interval")
		countText, hasCount := qs.Get("count"), qs.Has("count")
		switch {
		case hasInterval:
			iv, err := interval.Parse(ivText)
			if err != nil {
				writeError(w, http.StatusBadRequest, err.Error()+" (use ISO 8601 start/end, e.g. 2024-01-01/2024-01-08)")
				return
			}
			// Both ends inclusive, as Druid's audit query does.
			q.FromMs, q.ToMs = iv.Start, iv.End
		case hasCount:
			n, err := strconv.Atoi(countText)
			if err != nil {
				writeError(w, http.StatusBadRequest, "count must be an integer, got "+strconv.Quote(countText))
				return
			}
			if n <= 0 {
				writeError(w, http.StatusBadRequest, "Limit must be greater than zero!")
				return
			}
			q.Limit = n
		default:
			now := time.Now().UnixMilli()
			q.FromMs, q.ToMs = now-s.settings.AuditHistory.Milliseconds(), now
		}
		var entries []fsm.AuditEntry
		s.node.FSM().Read(func(st *fsm.State) { entries = st.Audit(q) })
		out := make([]auditEntryJSON, len(entries))
		for i, e := range entries {
			out[i] = auditEntryJSON{
				Key: e.Key, Type: e.Type, Payload: e.Payload,
				AuditInfo: auditInfoJSON{Author: e.Audit.Author, Comment: e.Audit.Comment, IP: e.Audit.IP},
				AuditTime: interval.FormatMillis(e.TimeMs),
			}
		}
		writeJSON(w, http.StatusOK, out)
	}
}
