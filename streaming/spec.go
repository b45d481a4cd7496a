package streaming

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"strata/ingest/input"
	"strata/ingest/nativebatch"
	"strata/interval"
)

// SupervisorSpec is a parsed, validated Kafka supervisor spec with Druid's defaults (ADMIN-API §10.2).
type SupervisorSpec struct {
	ID                string // = DataSource (one supervisor per datasource)
	DataSource        string
	Topic             string // ioConfig.topic (also accepts "stream")
	Bootstrap         string // ioConfig.consumerProperties["bootstrap.servers"] (required)
	TaskCount         int    // default 1
	Replicas          int    // default 1: copies of each task group, each on another middle manager
	TaskDuration      time.Duration
	StartDelay        time.Duration
	Period            time.Duration
	CompletionTimeout time.Duration
	UseEarliestOffset bool
	Suspended         bool
	AutoScaler        *AutoScaler     // nil: taskCount is fixed
	DataSchema        json.RawMessage // Druid dataSchema, validated with the native batch parser
	InputFormat       json.RawMessage // ioConfig.inputFormat
	TuningConfig      json.RawMessage // with defaults filled in
	// Normalized is the whole spec as GET /supervisor/{id} returns it, with
	// defaults filled in; ParseStoredSupervisorSpec(Normalized) gives it back
	// unchanged (ParseSupervisorSpec too, unless the autoscaler moved
	// taskCount away from taskCountStart).
	Normalized json.RawMessage

	// Message rejection (nil: unset); MessageTimes turns them into a task
	// group's bounds. At most one of the two late settings is set.
	LateMessageRejectionPeriod        *time.Duration
	LateMessageRejectionStartDateTime *int64 // ms since the epoch
	EarlyMessageRejectionPeriod       *time.Duration
}

// normalized is the stored form of a spec; field order is the output order.
type normalized struct {
	Type         string          `json:"type"`
	Spec         normalizedInner `json:"spec"`
	DataSchema   json.RawMessage `json:"dataSchema"`
	IOConfig     json.RawMessage `json:"ioConfig"`
	TuningConfig json.RawMessage `json:"tuningConfig"`
	Context      json.RawMessage `json:"context"`
	Suspended    bool            `json:"suspended"`
	ID           string          `json:"id"`
}

type normalizedInner struct {
	DataSchema   json.RawMessage `json:"dataSchema"`
	IOConfig     json.RawMessage `json:"ioConfig"`
	TuningConfig json.RawMessage `json:"tuningConfig"`
}

type rawSupervisor struct {
	Type         string          `json:"type"`
	Spec         *rawInner       `json:"spec"`
	DataSchema   json.RawMessage `json:"dataSchema"`
	IOConfig     json.RawMessage `json:"ioConfig"`
	TuningConfig json.RawMessage `json:"tuningConfig"`
	Context      json.RawMessage `json:"context"`
	Suspended    bool            `json:"suspended"`
}

type rawInner struct {
	DataSchema   json.RawMessage `json:"dataSchema"`
	IOConfig     json.RawMessage `json:"ioConfig"`
	TuningConfig json.RawMessage `json:"tuningConfig"`
}

type rawKafkaIO struct {
	Type                              string          `json:"type"`
	Topic                             string          `json:"topic"`
	Stream                            string          `json:"stream"`
	TopicPattern                      string          `json:"topicPattern"`
	InputFormat                       json.RawMessage `json:"inputFormat"`
	Replicas                          *int            `json:"replicas"`
	TaskCount                         *int            `json:"taskCount"`
	TaskDuration                      *string         `json:"taskDuration"`
	StartDelay                        *string         `json:"startDelay"`
	Period                            *string         `json:"period"`
	CompletionTimeout                 *string         `json:"completionTimeout"`
	UseEarliestOffset                 *bool           `json:"useEarliestOffset"`
	UseEarliestSequenceNumber         *bool           `json:"useEarliestSequenceNumber"`
	PollTimeout                       *int64          `json:"pollTimeout"`
	ConsumerProperties                map[string]any  `json:"consumerProperties"`
	AutoScalerConfig                  json.RawMessage `json:"autoScalerConfig"`
	LateMessageRejectionPeriod        json.RawMessage `json:"lateMessageRejectionPeriod"`
	EarlyMessageRejectionPeriod       json.RawMessage `json:"earlyMessageRejectionPeriod"`
	LateMessageRejectionStartDateTime json.RawMessage `json:"lateMessageRejectionStartDateTime"`
}

// Tuning holds the tuningConfig fields index_kafka tasks use.
type Tuning struct {
	MaxRowsPerSegment  int
	MaxParseExceptions int64
	// MaxSavedParseExceptions is how many parse exceptions a task keeps for
	// the supervisor's /parseErrors (at most 1000: a report, not a log).
	MaxSavedParseExceptions int
}

type rawTuning struct {
	Type                    string `json:"type"`
	MaxRowsPerSegment       *int   `json:"maxRowsPerSegment"`
	MaxRowsInMemory         *int64 `json:"maxRowsInMemory"`
	MaxParseExceptions      *int64 `json:"maxParseExceptions"`
	MaxSavedParseExceptions *int64 `json:"maxSavedParseExceptions"`
}

// tuningDefaults are Druid's Kafka tuningConfig defaults as GET echoes them.
var tuningDefaults = map[string]string{
	"type":                                "\"kafka\"",
	"appendableIndexSpec":                 `{"type":"onheap","preserveExistingMetrics":false}`,
	"maxRowsInMemory":                     "150000",
	"maxBytesInMemory":                    "0",
	"skipBytesInMemoryOverheadCheck":      "false",
	"maxRowsPerSegment":                   "5000000",
	"maxTotalRows":                        "null",
	"intermediatePersistPeriod":           "\"PT10M\"",
	"maxPendingPersists":                  "0",
	"reportParseExceptions":               "false",
	"handoffConditionTimeout":             "0",
	"resetOffsetAutomatically":            "false",
	"segmentWriteOutMediumFactory":        "null",
	"workerThreads":                       "null",
	"chatRetries":                         "8",
	"httpTimeout":                         "\"PT10S\"",
	"shutdownTimeout":                     "\"PT80S\"",
	"offsetFetchPeriod":                   "\"PT30S\"",
	"intermediateHandoffPeriod":           "\"P2147483647D\"",
	"logParseExceptions":                  "false",
	"maxParseExceptions":                  "2147483647",
	"maxSavedParseExceptions":             "0",
	"skipSequenceNumberAvailabilityCheck": "false",
	"repartitionTransitionDuration":       "\"PT120S\"",
}

// ParseSupervisorSpec validates a POSTed spec:
// {"type":"kafka","spec":{"dataSchema":..,"ioConfig":..,"tuningConfig":..},"suspended":false}
// (also the legacy flattened form with dataSchema/ioConfig/tuningConfig at top level).
// Errors are user-facing (HTTP 400 text).
//
// With the autoscaler on, a submitted spec starts at autoScalerConfig's
// taskCountStart when it has one, else at its taskCount, else at
// taskCountMin (Druid's rule for a submitted spec).
func ParseSupervisorSpec(body []byte) (*SupervisorSpec, error) { return parseSpec(body, false) }

// ParseStoredSupervisorSpec parses a spec as stored (a Normalized form, e.g.
// a version the autoscaler wrote). It differs from ParseSupervisorSpec only
// in that the stored taskCount wins over taskCountStart, as when Druid reads
// a spec back from its metadata store, so that a count the autoscaler chose
// survives a restart of the supervisor, a suspend and a resume.
func ParseStoredSupervisorSpec(stored []byte) (*SupervisorSpec, error) {
	return parseSpec(stored, true)
}

func parseSpec(body []byte, stored bool) (*SupervisorSpec, error) {
	var r rawSupervisor
	if err := strictObject(body, &r); err != nil {
		return nil, fmt.Errorf("invalid supervisor spec: %v", err)
	}
	switch r.Type {
	case "kafka":
	case "":
		return nil, fmt.Errorf("supervisor spec: missing type (only \"kafka\" is supported)")
	default:
		return nil, fmt.Errorf("supervisor spec: unsupported type %q (only \"kafka\" is supported)", r.Type)
	}
	in := rawInner{DataSchema: r.DataSchema, IOConfig: r.IOConfig, TuningConfig: r.TuningConfig}
	if r.Spec != nil {
		in = *r.Spec
	}
	ds, err := nativebatch.ParseDataSchema(in.DataSchema)
	if err != nil {
		return nil, fmt.Errorf("supervisor spec: %v", err)
	}
	s := &SupervisorSpec{ID: ds.DataSource, DataSource: ds.DataSource, Suspended: r.Suspended}
	if s.DataSchema, err = compact(in.DataSchema); err != nil {
		return nil, fmt.Errorf("supervisor spec: dataSchema: %v", err)
	}
	ioConfig, err := s.parseIOConfig(in.IOConfig, stored)
	if err != nil {
		return nil, fmt.Errorf("supervisor spec: %v", err)
	}
	if s.TuningConfig, _, err = parseTuning(in.TuningConfig); err != nil {
		return nil, fmt.Errorf("supervisor spec: %v", err)
	}
	if !stored {
		if err := checkEchoedTuning(s.TuningConfig); err != nil {
			return nil, fmt.Errorf("supervisor spec: %v", err)
		}
	}
	ctx := json.RawMessage("null")
	if len(r.Context) > 0 && !isNull(r.Context) {
		var m map[string]any
		if err := json.Unmarshal(r.Context, &m); err != nil {
			return nil, fmt.Errorf("supervisor spec: context must be an object: %v", err)
		}
		if ctx, err = compact(r.Context); err != nil {
			return nil, fmt.Errorf("supervisor spec: context: %v", err)
		}
	}
	n := normalized{
		Type:         "kafka",
		Spec:         normalizedInner{DataSchema: s.DataSchema, IOConfig: ioConfig, TuningConfig: s.TuningConfig},
		DataSchema:   s.DataSchema,
		IOConfig:     ioConfig,
		TuningConfig: s.TuningConfig,
		Context:      ctx,
		Suspended:    s.Suspended,
		ID:           s.ID,
	}
	if s.Normalized, err = json.Marshal(n); err != nil {
		return nil, fmt.Errorf("supervisor spec: %v", err)
	}
	return s, nil
}

// WithSuspended returns Normalized with "suspended" set to v (suspend/resume store a new version).
func (s *SupervisorSpec) WithSuspended(v bool) json.RawMessage {
	var n normalized
	if err := json.Unmarshal(s.Normalized, &n); err != nil {
		// Normalized always comes from ParseSupervisorSpec; fall back to a
		// generic edit if it was built by hand.
		var m map[string]json.RawMessage
		if json.Unmarshal(s.Normalized, &m) != nil || m == nil {
			m = map[string]json.RawMessage{}
		}
		m["suspended"] = json.RawMessage(fmt.Sprint(v))
		b, _ := json.Marshal(m)
		return b
	}
	n.Suspended = v
	b, _ := json.Marshal(n)
	return b
}

// parseIOConfig validates ioConfig, fills s and returns the normalized ioConfig.
// stored tells a stored spec from a submitted one (see ParseStoredSupervisorSpec).
func (s *SupervisorSpec) parseIOConfig(raw json.RawMessage, stored bool) (json.RawMessage, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, fmt.Errorf("ioConfig is required")
	}
	var io rawKafkaIO
	if err := json.Unmarshal(raw, &io); err != nil {
		return nil, fmt.Errorf("invalid ioConfig: %v", err)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("invalid ioConfig: %v", err)
	}
	if io.Type != "" && io.Type != "kafka" {
		return nil, fmt.Errorf("ioConfig.type must be \"kafka\", got %q", io.Type)
	}
	if io.TopicPattern != "" {
		return nil, fmt.Errorf("ioConfig.topicPattern is not supported; name one topic")
	}
	s.Topic = io.Topic
	if s.Topic == "" {
		s.Topic = io.Stream
	}
	if io.Topic != "" && io.Stream != "" && io.Topic != io.Stream {
		return nil, fmt.Errorf("ioConfig: topic %q and stream %q differ", io.Topic, io.Stream)
	}
	if s.Topic == "" {
		return nil, fmt.Errorf("ioConfig.topic is required")
	}
	bs, _ := io.ConsumerProperties["bootstrap.servers"].(string)
	if strings.TrimSpace(bs) == "" {
		return nil, fmt.Errorf("ioConfig.consumerProperties must contain bootstrap.servers")
	}
	s.Bootstrap = strings.TrimSpace(bs)
	if !stored {
		// A stored spec was checked when it was submitted.
		if err := input.ActivePolicy().CheckKafka(context.Background(), io.ConsumerProperties); err != nil {
			return nil, fmt.Errorf("ioConfig.%w", err)
		}
	}
	if len(io.InputFormat) == 0 || isNull(io.InputFormat) {
		return nil, fmt.Errorf("ioConfig.inputFormat is required")
	}
	if _, err := input.ParseFormat(io.InputFormat); err != nil {
		return nil, fmt.Errorf("ioConfig.inputFormat: %v", err)
	}
	var err error
	if s.InputFormat, err = compact(io.InputFormat); err != nil {
		return nil, fmt.Errorf("ioConfig.inputFormat: %v", err)
	}
	s.TaskCount, s.Replicas = 1, 1
	if io.TaskCount != nil {
		s.TaskCount = *io.TaskCount
	}
	if s.TaskCount < 1 {
		return nil, fmt.Errorf("ioConfig.taskCount must be at least 1, got %d", s.TaskCount)
	}
	if io.Replicas != nil {
		s.Replicas = *io.Replicas
	}
	if s.Replicas < 1 {
		return nil, fmt.Errorf("ioConfig.replicas must be at least 1, got %d", s.Replicas)
	}
	durations := []struct {
		name   string
		v      *string
		def    time.Duration
		dst    *time.Duration
		zeroOK bool
	}{
		{"taskDuration", io.TaskDuration, time.Hour, &s.TaskDuration, false},
		{"startDelay", io.StartDelay, 5 * time.Second, &s.StartDelay, true}, // PT0S: the first run starts at once
		{"period", io.Period, 30 * time.Second, &s.Period, false},
		{"completionTimeout", io.CompletionTimeout, 30 * time.Minute, &s.CompletionTimeout, false},
	}
	for _, d := range durations {
		*d.dst = d.def
		if d.v != nil {
			v, err := parseDuration(*d.v, d.zeroOK)
			if err != nil {
				return nil, fmt.Errorf("ioConfig.%s: %v", d.name, err)
			}
			*d.dst = v
		}
		fields[d.name] = quote(FormatDuration(*d.dst))
	}
	if io.UseEarliestOffset != nil {
		s.UseEarliestOffset = *io.UseEarliestOffset
	} else if io.UseEarliestSequenceNumber != nil {
		s.UseEarliestOffset = *io.UseEarliestSequenceNumber
	}
	auto, autoNorm, err := parseAutoScaler(io.AutoScalerConfig)
	if err != nil {
		return nil, err
	}
	s.AutoScaler = auto
	fields["autoScalerConfig"] = autoNorm
	if auto != nil { // the autoscaler owns taskCount, within its bounds
		switch {
		case auto.TaskCountStart > 0 && (!stored || io.TaskCount == nil):
			s.TaskCount = auto.TaskCountStart
		case io.TaskCount != nil:
			s.TaskCount = min(max(s.TaskCount, auto.TaskCountMin), auto.TaskCountMax)
		default:
			s.TaskCount = auto.TaskCountMin
		}
	}
	if err := s.parseRejection(&io, fields); err != nil {
		return nil, err
	}
	pollTimeout := int64(100)
	if io.PollTimeout != nil {
		if *io.PollTimeout <= 0 {
			return nil, fmt.Errorf("ioConfig.pollTimeout must be positive")
		}
		pollTimeout = *io.PollTimeout
	}
	fields["type"] = quote("kafka")
	fields["topic"] = quote(s.Topic)
	fields["stream"] = quote(s.Topic)
	fields["inputFormat"] = s.InputFormat
	fields["taskCount"] = json.RawMessage(fmt.Sprint(s.TaskCount))
	fields["replicas"] = json.RawMessage(fmt.Sprint(s.Replicas))
	fields["useEarliestOffset"] = json.RawMessage(fmt.Sprint(s.UseEarliestOffset))
	fields["useEarliestSequenceNumber"] = json.RawMessage(fmt.Sprint(s.UseEarliestOffset))
	fields["pollTimeout"] = json.RawMessage(fmt.Sprint(pollTimeout))
	for _, k := range []string{"configOverrides", "idleConfig"} {
		if _, ok := fields[k]; !ok {
			fields[k] = json.RawMessage("null")
		}
	}
	return json.Marshal(fields)
}

// parseTuning validates tuningConfig and returns it with Druid's defaults
// filled in, and the fields tasks use.
func parseTuning(raw json.RawMessage) (json.RawMessage, Tuning, error) {
	t := Tuning{MaxRowsPerSegment: nativebatch.DefaultMaxRowsPerSegment, MaxParseExceptions: math.MaxInt32}
	fields := map[string]json.RawMessage{}
	if len(raw) > 0 && !isNull(raw) {
		var r rawTuning
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, t, fmt.Errorf("invalid tuningConfig: %v", err)
		}
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, t, fmt.Errorf("invalid tuningConfig: %v", err)
		}
		if r.Type != "" && r.Type != "kafka" {
			return nil, t, fmt.Errorf("tuningConfig.type must be \"kafka\", got %q", r.Type)
		}
		if r.MaxRowsPerSegment != nil {
			if *r.MaxRowsPerSegment <= 0 {
				return nil, t, fmt.Errorf("tuningConfig.maxRowsPerSegment must be > 0, got %d", *r.MaxRowsPerSegment)
			}
			t.MaxRowsPerSegment = *r.MaxRowsPerSegment
		}
		if r.MaxRowsInMemory != nil && *r.MaxRowsInMemory <= 0 {
			return nil, t, fmt.Errorf("tuningConfig.maxRowsInMemory must be > 0, got %d", *r.MaxRowsInMemory)
		}
		if r.MaxParseExceptions != nil {
			if *r.MaxParseExceptions < 0 {
				return nil, t, fmt.Errorf("tuningConfig.maxParseExceptions must not be negative")
			}
			t.MaxParseExceptions = *r.MaxParseExceptions
		}
		if r.MaxSavedParseExceptions != nil {
			if *r.MaxSavedParseExceptions < 0 {
				return nil, t, fmt.Errorf("tuningConfig.maxSavedParseExceptions must not be negative")
			}
			t.MaxSavedParseExceptions = int(min(*r.MaxSavedParseExceptions, 1000))
		}
	}
	for k, v := range tuningDefaults {
		if cur, ok := fields[k]; !ok || (isNull(cur) && v != "null") {
			fields[k] = json.RawMessage(v)
		}
	}
	out, err := json.Marshal(fields)
	return out, t, err
}

// echoedTuningMin is the least value of tuningConfig counts and timeouts that
// tasks do not read but GET echoes: Druid stores any number there, though
// below these none means anything (maxBytesInMemory -1: no limit).
var echoedTuningMin = []struct {
	name string
	min  int64
}{{"maxBytesInMemory", -1}, {"maxPendingPersists", 0}, {"handoffConditionTimeout", 0}, {"chatRetries", 0}}

// checkEchoedTuning refuses those fields below their least value, or not
// whole numbers (README, "Checks beyond Druid's"). Only a submitted spec is
// checked: a stored one, and the index_kafka tasks made from it, are read
// as they were accepted.
func checkEchoedTuning(tuning json.RawMessage) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(tuning, &fields); err != nil {
		return fmt.Errorf("invalid tuningConfig: %v", err)
	}
	for _, f := range echoedTuningMin {
		var v int64
		if err := json.Unmarshal(fields[f.name], &v); err != nil {
			return fmt.Errorf("tuningConfig.%s must be a whole number, got %s", f.name, fields[f.name])
		}
		if v < f.min {
			return fmt.Errorf("tuningConfig.%s must be at least %d, got %d", f.name, f.min, v)
		}
	}
	return nil
}

// ParseDuration reads an ioConfig duration: an ISO-8601 period of fixed
// length (no years or months), greater than zero.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s, false) }

// parseDuration is ParseDuration, also accepting zero when zeroOK.
func parseDuration(s string, zeroOK bool) (time.Duration, error) {
	p, err := interval.ParsePeriod(s)
	if err != nil {
		return 0, err
	}
	if !p.IsFixed() {
		return 0, fmt.Errorf("period %q has no fixed length (years or months)", s)
	}
	ms := p.FixedMillis()
	if ms < 0 && zeroOK {
		return 0, fmt.Errorf("period %q must not be negative", s)
	}
	if ms < 0 || (ms == 0 && !zeroOK) {
		return 0, fmt.Errorf("period %q must be positive", s)
	}
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return 0, fmt.Errorf("period %q is too long", s)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// FormatDuration writes a duration as Joda's Duration.toString does: PT<seconds>S.
func FormatDuration(d time.Duration) string {
	ms := d.Milliseconds()
	if ms%1000 == 0 {
		return fmt.Sprintf("PT%dS", ms/1000)
	}
	return strings.TrimRight(fmt.Sprintf("PT%d.%03d", ms/1000, ms%1000), "0") + "S"
}

// strictObject decodes one JSON object and rejects trailing data.
func strictObject(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON object")
	}
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("the spec must be a JSON object")
	}
	return nil
}

func compact(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
