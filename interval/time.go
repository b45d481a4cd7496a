package interval

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ParseTime parses an ISO-8601 date-time the way Joda's
// ISODateTimeFormat.dateTimeParser() does (Druid's parser for interval ends
// and "iso" timestamps). A value without an offset is taken as UTC.
//
//	datetime      = time | date-opt-time
//	time          = 'T' time-element [offset]
//	date-opt-time = date-element ['T' [time-element] [offset]]
//	date-element  = yyyy ['-' MM ['-' dd]] | yyyy ['-' DDD] | xxxx '-W' ww ['-' e]
//	time-element  = HH [':' mm [':' ss]] with an optional fraction on the last field
//	offset        = 'Z' | ('+' | '-') HH [':'? mm [':'? ss ['.' SSS]]]
func ParseTime(s string) (int64, error) {
	return ParseTimeIn(s, time.UTC)
}

// ParseTimeIn is ParseTime with loc as the zone of values that carry no offset.
func ParseTimeIn(s string, loc *time.Location) (int64, error) {
	return parseISO(s, loc, false)
}

// ParseTimeLenient also accepts a space instead of 'T' between date and
// time, like Druid's "auto" timestamp parser and TIME_PARSE's default
// format; unlike ParseTime it requires the date.
func ParseTimeLenient(s string, loc *time.Location) (int64, error) {
	return parseISO(s, loc, true)
}

type isoScanner struct {
	s   string
	pos int
}

func (p *isoScanner) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// digits reads between 1 and max ASCII digits.
func (p *isoScanner) digits(max int) (int64, int, bool) {
	start := p.pos
	var v int64
	for p.pos < len(p.s) && p.pos-start < max && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		v = v*10 + int64(p.s[p.pos]-'0')
		p.pos++
	}
	n := p.pos - start
	return v, n, n > 0
}

// fraction reads ('.' | ',') digit+ and returns it scaled to nanoseconds
// (digits beyond the ninth are ignored, as Joda does).
func (p *isoScanner) fraction() (int64, bool, error) {
	c := p.peek()
	if c != '.' && c != ',' {
		return 0, false, nil
	}
	p.pos++
	var v int64
	n := 0
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		if n < 9 {
			v = v*10 + int64(p.s[p.pos]-'0')
			n++
		}
		p.pos++
	}
	if n == 0 {
		return 0, false, errors.New("fraction without digits")
	}
	for i := n; i < 9; i++ {
		v *= 10
	}
	return v, true, nil
}

func (p *isoScanner) errorf(format string, a ...any) error {
	return fmt.Errorf("invalid ISO-8601 time %q at position %d: %s", p.s, p.pos, fmt.Sprintf(format, a...))
}

func parseISO(s string, loc *time.Location, lenient bool) (int64, error) {
	p := &isoScanner{s: s}
	if s == "" {
		return 0, errors.New("empty time")
	}
	days := int64(0)
	if p.peek() != 'T' && p.peek() != 't' {
		d, err := p.dateElement()
		if err != nil {
			return 0, err
		}
		days = d
		c := p.peek()
		switch {
		case c == 'T' || c == 't' || (lenient && c == ' '):
			p.pos++
		case c == 0:
			return finishISO(days, 0, false, 0, loc), nil
		default:
			return 0, p.errorf("unexpected %q", c)
		}
	} else {
		if lenient {
			return 0, p.errorf("expected date")
		}
		p.pos++
		// A bare time must have its time element.
		if c := p.peek(); c < '0' || c > '9' {
			return 0, p.errorf("expected hour")
		}
	}
	tod := int64(0)
	if c := p.peek(); c >= '0' && c <= '9' {
		t, err := p.timeElement()
		if err != nil {
			return 0, err
		}
		tod = t
	}
	hasOff, off := false, int64(0)
	if p.pos < len(s) {
		o, err := p.offset()
		if err != nil {
			return 0, err
		}
		hasOff, off = true, o
	}
	if p.pos != len(s) {
		return 0, p.errorf("trailing text")
	}
	return finishISO(days, tod, hasOff, off, loc), nil
}

func finishISO(days, tod int64, hasOff bool, off int64, loc *time.Location) int64 {
	local := days*msPerDay + tod
	if hasOff {
		return local - off
	}
	return LocalToUTC(loc, local)
}

// maxYear keeps every parsed value inside int64 millis (Joda allows
// ±292278993, but those instants cannot be stored with an offset applied).
const maxYear = 200000000

// dateElement parses one of the three ISO date forms and returns its day number.
func (p *isoScanner) dateElement() (int64, error) {
	neg := false
	switch p.peek() {
	case '-':
		neg = true
		p.pos++
	case '+':
		p.pos++
	}
	y, _, ok := p.digits(9)
	if !ok {
		return 0, p.errorf("expected year")
	}
	if neg {
		y = -y
	}
	if y > maxYear || y < -maxYear {
		return 0, p.errorf("year out of range")
	}
	if p.peek() != '-' {
		return DaysFromCivil(y, 1, 1), nil
	}
	p.pos++
	if c := p.peek(); c == 'W' || c == 'w' {
		p.pos++
		w, _, ok := p.digits(2)
		if !ok {
			return 0, p.errorf("expected week")
		}
		dow := int64(1)
		if p.peek() == '-' {
			p.pos++
			e, _, ok := p.digits(1)
			if !ok {
				return 0, p.errorf("expected day of week")
			}
			dow = e
		}
		return weekDate(y, w, dow, p)
	}
	// Standard (MM[-dd]) or ordinal (DDD): Joda takes the longer match,
	// the standard form on a tie.
	start := p.pos
	m, mn, ok := p.digits(2)
	if !ok {
		return 0, p.errorf("expected month")
	}
	stdEnd := p.pos
	var d int64 = 1
	if p.peek() == '-' {
		p.pos++
		if dv, _, ok := p.digits(2); ok {
			d = dv
			stdEnd = p.pos
		}
	}
	p.pos = start
	ord, on, _ := p.digits(3)
	if on > mn && start+on > stdEnd {
		maxDoy := int64(365)
		if IsLeapYear(y) {
			maxDoy = 366
		}
		if ord < 1 || ord > maxDoy {
			return 0, p.errorf("day of year %d out of range", ord)
		}
		return DaysFromCivil(y, 1, 1) + ord - 1, nil
	}
	p.pos = stdEnd
	if m < 1 || m > 12 {
		return 0, p.errorf("month %d out of range", m)
	}
	if d < 1 || d > int64(DaysInMonth(y, int(m))) {
		return 0, p.errorf("day %d out of range", d)
	}
	return DaysFromCivil(y, int(m), int(d)), nil
}

// weekDate converts an ISO week date to a day number.
func weekDate(wy, w, dow int64, p *isoScanner) (int64, error) {
	if dow < 1 || dow > 7 {
		return 0, p.errorf("day of week %d out of range", dow)
	}
	if w < 1 || w > weeksInWeekYear(wy) {
		return 0, p.errorf("week %d out of range", w)
	}
	return weekYearStart(wy) + (w-1)*7 + dow - 1, nil
}

// weekYearStart is the day number of the Monday starting ISO week 1 of wy.
func weekYearStart(wy int64) int64 {
	jan4 := DaysFromCivil(wy, 1, 4)
	return jan4 - int64(DayOfWeek(jan4)-1)
}

func weeksInWeekYear(wy int64) int64 {
	return (weekYearStart(wy+1) - weekYearStart(wy)) / 7
}

// timeElement parses HH[:mm[:ss]][fraction] and returns millis of day.
func (p *isoScanner) timeElement() (int64, error) {
	h, _, ok := p.digits(2)
	if !ok {
		return 0, p.errorf("expected hour")
	}
	if h > 23 {
		return 0, p.errorf("hour %d out of range", h)
	}
	ms := h * msPerHour
	unit := msPerHour
	if p.peek() == ':' {
		p.pos++
		m, _, ok := p.digits(2)
		if !ok {
			return 0, p.errorf("expected minute")
		}
		if m > 59 {
			return 0, p.errorf("minute %d out of range", m)
		}
		ms += m * msPerMinute
		unit = msPerMinute
		if p.peek() == ':' {
			p.pos++
			sec, _, ok := p.digits(2)
			if !ok {
				return 0, p.errorf("expected second")
			}
			if sec > 59 {
				return 0, p.errorf("second %d out of range", sec)
			}
			ms += sec * msPerSecond
			unit = msPerSecond
		}
	}
	frac, has, err := p.fraction()
	if err != nil {
		return 0, p.errorf("%v", err)
	}
	if has {
		// frac is in units of 1e-9 of the last field.
		ms += frac * unit / 1e9
	}
	return ms, nil
}

// offset parses 'Z' or a signed offset as Joda's TimeZoneOffset parser
// does: hh, hhmm, hhmmss, hhmmssSSS, hh:mm, hh:mm:ss or hh:mm:ss.SSS.
func (p *isoScanner) offset() (int64, error) {
	c := p.peek()
	if c == 'Z' || c == 'z' {
		p.pos++
		return 0, nil
	}
	if (c != '+' && c != '-') || len(p.s)-p.pos < 2 {
		return 0, p.errorf("expected offset")
	}
	p.pos++
	count := func(max int) int {
		n := 0
		for p.pos+n < len(p.s) && n < max && p.s[p.pos+n] >= '0' && p.s[p.pos+n] <= '9' {
			n++
		}
		return n
	}
	two := func() int64 {
		v := int64(p.s[p.pos]-'0')*10 + int64(p.s[p.pos+1]-'0')
		p.pos += 2
		return v
	}
	if count(2) < 2 {
		return 0, p.errorf("offset needs two hour digits")
	}
	h := two()
	if h > 23 {
		return 0, p.errorf("offset hours %d out of range", h)
	}
	off := h * msPerHour
	sign := int64(1)
	if c == '-' {
		sign = -1
	}
	done := func() (int64, error) { return sign * off, nil }
	if p.pos >= len(p.s) {
		return done()
	}
	sep := false
	switch d := p.peek(); {
	case d == ':':
		sep = true
		p.pos++
	case d >= '0' && d <= '9':
	default:
		return done()
	}
	n := count(2)
	if n == 0 && !sep {
		return done()
	} else if n < 2 {
		return 0, p.errorf("offset needs two minute digits")
	}
	m := two()
	if m > 59 {
		return 0, p.errorf("offset minutes %d out of range", m)
	}
	off += m * msPerMinute
	if p.pos >= len(p.s) {
		return done()
	}
	if sep {
		if p.peek() != ':' {
			return done()
		}
		p.pos++
	}
	n = count(2)
	if n == 0 && !sep {
		return done()
	} else if n < 2 {
		return 0, p.errorf("offset needs two second digits")
	}
	sec := two()
	if sec > 59 {
		return 0, p.errorf("offset seconds %d out of range", sec)
	}
	off += sec * msPerSecond
	if p.pos >= len(p.s) {
		return done()
	}
	if sep {
		if d := p.peek(); d != '.' && d != ',' {
			return done()
		}
		p.pos++
	}
	n = count(3)
	if n == 0 && !sep {
		return done()
	} else if n < 1 {
		return 0, p.errorf("offset needs fraction digits")
	}
	for i, scale := 0, int64(100); i < n; i, scale = i+1, scale/10 {
		off += int64(p.s[p.pos]-'0') * scale
		p.pos++
	}
	return done()
}

// FormatMillis prints an instant as Druid does: yyyy-MM-ddTHH:mm:ss.SSSZ in UTC.
func FormatMillis(ms int64) string {
	var b [40]byte
	return string(appendISO(b[:0], ms, 0, true))
}

// FormatMillisIn prints an instant in loc, Joda style: the offset as
// ±HH:mm (":ss" when needed) or "Z" when it is zero.
func FormatMillisIn(ms int64, loc *time.Location) string {
	var b [48]byte
	return string(appendISO(b[:0], ms, OffsetMillis(loc, ms), true))
}

// AppendMillis appends FormatMillisIn(ms, loc) to b; loc nil means UTC.
func AppendMillis(b []byte, ms int64, loc *time.Location) []byte {
	return appendISO(b, ms, OffsetMillis(loc, ms), true)
}

func appendISO(b []byte, ms, off int64, withOffset bool) []byte {
	y, mo, d, tod := SplitMillis(ms + off)
	b = appendYear(b, y, 4)
	b = append(b, '-')
	b = append2(b, int64(mo))
	b = append(b, '-')
	b = append2(b, int64(d))
	b = append(b, 'T')
	b = append2(b, tod/msPerHour)
	b = append(b, ':')
	b = append2(b, tod/msPerMinute%60)
	b = append(b, ':')
	b = append2(b, tod/msPerSecond%60)
	b = append(b, '.')
	b = append3(b, tod%1000)
	if withOffset {
		b = appendOffset(b, off, true, "Z")
	}
	return b
}

// appendOffset prints ±HH:mm (or ±HHmm without separators), adding
// seconds and millis only when present; zero prints as zero (may be "").
func appendOffset(b []byte, off int64, sep bool, zero string) []byte {
	if off == 0 && zero != "" {
		return append(b, zero...)
	}
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = append2(b, off/msPerHour)
	if sep {
		b = append(b, ':')
	}
	b = append2(b, off/msPerMinute%60)
	if off%msPerMinute != 0 {
		if sep {
			b = append(b, ':')
		}
		b = append2(b, off/msPerSecond%60)
		if off%1000 != 0 {
			b = append(b, '.')
			b = append3(b, off%1000)
		}
	}
	return b
}

func appendYear(b []byte, y int64, minDigits int) []byte {
	if y < 0 {
		b = append(b, '-')
		y = -y
	}
	return appendPadded(b, y, minDigits)
}

func appendPadded(b []byte, v int64, minDigits int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < minDigits; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func append2(b []byte, v int64) []byte {
	return append(b, byte('0'+v/10%10), byte('0'+v%10))
}

func append3(b []byte, v int64) []byte {
	return append(b, byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
