package protocol

import (
	"encoding/json"
	"testing"
)

// The JSON shapes are the wire format between versions of Strata: this test
// pins every tag, so a rename shows up here rather than in a mixed cluster.
func TestWireShapes(t *testing.T) {
	tls := "h:8283"
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"server metadata", ServerMetadata{Name: "h:8083", Host: "h:8083", HostAndTLSPort: &tls, MaxSize: 10, Type: "historical", Tier: "hot", Priority: 1},
			`{"name":"h:8083","host":"h:8083","hostAndTlsPort":"h:8283","maxSize":10,"type":"historical","tier":"hot","priority":1}`},
		{"announcement, unchanged", Announcement{Version: "v-1", Unchanged: true},
			`{"server":{"name":"","host":"","hostAndTlsPort":null,"maxSize":0,"type":"","tier":"","priority":0},"currSize":0,"version":"v-1","unchanged":true,"segments":null}`},
		{"announcement, loading", Announcement{Version: "v-2", Loading: true, CurrSize: 5},
			`{"server":{"name":"","host":"","hostAndTlsPort":null,"maxSize":0,"type":"","tier":"","priority":0},"currSize":5,"version":"v-2","loading":true,"segments":null}`},
		{"sub-query", SubQuery{Query: json.RawMessage(`{"queryType":"timeseries"}`), Segments: []SegmentRef{{ID: "s1", Interval: "2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z"}}, TimeoutMs: 300, Finalize: true},
			`{"query":{"queryType":"timeseries"},"segments":[{"id":"s1","interval":"2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z"}],"timeoutMs":300,"finalize":true}`},
		{"sub-query, defaults omitted", SubQuery{Query: json.RawMessage(`{}`), Segments: []SegmentRef{}},
			`{"query":{},"segments":[]}`},
		{"result", SubQueryResult{Partial: json.RawMessage(`[1]`), Missing: []string{"s2"}, Replaced: map[string][]SegmentRef{"rt": {{ID: "p", Interval: "i"}}}, Final: []byte("not on the wire")},
			`{"partial":[1],"missing":["s2"],"replaced":{"rt":[{"id":"p","interval":"i"}]}}`},
		{"result, nothing missing", SubQueryResult{Partial: json.RawMessage(`{}`)},
			`{"partial":{}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}
