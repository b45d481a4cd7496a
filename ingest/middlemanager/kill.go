package middlemanager

import (
	"context"
	"encoding/json"
	"fmt"

	"strata/interval"
)

// killRunner deletes the metadata of a datasource's unused segments that lie
// fully inside an interval and queues their deep-storage files for deletion
// (commands.KillSegments, proposed by the overlord on the task's behalf). The
// task locks the interval before it starts, so it is ordered after any
// ingestion that holds an overlapping lock, and ingestion after it.
//
// Task JSON (Druid's kill task): {"type":"kill","dataSource":"wiki",
// "interval":"2024-01-01/2024-02-01","markAsUnused":false}. markAsUnused
// first marks the used segments inside the interval unused. batchSize is
// accepted; limit, maxUsedStatusLastUpdatedTime and versions are not supported
// and must be null.
type killRunner struct{}

type killSpec struct {
	DataSource                   string          `json:"dataSource"`
	Interval                     string          `json:"interval"`
	MarkAsUnused                 *bool           `json:"markAsUnused"`
	BatchSize                    *int            `json:"batchSize"`
	Limit                        *int            `json:"limit"`
	MaxUsedStatusLastUpdatedTime *string         `json:"maxUsedStatusLastUpdatedTime"`
	Versions                     json.RawMessage `json:"versions"`
}

func parseKill(payload []byte) (killSpec, interval.Interval, error) {
	var s killSpec
	if err := json.Unmarshal(payload, &s); err != nil {
		return s, interval.Interval{}, fmt.Errorf("kill task: %v", err)
	}
	if s.DataSource == "" {
		return s, interval.Interval{}, fmt.Errorf("kill task: dataSource is required")
	}
	if s.Interval == "" {
		return s, interval.Interval{}, fmt.Errorf("kill task: interval is required")
	}
	iv, err := interval.Parse(s.Interval)
	if err != nil {
		return s, iv, fmt.Errorf("kill task: %v", err)
	}
	if iv.IsEmpty() {
		return s, iv, fmt.Errorf("kill task: interval %s is empty", iv)
	}
	switch {
	case s.BatchSize != nil && *s.BatchSize <= 0:
		return s, iv, fmt.Errorf("kill task: batchSize must be > 0")
	case s.Limit != nil && *s.Limit <= 0:
		return s, iv, fmt.Errorf("kill task: limit must be > 0")
	case s.Limit != nil:
		return s, iv, fmt.Errorf("kill task: limit is not supported; kill the whole interval or a smaller one")
	case s.MaxUsedStatusLastUpdatedTime != nil:
		return s, iv, fmt.Errorf("kill task: maxUsedStatusLastUpdatedTime is not supported")
	case len(s.Versions) > 0 && string(s.Versions) != "null":
		return s, iv, fmt.Errorf("kill task: versions is not supported")
	}
	return s, iv, nil
}

// Validate implements Validator: a kill locks its interval.
func (killRunner) Validate(t *Task) ([]interval.Interval, error) {
	s, iv, err := parseKill(t.Payload)
	if err != nil {
		return nil, err
	}
	if t.DataSource != s.DataSource {
		return nil, fmt.Errorf("kill task: dataSource %q differs from the task's %q", s.DataSource, t.DataSource)
	}
	return []interval.Interval{iv}, nil
}

// KillReport is the kill task's report payload (Druid's KillTaskReport.Stats).
type KillReport struct {
	NumSegmentsKilled   int `json:"numSegmentsKilled"`
	NumBatchesProcessed int `json:"numBatchesProcessed"`
}

// Run implements Runner.
func (killRunner) Run(ctx context.Context, t Task, env Env) (Report, error) {
	s, iv, err := parseKill(t.Payload)
	if err != nil {
		return nil, err
	}
	mark := s.MarkAsUnused != nil && *s.MarkAsUnused
	env.Logf("Killing unused segments of dataSource[%s] in interval[%s] (markAsUnused=%v)", s.DataSource, iv, mark)
	res, err := env.Act(ctx, Action{Type: ActionKillSegments, Interval: iv.String(), MarkAsUnused: mark})
	if err != nil {
		return nil, err
	}
	var out struct {
		Killed       []string `json:"killed"`
		MarkedUnused int      `json:"markedUnused"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Errorf("kill task: unexpected answer from the overlord: %v", err)
	}
	if mark {
		env.Logf("Marked %d segments unused", out.MarkedUnused)
	}
	for _, id := range out.Killed {
		env.Logf("Killed segment[%s]", id)
	}
	env.Logf("Killed %d segments in 1 batch", len(out.Killed))
	type report struct {
		Type    string     `json:"type"`
		TaskID  string     `json:"taskId"`
		Payload KillReport `json:"payload"`
	}
	b, err := json.Marshal(map[string]report{"killUnusedSegments": {
		Type: "killUnusedSegments", TaskID: t.ID, Payload: KillReport{NumSegmentsKilled: len(out.Killed), NumBatchesProcessed: 1},
	}})
	return Report(b), err
}

func init() { Register("kill", killRunner{}) }
