package interval

import (
	"math/rand"
	"testing"
	"time"
)

func utcMillis(y int, mo time.Month, d, h, mi, s, ms int) int64 {
	return time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC).UnixMilli()
}

func mustZone(t testing.TB, id string) *time.Location {
	t.Helper()
	z, err := LoadZone(id)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"2013-08-31", utcMillis(2013, 8, 31, 0, 0, 0, 0)},
		{"2013-08-31T01", utcMillis(2013, 8, 31, 1, 0, 0, 0)},
		{"2013-08-31T01:02", utcMillis(2013, 8, 31, 1, 2, 0, 0)},
		{"2013-08-31T01:02:33", utcMillis(2013, 8, 31, 1, 2, 33, 0)},
		{"2013-08-31T01:02:33Z", utcMillis(2013, 8, 31, 1, 2, 33, 0)},
		{"2013-08-31t01:02:33z", utcMillis(2013, 8, 31, 1, 2, 33, 0)},
		{"2013-08-31T01:02:33.000Z", utcMillis(2013, 8, 31, 1, 2, 33, 0)},
		{"2013-08-31T01:02:33.5", utcMillis(2013, 8, 31, 1, 2, 33, 500)},
		{"2013-08-31T01:02:33,25", utcMillis(2013, 8, 31, 1, 2, 33, 250)},
		{"2013-08-31T01:02:33.123456789Z", utcMillis(2013, 8, 31, 1, 2, 33, 123)},
		{"2013-08-31T01:02:33.1234567891234Z", utcMillis(2013, 8, 31, 1, 2, 33, 123)},
		{"2013-08-31T10.5", utcMillis(2013, 8, 31, 10, 30, 0, 0)},
		{"2013-08-31T10:30.5", utcMillis(2013, 8, 31, 10, 30, 30, 0)},
		{"2015-09-12T00:00:00.000+05:00", utcMillis(2015, 9, 11, 19, 0, 0, 0)},
		{"2015-09-12T00:00:00-0700", utcMillis(2015, 9, 12, 7, 0, 0, 0)},
		{"2015-09-12T00:00:00+05", utcMillis(2015, 9, 11, 19, 0, 0, 0)},
		{"2015-09-12T00:00:00+05:30", utcMillis(2015, 9, 11, 18, 30, 0, 0)},
		{"2015-09-12T00:00:00+05:30:15", utcMillis(2015, 9, 11, 18, 29, 45, 0)},
		{"2015-09-12T+01:00", utcMillis(2015, 9, 11, 23, 0, 0, 0)},
		{"2015-09-12T", utcMillis(2015, 9, 12, 0, 0, 0, 0)},
		{"2013", utcMillis(2013, 1, 1, 0, 0, 0, 0)},
		{"2013-08", utcMillis(2013, 8, 1, 0, 0, 0, 0)},
		{"2013-8-1", utcMillis(2013, 8, 1, 0, 0, 0, 0)},
		{"2013-244", utcMillis(2013, 9, 1, 0, 0, 0, 0)},
		{"2012-366", utcMillis(2012, 12, 31, 0, 0, 0, 0)},
		{"2013-W35-6", utcMillis(2013, 8, 31, 0, 0, 0, 0)},
		{"2013-W01", utcMillis(2012, 12, 31, 0, 0, 0, 0)},
		{"2015-W53-7", utcMillis(2016, 1, 3, 0, 0, 0, 0)},
		{"T10:00", utcMillis(1970, 1, 1, 10, 0, 0, 0)},
		{"T10:00-01:00", utcMillis(1970, 1, 1, 11, 0, 0, 0)},
		{"0000-01-01", utcMillis(0, 1, 1, 0, 0, 0, 0)},
		{"-0001-12-31T23:59:59.999Z", utcMillis(0, 1, 1, 0, 0, 0, 0) - 1},
		{"+2013-08-31", utcMillis(2013, 8, 31, 0, 0, 0, 0)},
		{"1969-12-31T23:59:59.999Z", -1},
		{"10000-01-01", utcMillis(10000, 1, 1, 0, 0, 0, 0)},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseTime(%q) = %s, want %s", c.in, FormatMillis(got), FormatMillis(c.want))
		}
	}
}

func TestParseTimeInvalid(t *testing.T) {
	for _, in := range []string{
		"", "abc", "2013-13-01", "2013-00-01", "2013-02-29", "2013-04-31", "2013-08-31T24:00",
		"2013-08-31T01:60", "2013-08-31T01:02:60", "2013-08-31 01:02:33", "2013-08-31T01:02:33+5",
		"2013-08-31T01:02:33+05:3", "2013-08-31T01:02:33+24:00", "2013-08-31Z", "2013-366",
		"2013-000", "2013-W54", "2013-W00", "2013-W01-8", "2013-08-31T01:02:33.", "2013-08-31T01:02:33Zjunk",
		"T", "T:10", "2013-", "2013-08-", "-", "2013-08-31T01:02:33 Z", "9999999999-01-01",
	} {
		if got, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) = %s, want error", in, FormatMillis(got))
		}
	}
}

func TestParseTimeInZone(t *testing.T) {
	la := mustZone(t, "America/Los_Angeles")
	cases := []struct {
		in   string
		want string
	}{
		{"2013-08-31", "2013-08-31T07:00:00.000Z"},
		{"2013-01-31T10:00", "2013-01-31T18:00:00.000Z"},
		{"2013-08-31T00:00Z", "2013-08-31T00:00:00.000Z"},
		// Spring-forward gap: 02:30 does not exist and moves to 03:30 PDT.
		{"2013-03-10T02:30", "2013-03-10T10:30:00.000Z"},
		// Fall-back overlap: 01:30 happens twice; the earlier (PDT) wins.
		{"2013-11-03T01:30", "2013-11-03T08:30:00.000Z"},
	}
	for _, c := range cases {
		got, err := ParseTimeIn(c.in, la)
		if err != nil {
			t.Fatal(err)
		}
		if FormatMillis(got) != c.want {
			t.Errorf("ParseTimeIn(%q) = %s, want %s", c.in, FormatMillis(got), c.want)
		}
	}
}

func TestParseTimeLenient(t *testing.T) {
	ok := map[string]string{
		"2013-08-31 01:02:33":       "2013-08-31T01:02:33.000Z",
		"2013-08-31T01:02:33":       "2013-08-31T01:02:33.000Z",
		"2013-08-31 01:02:33+01:00": "2013-08-31T00:02:33.000Z",
		"2013-08-31":                "2013-08-31T00:00:00.000Z",
		"2013-08-31 ":               "2013-08-31T00:00:00.000Z",
	}
	for in, want := range ok {
		got, err := ParseTimeLenient(in, time.UTC)
		if err != nil || FormatMillis(got) != want {
			t.Errorf("ParseTimeLenient(%q) = %s, %v; want %s", in, FormatMillis(got), err, want)
		}
	}
	for _, in := range []string{"T10:00", "2013-08-31X", "2013-08-31  01:02"} {
		if _, err := ParseTimeLenient(in, time.UTC); err == nil {
			t.Errorf("ParseTimeLenient(%q) should fail", in)
		}
	}
}

func TestFormatMillis(t *testing.T) {
	cases := []struct {
		ms   int64
		want string
	}{
		{0, "1970-01-01T00:00:00.000Z"},
		{-1, "1969-12-31T23:59:59.999Z"},
		{utcMillis(2013, 8, 31, 1, 2, 33, 7), "2013-08-31T01:02:33.007Z"},
		{utcMillis(0, 1, 1, 0, 0, 0, 0), "0000-01-01T00:00:00.000Z"},
		{utcMillis(-1, 12, 31, 0, 0, 0, 0), "-0001-12-31T00:00:00.000Z"},
		{utcMillis(12345, 6, 7, 0, 0, 0, 0), "12345-06-07T00:00:00.000Z"},
		{MinInstant, "-146136543-09-08T08:23:32.096Z"},
		{MaxInstant, "146140482-04-24T15:36:27.903Z"},
	}
	for _, c := range cases {
		if got := FormatMillis(c.ms); got != c.want {
			t.Errorf("FormatMillis(%d) = %s, want %s", c.ms, got, c.want)
		}
	}
	if got := Eternity.String(); got != "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z" {
		t.Errorf("Eternity = %s", got)
	}
}

func TestFormatMillisMatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	lo, hi := utcMillis(1, 1, 1, 0, 0, 0, 0), utcMillis(9999, 12, 31, 0, 0, 0, 0)
	for i := 0; i < 20000; i++ {
		ms := lo + r.Int63n(hi-lo)
		want := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
		if got := FormatMillis(ms); got != want {
			t.Fatalf("FormatMillis(%d) = %s, want %s", ms, got, want)
		}
		back, err := ParseTime(want)
		if err != nil || back != ms {
			t.Fatalf("ParseTime(%s) = %d, %v; want %d", want, back, err, ms)
		}
	}
}

func TestFormatMillisIn(t *testing.T) {
	la := mustZone(t, "America/Los_Angeles")
	cases := []struct {
		ms   int64
		loc  *time.Location
		want string
	}{
		{utcMillis(2013, 8, 31, 7, 0, 0, 0), la, "2013-08-31T00:00:00.000-07:00"},
		{utcMillis(2013, 1, 31, 8, 0, 0, 0), la, "2013-01-31T00:00:00.000-08:00"},
		{utcMillis(2013, 1, 31, 8, 0, 0, 0), time.UTC, "2013-01-31T08:00:00.000Z"},
		{utcMillis(2013, 1, 31, 8, 0, 0, 0), nil, "2013-01-31T08:00:00.000Z"},
		{utcMillis(2013, 1, 31, 8, 0, 0, 0), mustZone(t, "Europe/London"), "2013-01-31T08:00:00.000Z"},
		{utcMillis(2013, 7, 31, 8, 0, 0, 0), mustZone(t, "Europe/London"), "2013-07-31T09:00:00.000+01:00"},
		{utcMillis(2013, 1, 31, 0, 0, 0, 0), mustZone(t, "Asia/Kolkata"), "2013-01-31T05:30:00.000+05:30"},
		{utcMillis(2013, 1, 31, 0, 0, 0, 0), mustZone(t, "+05:45"), "2013-01-31T05:45:00.000+05:45"},
		// Local mean time before standard time: Joda prints the seconds.
		{utcMillis(1850, 1, 1, 0, 0, 0, 0), la, "1849-12-31T16:07:02.000-07:52:58"},
	}
	for _, c := range cases {
		if got := FormatMillisIn(c.ms, c.loc); got != c.want {
			t.Errorf("FormatMillisIn(%d, %v) = %s, want %s", c.ms, c.loc, got, c.want)
		}
	}
}

func TestLocalToUTC(t *testing.T) {
	la := mustZone(t, "America/Los_Angeles")
	berlin := mustZone(t, "Europe/Berlin")
	local := func(y int, mo time.Month, d, h, mi int) int64 { return utcMillis(y, mo, d, h, mi, 0, 0) }
	cases := []struct {
		loc   *time.Location
		local int64
		want  string
	}{
		{la, local(2013, 3, 10, 1, 59), "2013-03-10T09:59:00.000Z"},
		{la, local(2013, 3, 10, 2, 0), "2013-03-10T10:00:00.000Z"},  // gap start -> 03:00 PDT
		{la, local(2013, 3, 10, 2, 30), "2013-03-10T10:30:00.000Z"}, // gap -> 03:30 PDT
		{la, local(2013, 3, 10, 3, 0), "2013-03-10T10:00:00.000Z"},
		{la, local(2013, 11, 3, 0, 59), "2013-11-03T07:59:00.000Z"},
		{la, local(2013, 11, 3, 1, 0), "2013-11-03T08:00:00.000Z"}, // overlap -> earlier (PDT)
		{la, local(2013, 11, 3, 1, 30), "2013-11-03T08:30:00.000Z"},
		{la, local(2013, 11, 3, 2, 0), "2013-11-03T10:00:00.000Z"},
		{berlin, local(2013, 3, 31, 2, 30), "2013-03-31T01:30:00.000Z"},  // gap -> 03:30 CEST
		{berlin, local(2013, 10, 27, 2, 30), "2013-10-27T00:30:00.000Z"}, // overlap -> CEST
		{berlin, local(2013, 10, 27, 3, 0), "2013-10-27T02:00:00.000Z"},
		{time.UTC, 12345, "1970-01-01T00:00:12.345Z"},
	}
	for _, c := range cases {
		if got := FormatMillis(LocalToUTC(c.loc, c.local)); got != c.want {
			t.Errorf("LocalToUTC(%v, %s) = %s, want %s", c.loc, FormatMillis(c.local), got, c.want)
		}
	}
}

func TestCivilRoundTrip(t *testing.T) {
	for d := int64(-800000); d <= 800000; d += 7 {
		y, m, dd := CivilFromDays(d)
		if back := DaysFromCivil(y, m, dd); back != d {
			t.Fatalf("day %d -> %d-%d-%d -> %d", d, y, m, dd, back)
		}
		if dd < 1 || dd > DaysInMonth(y, m) {
			t.Fatalf("day %d -> invalid %d-%d-%d", d, y, m, dd)
		}
	}
	if DayOfWeek(0) != 4 || DayOfWeek(-3) != 1 || DayOfWeek(-4) != 7 {
		t.Error("DayOfWeek wrong around the epoch")
	}
}

func TestLoadZone(t *testing.T) {
	cases := map[string]string{
		"UTC":                 "UTC",
		"Z":                   "UTC",
		"Etc/UTC":             "UTC",
		"America/Los_Angeles": "America/Los_Angeles",
		"+05:30":              "+05:30",
		"-0800":               "-08:00",
		"+05":                 "+05:00",
		"UTC+03":              "+03:00",
		"GMT-02:30":           "-02:30",
		"+00:00":              "UTC",
		"PST":                 "America/Los_Angeles",
	}
	for in, want := range cases {
		z, err := LoadZone(in)
		if err != nil {
			t.Errorf("LoadZone(%q): %v", in, err)
			continue
		}
		if ZoneID(z) != want {
			t.Errorf("LoadZone(%q) = %s, want %s", in, ZoneID(z), want)
		}
	}
	for _, in := range []string{"", "Local", "Mars/Olympus", "../etc/passwd", "+25:00", "+05:3", "/etc/localtime"} {
		if _, err := LoadZone(in); err == nil {
			t.Errorf("LoadZone(%q) should fail", in)
		}
	}
}
