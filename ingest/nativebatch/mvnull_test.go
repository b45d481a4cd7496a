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
	got := storedLists(t, b, "m")
	want := []string{`[null,"","1"]`, `[null,"",null]`, `[null]`, `["a","b"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// storedLists reads column col of the one segment built, each row as
// [v1,v2,...] with null elements as null and values quoted.
func storedLists(t *testing.T, b built, col string) []string {
	t.Helper()
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
	sc, err := s.Strings(col)
	if err != nil {
		t.Fatal(err)
	}
	offs, ids, err := sc.MultiIDs(0, s.NumRows(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range s.NumRows() {
		var vals []string
		for _, id := range ids[offs[r]:offs[r+1]] {
			v, isNull, err := sc.Lookup(int(id))
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
	return got
}

// A string dimension's lists are stored as its multiValueHandling says:
// sorted by default (SORTED_ARRAY, nulls first), sorted without repeats
// (SORTED_SET), or as read (ARRAY), as Druid's are.
func TestMultiValueHandling(t *testing.T) {
	data := `{"timestamp":"2022-01-01T00:00:00Z","d":["b","a",null,"b"],"s":["b","a",null,"b",null],"a":["b","a",null,"b"]}`
	b := build(t, inlineTask(data, `{"dataSource":"mv","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":["d",{"type":"string","name":"s","multiValueHandling":"sorted_set"},
			{"type":"string","name":"a","multiValueHandling":"ARRAY"}]},
		"granularitySpec":{"segmentGranularity":"day","rollup":false}}`, ""))
	for col, want := range map[string]string{"d": `[null,"a","b","b"]`, "s": `[null,"a","b"]`, "a": `["b","a",null,"b"]`} {
		if got := storedLists(t, b, col); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %v, want %s", col, got, want)
		}
	}
}
