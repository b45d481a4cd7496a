package sqlexpr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata/sql"
)

// TestDruidScalarFunctions: Druid's scalar functions from its SQL reference
// (numeric, string, date and time, IP address) that were refused before,
// evaluated over the test row (__time is 2000-01-02T03:04:05Z).
func TestDruidScalarFunctions(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want any
		typ  string
	}{
		{"PI", 3.141592653589793, Double},
		{"PI * 2", 6.283185307179586, Double},
		{"BITWISE_AND(12, 10)", int64(8), Bigint},
		{"BITWISE_OR(x, 8)", int64(15), Bigint},
		{"BITWISE_XOR(x, 2)", int64(5), Bigint},
		{"BITWISE_COMPLEMENT(x)", int64(-8), Bigint},
		{"BITWISE_SHIFT_LEFT(x, 2)", int64(28), Bigint},
		{"BITWISE_SHIFT_RIGHT(x, 1)", int64(3), Bigint},
		{"BITWISE_AND(n, 1)", nil, Bigint},
		{"BITWISE_CONVERT_DOUBLE_TO_LONG_BITS(d)", int64(4612811918334230528), Bigint},
		{"BITWISE_CONVERT_LONG_BITS_TO_DOUBLE(4612811918334230528)", 2.5, Double},
		{"HUMAN_READABLE_BINARY_BYTE_FORMAT(1048576)", "1.00 MiB", Varchar},
		{"HUMAN_READABLE_DECIMAL_BYTE_FORMAT(1048576, 1)", "1.0 MB", Varchar},
		{"HUMAN_READABLE_DECIMAL_FORMAT(x * 1000)", "7.00 K", Varchar},
		{"DECODE_BASE64_UTF8('aGVsbG8=')", "hello", Varchar},
		{"DECODE_BASE64_UTF8(CAST(n AS VARCHAR))", nil, Varchar},
		{"IPV4_MATCH('192.168.1.7', '192.168.0.0/16')", int64(1), Boolean},
		{"IPV4_MATCH(s, '192.168.0.0/16')", int64(0), Boolean},
		{"IPV4_PARSE('192.168.0.1')", int64(3232235521), Bigint},
		{"IPV4_STRINGIFY(3232235521)", "192.168.0.1", Varchar},
		{"IPV6_MATCH('75e9:efa4:29c6:85f6::232c', '75e9:efa4:29c6:85f6::/64')", int64(1), Boolean},
		// TIMESTAMPDIFF counts whole calendar months, as Joda does.
		{"TIMESTAMPDIFF(MONTH, TIMESTAMP '1999-11-02 03:04:05', __time)", int64(2), Bigint},
		{"TIMESTAMPDIFF(MONTH, TIMESTAMP '1999-11-02 03:04:06', __time)", int64(1), Bigint},
		{"TIMESTAMPDIFF(MONTH, __time, TIMESTAMP '1999-11-02 03:04:06')", int64(-1), Bigint},
		{"TIMESTAMPDIFF(QUARTER, TIMESTAMP '1999-01-01 00:00:00', __time)", int64(4), Bigint},
		{"TIMESTAMPDIFF(YEAR, TIMESTAMP '1990-01-03 00:00:00', __time)", int64(9), Bigint},
		{"TIMESTAMPDIFF(YEAR, __time, TIMESTAMP '1990-01-03 00:00:00')", int64(-9), Bigint},
		// Druid floors multi-year periods from 1970 (PeriodGranularity), so
		// 2000 is in the millennium that began then.
		{"DATE_TRUNC('millennium', __time)", int64(0), Timestamp},
		{"DATE_TRUNC('milliseconds', __time)", int64(946782245000), Timestamp},
	} {
		got, typ := eval(t, &Env{}, c.sql)
		if fmt.Sprint(got) != fmt.Sprint(c.want) || typ != c.typ {
			t.Errorf("%s = %v (%s), want %v (%s)", c.sql, got, typ, c.want, c.typ)
		}
	}
}

// TestTimestampDiffMonthsInZone: TIMESTAMPDIFF counts months on the query
// time zone's calendar. From 1999-10-02T03:00Z to 2000-01-02T03:04:05Z is
// three months in UTC; in Los Angeles it is from 1999-10-01T20:00 PDT to
// 2000-01-01T19:04:05 PST, short of three by the hour summer time added.
func TestTimestampDiffMonthsInZone(t *testing.T) {
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err) // the zone database is embedded (time/tzdata), so this cannot skip
	}
	const q = "TIMESTAMPDIFF(MONTH, MILLIS_TO_TIMESTAMP(938833200000), __time)"
	if got, _ := eval(t, &Env{}, q); got != int64(3) {
		t.Errorf("in UTC: %v, want 3", got)
	}
	env := &Env{TZ: loc, TZName: "America/Los_Angeles"}
	if got, _ := eval(t, env, q); got != int64(2) {
		t.Errorf("in Los Angeles: %v, want 2", got)
	}
}

// TestLocalTimestamp: LOCALTIMESTAMP is CURRENT_TIMESTAMP, the statement's
// one instant, as in Druid.
func TestLocalTimestamp(t *testing.T) {
	env := &Env{Now: 946782245000}
	for _, q := range []string{"LOCALTIMESTAMP", "LOCALTIMESTAMP()"} {
		if got, typ := eval(t, env, q); got != int64(946782245000) || typ != Timestamp {
			t.Errorf("%s = %v (%s)", q, got, typ)
		}
	}
}

// TestScalarFunctionArgumentTypes: Druid refuses a string where the bitwise
// and human-readable functions take numbers, and anything but timestamps in
// TIMESTAMPDIFF, at planning (400), where the native functions would
// answer null or 0 for every row.
func TestScalarFunctionArgumentTypes(t *testing.T) {
	for _, q := range []string{
		"BITWISE_AND(s, 1)",
		"BITWISE_COMPLEMENT(s)",
		"HUMAN_READABLE_DECIMAL_FORMAT(s)",
		"HUMAN_READABLE_BINARY_BYTE_FORMAT(x, s)",
		"TIMESTAMPDIFF(MONTH, s, __time)",
		"TIMESTAMPDIFF(DAY, __time, x)",
		"TIMESTAMPADD(DAY, 1, s)",
		"TIMESTAMPADD(DAY, s, __time)",
		"IPV4_STRINGIFY(d)",
		"IPV4_PARSE(x > 1)",
		"IPV4_MATCH(d, '10.0.0.0/8')",
		"IPV4_MATCH(x, 8)",
	} {
		e, err := sql.ParseExpr(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_, err = Translate(rowScope{}, &Env{}, e)
		var se *Error
		if !errors.As(err, &se) || se.Category != CategoryInvalidInput || !strings.Contains(err.Error(), "Cannot apply") {
			t.Errorf("%s: %v, want a 'Cannot apply' invalid input error", q, err)
		}
	}
	for _, q := range []string{"BITWISE_AND(x, NULL)", "HUMAN_READABLE_DECIMAL_FORMAT(d, 1)", "TIMESTAMPDIFF(DAY, NULL, __time)", "TIMESTAMPADD(HOUR, x, __time)",
		"IPV4_STRINGIFY(x)", "IPV4_PARSE(s)", "IPV4_MATCH(s, '10.0.0.0/8')", "IPV4_MATCH(x, '10.0.0.0/8')"} {
		e, _ := sql.ParseExpr(q)
		if _, err := Translate(rowScope{}, &Env{}, e); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
