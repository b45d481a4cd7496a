package nativebatch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"strata/ingest"
	"strata/storage/deep"
)

// TestLiveStatsMoveWhileReading reads 3000 good rows, then a bad one: when
// the bad row is reported, the live stats already show most of the good
// rows, and at the end they equal the final stats.
func TestLiveStatsMoveWhileReading(t *testing.T) {
	var data strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&data, `{"timestamp":"2020-01-01T00:00:%02dZ","d":"v%d"}`+"\n", i%60, i%7)
	}
	data.WriteString("{not json\n")
	s, err := ParseSpec(inlineTask(data.String(), `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":["d"]},"granularitySpec":{"rollup":false}}`, `{"type":"index","maxParseExceptions":1}`))
	if err != nil {
		t.Fatal(err)
	}
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var ls LiveStats
	var atBadRow RowStats
	_, stats, err := Build(context.Background(), s, BuildOptions{
		Version: "2024-01-01T00:00:00.000Z", TempDir: filepath.Join(t.TempDir(), "b"),
		Uploader: ingest.DeepUploader{Storage: store}, Live: &ls,
		OnParseError: func(string) { atBadRow = ls.Snapshot() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Processed != 3000 || stats.Unparseable != 1 {
		t.Fatalf("final stats %+v", stats)
	}
	if atBadRow.Processed < 2000 || atBadRow.Processed >= 3000 {
		t.Errorf("live stats at the bad row: %+v, want 2000..2999 processed (told every 1024 records)", atBadRow)
	}
	if got := ls.Snapshot(); got != stats {
		t.Errorf("live stats at the end %+v, final %+v", got, stats)
	}
}

func TestLiveReportShape(t *testing.T) {
	lr := &liveReport{taskID: "index_a_1", state: StateNotStarted}
	b0, k0 := lr.snapshot()
	lr.set(StateBuildSegments, 0)
	lr.stats.add(RowStats{Processed: 7, ThrownAway: 2, Unparseable: 1})
	b1, k1 := lr.snapshot()
	if k0 == k1 {
		t.Fatal("key did not change with the state and the stats")
	}
	if _, k := lr.snapshot(); k != k1 {
		t.Fatal("key changed without progress")
	}
	var doc reportDoc
	if err := json.Unmarshal(b1, &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.I.Payload
	if doc.I.Type != "ingestionStatsAndErrors" || doc.I.TaskID != "index_a_1" || p.IngestionState != StateBuildSegments ||
		p.RowStats.BuildSegments != (RowStats{Processed: 7, ThrownAway: 2, Unparseable: 1}) || p.ErrorMsg != nil {
		t.Errorf("live report %s", b1)
	}
	if !strings.Contains(string(b0), `"ingestionState":"NOT_STARTED"`) {
		t.Errorf("first report %s", b0)
	}
	lr.set(StateAvailabilityWait, 3)
	b2, _ := lr.snapshot()
	if err := json.Unmarshal(b2, &doc); err != nil || doc.I.Payload.SegmentsPublished != 3 || doc.I.Payload.IngestionState != StateAvailabilityWait {
		t.Errorf("waiting report %s", b2)
	}
}
