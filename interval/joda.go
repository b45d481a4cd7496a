package interval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JodaFormat is a compiled Joda-Time DateTimeFormat pattern, the pattern
// language of Druid's TIME_PARSE, TIME_FORMAT, timeFormat extraction and
// timestampSpec formats. English names are used for text fields.
type JodaFormat struct {
	pattern string
	items   []jodaItem
	// pivot is the centre year for two-digit years (Joda: this year - 30).
	pivot int64
}

type jodaKind uint8

const (
	jLiteral jodaKind = iota
	jEra
	jCentury
	jYearOfEra
	jYear
	jWeekyear
	jTwoDigitYear
	jTwoDigitWeekyear
	jWeekOfWeekyear
	jDayOfWeek
	jDayOfWeekText
	jDayOfYear
	jMonth
	jMonthText
	jDayOfMonth
	jHalfday
	jHourOfHalfday      // K 0-11
	jClockhourOfHalfday // h 1-12
	jHourOfDay          // H 0-23
	jClockhourOfDay     // k 1-24
	jMinute
	jSecond
	jFraction
	jZoneShortName
	jZoneLongName
	jOffset
	jOffsetColon
	jZoneID
)

type jodaItem struct {
	kind      jodaKind
	lit       string
	minDigits int
	maxDigits int  // digits consumed when parsing
	long      bool // long text form
	lenient   bool // two-digit year accepting a full year
}

var (
	monthLong  = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	monthShort = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	dowLong    = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	dowShort   = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	halfdays   = []string{"AM", "PM"}
	eras       = []string{"BC", "AD"}
)

// CompileJoda compiles a Joda-Time pattern. Letters: G C Y y x w e E D M d a
// K h H k m s S z Z; text in single quotes is literal (” is a quote); other
// non-letters are literal; any other letter is an error.
func CompileJoda(pattern string) (*JodaFormat, error) {
	tokens, err := jodaTokens(pattern)
	if err != nil {
		return nil, err
	}
	f := &JodaFormat{pattern: pattern, pivot: int64(time.Now().Year() - 30)}
	for i, tok := range tokens {
		if tok.quoted {
			f.items = append(f.items, jodaItem{kind: jLiteral, lit: tok.text})
			continue
		}
		c := tok.text[0]
		n := len(tok.text)
		nextNumeric := i+1 < len(tokens) && tokens[i+1].numeric()
		it := jodaItem{minDigits: n, maxDigits: 2}
		switch c {
		case 'G':
			it.kind = jEra
		case 'C':
			it.kind, it.maxDigits = jCentury, n
		case 'x', 'y', 'Y':
			if n == 2 {
				it.kind = jTwoDigitYear
				if c == 'x' {
					it.kind = jTwoDigitWeekyear
				}
				it.lenient = !nextNumeric
				it.maxDigits = 2
			} else {
				it.maxDigits = 9
				if nextNumeric {
					it.maxDigits = n
				}
				switch c {
				case 'x':
					it.kind = jWeekyear
				case 'y':
					it.kind = jYear
				default:
					it.kind = jYearOfEra
				}
			}
		case 'M':
			if n >= 3 {
				it.kind, it.long = jMonthText, n >= 4
			} else {
				it.kind = jMonth
			}
		case 'd':
			it.kind = jDayOfMonth
		case 'a':
			it.kind = jHalfday
		case 'h':
			it.kind = jClockhourOfHalfday
		case 'H':
			it.kind = jHourOfDay
		case 'k':
			it.kind = jClockhourOfDay
		case 'K':
			it.kind = jHourOfHalfday
		case 'm':
			it.kind = jMinute
		case 's':
			it.kind = jSecond
		case 'S':
			it.kind, it.maxDigits = jFraction, n
		case 'e':
			it.kind, it.maxDigits = jDayOfWeek, 1
		case 'E':
			it.kind, it.long = jDayOfWeekText, n >= 4
		case 'D':
			it.kind, it.maxDigits = jDayOfYear, 3
		case 'w':
			it.kind = jWeekOfWeekyear
		case 'z':
			if n >= 4 {
				it.kind = jZoneLongName
			} else {
				it.kind = jZoneShortName
			}
		case 'Z':
			switch n {
			case 1:
				it.kind = jOffset
			case 2:
				it.kind = jOffsetColon
			default:
				it.kind = jZoneID
			}
		default:
			return nil, fmt.Errorf("illegal pattern component %q in %q", tok.text, pattern)
		}
		if it.maxDigits < it.minDigits && it.kind != jTwoDigitYear && it.kind != jTwoDigitWeekyear {
			it.maxDigits = it.minDigits
		}
		f.items = append(f.items, it)
	}
	return f, nil
}

type jodaToken struct {
	text   string
	quoted bool
}

func (t jodaToken) numeric() bool {
	if t.quoted {
		return false
	}
	switch t.text[0] {
	case 'c', 'C', 'x', 'y', 'Y', 'd', 'h', 'H', 'm', 's', 'S', 'w', 'e', 'D', 'k', 'K':
		return true
	case 'M':
		return len(t.text) <= 2
	}
	return false
}

// jodaTokens splits a pattern into letter runs and literal text.
func jodaTokens(p string) ([]jodaToken, error) {
	var out []jodaToken
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, jodaToken{text: lit.String(), quoted: true})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			flush()
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			out = append(out, jodaToken{text: p[i:j]})
			i = j
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			j := i + 1
			closed := false
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quote in pattern %q", p)
			}
			i = j
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return out, nil
}

// Pattern returns the source pattern.
func (f *JodaFormat) Pattern() string { return f.pattern }

// Format prints t (in its own location) with the pattern.
func (f *JodaFormat) Format(t time.Time) string {
	return string(f.AppendFormat(nil, t))
}

// FormatMillis prints the instant ms in loc (nil means UTC).
func (f *JodaFormat) FormatMillis(ms int64, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return f.Format(time.UnixMilli(ms).In(loc))
}

// AppendFormat appends the formatted time to b.
func (f *JodaFormat) AppendFormat(b []byte, t time.Time) []byte {
	zoneName, offSec := t.Zone()
	off := int64(offSec) * msPerSecond
	ms := t.UnixMilli()
	local := ms + off
	year, month, day, tod := SplitMillis(local)
	days := floorDiv(local, msPerDay)
	for _, it := range f.items {
		switch it.kind {
		case jLiteral:
			b = append(b, it.lit...)
		case jEra:
			if year <= 0 {
				b = append(b, eras[0]...)
			} else {
				b = append(b, eras[1]...)
			}
		case jCentury:
			b = appendPadded(b, yearOfEra(year)/100, it.minDigits)
		case jYearOfEra:
			b = appendPadded(b, yearOfEra(year), it.minDigits)
		case jYear:
			b = appendYear(b, year, it.minDigits)
		case jWeekyear:
			wy, _ := isoWeek(days)
			b = appendYear(b, wy, it.minDigits)
		case jTwoDigitYear:
			b = append2(b, abs64(year)%100)
		case jTwoDigitWeekyear:
			wy, _ := isoWeek(days)
			b = append2(b, abs64(wy)%100)
		case jWeekOfWeekyear:
			_, w := isoWeek(days)
			b = appendPadded(b, w, it.minDigits)
		case jDayOfWeek:
			b = appendPadded(b, int64(DayOfWeek(days)), it.minDigits)
		case jDayOfWeekText:
			if it.long {
				b = append(b, dowLong[DayOfWeek(days)-1]...)
			} else {
				b = append(b, dowShort[DayOfWeek(days)-1]...)
			}
		case jDayOfYear:
			b = appendPadded(b, days-DaysFromCivil(year, 1, 1)+1, it.minDigits)
		case jMonth:
			b = appendPadded(b, int64(month), it.minDigits)
		case jMonthText:
			if it.long {
				b = append(b, monthLong[month-1]...)
			} else {
				b = append(b, monthShort[month-1]...)
			}
		case jDayOfMonth:
			b = appendPadded(b, int64(day), it.minDigits)
		case jHalfday:
			b = append(b, halfdays[tod/(12*msPerHour)]...)
		case jHourOfHalfday:
			b = appendPadded(b, tod/msPerHour%12, it.minDigits)
		case jClockhourOfHalfday:
			h := tod / msPerHour % 12
			if h == 0 {
				h = 12
			}
			b = appendPadded(b, h, it.minDigits)
		case jHourOfDay:
			b = appendPadded(b, tod/msPerHour, it.minDigits)
		case jClockhourOfDay:
			h := tod / msPerHour
			if h == 0 {
				h = 24
			}
			b = appendPadded(b, h, it.minDigits)
		case jMinute:
			b = appendPadded(b, tod/msPerMinute%60, it.minDigits)
		case jSecond:
			b = appendPadded(b, tod/msPerSecond%60, it.minDigits)
		case jFraction:
			// Joda keeps millisecond precision: "S" prints tenths,
			// "SSSSSS" prints millis followed by zeros.
			frac := tod % 1000
			digits := it.minDigits
			v := frac
			switch {
			case digits < 3:
				for i := digits; i < 3; i++ {
					v /= 10
				}
				b = appendPadded(b, v, digits)
			default:
				b = append3(b, v)
				for i := 3; i < digits; i++ {
					b = append(b, '0')
				}
			}
		case jZoneShortName:
			b = append(b, shortZoneName(t.Location(), zoneName, off)...)
		case jZoneLongName:
			b = append(b, longZoneName(t.Location(), zoneName, off)...)
		case jOffset:
			b = appendOffset(b, off, false, "")
		case jOffsetColon:
			b = appendOffset(b, off, true, "")
		case jZoneID:
			b = append(b, ZoneID(t.Location())...)
		}
	}
	return b
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func yearOfEra(y int64) int64 {
	if y <= 0 {
		return 1 - y
	}
	return y
}

// isoWeek returns the ISO week-based year and week number of a day number.
func isoWeek(days int64) (int64, int64) {
	// The week year is the year of the Thursday of the day's week.
	thursday := days - int64(DayOfWeek(days)) + 4
	wy, _, _ := CivilFromDays(thursday)
	return wy, (thursday-weekYearStart(wy))/7 + 1
}

// ZoneID returns the Joda-style id of a location: "UTC", an IANA name, or
// "+05:30" for fixed offsets created by LoadZone.
func ZoneID(loc *time.Location) string {
	if loc == nil {
		return "UTC"
	}
	return loc.String()
}

func shortZoneName(loc *time.Location, abbr string, off int64) string {
	if loc == time.UTC || loc == nil {
		return "UTC"
	}
	if abbr == "" || abbr[0] == '+' || abbr[0] == '-' {
		// Java prints an unnamed offset as GMT-style "+05:30".
		return string(appendOffset(nil, off, true, "+00:00"))
	}
	return abbr
}

var longZoneNames = map[string]string{
	"UTC": "Coordinated Universal Time", "GMT": "Greenwich Mean Time",
	"PST": "Pacific Standard Time", "PDT": "Pacific Daylight Time",
	"MST": "Mountain Standard Time", "MDT": "Mountain Daylight Time",
	"CST": "Central Standard Time", "CDT": "Central Daylight Time",
	"EST": "Eastern Standard Time", "EDT": "Eastern Daylight Time",
	"AKST": "Alaska Standard Time", "AKDT": "Alaska Daylight Time",
	"HST": "Hawaii Standard Time", "BST": "British Summer Time",
	"CET": "Central European Time", "CEST": "Central European Summer Time",
	"EET": "Eastern European Time", "EEST": "Eastern European Summer Time",
	"WET": "Western European Time", "WEST": "Western European Summer Time",
	"IST": "India Standard Time", "JST": "Japan Standard Time",
	"KST": "Korea Standard Time", "AEST": "Australian Eastern Standard Time",
	"AEDT": "Australian Eastern Daylight Time",
}

// longZoneName approximates Java's long display names; zones without a
// known name print their abbreviation.
func longZoneName(loc *time.Location, abbr string, off int64) string {
	s := shortZoneName(loc, abbr, off)
	if n, ok := longZoneNames[s]; ok {
		return n
	}
	return s
}

// defaultZoneNames are the names Joda accepts when parsing 'z'
// (DateTimeUtils.getDefaultTimeZoneNames).
var defaultZoneNames = map[string]string{
	"UT": "UTC", "UTC": "UTC", "GMT": "UTC",
	"EST": "America/New_York", "EDT": "America/New_York",
	"CST": "America/Chicago", "CDT": "America/Chicago",
	"MST": "America/Denver", "MDT": "America/Denver",
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
}

// jodaParsed collects the fields seen while parsing.
type jodaParsed struct {
	set                          uint32 // bit per jodaKind
	era, century, yoe, year      int64
	weekyear, week, dow, doy     int64
	month, day                   int64
	halfday, hour12, hour24      int64
	minute, second, fracMillis   int64
	offset                       int64
	zone                         *time.Location
	twoDigitYear, twoDigitWkYear int64
}

func (jp *jodaParsed) has(k jodaKind) bool { return jp.set&(1<<k) != 0 }

// Parse parses s completely with the pattern. Values without an offset or
// zone in the text are read in loc (nil means UTC). Missing fields default
// to 1970-01-01T00:00:00.000, as in Joda.
func (f *JodaFormat) Parse(s string, loc *time.Location) (time.Time, error) {
	ms, err := f.ParseMillis(s, loc)
	if err != nil {
		return time.Time{}, err
	}
	if loc == nil {
		loc = time.UTC
	}
	return time.UnixMilli(ms).In(loc), nil
}

// ParseMillis is Parse returning epoch millis.
func (f *JodaFormat) ParseMillis(s string, loc *time.Location) (int64, error) {
	var jp jodaParsed
	pos := 0
	fail := func(msg string) error {
		return fmt.Errorf("invalid format: %q is malformed at %q (%s)", s, s[min(pos, len(s)):], msg)
	}
	for _, it := range f.items {
		if it.kind == jLiteral {
			// Joda matches literals case-insensitively.
			if len(s)-pos < len(it.lit) || !strings.EqualFold(s[pos:pos+len(it.lit)], it.lit) {
				return 0, fail("expected " + strconv.Quote(it.lit))
			}
			pos += len(it.lit)
			continue
		}
		var v int64
		switch it.kind {
		case jEra, jMonthText, jDayOfWeekText, jHalfday:
			var names [][]string
			switch it.kind {
			case jEra:
				names = [][]string{eras}
			case jMonthText:
				names = [][]string{monthLong, monthShort}
			case jDayOfWeekText:
				names = [][]string{dowLong, dowShort}
			default:
				names = [][]string{halfdays}
			}
			idx, n := matchName(s[pos:], names)
			if n == 0 {
				return 0, fail("unknown name")
			}
			pos += n
			v = int64(idx)
		case jZoneShortName, jZoneLongName:
			best := ""
			for name := range defaultZoneNames {
				if len(name) > len(best) && len(s)-pos >= len(name) && strings.EqualFold(s[pos:pos+len(name)], name) {
					best = name
				}
			}
			if best == "" {
				return 0, fail("unknown time zone name")
			}
			z, err := LoadZone(defaultZoneNames[strings.ToUpper(best)])
			if err != nil {
				return 0, fail(err.Error())
			}
			pos += len(best)
			jp.zone = z
		case jOffset, jOffsetColon:
			sc := &isoScanner{s: s, pos: pos}
			o, err := sc.offset()
			if err != nil {
				return 0, fail("bad offset")
			}
			pos = sc.pos
			jp.offset = o
		case jZoneID:
			z, n := matchZoneID(s[pos:])
			if z == nil {
				return 0, fail("unknown time zone id")
			}
			pos += n
			jp.zone = z
		case jFraction:
			start := pos
			for pos < len(s) && pos-start < it.maxDigits && s[pos] >= '0' && s[pos] <= '9' {
				pos++
			}
			if pos == start {
				return 0, fail("expected digits")
			}
			digits := s[start:pos]
			if len(digits) > 3 {
				digits = digits[:3]
			}
			v, _ = strconv.ParseInt(digits, 10, 64)
			for i := len(digits); i < 3; i++ {
				v *= 10
			}
		default:
			signed := it.kind == jYear || it.kind == jWeekyear
			start := pos
			neg := false
			if signed && pos < len(s) && (s[pos] == '-' || s[pos] == '+') {
				neg = s[pos] == '-'
				pos++
			}
			maxD := it.maxDigits
			hasSign := false
			if (it.kind == jTwoDigitYear || it.kind == jTwoDigitWeekyear) && it.lenient {
				maxD = 9
				if pos < len(s) && (s[pos] == '-' || s[pos] == '+') {
					neg, hasSign = s[pos] == '-', true
					pos++
				}
			}
			ds := pos
			for pos < len(s) && pos-ds < maxD && s[pos] >= '0' && s[pos] <= '9' {
				v = v*10 + int64(s[pos]-'0')
				pos++
			}
			if pos == ds {
				pos = start
				return 0, fail("expected digits")
			}
			if neg {
				v = -v
			}
			if it.kind == jTwoDigitYear || it.kind == jTwoDigitWeekyear {
				// Exactly two unsigned digits use the pivot; a lenient
				// parse takes anything else as a full year.
				switch {
				case pos-ds == 2 && !hasSign:
					v = twoDigitToYear(v, f.pivot)
				case !it.lenient:
					pos = start
					return 0, fail("expected two digits")
				}
			}
		}
		jp.set |= 1 << it.kind
		switch it.kind {
		case jEra:
			jp.era = v
		case jCentury:
			jp.century = v
		case jYearOfEra:
			jp.yoe = v
		case jYear:
			jp.year = v
		case jWeekyear:
			jp.weekyear = v
		case jTwoDigitYear:
			jp.twoDigitYear = v
		case jTwoDigitWeekyear:
			jp.twoDigitWkYear = v
		case jWeekOfWeekyear:
			jp.week = v
		case jDayOfWeek:
			jp.dow = v
		case jDayOfWeekText:
			jp.dow = v + 1
		case jDayOfYear:
			jp.doy = v
		case jMonth:
			jp.month = v
		case jMonthText:
			jp.month = v + 1
		case jDayOfMonth:
			jp.day = v
		case jHalfday:
			jp.halfday = v
		case jHourOfHalfday, jClockhourOfHalfday:
			jp.hour12 = v
		case jHourOfDay:
			jp.hour24 = v
		case jClockhourOfDay:
			jp.hour24 = v
		case jMinute:
			jp.minute = v
		case jSecond:
			jp.second = v
		case jFraction:
			jp.fracMillis = v
		}
	}
	if pos != len(s) {
		return 0, fail("trailing text")
	}
	return jp.resolve(loc)
}

func twoDigitToYear(v, pivot int64) int64 {
	low := pivot - 50
	t := low % 100
	if t < 0 {
		t += 100
	}
	y := v + low - t
	if v < t {
		y += 100
	}
	return y
}

// matchName returns the index and length of the longest case-insensitive
// name at the start of s.
func matchName(s string, lists [][]string) (int, int) {
	bestIdx, bestLen := -1, 0
	for _, names := range lists {
		for i, n := range names {
			if len(n) > bestLen && len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
				bestIdx, bestLen = i, len(n)
			}
		}
	}
	return bestIdx, bestLen
}

// matchZoneID reads the longest zone id at the start of s.
func matchZoneID(s string) (*time.Location, int) {
	end := 0
	for end < len(s) && end < 64 {
		c := s[end]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '_' || c == '-' || c == '+' || c == ':' {
			end++
			continue
		}
		break
	}
	for n := end; n > 0; n-- {
		if z, err := LoadZone(s[:n]); err == nil {
			return z, n
		}
	}
	return nil, 0
}

// errFieldRange marks a parsed field outside its valid range.
var errFieldRange = errors.New("field value out of range")

func (jp *jodaParsed) resolve(loc *time.Location) (int64, error) {
	rangeErr := func(name string, v int64) error {
		return fmt.Errorf("%w: %s %d", errFieldRange, name, v)
	}
	year := int64(1970)
	switch {
	case jp.has(jYear):
		year = jp.year
	case jp.has(jTwoDigitYear):
		year = jp.twoDigitYear
	case jp.has(jYearOfEra) || jp.has(jCentury) || jp.has(jEra):
		yoe := int64(1970)
		if jp.has(jYearOfEra) {
			yoe = jp.yoe
		}
		if jp.has(jCentury) {
			yoe = jp.century*100 + floorMod(yoe, 100)
		}
		if yoe < 1 {
			return 0, rangeErr("yearOfEra", yoe)
		}
		year = yoe
		if jp.has(jEra) && jp.era == 0 {
			year = 1 - yoe
		}
	}
	if year > maxYear || year < -maxYear {
		return 0, rangeErr("year", year)
	}
	var days int64
	switch {
	case jp.has(jWeekyear) || jp.has(jTwoDigitWeekyear) || (jp.has(jWeekOfWeekyear) && !jp.has(jMonth) && !jp.has(jMonthText)):
		wy := year
		if jp.has(jWeekyear) {
			wy = jp.weekyear
		} else if jp.has(jTwoDigitWeekyear) {
			wy = jp.twoDigitWkYear
		}
		if wy > maxYear || wy < -maxYear {
			return 0, rangeErr("weekyear", wy)
		}
		w := int64(1)
		if jp.has(jWeekOfWeekyear) {
			w = jp.week
		}
		if w < 1 || w > weeksInWeekYear(wy) {
			return 0, rangeErr("weekOfWeekyear", w)
		}
		days = weekYearStart(wy) + (w-1)*7
		if jp.has(jDayOfWeek) || jp.has(jDayOfWeekText) {
			if jp.dow < 1 || jp.dow > 7 {
				return 0, rangeErr("dayOfWeek", jp.dow)
			}
			days += jp.dow - 1
		} else {
			// Joda keeps the day of week of the 1970 default (Thursday).
			days += 3
		}
	case jp.has(jDayOfYear):
		maxDoy := int64(365)
		if IsLeapYear(year) {
			maxDoy = 366
		}
		if jp.doy < 1 || jp.doy > maxDoy {
			return 0, rangeErr("dayOfYear", jp.doy)
		}
		days = DaysFromCivil(year, 1, 1) + jp.doy - 1
	default:
		month := int64(1)
		if jp.has(jMonth) || jp.has(jMonthText) {
			month = jp.month
		}
		if month < 1 || month > 12 {
			return 0, rangeErr("monthOfYear", month)
		}
		day := int64(1)
		if jp.has(jDayOfMonth) {
			day = jp.day
		}
		if day < 1 || day > int64(DaysInMonth(year, int(month))) {
			return 0, rangeErr("dayOfMonth", day)
		}
		days = DaysFromCivil(year, int(month), int(day))
		if jp.has(jDayOfWeek) || jp.has(jDayOfWeekText) {
			// Joda sets the day of week after the date: it moves within the ISO week.
			if jp.dow < 1 || jp.dow > 7 {
				return 0, rangeErr("dayOfWeek", jp.dow)
			}
			days += jp.dow - int64(DayOfWeek(days))
		}
	}
	hour := int64(0)
	switch {
	case jp.has(jHourOfDay):
		if jp.hour24 < 0 || jp.hour24 > 23 {
			return 0, rangeErr("hourOfDay", jp.hour24)
		}
		hour = jp.hour24
	case jp.has(jClockhourOfDay):
		if jp.hour24 < 1 || jp.hour24 > 24 {
			return 0, rangeErr("clockhourOfDay", jp.hour24)
		}
		hour = jp.hour24 % 24
	case jp.has(jClockhourOfHalfday):
		if jp.hour12 < 1 || jp.hour12 > 12 {
			return 0, rangeErr("clockhourOfHalfday", jp.hour12)
		}
		hour = jp.hour12%12 + 12*jp.halfday
	case jp.has(jHourOfHalfday):
		if jp.hour12 < 0 || jp.hour12 > 11 {
			return 0, rangeErr("hourOfHalfday", jp.hour12)
		}
		hour = jp.hour12 + 12*jp.halfday
	case jp.has(jHalfday):
		hour = 12 * jp.halfday
	}
	if jp.minute > 59 {
		return 0, rangeErr("minuteOfHour", jp.minute)
	}
	if jp.second > 59 {
		return 0, rangeErr("secondOfMinute", jp.second)
	}
	local := days*msPerDay + hour*msPerHour + jp.minute*msPerMinute + jp.second*msPerSecond + jp.fracMillis
	switch {
	case jp.has(jOffset) || jp.has(jOffsetColon):
		return local - jp.offset, nil
	case jp.zone != nil:
		return LocalToUTC(jp.zone, local), nil
	default:
		return LocalToUTC(loc, local), nil
	}
}
