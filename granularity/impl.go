package granularity

import (
	"fmt"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"strata/interval"
)

// allGranularity puts every instant in one bucket spanning eternity.
type allGranularity struct{}

func (allGranularity) Bucket(int64) int64   { return interval.MinInstant }
func (allGranularity) Next(int64) int64     { return interval.MaxInstant }
func (allGranularity) Zone() *time.Location { return time.UTC }
func (allGranularity) IsAll() bool          { return true }
func (allGranularity) IsNone() bool         { return false }
func (allGranularity) JSON() any            { return map[string]any{"type": "all"} }
func (allGranularity) String() string       { return "ALL" }

// noneGranularity keeps every millisecond apart.
type noneGranularity struct{}

func (noneGranularity) Bucket(ms int64) int64 { return ms }
func (noneGranularity) Next(ms int64) int64 {
	if ms == math.MaxInt64 {
		return ms
	}
	return ms + 1
}
func (noneGranularity) Zone() *time.Location { return time.UTC }
func (noneGranularity) IsAll() bool          { return false }
func (noneGranularity) IsNone() bool         { return true }
func (noneGranularity) JSON() any            { return map[string]any{"type": "none"} }
func (noneGranularity) String() string       { return "NONE" }

// fixedGranularity is a bucket of constant length: duration granularities
// and period granularities whose length never varies (no months or years,
// and a zone without offset changes, or only exact time fields). Pure
// integer arithmetic on the query hot path.
type fixedGranularity struct {
	step  int64
	phase int64 // a bucket starts at every instant ≡ phase (mod step)
	loc   *time.Location
	json  any
}

func (g *fixedGranularity) Bucket(ms int64) int64 {
	r := ms%g.step - g.phase
	if ms < 0 && ms%g.step != 0 {
		r += g.step
	}
	if r < 0 {
		r += g.step
	}
	b := ms - r
	if b > ms { // wrapped below MinInt64
		return math.MinInt64
	}
	return b
}

func (g *fixedGranularity) Next(b int64) int64 {
	if b > math.MaxInt64-g.step {
		return math.MaxInt64
	}
	return b + g.step
}

func (g *fixedGranularity) Zone() *time.Location { return g.loc }
func (g *fixedGranularity) IsAll() bool          { return false }
func (g *fixedGranularity) IsNone() bool         { return false }
func (g *fixedGranularity) JSON() any            { return cloneJSON(g.json) }

// cloneJSON copies an object form so callers cannot alter a shared granularity.
func cloneJSON(v any) any {
	if m, ok := v.(map[string]any); ok {
		return maps.Clone(m)
	}
	return v
}

// periodSpec is a validated period granularity before compilation.
type periodSpec struct {
	p         interval.Period
	loc       *time.Location
	origin    int64
	hasOrigin bool
}

func newPeriod(p interval.Period, loc *time.Location, origin int64, hasOrigin bool) (*periodSpec, error) {
	if !p.IsPositive() {
		return nil, fmt.Errorf("period granularity needs a positive period, got %s", p)
	}
	if loc == nil {
		loc = time.UTC
	}
	if !hasOrigin {
		// 1970-01-01T00:00 local time in the zone.
		origin = interval.LocalToUTC(loc, 0)
	} else if origin < interval.MinInstant || origin > interval.MaxInstant {
		return nil, fmt.Errorf("origin %d out of range", origin)
	}
	return &periodSpec{p: p, loc: loc, origin: origin, hasOrigin: hasOrigin}, nil
}

// standardJSON returns the simple name for a standard UTC period, or nil.
func standardJSON(p interval.Period) any {
	switch p {
	case interval.Period{Seconds: 1}:
		return "SECOND"
	case interval.Period{Minutes: 1}:
		return "MINUTE"
	case interval.Period{Minutes: 5}:
		return "FIVE_MINUTE"
	case interval.Period{Minutes: 10}:
		return "TEN_MINUTE"
	case interval.Period{Minutes: 15}:
		return "FIFTEEN_MINUTE"
	case interval.Period{Minutes: 30}:
		return "THIRTY_MINUTE"
	case interval.Period{Hours: 1}:
		return "HOUR"
	case interval.Period{Hours: 6}:
		return "SIX_HOUR"
	case interval.Period{Hours: 8}:
		return "EIGHT_HOUR"
	case interval.Period{Days: 1}:
		return "DAY"
	case interval.Period{Weeks: 1}:
		return "WEEK"
	case interval.Period{Months: 1}:
		return "MONTH"
	case interval.Period{Months: 3}:
		return "QUARTER"
	case interval.Period{Years: 1}:
		return "YEAR"
	}
	return nil
}

func (s *periodSpec) json() any {
	if s.loc == time.UTC && !s.hasOrigin {
		if name := standardJSON(s.p); name != nil {
			return name
		}
	}
	var origin any
	if s.hasOrigin {
		origin = interval.FormatMillis(s.origin)
	}
	return map[string]any{
		"type":     "period",
		"period":   s.p.String(),
		"timeZone": interval.ZoneID(s.loc),
		"origin":   origin,
	}
}

// floor units for periods of a single field of 1 without an origin,
// which Druid truncates on local calendar fields.
const (
	unitNone = iota
	unitYear
	unitMonth
	unitWeek
	unitDay
	unitHour
	unitMinute
	unitSecond
)

// compile picks the cheapest exact implementation for the period.
func (s *periodSpec) compile() Granularity {
	p := s.p
	// Druid truncates a single field of 1 without origin on the local
	// calendar field (P1W starts on Monday); everything else counts
	// whole periods from the origin.
	unit := unitNone
	if p.NonZeroFields() == 1 && !s.hasOrigin {
		switch {
		case p.Years == 1:
			unit = unitYear
		case p.Months == 1:
			unit = unitMonth
		case p.Weeks == 1:
			unit = unitWeek
		case p.Days == 1:
			unit = unitDay
		case p.Hours == 1:
			unit = unitHour
		case p.Minutes == 1:
			unit = unitMinute
		case p.Seconds == 1:
			unit = unitSecond
		}
	}
	timeOnly := p.Years == 0 && p.Months == 0 && p.Weeks == 0 && p.Days == 0
	fixedZone, offset := isFixedZone(s.loc)
	if p.IsFixed() && (fixedZone || (timeOnly && unit == unitNone)) {
		// Constant-length buckets: with one offset, local fields are
		// constant shifts of UTC ones; hours and smaller are exact
		// durations in any zone.
		step := p.FixedMillis()
		origin := s.origin
		if unit == unitWeek {
			origin = -3*86400000 - offset // Monday 1969-12-29, local
		}
		return &fixedGranularity{step: step, phase: floorMod(origin, step), loc: s.loc, json: s.json()}
	}
	return &calendarGranularity{periodSpec: *s, unit: unit, approx: p.ApproxMillis(),
		utc: s.loc == time.UTC, jsonv: s.json()}
}

var fixedZones sync.Map // *time.Location -> int64 offset, or nil when not fixed

// isFixedZone reports whether loc has one offset at every instant in the
// range of sampled years, and that offset.
func isFixedZone(loc *time.Location) (bool, int64) {
	if loc == time.UTC {
		return true, 0
	}
	if v, ok := fixedZones.Load(loc); ok {
		if v == nil {
			return false, 0
		}
		return true, v.(int64)
	}
	first := interval.OffsetMillis(loc, 0)
	fixed := true
	// Twice a year from 1800 to 2200 catches DST and permanent changes.
	for y := int64(1800); y <= 2200 && fixed; y++ {
		for _, m := range []int{1, 7} {
			ms := interval.DaysFromCivil(y, m, 1) * 86400000
			if interval.OffsetMillis(loc, ms) != first {
				fixed = false
				break
			}
		}
	}
	if fixed {
		fixedZones.Store(loc, first)
		return true, first
	}
	fixedZones.Store(loc, nil)
	return false, 0
}

// spanCache remembers the last bucket computed, so runs of nearby
// (usually sorted) timestamps cost a few loads. It is a sequence lock:
// a writer that cannot take the odd sequence number just skips caching,
// and readers retry nothing, they fall back to computing.
type spanCache struct {
	seq, start, end atomic.Int64
}

func (c *spanCache) load() (start, end int64, ok bool) {
	s := c.seq.Load()
	if s&1 != 0 {
		return 0, 0, false
	}
	start, end = c.start.Load(), c.end.Load()
	return start, end, c.seq.Load() == s && start < end
}

func (c *spanCache) store(start, end int64) {
	s := c.seq.Load()
	if s&1 != 0 || !c.seq.CompareAndSwap(s, s+1) {
		return
	}
	c.start.Store(start)
	c.end.Store(end)
	c.seq.Store(s + 2)
}

// calendarGranularity handles buckets of varying length: months and
// years, and days or weeks in zones with offset changes.
type calendarGranularity struct {
	periodSpec
	unit   int // local-field truncation, or unitNone for multiples from origin
	approx float64
	utc    bool
	jsonv  any
	cache  spanCache
}

func (g *calendarGranularity) Zone() *time.Location { return g.loc }
func (g *calendarGranularity) IsAll() bool          { return false }
func (g *calendarGranularity) IsNone() bool         { return false }
func (g *calendarGranularity) JSON() any            { return cloneJSON(g.jsonv) }

func (g *calendarGranularity) Bucket(ms int64) int64 {
	if start, end, ok := g.cache.load(); ok && ms >= start && ms < end {
		return start
	}
	start, end := g.bounds(clamp(ms))
	if start > ms {
		// Only at the clamped ends of time, where offsets push the
		// calendar arithmetic past the instant.
		return ms
	}
	if ms < end && g.uniform(start, end) {
		g.cache.store(start, end)
	}
	return start
}

// uniform reports whether every instant of [start, end) buckets to start,
// so the span may be cached. Date fields resolve the same local floor for
// the whole span; a time field (hour and finer) floors with each instant's
// own offset, so only spans without an offset change qualify.
func (g *calendarGranularity) uniform(start, end int64) bool {
	switch g.unit {
	case unitHour, unitMinute, unitSecond:
		return g.utc || interval.OffsetMillis(g.loc, start) == interval.OffsetMillis(g.loc, end-1)
	}
	return true
}

func (g *calendarGranularity) Next(b int64) int64 {
	if start, end, ok := g.cache.load(); ok && b == start {
		return end
	}
	_, end := g.bounds(clamp(b))
	return end
}

func clamp(ms int64) int64 {
	return max(interval.MinInstant, min(interval.MaxInstant, ms))
}

// bounds returns the bucket containing ms and the start of the next one.
func (g *calendarGranularity) bounds(ms int64) (int64, int64) {
	if g.unit == unitNone {
		k := g.index(ms)
		return g.boundary(k), g.boundary(k + 1)
	}
	return g.localBounds(ms)
}

// localBounds truncates ms on a local calendar field as Joda's zoned
// roundFloor does (time fields keep the instant's offset; date fields keep
// it when still valid, else resolve the local time) and finds the start
// of the next field the same way. Druid instead adds the period to the
// bucket start, which drifts after a day that began late because its
// midnight fell in a DST gap; truncating keeps Next consistent with Bucket.
func (g *calendarGranularity) localBounds(ms int64) (int64, int64) {
	const day = 86400000
	off := int64(0)
	if !g.utc {
		off = interval.OffsetMillis(g.loc, ms)
	}
	local := ms + off
	var fl, nl int64
	switch g.unit {
	case unitSecond, unitMinute, unitHour:
		u := int64(1000)
		if g.unit == unitMinute {
			u = 60000
		} else if g.unit == unitHour {
			u = 3600000
		}
		// Joda floors time fields with the instant's own offset and
		// increments them by exact durations.
		start := local - floorMod(local, u) - off
		return start, start + u
	case unitDay:
		fl = local - floorMod(local, day)
		nl = fl + day
	case unitWeek:
		days := floorDiv(local, day)
		fl = (days - int64(interval.DayOfWeek(days)-1)) * day
		nl = fl + 7*day
	case unitMonth:
		y, m, _, _ := interval.SplitMillis(local)
		fl = interval.DaysFromCivil(y, m, 1) * day
		nl = interval.DaysFromCivil(y, m+1, 1) * day
	case unitYear:
		y, _, _, _ := interval.SplitMillis(local)
		fl = interval.DaysFromCivil(y, 1, 1) * day
		nl = interval.DaysFromCivil(y+1, 1, 1) * day
	}
	if g.utc {
		return fl, nl
	}
	return g.toUTC(fl, off), g.toUTC(nl, off)
}

// toUTC converts local millis keeping the hint offset when it is valid
// there, as Joda's convertLocalToUTC with an original instant does.
func (g *calendarGranularity) toUTC(local, hint int64) int64 {
	if c := local - hint; interval.OffsetMillis(g.loc, c) == hint {
		return c
	}
	return interval.LocalToUTC(g.loc, local)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// boundary is the k-th bucket start counted from the origin.
func (g *calendarGranularity) boundary(k int64) int64 {
	return g.p.AddMillis(g.origin, k, g.loc)
}

// index finds the largest k with boundary(k) <= ms, starting from an
// estimate and widening then bisecting, so it is exact for any period.
func (g *calendarGranularity) index(ms int64) int64 {
	est := math.Floor(float64(ms-g.origin) / g.approx)
	lo := int64(max(-math.MaxInt64/4, min(math.MaxInt64/4, est)))
	for step, i := int64(1), 0; g.boundary(lo) > ms && i < 62; step, i = step*2, i+1 {
		lo -= step
	}
	hi := lo + 1
	for step, i := int64(1), 0; g.boundary(hi) <= ms && i < 62; step, i = step*2, i+1 {
		lo = hi
		hi += step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if g.boundary(mid) <= ms {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
