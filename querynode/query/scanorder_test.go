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
