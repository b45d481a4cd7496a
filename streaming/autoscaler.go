package streaming

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// AutoScaler is Druid's lag-based task autoscaler (ioConfig.autoScalerConfig
// with enableTaskAutoScaler): the supervisor samples the aggregate lag and,
// when enough samples of the recent range are above (below) a threshold,
// raises (lowers) taskCount by a step within [TaskCountMin, TaskCountMax].
// The change is a new spec version in the supervisor's history, so it is
// audited, survives a leader change, and restarts the supervisor as any
// spec update does: running tasks publish, then the new groups start.
type AutoScaler struct {
	TaskCountMax, TaskCountMin     int
	TaskCountStart                 int // the taskCount a submitted spec starts with; 0: unset
	MinTriggerScaleActionFrequency time.Duration
	LagCollectionInterval          time.Duration
	LagCollectionRange             time.Duration
	ScaleOutThreshold              int64
	TriggerScaleOutFraction        float64
	ScaleInThreshold               int64
	TriggerScaleInFraction         float64
	ScaleActionStartDelay          time.Duration
	ScaleActionPeriod              time.Duration
	ScaleInStep, ScaleOutStep      int
}

// rawAutoScaler is autoScalerConfig as posted; absent fields take Druid's
// lagBased defaults (ADMIN-API §10.2).
type rawAutoScaler struct {
	EnableTaskAutoScaler             bool     `json:"enableTaskAutoScaler"`
	AutoScalerStrategy               *string  `json:"autoScalerStrategy"`
	TaskCountMax                     *int     `json:"taskCountMax"`
	TaskCountMin                     *int     `json:"taskCountMin"`
	TaskCountStart                   *int     `json:"taskCountStart"`
	MinTriggerScaleActionFrequencyMs *int64   `json:"minTriggerScaleActionFrequencyMillis"`
	LagCollectionIntervalMs          *int64   `json:"lagCollectionIntervalMillis"`
	LagCollectionRangeMs             *int64   `json:"lagCollectionRangeMillis"`
	ScaleOutThreshold                *int64   `json:"scaleOutThreshold"`
	TriggerScaleOutFractionThreshold *float64 `json:"triggerScaleOutFractionThreshold"`
	ScaleInThreshold                 *int64   `json:"scaleInThreshold"`
	TriggerScaleInFractionThreshold  *float64 `json:"triggerScaleInFractionThreshold"`
	ScaleActionStartDelayMs          *int64   `json:"scaleActionStartDelayMillis"`
	ScaleActionPeriodMs              *int64   `json:"scaleActionPeriodMillis"`
	ScaleInStep                      *int     `json:"scaleInStep"`
	ScaleOutStep                     *int     `json:"scaleOutStep"`
}

// parseAutoScaler reads autoScalerConfig. It returns nil when autoscaling is
// off, and the normalized config (defaults filled in) to store.
func parseAutoScaler(raw json.RawMessage) (*AutoScaler, json.RawMessage, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, json.RawMessage("null"), nil
	}
	var r rawAutoScaler
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig: %v", err)
	}
	if !r.EnableTaskAutoScaler {
		norm, err := compact(raw)
		return nil, norm, err
	}
	if r.AutoScalerStrategy != nil && *r.AutoScalerStrategy != "lagBased" {
		return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig.autoScalerStrategy %q is not supported (only \"lagBased\")", *r.AutoScalerStrategy)
	}
	if r.TaskCountMax == nil || r.TaskCountMin == nil {
		return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig: taskCountMax and taskCountMin are required when enableTaskAutoScaler is true")
	}
	a := &AutoScaler{TaskCountMax: *r.TaskCountMax, TaskCountMin: *r.TaskCountMin,
		MinTriggerScaleActionFrequency: 600 * time.Second, LagCollectionInterval: 30 * time.Second,
		LagCollectionRange: 600 * time.Second, ScaleOutThreshold: 6000000, TriggerScaleOutFraction: 0.3,
		ScaleInThreshold: 1000000, TriggerScaleInFraction: 0.9, ScaleActionStartDelay: 300 * time.Second,
		ScaleActionPeriod: 60 * time.Second, ScaleInStep: 1, ScaleOutStep: 2}
	if a.TaskCountMin < 1 || a.TaskCountMax < a.TaskCountMin {
		return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig: need 1 <= taskCountMin <= taskCountMax, got %d and %d", a.TaskCountMin, a.TaskCountMax)
	}
	if r.TaskCountStart != nil {
		if *r.TaskCountStart < a.TaskCountMin || *r.TaskCountStart > a.TaskCountMax {
			return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig: need taskCountMin <= taskCountStart <= taskCountMax, got %d <= %d <= %d",
				a.TaskCountMin, *r.TaskCountStart, a.TaskCountMax)
		}
		a.TaskCountStart = *r.TaskCountStart
	}
	millis := []struct {
		name string
		v    *int64
		dst  *time.Duration
	}{
		{"minTriggerScaleActionFrequencyMillis", r.MinTriggerScaleActionFrequencyMs, &a.MinTriggerScaleActionFrequency},
		{"lagCollectionIntervalMillis", r.LagCollectionIntervalMs, &a.LagCollectionInterval},
		{"lagCollectionRangeMillis", r.LagCollectionRangeMs, &a.LagCollectionRange},
		{"scaleActionStartDelayMillis", r.ScaleActionStartDelayMs, &a.ScaleActionStartDelay},
		{"scaleActionPeriodMillis", r.ScaleActionPeriodMs, &a.ScaleActionPeriod},
	}
	for _, m := range millis {
		if m.v == nil {
			continue
		}
		if *m.v < 0 || (*m.v == 0 && m.name != "scaleActionStartDelayMillis" && m.name != "minTriggerScaleActionFrequencyMillis") {
			return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig.%s must be positive, got %d", m.name, *m.v)
		}
		*m.dst = time.Duration(*m.v) * time.Millisecond
	}
	for _, f := range []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"triggerScaleOutFractionThreshold", r.TriggerScaleOutFractionThreshold, &a.TriggerScaleOutFraction},
		{"triggerScaleInFractionThreshold", r.TriggerScaleInFractionThreshold, &a.TriggerScaleInFraction},
	} {
		if f.v == nil {
			continue
		}
		if math.IsNaN(*f.v) || *f.v < 0 || *f.v > 1 {
			return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig.%s must be within [0, 1], got %v", f.name, *f.v)
		}
		*f.dst = *f.v
	}
	for _, n := range []struct {
		name string
		v    *int64
		dst  *int64
	}{{"scaleOutThreshold", r.ScaleOutThreshold, &a.ScaleOutThreshold}, {"scaleInThreshold", r.ScaleInThreshold, &a.ScaleInThreshold}} {
		if n.v == nil {
			continue
		}
		if *n.v < 0 {
			return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig.%s must not be negative, got %d", n.name, *n.v)
		}
		*n.dst = *n.v
	}
	for _, n := range []struct {
		name string
		v    *int
		dst  *int
	}{{"scaleInStep", r.ScaleInStep, &a.ScaleInStep}, {"scaleOutStep", r.ScaleOutStep, &a.ScaleOutStep}} {
		if n.v == nil {
			continue
		}
		if *n.v < 1 {
			return nil, nil, fmt.Errorf("ioConfig.autoScalerConfig.%s must be at least 1, got %d", n.name, *n.v)
		}
		*n.dst = *n.v
	}
	fields := map[string]any{
		"enableTaskAutoScaler": true, "autoScalerStrategy": "lagBased",
		"taskCountMax": a.TaskCountMax, "taskCountMin": a.TaskCountMin,
		"minTriggerScaleActionFrequencyMillis": a.MinTriggerScaleActionFrequency.Milliseconds(),
		"lagCollectionIntervalMillis":          a.LagCollectionInterval.Milliseconds(),
		"lagCollectionRangeMillis":             a.LagCollectionRange.Milliseconds(),
		"scaleOutThreshold":                    a.ScaleOutThreshold, "triggerScaleOutFractionThreshold": a.TriggerScaleOutFraction,
		"scaleInThreshold": a.ScaleInThreshold, "triggerScaleInFractionThreshold": a.TriggerScaleInFraction,
		"scaleActionStartDelayMillis": a.ScaleActionStartDelay.Milliseconds(),
		"scaleActionPeriodMillis":     a.ScaleActionPeriod.Milliseconds(),
		"scaleInStep":                 a.ScaleInStep, "scaleOutStep": a.ScaleOutStep,
	}
	if a.TaskCountStart > 0 { // Druid leaves it out when unset
		fields["taskCountStart"] = a.TaskCountStart
	}
	norm, err := json.Marshal(fields)
	return a, norm, err
}

// lagSample is the aggregate lag at one time.
type lagSample struct {
	at  time.Time
	lag int64
}

// scaler is a running supervisor's autoscaler state. The supervisor restarts
// (and the state with it) whenever its spec changes, a scaling included.
type scaler struct {
	cfg       AutoScaler
	started   time.Time
	lastCheck time.Time
	samples   []lagSample
}

// observe records the aggregate lag of a run, at most once per collection
// interval, keeping the collection range.
func (a *scaler) observe(now time.Time, lag int64) {
	if n := len(a.samples); n > 0 && now.Sub(a.samples[n-1].at) < a.cfg.LagCollectionInterval {
		return
	}
	a.samples = append(a.samples, lagSample{now, lag})
	for len(a.samples) > 0 && now.Sub(a.samples[0].at) > a.cfg.LagCollectionRange {
		a.samples = a.samples[1:]
	}
}

// decide returns the task count to move to (and true) when a scale action
// is due: after the start delay, once per action period, no sooner than
// the minimum action frequency after the supervisor (re)started, and only
// when enough samples are past a threshold. Scaling out never exceeds the
// partitions, which bound how many groups can read.
func (a *scaler) decide(now time.Time, current, partitions int) (int, string, bool) {
	since := now.Sub(a.started)
	if since < a.cfg.ScaleActionStartDelay || since < a.cfg.MinTriggerScaleActionFrequency ||
		now.Sub(a.lastCheck) < a.cfg.ScaleActionPeriod || len(a.samples) == 0 {
		return current, "", false
	}
	a.lastCheck = now
	over, under := 0, 0
	for _, s := range a.samples {
		if s.lag > a.cfg.ScaleOutThreshold {
			over++
		}
		if s.lag < a.cfg.ScaleInThreshold {
			under++
		}
	}
	n := float64(len(a.samples))
	top := a.cfg.TaskCountMax
	if partitions > 0 {
		top = min(top, partitions)
	}
	switch {
	case float64(over)/n >= a.cfg.TriggerScaleOutFraction && current < top:
		next := min(current+a.cfg.ScaleOutStep, top)
		return next, fmt.Sprintf("%d of %d lag samples above %d", over, len(a.samples), a.cfg.ScaleOutThreshold), true
	case float64(under)/n >= a.cfg.TriggerScaleInFraction && current > a.cfg.TaskCountMin:
		next := max(current-a.cfg.ScaleInStep, a.cfg.TaskCountMin)
		return next, fmt.Sprintf("%d of %d lag samples below %d", under, len(a.samples), a.cfg.ScaleInThreshold), true
	}
	return current, "", false
}

// WithTaskCount returns the stored spec with ioConfig.taskCount set to n.
func (s *SupervisorSpec) WithTaskCount(n int) (json.RawMessage, error) {
	var v normalized
	if err := json.Unmarshal(s.Normalized, &v); err != nil {
		return nil, err
	}
	set := func(io json.RawMessage) (json.RawMessage, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(io, &m); err != nil || m == nil {
			return nil, fmt.Errorf("ioConfig of the stored spec: %v", err)
		}
		m["taskCount"] = json.RawMessage(fmt.Sprint(n))
		return json.Marshal(m)
	}
	var err error
	if v.Spec.IOConfig, err = set(v.Spec.IOConfig); err != nil {
		return nil, err
	}
	if v.IOConfig, err = set(v.IOConfig); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out, err := ParseStoredSupervisorSpec(b) // n wins over taskCountStart
	if err != nil {
		return nil, err
	}
	return out.Normalized, nil
}
