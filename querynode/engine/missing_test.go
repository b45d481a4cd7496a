package engine

import (
	"context"
	"strings"
	"testing"

	"strata/querynode/query"
)

// Aggregators over a column the segment lacks, or over a string column, in
// queries that group (groupBy with dimensions, topN) must answer, not crash.
func TestAggregatorsOverMissingOrStringColumns(t *testing.T) {
	segs := buildSegments(t, genRows(3000, 2, 21), 500)
	for _, q := range []string{
		`{"queryType":"groupBy","dataSource":"test","intervals":["2000/2100"],"granularity":"all","dimensions":["channel"],"aggregations":[{"type":"longSum","name":"s","fieldName":"nope"}]}`,
		`{"queryType":"groupBy","dataSource":"test","intervals":["2000/2100"],"granularity":"day","dimensions":["channel"],"aggregations":[{"type":"doubleMax","name":"s","fieldName":"nope"},{"type":"longMin","name":"m","fieldName":"page"}]}`,
		`{"queryType":"groupBy","dataSource":"test","intervals":["2000/2100"],"granularity":"all","dimensions":["page"],"aggregations":[{"type":"longSum","name":"s","fieldName":"page"}]}`,
		`{"queryType":"topN","dataSource":"test","intervals":["2000/2100"],"granularity":"all","dimension":"channel","metric":"s","threshold":3,"aggregations":[{"type":"longSum","name":"s","fieldName":"nope"}]}`,
		`{"queryType":"topN","dataSource":"test","intervals":["2000/2100"],"granularity":"all","dimension":"page","metric":"s","threshold":3,"aggregations":[{"type":"doubleSum","name":"s","fieldName":"user"}]}`,
		`{"queryType":"timeseries","dataSource":"test","intervals":["2000/2100"],"granularity":"all","aggregations":[{"type":"longSum","name":"s","fieldName":"nope"}]}`,
	} {
		out, err := runRaw(segs, q)
		if err != nil || !strings.HasPrefix(string(out), "[") {
			t.Errorf("%s: %v %.200s", q, err, out)
		}
	}
}

// A missing column reads as null, so sum/min/max over it are null, not 0
// (QUERY-SEMANTICS §2); count still counts the rows.
func TestAggregatorOverMissingColumnIsNull(t *testing.T) {
	segs := buildSegments(t, genRows(3000, 2, 21), 500)
	out, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","intervals":["2000/2100"],"granularity":"all",
		"aggregations":[{"type":"longSum","name":"s","fieldName":"nope"},{"type":"doubleMin","name":"d","fieldName":"nope"},{"type":"count","name":"c"}]}`)
	if err != nil || !strings.Contains(string(out), `"s":null,"d":null,"c":3000`) {
		t.Fatalf("%v %s", err, out)
	}
}

// A panic in a segment's work becomes the query's error; on its worker
// goroutine it would otherwise end the process.
func TestSegmentPanicBecomesError(t *testing.T) {
	q, err := query.Parse([]byte(`{"queryType":"timeseries","dataSource":"test","intervals":["2000/2100"],"granularity":"all","aggregations":[{"type":"count","name":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{}).runSegmentSafely(context.Background(), q, nil) // a nil segment panics inside
	if err == nil || query.AsError(err).Kind != query.Internal || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("err = %v", err)
	}
}
