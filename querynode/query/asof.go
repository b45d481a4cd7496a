package query

import (
	"strconv"
	"strings"

	"strata/interval"
)

// AsOf is the moment a query reads the data as of (the context key asOf):
// the segment timeline as it was once a Raft log index had been applied, or
// at an instant. The zero value means now (no time travel).
type AsOf struct {
	Set    bool
	ByTime bool   // TimeMs, not Index, names the moment
	Index  uint64 // the state after this log index (0: before the first)
	TimeMs int64  // the state at this instant: after the last index stamped at or before it
}

// ParseAsOf reads an asOf value: a whole number (a JSON number or a string
// of digits) is a Raft log index, anything else must be an ISO-8601 instant.
// Digits alone are always an index, never a year.
func ParseAsOf(s string) (AsOf, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return AsOf{}, Invalidf("Query context parse failed: asOf is empty: give a Raft log index or an ISO-8601 time")
	}
	if isDigits(s) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return AsOf{}, Invalidf("Query context parse failed: asOf %q is too large for a Raft log index", s)
		}
		return AsOf{Index: n, Set: true}, nil
	}
	ms, err := interval.ParseTime(s)
	if err != nil {
		return AsOf{}, Invalidf("Query context parse failed: asOf %q is neither a Raft log index nor an ISO-8601 time: %v", s, err)
	}
	return AsOf{TimeMs: ms, ByTime: true, Set: true}, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// String renders the value as ParseAsOf reads it ("" when not set).
func (a AsOf) String() string {
	switch {
	case !a.Set:
		return ""
	case a.ByTime:
		return interval.FormatMillis(a.TimeMs)
	}
	return strconv.FormatUint(a.Index, 10)
}
