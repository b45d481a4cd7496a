// Package interval holds Druid-compatible time handling: half-open
// intervals of epoch milliseconds, ISO-8601 instants, periods and
// intervals as Joda-Time parses them, Joda format patterns, and the
// timestamp formats used at ingestion.
package interval

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

var errNoSlash = errors.New("interval needs a '/' separator")

// Interval is a half-open range [Start, End) of UTC epoch milliseconds.
type Interval struct{ Start, End int64 }

// Parse parses an ISO-8601 interval the way Joda (Druid's Intervals.of)
// does: "start/end", "start/period" or "period/end". Instants without an
// offset are UTC and periods are added in UTC.
func Parse(s string) (Interval, error) {
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return Interval{}, fmt.Errorf("invalid interval %q: %w", s, errNoSlash)
	}
	return parseParts(s, s[:i], s[i+1:])
}

// ParsePath parses an interval written with '_' instead of '/' as in
// segment ids and URL path segments ("2013-08-31T00:00:00.000Z_2013-09-01T00:00:00.000Z").
// A '/' separator is accepted too.
func ParsePath(s string) (Interval, error) {
	if strings.IndexByte(s, '/') >= 0 {
		return Parse(s)
	}
	i := strings.IndexByte(s, '_')
	if i < 0 {
		return Interval{}, fmt.Errorf("invalid interval %q: needs a '_' or '/' separator", s)
	}
	return parseParts(s, s[:i], s[i+1:])
}

func parseParts(whole, left, right string) (Interval, error) {
	if left == "" || right == "" {
		return Interval{}, fmt.Errorf("invalid interval %q: empty start or end", whole)
	}
	isPeriod := func(x string) bool { return x[0] == 'P' || x[0] == 'p' }
	var iv Interval
	switch {
	case isPeriod(left) && isPeriod(right):
		return Interval{}, fmt.Errorf("invalid interval %q: composed of two durations", whole)
	case isPeriod(left):
		p, err := ParsePeriod(left)
		if err != nil {
			return Interval{}, err
		}
		end, err := ParseTime(right)
		if err != nil {
			return Interval{}, err
		}
		iv = Interval{Start: p.AddMillis(end, -1, time.UTC), End: end}
	case isPeriod(right):
		start, err := ParseTime(left)
		if err != nil {
			return Interval{}, err
		}
		p, err := ParsePeriod(right)
		if err != nil {
			return Interval{}, err
		}
		iv = Interval{Start: start, End: p.AddMillis(start, 1, time.UTC)}
	default:
		start, err := ParseTime(left)
		if err != nil {
			return Interval{}, err
		}
		end, err := ParseTime(right)
		if err != nil {
			return Interval{}, err
		}
		iv = Interval{Start: start, End: end}
	}
	if iv.End < iv.Start {
		return Interval{}, fmt.Errorf("invalid interval %q: the end instant must be greater than or equal to the start", whole)
	}
	return iv, nil
}

// Of builds an interval, returning an error when end precedes start.
func Of(start, end int64) (Interval, error) {
	if end < start {
		return Interval{}, fmt.Errorf("interval end %s precedes start %s", FormatMillis(end), FormatMillis(start))
	}
	return Interval{Start: start, End: end}, nil
}

// String prints the interval as Druid does, both ends in UTC with millis.
func (iv Interval) String() string {
	var b [96]byte
	out := appendISO(b[:0], iv.Start, 0, true)
	out = append(out, '/')
	out = appendISO(out, iv.End, 0, true)
	return string(out)
}

// PathString prints the interval with '_' as separator (segment id form).
func (iv Interval) PathString() string {
	var b [96]byte
	out := appendISO(b[:0], iv.Start, 0, true)
	out = append(out, '_')
	out = appendISO(out, iv.End, 0, true)
	return string(out)
}

// Duration returns End-Start in milliseconds.
func (iv Interval) Duration() int64 { return iv.End - iv.Start }

// IsEmpty reports whether the interval holds no instant.
func (iv Interval) IsEmpty() bool { return iv.End <= iv.Start }

// ContainsTime reports whether ms lies in [Start, End).
func (iv Interval) ContainsTime(ms int64) bool { return ms >= iv.Start && ms < iv.End }

// Contains reports whether o lies entirely within iv (Joda semantics: an
// empty o is contained when its instant lies in iv).
func (iv Interval) Contains(o Interval) bool {
	if o.Start == o.End {
		return iv.ContainsTime(o.Start)
	}
	return o.Start >= iv.Start && o.End <= iv.End
}

// Overlaps reports whether the two intervals share at least one instant.
func (iv Interval) Overlaps(o Interval) bool {
	return iv.Start < o.End && o.Start < iv.End
}

// Abuts reports whether one interval ends exactly where the other starts.
func (iv Interval) Abuts(o Interval) bool {
	return iv.End == o.Start || o.End == iv.Start
}

// Intersect returns the overlap of two intervals, false when they do not overlap.
func (iv Interval) Intersect(o Interval) (Interval, bool) {
	if !iv.Overlaps(o) {
		return Interval{}, false
	}
	return Interval{Start: max(iv.Start, o.Start), End: min(iv.End, o.End)}, true
}

// Union returns the smallest interval covering both.
func (iv Interval) Union(o Interval) Interval {
	return Interval{Start: min(iv.Start, o.Start), End: max(iv.End, o.End)}
}
