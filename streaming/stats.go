package streaming

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"strata/ingest/nativebatch"
)

// Row statistics of a supervisor's reading tasks (GET .../supervisor/{id}/stats)
// and their saved parse exceptions (.../parseErrors), from the kafkaProgress
// reports the tasks publish while they read.

// statsWindows are Druid's moving-average windows.
var statsWindows = []struct {
	name string
	d    time.Duration
}{{"1m", time.Minute}, {"5m", 5 * time.Minute}, {"15m", 15 * time.Minute}}

// rowSample is a task's row counts as the supervisor saw them at one time.
type rowSample struct {
	at   time.Time
	rows nativebatch.RowStats
}

// observe records a task's latest progress report: its position, and its
// row counts as a sample for the moving averages. An unchanged count adds no
// sample within a minute: the averages take counts as steady from the last
// sample to now. Samples are only appended or resliced from the front, never
// changed, so the report's copies of the task may keep reading them.
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
		var started time.Time
		if t.startedMs > 0 {
			started = time.UnixMilli(t.startedMs)
		}
		last := t.samples[len(t.samples)-1]
		st := taskRowStats{
			MovingAverages: map[string]map[string]rowRates{"buildSegments": {}},
			Totals:         map[string]nativebatch.RowStats{"buildSegments": last.rows},
		}
		for _, w := range statsWindows {
			st.MovingAverages["buildSegments"][w.name] = ratesOver(t.samples, started, now, w.d)
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

// ratesOver is the per-second growth of the counters over the window of
// length d ending now, or over the task's life when it is shorter. The
// counters are interpolated between samples and steady after the last one.
// A task's counters are zero when it starts, so rows it read before the
// supervisor first saw them (a backlog read within a run period) count too.
func ratesOver(samples []rowSample, started, now time.Time, d time.Duration) rowRates {
	points := samples
	if !started.IsZero() && started.Before(samples[0].at) {
		points = append([]rowSample{{at: started}}, samples...)
	}
	from := now.Add(-d)
	if from.Before(points[0].at) {
		from = points[0].at
	}
	secs := now.Sub(from).Seconds()
	if secs <= 0 {
		return rowRates{}
	}
	a, b := rowsAt(points, from), points[len(points)-1].rows
	rate := func(x, y int64) float64 { return float64(y-x) / secs }
	return rowRates{
		Processed:          rate(a.Processed, b.Processed),
		ProcessedBytes:     rate(a.ProcessedBytes, b.ProcessedBytes),
		ProcessedWithError: rate(a.ProcessedWithError, b.ProcessedWithError),
		ThrownAway:         rate(a.ThrownAway, b.ThrownAway),
		Unparseable:        rate(a.Unparseable, b.Unparseable),
	}
}

// rowsAt interpolates the counters at time at, from the last sample at or
// before it and the next one.
func rowsAt(points []rowSample, at time.Time) nativebatch.RowStats {
	i := 0
	for i+1 < len(points) && !points[i+1].at.After(at) {
		i++
	}
	p := points[i]
	if i+1 == len(points) || !at.After(p.at) {
		return p.rows
	}
	q := points[i+1]
	f := float64(at.Sub(p.at)) / float64(q.at.Sub(p.at))
	lerp := func(x, y int64) int64 { return x + int64(math.Round(f*float64(y-x))) }
	return nativebatch.RowStats{
		Processed:          lerp(p.rows.Processed, q.rows.Processed),
		ProcessedBytes:     lerp(p.rows.ProcessedBytes, q.rows.ProcessedBytes),
		ProcessedWithError: lerp(p.rows.ProcessedWithError, q.rows.ProcessedWithError),
		ThrownAway:         lerp(p.rows.ThrownAway, q.rows.ThrownAway),
		Unparseable:        lerp(p.rows.Unparseable, q.rows.Unparseable),
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
