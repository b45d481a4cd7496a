package broker

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"strata/interval"
	"strata/protocol"
	"strata/segmeta"
)

func ivs(t *testing.T, list ...string) []interval.Interval {
	t.Helper()
	out := make([]interval.Interval, len(list))
	for i, s := range list {
		iv, err := interval.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = iv
	}
	return out
}

func ivStrings(list []interval.Interval) []string {
	out := make([]string, len(list))
	for i, iv := range list {
		out[i] = iv.String()
	}
	return out
}

// The cases of Druid's CachingClusteredClientFunctionalityTest
// testUncoveredInterval: segments on 2015-01-02, 01-04 and 02-04, limit 3.
func TestAppendUncoveredAsDruid(t *testing.T) {
	covered := ivs(t, "2015-01-02/2015-01-03", "2015-01-04/2015-01-05", "2015-02-04/2015-02-05")
	d := func(s string) string { // "01-01/01-02" → full path form
		a, b, _ := strings.Cut(s, "/")
		iv, _ := interval.Parse("2015-" + a + "/2015-" + b)
		return iv.String()
	}
	for _, c := range []struct {
		query string
		want  []string
		over  bool
	}{
		{"01-02/01-03", nil, false},
		{"01-01/01-03", []string{"01-01/01-02"}, false},
		{"01-01/01-04", []string{"01-01/01-02", "01-03/01-04"}, false},
		{"01-02/01-04", []string{"01-03/01-04"}, false},
		{"01-01/01-30", []string{"01-01/01-02", "01-03/01-04", "01-05/01-30"}, false},
		{"01-02/01-30", []string{"01-03/01-04", "01-05/01-30"}, false},
		{"01-04/01-30", []string{"01-05/01-30"}, false},
		{"01-10/01-30", []string{"01-10/01-30"}, false},
		// Four gaps, limit 3: the first three and the overflow flag.
		{"01-01/02-25", []string{"01-01/01-02", "01-03/01-04", "01-05/02-04"}, true},
	} {
		var want []string
		for _, w := range c.want {
			want = append(want, d(w))
		}
		got, over := appendUncovered(nil, ivs(t, d(c.query)), covered, 3)
		if !slices.Equal(ivStrings(got), want) || over != c.over {
			t.Errorf("%s: got %v overflowed %v, want %v %v", c.query, ivStrings(got), over, want, c.over)
		}
	}
}

func TestAppendUncoveredEdges(t *testing.T) {
	// Overlapping and abutting covers merge; several query intervals share
	// one limit; a limit of 0 reports only the overflow.
	covered := ivs(t, "2020-01-03/2020-01-05", "2020-01-01/2020-01-02", "2020-01-02/2020-01-03T12:00", "2020-01-10/2020-01-20")
	q := ivs(t, "2019-12-31/2020-01-06", "2020-01-08/2020-01-12", "2020-01-15/2020-01-25")
	got, over := appendUncovered(nil, q, covered, -1)
	want := []string{"2019-12-31T00:00:00.000Z/2020-01-01T00:00:00.000Z", "2020-01-05T00:00:00.000Z/2020-01-06T00:00:00.000Z",
		"2020-01-08T00:00:00.000Z/2020-01-10T00:00:00.000Z", "2020-01-20T00:00:00.000Z/2020-01-25T00:00:00.000Z"}
	if !slices.Equal(ivStrings(got), want) || over {
		t.Fatalf("no limit: %v %v", ivStrings(got), over)
	}
	if got, over := appendUncovered(nil, q, covered, 4); len(got) != 4 || over {
		t.Fatalf("limit equal to the count: %v %v", ivStrings(got), over)
	}
	if got, over := appendUncovered(nil, q, covered, 2); !slices.Equal(ivStrings(got), want[:2]) || !over {
		t.Fatalf("limit 2: %v %v", ivStrings(got), over)
	}
	if got, over := appendUncovered(nil, q, covered, 0); len(got) != 0 || !over {
		t.Fatalf("limit 0: %v %v", ivStrings(got), over)
	}
	if got, over := appendUncovered(nil, q, nil, -1); !slices.Equal(ivStrings(got), ivStrings(q)) || over {
		t.Fatalf("nothing covered: %v", ivStrings(got))
	}
}

func TestViewUncovered(t *testing.T) {
	v := newView([]string{"http://a:1"})
	a := v.servers[0]
	day1 := seg(t, "ds", "2020-01-01/2020-01-02", "v1", 0, 1)
	// Day 2 has two core partitions and only one is available: the chunk
	// is incomplete and so invisible.
	day2p0 := seg(t, "ds", "2020-01-02/2020-01-03", "v1", 0, 2)
	// Day 3 is a tombstone: REPLACE found no rows there, so it is covered.
	tomb := seg(t, "ds", "2020-01-03/2020-01-04", "v1", 0, 1)
	tomb.ShardSpec = segmeta.TombstoneShard()
	day5 := seg(t, "ds", "2020-01-05/2020-01-06", "v1", 0, 1)
	other := seg(t, "other", "2020-01-04/2020-01-05", "v1", 0, 1)
	an := ann("a1", day1, day2p0, tomb, day5, other)
	// Day 6 is being ingested: a realtime segment covers it.
	an.Realtime = []*segmeta.DataSegment{seg(t, "ds", "2020-01-06/2020-01-07", "rt", 0, 0)}
	v.apply(a, an, nil)

	q := queryFacts{dataSources: []string{"ds"}, intervals: ivs(t, "2019-12-31T12:00/2020-01-08")}
	got, over := v.uncovered(q, 10)
	want := []string{"2019-12-31T12:00:00.000Z/2020-01-01T00:00:00.000Z", "2020-01-02T00:00:00.000Z/2020-01-03T00:00:00.000Z",
		"2020-01-04T00:00:00.000Z/2020-01-05T00:00:00.000Z", "2020-01-07T00:00:00.000Z/2020-01-08T00:00:00.000Z"}
	if !slices.Equal(ivStrings(got), want) || over {
		t.Fatalf("uncovered: %v %v\nwant %v", ivStrings(got), over, want)
	}
	if got, over := v.uncovered(q, 2); !slices.Equal(ivStrings(got), want[:2]) || !over {
		t.Fatalf("limit 2: %v %v", ivStrings(got), over)
	}
	// A union lists each member's gaps; "other" covers only day 4.
	u := queryFacts{dataSources: []string{"ds", "other"}, intervals: ivs(t, "2020-01-04/2020-01-06")}
	if got, _ := v.uncovered(u, 10); !slices.Equal(ivStrings(got), []string{"2020-01-04T00:00:00.000Z/2020-01-05T00:00:00.000Z",
		"2020-01-05T00:00:00.000Z/2020-01-06T00:00:00.000Z"}) {
		t.Fatalf("union: %v", ivStrings(got))
	}
	// A datasource without any available segment is uncovered everywhere.
	if got, _ := v.uncovered(queryFacts{dataSources: []string{"none"}, intervals: q.intervals}, 10); !slices.Equal(ivStrings(got), ivStrings(q.intervals)) {
		t.Fatalf("unknown datasource: %v", ivStrings(got))
	}
	// Specific segments: the one not available (day 2, partition 1) is
	// uncovered, the available one is not.
	sp := queryFacts{dataSources: []string{"ds"}, specific: []specificSegment{
		{interval: day1.Interval, version: "v1", partition: 0}, {interval: day2p0.Interval, version: "v1", partition: 1}}}
	if got, _ := v.uncovered(sp, 10); !slices.Equal(ivStrings(got), []string{"2020-01-02T00:00:00.000Z/2020-01-03T00:00:00.000Z"}) {
		t.Fatalf("specific segments: %v", ivStrings(got))
	}
	// Once the second partition arrives, day 2 is covered.
	v.apply(a, ann("a2", day1, day2p0, seg(t, "ds", "2020-01-02/2020-01-03", "v1", 1, 2), tomb, day5, other), nil)
	if got, _ := v.uncovered(q, 10); len(got) != 3 || got[1].String() != want[2] {
		t.Fatalf("after day 2 completed: %v", ivStrings(got))
	}
}

func TestResponseContextHeader(t *testing.T) {
	var none *ResponseContext
	if h := none.Header(); h != "{}" {
		t.Fatalf("nil context: %s", h)
	}
	if h := (&ResponseContext{}).Header(); h != "{}" {
		t.Fatalf("empty context: %s", h)
	}
	rc := &ResponseContext{UncoveredIntervals: ivs(t, "2020-01-02/2020-01-03"),
		MissingSegments: []SegmentDescriptor{{Interval: "2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z", Version: "v1", Partition: 2}}}
	want := `{"uncoveredIntervals":["2020-01-02T00:00:00.000Z/2020-01-03T00:00:00.000Z"],"uncoveredIntervalsOverflowed":false,` +
		`"missingSegments":[{"itvl":"2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z","ver":"v1","part":2}]}`
	if h := rc.Header(); h != want {
		t.Fatalf("header:\n%s\nwant\n%s", h, want)
	}
	// Too many missing segments for a header: the list is cut, and the
	// context says it was truncated.
	big := &ResponseContext{}
	for i := range 1000 {
		big.MissingSegments = append(big.MissingSegments, SegmentDescriptor{Interval: "2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z", Version: "v1", Partition: int32(i)})
	}
	h := big.Header()
	var back struct {
		MissingSegments []SegmentDescriptor `json:"missingSegments"`
		Truncated       bool                `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(h), &back); err != nil || len(h) > maxResponseContextChars || !back.Truncated ||
		len(back.MissingSegments) == 0 || back.MissingSegments[0].Partition != 0 {
		t.Fatalf("truncated header (%d chars, %d segments, truncated %v): %v", len(h), len(back.MissingSegments), back.Truncated, err)
	}
}

// A segment no replica has when asked: by default the query fails as
// Druid's does (no partial results); with returnPartialResults it answers
// without it and lists it; with failOnMissingSegments it fails naming it.
func TestSettleLost(t *testing.T) {
	s := seg(t, "ds", "2020-01-01/2020-01-02", "v1", 3, 4)
	u := unit{ref: protocol.SegmentRef{ID: s.ID().String(), Interval: "2020-01-01T06:00:00.000Z/2020-01-02T00:00:00.000Z"}, seg: s}
	b, err := New(Config{Name: "b:1"})
	if err != nil {
		t.Fatal(err)
	}
	lost := []lostSegment{{u: u, err: b.unavailable(u, nil, "h:1 no longer serves it")}}
	err = b.settleLost(lost, &completeness{})
	if e, ok := err.(*Error); !ok || e.Status != 500 || !strings.Contains(e.Message, s.ID().String()) {
		t.Fatalf("default: %v", err)
	}
	c := &completeness{partial: true}
	if err := b.settleLost(lost, c); err != nil || len(c.rc.MissingSegments) != 1 ||
		c.rc.MissingSegments[0] != (SegmentDescriptor{Interval: u.ref.Interval, Version: "v1", Partition: 3}) {
		t.Fatalf("partial: %v %+v", err, c.rc)
	}
	err = b.settleLost(lost, &completeness{partial: true, fail: true})
	e, ok := err.(*Error)
	if !ok || e.Status != 503 || e.ErrorCode != "unavailableSegments" || e.Category != "SERVICE_UNAVAILABLE" ||
		!strings.Contains(e.Message, s.ID().String()) || e.Context["missingSegments"] != s.ID().String() {
		t.Fatalf("failOnMissingSegments: %v", err)
	}
	var body map[string]any
	if json.Unmarshal(e.Body(), &body) != nil || body["error"] != "druidException" || body["context"].(map[string]any)["missingSegments"] != s.ID().String() {
		t.Fatalf("body: %s", e.Body())
	}
}
