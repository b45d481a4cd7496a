package streaming

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"strata/interval"
)

// Message rejection, as Druid's stream supervisors do it: the spec's
// lateMessageRejectionPeriod (or lateMessageRejectionStartDateTime) and
// earlyMessageRejectionPeriod become, when the supervisor creates a task
// group, the bounds minimumMessageTime and maximumMessageTime of the row
// timestamps its tasks keep. A task throws the rows outside them away and
// counts them as thrownAway, like rows a transformSpec filter drops.

// MessageTimes are a task group's minimumMessageTime and maximumMessageTime
// in ms since the epoch, both inclusive; HasMin/HasMax false = unbounded.
type MessageTimes struct {
	Min, Max       int64
	HasMin, HasMax bool
}

// MessageTimes returns the bounds of a task group created at created (the
// supervisor's clock; never read inside an FSM apply): rows before created −
// lateMessageRejectionPeriod, or before lateMessageRejectionStartDateTime,
// and rows after created + taskDuration + earlyMessageRejectionPeriod are
// rejected.
func (s *SupervisorSpec) MessageTimes(created time.Time) MessageTimes {
	var m MessageTimes
	now := created.UnixMilli()
	switch {
	case s.LateMessageRejectionStartDateTime != nil:
		m.Min, m.HasMin = *s.LateMessageRejectionStartDateTime, true
	case s.LateMessageRejectionPeriod != nil:
		m.Min, m.HasMin = clampInstant(now-s.LateMessageRejectionPeriod.Milliseconds()), true
	}
	if s.EarlyMessageRejectionPeriod != nil {
		m.Max = clampInstant(now + s.TaskDuration.Milliseconds() + s.EarlyMessageRejectionPeriod.Milliseconds())
		m.HasMax = true
	}
	return m
}

func clampInstant(ms int64) int64 { return min(max(ms, interval.MinInstant), interval.MaxInstant) }

// payload renders the bounds as the task ioConfig's minimumMessageTime and
// maximumMessageTime: ISO timestamps, or null when unbounded.
func (m MessageTimes) payload() (minTime, maxTime *string) {
	if m.HasMin {
		s := interval.FormatMillis(m.Min)
		minTime = &s
	}
	if m.HasMax {
		s := interval.FormatMillis(m.Max)
		maxTime = &s
	}
	return minTime, maxTime
}

// restrict narrows the intervals of the rows a build keeps (nil: all) to the
// bounds. Build throws away, as thrownAway, every row outside the result.
func (m MessageTimes) restrict(ivs []interval.Interval) []interval.Interval {
	if !m.HasMin && !m.HasMax {
		return ivs
	}
	keep := interval.Eternity
	if m.HasMin {
		keep.Start = m.Min
	}
	if m.HasMax {
		keep.End = min(m.Max+1, interval.MaxInstant) // Max is inclusive, interval ends are not
	}
	if len(ivs) == 0 {
		ivs = []interval.Interval{interval.Eternity}
	}
	var out []interval.Interval
	for _, iv := range ivs {
		if x, ok := iv.Intersect(keep); ok && !x.IsEmpty() {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		// Nothing can be kept; an empty list would mean "keep everything".
		out = []interval.Interval{{Start: keep.Start, End: keep.Start}}
	}
	return out
}

// parseRejection reads the rejection settings of a supervisor ioConfig into
// s and puts their normalized form (Druid's: periods as PT<seconds>S, the
// date time in UTC with milliseconds, null when unset) into fields.
func (s *SupervisorSpec) parseRejection(io *rawKafkaIO, fields map[string]json.RawMessage) error {
	periods := []struct {
		name string
		raw  json.RawMessage
		dst  **time.Duration
	}{
		{"lateMessageRejectionPeriod", io.LateMessageRejectionPeriod, &s.LateMessageRejectionPeriod},
		{"earlyMessageRejectionPeriod", io.EarlyMessageRejectionPeriod, &s.EarlyMessageRejectionPeriod},
	}
	for _, p := range periods {
		fields[p.name] = json.RawMessage("null")
		if absent(p.raw) {
			continue
		}
		var str string
		if err := json.Unmarshal(p.raw, &str); err != nil {
			return fmt.Errorf("ioConfig.%s must be an ISO 8601 period string, got %s", p.name, p.raw)
		}
		d, err := parseDuration(str, true)
		if err != nil {
			return fmt.Errorf("ioConfig.%s: %v", p.name, err)
		}
		*p.dst = &d
		fields[p.name] = quote(FormatDuration(d))
	}
	const startName = "lateMessageRejectionStartDateTime"
	fields[startName] = json.RawMessage("null")
	if !absent(io.LateMessageRejectionStartDateTime) {
		ms, err := parseDateTime(io.LateMessageRejectionStartDateTime)
		if err != nil {
			return fmt.Errorf("ioConfig.%s: %v", startName, err)
		}
		s.LateMessageRejectionStartDateTime = &ms
		fields[startName] = quote(interval.FormatMillis(ms))
	}
	if s.LateMessageRejectionPeriod != nil && s.LateMessageRejectionStartDateTime != nil {
		return fmt.Errorf("ioConfig does not support both properties lateMessageRejectionStartDateTime and lateMessageRejectionPeriod; set only one")
	}
	return nil
}

// parseMessageTimes reads a task ioConfig's minimumMessageTime and
// maximumMessageTime.
func parseMessageTimes(minRaw, maxRaw json.RawMessage) (MessageTimes, error) {
	var m MessageTimes
	var err error
	if !absent(minRaw) {
		if m.Min, err = parseDateTime(minRaw); err != nil {
			return m, fmt.Errorf("ioConfig.minimumMessageTime: %v", err)
		}
		m.HasMin = true
	}
	if !absent(maxRaw) {
		if m.Max, err = parseDateTime(maxRaw); err != nil {
			return m, fmt.Errorf("ioConfig.maximumMessageTime: %v", err)
		}
		m.HasMax = true
	}
	return m, nil
}

// parseDateTime reads a date time as Druid's JSON does: an ISO 8601 string
// (UTC when it names no offset) or a number of ms since the epoch.
func parseDateTime(raw json.RawMessage) (int64, error) {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		ms, err := interval.ParseTime(str)
		if err != nil {
			return 0, fmt.Errorf("%q is not an ISO 8601 date time: %v", str, err)
		}
		return ms, nil
	}
	var ms int64
	if err := json.Unmarshal(raw, &ms); err != nil {
		return 0, fmt.Errorf("want an ISO 8601 date time, got %s", raw)
	}
	if ms < interval.MinInstant || ms > interval.MaxInstant {
		return 0, fmt.Errorf("%d ms is out of range", ms)
	}
	return ms, nil
}

// absent reports a JSON value that is missing or null.
func absent(raw json.RawMessage) bool { return len(bytes.TrimSpace(raw)) == 0 || isNull(raw) }
