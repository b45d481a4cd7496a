package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

// sketchSegment builds and stores a day of "sk": page rows with HLL and
// theta sketches of page stored as metrics.
func (f *dpFixture) sketchSegment(pages ...string) *segmeta.DataSegment {
	t := f.t
	t.Helper()
	iv, err := interval.Parse("2024-01-01/2024-01-02")
	if err != nil {
		t.Fatal(err)
	}
	w, err := stseg.NewWriter(stseg.Spec{
		Fields:     []stseg.Field{{Name: "page", Kind: stseg.KindString}},
		Dimensions: []stseg.Dimension{{Name: "page"}},
		Metrics: []stseg.Metric{{Type: "HLLSketchBuild", Name: "h", FieldName: "page"},
			{Type: "thetaSketch", Name: "th", FieldName: "page"}},
		Interval: stseg.Interval{Start: iv.Start, End: iv.End},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if err := w.Add(stseg.Row{Time: dpTime(t, "2024-01-01T01:00:00Z"), Values: []stseg.Value{stseg.String(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seg := &segmeta.DataSegment{DataSource: "sk", Interval: iv, Version: "v1", Dimensions: []string{"page"},
		Metrics: []string{"h", "th"}, ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes}
	key := deep.SegmentKey("sk", interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), "v1", 0) + "/v1"
	spec, err := f.store.Put(context.Background(), key, path)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	seg.LoadSpec = segmeta.RawJSON(ls)
	return seg
}

// A sketch estimate over a stored sketch column in a query that does not
// aggregate is 400 unsupported, saying why (native expressions read no
// complex column) and what answers instead: the estimate of the merged
// column, which is checked here against the stored sketches.
func TestSQLSketchEstimateOfStoredColumn(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	f.publish(f.sketchSegment("a", "b", "c", "a"))
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "sk", 1)
	for _, q := range []string{`SELECT page, HLL_SKETCH_ESTIMATE(h) FROM sk`, `SELECT THETA_SKETCH_ESTIMATE(th) FROM sk`} {
		code, body, _ := sqlCall(t, b, `{"query":"`+q+`"}`)
		if e := errorBody(t, body); code != 400 || e["category"] != "UNSUPPORTED" || !strings.Contains(body, "cannot read complex columns") {
			t.Errorf("%s: %d %s, want 400 UNSUPPORTED saying why", q, code, body)
		}
	}
	for q, want := range map[string]string{
		`SELECT HLL_SKETCH_ESTIMATE(DS_HLL(h)) AS n, THETA_SKETCH_ESTIMATE(DS_THETA(th)) AS m FROM sk`: `[[3,3]]`,
		`SELECT page, HLL_SKETCH_ESTIMATE(DS_HLL(h)) AS n FROM sk GROUP BY page`:                       `[["a",1],["b",1],["c",1]]`,
	} {
		if code, body, _ := sqlCall(t, b, `{"query":"`+q+`","resultFormat":"array"}`); code != 200 || body != want {
			t.Errorf("%s:\n got %d %s\nwant 200 %s", q, code, body, want)
		}
	}
}
