package streaming

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"strata/nativebatch"
)

// Row statistics of a supervisor's reading tasks (GET .../supervisor/{id}/stats)
// and their saved parse exceptions (.../parseErrors), from the kafkaProgress
// reports the tasks publish while they read.

// statsWindows are Druid's moving-average windows.
var statsWindows = []struct {
	name string
	d    time.Duration
}{{"1m", time.Minute}, {"5m", 5 * time.Minute}, {"15m", 15 * time.Minute}}

// rowSample is a task's row counts as of one supervisor run.
type rowSample struct {
	at   time.Time
	rows nativebatch.RowStats
}

// observe records a task's latest progress report: its position, and its
// row counts as a sample for the moving averages. Samples are only appended
// or resliced from the front, never changed, so the report's copies of the
// task may keep reading them.
func (t *supTask) observe(now time.Time, report string) {
	p, ok := ParseProgress(report)
	if !ok {
		t.current = nil
		return
	}
	t.current = progressOffsets(p)
	t.parseErrs = p.ParseErrors
	if p.RowStats == nil {
		return
	}
	n := len(t.samples)
	if n > 0 && t.samples[n-1].rows == *p.RowStats && now.Sub(t.samples[n-1].at) < time.Minute {
		return
	}
	t.samples = append(t.samples, rowSample{at: now, rows: *p.RowStats})
	// Keep one sample older than the longest window, to measure it from.
	for len(t.samples) > 2 && now.Sub(t.samples[1].at) > statsWindows[len(statsWindows)-1].d {
		t.samples = t.samples[1:]
	}
}

// rowRates are per-second averages of the row counters over one window.
type rowRates struct {
	Processed          float64 `json:"processed"`
	ProcessedBytes     float64 `json:"processedBytes"`
	ProcessedWithError float64 `json:"processedWithError"`
	ThrownAway         float64 `json:"thrownAway"`
	Unparseable        float64 `json:"unparseable"`
}

type taskRowStats struct {
	MovingAverages map[string]map[string]rowRates  `json:"movingAverages"`
	Totals         map[string]nativebatch.RowStats `json:"totals"`
}

// rowStats renders Druid's {"<taskGroup>": {"<taskId>": {"movingAverages":
// {"buildSegments": {"1m": ..}}, "totals": {"buildSegments": ..}}}} for the
// tasks that report row counts.
func rowStats(now time.Time, tasks []*supTask) json.RawMessage {
	out := map[string]map[string]taskRowStats{}
	for _, t := range tasks {
		if len(t.samples) == 0 || t.group < 0 {
			continue
		}
		last := t.samples[len(t.samples)-1]
		st := taskRowStats{
			MovingAverages: map[string]map[string]rowRates{"buildSegments": {}},
			Totals:         map[string]nativebatch.RowStats{"buildSegments": last.rows},
		}
		for _, w := range statsWindows {
			st.MovingAverages["buildSegments"][w.name] = ratesOver(t.samples, now, w.d)
		}
		g := strconv.Itoa(t.group)
		if out[g] == nil {
			out[g] = map[string]taskRowStats{}
		}
		out[g][t.id] = st
	}
	b, _ := json.Marshal(out) // plain types only
	return b
}

// ratesOver is the per-second growth of the counters from the newest
// sample at least d old (or the oldest there is) to the last one.
func ratesOver(samples []rowSample, now time.Time, d time.Duration) rowRates {
	last := samples[len(samples)-1]
	from := samples[0]
	for _, s := range samples {
		if now.Sub(s.at) < d {
			break
		}
		from = s
	}
	secs := last.at.Sub(from.at).Seconds()
	if secs <= 0 {
		return rowRates{}
	}
	rate := func(a, b int64) float64 { return float64(b-a) / secs }
	return rowRates{
		Processed:          rate(from.rows.Processed, last.rows.Processed),
		ProcessedBytes:     rate(from.rows.ProcessedBytes, last.rows.ProcessedBytes),
		ProcessedWithError: rate(from.rows.ProcessedWithError, last.rows.ProcessedWithError),
		ThrownAway:         rate(from.rows.ThrownAway, last.rows.ThrownAway),
		Unparseable:        rate(from.rows.Unparseable, last.rows.Unparseable),
	}
}

// parseErrors lists the tasks' saved parse exceptions, newest first.
func parseErrors(tasks []*supTask) json.RawMessage {
	out := []ParseError{}
	for _, t := range tasks {
		out = append(out, t.parseErrs...)
	}
	slices.SortStableFunc(out, func(a, b ParseError) int { return int(b.TimeMs - a.TimeMs) })
	b, _ := json.Marshal(out)
	return b
}
