package streaming

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/ingest/nativebatch"
)

// Row counts and saved parse exceptions follow the served hydrants: merges
// rebuild rows without counting them or their exceptions twice.
func TestHydrantRowStatsAndParseErrors(t *testing.T) {
	k := testTask(t, "127.0.0.1:1", `{"type":"json"}`, 1000)
	k.maxSavedParseExceptions = 100
	sp, spool := newSpool(t)
	env := &fakeServing{}
	r := newRealtime(k, "task1", spool, filepath.Join(t.TempDir(), "rt"), env)
	var good, bad int64
	for round := 1; round <= 6; round++ { // six builds: one merge of four
		recs := []string{rec(1, round, round*10), rec(2, round, round*10+1), `{"ts":"not a time","n":1}`}
		good, bad = good+2, bad+1
		r.build(sp.add(t, recs...), Offsets{})
		stats, errs := r.rowProgress()
		if stats.Processed != good || stats.Unparseable != bad {
			t.Fatalf("round %d: %+v, want %d processed and %d unparseable", round, stats, good, bad)
		}
		if int64(len(errs)) != bad { // a merge does not save its old rows' exceptions again
			t.Fatalf("round %d: %d saved parse exceptions, want %d", round, len(errs), bad)
		}
		for _, e := range errs {
			if e.ErrorType != "unparseable" || len(e.Details) != 1 || !strings.Contains(e.Details[0], "not a time") || e.TimeMs == 0 {
				t.Fatalf("parse exception report %+v", e)
			}
		}
	}
	if r.hydrants[0].level != 1 {
		t.Fatalf("no merge happened: %+v", r.hydrants)
	}

	// The newest are kept up to maxSavedParseExceptions.
	k3 := testTask(t, "127.0.0.1:1", `{"type":"json"}`, 1000)
	k3.maxSavedParseExceptions = 2
	sp3, spool3 := newSpool(t)
	r3 := newRealtime(k3, "task3", spool3, filepath.Join(t.TempDir(), "rt"), &fakeServing{})
	r3.build(sp3.add(t, `{"ts":"first"}`, `{"ts":"second"}`, `{"ts":"third"}`), Offsets{})
	if _, errs := r3.rowProgress(); len(errs) != 2 || !strings.Contains(errs[1].Details[0], "third") {
		t.Fatalf("capped: %+v", errs)
	}

	// Nothing saved by default (Druid's maxSavedParseExceptions 0).
	k2 := testTask(t, "127.0.0.1:1", `{"type":"json"}`, 1000)
	sp2, spool2 := newSpool(t)
	r2 := newRealtime(k2, "task2", spool2, filepath.Join(t.TempDir(), "rt"), &fakeServing{})
	r2.build(sp2.add(t, `{"ts":"x"}`), Offsets{})
	if stats, errs := r2.rowProgress(); stats.Unparseable != 1 || len(errs) != 0 {
		t.Fatalf("default: %+v, %d saved", stats, len(errs))
	}
}

func progressReport(t *testing.T, rows nativebatch.RowStats, errs []ParseError) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{ProgressReportType: map[string]any{"type": ProgressReportType, "taskId": "x",
		"payload": Progress{Stream: "t", CurrentOffsets: map[string]int64{"0": 5}, RecordsRead: 5, RowStats: &rows, ParseErrors: errs}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The supervisor's stats: totals from the last report, per-second averages
// over each window from the samples of the supervisor's runs.
func TestSupervisorRowStats(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	task := &supTask{id: "index_kafka_k_1", group: 0}
	for i := 0; i <= 20; i++ { // a report a minute, 600 more rows each
		task.observe(t0.Add(time.Duration(i)*time.Minute),
			progressReport(t, nativebatch.RowStats{Processed: int64(600 * i), Unparseable: int64(i)}, nil))
	}
	if task.current[0] != 5 {
		t.Fatalf("position %v", task.current)
	}
	if n := len(task.samples); n > 17 {
		t.Fatalf("%d samples kept; only the last 15 minutes and one before are needed", n)
	}
	now := t0.Add(20 * time.Minute)
	foreign := &supTask{id: "old", group: -1, samples: task.samples}
	var got map[string]map[string]struct {
		MovingAverages map[string]map[string]rowRates  `json:"movingAverages"`
		Totals         map[string]nativebatch.RowStats `json:"totals"`
	}
	if err := json.Unmarshal(rowStats(now, []*supTask{task, foreign}), &got); err != nil {
		t.Fatal(err)
	}
	st, ok := got["0"]["index_kafka_k_1"]
	if !ok || len(got) != 1 || len(got["0"]) != 1 {
		t.Fatalf("stats %+v", got)
	}
	if st.Totals["buildSegments"].Processed != 12000 || st.Totals["buildSegments"].Unparseable != 20 {
		t.Fatalf("totals %+v", st.Totals)
	}
	for _, w := range []string{"1m", "5m", "15m"} {
		r := st.MovingAverages["buildSegments"][w]
		if math.Abs(r.Processed-10) > 1e-9 || math.Abs(r.Unparseable-1.0/60) > 1e-9 {
			t.Fatalf("%s averages %+v, want 10 rows/s", w, r)
		}
	}
	// An unchanged report within a minute adds no sample.
	n := len(task.samples)
	task.observe(now.Add(time.Second), progressReport(t, nativebatch.RowStats{Processed: 12000, Unparseable: 20}, nil))
	if len(task.samples) != n {
		t.Fatal("an unchanged report added a sample")
	}

	// Parse errors of every task, newest first.
	a := &supTask{parseErrs: []ParseError{{ErrorType: "unparseable", Details: []string{"a"}, TimeMs: 10}, {Details: []string{"c"}, TimeMs: 30}}}
	b := &supTask{parseErrs: []ParseError{{Details: []string{"b"}, TimeMs: 20}}}
	var list []ParseError
	if err := json.Unmarshal(parseErrors([]*supTask{a, b}), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Details[0] != "c" || list[1].Details[0] != "b" || list[2].Details[0] != "a" {
		t.Fatalf("parse errors %+v", list)
	}
	if got := string(parseErrors(nil)); got != "[]" {
		t.Fatalf("no tasks: %s", got)
	}
}
