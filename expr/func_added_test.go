package expr

import "testing"

// subtract_months(a, b[, tz]) is the number of whole calendar months from b
// to a, as Joda's Months.monthsBetween(b, a) counts them in tz: a month is
// complete once the day of month and time of day are reached, and the last
// day of a shorter month completes a month begun on a later day.
func TestSubtractMonths(t *testing.T) {
	runCases(t, []evalCase{
		// 2013-09-01 minus 2013-01-01: 8 months.
		{src: "subtract_months(t, 1356998400000)", want: L(8)},
		{src: "subtract_months(1356998400000, t)", want: L(-8)},
		// 2013-01-31 to 2013-02-28: the last day of February ends the month.
		{src: "subtract_months(1362009600000, 1359590400000)", want: L(1)},
		// 2013-01-31 to 2013-02-27: not yet a month.
		{src: "subtract_months(1361923200000, 1359590400000)", want: L(0)},
		// 2013-01-15T12:00 to 2013-02-15T11:59:59.999: one millisecond short.
		{src: "subtract_months(1360929599999, 1358251200000)", want: L(0)},
		{src: "subtract_months(1360929600000, 1358251200000)", want: L(1)},
		// Negative spans count whole months towards zero.
		{src: "subtract_months(1358251200000, 1360929599999)", want: L(0)},
		// Months are counted on local wall clocks: from 2013-03-01T08:30Z to
		// 2013-04-01T07:45Z is not a month in UTC, but in Los Angeles it is
		// 00:30 PST to 00:45 PDT, one.
		{src: "subtract_months(1364802300000, 1362126600000)", want: L(0)},
		{src: "subtract_months(1364802300000, 1362126600000, 'America/Los_Angeles')", want: L(1)},
		{src: "subtract_months(n, t)", want: NL},
		{src: "subtract_months(t, n)", want: NL},
	})
	if _, err := Compile("subtract_months(x, y, z)"); err == nil {
		t.Error("non-literal time zone accepted")
	}
}

func TestDecodeBase64UTF8(t *testing.T) {
	runCases(t, []evalCase{
		{src: "decode_base64_utf8('aGVsbG8=')", want: S("hello")},
		{src: "decode_base64_utf8('aGVsbG8')", want: S("hello")}, // padding is optional, as in java.util.Base64
		{src: "decode_base64_utf8('w6nDoA==')", want: S("éà")},
		{src: "decode_base64_utf8('')", want: S("")},
		{src: "decode_base64_utf8(n)", want: NS},
		{src: "decode_base64_utf8('/w==')", want: S("\uFFFD")}, // invalid UTF-8 is replaced, as Java's String does
		{src: "decode_base64_utf8('not base64!')", err: "base64"},
	})
}
