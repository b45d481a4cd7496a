package interval

import (
	"math"
	"time"
)

// Proleptic Gregorian calendar arithmetic on epoch milliseconds. Joda's ISO
// chronology (what Druid uses) is proleptic Gregorian with a year zero, the
// same as these formulas, so results agree for every representable year.

const (
	msPerSecond = int64(1000)
	msPerMinute = 60 * msPerSecond
	msPerHour   = 60 * msPerMinute
	msPerDay    = 24 * msPerHour
	msPerWeek   = 7 * msPerDay
)

// MinInstant and MaxInstant bound the instants Druid handles (JodaUtils
// MIN_INSTANT / MAX_INSTANT); the interval between them is "eternity".
const (
	MinInstant = math.MinInt64 / 2
	MaxInstant = math.MaxInt64 / 2
)

// Eternity is the interval covering every supported instant.
var Eternity = Interval{Start: MinInstant, End: MaxInstant}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// floorMod is the remainder matching floorDiv (same sign as b).
func floorMod(a, b int64) int64 {
	m := a % b
	if m != 0 && ((m < 0) != (b < 0)) {
		m += b
	}
	return m
}

// DaysFromCivil returns the day number (days since 1970-01-01) of a
// proleptic Gregorian date. month is 1..12; day may be out of range and
// is then carried arithmetically.
func DaysFromCivil(year int64, month, day int) int64 {
	y := year
	if month <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	m := int64(month)
	var mp int64
	if m > 2 {
		mp = m - 3
	} else {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// CivilFromDays is the inverse of DaysFromCivil.
func CivilFromDays(days int64) (year int64, month, day int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, int(m), int(d)
}

// IsLeapYear reports whether y is a Gregorian leap year.
func IsLeapYear(y int64) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// DaysInMonth returns the number of days in the month of year y.
func DaysInMonth(y int64, month int) int {
	switch month {
	case 2:
		if IsLeapYear(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// SplitMillis breaks epoch (or local wall) millis into date and time of day.
func SplitMillis(ms int64) (year int64, month, day int, msOfDay int64) {
	days := floorDiv(ms, msPerDay)
	year, month, day = CivilFromDays(days)
	return year, month, day, ms - days*msPerDay
}

// DayOfWeek returns the ISO day of week (1 = Monday .. 7 = Sunday) of a day number.
func DayOfWeek(days int64) int {
	// 1970-01-01 was a Thursday (4).
	return int(floorMod(days+3, 7)) + 1
}

// addMonthsLocal adds months to local wall millis the way Joda does: the
// day of month is clamped to the length of the target month.
func addMonthsLocal(local int64, months int64) int64 {
	if months == 0 {
		return local
	}
	// Results beyond maxYear are far outside the supported range anyway;
	// clamping keeps the arithmetic from overflowing.
	const maxMonths = 12 * maxYear
	months = max(-maxMonths, min(maxMonths, months))
	y, m, d, tod := SplitMillis(local)
	total := max(-maxMonths, min(maxMonths, y*12+int64(m-1)+months))
	ny := floorDiv(total, 12)
	nm := int(total-ny*12) + 1
	if dim := DaysInMonth(ny, nm); d > dim {
		d = dim
	}
	return DaysFromCivil(ny, nm, d)*msPerDay + tod
}

// OffsetMillis returns the UTC offset of loc at the instant utcMs.
func OffsetMillis(loc *time.Location, utcMs int64) int64 {
	if loc == nil || loc == time.UTC {
		return 0
	}
	_, off := time.UnixMilli(clampInstant(utcMs)).In(loc).Zone()
	return int64(off) * msPerSecond
}

// LocalToUTC converts local wall-clock millis in loc to an instant with
// Joda's rules: an ambiguous wall time (clocks set back) resolves to the
// earlier instant, and a wall time inside a gap (clocks set forward) is
// moved forward by the length of the gap.
func LocalToUTC(loc *time.Location, local int64) int64 {
	if loc == nil || loc == time.UTC {
		return local
	}
	oA := OffsetMillis(loc, local)
	oB := OffsetMillis(loc, local-oA)
	best, found := int64(0), false
	for _, o := range [...]int64{oA, oB} {
		c := local - o
		if OffsetMillis(loc, c) == o && (!found || c < best) {
			best, found = c, true
		}
	}
	if found {
		// Both the pre- and post-transition offsets may be valid (overlap);
		// check the other neighbour too so the earliest wins.
		oC := OffsetMillis(loc, best-msPerDay/2)
		if c := local - oC; c < best && OffsetMillis(loc, c) == oC {
			best = c
		}
		return best
	}
	// Gap: use the offset in force before the transition (the smaller one
	// for a forward jump), which lands after the gap.
	return local - min(oA, oB)
}

func clampInstant(ms int64) int64 {
	if ms < MinInstant {
		return MinInstant
	}
	if ms > MaxInstant {
		return MaxInstant
	}
	return ms
}
