package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
)

func TestErrorBodies(t *testing.T) {
	e := Legacy(CodeTimeout, "b:8082", "Query [%s] timed out.", "q1")
	var m map[string]any
	if err := json.Unmarshal(e.Body(), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"error": "Query timeout", "errorClass": "org.apache.druid.query.QueryTimeoutException", "host": "b:8082",
		"errorCode": "legacyQueryException", "persona": "OPERATOR", "category": "TIMEOUT", "errorMessage": "Query [q1] timed out.",
		"context": map[string]any{"host": "b:8082", "errorClass": "org.apache.druid.query.QueryTimeoutException", "legacyErrorCode": "Query timeout"}}
	if fmt.Sprint(m) != fmt.Sprint(want) || e.Status != 504 {
		t.Fatalf("legacy body %s (status %d)", e.Body(), e.Status)
	}
	back := ParseErrorBody(504, e.Body(), "other:1")
	if !reflect.DeepEqual(back, e) {
		t.Fatalf("round trip: %+v != %+v", back, e)
	}
	inv := InvalidInput("bad [%d]", 1)
	if string(inv.Body()) != `{"error":"druidException","errorCode":"invalidInput","persona":"USER","category":"INVALID_INPUT","errorMessage":"bad [1]","context":{}}` || inv.Status != 400 {
		t.Fatalf("structured body %s", inv.Body())
	}
	if back := ParseErrorBody(400, inv.Body(), "h:1"); back.Code != "druidException" || back.Status != 400 || back.Host != "h:1" {
		t.Fatalf("structured round trip: %+v", back)
	}
	for code, status := range map[string]int{CodeJSONParse: 400, CodeCapacity: 429, CodeUnsupported: 501, CodeCancelled: 500, CodeUnknown: 500, "whatever": 500} {
		if e := Legacy(code, "", "x"); e.Status != status {
			t.Errorf("%s: status %d, want %d", code, e.Status, status)
		}
	}
	if e := ParseErrorBody(502, []byte("<html>bad gateway</html>"), "h:1"); e.Code != CodeUnknown || !strings.Contains(e.Message, "502") {
		t.Errorf("non-JSON error body: %+v", e)
	}
	if e := ErrorFrom(errors.New("disk on fire"), "h:1"); e.Code != CodeUnknown || e.Host != "h:1" {
		t.Errorf("foreign error: %+v", e)
	}
}

func FuzzParseErrorBody(f *testing.F) {
	f.Add(Legacy(CodeTimeout, "h", "m").Body())
	f.Add(InvalidInput("x").Body())
	f.Add([]byte(`{"error":null}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e := ParseErrorBody(500, body, "h:1")
		if e == nil || e.Code == "" || e.Status < 400 {
			t.Fatalf("ParseErrorBody(%q) = %+v", body, e)
		}
		var m map[string]any
		if err := json.Unmarshal(e.Body(), &m); err != nil {
			t.Fatalf("body of %+v is not JSON: %v", e, err)
		}
	})
}

func seg(t testing.TB, ds, ivs, version string, part, parts int32) *segmeta.DataSegment {
	iv, err := interval.Parse(ivs)
	if err != nil {
		t.Fatal(err)
	}
	return &segmeta.DataSegment{DataSource: ds, Interval: iv, Version: version, ShardSpec: segmeta.NumberedShard(part, parts), Size: 10,
		Dimensions: []string{"d"}, Metrics: []string{"m"}}
}

func ann(version string, segs ...*segmeta.DataSegment) *protocol.Announcement {
	return &protocol.Announcement{Version: version, Segments: segs, Server: protocol.ServerMetadata{Name: "x", Type: "historical"}}
}

func resolved(v *view, ds, ivs string) []string {
	iv, _ := interval.Parse(ivs)
	var out []string
	for _, u := range v.resolve(queryFacts{dataSources: []string{ds}, intervals: []interval.Interval{iv}}) {
		var hosts []string
		for _, s := range u.servers {
			hosts = append(hosts, s.host)
		}
		out = append(out, u.ref.ID+"@"+u.ref.Interval+"@"+strings.Join(hosts, "+"))
	}
	return out
}

func TestViewTracksServersAndCompleteness(t *testing.T) {
	v := newView([]string{"http://a:1", "http://b:2/"})
	a, b := v.servers[0], v.servers[1]
	p0 := seg(t, "ds", "2020-01-01/2020-01-02", "v1", 0, 2)
	p1 := seg(t, "ds", "2020-01-01/2020-01-02", "v1", 1, 2)
	old := seg(t, "ds", "2020-01-01/2020-01-02", "v0", 0, 1)
	if v.initialized() {
		t.Fatal("initialized before any poll")
	}
	// Only one partition of v1 is available: the chunk is incomplete, so
	// the older complete version serves.
	v.apply(a, ann("a1", old, p0), nil)
	if got := resolved(v, "ds", "2020-01-01/2020-01-02"); !slices.Equal(got, []string{old.ID().String() + "@2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z@a:1"}) {
		t.Fatalf("incomplete v1: %v", got)
	}
	// A server still loading its cache is not known yet.
	loading := ann("b0", p0)
	loading.Loading = true
	v.apply(b, loading, nil)
	if v.initialized() {
		t.Fatal("initialized while a server was still loading its cache")
	}
	v.apply(b, ann("b1", p0, p1), nil)
	if !v.initialized() {
		t.Fatal("not initialized after both servers answered")
	}
	got := resolved(v, "ds", "2020-01-01T12:00/2020-01-03")
	want := []string{p0.ID().String() + "@2020-01-01T12:00:00.000Z/2020-01-02T00:00:00.000Z@a:1+b:2",
		p1.ID().String() + "@2020-01-01T12:00:00.000Z/2020-01-02T00:00:00.000Z@b:2"}
	if !slices.Equal(got, want) {
		t.Fatalf("complete v1:\n%v\nwant\n%v", got, want)
	}
	// "unchanged" keeps the set; a failed poll empties the server.
	v.apply(b, &protocol.Announcement{Version: "b1", Unchanged: true}, nil)
	if got := resolved(v, "ds", "2020-01-01/2020-01-02"); len(got) != 2 {
		t.Fatalf("after unchanged: %v", got)
	}
	v.apply(b, nil, errors.New("connection refused"))
	if got := resolved(v, "ds", "2020-01-01/2020-01-02"); len(got) != 1 || !strings.HasPrefix(got[0], old.ID().String()) {
		t.Fatalf("after b went down: %v", got)
	}
	if len(v.entries) != 2 || v.index.Len() != 2 {
		t.Fatalf("entries %d, index %d; want 2 each", len(v.entries), v.index.Len())
	}
	v.apply(a, ann("a2"), nil)
	if len(v.entries) != 0 || v.index.Len() != 0 || len(v.dataSources()) != 0 {
		t.Fatal("segments left after every server dropped them")
	}
}

func TestQueryIDsAreUUIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewUUID()
		if len(id) != 36 || id[14] != '4' || strings.Count(id, "-") != 4 || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

// BenchmarkResolve measures planning a query over a year of hourly
// segments held by two servers.
func BenchmarkResolve(b *testing.B) {
	v := newView([]string{"http://a:1", "http://b:2"})
	var segs []*segmeta.DataSegment
	start, _ := interval.ParseTime("2020-01-01T00:00:00Z")
	for h := range int64(24 * 365) {
		s := &segmeta.DataSegment{DataSource: "ds", Interval: interval.Interval{Start: start + h*3600_000, End: start + (h+1)*3600_000},
			Version: "v1", ShardSpec: segmeta.NumberedShard(0, 1), Size: 1}
		segs = append(segs, s)
	}
	v.apply(v.servers[0], ann("a", segs...), nil)
	v.apply(v.servers[1], ann("b", segs...), nil)
	iv, _ := interval.Parse("2020-03-01/2020-09-01")
	f := queryFacts{dataSources: []string{"ds"}, intervals: []interval.Interval{iv}}
	b.ReportAllocs()
	for b.Loop() {
		if len(v.resolve(f)) != 24*184 {
			b.Fatal("wrong unit count")
		}
	}
}
