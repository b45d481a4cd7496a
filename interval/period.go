package interval

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Period is an ISO-8601 period with Joda's standard field set. Fields may
// be negative (Joda accepts signed values).
type Period struct {
	Years, Months, Weeks, Days, Hours, Minutes, Seconds, Millis int
}

// ParsePeriod parses an ISO-8601 period as Joda's ISOPeriodFormat.standard()
// does: PnYnMnWnDTnHnMnS, case-insensitive, signed values, and a fraction
// on seconds giving millis ("PT0.5S").
func ParsePeriod(s string) (Period, error) {
	var p Period
	if len(s) < 2 || (s[0] != 'P' && s[0] != 'p') {
		return p, fmt.Errorf("invalid period %q: must start with P", s)
	}
	i := 1
	inTime := false
	fields := 0
	lastRank := -1
	for i < len(s) {
		c := s[i]
		if c == 'T' || c == 't' {
			if inTime {
				return p, fmt.Errorf("invalid period %q: repeated T", s)
			}
			inTime = true
			i++
			if i == len(s) {
				return p, fmt.Errorf("invalid period %q: no fields after T", s)
			}
			continue
		}
		start := i
		if c == '-' || c == '+' {
			i++
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		intEnd := i
		if intEnd == start || (intEnd == start+1 && (s[start] == '-' || s[start] == '+')) {
			return p, fmt.Errorf("invalid period %q at %d: expected number", s, start)
		}
		fracMillis, hasFrac := 0, false
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			i++
			fs := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i == fs {
				return p, fmt.Errorf("invalid period %q: fraction without digits", s)
			}
			digits := s[fs:min(i, fs+3)]
			v, _ := strconv.Atoi(digits)
			for n := len(digits); n < 3; n++ {
				v *= 10
			}
			fracMillis, hasFrac = v, true
		}
		if i >= len(s) {
			return p, fmt.Errorf("invalid period %q: number without designator", s)
		}
		n64, err := strconv.ParseInt(s[start:intEnd], 10, 32)
		if err != nil {
			return p, fmt.Errorf("invalid period %q: %v", s, err)
		}
		n := int(n64)
		d := s[i] | 0x20 // lower case
		i++
		rank := -1
		switch {
		case !inTime && d == 'y':
			rank, p.Years = 0, n
		case !inTime && d == 'm':
			rank, p.Months = 1, n
		case !inTime && d == 'w':
			rank, p.Weeks = 2, n
		case !inTime && d == 'd':
			rank, p.Days = 3, n
		case inTime && d == 'h':
			rank, p.Hours = 4, n
		case inTime && d == 'm':
			rank, p.Minutes = 5, n
		case inTime && d == 's':
			rank, p.Seconds = 6, n
			if hasFrac {
				if s[start] == '-' {
					p.Millis = -fracMillis
				} else {
					p.Millis = fracMillis
				}
			}
		default:
			return p, fmt.Errorf("invalid period %q: unexpected designator %q", s, s[i-1])
		}
		if hasFrac && rank != 6 {
			return p, fmt.Errorf("invalid period %q: only seconds may have a fraction", s)
		}
		if rank <= lastRank {
			return p, fmt.Errorf("invalid period %q: fields out of order", s)
		}
		lastRank = rank
		fields++
	}
	if fields == 0 {
		return p, fmt.Errorf("invalid period %q: no fields", s)
	}
	return p, nil
}

// String prints the period as Joda does ("P1D", "PT1H30M", "PT0.500S", "PT0S").
func (p Period) String() string {
	b := []byte{'P'}
	add := func(v int, d byte) {
		if v != 0 {
			b = strconv.AppendInt(b, int64(v), 10)
			b = append(b, d)
		}
	}
	add(p.Years, 'Y')
	add(p.Months, 'M')
	add(p.Weeks, 'W')
	add(p.Days, 'D')
	secMs := int64(p.Seconds)*1000 + int64(p.Millis)
	if p.Hours != 0 || p.Minutes != 0 || secMs != 0 {
		b = append(b, 'T')
		add(p.Hours, 'H')
		add(p.Minutes, 'M')
		if secMs != 0 {
			if secMs < 0 && secMs > -1000 {
				b = append(b, '-')
			}
			b = strconv.AppendInt(b, secMs/1000, 10)
			if r := secMs % 1000; r != 0 {
				if r < 0 {
					r = -r
				}
				b = append(b, '.')
				b = append3(b, r)
			}
			b = append(b, 'S')
		}
	}
	if len(b) == 1 {
		return "PT0S"
	}
	return string(b)
}

// IsZero reports whether every field is zero.
func (p Period) IsZero() bool { return p == Period{} }

// IsFixed reports whether the period has the same length everywhere in UTC
// (no years or months). Days and weeks still vary in zones with DST.
func (p Period) IsFixed() bool { return p.Years == 0 && p.Months == 0 }

// FixedMillis returns the standard length (weeks of 7 days, days of 24
// hours) of a fixed period, or 0 when the period has years or months.
func (p Period) FixedMillis() int64 {
	if !p.IsFixed() {
		return 0
	}
	return int64(p.Weeks)*msPerWeek + int64(p.Days)*msPerDay + int64(p.Hours)*msPerHour +
		int64(p.Minutes)*msPerMinute + int64(p.Seconds)*msPerSecond + int64(p.Millis)
}

// IsPositive reports whether no field is negative and at least one is positive.
func (p Period) IsPositive() bool {
	v := p.values()
	pos := false
	for _, x := range v {
		if x < 0 {
			return false
		}
		if x > 0 {
			pos = true
		}
	}
	return pos
}

// NonZeroFields counts the fields that are not zero.
func (p Period) NonZeroFields() int {
	n := 0
	for _, x := range p.values() {
		if x != 0 {
			n++
		}
	}
	return n
}

func (p Period) values() [8]int {
	return [8]int{p.Years, p.Months, p.Weeks, p.Days, p.Hours, p.Minutes, p.Seconds, p.Millis}
}

// ApproxMillis is a rough average length (years of 365.2425 days, months
// of a twelfth of that) used to estimate how many periods fit in a span.
func (p Period) ApproxMillis() float64 {
	const avgYear = 365.2425 * float64(msPerDay)
	return float64(p.Years)*avgYear + float64(p.Months)*avgYear/12 + float64(p.FixedMillisIgnoringCalendar())
}

// FixedMillisIgnoringCalendar is FixedMillis without the years and months.
func (p Period) FixedMillisIgnoringCalendar() int64 {
	q := p
	q.Years, q.Months = 0, 0
	return q.FixedMillis()
}

// AddTo adds the period n times to t with Joda's calendar arithmetic in t's
// location: fields are applied in order years, months, weeks, days, hours,
// minutes, seconds, millis; years and months clamp the day of month; days
// and weeks keep the wall-clock time; hours and smaller are exact durations.
func (p Period) AddTo(t time.Time, n int) time.Time {
	loc := t.Location()
	ms := t.UnixMilli()
	subMs := t.Sub(time.UnixMilli(ms))
	out := p.AddMillis(ms, int64(n), loc)
	return time.UnixMilli(out).Add(subMs).In(loc)
}

// AddMillis adds the period n times to the instant ms, with calendar
// fields evaluated in loc (nil means UTC). See AddTo.
func (p Period) AddMillis(ms int64, n int64, loc *time.Location) int64 {
	if n == 0 {
		return ms
	}
	ms = clampInstant(ms)
	if p.Years != 0 || p.Months != 0 || p.Weeks != 0 || p.Days != 0 {
		var local int64
		utc := loc == nil || loc == time.UTC
		if utc {
			local = ms
		} else {
			local = ms + OffsetMillis(loc, ms)
		}
		// Each calendar field is converted back to an instant after it is
		// added, exactly as Joda's zoned chronology does.
		step := func(f func(int64) int64) {
			local = clampInstant(f(local))
			if utc {
				ms = local
				return
			}
			ms = LocalToUTC(loc, local)
			local = ms + OffsetMillis(loc, ms)
		}
		if p.Years != 0 {
			m := satMul(satMul(int64(p.Years), 12), n)
			step(func(l int64) int64 { return addMonthsLocal(l, m) })
		}
		if p.Months != 0 {
			m := satMul(int64(p.Months), n)
			step(func(l int64) int64 { return addMonthsLocal(l, m) })
		}
		if p.Weeks != 0 {
			step(func(l int64) int64 { return l + satMul(satMul(int64(p.Weeks), n), msPerWeek) })
		}
		if p.Days != 0 {
			step(func(l int64) int64 { return l + satMul(satMul(int64(p.Days), n), msPerDay) })
		}
	}
	for _, f := range [...]struct{ v, unit int64 }{
		{int64(p.Hours), msPerHour}, {int64(p.Minutes), msPerMinute}, {int64(p.Seconds), msPerSecond}, {int64(p.Millis), 1},
	} {
		if f.v != 0 {
			ms = clampInstant(ms + satMul(satMul(f.v, n), f.unit))
		}
	}
	return ms
}

// satMul multiplies, saturating far outside the supported instant range.
func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	r := a * b
	if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		if (a < 0) != (b < 0) {
			return math.MinInt64 / 2
		}
		return math.MaxInt64 / 2
	}
	return clampInstant(r)
}
