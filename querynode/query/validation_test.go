package query

import (
	"strings"
	"testing"
)

// A scan's "orderBy" on __time is its order; other columns are refused as
// unsupported, as Druid's native scan does.
func TestScanOrderBy(t *testing.T) {
	base := `{"queryType":"scan","dataSource":"x","intervals":["2000/2001"],`
	for body, want := range map[string]string{
		`"orderBy":[{"columnName":"__time","order":"descending"}]}`:                      "descending",
		`"orderBy":[{"columnName":"__time"}]}`:                                           "ascending",
		`"orderBy":[]}`:                                                                  "none",
		`"order":"descending","orderBy":[{"columnName":"__time","order":"descending"}]}`: "descending",
	} {
		q, err := Parse([]byte(base + body))
		if err != nil || q.Scan.Order != want {
			t.Errorf("%s: %v, order %v", body, err, q)
		}
	}
	for body, want := range map[string]string{
		`"orderBy":[{"columnName":"page","order":"ascending"}]}`:                        "Cannot execute query with orderBy",
		`"orderBy":[{"columnName":"__time"},{"columnName":"page"}]}`:                    "Cannot execute query with orderBy",
		`"orderBy":[{"columnName":"__time","order":"sideways"}]}`:                       "unknown orderBy order",
		`"order":"ascending","orderBy":[{"columnName":"__time","order":"descending"}]}`: "disagrees",
		`"orderBy":[5]}`: "columnName",
	} {
		_, err := Parse([]byte(base + body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if _, err := Parse([]byte(base + `"orderBy":[{"columnName":"page"}]}`)); AsError(err).Kind != Unsupported {
		t.Errorf("non-time orderBy: kind %v, want Unsupported", AsError(err).Kind)
	}
}

// Post-aggregators may read dimensions, aggregators and earlier
// post-aggregators only (Druid's "Missing fields" check); a limitSpec
// without a type is Druid's no-op one.
func TestPostAggregatorFieldsAndUntypedLimitSpec(t *testing.T) {
	base := `{"queryType":"groupBy","dataSource":"x","intervals":["2000/2001"],"granularity":"all","dimensions":["d"],
		"aggregations":[{"type":"count","name":"c"}],"postAggregations":`
	ok := []string{
		`[{"type":"fieldAccess","name":"p","fieldName":"c"}]`,
		`[{"type":"fieldAccess","name":"p","fieldName":"d"}]`,
		`[{"type":"fieldAccess","name":"p","fieldName":"c"},{"type":"arithmetic","name":"q","fn":"*","fields":[{"type":"fieldAccess","fieldName":"p"},{"type":"constant","value":2}]}]`,
	}
	for _, pa := range ok {
		if _, err := Parse([]byte(base + pa + `}`)); err != nil {
			t.Errorf("%s: %v", pa, err)
		}
	}
	bad := map[string]string{
		`[{"type":"fieldAccess","name":"p","fieldName":"nope"}]`:                                                                               "Missing fields [nope] for postAggregator [p]",
		`[{"type":"arithmetic","name":"q","fn":"+","fields":[{"type":"fieldAccess","fieldName":"a"},{"type":"fieldAccess","fieldName":"b"}]}]`: "Missing fields [a, b] for postAggregator [q]",
		`[{"type":"fieldAccess","name":"p","fieldName":"q"},{"type":"fieldAccess","name":"q","fieldName":"c"}]`:                                "Missing fields [q] for postAggregator [p]",
	}
	for pa, want := range bad {
		if _, err := Parse([]byte(base + pa + `}`)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", pa, err, want)
		}
	}
	q, err := Parse([]byte(`{"queryType":"groupBy","dataSource":"x","intervals":["2000/2001"],"granularity":"all","dimensions":["d"],
		"limitSpec":{"limit":1,"columns":["d"]}}`))
	if err != nil || q.GroupBy.LimitSpec == nil || q.GroupBy.LimitSpec.Limit != Unlimited || len(q.GroupBy.LimitSpec.Columns) != 0 {
		t.Fatalf("untyped limitSpec: %v %+v", err, q)
	}
}
