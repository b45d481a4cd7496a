package nativebatch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"strata/storage/deep"
	"strata/storage/segment"
)

// A multi-value string row keeps its null elements, distinct from "", as
// Druid's does: [null,"","1"] is three values (Druid's corpus groups such a
// column into a null group and an "" group), [null] alone is null.
func TestMultiValueKeepsNullElements(t *testing.T) {
	data := `{"timestamp":"2022-01-01T00:00:00Z","m":[null,"","1"]}
{"timestamp":"2022-01-01T00:00:01Z","m":[null,"",null]}
{"timestamp":"2022-01-01T00:00:02Z","m":[null]}
{"timestamp":"2022-01-01T00:00:03Z","m":["a","b"]}`
	b := build(t, inlineTask(data, `{"dataSource":"mv","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":[{"type":"string","name":"m","multiValueHandling":"ARRAY"}]},
		"granularitySpec":{"segmentGranularity":"day","rollup":false}}`, ""))
	if len(b.segs) != 1 {
		t.Fatalf("%d segments", len(b.segs))
	}
	var ls deep.LoadSpec
	if err := json.Unmarshal([]byte(b.segs[0].LoadSpec), &ls); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seg")
	if err := b.store.Get(context.Background(), ls, path); err != nil {
		t.Fatal(err)
	}
	s, err := segment.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	col, err := s.Strings("m")
	if err != nil {
		t.Fatal(err)
	}
	offs, ids, err := col.MultiIDs(0, s.NumRows(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range s.NumRows() {
		var vals []string
		for _, id := range ids[offs[r]:offs[r+1]] {
			v, isNull, err := col.Lookup(int(id))
			if err != nil {
				t.Fatal(err)
			}
			if isNull {
				v = "null"
			} else {
				v = strconv.Quote(v)
			}
			vals = append(vals, v)
		}
		got = append(got, "["+strings.Join(vals, ",")+"]")
	}
	want := []string{`[null,"","1"]`, `[null,"",null]`, `[null]`, `["a","b"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}
