package middlemanager

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"strata/interval"
)

// noopRunner is Druid's NoopTask: it sleeps for runTime milliseconds (2500 when
// absent or 0) and succeeds, or fails early when shut down. Tests and smoke
// checks use it to exercise scheduling without doing work.
type noopRunner struct{}

type noopSpec struct {
	RunTime       *int64  `json:"runTime"`
	IsReadyTime   *int64  `json:"isReadyTime"`
	IsReadyResult *string `json:"isReadyResult"`
}

const noopDefaultRunTime = 2500 * time.Millisecond

func parseNoop(payload []byte) (noopSpec, error) {
	var s noopSpec
	if err := json.Unmarshal(payload, &s); err != nil {
		return s, fmt.Errorf("noop task: %v", err)
	}
	if s.RunTime != nil && *s.RunTime < 0 {
		return s, fmt.Errorf("noop task: runTime %d must not be negative", *s.RunTime)
	}
	if s.IsReadyTime != nil && *s.IsReadyTime < 0 {
		return s, fmt.Errorf("noop task: isReadyTime %d must not be negative", *s.IsReadyTime)
	}
	if s.IsReadyResult != nil && !strings.EqualFold(*s.IsReadyResult, "YES") {
		return s, fmt.Errorf("noop task: isReadyResult %q is not supported (only YES)", *s.IsReadyResult)
	}
	return s, nil
}

// Validate implements Validator.
func (noopRunner) Validate(t *Task) ([]interval.Interval, error) {
	if _, err := parseNoop(t.Payload); err != nil {
		return nil, err
	}
	if t.DataSource == "" {
		t.DataSource = "none"
	}
	return nil, nil
}

// Run implements Runner.
func (noopRunner) Run(ctx context.Context, t Task, env Env) (Report, error) {
	s, err := parseNoop(t.Payload)
	if err != nil {
		return nil, err
	}
	d := noopDefaultRunTime
	if s.RunTime != nil && *s.RunTime > 0 {
		d = time.Duration(*s.RunTime) * time.Millisecond
	}
	env.Logf("Running noop task[%s]", t.ID)
	env.Logf("Sleeping for %d millis.", d.Milliseconds())
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		env.Logf("Woke up!")
		return nil, nil
	case <-ctx.Done():
		env.Logf("Interrupted: %v", context.Cause(ctx))
		return nil, context.Cause(ctx)
	}
}

func init() { Register("noop", noopRunner{}) }
