package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"strata/interval"
	"strata/querynode/query"
	"strata/storage/segment"
)

// A scan returns a multi-value row's null elements as null, not "" (Druid:
// [null,"","1"]), also after the partial result crosses the wire from a
// data server to the broker.
func TestScanMultiValueNullElements(t *testing.T) {
	spec := segment.Spec{
		Fields:     []segment.Field{{Name: "m", Kind: segment.KindString}},
		Dimensions: []segment.Dimension{{Name: "m", MultiValue: true}},
		Interval:   segment.Interval{Start: t0, End: t0 + day},
	}
	w, err := segment.NewWriter(spec)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []segment.Value{
		segment.StringsWithNulls([]string{"", "", "1"}, []bool{true, false, false}),
		segment.Strings([]string{"a", "b"}),
		segment.String("c"),
	} {
		if err := w.Add(segment.Row{Time: t0 + int64(i), Values: []segment.Value{v}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "seg")
	if _, err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	data, err := segment.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	iv := interval.Interval{Start: t0, End: t0 + day}
	segs := []*Segment{NewSegment("mv_"+iv.PathString()+"_v1", data)}
	q := `{"queryType":"scan","dataSource":"mv","intervals":["1000/3000"],"columns":["m"],"resultFormat":"compactedList"}`
	pq, err := query.Parse([]byte(q))
	if err != nil {
		t.Fatal(err)
	}
	e := New(Options{})
	part, err := e.Run(context.Background(), pq, segs)
	if err != nil {
		t.Fatal(err)
	}
	wire, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	var back Partial
	if err := json.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Attach(pq); err != nil {
		t.Fatal(err)
	}
	merged, err := e.Merge(pq, []*Partial{&back})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Finalize(pq, merged)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"events":[[[null,"","1"]],[["a","b"]],["c"]]`; !strings.Contains(string(out), want) {
		t.Fatalf("scan %s, want %s", out, want)
	}
}
