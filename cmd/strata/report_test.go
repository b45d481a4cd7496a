package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"strata/ingest/msq"
	"strata/ingest/msq/msqtest"
	"strata/ingest/nativebatch"
)

const insertSQL = `INSERT INTO wiki
SELECT TIME_PARSE("ts") AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"ts,page\n2024-01-01T01:00:00Z,a\n2024-01-01T02:00:00Z,b\n2024-01-02T00:00:00Z,c"}',
  '{"type":"csv","findColumnsFromHeader":true}', '[{"name":"ts","type":"string"},{"name":"page","type":"string"}]'))
PARTITIONED BY DAY`

// msqReports runs a real INSERT with the msq engine and returns a live
// report taken while its segment generator ran, and the final report.
func msqReports(t *testing.T) (live, final string) {
	t.Helper()
	var snaps []msq.Report
	rep, err := msq.Run(context.Background(), msq.Request{SQL: insertSQL, TaskID: "query-cli", Version: "2030-01-01T00:00:00.000Z",
		TempDir: t.TempDir()}, msqtest.New(t.TempDir()), func(r msq.Report) { snaps = append(snaps, r) })
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if st := s.MultiStageQuery.Payload.Stages; live == "" && st[1].Phase == msq.PhaseResultsReady {
			live = mustJSON(t, s)
		}
	}
	if live == "" {
		t.Fatal("no live snapshot after the segment generator")
	}
	return live, mustJSON(t, rep)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func failedNativeReport() string {
	return string(nativebatch.MakeReport("index_wiki", nativebatch.StateBuildSegments,
		nativebatch.RowStats{Processed: 10, Unparseable: 1}, errors.New("Max parse exceptions[0] exceeded; last: bad row"), false, 0, 0))
}

func TestSummarizeMSQ(t *testing.T) {
	live, final := msqReports(t)
	s := summarize([]byte(live))
	if want := "stage 1 of 2 (segmentGenerator) RESULTS_READY, 1 worker: 3 rows read"; !strings.HasPrefix(s.line, want) ||
		!strings.Contains(s.line, "3 rows pushed to segments, publishing") {
		t.Errorf("live line %q, want it to start with %q", s.line, want)
	}
	s = summarize([]byte(final))
	if s.final != "2 stages, 3 input rows read, 2 segments published and loaded" || s.errorText != "" {
		t.Errorf("final %+v", s)
	}

	// A query that is waiting for its segments to load.
	var r map[string]map[string]map[string]any
	json.Unmarshal([]byte(final), &r)
	status := r["multiStageQuery"]["payload"]["status"].(map[string]any)
	status["status"] = "RUNNING"
	status["segmentLoadWaiterStatus"].(map[string]any)["state"] = "WAITING"
	if s := summarize([]byte(mustJSON(t, r))); s.line != "2 segments published, waiting for them to load" {
		t.Errorf("waiting line %q", s.line)
	}

	// A failed query: its error code, message and stage.
	rep, err := msq.Run(context.Background(), msq.Request{SQL: `INSERT INTO w SELECT TIME_PARSE("ts") AS __time FROM TABLE(EXTERN(
		'{"type":"inline","data":"{\"ts\":"}', '{"type":"json"}', '[{"name":"ts","type":"string"}]')) PARTITIONED BY DAY`,
		TaskID: "query-bad", Version: "2030-01-01T00:00:00.000Z", TempDir: t.TempDir()}, msqtest.New(t.TempDir()), nil)
	if err == nil {
		t.Fatal("the query did not fail")
	}
	s = summarize([]byte(mustJSON(t, rep)))
	if !strings.HasPrefix(s.errorText, "[CannotParseExternalData] ") || !strings.HasSuffix(s.errorText, "(stage 0)") {
		t.Errorf("error text %q", s.errorText)
	}
}

func TestSummarizeNativeBatch(t *testing.T) {
	live := nativebatch.MakeReport("index_wiki", nativebatch.StateBuildSegments,
		nativebatch.RowStats{Processed: 12345, ProcessedBytes: 2_000_000, ThrownAway: 3, Unparseable: 2}, nil, false, 0, 0)
	s := summarize(live)
	if want := "BUILD_SEGMENTS: 12,345 rows processed (2.0 MB), 0 with errors, 3 thrown away, 2 unparseable"; s.line != want {
		t.Errorf("live line %q\nwant      %q", s.line, want)
	}
	waiting := nativebatch.MakeReport("index_wiki", nativebatch.StateAvailabilityWait, nativebatch.RowStats{Processed: 5}, nil, false, 100, 2)
	if s := summarize(waiting); !strings.HasSuffix(s.line, "2 segments published, waiting for them to load") {
		t.Errorf("waiting line %q", s.line)
	}
	final := nativebatch.MakeReport("index_wiki", nativebatch.StateCompleted, nativebatch.RowStats{Processed: 5, ThrownAway: 1}, nil, true, 700, 2)
	if s := summarize(final); s.final != "5 rows processed, 0 with errors, 1 thrown away, 0 unparseable, 2 segments published and loaded" {
		t.Errorf("final %q", s.final)
	}
	unconfirmed := nativebatch.MakeReport("index_wiki", nativebatch.StateCompleted, nativebatch.RowStats{Processed: 1}, nil, false, 1500, 1)
	if s := summarize(unconfirmed); !strings.HasSuffix(s.final, "1 segment published, not confirmed loaded after 1.5s") {
		t.Errorf("unconfirmed %q", s.final)
	}
	if s := summarize([]byte(failedNativeReport())); s.errorText != "Max parse exceptions[0] exceeded; last: bad row" {
		t.Errorf("error text %q", s.errorText)
	}
}

func TestSummarizeOther(t *testing.T) {
	for _, raw := range []string{"", "No task reports were found", `{"killUnusedSegments":{}}`, `[1]`} {
		if s := summarize([]byte(raw)); s != (reportSummary{}) {
			t.Errorf("%q: %+v", raw, s)
		}
	}
}
