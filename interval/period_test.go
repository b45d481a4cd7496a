package interval

import (
	"testing"
	"time"
)

func TestParsePeriod(t *testing.T) {
	cases := []struct {
		in   string
		want Period
		str  string
	}{
		{"P1D", Period{Days: 1}, "P1D"},
		{"PT1H", Period{Hours: 1}, "PT1H"},
		{"P1Y2M3W4DT5H6M7S", Period{1, 2, 3, 4, 5, 6, 7, 0}, "P1Y2M3W4DT5H6M7S"},
		{"PT0.5S", Period{Millis: 500}, "PT0.500S"},
		{"PT1.5S", Period{Seconds: 1, Millis: 500}, "PT1.500S"},
		{"PT1,25S", Period{Seconds: 1, Millis: 250}, "PT1.250S"},
		{"PT0.1234S", Period{Millis: 123}, "PT0.123S"},
		{"PT-0.5S", Period{Millis: -500}, "PT-0.500S"},
		{"PT-1.5S", Period{Seconds: -1, Millis: -500}, "PT-1.500S"},
		{"P-1D", Period{Days: -1}, "P-1D"},
		{"p1m", Period{Months: 1}, "P1M"},
		{"pt1m", Period{Minutes: 1}, "PT1M"},
		{"P1W", Period{Weeks: 1}, "P1W"},
		{"P3M", Period{Months: 3}, "P3M"},
		{"PT15M", Period{Minutes: 15}, "PT15M"},
		{"P0D", Period{}, "PT0S"},
		{"PT0S", Period{}, "PT0S"},
		{"P1DT12H", Period{Days: 1, Hours: 12}, "P1DT12H"},
		{"PT36H", Period{Hours: 36}, "PT36H"},
	}
	for _, c := range cases {
		got, err := ParsePeriod(c.in)
		if err != nil {
			t.Errorf("ParsePeriod(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParsePeriod(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if got.String() != c.str {
			t.Errorf("ParsePeriod(%q).String() = %s, want %s", c.in, got.String(), c.str)
		}
		again, err := ParsePeriod(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %s = %+v, %v", got, again, err)
		}
	}
}

func TestParsePeriodInvalid(t *testing.T) {
	for _, in := range []string{
		"", "P", "PT", "1D", "D", "P1", "PD", "P1DT", "P1H", "PT1D", "PT1Y", "P1D1Y", "P1M1M",
		"P1.5D", "PT1.S", "P99999999999D", "P1DTT1H", "P-D", "PT1H2H", "P 1D", "P1D ", "XP1D",
	} {
		if p, err := ParsePeriod(in); err == nil {
			t.Errorf("ParsePeriod(%q) = %+v, want error", in, p)
		}
	}
}

func TestPeriodFixed(t *testing.T) {
	cases := []struct {
		p     Period
		fixed bool
		ms    int64
	}{
		{Period{Hours: 1}, true, 3600000},
		{Period{Weeks: 1, Days: 1}, true, 8 * 86400000},
		{Period{Seconds: 1, Millis: 500}, true, 1500},
		{Period{Months: 1}, false, 0},
		{Period{Years: 1, Days: 1}, false, 0},
	}
	for _, c := range cases {
		if c.p.IsFixed() != c.fixed || c.p.FixedMillis() != c.ms {
			t.Errorf("%s: IsFixed %v FixedMillis %d", c.p, c.p.IsFixed(), c.p.FixedMillis())
		}
	}
	if (Period{Days: 1, Hours: -1}).IsPositive() || !(Period{Days: 1}).IsPositive() || (Period{}).IsPositive() {
		t.Error("IsPositive")
	}
}

func TestPeriodAddTo(t *testing.T) {
	la := mustZone(t, "America/Los_Angeles")
	at := func(s string, loc *time.Location) time.Time {
		ms, err := ParseTimeIn(s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return time.UnixMilli(ms).In(loc)
	}
	cases := []struct {
		period string
		start  time.Time
		n      int
		want   string
	}{
		{"P1M", at("2013-01-31", time.UTC), 1, "2013-02-28T00:00:00.000Z"},
		{"P1M", at("2012-01-31", time.UTC), 1, "2012-02-29T00:00:00.000Z"},
		{"P1M", at("2013-01-31", time.UTC), 2, "2013-03-31T00:00:00.000Z"},
		{"P1M", at("2013-03-31", time.UTC), -1, "2013-02-28T00:00:00.000Z"},
		{"P1Y", at("2012-02-29", time.UTC), 1, "2013-02-28T00:00:00.000Z"},
		{"P1Y", at("2012-02-29", time.UTC), 4, "2016-02-29T00:00:00.000Z"},
		{"P1M1D", at("2013-01-31", time.UTC), 1, "2013-03-01T00:00:00.000Z"},
		{"PT36H", at("2013-01-01", time.UTC), 1, "2013-01-02T12:00:00.000Z"},
		{"P1W", at("1970-01-01", time.UTC), -1, "1969-12-25T00:00:00.000Z"},
		{"PT0.5S", at("2013-01-01", time.UTC), 3, "2013-01-01T00:00:01.500Z"},
		// Days keep the wall clock across DST (a 23-hour day)...
		{"P1D", at("2013-03-09T12:00", la), 1, "2013-03-10T12:00:00.000-07:00"},
		// ...hours are exact durations.
		{"PT24H", at("2013-03-09T12:00", la), 1, "2013-03-10T13:00:00.000-07:00"},
		{"P1D", at("2013-11-02T12:00", la), 1, "2013-11-03T12:00:00.000-08:00"},
		// Landing in the spring-forward gap moves forward.
		{"P1D", at("2013-03-09T02:30", la), 1, "2013-03-10T03:30:00.000-07:00"},
		{"P1M", at("2013-02-10T02:30", la), 1, "2013-03-10T03:30:00.000-07:00"},
		{"P1DT1H", at("2013-03-09T00:00", la), 1, "2013-03-10T01:00:00.000-08:00"},
		{"P1D", at("2013-03-10T00:00", la), 0, "2013-03-10T00:00:00.000-08:00"},
	}
	for _, c := range cases {
		p, err := ParsePeriod(c.period)
		if err != nil {
			t.Fatal(err)
		}
		got := p.AddTo(c.start, c.n)
		if s := FormatMillisIn(got.UnixMilli(), got.Location()); s != c.want {
			t.Errorf("%s + %s x %d = %s, want %s", FormatMillisIn(c.start.UnixMilli(), c.start.Location()), c.period, c.n, s, c.want)
		}
		if got.Location() != c.start.Location() {
			t.Errorf("AddTo changed the location")
		}
	}
	// Sub-millisecond precision of the input survives.
	base := time.Date(2013, 1, 1, 0, 0, 0, 123456789, time.UTC)
	if got := (Period{Days: 1}).AddTo(base, 1); got.Nanosecond() != 123456789 {
		t.Errorf("AddTo lost nanoseconds: %v", got)
	}
	// Arithmetic far outside the supported range saturates instead of wrapping.
	if got := (Period{Years: 1 << 30}).AddMillis(0, 1<<30, nil); got > MaxInstant || got < 0 {
		t.Errorf("saturation: %d", got)
	}
	if got := (Period{Hours: -1 << 30}).AddMillis(0, 1<<30, time.UTC); got < MinInstant || got > 0 {
		t.Errorf("saturation: %d", got)
	}
}
