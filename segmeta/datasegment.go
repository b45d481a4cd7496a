// Package segment holds the segment metadata model of the store (Druid's
// DataSegment, SegmentId and shard specs), their JSON and binary encodings,
// and the versioned segment timeline that decides which segments are visible.
package segmeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"strata/interval"
	"strata/javacompat"
)

// DataSegment is the metadata of one segment. Strings and lists produced by
// the decoders (and by Intern) are shared between segments: never modify
// Dimensions, Metrics, Projections or ShardSpec.Detail in place.
type DataSegment struct {
	DataSource string
	Interval   interval.Interval
	Version    string
	// LoadSpec is the compact JSON object telling servers where to fetch the
	// segment from; "" is JSON null.
	LoadSpec    RawJSON
	Dimensions  []string
	Metrics     []string
	Projections []string // nil: absent (segment not projection-aware)
	ShardSpec   ShardSpec
	// LastCompactionState is the compact JSON object of the compaction that
	// wrote the segment; "" = absent.
	LastCompactionState        RawJSON
	CompactionStateFingerprint string // "" = absent
	BinaryVersion              NullInt32
	Size                       int64
}

// RawJSON is a compact JSON value kept verbatim.
type RawJSON string

// NullInt32 is an int32 that may be JSON null.
type NullInt32 struct {
	V     int32
	Valid bool
}

// ID returns the segment's id.
func (s *DataSegment) ID() ID {
	return ID{DataSource: s.DataSource, Interval: s.Interval, Version: s.Version, PartitionNum: s.ShardSpec.PartitionNum}
}

// IsTombstone reports whether the segment is a data-less tombstone.
func (s *DataSegment) IsTombstone() bool { return s.ShardSpec.Type == ShardTombstone }

// Validate checks what Druid checks when it constructs a segment.
func (s *DataSegment) Validate() error {
	if s.DataSource == "" {
		return errors.New("segment: dataSource is not specified")
	}
	if s.Interval.End < s.Interval.Start {
		return errors.New("segment: interval end precedes start")
	}
	if s.Size < 0 {
		return errors.New("segment: size must be >= 0")
	}
	return s.ShardSpec.Validate()
}

// Intern replaces the segment's strings and lists by their shared canonical
// copies. The decoders already do this; call it on segments built by hand
// that will be kept for long.
func (s *DataSegment) Intern() {
	s.DataSource = internString(s.DataSource)
	s.Version = internString(s.Version)
	s.Dimensions = internList(cleanList(s.Dimensions))
	if s.Dimensions == nil {
		s.Dimensions = emptyList
	}
	s.Metrics = internList(cleanList(s.Metrics))
	if s.Metrics == nil {
		s.Metrics = emptyList
	}
	s.Projections = internList(cleanList(s.Projections))
	s.LastCompactionState = RawJSON(internString(string(s.LastCompactionState)))
	s.CompactionStateFingerprint = internString(s.CompactionStateFingerprint)
	if d := s.ShardSpec.Detail; d != nil {
		d.Dimensions = internList(d.Dimensions)
		d.PartitionFunction = internString(d.PartitionFunction)
	}
}

// cleanList drops empty names as Druid does; nil stays nil.
func cleanList(list []string) []string {
	for _, s := range list {
		if s == "" {
			out := make([]string, 0, len(list))
			for _, t := range list {
				if t != "" {
					out = append(out, t)
				}
			}
			return out
		}
	}
	return list
}

// MarshalJSON writes the segment exactly as Druid's DataSegment serializes.
// Note that json.Marshal then escapes <, > and & (Jackson does not); use
// AppendJSON, or an Encoder with SetEscapeHTML(false), for identical bytes.
func (s *DataSegment) MarshalJSON() ([]byte, error) {
	return s.AppendJSON(make([]byte, 0, 512)), nil
}

// AppendJSON appends the segment's JSON object.
func (s *DataSegment) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = s.AppendJSONFields(dst)
	return append(dst, '}')
}

// AppendJSONFields appends the object's members without the braces, so that
// callers can add members (e.g. "overshadowed") before closing it.
func (s *DataSegment) AppendJSONFields(dst []byte) []byte {
	dst = append(dst, `"dataSource":`...)
	dst = javacompat.AppendJSONString(dst, s.DataSource)
	dst = append(dst, `,"interval":"`...)
	dst = interval.AppendMillis(dst, s.Interval.Start, nil)
	dst = append(dst, '/')
	dst = interval.AppendMillis(dst, s.Interval.End, nil)
	dst = append(dst, `","version":`...)
	dst = javacompat.AppendJSONString(dst, s.Version)
	dst = append(dst, `,"loadSpec":`...)
	if s.LoadSpec == "" {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, s.LoadSpec...)
	}
	dst = append(dst, `,"dimensions":`...)
	dst = appendCSV(dst, s.Dimensions)
	dst = append(dst, `,"metrics":`...)
	dst = appendCSV(dst, s.Metrics)
	if s.Projections != nil {
		dst = append(dst, `,"projections":`...)
		dst = appendCSV(dst, s.Projections)
	}
	dst = append(dst, `,"shardSpec":`...)
	dst = s.ShardSpec.AppendJSON(dst)
	if s.LastCompactionState != "" {
		dst = append(dst, `,"lastCompactionState":`...)
		dst = append(dst, s.LastCompactionState...)
	}
	if s.CompactionStateFingerprint != "" {
		dst = append(dst, `,"compactionStateFingerprint":`...)
		dst = javacompat.AppendJSONString(dst, s.CompactionStateFingerprint)
	}
	dst = append(dst, `,"binaryVersion":`...)
	if s.BinaryVersion.Valid {
		dst = strconv.AppendInt(dst, int64(s.BinaryVersion.V), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, s.Size, 10)
	dst = append(dst, `,"identifier":"`...)
	if needsEscape(s.DataSource) || needsEscape(s.Version) {
		dst = javacompat.AppendJSONStringContent(dst, s.ID().String())
	} else {
		dst = s.ID().AppendTo(dst)
	}
	return append(dst, '"')
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func appendCSV(dst []byte, list []string) []byte {
	dst = append(dst, '"')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = javacompat.AppendJSONStringContent(dst, s)
	}
	return append(dst, '"')
}

// UnmarshalJSON reads a segment as Druid does: dimensions, metrics and
// projections as comma-joined strings (arrays are accepted too), a missing
// shardSpec as numbered 0 of 1, "identifier" ignored. Property names are
// case-sensitive and unknown properties are ignored.
func (s *DataSegment) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	if m == nil {
		return errors.New("segment: null")
	}
	var out DataSegment
	var err error
	if out.DataSource, err = jsonString(m["dataSource"], "dataSource"); err != nil {
		return err
	}
	if isNull(m["interval"]) {
		return errors.New("segment: interval is required")
	}
	ivs, err := jsonString(m["interval"], "interval")
	if err != nil {
		return err
	}
	if out.Interval, err = interval.Parse(ivs); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	if isNull(m["version"]) {
		return errors.New("segment: version is required")
	}
	if out.Version, err = jsonString(m["version"], "version"); err != nil {
		return err
	}
	if raw := m["loadSpec"]; !isNull(raw) {
		if out.LoadSpec, err = compactObject(raw, "loadSpec"); err != nil {
			return err
		}
	}
	if out.Dimensions, err = jsonCSV(m["dimensions"], "dimensions"); err != nil {
		return err
	}
	if out.Metrics, err = jsonCSV(m["metrics"], "metrics"); err != nil {
		return err
	}
	if raw := m["projections"]; !isNull(raw) {
		if out.Projections, err = jsonCSV(raw, "projections"); err != nil {
			return err
		}
		if out.Projections == nil {
			out.Projections = emptyList
		}
	}
	if err := out.ShardSpec.UnmarshalJSON(nullIfMissing(m["shardSpec"])); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	if raw := m["lastCompactionState"]; !isNull(raw) {
		if out.LastCompactionState, err = compactObject(raw, "lastCompactionState"); err != nil {
			return err
		}
	}
	if out.CompactionStateFingerprint, err = jsonString(m["compactionStateFingerprint"], "compactionStateFingerprint"); err != nil {
		return err
	}
	if raw := m["binaryVersion"]; !isNull(raw) {
		v, err := jsonInt(raw, "binaryVersion", -1<<31, 1<<31-1)
		if err != nil {
			return err
		}
		out.BinaryVersion = NullInt32{V: int32(v), Valid: true}
	}
	if raw := m["size"]; !isNull(raw) {
		if out.Size, err = jsonInt(raw, "size", -1<<63, 1<<63-1); err != nil {
			return err
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	out.Intern()
	*s = out
	return nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

func nullIfMissing(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func jsonString(raw json.RawMessage, name string) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("segment: %s must be a string", name)
	}
	return v, nil
}

// jsonInt accepts an integral JSON number or a numeric string (Jackson
// coerces both).
func jsonInt(raw json.RawMessage, name string, lo, hi int64) (int64, error) {
	raw = bytes.TrimSpace(raw)
	text := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, fmt.Errorf("segment: %s: %w", name, err)
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("segment: %s must be an integer", name)
		}
		v = int64(f)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("segment: %s out of range", name)
	}
	return v, nil
}

// jsonCSV reads a comma-joined string (or an array of strings); null gives nil.
func jsonCSV(raw json.RawMessage, name string) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	if raw[0] == '[' {
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("segment: %s must be a string or an array of strings", name)
		}
		return cleanList(list), nil
	}
	var csv string
	if err := json.Unmarshal(raw, &csv); err != nil {
		return nil, fmt.Errorf("segment: %s must be a comma-joined string", name)
	}
	if csv == "" {
		return []string{}, nil
	}
	return cleanList(strings.Split(csv, ",")), nil
}

func compactObject(raw json.RawMessage, name string) (RawJSON, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return "", fmt.Errorf("segment: %s must be an object", name)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return "", fmt.Errorf("segment: %s: %w", name, err)
	}
	return RawJSON(buf.String()), nil
}

// MarshalJSON writes the raw value ("" as null).
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// DimensionsCSV returns the dimensions as Druid's comma-joined string.
func (s *DataSegment) DimensionsCSV() string { return strings.Join(s.Dimensions, ",") }

// MetricsCSV returns the metrics as Druid's comma-joined string.
func (s *DataSegment) MetricsCSV() string { return strings.Join(s.Metrics, ",") }
