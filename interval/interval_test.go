package interval

import (
	"testing"
)

func TestParseInterval(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2013-08-31/2013-09-01", "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z"},
		{"2013-08-31T01:02:33Z/2013-09-01T00:00:00.000Z", "2013-08-31T01:02:33.000Z/2013-09-01T00:00:00.000Z"},
		{"2015-09-12T00:00:00.000+05:00/2015-09-13T00:00:00.000+05:00", "2015-09-11T19:00:00.000Z/2015-09-12T19:00:00.000Z"},
		{"2013-08-31T00:00:00Z/PT1H", "2013-08-31T00:00:00.000Z/2013-08-31T01:00:00.000Z"},
		{"2013-01-31/P1M", "2013-01-31T00:00:00.000Z/2013-02-28T00:00:00.000Z"},
		{"P1D/2013-09-01", "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z"},
		{"P1M/2013-03-31", "2013-02-28T00:00:00.000Z/2013-03-31T00:00:00.000Z"},
		{"p1d/2013-09-01", "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z"},
		{"2012/2013", "2012-01-01T00:00:00.000Z/2013-01-01T00:00:00.000Z"},
		{"2013-08-31/2013-08-31", "2013-08-31T00:00:00.000Z/2013-08-31T00:00:00.000Z"},
		{"1000-01-01/3000-01-01", "1000-01-01T00:00:00.000Z/3000-01-01T00:00:00.000Z"},
		{"-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z", "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z"},
	}
	for _, c := range cases {
		iv, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if iv.String() != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, iv, c.want)
		}
		again, err := Parse(iv.String())
		if err != nil || again != iv {
			t.Errorf("round trip of %s = %v, %v", iv, again, err)
		}
	}
	if iv, _ := Parse("-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z"); iv != Eternity {
		t.Errorf("eternity parsed as %v", iv)
	}
}

func TestParseIntervalInvalid(t *testing.T) {
	for _, in := range []string{
		"", "2013-08-31", "/2013-08-31", "2013-08-31/", "P1D/P1D", "2013-09-01/2013-08-31",
		"2013-08-31/xyz", "junk/2013-08-31", "2013-08-31/P", "2013-08-31/P1X", "2013-08-31_2013-09-01",
		"2013-08-31/2013-09-01/2013-09-02", "2013-08-31/P-1D",
	} {
		if iv, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want error", in, iv)
		}
	}
}

func TestParsePath(t *testing.T) {
	cases := map[string]string{
		"2013-08-31T00:00:00.000Z_2013-09-01T00:00:00.000Z": "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z",
		"2013-08-31_2013-09-01":                             "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z",
		"2013-08-31_P1D":                                    "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z",
		"2013-08-31/2013-09-01":                             "2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z",
	}
	for in, want := range cases {
		iv, err := ParsePath(in)
		if err != nil || iv.String() != want {
			t.Errorf("ParsePath(%q) = %v, %v; want %s", in, iv, err, want)
		}
	}
	iv, _ := ParsePath("2013-08-31_2013-09-01")
	if got := iv.PathString(); got != "2013-08-31T00:00:00.000Z_2013-09-01T00:00:00.000Z" {
		t.Errorf("PathString = %s", got)
	}
	for _, in := range []string{"2013-08-31", "2013-08-31_", "_2013-08-31", "a_b"} {
		if _, err := ParsePath(in); err == nil {
			t.Errorf("ParsePath(%q) should fail", in)
		}
	}
}

func TestIntervalRelations(t *testing.T) {
	iv := func(s, e int64) Interval { return Interval{s, e} }
	a := iv(10, 20)
	cases := []struct {
		o                  Interval
		contains, overlaps bool
		inter              Interval
		interOK            bool
	}{
		{iv(10, 20), true, true, iv(10, 20), true},
		{iv(12, 15), true, true, iv(12, 15), true},
		{iv(5, 15), false, true, iv(10, 15), true},
		{iv(15, 25), false, true, iv(15, 20), true},
		{iv(0, 30), false, true, iv(10, 20), true},
		{iv(0, 10), false, false, Interval{}, false},
		{iv(20, 30), false, false, Interval{}, false},
		{iv(15, 15), true, true, iv(15, 15), true}, // empty interval inside: Joda contains it
		{iv(20, 20), false, false, Interval{}, false},
		{iv(10, 10), true, false, Interval{}, false}, // Joda: contained, yet no overlap
	}
	for _, c := range cases {
		if got := a.Contains(c.o); got != c.contains {
			t.Errorf("%v.Contains(%v) = %v", a, c.o, got)
		}
		if got := a.Overlaps(c.o); got != c.overlaps {
			t.Errorf("%v.Overlaps(%v) = %v", a, c.o, got)
		}
		if got := c.o.Overlaps(a); got != c.overlaps {
			t.Errorf("%v.Overlaps(%v) = %v (not symmetric)", c.o, a, got)
		}
		got, ok := a.Intersect(c.o)
		if ok != c.interOK || got != c.inter {
			t.Errorf("%v.Intersect(%v) = %v, %v", a, c.o, got, ok)
		}
	}
	if !a.ContainsTime(10) || !a.ContainsTime(19) || a.ContainsTime(20) || a.ContainsTime(9) {
		t.Error("ContainsTime is not half-open")
	}
	if iv(5, 5).Contains(iv(5, 5)) {
		t.Error("an empty interval contains nothing")
	}
	if !a.Abuts(iv(20, 30)) || a.Abuts(iv(21, 30)) {
		t.Error("Abuts")
	}
	if a.Union(iv(30, 40)) != iv(10, 40) || a.Duration() != 10 || !iv(3, 3).IsEmpty() {
		t.Error("Union/Duration/IsEmpty")
	}
	if _, err := Of(5, 4); err == nil {
		t.Error("Of accepted end < start")
	}
}
