// Package granularity implements Druid's query and segment granularities:
// the simple names (hour, day, ...), all, none, duration and period
// granularities with time zones and origins.
//
// A bucket of t is the largest bucket start <= t. Simple UTC granularities
// and other constant-length ones are pure integer arithmetic; calendar
// ones (months, years, days in zones with DST) compute in the zone's local
// time and cache the last bucket.
//
// Deliberate differences from Druid's PeriodGranularity, all in corner
// cases where Druid's result is not a floor:
//   - multi-hour periods with an origin at or before 1970 (and six_hour /
//     eight_hour before 1970): Druid may return a bucket after the instant;
//     here the bucket is always the floor;
//   - duration granularities mixing an origin and an instant on opposite
//     sides of 1970 (Druid adds the duration back only once): same;
//   - compound periods (P1DT1H) in zones with DST: Druid steps from the
//     origin one period at a time; here bucket k starts at origin + k·period,
//     which only differs when a step lands in a DST gap or clamps a month end;
//   - after a day whose midnight fell in a DST gap (it starts at 01:00),
//     Druid's increment keeps 01:00 for later days; here Next is the next
//     local midnight, so Next always agrees with Bucket.
package granularity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"strata/interval"

	// Period granularities name IANA zones; they must resolve on hosts
	// without a system tz database.
	_ "time/tzdata"
)

// Granularity maps instants to the start of their time bucket.
type Granularity interface {
	// Bucket returns the start of the bucket containing ms.
	Bucket(ms int64) int64
	// Next returns the start of the bucket following the one starting at bucketStart.
	Next(bucketStart int64) int64
	// Zone is the zone bucket timestamps are printed in (UTC unless a
	// period granularity names another zone).
	Zone() *time.Location
	IsAll() bool
	IsNone() bool
	// JSON is the value Druid serializes the granularity as: an upper-case
	// name for standard granularities, otherwise an object.
	JSON() any
}

// Simple granularities, all UTC-aligned.
var (
	All           Granularity = allGranularity{}
	None          Granularity = noneGranularity{}
	Second                    = mustStandard("SECOND", interval.Period{Seconds: 1})
	Minute                    = mustStandard("MINUTE", interval.Period{Minutes: 1})
	FiveMinute                = mustStandard("FIVE_MINUTE", interval.Period{Minutes: 5})
	TenMinute                 = mustStandard("TEN_MINUTE", interval.Period{Minutes: 10})
	FifteenMinute             = mustStandard("FIFTEEN_MINUTE", interval.Period{Minutes: 15})
	ThirtyMinute              = mustStandard("THIRTY_MINUTE", interval.Period{Minutes: 30})
	Hour                      = mustStandard("HOUR", interval.Period{Hours: 1})
	SixHour                   = mustStandard("SIX_HOUR", interval.Period{Hours: 6})
	EightHour                 = mustStandard("EIGHT_HOUR", interval.Period{Hours: 8})
	Day                       = mustStandard("DAY", interval.Period{Days: 1})
	Week                      = mustStandard("WEEK", interval.Period{Weeks: 1})
	Month                     = mustStandard("MONTH", interval.Period{Months: 1})
	Quarter                   = mustStandard("QUARTER", interval.Period{Months: 3})
	Year                      = mustStandard("YEAR", interval.Period{Years: 1})
)

// standard lists the simple names in order from finest to coarsest.
var standard = []Granularity{Second, Minute, FiveMinute, TenMinute, FifteenMinute, ThirtyMinute,
	Hour, SixHour, EightHour, Day, Week, Month, Quarter, Year}

func mustStandard(name string, p interval.Period) Granularity {
	g, err := NewPeriod(p, time.UTC, 0, false)
	if err != nil || g.JSON() != name {
		panic(fmt.Sprintf("bad standard granularity %s: %v", name, err)) // static table above
	}
	return g
}

// FromName resolves a simple granularity name, case-insensitively:
// all, none, second, minute, five_minute, ten_minute, fifteen_minute,
// thirty_minute, hour, six_hour, eight_hour, day, week, month, quarter, year.
func FromName(name string) (Granularity, error) {
	switch strings.ToUpper(name) {
	case "ALL":
		return All, nil
	case "NONE":
		return None, nil
	}
	up := strings.ToUpper(name)
	for _, g := range standard {
		if g.JSON() == up {
			// A private bucket cache: callers do not contend on the shared one.
			return Clone(g), nil
		}
	}
	return nil, fmt.Errorf("unknown granularity %q", name)
}

// Parse decodes a granularity from JSON: a name string, or an object
// {"type":"all"}, {"type":"none"},
// {"type":"duration","duration":ms,"origin":...} or
// {"type":"period","period":"P1D","timeZone":"...","origin":...}.
func Parse(raw json.RawMessage) (Granularity, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, fmt.Errorf("granularity is missing")
	}
	if raw[0] == '"' {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, fmt.Errorf("invalid granularity: %w", err)
		}
		return FromName(name)
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("invalid granularity %s: expected a string or an object", truncate(raw))
	}
	var obj struct {
		Type     *string         `json:"type"`
		Period   *string         `json:"period"`
		TimeZone *string         `json:"timeZone"`
		Origin   json.RawMessage `json:"origin"`
		Duration json.RawMessage `json:"duration"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("invalid granularity: %w", err)
	}
	if obj.Type == nil {
		return nil, fmt.Errorf("granularity object needs a \"type\"")
	}
	switch *obj.Type {
	case "all":
		return All, nil
	case "none":
		return None, nil
	case "duration":
		d, err := parseDurationField(obj.Duration)
		if err != nil {
			return nil, err
		}
		origin, _, err := parseOrigin(obj.Origin)
		if err != nil {
			return nil, err
		}
		return NewDuration(d, origin)
	case "period":
		if obj.Period == nil {
			return nil, fmt.Errorf("period granularity needs a \"period\"")
		}
		p, err := interval.ParsePeriod(*obj.Period)
		if err != nil {
			return nil, err
		}
		loc := time.UTC
		if obj.TimeZone != nil {
			if loc, err = interval.LoadZone(*obj.TimeZone); err != nil {
				return nil, err
			}
		}
		origin, hasOrigin, err := parseOrigin(obj.Origin)
		if err != nil {
			return nil, err
		}
		return NewPeriod(p, loc, origin, hasOrigin)
	}
	return nil, fmt.Errorf("unknown granularity type %q", *obj.Type)
}

func truncate(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:60]) + "..."
	}
	return string(raw)
}

func parseDurationField(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, fmt.Errorf("duration granularity needs a \"duration\"")
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	}
	var n json.Number = json.Number(s)
	d, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("invalid duration %s: must be an integer number of milliseconds", truncate(raw))
	}
	return d, nil
}

// parseOrigin reads an origin given as an ISO time or epoch millis.
func parseOrigin(raw json.RawMessage) (int64, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return 0, false, nil
		}
		ms, err := interval.ParseTime(s)
		if err != nil {
			return 0, false, fmt.Errorf("invalid origin: %w", err)
		}
		return ms, true, nil
	}
	ms, err := json.Number(raw).Int64()
	if err != nil {
		return 0, false, fmt.Errorf("invalid origin %s", truncate(raw))
	}
	return ms, true, nil
}

// NewDuration returns a granularity of fixed-length buckets aligned to origin.
func NewDuration(durationMillis, origin int64) (Granularity, error) {
	if durationMillis <= 0 {
		return nil, fmt.Errorf("duration granularity needs a positive duration, got %d", durationMillis)
	}
	return &fixedGranularity{step: durationMillis, phase: floorMod(origin, durationMillis), loc: time.UTC,
		json: map[string]any{
			"type":     "duration",
			"duration": durationMillis,
			"origin":   interval.FormatMillis(floorMod(origin, durationMillis)),
		}}, nil
}

// NewPeriod returns a period granularity in loc (nil means UTC). Without
// an origin, buckets align to 1970-01-01T00:00 local time, years to
// January 1st, months to the 1st and single weeks to Monday.
func NewPeriod(p interval.Period, loc *time.Location, origin int64, hasOrigin bool) (Granularity, error) {
	g, err := newPeriod(p, loc, origin, hasOrigin)
	if err != nil {
		return nil, err
	}
	return g.compile(), nil
}

// Clone returns a granularity equal to g with its own bucket cache.
// Calendar granularities remember their last bucket; goroutines walking
// different time ranges each get better hit rates from their own clone.
func Clone(g Granularity) Granularity {
	if c, ok := g.(*calendarGranularity); ok {
		return &calendarGranularity{periodSpec: c.periodSpec, unit: c.unit, approx: c.approx, utc: c.utc, jsonv: c.jsonv}
	}
	return g
}

// IsStandard reports whether g is one of the simple named granularities
// (including all and none).
func IsStandard(g Granularity) bool {
	_, ok := g.JSON().(string)
	return ok
}

// Name returns the upper-case simple name of a standard granularity, or "".
func Name(g Granularity) string {
	if s, ok := g.JSON().(string); ok {
		return s
	}
	if g.IsAll() {
		return "ALL"
	}
	if g.IsNone() {
		return "NONE"
	}
	return ""
}

// String renders g's JSON form, for messages and cache keys.
func String(g Granularity) string {
	b, err := json.Marshal(g.JSON())
	if err != nil {
		return fmt.Sprint(g.JSON())
	}
	return string(b)
}

// Equal reports whether two granularities bucket identically.
func Equal(a, b Granularity) bool {
	return String(a) == String(b)
}

// BucketInterval returns the bucket containing ms as an interval.
func BucketInterval(g Granularity, ms int64) interval.Interval {
	s := g.Bucket(ms)
	return interval.Interval{Start: s, End: g.Next(s)}
}

// Compare orders granularities as Druid's IS_FINER_THAN comparator does:
// by the end of the bucket containing the epoch. It returns a negative
// number when a is finer than b, zero when equally fine.
func Compare(a, b Granularity) int {
	ea, eb := a.Next(a.Bucket(0)), b.Next(b.Bucket(0))
	switch {
	case ea < eb:
		return -1
	case ea > eb:
		return 1
	}
	return 0
}

// Finer reports whether a is finer than or as fine as b (a ≤ b), the
// check that a queryGranularity fits a segmentGranularity.
func Finer(a, b Granularity) bool { return Compare(a, b) <= 0 }

// FormatBucket prints a bucket timestamp as Druid does: UTC with "Z" for
// simple and duration granularities, the zone's offset for a period
// granularity with a time zone.
func FormatBucket(g Granularity, ms int64) string {
	return interval.FormatMillisIn(ms, g.Zone())
}

// AppendBucket appends FormatBucket(g, ms) to b.
func AppendBucket(b []byte, g Granularity, ms int64) []byte {
	return interval.AppendMillis(b, ms, g.Zone())
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
