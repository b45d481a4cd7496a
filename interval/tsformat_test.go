package interval

import (
	"encoding/json"
	"testing"
)

func TestParseTimestampFormat(t *testing.T) {
	aug31 := utcMillis(2013, 8, 31, 1, 2, 33, 0)
	cases := []struct {
		format string
		in     any
		want   int64
	}{
		{"auto", "2013-08-31T01:02:33Z", aug31},
		{"auto", "2013-08-31T01:02:33", aug31},
		{"auto", "2013-08-31 01:02:33", aug31},
		{"AUTO", "\"2013-08-31 01:02:33\"", aug31},
		{"auto", "2013-08-31 01:02:33+00:00", aug31},
		// Druid strips a trailing zone name but still reads the text as UTC.
		{"auto", "2013-08-31 01:02:33 America/Los_Angeles", aug31},
		{"auto", "1377910953000", aug31},
		{"auto", float64(1377910953000), aug31},
		{"auto", json.Number("1377910953000"), aug31},
		{"auto", json.Number("1377910953000.7"), aug31},
		{"auto", int64(1377910953000), aug31},
		{"auto", "2013-08-31", utcMillis(2013, 8, 31, 0, 0, 0, 0)},
		{"iso", "2013-08-31T01:02:33Z", aug31},
		{"iso", " \"2013-08-31T01:02:33Z\" ", aug31},
		{"iso", "2013-08-31T03:02:33+02:00", aug31},
		{"posix", float64(1377910953), aug31},
		{"posix", float64(1377910953.9), aug31},
		{"posix", "1377910953", aug31},
		{"posix", json.Number("1377910953"), aug31},
		{"millis", "1377910953000", aug31},
		{"millis", int64(-5), -5},
		{"micro", int64(1377910953000123), aug31},
		{"micro", "1377910953000999", aug31},
		{"nano", int64(1377910953000123456), aug31},
		{"ruby", float64(1377910953.25), aug31 + 250},
		{"ruby", "1377910953.5", aug31 + 500},
		{"ruby", int64(1377910953), aug31},
		{"yyyy-MM-dd HH:mm:ss", "2013-08-31 01:02:33", aug31},
		{"dd/MM/yyyy", "31/08/2013", utcMillis(2013, 8, 31, 0, 0, 0, 0)},
		{"yyyy", int64(2013), utcMillis(2013, 1, 1, 0, 0, 0, 0)},
	}
	for _, c := range cases {
		parse, err := ParseTimestampFormat(c.format)
		if err != nil {
			t.Fatalf("ParseTimestampFormat(%q): %v", c.format, err)
		}
		got, err := parse(c.in)
		if err != nil {
			t.Errorf("%s(%v): %v", c.format, c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s(%#v) = %s, want %s", c.format, c.in, FormatMillis(got), FormatMillis(c.want))
		}
	}
}

func TestParseTimestampFormatErrors(t *testing.T) {
	if _, err := ParseTimestampFormat("yyyy-q"); err == nil {
		t.Error("bad Joda pattern accepted")
	}
	cases := []struct {
		format string
		in     any
	}{
		{"auto", nil},
		{"auto", ""},
		{"auto", "not a time"},
		{"auto", "2013-08-31 01:02:33 Nowhere/Zone"},
		{"iso", "2013-08-31 01:02:33"},
		{"iso", "\"\""},
		{"iso", nil},
		{"posix", "1.5"},
		{"millis", "abc"},
		{"millis", ""},
		{"ruby", "x"},
		{"yyyy-MM-dd", "2013/08/31"},
		{"auto", []int{1}},
		{"auto", "99999999999999999999"},
	}
	for _, c := range cases {
		parse, err := ParseTimestampFormat(c.format)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := parse(c.in); err == nil {
			t.Errorf("%s(%#v) = %d, want error", c.format, c.in, got)
		}
	}
}
