package sqltask

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"strata/ingest/msq"
	"strata/ingest/msq/msqtest"
	"strata/segmeta"
)

// watchedEnv holds WaitLoaded until the test has seen the WAITING report.
type watchedEnv struct {
	*msqtest.Env
	release chan struct{}
}

func (e *watchedEnv) WaitLoaded(ctx context.Context, _ []*segmeta.DataSegment) error {
	select {
	case <-e.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return errors.New("the live report never showed the wait for segments")
	}
}

// recorder collects published reports.
type recorder struct {
	mu      sync.Mutex
	reports []msq.Report
	onEach  func(msq.Report)
}

func (r *recorder) publish(_ context.Context, b []byte) error {
	var rep msq.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	if r.onEach != nil {
		r.onEach(rep)
	}
	return nil
}

func (r *recorder) all() []msq.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]msq.Report(nil), r.reports...)
}

const inlineInsert = `INSERT INTO t
SELECT TIME_PARSE("ts") AS __time, page
FROM TABLE(EXTERN('{"type":"inline","data":"ts,page\n2024-01-01T01:00:00Z,a\n2024-01-01T02:00:00Z,b\n2024-01-02T00:00:00Z,c"}',
  '{"type":"csv","findColumnsFromHeader":true}', '[{"name":"ts","type":"string"},{"name":"page","type":"string"}]'))
PARTITIONED BY DAY`

// In a synctest bubble, so that "nothing is published after the query"
// is checked over the bubble's clock with every goroutine settled.
func TestLiveReportShowsProgressAndLoadWait(t *testing.T) {
	synctest.Test(t, testLiveReportShowsProgressAndLoadWait)
}

func testLiveReportShowsProgressAndLoadWait(t *testing.T) {
	env := &watchedEnv{Env: msqtest.New(t.TempDir()), release: make(chan struct{})}
	var once sync.Once
	rec := &recorder{onEach: func(r msq.Report) {
		if ls := r.MultiStageQuery.Payload.Status.SegmentLoadWaiterStatus; ls != nil && ls.State == msq.StateWaiting {
			once.Do(func() { close(env.release) })
		}
	}}
	req := msq.Request{SQL: inlineInsert, TaskID: "query-live", Version: "2030-01-01T00:00:00.000Z", TempDir: t.TempDir()}
	rep, b, err := runQuery(context.Background(), req, env, rec.publish, 5*time.Millisecond, t.Logf)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	if len(b) == 0 || rep.MultiStageQuery.Payload.Status.Status != msq.StateSuccess {
		t.Fatalf("final report %s", b)
	}
	reports := rec.all()
	if len(reports) == 0 {
		t.Fatal("no live report was published")
	}
	var waiting *msq.Report
	for i := range reports {
		r := &reports[i]
		if s := r.MultiStageQuery.Payload.Status.Status; s != msq.StateRunning {
			t.Fatalf("live report %d has status %s", i, s)
		}
		if ls := r.MultiStageQuery.Payload.Status.SegmentLoadWaiterStatus; ls != nil && ls.State == msq.StateWaiting {
			waiting = r
		}
		if i > 0 && r.ProgressKey() == reports[i-1].ProgressKey() {
			t.Errorf("live report %d repeats the progress of the one before", i)
		}
	}
	if waiting == nil {
		t.Fatal("no live report showed the wait for segments to load")
	}
	ls := waiting.MultiStageQuery.Payload.Status.SegmentLoadWaiterStatus
	if ls.TotalSegments != 2 || ls.UnknownSegments != 2 || ls.DataSource != "t" {
		t.Errorf("load status %+v, want 2 segments of t", ls)
	}
	// The spec's names for the same members are there too.
	if spec := waiting.MultiStageQuery.Payload.Status.SegmentLoadStatus; spec == nil || *spec != *ls {
		t.Errorf("segmentLoadStatus %+v, want the same as segmentLoadWaiterStatus", spec)
	}
	for _, ws := range waiting.MultiStageQuery.Payload.Status.Workers {
		if len(ws) == 0 || ws[0].Status != ws[0].State || ws[0].Status == "" {
			t.Errorf("worker status %+v", ws)
		}
	}
	// Every stage has run by then; stage 0 read the 3 inline rows.
	p := waiting.MultiStageQuery.Payload
	for _, st := range p.Stages {
		if st.Phase == "" || st.Phase == msq.PhaseNew {
			t.Errorf("stage %d not started in the waiting report", st.StageNumber)
		}
	}
	var rows int64
	for _, w := range p.Counters["0"] {
		in, _ := w["input0"].(map[string]any)
		for _, n := range in["rows"].([]any) {
			rows += int64(n.(float64))
		}
	}
	if rows != 3 {
		t.Errorf("stage 0 read %d rows in the live report, want 3", rows)
	}
	// Nothing is published once runQuery has returned.
	n := len(rec.all())
	time.Sleep(time.Second) // two hundred publish periods
	synctest.Wait()
	if len(rec.all()) != n {
		t.Error("a live report was published after the query ended")
	}
}

func TestFailedQueryPublishesItsFinalReport(t *testing.T) {
	rec := &recorder{}
	bad := `INSERT INTO t SELECT TIME_PARSE("ts") AS __time FROM TABLE(EXTERN('{"type":"inline","data":"{\"ts\":"}',
  '{"type":"json"}', '[{"name":"ts","type":"string"}]')) PARTITIONED BY DAY`
	req := msq.Request{SQL: bad, TaskID: "query-bad", Version: "2030-01-01T00:00:00.000Z", TempDir: t.TempDir()}
	_, _, err := runQuery(context.Background(), req, msqtest.New(t.TempDir()), rec.publish, time.Hour, t.Logf)
	if err == nil {
		t.Fatal("the query did not fail")
	}
	reports := rec.all()
	if len(reports) != 1 {
		t.Fatalf("%d reports published, want the final one", len(reports))
	}
	if !reports[0].Failed() || reports[0].Fault()["errorCode"] != msq.CodeCannotParseExternalData {
		t.Fatalf("published report %+v", reports[0].MultiStageQuery.Payload.Status)
	}
}
