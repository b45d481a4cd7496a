// Package nativebatch runs Druid's native batch ingestion tasks, types
// `index` and `index_parallel`: rows are read from an input source, their
// timestamps parsed, transformed and filtered, rolled up by the metricsSpec
// into segments chunked by segmentGranularity, stored in deep storage and
// published. index_parallel honours tuningConfig.maxNumConcurrentSubTasks
// (default 1, sequential) by reading up to that many input splits at once in
// goroutines of the one task, rather than in sub-tasks; as with Druid's
// dynamic partitioning, rollup is then best-effort: equal rows read by
// different workers land in different partitions of their time chunk.
// splitHintSpec is accepted and ignored: each input file is one split.
package nativebatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"strata/expr"
	"strata/granularity"
	"strata/ingest/input"
	"strata/interval"
	"strata/querynode/query"
	"strata/storage/segment"
)

// Spec is a parsed, validated native batch ingestion spec.
type Spec struct {
	TaskType   string
	DataSource string

	TimestampColumn  string
	TimestampParse   func(v any) (int64, error)
	TimestampMissing *int64 // missingValue: the time of rows without one

	// Dimensions lists the declared dimensions in order. With Discover set,
	// every other input field not excluded becomes one after them
	// (schemaless ingestion: an empty list, useSchemaDiscovery or
	// includeAllDimensions).
	Dimensions []segment.Dimension
	Discover   bool
	// TypedDiscovery (useSchemaDiscovery) types discovered columns by their
	// values, as the auto dimension type does; classic schemaless ingestion
	// stores every field as a string.
	TypedDiscovery bool
	// Auto names the declared dimensions of type auto, whose Kind Build
	// sets from the values read.
	Auto       map[string]bool
	Exclusions map[string]bool
	// MVHandling is the multiValueHandling of the declared string
	// dimensions that set one (SORTED_ARRAY, SORTED_SET or ARRAY, upper
	// case); the others, discovered ones included, sort (SORTED_ARRAY).
	MVHandling map[string]string

	Metrics []segment.Metric

	SegmentGranularity granularity.Granularity
	QueryGranularity   granularity.Granularity
	Rollup             bool
	Intervals          []interval.Interval // nil: every row is kept

	Transforms []Transform
	Filter     *query.Filter

	Source input.Source
	Format input.Format

	AppendToExisting bool

	MaxRowsPerSegment  int
	MaxParseExceptions int64
	// MaxConcurrency is how many input splits Build reads at once:
	// index_parallel's maxNumConcurrentSubTasks, 1 for index. Zero counts as 1.
	MaxConcurrency int
}

// Transform is one transformSpec transform: Name := Expr over the input row.
type Transform struct {
	Name string
	Expr *expr.Expr
}

type rawTask struct {
	Type       string          `json:"type"`
	DataSource string          `json:"dataSource"`
	Spec       *rawIngestion   `json:"spec"`
	Schema     json.RawMessage `json:"schema"` // Druid's older name of "spec"
}

type rawIngestion struct {
	DataSchema   *rawDataSchema `json:"dataSchema"`
	IOConfig     *rawIOConfig   `json:"ioConfig"`
	TuningConfig *rawTuning     `json:"tuningConfig"`
}

type rawDataSchema struct {
	DataSource    string `json:"dataSource"`
	TimestampSpec *struct {
		Column       *string         `json:"column"`
		Format       string          `json:"format"`
		MissingValue json.RawMessage `json:"missingValue"`
	} `json:"timestampSpec"`
	DimensionsSpec *struct {
		Dimensions          []json.RawMessage `json:"dimensions"`
		DimensionExclusions []string          `json:"dimensionExclusions"`
		UseSchemaDiscovery  bool              `json:"useSchemaDiscovery"`
		IncludeAll          bool              `json:"includeAllDimensions"`
		SpatialDimensions   []json.RawMessage `json:"spatialDimensions"`
	} `json:"dimensionsSpec"`
	MetricsSpec     []json.RawMessage `json:"metricsSpec"`
	GranularitySpec *struct {
		Type               string          `json:"type"`
		SegmentGranularity json.RawMessage `json:"segmentGranularity"`
		QueryGranularity   json.RawMessage `json:"queryGranularity"`
		Rollup             *bool           `json:"rollup"`
		Intervals          []string        `json:"intervals"`
	} `json:"granularitySpec"`
	TransformSpec *struct {
		Transforms []struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			Expression string `json:"expression"`
		} `json:"transforms"`
		Filter json.RawMessage `json:"filter"`
	} `json:"transformSpec"`
	Parser json.RawMessage `json:"parser"`
}

type rawIOConfig struct {
	Type             string          `json:"type"`
	InputSource      json.RawMessage `json:"inputSource"`
	InputFormat      json.RawMessage `json:"inputFormat"`
	Firehose         json.RawMessage `json:"firehose"`
	AppendToExisting bool            `json:"appendToExisting"`
	DropExisting     bool            `json:"dropExisting"`
}

type rawTuning struct {
	Type              string `json:"type"`
	MaxRowsPerSegment *int   `json:"maxRowsPerSegment"`
	PartitionsSpec    *struct {
		Type              string `json:"type"`
		MaxRowsPerSegment *int   `json:"maxRowsPerSegment"`
		TargetRowsPerSeg  *int   `json:"targetRowsPerSegment"`
		MaxTotalRows      *int64 `json:"maxTotalRows"`
	} `json:"partitionsSpec"`
	MaxParseExceptions       *int64 `json:"maxParseExceptions"`
	ForceGuaranteedRollup    bool   `json:"forceGuaranteedRollup"`
	MaxNumConcurrentSubTasks *int   `json:"maxNumConcurrentSubTasks"`
}

// DefaultMaxRowsPerSegment is Druid's default for dynamic partitioning.
const DefaultMaxRowsPerSegment = 5_000_000

// ParseSpec reads and checks a task JSON of type index or index_parallel.
func ParseSpec(payload []byte) (*Spec, error) {
	var t rawTask
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("invalid task JSON: %v", err)
	}
	if t.Type != "index" && t.Type != "index_parallel" {
		return nil, fmt.Errorf("task type %q is not a native batch task (index, index_parallel)", t.Type)
	}
	if t.Spec == nil && len(t.Schema) > 0 {
		t.Spec = &rawIngestion{}
		if err := json.Unmarshal(t.Schema, t.Spec); err != nil {
			return nil, fmt.Errorf("%s task: invalid spec: %v", t.Type, err)
		}
	}
	if t.Spec == nil {
		return nil, fmt.Errorf("%s task: missing 'spec'", t.Type)
	}
	s := &Spec{TaskType: t.Type}
	if err := s.parseDataSchema(t.Spec.DataSchema); err != nil {
		return nil, fmt.Errorf("%s task: %v", t.Type, err)
	}
	if t.DataSource != "" && t.DataSource != s.DataSource {
		return nil, fmt.Errorf("%s task: dataSource %q differs from the dataSchema's %q", t.Type, t.DataSource, s.DataSource)
	}
	if err := s.parseIOConfig(t.Spec.IOConfig); err != nil {
		return nil, fmt.Errorf("%s task: %v", t.Type, err)
	}
	if err := s.parseTuning(t.Spec.TuningConfig); err != nil {
		return nil, fmt.Errorf("%s task: %v", t.Type, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%s task: %v", t.Type, err)
	}
	return s, nil
}

// ParseDataSchema parses and validates a dataSchema object on its own, as
// native batch does inside a task spec (streaming ingestion reuses it). Only
// the dataSchema fields of the returned Spec are set.
func ParseDataSchema(raw []byte) (*Spec, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("missing spec.dataSchema")
	}
	var d rawDataSchema
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("invalid dataSchema: %v", err)
	}
	s := &Spec{}
	if err := s.parseDataSchema(&d); err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Spec) parseDataSchema(d *rawDataSchema) error {
	if d == nil {
		return fmt.Errorf("missing spec.dataSchema")
	}
	if len(d.Parser) > 0 && string(d.Parser) != "null" {
		return fmt.Errorf("dataSchema.parser (the legacy parser form) is not supported; use ioConfig.inputFormat and dataSchema.timestampSpec/dimensionsSpec")
	}
	s.DataSource = strings.TrimSpace(d.DataSource)
	if s.DataSource == "" {
		return fmt.Errorf("dataSchema.dataSource must not be empty")
	}
	if strings.ContainsRune(s.DataSource, '/') {
		return fmt.Errorf("invalid dataSource %q: it must not contain '/'", s.DataSource)
	}

	// timestampSpec
	if d.TimestampSpec == nil {
		return fmt.Errorf("dataSchema.timestampSpec is required")
	}
	s.TimestampColumn = "timestamp"
	if c := d.TimestampSpec.Column; c != nil {
		s.TimestampColumn = *c
	}
	format := d.TimestampSpec.Format
	if format == "" {
		format = "auto"
	}
	parse, err := interval.ParseTimestampFormat(format)
	if err != nil {
		return fmt.Errorf("timestampSpec: %v", err)
	}
	s.TimestampParse = parse
	if mv := d.TimestampSpec.MissingValue; len(mv) > 0 && string(mv) != "null" {
		var v any
		if err := json.Unmarshal(mv, &v); err != nil {
			return fmt.Errorf("timestampSpec.missingValue: %v", err)
		}
		ms, err := parse(v)
		if err != nil {
			// Druid parses missingValue as an ISO time whatever the format.
			auto, _ := interval.ParseTimestampFormat("auto")
			if ms, err = auto(v); err != nil {
				return fmt.Errorf("timestampSpec.missingValue %s: %v", mv, err)
			}
		}
		s.TimestampMissing = &ms
	}

	// metricsSpec: Druid's aggregator JSON is storage/segment.Metric's.
	names := map[string]bool{}
	for i, raw := range d.MetricsSpec {
		var m segment.Metric
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("metricsSpec[%d]: %v", i, err)
		}
		if m.Name == "" {
			return fmt.Errorf("metricsSpec[%d]: missing name", i)
		}
		if _, _, ok := segment.MetricKind(m.Type); !ok {
			return fmt.Errorf("metricsSpec[%d] %q: unsupported aggregator type %q", i, m.Name, m.Type)
		}
		if m.Type != "count" && m.FieldName == "" {
			return fmt.Errorf("metricsSpec[%d] %q: fieldName is required for %s", i, m.Name, m.Type)
		}
		if names[m.Name] {
			return fmt.Errorf("metricsSpec: duplicate metric name %q", m.Name)
		}
		names[m.Name] = true
		s.Metrics = append(s.Metrics, m)
	}

	// dimensionsSpec
	s.Exclusions = map[string]bool{}
	if ds := d.DimensionsSpec; ds != nil {
		if len(ds.SpatialDimensions) > 0 {
			return fmt.Errorf("dimensionsSpec.spatialDimensions is not supported")
		}
		for _, e := range ds.DimensionExclusions {
			s.Exclusions[e] = true
		}
		s.TypedDiscovery = ds.UseSchemaDiscovery
		s.Discover = ds.UseSchemaDiscovery || ds.IncludeAll
		for i, raw := range ds.Dimensions {
			dim, auto, err := parseDimension(raw)
			if err != nil {
				return fmt.Errorf("dimensionsSpec.dimensions[%d]: %v", i, err)
			}
			var h struct {
				MultiValueHandling string `json:"multiValueHandling"`
			}
			if json.Unmarshal(raw, &h) == nil && h.MultiValueHandling != "" {
				if s.MVHandling == nil {
					s.MVHandling = map[string]string{}
				}
				s.MVHandling[dim.Name] = strings.ToUpper(h.MultiValueHandling)
			}
			if auto {
				if s.Auto == nil {
					s.Auto = map[string]bool{}
				}
				s.Auto[dim.Name] = true
			}
			if dim.Name == "__time" {
				return fmt.Errorf("dimensionsSpec: __time cannot be a dimension")
			}
			if names[dim.Name] {
				return fmt.Errorf("dimensionsSpec: %q is listed twice or is also a metric", dim.Name)
			}
			if s.Exclusions[dim.Name] {
				return fmt.Errorf("dimensionsSpec: %q is both a dimension and excluded", dim.Name)
			}
			names[dim.Name] = true
			s.Dimensions = append(s.Dimensions, dim)
		}
	}
	s.Discover = s.Discover || len(s.Dimensions) == 0

	// granularitySpec
	s.SegmentGranularity = granularity.Day
	s.QueryGranularity = granularity.None
	s.Rollup = true
	if g := d.GranularitySpec; g != nil {
		if g.Type != "" && g.Type != "uniform" && g.Type != "arbitrary" {
			return fmt.Errorf("granularitySpec type %q is not supported (uniform)", g.Type)
		}
		if len(g.SegmentGranularity) > 0 && string(g.SegmentGranularity) != "null" {
			if s.SegmentGranularity, err = granularity.Parse(g.SegmentGranularity); err != nil {
				return fmt.Errorf("granularitySpec.segmentGranularity: %v", err)
			}
		}
		if len(g.QueryGranularity) > 0 && string(g.QueryGranularity) != "null" {
			if s.QueryGranularity, err = granularity.Parse(g.QueryGranularity); err != nil {
				return fmt.Errorf("granularitySpec.queryGranularity: %v", err)
			}
		}
		if g.Rollup != nil {
			s.Rollup = *g.Rollup
		}
		for _, iv := range g.Intervals {
			p, err := interval.Parse(iv)
			if err != nil {
				return fmt.Errorf("granularitySpec.intervals: %v", err)
			}
			if p.IsEmpty() {
				return fmt.Errorf("granularitySpec.intervals: interval %s is empty", iv)
			}
			s.Intervals = append(s.Intervals, p)
		}
	}
	if s.SegmentGranularity.IsNone() {
		return fmt.Errorf("segmentGranularity NONE is not allowed")
	}
	if !s.QueryGranularity.IsNone() && !granularity.Finer(s.QueryGranularity, s.SegmentGranularity) {
		return fmt.Errorf("queryGranularity %s is coarser than segmentGranularity %s",
			granularity.String(s.QueryGranularity), granularity.String(s.SegmentGranularity))
	}
	// transformSpec
	if ts := d.TransformSpec; ts != nil {
		seen := map[string]bool{}
		for i, tr := range ts.Transforms {
			if tr.Type != "" && tr.Type != "expression" {
				return fmt.Errorf("transformSpec.transforms[%d]: unsupported type %q (expression)", i, tr.Type)
			}
			if tr.Name == "" {
				return fmt.Errorf("transformSpec.transforms[%d]: missing name", i)
			}
			if seen[tr.Name] {
				return fmt.Errorf("transformSpec: transform %q defined twice", tr.Name)
			}
			seen[tr.Name] = true
			x, err := expr.Compile(tr.Expression)
			if err != nil {
				return fmt.Errorf("transformSpec.transforms[%d] %q: %v", i, tr.Name, err)
			}
			s.Transforms = append(s.Transforms, Transform{Name: tr.Name, Expr: x})
		}
		if len(ts.Filter) > 0 && string(ts.Filter) != "null" {
			f, err := query.ParseFilter(ts.Filter)
			if err != nil {
				return fmt.Errorf("transformSpec.filter: %v", err)
			}
			if err := checkFilter(f); err != nil {
				return fmt.Errorf("transformSpec.filter: %v", err)
			}
			s.Filter = f
		}
	}
	return nil
}

// parseDimension reads one dimensionsSpec entry; auto reports the auto
// type, whose kind the values decide (a string until then).
func parseDimension(raw json.RawMessage) (d segment.Dimension, auto bool, err error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		if name == "" {
			return segment.Dimension{}, false, fmt.Errorf("empty dimension name")
		}
		return segment.Dimension{Name: name, Kind: segment.KindString, MultiValue: true}, false, nil
	}
	var o struct {
		Type               string `json:"type"`
		Name               string `json:"name"`
		MultiValueHandling string `json:"multiValueHandling"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return segment.Dimension{}, false, fmt.Errorf("a dimension is a name or an object: %v", err)
	}
	if o.Name == "" {
		return segment.Dimension{}, false, fmt.Errorf("dimension without a name")
	}
	d = segment.Dimension{Name: o.Name}
	switch strings.ToLower(o.Type) {
	case "", "string":
		d.Kind, d.MultiValue = segment.KindString, true
	case "long":
		d.Kind = segment.KindLong
	case "double":
		d.Kind = segment.KindDouble
	case "float":
		d.Kind = segment.KindFloat
	case "auto":
		d.Kind, auto = segment.KindString, true
	default:
		return d, false, fmt.Errorf("dimension %q: unsupported type %q (string, long, float, double, auto)", o.Name, o.Type)
	}
	switch strings.ToUpper(o.MultiValueHandling) {
	case "", "SORTED_ARRAY", "SORTED_SET", "ARRAY":
	default:
		return d, false, fmt.Errorf("dimension %q: unknown multiValueHandling %q", o.Name, o.MultiValueHandling)
	}
	return d, auto, nil
}

func (s *Spec) parseIOConfig(io *rawIOConfig) error {
	if io == nil {
		return fmt.Errorf("missing spec.ioConfig")
	}
	if len(io.Firehose) > 0 && string(io.Firehose) != "null" {
		return fmt.Errorf("ioConfig.firehose is not supported; use ioConfig.inputSource and inputFormat")
	}
	if len(io.InputSource) == 0 || string(io.InputSource) == "null" {
		return fmt.Errorf("ioConfig.inputSource is required")
	}
	src, err := input.ParseSource(io.InputSource)
	if err != nil {
		return fmt.Errorf("ioConfig.inputSource: %v", err)
	}
	s.Source = src
	if len(io.InputFormat) == 0 || string(io.InputFormat) == "null" {
		return fmt.Errorf("ioConfig.inputFormat is required")
	}
	if s.Format, err = input.ParseFormat(io.InputFormat); err != nil {
		return fmt.Errorf("ioConfig.inputFormat: %v", err)
	}
	if io.DropExisting {
		return fmt.Errorf("ioConfig.dropExisting is not supported")
	}
	s.AppendToExisting = io.AppendToExisting
	return nil
}

func (s *Spec) parseTuning(t *rawTuning) error {
	s.MaxRowsPerSegment = DefaultMaxRowsPerSegment
	s.MaxParseExceptions = math.MaxInt32 // Druid's default: unlimited
	s.MaxConcurrency = 1                 // Druid's default; index tasks have no such setting
	if t == nil {
		return nil
	}
	if t.MaxNumConcurrentSubTasks != nil && s.TaskType == "index_parallel" {
		if *t.MaxNumConcurrentSubTasks <= 0 {
			return fmt.Errorf("tuningConfig: maxNumConcurrentSubTasks must be > 0, got %d", *t.MaxNumConcurrentSubTasks)
		}
		s.MaxConcurrency = *t.MaxNumConcurrentSubTasks
	}
	if t.MaxRowsPerSegment != nil {
		s.MaxRowsPerSegment = *t.MaxRowsPerSegment
	}
	if p := t.PartitionsSpec; p != nil {
		if p.Type != "" && p.Type != "dynamic" {
			return fmt.Errorf("tuningConfig.partitionsSpec type %q is not supported (dynamic)", p.Type)
		}
		if p.MaxRowsPerSegment != nil {
			s.MaxRowsPerSegment = *p.MaxRowsPerSegment
		}
	}
	if s.MaxRowsPerSegment <= 0 {
		return fmt.Errorf("tuningConfig: maxRowsPerSegment must be > 0, got %d", s.MaxRowsPerSegment)
	}
	if t.MaxParseExceptions != nil {
		if *t.MaxParseExceptions < 0 {
			return fmt.Errorf("tuningConfig: maxParseExceptions must not be negative")
		}
		s.MaxParseExceptions = *t.MaxParseExceptions
	}
	return nil
}

// check validates what spans sections: fields and names.
func (s *Spec) check() error {
	for _, m := range s.Metrics {
		if m.Name == "__time" {
			return fmt.Errorf("metric name __time is reserved")
		}
	}
	return nil
}

// LockIntervals are the time chunks the task locks: the granularitySpec
// intervals widened to whole segment-granularity buckets, or Eternity.
func (s *Spec) LockIntervals() []interval.Interval {
	if len(s.Intervals) == 0 {
		return []interval.Interval{interval.Eternity}
	}
	out := make([]interval.Interval, 0, len(s.Intervals))
	for _, iv := range s.Intervals {
		w := iv
		if !s.SegmentGranularity.IsAll() {
			w.Start = s.SegmentGranularity.Bucket(iv.Start)
			w.End = s.SegmentGranularity.Next(s.SegmentGranularity.Bucket(iv.End - 1))
		} else {
			w = interval.Eternity
		}
		out = append(out, w)
	}
	return query.Condense(out)
}
