package interval

import (
	"math/rand"
	"testing"
	"time"
)

func TestJodaFormat(t *testing.T) {
	ts := time.Date(2013, 8, 31, 1, 2, 3, 45e6, time.UTC)
	la := mustZone(t, "America/Los_Angeles")
	cases := []struct {
		pattern string
		t       time.Time
		want    string
	}{
		{"yyyy-MM-dd'T'HH:mm:ss.SSSZZ", ts, "2013-08-31T01:02:03.045+00:00"},
		{"yyyy-MM-dd HH:mm:ss", ts, "2013-08-31 01:02:03"},
		{"MMM d, yyyy h:mm a", ts, "Aug 31, 2013 1:02 AM"},
		{"EEEE, MMMM dd", ts, "Saturday, August 31"},
		{"EEE", ts, "Sat"},
		{"yy", ts, "13"},
		{"y", ts, "2013"},
		{"D", ts, "243"},
		{"DDDD", ts, "0243"},
		{"xxxx-'W'ww-e", ts, "2013-W35-6"},
		{"xxxx-'W'ww-e", time.Date(2016, 1, 3, 0, 0, 0, 0, time.UTC), "2015-W53-7"},
		{"xx", time.Date(2016, 1, 3, 0, 0, 0, 0, time.UTC), "15"},
		{"Z", ts, "+0000"},
		{"ZZ", ts, "+00:00"},
		{"ZZZ", ts, "UTC"},
		{"z", ts, "UTC"},
		{"zzzz", ts, "Coordinated Universal Time"},
		{"'quoted ''x'''", ts, "quoted 'x'"},
		{"''", ts, "'"},
		{"HH 'o''clock'", ts, "01 o'clock"},
		{"S", ts, "0"},
		{"SS", ts, "04"},
		{"SSSSSS", ts, "045000"},
		{"k K h H a", time.Date(2013, 8, 31, 0, 5, 0, 0, time.UTC), "24 0 12 0 AM"},
		{"k K h H a", time.Date(2013, 8, 31, 13, 5, 0, 0, time.UTC), "13 1 1 13 PM"},
		{"G C YYYY", ts, "AD 20 2013"},
		{"G YYYY yyyy", time.Date(-10, 1, 1, 0, 0, 0, 0, time.UTC), "BC 0011 -0010"},
		{"MM/dd/yyyy", time.Date(5, 1, 2, 0, 0, 0, 0, time.UTC), "01/02/0005"},
		{"yyyy-MM-dd HH:mm:ss Z z ZZZ", ts.In(la), "2013-08-30 18:02:03 -0700 PDT America/Los_Angeles"},
		{"zzzz", ts.In(la), "Pacific Daylight Time"},
		{"ZZ", ts.In(mustZone(t, "Asia/Kolkata")), "+05:30"},
		{"e E", ts.In(la), "5 Fri"},
		{"[yyyy]", ts, "[2013]"},
	}
	for _, c := range cases {
		f, err := CompileJoda(c.pattern)
		if err != nil {
			t.Errorf("CompileJoda(%q): %v", c.pattern, err)
			continue
		}
		if got := f.Format(c.t); got != c.want {
			t.Errorf("Format(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

func TestCompileJodaInvalid(t *testing.T) {
	for _, p := range []string{"yyyy-MM-dd q", "'unterminated", "yyyy'", "b", "T", "yyyy-MM-dd'T'HH:mm:ss.SSSX"} {
		if _, err := CompileJoda(p); err == nil {
			t.Errorf("CompileJoda(%q) should fail", p)
		}
	}
}

func TestJodaParse(t *testing.T) {
	la := mustZone(t, "America/Los_Angeles")
	cases := []struct {
		pattern, in string
		loc         *time.Location
		want        string
	}{
		{"dd/MM/yyyy", "31/08/2013", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"yyyy-MM-dd", "2013-8-31", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"yyyyMMdd", "20130831", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"yyyyMMddHHmmss", "20130831010203", time.UTC, "2013-08-31T01:02:03.000Z"},
		{"MMM dd yyyy HH:mm:ss", "aug 31 2013 01:02:03", time.UTC, "2013-08-31T01:02:03.000Z"},
		{"MMM dd yyyy", "August 31 2013", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"MMMM dd yyyy", "Aug 31 2013", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"EEE, dd MMM yyyy HH:mm:ss Z", "Sat, 31 Aug 2013 01:02:03 -0700", time.UTC, "2013-08-31T08:02:03.000Z"},
		{"EEE yyyy-MM-dd", "Mon 2013-08-31", time.UTC, "2013-08-26T00:00:00.000Z"},
		{"yyyy-MM-dd HH:mm:ss ZZZ", "2013-08-31 01:02:03 America/Los_Angeles", time.UTC, "2013-08-31T08:02:03.000Z"},
		{"yyyy-MM-dd HH:mm:ss z", "2013-08-31 01:02:03 PDT", time.UTC, "2013-08-31T08:02:03.000Z"},
		{"yyyy-MM-dd HH:mm:ss", "2013-08-31 01:02:03", la, "2013-08-31T08:02:03.000Z"},
		{"HH:mm", "10:00", la, "1970-01-01T18:00:00.000Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSZZ", "2013-08-31T01:02:03.045Z", la, "2013-08-31T01:02:03.045Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSZZ", "2013-08-31T01:02:03.045+05:30", la, "2013-08-30T19:32:03.045Z"},
		{"yyyy-MM-dd HH:mm:ss.S", "2013-08-31 01:02:03.4", time.UTC, "2013-08-31T01:02:03.400Z"},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2013-08-31 01:02:03.4", time.UTC, "2013-08-31T01:02:03.400Z"},
		{"yyyy-MM-dd HH:mm:ss.SSSSSS", "2013-08-31 01:02:03.123456", time.UTC, "2013-08-31T01:02:03.123Z"},
		{"D yyyy", "243 2013", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"xxxx-'W'ww-e", "2013-W35-6", time.UTC, "2013-08-31T00:00:00.000Z"},
		{"h:mm a", "1:02 PM", time.UTC, "1970-01-01T13:02:00.000Z"},
		{"hh a", "12 am", time.UTC, "1970-01-01T00:00:00.000Z"},
		{"hh a", "12 PM", time.UTC, "1970-01-01T12:00:00.000Z"},
		{"K a", "11 PM", time.UTC, "1970-01-01T23:00:00.000Z"},
		{"kk", "24", time.UTC, "1970-01-01T00:00:00.000Z"},
		{"YYYY-MM-dd G", "0044-03-15 BC", time.UTC, "-0043-03-15T00:00:00.000Z"},
		{"yyyy-MM-dd G", "0044-03-15 BC", time.UTC, "0044-03-15T00:00:00.000Z"}, // Joda: year overrides era
		{"yyyy-MM-dd", "-0043-03-15", time.UTC, "-0043-03-15T00:00:00.000Z"},
		{"yy-MM", "2013-08", time.UTC, "2013-08-01T00:00:00.000Z"},
		{"'at' HH", "AT 05", time.UTC, "1970-01-01T05:00:00.000Z"},
	}
	for _, c := range cases {
		f, err := CompileJoda(c.pattern)
		if err != nil {
			t.Fatalf("CompileJoda(%q): %v", c.pattern, err)
		}
		got, err := f.Parse(c.in, c.loc)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", c.pattern, c.in, err)
			continue
		}
		if s := FormatMillis(got.UnixMilli()); s != c.want {
			t.Errorf("Parse(%q, %q) = %s, want %s", c.pattern, c.in, s, c.want)
		}
		if got.Location() != c.loc {
			t.Errorf("Parse(%q) returned location %v", c.pattern, got.Location())
		}
	}
}

func TestJodaTwoDigitYear(t *testing.T) {
	for _, c := range []struct {
		pattern, in string
		year        int
	}{
		{"yy-MM-dd", "13-08-31", 2013},
		{"yy-MM-dd", "70-01-01", 1970},
		{"yy-MM-dd", "45-01-01", 2045},
		{"yy-MM-dd", "46-01-01", 1946},
		{"yyMMdd", "130831", 2013},
		{"yy", "1999", 1999},
		{"yy", "-5", -5},
	} {
		f, err := CompileJoda(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		f.pivot = 1996 // as Joda computes it in 2026
		got, err := f.Parse(c.in, time.UTC)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", c.pattern, c.in, err)
			continue
		}
		if got.Year() != c.year {
			t.Errorf("Parse(%q, %q) year %d, want %d", c.pattern, c.in, got.Year(), c.year)
		}
	}
	f, _ := CompileJoda("yyMM")
	if _, err := f.Parse("1308x", time.UTC); err == nil {
		t.Error("strict two-digit year accepted trailing text")
	}
	if _, err := f.Parse("3", time.UTC); err == nil {
		t.Error("strict two-digit year accepted one digit")
	}
}

func TestJodaParseInvalid(t *testing.T) {
	for _, c := range []struct{ pattern, in string }{
		{"yyyy-MM-dd", "2013-02-30"},
		{"yyyy-MM-dd", "2013-13-01"},
		{"yyyy-MM-dd", "2013-08-31 "},
		{"yyyy-MM-dd", "2013-08"},
		{"yyyy-MM-dd", ""},
		{"hh:mm", "13:00"},
		{"HH:mm", "24:00"},
		{"HH:mm:ss", "23:59:60"},
		{"MMM yyyy", "Foo 2013"},
		{"EEE", "Xyz"},
		{"yyyy ZZZ", "2013 Mars/Base"},
		{"yyyy z", "2013 XYZ"},
		{"yyyy Z", "2013 +5"},
		{"D yyyy", "366 2013"},
		{"xxxx-'W'ww", "2013-W54"},
		{"'lit'", "lot"},
		{"yyyy", "x2013"},
	} {
		f, err := CompileJoda(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := f.Parse(c.in, time.UTC); err == nil {
			t.Errorf("Parse(%q, %q) = %v, want error", c.pattern, c.in, got)
		}
	}
}

func TestJodaRoundTrip(t *testing.T) {
	zones := []*time.Location{time.UTC, mustZone(t, "America/Los_Angeles"), mustZone(t, "Asia/Kolkata"), mustZone(t, "Australia/Lord_Howe")}
	exact := []string{
		"yyyy-MM-dd'T'HH:mm:ss.SSSZZ",
		"EEE, dd MMM yyyy HH:mm:ss.SSS Z",
		"MMMM d yyyy hh:mm:ss.SSS a ZZ",
		"yyyyMMddHHmmssSSSZ",
		"xxxx-'W'ww-e HH:mm:ss.SSS ZZ",
		"yyyy-DDD kk:mm:ss.SSS ZZ",
	}
	idempotent := []string{"yyyy-MM-dd HH:mm:ss.SSS ZZZ", "yyyy-MM-dd HH:mm:ss.SSS"}
	r := rand.New(rand.NewSource(7))
	lo, hi := utcMillis(1900, 1, 1, 0, 0, 0, 0), utcMillis(2100, 1, 1, 0, 0, 0, 0)
	for _, p := range append(exact, idempotent...) {
		f, err := CompileJoda(p)
		if err != nil {
			t.Fatal(err)
		}
		isExact := false
		for _, e := range exact {
			isExact = isExact || e == p
		}
		for i := 0; i < 2000; i++ {
			loc := zones[i%len(zones)]
			tm := time.UnixMilli(lo + r.Int63n(hi-lo)).In(loc)
			s := f.Format(tm)
			back, err := f.Parse(s, loc)
			if err != nil {
				t.Fatalf("%q: Parse(%q): %v", p, s, err)
			}
			if isExact && back.UnixMilli() != tm.UnixMilli() {
				t.Fatalf("%q: %q parsed to %s, want %s", p, s, FormatMillis(back.UnixMilli()), FormatMillis(tm.UnixMilli()))
			}
			if again := f.Format(back); again != s {
				t.Fatalf("%q: %q reformatted as %q", p, s, again)
			}
		}
	}
}
