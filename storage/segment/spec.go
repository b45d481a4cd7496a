package segment

import (
	"encoding/json"
	"fmt"
	"strings"

	"strata/aggregate/blob"
	"strata/aggregate/quantiles"
)

// Dimension is a dimension column of the segment, filled from the input
// field of the same name (or Field).
type Dimension struct {
	Name       string
	Kind       Kind // KindString (the default when zero), KindLong, KindFloat or KindDouble
	MultiValue bool // string dimensions only: rows may hold several values
	Field      string
}

// Metric is a metric column computed by an aggregator over the input rows
// that roll up into one segment row (one input row when rollup is off).
// The JSON form is Druid's aggregator spec, so an ingestion spec's
// metricsSpec entries unmarshal into it directly.
//
// Types: count, longSum, doubleSum, floatSum, longMin, longMax, doubleMin,
// doubleMax, floatMin, floatMax, longFirst, longLast, doubleFirst,
// doubleLast, floatFirst, floatLast, stringFirst, stringLast,
// HLLSketchBuild, HLLSketchMerge, thetaSketch, quantilesDoublesSketch.
type Metric struct {
	Type               string `json:"type"`
	Name               string `json:"name"`
	FieldName          string `json:"fieldName,omitempty"`
	LgK                int    `json:"lgK,omitempty"`                // HLL: log2 of buckets, default 12
	TgtHllType         string `json:"tgtHllType,omitempty"`         // HLL: HLL_4 (default), HLL_6, HLL_8
	Size               int    `json:"size,omitempty"`               // theta: nominal entries, default 16384
	IsInputThetaSketch bool   `json:"isInputThetaSketch,omitempty"` // theta: input holds serialized sketches
	K                  int    `json:"k,omitempty"`                  // quantilesDoublesSketch: default 128
	MaxStringBytes     int    `json:"maxStringBytes,omitempty"`     // stringFirst/Last: default 1024
}

// Spec describes the segments a Writer or Builder produces.
type Spec struct {
	// Fields is the layout of the input rows.
	Fields []Field
	// Dimensions and Metrics are the stored columns besides __time.
	Dimensions []Dimension
	Metrics    []Metric
	// Rollup merges rows with equal truncated time and dimension values,
	// combining their metrics. Without it every input row is kept.
	Rollup bool
	// Truncate maps a row time to its stored time (the query granularity);
	// nil keeps times as they are.
	Truncate func(ms int64) int64
	// SortColumns orders rows within the segment after __time; it defaults
	// to all dimensions in order. Names must be dimensions.
	SortColumns []string
	// Interval is the time chunk the segment covers; every row time must lie
	// in it. Required.
	Interval Interval
	// Metadata is stored in the footer as is (e.g. granularity names).
	Metadata map[string]string
	// RowsPerBlock is the number of rows per column block (default 8192).
	RowsPerBlock int
	// Compression is the default block codec; ColumnCompression overrides it
	// per column name.
	Compression       Compression
	ColumnCompression map[string]Compression
}

// DefaultRowsPerBlock is the block size used when Spec.RowsPerBlock is zero.
const DefaultRowsPerBlock = 8192

type aggInfo struct {
	kind        Kind
	complexType string
	needsField  bool
}

var aggTypes = map[string]aggInfo{
	"count":                  {kind: KindLong},
	"longSum":                {kind: KindLong, needsField: true},
	"longMin":                {kind: KindLong, needsField: true},
	"longMax":                {kind: KindLong, needsField: true},
	"doubleSum":              {kind: KindDouble, needsField: true},
	"doubleMin":              {kind: KindDouble, needsField: true},
	"doubleMax":              {kind: KindDouble, needsField: true},
	"floatSum":               {kind: KindFloat, needsField: true},
	"floatMin":               {kind: KindFloat, needsField: true},
	"floatMax":               {kind: KindFloat, needsField: true},
	"longFirst":              {kind: KindComplex, complexType: blob.TypePairLongLong, needsField: true},
	"longLast":               {kind: KindComplex, complexType: blob.TypePairLongLong, needsField: true},
	"doubleFirst":            {kind: KindComplex, complexType: blob.TypePairLongDouble, needsField: true},
	"doubleLast":             {kind: KindComplex, complexType: blob.TypePairLongDouble, needsField: true},
	"floatFirst":             {kind: KindComplex, complexType: blob.TypePairLongFloat, needsField: true},
	"floatLast":              {kind: KindComplex, complexType: blob.TypePairLongFloat, needsField: true},
	"stringFirst":            {kind: KindComplex, complexType: blob.TypePairLongString, needsField: true},
	"stringLast":             {kind: KindComplex, complexType: blob.TypePairLongString, needsField: true},
	"HLLSketchBuild":         {kind: KindComplex, complexType: blob.TypeHLL, needsField: true},
	"HLLSketchMerge":         {kind: KindComplex, complexType: blob.TypeHLL, needsField: true},
	"thetaSketch":            {kind: KindComplex, complexType: blob.TypeTheta, needsField: true},
	"quantilesDoublesSketch": {kind: KindComplex, complexType: blob.TypeQuantiles, needsField: true},
}

// MetricKind returns the column kind and complex type name an aggregator
// type produces.
func MetricKind(aggType string) (Kind, string, bool) {
	a, ok := aggTypes[aggType]
	return a.kind, a.complexType, ok
}

// resolved is a validated Spec with field references turned into indexes.
type resolved struct {
	spec       Spec
	dimField   []int // input field index per dimension
	metField   []int // input field index per metric (-1 for count)
	sortDims   []int // dimension indexes in sort order
	aggJSON    []string
	rowsPerBlk int
}

func (s *Spec) resolve() (*resolved, error) {
	r := &resolved{spec: *s, rowsPerBlk: s.RowsPerBlock}
	if r.rowsPerBlk == 0 {
		r.rowsPerBlk = DefaultRowsPerBlock
	}
	if r.rowsPerBlk < 1 || r.rowsPerBlk > maxRowsPerBlock {
		return nil, fmt.Errorf("segment: rows per block %d out of range [1, %d]", r.rowsPerBlk, maxRowsPerBlock)
	}
	if s.Interval.End <= s.Interval.Start {
		return nil, fmt.Errorf("segment: empty or inverted interval [%d, %d)", s.Interval.Start, s.Interval.End)
	}
	fields := make(map[string]int, len(s.Fields))
	for i, f := range s.Fields {
		if _, dup := fields[f.Name]; dup {
			return nil, fmt.Errorf("segment: duplicate input field %q", f.Name)
		}
		fields[f.Name] = i
	}
	names := map[string]bool{TimeColumn: true}
	addName := func(n string) error {
		if n == "" {
			return fmt.Errorf("segment: empty column name")
		}
		if names[n] {
			return fmt.Errorf("segment: duplicate column %q", n)
		}
		names[n] = true
		return nil
	}
	r.spec.Dimensions = append([]Dimension(nil), s.Dimensions...)
	dimIdx := map[string]int{}
	for i := range r.spec.Dimensions {
		d := &r.spec.Dimensions[i]
		if err := addName(d.Name); err != nil {
			return nil, err
		}
		if d.Kind == 0 {
			d.Kind = KindString
		}
		if d.Kind == KindComplex || d.Kind > KindComplex {
			return nil, fmt.Errorf("segment: dimension %q: kind %v not allowed", d.Name, d.Kind)
		}
		if d.MultiValue && d.Kind != KindString {
			return nil, fmt.Errorf("segment: dimension %q: only strings can be multi-value", d.Name)
		}
		src := d.Field
		if src == "" {
			src = d.Name
		}
		fi, ok := fields[src]
		if !ok {
			return nil, fmt.Errorf("segment: dimension %q: no input field %q", d.Name, src)
		}
		r.dimField = append(r.dimField, fi)
		dimIdx[d.Name] = i
	}
	r.spec.Metrics = append([]Metric(nil), s.Metrics...)
	for i := range r.spec.Metrics {
		m := &r.spec.Metrics[i]
		if err := addName(m.Name); err != nil {
			return nil, err
		}
		info, ok := aggTypes[m.Type]
		if !ok {
			return nil, fmt.Errorf("segment: metric %q: unknown aggregator type %q", m.Name, m.Type)
		}
		fi := -1
		if info.needsField {
			if fi, ok = fields[m.FieldName]; !ok {
				return nil, fmt.Errorf("segment: metric %q: no input field %q", m.Name, m.FieldName)
			}
		}
		if strings.HasPrefix(m.Type, "HLL") {
			if m.LgK == 0 {
				m.LgK = 12
			}
			if m.TgtHllType == "" {
				m.TgtHllType = "HLL_4"
			}
			if m.LgK < 4 || m.LgK > 21 {
				return nil, fmt.Errorf("segment: metric %q: lgK %d out of range [4, 21]", m.Name, m.LgK)
			}
			if _, err := hllType(m.TgtHllType); err != nil {
				return nil, fmt.Errorf("segment: metric %q: %v", m.Name, err)
			}
		}
		if m.Type == "thetaSketch" {
			if m.Size == 0 {
				m.Size = 16384
			}
			if m.Size < 16 || m.Size > 1<<26 || m.Size&(m.Size-1) != 0 {
				return nil, fmt.Errorf("segment: metric %q: theta size %d must be a power of two in [16, 2^26]", m.Name, m.Size)
			}
		}
		if m.Type == "quantilesDoublesSketch" {
			if m.K == 0 {
				m.K = quantiles.DefaultK
			}
			if m.K < 2 || m.K > 32768 || m.K&(m.K-1) != 0 {
				return nil, fmt.Errorf("segment: metric %q: quantiles k %d must be a power of two in [2, 32768]", m.Name, m.K)
			}
		}
		if m.Type == "stringFirst" || m.Type == "stringLast" {
			if m.MaxStringBytes == 0 {
				m.MaxStringBytes = 1024
			}
			if m.MaxStringBytes < 0 {
				return nil, fmt.Errorf("segment: metric %q: negative maxStringBytes", m.Name)
			}
		}
		r.metField = append(r.metField, fi)
		js, _ := json.Marshal(m) // cannot fail: plain struct
		r.aggJSON = append(r.aggJSON, string(js))
	}
	sortCols := s.SortColumns
	if len(sortCols) == 0 {
		for _, d := range r.spec.Dimensions {
			sortCols = append(sortCols, d.Name)
		}
	}
	used := map[string]bool{}
	for _, name := range sortCols {
		i, ok := dimIdx[name]
		if !ok {
			return nil, fmt.Errorf("segment: sort column %q is not a dimension", name)
		}
		if used[name] {
			return nil, fmt.Errorf("segment: sort column %q listed twice", name)
		}
		used[name] = true
		r.sortDims = append(r.sortDims, i)
	}
	// Dimensions not named in SortColumns still break ties, in spec order,
	// so that the row order (and rollup) is fully determined.
	for i, d := range r.spec.Dimensions {
		if !used[d.Name] {
			r.sortDims = append(r.sortDims, i)
		}
	}
	r.spec.SortColumns = sortCols
	return r, nil
}

func (r *resolved) compressionFor(col string) Compression {
	if c, ok := r.spec.ColumnCompression[col]; ok {
		return c
	}
	return r.spec.Compression
}
