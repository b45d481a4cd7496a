package granularity

import (
	"encoding/json"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`"day"`, `"FIFTEEN_MINUTE"`, `{"type":"all"}`, `{"type":"none"}`,
		`{"type":"duration","duration":7200000,"origin":"2012-01-01T00:30:00Z"}`,
		`{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`,
		`{"type":"period","period":"P1M15DT1H","timeZone":"Europe/Berlin","origin":"2000-01-31"}`,
		`{"type":"period","period":"PT0.5S","origin":-5}`, `{"type":"period","period":"P1W","timeZone":"+05:30"}`,
		`{"type":"period","period":"P99999Y"}`, `{"type":"duration","duration":"1"}`, `[]`, `{`,
	} {
		f.Add(s, int64(1377910953000))
	}
	f.Fuzz(func(t *testing.T, js string, at int64) {
		g, err := Parse(json.RawMessage(js))
		if err != nil {
			return
		}
		// Keep the instant in the years -9999..9999, where calendar
		// arithmetic is far from the clamped ends of time.
		at %= 315537897600000
		b := g.Bucket(at)
		n := g.Next(b)
		if !g.IsAll() && !(b <= at && at < n) {
			t.Fatalf("%s: %d not in [%d, %d)", js, at, b, n)
		}
		_ = FormatBucket(g, b)
		if _, err := json.Marshal(g.JSON()); err != nil {
			t.Fatalf("%s: JSON: %v", js, err)
		}
	})
}
