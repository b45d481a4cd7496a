package nativebatch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"strata/aggregate/blob"
	"strata/aggregate/quantiles"
)

func wikiSubst(dir string) map[string]string {
	return map[string]string{
		"%%DATASOURCE%%":                   "wiki",
		"%%DATA_DIRECTORY%%":               dir,
		"%%SEGMENT_AVAIL_TIMEOUT_MILLIS%%": "0",
		"%%INPUT_SOURCE_FILTER%%":          "tiny_wiki*",
		"%%INPUT_SOURCE_BASE_DIR%%":        filepath.Join(dir, "json"),
		"%%APPEND_TO_EXISTING%%":           "false",
		"%%DROP_EXISTING%%":                "false",
		"%%INPUT_FORMAT%%":                 `{"type":"json"}`,
		"%%FORCE_GUARANTEED_ROLLUP%%":      "false",
		"%%PARTITIONS_SPEC%%":              `{"type":"dynamic","maxRowsPerSegment":3}`,
	}
}

func wikiRecords(t *testing.T, dir string) []map[string]any {
	var recs []map[string]any
	for i := 1; i <= 3; i++ {
		recs = append(recs, readNDJSON(t, filepath.Join(dir, "json", fmt.Sprintf("tiny_wiki_%d.json", i)))...)
	}
	return recs
}

func sumField(recs []map[string]any, f string) float64 {
	total := 0.0
	for _, r := range recs {
		if v, ok := r[f].(float64); ok {
			total += v
		}
	}
	return total
}

// checkP1 checks profile P1 (WIKI-SEC): 10 rows, 4 segments of DAY chunks,
// sums equal to the input's, no tags column, sketches stored. A parallel
// build (one worker per file) may cut day 2 into 3 segments instead of 2:
// the file holding one row of it and the file holding four may be read by
// different workers, each partitioning its own rows.
func checkP1(t *testing.T, b built, recs []map[string]any, parallel bool) {
	t.Helper()
	if b.stats.Processed != 10 || b.stats.ThrownAway != 0 || b.stats.Unparseable != 0 {
		t.Errorf("row stats = %+v, want 10 processed", b.stats)
	}
	perDay := map[string]int{}
	for _, s := range b.segs {
		iv := s.Interval.String()
		if s.ShardSpec.PartitionNum != int32(perDay[iv]) {
			t.Errorf("segment %s: partitions of its chunk not numbered 0..n-1", s.ID())
		}
		perDay[iv]++
	}
	for _, s := range b.segs {
		if n := perDay[s.Interval.String()]; s.ShardSpec.CorePartitions != int32(n) {
			t.Errorf("segment %s: core partitions %d, want %d", s.ID(), s.ShardSpec.CorePartitions, n)
		}
	}
	day1 := perDay["2013-08-31T00:00:00.000Z/2013-09-01T00:00:00.000Z"]
	day2 := perDay["2013-09-01T00:00:00.000Z/2013-09-02T00:00:00.000Z"]
	if len(perDay) != 2 || day1 != 2 || (day2 != 2 && !(parallel && day2 == 3)) {
		t.Errorf("segments per day = %v", perDay)
	}
	rows := b.rows(t)
	if len(rows) != 10 {
		t.Fatalf("stored %d rows, want 10", len(rows))
	}
	if got := sumOf(rows, "count"); got != 10 {
		t.Errorf("sum(count) = %v, want 10", got)
	}
	for _, m := range []string{"added", "deleted", "delta"} {
		if got, want := sumOf(rows, m), sumField(recs, m); got != want {
			t.Errorf("sum(%s) = %v, want %v", m, got, want)
		}
	}
	for _, r := range rows {
		if _, ok := r["tags"]; ok {
			t.Fatalf("tags was stored though not listed: %v", r)
		}
		if r["__time"].(int64)%1000 != 0 {
			t.Errorf("time %v not truncated to seconds", r["__time"])
		}
		for _, sk := range []string{"thetaSketch", "HLLSketchBuild", "quantilesDoublesSketch"} {
			if b, _ := r[sk].([]byte); len(b) == 0 {
				t.Errorf("row has no %s sketch", sk)
			}
		}
		// Each stored row rolls up one input row: its quantiles sketch holds
		// exactly that row's delta.
		q, err := quantiles.Decode(r["quantilesDoublesSketch"].([]byte))
		if err != nil {
			t.Fatalf("quantiles sketch: %v", err)
		}
		if d, _ := r["delta"].(float64); q.N() != 1 || q.Min() != d || q.Max() != d {
			t.Errorf("quantiles sketch n=%d min=%v max=%v, want one value %v", q.N(), q.Min(), q.Max(), r["delta"])
		}
		if _, ok := r["page"].(string); !ok {
			t.Errorf("page missing in %v", r)
		}
	}
}

func TestConformanceWikipediaIndexTask(t *testing.T) {
	corpus := conformanceDir(t)
	dir := wikiDir(t, corpus)
	payload := loadSpec(t, corpus, "wikipedia_index_task.json", wikiSubst(dir))
	checkP1(t, build(t, payload), wikiRecords(t, dir), false)
}

func TestConformanceLocalInputSourceIndexParallel(t *testing.T) {
	corpus := conformanceDir(t)
	dir := wikiDir(t, corpus)
	payload := loadSpec(t, corpus, "wikipedia_local_input_source_index_task.json", wikiSubst(dir))
	s, err := ParseSpec(payload)
	if err != nil {
		t.Fatal(err)
	}
	if s.TaskType != "index_parallel" || s.AppendToExisting {
		t.Errorf("spec = %s append=%v", s.TaskType, s.AppendToExisting)
	}
	if s.MaxConcurrency != 4 {
		t.Errorf("MaxConcurrency = %d, want the spec's maxNumConcurrentSubTasks 4", s.MaxConcurrency)
	}
	checkP1(t, build(t, payload), wikiRecords(t, dir), true)
}

func TestConformanceMergeIndexTask(t *testing.T) {
	corpus := conformanceDir(t)
	dir := wikiDir(t, corpus)
	b := build(t, loadSpec(t, corpus, "wikipedia_merge_index_task.json", wikiSubst(dir)))
	recs := wikiRecords(t, dir)
	if len(b.segs) != 2 {
		t.Errorf("got %d segments, want 2 (one per day)", len(b.segs))
	}
	rows := b.rows(t)
	if len(rows) != 6 {
		t.Fatalf("stored %d rows, want 6", len(rows))
	}
	// Independent expectation: per (day, continent) the count, the sums and
	// the users of the earliest and latest rows.
	type agg struct {
		count              int64
		added, delta       float64
		firstT, lastT      time.Time
		firstU, lastU      string
		firstDelta, lastDe float64
	}
	want := map[string]*agg{}
	for _, r := range recs {
		ts, err := time.Parse(time.RFC3339, r["timestamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		day := ts.UTC().Truncate(24 * time.Hour).UnixMilli()
		k := fmt.Sprintf("%d|%s", day, r["continent"])
		a := want[k]
		if a == nil {
			a = &agg{firstT: ts, lastT: ts, firstU: r["user"].(string), lastU: r["user"].(string), firstDelta: r["delta"].(float64), lastDe: r["delta"].(float64)}
			want[k] = a
		}
		a.count++
		a.added += r["added"].(float64)
		a.delta += r["delta"].(float64)
		if ts.Before(a.firstT) {
			a.firstT, a.firstU, a.firstDelta = ts, r["user"].(string), r["delta"].(float64)
		}
		if ts.After(a.lastT) {
			a.lastT, a.lastU, a.lastDe = ts, r["user"].(string), r["delta"].(float64)
		}
	}
	if len(want) != 6 {
		t.Fatalf("data has %d (day, continent) groups, want 6", len(want))
	}
	for _, r := range rows {
		k := fmt.Sprintf("%d|%s", r["__time"], r["continent"])
		a := want[k]
		if a == nil {
			t.Errorf("unexpected row %v", r)
			continue
		}
		if r["count"] != a.count || r["added"] != a.added || r["delta"] != a.delta {
			t.Errorf("%s: count/added/delta = %v/%v/%v, want %v/%v/%v", k, r["count"], r["added"], r["delta"], a.count, a.added, a.delta)
		}
		if p := r["first_user"].(blob.Pair); p.String != a.firstU || p.Time != a.firstT.UnixMilli() {
			t.Errorf("%s: first_user = %+v, want %s", k, p, a.firstU)
		}
		if p := r["last_user"].(blob.Pair); p.String != a.lastU || p.Time != a.lastT.UnixMilli() {
			t.Errorf("%s: last_user = %+v, want %s", k, p, a.lastU)
		}
		if p := r["double_first_delta"].(blob.Pair); p.Double != a.firstDelta {
			t.Errorf("%s: double_first_delta = %+v, want %v", k, p, a.firstDelta)
		}
		if p := r["long_last_delta"].(blob.Pair); p.Long != int64(a.lastDe) {
			t.Errorf("%s: long_last_delta = %+v, want %v", k, p, a.lastDe)
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Errorf("groups not stored: %v", want)
	}
}

func TestConformanceSparseColumns(t *testing.T) {
	corpus := conformanceDir(t)
	b := build(t, loadSpec(t, corpus, "sparse_column_index_task.json", map[string]string{"%%DATASOURCE%%": "sparse"}))
	if b.stats.Processed != 10 {
		t.Errorf("processed %d, want 10", b.stats.Processed)
	}
	rows := b.rows(t)
	if got := sumOf(rows, "count"); got != 10 {
		t.Errorf("sum(count) = %v", got)
	}
	if got := sumOf(rows, "sum_metA"); got != 10 {
		t.Errorf("sum(sum_metA) = %v", got)
	}
	hour := time.Date(2015, 9, 12, 0, 0, 0, 0, time.UTC).UnixMilli()
	dimC := 0
	for _, r := range rows {
		if r["__time"] != hour {
			t.Errorf("time %v, want the hour %d", r["__time"], hour)
		}
		if r["dimD"] != nil {
			t.Errorf("dimD = %v, want null", r["dimD"])
		}
		if r["dimC"] == "A" {
			dimC++
			if r["dimA"] != nil || r["dimB"] != "X" {
				t.Errorf("dimC row = %v", r)
			}
		}
	}
	if dimC != 1 {
		t.Errorf("%d rows with dimC=A, want 1", dimC)
	}
	// Best-effort rollup: partitions of at most 3 rows, equal rows within a
	// partition combined; fully rolled up there would be 8 rows.
	for _, s := range b.segs {
		if s.Interval.End-s.Interval.Start != 3600_000 {
			t.Errorf("segment interval %s is not an hour", s.Interval)
		}
	}
	if len(rows) < 8 || len(rows) > 10 {
		t.Errorf("stored %d rows", len(rows))
	}
	seen := map[string]bool{}
	for _, seg := range b.segs {
		segRows := readSegment(t, b.store, seg)
		if len(segRows) > 3 {
			t.Errorf("segment %s has %d rows, max 3", seg.ID(), len(segRows))
		}
		for _, r := range segRows {
			k := fmt.Sprint(r["dimA"], r["dimB"], r["dimC"])
			if seen[k+seg.ID().String()] {
				t.Errorf("segment %s holds %s twice (not rolled up)", seg.ID(), k)
			}
			seen[k+seg.ID().String()] = true
		}
	}
}

func TestConformanceRollupTutorial(t *testing.T) {
	corpus := conformanceDir(t)
	payload := loadSpec(t, corpus, "rollup-index.json", nil)
	payload = []byte(strings.Replace(string(payload), `"quickstart/tutorial"`, fmt.Sprintf("%q", filepath.Join(corpus, "data")), 1))
	b := build(t, payload)
	if len(b.segs) != 2 || b.stats.Processed != 9 {
		t.Errorf("segments %d, stats %+v; want 2 day segments, 9 processed", len(b.segs), b.stats)
	}
	raw, err := os.ReadFile(filepath.Join(corpus, "derived", "tutorial_rollup.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Steps []struct {
			ExpectedRows []map[string]any `json:"expectedRows"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, st := range doc.Steps {
		for _, r := range st.ExpectedRows {
			want = append(want, fmt.Sprintf("%.0f %v %v %v %v %v", r["__time_millis"], r["srcIP"], r["dstIP"], r["count"], r["packets"], r["bytes"]))
		}
	}
	var got []string
	for _, r := range b.rows(t) {
		got = append(got, fmt.Sprintf("%d %v %v %v %v %v", r["__time"], r["srcIP"], r["dstIP"], r["count"], r["packets"], r["bytes"]))
	}
	sort.Strings(want)
	sort.Strings(got)
	if len(want) != 5 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
