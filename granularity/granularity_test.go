package granularity

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"sync"
	"testing"
	"time"

	"strata/interval"
)

func ms(t testing.TB, s string) int64 {
	t.Helper()
	v, err := interval.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func parse(t testing.TB, js string) Granularity {
	t.Helper()
	g, err := Parse(json.RawMessage(js))
	if err != nil {
		t.Fatalf("Parse(%s): %v", js, err)
	}
	return g
}

func TestParseForms(t *testing.T) {
	cases := []struct {
		in   string
		json string
	}{
		{`"all"`, `{"type":"all"}`},
		{`"ALL"`, `{"type":"all"}`},
		{`"none"`, `{"type":"none"}`},
		{`"second"`, `"SECOND"`},
		{`"minute"`, `"MINUTE"`},
		{`"five_minute"`, `"FIVE_MINUTE"`},
		{`"ten_minute"`, `"TEN_MINUTE"`},
		{`"fifteen_minute"`, `"FIFTEEN_MINUTE"`},
		{`"thirty_minute"`, `"THIRTY_MINUTE"`},
		{`"Hour"`, `"HOUR"`},
		{`"six_hour"`, `"SIX_HOUR"`},
		{`"eight_hour"`, `"EIGHT_HOUR"`},
		{`"DAY"`, `"DAY"`},
		{`"week"`, `"WEEK"`},
		{`"month"`, `"MONTH"`},
		{`"quarter"`, `"QUARTER"`},
		{`"year"`, `"YEAR"`},
		{` {"type":"all"} `, `{"type":"all"}`},
		{`{"type":"none"}`, `{"type":"none"}`},
		{`{"type":"duration","duration":7200000}`, `{"duration":7200000,"origin":"1970-01-01T00:00:00.000Z","type":"duration"}`},
		{`{"type":"duration","duration":"7200000","origin":"2012-01-01T00:30:00Z"}`, `{"duration":7200000,"origin":"1970-01-01T00:30:00.000Z","type":"duration"}`},
		{`{"type":"duration","duration":3600000,"origin":1800000}`, `{"duration":3600000,"origin":"1970-01-01T00:30:00.000Z","type":"duration"}`},
		{`{"type":"period","period":"P1D"}`, `"DAY"`},
		{`{"type":"period","period":"P1D","timeZone":"UTC"}`, `"DAY"`},
		{`{"type":"period","period":"P1D","timeZone":null,"origin":null}`, `"DAY"`},
		{`{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`, `{"origin":null,"period":"P1D","timeZone":"America/Los_Angeles","type":"period"}`},
		{`{"type":"period","period":"P2D","origin":"2013-01-01T00:00:00-08:00"}`, `{"origin":"2013-01-01T08:00:00.000Z","period":"P2D","timeZone":"UTC","type":"period"}`},
		{`{"type":"period","period":"PT1H","timeZone":"+05:30"}`, `{"origin":null,"period":"PT1H","timeZone":"+05:30","type":"period"}`},
		{`{"type":"period","period":"P3M","origin":""}`, `"QUARTER"`},
		{`{"type":"period","period":"PT1.5S"}`, `{"origin":null,"period":"PT1.500S","timeZone":"UTC","type":"period"}`},
	}
	for _, c := range cases {
		g := parse(t, c.in)
		if got := String(g); got != c.json {
			t.Errorf("Parse(%s) serializes as %s, want %s", c.in, got, c.json)
		}
		// What we print parses back to an equal granularity.
		back := parse(t, String(g))
		if !Equal(back, g) {
			t.Errorf("Parse(%s) does not round trip: %s", c.in, String(back))
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, in := range []string{
		``, `null`, `"hourly"`, `""`, `"P1D"`, `3600000`, `["day"]`, `{`, `{}`, `{"type":"minute"}`,
		`{"type":"Period","period":"P1D"}`, `{"type":"period"}`, `{"type":"period","period":"P1X"}`,
		`{"type":"period","period":"PT0S"}`, `{"type":"period","period":"P-1D"}`, `{"type":"period","period":"P1DT-1H"}`,
		`{"type":"period","period":"P1D","timeZone":"Mars/Base"}`, `{"type":"period","period":"P1D","origin":"yesterday"}`,
		`{"type":"period","period":"P1D","origin":true}`, `{"type":"duration"}`, `{"type":"duration","duration":0}`,
		`{"type":"duration","duration":-5}`, `{"type":"duration","duration":"abc"}`, `{"type":"duration","duration":1.5}`,
		`{"type":"duration","duration":1000,"origin":"x"}`, `{"type":5}`, `{"type":"period","period":5}`,
	} {
		if g, err := Parse(json.RawMessage(in)); err == nil {
			t.Errorf("Parse(%s) = %s, want error", in, String(g))
		}
	}
	if _, err := FromName("fortnight"); err == nil {
		t.Error("FromName accepted an unknown name")
	}
}

type bucketCase struct {
	g          string // JSON
	at         string
	start, end string // printed with FormatBucket
}

func checkBuckets(t *testing.T, cases []bucketCase) {
	t.Helper()
	for _, c := range cases {
		g := parse(t, c.g)
		at := ms(t, c.at)
		b := g.Bucket(at)
		n := g.Next(b)
		if got := FormatBucket(g, b); got != c.start {
			t.Errorf("%s Bucket(%s) = %s, want %s", c.g, c.at, got, c.start)
		}
		if got := FormatBucket(g, n); got != c.end {
			t.Errorf("%s Next(Bucket(%s)) = %s, want %s", c.g, c.at, got, c.end)
		}
	}
}

func TestBucketSimple(t *testing.T) {
	checkBuckets(t, []bucketCase{
		{`"second"`, "2013-08-31T01:02:33.456Z", "2013-08-31T01:02:33.000Z", "2013-08-31T01:02:34.000Z"},
		{`"minute"`, "2013-08-31T01:02:33Z", "2013-08-31T01:02:00.000Z", "2013-08-31T01:03:00.000Z"},
		{`"five_minute"`, "2013-08-31T01:04:59Z", "2013-08-31T01:00:00.000Z", "2013-08-31T01:05:00.000Z"},
		{`"ten_minute"`, "2013-08-31T01:19:59Z", "2013-08-31T01:10:00.000Z", "2013-08-31T01:20:00.000Z"},
		{`"fifteen_minute"`, "2013-08-31T01:44:00Z", "2013-08-31T01:30:00.000Z", "2013-08-31T01:45:00.000Z"},
		{`"thirty_minute"`, "2013-08-31T01:44:00Z", "2013-08-31T01:30:00.000Z", "2013-08-31T02:00:00.000Z"},
		{`"hour"`, "2013-08-31T01:02:33Z", "2013-08-31T01:00:00.000Z", "2013-08-31T02:00:00.000Z"},
		{`"six_hour"`, "2013-08-31T13:02:33Z", "2013-08-31T12:00:00.000Z", "2013-08-31T18:00:00.000Z"},
		{`"eight_hour"`, "2013-08-31T23:59:59Z", "2013-08-31T16:00:00.000Z", "2013-09-01T00:00:00.000Z"},
		{`"day"`, "2013-08-31T23:59:59.999Z", "2013-08-31T00:00:00.000Z", "2013-09-01T00:00:00.000Z"},
		{`"week"`, "2013-08-31T12:00:00Z", "2013-08-26T00:00:00.000Z", "2013-09-02T00:00:00.000Z"}, // Saturday -> Monday
		{`"week"`, "2013-09-02T00:00:00Z", "2013-09-02T00:00:00.000Z", "2013-09-09T00:00:00.000Z"},
		{`"month"`, "2013-08-31T12:00:00Z", "2013-08-01T00:00:00.000Z", "2013-09-01T00:00:00.000Z"},
		{`"month"`, "2012-02-29T12:00:00Z", "2012-02-01T00:00:00.000Z", "2012-03-01T00:00:00.000Z"},
		{`"quarter"`, "2013-08-31T12:00:00Z", "2013-07-01T00:00:00.000Z", "2013-10-01T00:00:00.000Z"},
		{`"quarter"`, "2013-03-31T23:59:59.999Z", "2013-01-01T00:00:00.000Z", "2013-04-01T00:00:00.000Z"},
		{`"year"`, "2013-08-31T12:00:00Z", "2013-01-01T00:00:00.000Z", "2014-01-01T00:00:00.000Z"},
		{`"none"`, "2013-08-31T12:00:00.123Z", "2013-08-31T12:00:00.123Z", "2013-08-31T12:00:00.124Z"},
	})
	if b := All.Bucket(12345); b != interval.MinInstant || All.Next(b) != interval.MaxInstant {
		t.Error("all must be one bucket spanning eternity")
	}
}

func TestBucketBeforeEpoch(t *testing.T) {
	checkBuckets(t, []bucketCase{
		{`"second"`, "1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.000Z", "1970-01-01T00:00:00.000Z"},
		{`"hour"`, "1969-12-31T23:30:00Z", "1969-12-31T23:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`"six_hour"`, "1969-12-31T23:00:00Z", "1969-12-31T18:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`"eight_hour"`, "1969-12-31T01:00:00Z", "1969-12-31T00:00:00.000Z", "1969-12-31T08:00:00.000Z"},
		{`"day"`, "1969-12-31T12:00:00Z", "1969-12-31T00:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`"week"`, "1969-12-31T12:00:00Z", "1969-12-29T00:00:00.000Z", "1970-01-05T00:00:00.000Z"},
		{`"week"`, "1969-12-28T12:00:00Z", "1969-12-22T00:00:00.000Z", "1969-12-29T00:00:00.000Z"},
		{`"month"`, "1969-12-15T00:00:00Z", "1969-12-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`"quarter"`, "1969-11-15T00:00:00Z", "1969-10-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`"quarter"`, "1969-09-30T23:59:59.999Z", "1969-07-01T00:00:00.000Z", "1969-10-01T00:00:00.000Z"},
		{`"year"`, "1969-06-01T00:00:00Z", "1969-01-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`"year"`, "-0500-06-01T00:00:00Z", "-0500-01-01T00:00:00.000Z", "-0499-01-01T00:00:00.000Z"},
		{`"month"`, "0000-02-29T10:00:00Z", "0000-02-01T00:00:00.000Z", "0000-03-01T00:00:00.000Z"},
		{`{"type":"duration","duration":7200000,"origin":"1970-01-01T00:30:00Z"}`, "1969-12-31T23:00:00Z", "1969-12-31T22:30:00.000Z", "1970-01-01T00:30:00.000Z"},
		{`{"type":"period","period":"PT1H","origin":"1970-01-01T00:00:00Z"}`, "1969-12-31T23:30:00Z", "1969-12-31T23:00:00.000Z", "1970-01-01T00:00:00.000Z"},
		{`{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`, "1969-12-31T12:00:00Z", "1969-12-31T00:00:00.000-08:00", "1970-01-01T00:00:00.000-08:00"},
		{`{"type":"period","period":"P1M","timeZone":"America/Los_Angeles"}`, "1969-12-01T07:00:00Z", "1969-11-01T00:00:00.000-08:00", "1969-12-01T00:00:00.000-08:00"},
	})
}

func TestBucketLosAngelesDST(t *testing.T) {
	const la = `"timeZone":"America/Los_Angeles"`
	day := `{"type":"period","period":"P1D",` + la + `}`
	hour := `{"type":"period","period":"PT1H",` + la + `}`
	checkBuckets(t, []bucketCase{
		// Spring forward 2013-03-10: a 23-hour day.
		{day, "2013-03-10T12:00:00-07:00", "2013-03-10T00:00:00.000-08:00", "2013-03-11T00:00:00.000-07:00"},
		{day, "2013-03-10T01:59:59.999-08:00", "2013-03-10T00:00:00.000-08:00", "2013-03-11T00:00:00.000-07:00"},
		{day, "2013-03-09T23:59:59.999-08:00", "2013-03-09T00:00:00.000-08:00", "2013-03-10T00:00:00.000-08:00"},
		// Fall back 2013-11-03: a 25-hour day.
		{day, "2013-11-03T23:00:00-08:00", "2013-11-03T00:00:00.000-07:00", "2013-11-04T00:00:00.000-08:00"},
		{day, "2013-11-03T01:30:00-08:00", "2013-11-03T00:00:00.000-07:00", "2013-11-04T00:00:00.000-08:00"},
		// Hours around the transitions.
		{hour, "2013-03-10T01:30:00-08:00", "2013-03-10T01:00:00.000-08:00", "2013-03-10T03:00:00.000-07:00"},
		{hour, "2013-03-10T03:30:00-07:00", "2013-03-10T03:00:00.000-07:00", "2013-03-10T04:00:00.000-07:00"},
		{hour, "2013-11-03T01:30:00-07:00", "2013-11-03T01:00:00.000-07:00", "2013-11-03T01:00:00.000-08:00"},
		{hour, "2013-11-03T01:30:00-08:00", "2013-11-03T01:00:00.000-08:00", "2013-11-03T02:00:00.000-08:00"},
		// Weeks start on local Monday, months on the local 1st.
		{`{"type":"period","period":"P1W",` + la + `}`, "2013-03-10T12:00:00-07:00", "2013-03-04T00:00:00.000-08:00", "2013-03-11T00:00:00.000-07:00"},
		{`{"type":"period","period":"P1M",` + la + `}`, "2013-03-31T23:00:00-07:00", "2013-03-01T00:00:00.000-08:00", "2013-04-01T00:00:00.000-07:00"},
		{`{"type":"period","period":"P1M",` + la + `}`, "2013-04-01T06:59:59.999Z", "2013-03-01T00:00:00.000-08:00", "2013-04-01T00:00:00.000-07:00"},
		{`{"type":"period","period":"P3M",` + la + `}`, "2013-08-31T12:00:00Z", "2013-07-01T00:00:00.000-07:00", "2013-10-01T00:00:00.000-07:00"},
		{`{"type":"period","period":"P1Y",` + la + `}`, "2014-01-01T07:59:59Z", "2013-01-01T00:00:00.000-08:00", "2014-01-01T00:00:00.000-08:00"},
		// PT6H counts exact hours from 1970-01-01T00:00-08:00, so in summer
		// the buckets start at 01:00, 07:00, ... local time.
		{`{"type":"period","period":"PT6H",` + la + `}`, "2013-08-31T05:00:00-07:00", "2013-08-31T01:00:00.000-07:00", "2013-08-31T07:00:00.000-07:00"},
		{`{"type":"period","period":"PT6H",` + la + `}`, "2013-01-31T05:00:00-08:00", "2013-01-31T00:00:00.000-08:00", "2013-01-31T06:00:00.000-08:00"},
		// P2D counts local days from the local epoch.
		{`{"type":"period","period":"P2D",` + la + `}`, "2013-03-10T12:00:00-07:00", "2013-03-10T00:00:00.000-08:00", "2013-03-12T00:00:00.000-07:00"},
		{`{"type":"period","period":"P2D",` + la + `}`, "2013-03-09T12:00:00-08:00", "2013-03-08T00:00:00.000-08:00", "2013-03-10T00:00:00.000-08:00"},
	})
}

func TestBucketOtherZones(t *testing.T) {
	checkBuckets(t, []bucketCase{
		// Half-hour offset: local hours are :30 in UTC.
		{`{"type":"period","period":"PT1H","timeZone":"Asia/Kolkata"}`, "2013-08-31T01:40:00Z", "2013-08-31T07:00:00.000+05:30", "2013-08-31T08:00:00.000+05:30"},
		{`{"type":"period","period":"P1D","timeZone":"Asia/Kolkata"}`, "2013-08-31T20:00:00Z", "2013-09-01T00:00:00.000+05:30", "2013-09-02T00:00:00.000+05:30"},
		// Nepal moved from +05:30 to +05:45 in 1986; hours follow the local clock.
		{`{"type":"period","period":"PT1H","timeZone":"Asia/Kathmandu"}`, "2013-08-31T01:20:00Z", "2013-08-31T07:00:00.000+05:45", "2013-08-31T08:00:00.000+05:45"},
		{`{"type":"period","period":"P1D","timeZone":"+05:30"}`, "2013-08-31T20:00:00Z", "2013-09-01T00:00:00.000+05:30", "2013-09-02T00:00:00.000+05:30"},
		{`{"type":"period","period":"P1W","timeZone":"-08:00"}`, "2013-09-02T07:59:59Z", "2013-08-26T00:00:00.000-08:00", "2013-09-02T00:00:00.000-08:00"},
		// Europe/Berlin spring forward at 02:00 local.
		{`{"type":"period","period":"P1D","timeZone":"Europe/Berlin"}`, "2013-03-31T12:00:00Z", "2013-03-31T00:00:00.000+01:00", "2013-04-01T00:00:00.000+02:00"},
		// America/Sao_Paulo 2018-11-04: midnight did not exist, the day starts at 01:00.
		{`{"type":"period","period":"P1D","timeZone":"America/Sao_Paulo"}`, "2018-11-04T12:00:00Z", "2018-11-04T01:00:00.000-02:00", "2018-11-05T00:00:00.000-02:00"},
		{`{"type":"period","period":"P1D","timeZone":"America/Sao_Paulo"}`, "2018-11-03T12:00:00Z", "2018-11-03T00:00:00.000-03:00", "2018-11-04T01:00:00.000-02:00"},
	})
}

func TestBucketOrigins(t *testing.T) {
	checkBuckets(t, []bucketCase{
		{`{"type":"duration","duration":7200000,"origin":"2012-01-01T00:30:00Z"}`, "2013-08-31T01:00:00Z", "2013-08-31T00:30:00.000Z", "2013-08-31T02:30:00.000Z"},
		{`{"type":"duration","duration":86400000,"origin":"2013-01-01T12:00:00Z"}`, "2013-08-31T01:00:00Z", "2013-08-30T12:00:00.000Z", "2013-08-31T12:00:00.000Z"},
		{`{"type":"duration","duration":1000,"origin":"1969-12-31T23:59:59.250Z"}`, "1969-12-31T00:00:00.100Z", "1969-12-30T23:59:59.250Z", "1969-12-31T00:00:00.250Z"},
		{`{"type":"period","period":"P1D","origin":"2012-01-01T12:00:00Z"}`, "2013-08-31T01:00:00Z", "2013-08-30T12:00:00.000Z", "2013-08-31T12:00:00.000Z"},
		{`{"type":"period","period":"P2D","origin":"2013-08-30T00:00:00Z"}`, "2013-08-29T01:00:00Z", "2013-08-28T00:00:00.000Z", "2013-08-30T00:00:00.000Z"},
		{`{"type":"period","period":"P1W","origin":"2013-09-01T00:00:00Z"}`, "2013-08-31T00:00:00Z", "2013-08-25T00:00:00.000Z", "2013-09-01T00:00:00.000Z"}, // Sunday weeks
		{`{"type":"period","period":"P2W"}`, "2013-08-31T00:00:00Z", "2013-08-29T00:00:00.000Z", "2013-09-12T00:00:00.000Z"},                                 // Thursdays, from the epoch
		// Month multiples from an origin on the 31st clamp to month ends.
		{`{"type":"period","period":"P1M","origin":"2013-01-31T00:00:00Z"}`, "2013-03-01T00:00:00Z", "2013-02-28T00:00:00.000Z", "2013-03-31T00:00:00.000Z"},
		{`{"type":"period","period":"P1M","origin":"2013-01-31T00:00:00Z"}`, "2013-04-30T12:00:00Z", "2013-04-30T00:00:00.000Z", "2013-05-31T00:00:00.000Z"},
		{`{"type":"period","period":"P1M","origin":"2013-01-31T00:00:00Z"}`, "2012-12-31T00:00:00Z", "2012-12-31T00:00:00.000Z", "2013-01-31T00:00:00.000Z"},
		{`{"type":"period","period":"P1M","origin":"2013-01-31T00:00:00Z"}`, "2012-12-30T00:00:00Z", "2012-11-30T00:00:00.000Z", "2012-12-31T00:00:00.000Z"},
		{`{"type":"period","period":"P1Y","origin":"2000-07-01T00:00:00Z"}`, "2013-03-01T00:00:00Z", "2012-07-01T00:00:00.000Z", "2013-07-01T00:00:00.000Z"},
		{`{"type":"period","period":"P1M","timeZone":"America/Los_Angeles","origin":"2013-01-15T00:00:00-08:00"}`, "2013-03-20T00:00:00Z", "2013-03-15T00:00:00.000-07:00", "2013-04-15T00:00:00.000-07:00"},
		{`{"type":"period","period":"PT1H","origin":"2013-01-01T00:15:00Z"}`, "1969-12-31T23:10:00Z", "1969-12-31T22:15:00.000Z", "1969-12-31T23:15:00.000Z"},
		// Compound periods.
		{`{"type":"period","period":"PT1H30M"}`, "1970-01-01T04:00:00Z", "1970-01-01T03:00:00.000Z", "1970-01-01T04:30:00.000Z"},
		{`{"type":"period","period":"P1DT12H"}`, "1970-01-03T00:00:00Z", "1970-01-02T12:00:00.000Z", "1970-01-04T00:00:00.000Z"},
		{`{"type":"period","period":"P1M15D"}`, "1970-02-20T00:00:00Z", "1970-02-16T00:00:00.000Z", "1970-03-31T00:00:00.000Z"},
		{`{"type":"period","period":"P1DT1H","timeZone":"America/Los_Angeles"}`, "1970-01-03T10:00:00Z", "1970-01-03T02:00:00.000-08:00", "1970-01-04T03:00:00.000-08:00"},
	})
}

// TestBucketInvariants checks, for many granularities and instants, that
// each instant lies in [Bucket, Next) and buckets tile the time line.
func TestBucketInvariants(t *testing.T) {
	specs := []string{
		`"second"`, `"minute"`, `"fifteen_minute"`, `"hour"`, `"six_hour"`, `"day"`, `"week"`, `"month"`, `"quarter"`, `"year"`,
		`{"type":"duration","duration":7200000,"origin":"2012-01-01T00:30:00Z"}`,
		`{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"PT1H","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"PT6H","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"P1W","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"P1M","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"P3M","timeZone":"Europe/Berlin","origin":"2000-02-29T00:00:00Z"}`,
		`{"type":"period","period":"P2D","timeZone":"Australia/Lord_Howe"}`,
		`{"type":"period","period":"P1D","timeZone":"America/Sao_Paulo"}`,
		`{"type":"period","period":"P1DT1H","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"P1M","origin":"2013-01-31T00:00:00Z"}`,
		`{"type":"period","period":"P1Y2M","origin":"1999-12-31T23:00:00Z"}`,
		`{"type":"period","period":"PT1M","timeZone":"Asia/Kathmandu"}`,
		`{"type":"period","period":"PT1S","timeZone":"America/Los_Angeles"}`,
	}
	r := rand.New(rand.NewSource(3))
	lo, hi := ms(t, "1900-01-01"), ms(t, "2100-01-01")
	for _, s := range specs {
		g := parse(t, s)
		for i := 0; i < 3000; i++ {
			at := lo + r.Int63n(hi-lo)
			if i%3 == 0 {
				at = ms(t, "2013-03-10T10:00:00Z") + r.Int63n(3*86400000) - 86400000 // near a DST change
			}
			b := g.Bucket(at)
			n := g.Next(b)
			if !(b <= at && at < n) {
				t.Fatalf("%s: %s not in [%s, %s)", s, interval.FormatMillis(at), interval.FormatMillis(b), interval.FormatMillis(n))
			}
			if g.Bucket(b) != b || g.Bucket(n-1) != b || g.Bucket(n) != n {
				t.Fatalf("%s: buckets around %s do not tile: Bucket(%s)=%s Bucket(next-1)=%s Bucket(next)=%s",
					s, interval.FormatMillis(at), interval.FormatMillis(b), interval.FormatMillis(g.Bucket(b)),
					interval.FormatMillis(g.Bucket(n-1)), interval.FormatMillis(g.Bucket(n)))
			}
		}
	}
}

func TestBucketExtremes(t *testing.T) {
	for _, g := range append(standard, parse(t, `{"type":"period","period":"P1M","timeZone":"America/Los_Angeles"}`),
		parse(t, `{"type":"period","period":"P5D","timeZone":"America/Los_Angeles"}`),
		parse(t, `{"type":"duration","duration":9223372036854775807}`), None, All) {
		for _, at := range []int64{interval.MinInstant, interval.MaxInstant, -1 << 63, 1<<63 - 1} {
			b := g.Bucket(at)
			_ = g.Next(b)
			if b > max(at, interval.MinInstant) && !g.IsAll() {
				t.Errorf("%s: Bucket(%d) = %d is after the instant", String(g), at, b)
			}
		}
	}
}

func TestBuckets(t *testing.T) {
	iv, err := interval.Parse("2013-08-30T12:00:00Z/2013-09-02T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	format := func(g Granularity, bs []int64) []string {
		var out []string
		for _, b := range bs {
			out = append(out, FormatBucket(g, b))
		}
		return out
	}
	cases := []struct {
		g    Granularity
		want []string
	}{
		{Day, []string{"2013-08-30T00:00:00.000Z", "2013-08-31T00:00:00.000Z", "2013-09-01T00:00:00.000Z"}},
		{All, []string{"2013-08-30T12:00:00.000Z"}},
		{Month, []string{"2013-08-01T00:00:00.000Z", "2013-09-01T00:00:00.000Z"}},
		{parse(t, `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`),
			[]string{"2013-08-30T00:00:00.000-07:00", "2013-08-31T00:00:00.000-07:00", "2013-09-01T00:00:00.000-07:00"}},
	}
	for _, c := range cases {
		if got := format(c.g, Buckets(c.g, iv)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Buckets(%s) = %v, want %v", String(c.g), got, c.want)
		}
	}
	if n := len(Buckets(Hour, iv)); n != 60 {
		t.Errorf("hour buckets = %d, want 60", n)
	}
	if got := Buckets(Day, interval.Interval{Start: 5, End: 5}); len(got) != 0 {
		t.Errorf("empty interval gave %v", got)
	}
	if got := CountBuckets(None, iv, 1000); got != 1000 {
		t.Errorf("CountBuckets limit = %d", got)
	}
	if got := CountBuckets(Day, iv, -1); got != 3 {
		t.Errorf("CountBuckets = %d", got)
	}
	// Early exit from the iterator.
	n := 0
	for range Iter(Hour, iv) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Error("Iter did not stop")
	}
	// Walking to the end of time terminates.
	if got := Buckets(Year, interval.Interval{Start: interval.MaxInstant - 1000, End: 1<<63 - 1}); len(got) != 1 {
		t.Errorf("buckets at the end of time = %d", len(got))
	}
}

func TestCompare(t *testing.T) {
	order := []Granularity{None, Second, Minute, FiveMinute, TenMinute, FifteenMinute, ThirtyMinute, Hour, SixHour,
		EightHour, Day, Week, Month, Quarter, Year, All}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := Compare(order[i], order[j]); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", Name(order[i]), Name(order[j]), got, want)
			}
			if Finer(order[i], order[j]) != (i <= j) {
				t.Errorf("Finer(%s, %s) wrong", Name(order[i]), Name(order[j]))
			}
		}
	}
	la := parse(t, `{"type":"period","period":"PT1H","timeZone":"America/Los_Angeles"}`)
	if !Finer(la, Day) || Finer(Day, la) {
		t.Error("PT1H in Los Angeles should be finer than day")
	}
}

func TestFormatBucketAndNames(t *testing.T) {
	at := ms(t, "2013-08-31T07:00:00Z")
	if got := FormatBucket(Day, Day.Bucket(at)); got != "2013-08-31T00:00:00.000Z" {
		t.Error(got)
	}
	la := parse(t, `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`)
	if got := FormatBucket(la, la.Bucket(at)); got != "2013-08-31T00:00:00.000-07:00" {
		t.Error(got)
	}
	if got := string(AppendBucket([]byte("t="), la, la.Bucket(at))); got != "t=2013-08-31T00:00:00.000-07:00" {
		t.Error(got)
	}
	if la.Zone().String() != "America/Los_Angeles" || Day.Zone() != time.UTC {
		t.Error("Zone")
	}
	if Name(Quarter) != "QUARTER" || Name(All) != "ALL" || Name(None) != "NONE" || Name(la) != "" {
		t.Error("Name")
	}
	if !IsStandard(Hour) || IsStandard(la) || !All.IsAll() || !None.IsNone() || Hour.IsAll() || Hour.IsNone() {
		t.Error("IsStandard/IsAll/IsNone")
	}
	iv := BucketInterval(Month, at)
	if iv.String() != "2013-08-01T00:00:00.000Z/2013-09-01T00:00:00.000Z" {
		t.Error(iv)
	}
	for _, name := range []string{"all", "none", "second", "minute", "five_minute", "ten_minute", "fifteen_minute",
		"thirty_minute", "hour", "six_hour", "eight_hour", "day", "week", "month", "quarter", "year"} {
		g, err := FromName(name)
		if err != nil {
			t.Fatal(err)
		}
		if Name(g) == "" {
			t.Errorf("FromName(%s) has no name", name)
		}
	}
}

func TestClone(t *testing.T) {
	c := Clone(Month)
	if c == Month || !Equal(c, Month) {
		t.Error("Clone of a calendar granularity should be a distinct equal value")
	}
	if Clone(Hour) != Hour || Clone(All) != All {
		t.Error("Clone of a stateless granularity should be itself")
	}
	at := ms(t, "2013-08-31T12:00:00Z")
	if c.Bucket(at) != Month.Bucket(at) {
		t.Error("clone buckets differently")
	}
}

// TestConcurrentBucket exercises the shared bucket cache under the race detector.
func TestConcurrentBucket(t *testing.T) {
	g := parse(t, `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`)
	fresh := parse(t, `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`)
	base := ms(t, "2013-01-01")
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for i := 0; i < 5000; i++ {
				at := base + r.Int63n(365*86400000)
				want, _ := fresh.(*calendarGranularity).localBounds(at)
				if got := g.Bucket(at); got != want {
					errs <- interval.FormatMillis(at)
					return
				}
			}
		}(int64(w))
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("wrong bucket for %s under concurrency", e)
	}
}
