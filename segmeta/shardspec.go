package segmeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"strata/javacompat"
)

// ShardType is the "type" of a shard spec. The zero value is numbered, which
// is also what a segment without a shardSpec gets.
type ShardType uint8

const (
	ShardNumbered ShardType = iota
	ShardLinear
	ShardHashed
	ShardSingle
	ShardRange
	ShardTombstone
	ShardNone
	ShardNumberedOverwrite
	numShardTypes
)

var shardTypeNames = [numShardTypes]string{
	ShardNumbered:          "numbered",
	ShardLinear:            "linear",
	ShardHashed:            "hashed",
	ShardSingle:            "single",
	ShardRange:             "range",
	ShardTombstone:         "tombstone",
	ShardNone:              "none",
	ShardNumberedOverwrite: "numbered_overwrite",
}

func (t ShardType) String() string {
	if t < numShardTypes {
		return shardTypeNames[t]
	}
	return "unknown"
}

// ParseShardType maps a JSON type name to a ShardType.
func ParseShardType(s string) (ShardType, bool) {
	for i, n := range shardTypeNames {
		if n == s {
			return ShardType(i), true
		}
	}
	return 0, false
}

// Partition id spaces (Druid's PartitionIds): root-generation partitions are
// numbered below 32768, overwrite (segment-lock) partitions from 32768.
const (
	NonRootGenStartPartitionID = 32768
	NonRootGenEndPartitionID   = 65536
	// UnknownCorePartitions is numCorePartitions of legacy single/range specs.
	UnknownCorePartitions = -1
	// UnknownAtomicUpdateGroupSize is the size of an unannotated overwrite group.
	UnknownAtomicUpdateGroupSize = -1
)

// ShardSpec is a segment's partitioning within its time chunk. The common
// types (numbered, linear, tombstone, none) fit in the fixed fields; the
// dimension-aware types keep their extra attributes in Detail.
type ShardSpec struct {
	Type         ShardType
	PartitionNum int32
	// CorePartitions is "partitions" for numbered, hashed and tombstone specs and
	// "numCorePartitions" for single and range (-1 = unknown). Unused otherwise.
	CorePartitions int32
	// Segment-lock fields of numbered_overwrite.
	StartRootPartitionID  int32
	EndRootPartitionID    int32
	MinorVersion          int16
	AtomicUpdateGroupSize int16
	Detail                *ShardDetail // hashed, single, range
}

// ShardDetail holds the attributes of hashed, single and range specs.
type ShardDetail struct {
	// hashed
	BucketID          int32
	NumBuckets        int32
	PartitionFunction string // "" = null
	// Dimensions is partitionDimensions (hashed), dimensions (range) or the
	// single dimension (single, one element).
	Dimensions []string
	// Start and End bound single and range partitions; nil = open.
	Start, End Bound
	// VirtualColumns of a range spec (raw JSON array), "" = none.
	VirtualColumns RawJSON
}

// Bound is a range-partition boundary: a tuple of possibly-null strings.
// A nil Bound is an open end (JSON null).
type Bound []NullString

// NullString is a string that may be JSON null.
type NullString struct {
	S     string
	Valid bool
}

// NumberedShard returns a numbered spec.
func NumberedShard(partitionNum, partitions int32) ShardSpec {
	return ShardSpec{Type: ShardNumbered, PartitionNum: partitionNum, CorePartitions: partitions}
}

// LinearShard returns a linear spec.
func LinearShard(partitionNum int32) ShardSpec {
	return ShardSpec{Type: ShardLinear, PartitionNum: partitionNum}
}

// TombstoneShard returns the tombstone spec.
func TombstoneShard() ShardSpec {
	return ShardSpec{Type: ShardTombstone, CorePartitions: 1}
}

// IsTombstone reports whether the spec is a tombstone's.
func (s ShardSpec) IsTombstone() bool { return s.Type == ShardTombstone }

// RootPartitionRange is the [start, end) root partition range of the atomic
// update group the segment belongs to.
func (s ShardSpec) RootPartitionRange() (start, end int32) {
	if s.Type == ShardNumberedOverwrite {
		return s.StartRootPartitionID, s.EndRootPartitionID
	}
	return s.PartitionNum, s.PartitionNum + 1
}

// Minor returns the minor version (0 except for numbered_overwrite).
func (s ShardSpec) Minor() int16 {
	if s.Type == ShardNumberedOverwrite {
		return s.MinorVersion
	}
	return 0
}

// augSize returns the atomic update group size (1 except for numbered_overwrite).
func (s ShardSpec) augSize() int {
	if s.Type == ShardNumberedOverwrite {
		return int(s.AtomicUpdateGroupSize)
	}
	return 1
}

// Chunk behaviour (Druid's PartitionChunk kinds) used by the completeness check.
type chunkKind uint8

const (
	chunkNumbered chunkKind = iota // core set 0..n-1 plus appended partitions
	chunkString                    // legacy range chain from open start to open end
	chunkSingle                    // complete by itself: linear, none, tombstone, overwrite
)

func (s ShardSpec) chunkKind() chunkKind {
	switch s.Type {
	case ShardNumbered, ShardHashed:
		return chunkNumbered
	case ShardSingle, ShardRange:
		if s.CorePartitions == UnknownCorePartitions {
			return chunkString
		}
		return chunkNumbered
	default:
		return chunkSingle
	}
}

func (s ShardSpec) chunkIsStart() bool {
	switch s.chunkKind() {
	case chunkNumbered:
		return s.CorePartitions <= 0 || s.PartitionNum == 0
	case chunkString:
		return s.Detail == nil || s.Detail.Start == nil
	}
	return true
}

func (s ShardSpec) chunkIsEnd() bool {
	switch s.chunkKind() {
	case chunkNumbered:
		return s.CorePartitions <= 0 || s.PartitionNum == s.CorePartitions-1
	case chunkString:
		return s.Detail == nil || s.Detail.End == nil
	}
	return true
}

// chunkAbuts reports whether next directly follows s in a complete chain.
func (s ShardSpec) chunkAbuts(next ShardSpec) bool {
	switch s.chunkKind() {
	case chunkNumbered:
		if next.chunkKind() != chunkNumbered {
			return false
		}
		if next.PartitionNum < next.CorePartitions {
			return next.PartitionNum == s.PartitionNum+1
		}
		return next.PartitionNum > s.PartitionNum
	case chunkString:
		if next.chunkKind() != chunkString || next.chunkIsStart() || s.Detail == nil {
			return false
		}
		return next.Detail.Start.equal(s.Detail.End)
	}
	return false
}

func (b Bound) equal(o Bound) bool {
	if (b == nil) != (o == nil) || len(b) != len(o) {
		return false
	}
	for i := range b {
		if b[i] != o[i] {
			return false
		}
	}
	return true
}

// Validate checks the constraints Druid enforces when it reads a spec.
func (s ShardSpec) Validate() error {
	switch s.Type {
	case ShardNumbered, ShardHashed:
		if s.PartitionNum < 0 || s.CorePartitions < 0 {
			return fmt.Errorf("%s shardSpec: partitionNum and partitions must be >= 0", s.Type)
		}
		if s.Type == ShardHashed && s.Detail == nil {
			return errors.New("hashed shardSpec: missing detail")
		}
	case ShardLinear:
		if s.PartitionNum < 0 {
			return errors.New("linear shardSpec: partitionNum must be >= 0")
		}
	case ShardSingle, ShardRange:
		if s.PartitionNum < 0 {
			return fmt.Errorf("%s shardSpec: partitionNum must be >= 0", s.Type)
		}
		if s.CorePartitions < UnknownCorePartitions {
			return fmt.Errorf("%s shardSpec: numCorePartitions must be >= -1", s.Type)
		}
		if s.Detail == nil || len(s.Detail.Dimensions) == 0 {
			return fmt.Errorf("%s shardSpec: dimensions should be non-null and non-empty", s.Type)
		}
		if s.Type == ShardSingle {
			if len(s.Detail.Dimensions) != 1 || (s.Detail.Start != nil && len(s.Detail.Start) != 1) ||
				(s.Detail.End != nil && len(s.Detail.End) != 1) {
				return errors.New("single shardSpec: exactly one dimension and single-value bounds")
			}
		}
	case ShardTombstone, ShardNone:
		if s.PartitionNum != 0 {
			return fmt.Errorf("%s shardSpec: partitionNum must be 0", s.Type)
		}
	case ShardNumberedOverwrite:
		if s.PartitionNum < NonRootGenStartPartitionID || s.PartitionNum >= NonRootGenEndPartitionID {
			return fmt.Errorf("numbered_overwrite shardSpec: partitionId %d out of [%d, %d)",
				s.PartitionNum, NonRootGenStartPartitionID, NonRootGenEndPartitionID)
		}
		if s.StartRootPartitionID < 0 || s.StartRootPartitionID >= NonRootGenStartPartitionID ||
			s.EndRootPartitionID < 0 || s.EndRootPartitionID >= NonRootGenStartPartitionID {
			return errors.New("numbered_overwrite shardSpec: root partition ids out of [0, 32768)")
		}
		if s.MinorVersion <= 0 {
			return errors.New("numbered_overwrite shardSpec: minorVersion must be > 0")
		}
		if s.AtomicUpdateGroupSize <= 0 && s.AtomicUpdateGroupSize != UnknownAtomicUpdateGroupSize {
			return errors.New("numbered_overwrite shardSpec: atomicUpdateGroupSize must be > 0 or -1")
		}
	default:
		return fmt.Errorf("unknown shardSpec type %d", s.Type)
	}
	return nil
}

// AppendJSON appends the spec exactly as Druid serializes it (property order
// included; the single spec uses Druid's HashMap-derived order).
func (s ShardSpec) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, s.Type.String()...)
	dst = append(dst, '"')
	d := s.Detail
	if d == nil {
		d = &ShardDetail{}
	}
	switch s.Type {
	case ShardNumbered:
		dst = appendIntField(dst, "partitionNum", int64(s.PartitionNum))
		dst = appendIntField(dst, "partitions", int64(s.CorePartitions))
	case ShardLinear:
		dst = appendIntField(dst, "partitionNum", int64(s.PartitionNum))
	case ShardHashed:
		dst = appendIntField(dst, "partitionNum", int64(s.PartitionNum))
		dst = appendIntField(dst, "partitions", int64(s.CorePartitions))
		dst = appendIntField(dst, "bucketId", int64(d.BucketID))
		dst = appendIntField(dst, "numBuckets", int64(d.NumBuckets))
		dst = append(dst, `,"partitionDimensions":`...)
		dst = appendStringArray(dst, d.Dimensions)
		dst = append(dst, `,"partitionFunction":`...)
		if d.PartitionFunction == "" {
			dst = append(dst, "null"...)
		} else {
			dst = javacompat.AppendJSONString(dst, d.PartitionFunction)
		}
	case ShardSingle:
		// Druid serializes a HashMap: bucket order start, end, dimension,
		// partitionNum, numCorePartitions.
		dst = append(dst, `,"start":`...)
		dst = appendSingleBound(dst, d.Start)
		dst = append(dst, `,"end":`...)
		dst = appendSingleBound(dst, d.End)
		dst = append(dst, `,"dimension":`...)
		if len(d.Dimensions) > 0 {
			dst = javacompat.AppendJSONString(dst, d.Dimensions[0])
		} else {
			dst = append(dst, "null"...)
		}
		dst = appendIntField(dst, "partitionNum", int64(s.PartitionNum))
		dst = appendIntField(dst, "numCorePartitions", int64(s.CorePartitions))
	case ShardRange:
		dst = append(dst, `,"dimensions":`...)
		dst = appendStringArray(dst, d.Dimensions)
		if d.VirtualColumns != "" && d.VirtualColumns != "[]" {
			dst = append(dst, `,"virtualColumns":`...)
			dst = append(dst, d.VirtualColumns...)
		}
		dst = append(dst, `,"start":`...)
		dst = appendBound(dst, d.Start)
		dst = append(dst, `,"end":`...)
		dst = appendBound(dst, d.End)
		dst = appendIntField(dst, "partitionNum", int64(s.PartitionNum))
		dst = appendIntField(dst, "numCorePartitions", int64(s.CorePartitions))
	case ShardTombstone:
		// Druid writes constants regardless of input.
		dst = append(dst, `,"partitionNum":0,"partitions":1`...)
	case ShardNone:
	case ShardNumberedOverwrite:
		dst = appendIntField(dst, "partitionId", int64(s.PartitionNum))
		dst = appendIntField(dst, "startRootPartitionId", int64(s.StartRootPartitionID))
		dst = appendIntField(dst, "endRootPartitionId", int64(s.EndRootPartitionID))
		dst = appendIntField(dst, "minorVersion", int64(s.MinorVersion))
		dst = appendIntField(dst, "atomicUpdateGroupSize", int64(s.AtomicUpdateGroupSize))
	}
	return append(dst, '}')
}

// MarshalJSON implements json.Marshaler.
func (s ShardSpec) MarshalJSON() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s.AppendJSON(nil), nil
}

func appendIntField(dst []byte, name string, v int64) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

func appendStringArray(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = javacompat.AppendJSONString(dst, s)
	}
	return append(dst, ']')
}

func appendNullString(dst []byte, s NullString) []byte {
	if !s.Valid {
		return append(dst, "null"...)
	}
	return javacompat.AppendJSONString(dst, s.S)
}

func appendSingleBound(dst []byte, b Bound) []byte {
	if len(b) == 0 {
		return append(dst, "null"...)
	}
	return appendNullString(dst, b[0])
}

func appendBound(dst []byte, b Bound) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, v := range b {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendNullString(dst, v)
	}
	return append(dst, ']')
}

// UnmarshalJSON implements json.Unmarshaler with Druid's defaults: JSON null
// is numbered 0 of 1 (the DataSegment default), hashed bucketId defaults to
// partitionNum and numBuckets to partitions, missing numCorePartitions of
// single/range is -1 (unknown). Property names are case-sensitive.
func (s *ShardSpec) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		*s = NumberedShard(0, 1)
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("shardSpec: %w", err)
	}
	typ, err := jsonString(m["type"], "shardSpec type")
	if err != nil {
		return err
	}
	if typ == "" {
		return errors.New("shardSpec: missing type")
	}
	t, ok := ParseShardType(typ)
	if !ok {
		return fmt.Errorf("shardSpec: unknown or unpublishable type %q", typ)
	}
	// i32 reads an int property; absent or null gives def.
	i32 := func(name string, def int32) int32 {
		raw := m[name]
		if err != nil || isNull(raw) {
			return def
		}
		var v int64
		v, err = jsonInt(raw, "shardSpec "+name, -1<<31, 1<<31-1)
		return int32(v)
	}
	i16 := func(name string) int16 {
		v := i32(name, 0)
		if err == nil && (v < -1<<15 || v > 1<<15-1) {
			err = fmt.Errorf("shardSpec: %s out of range", name)
		}
		return int16(v)
	}
	strs := func(name string) []string {
		if err != nil || isNull(m[name]) {
			return nil
		}
		var list []*string
		if e := json.Unmarshal(m[name], &list); e != nil {
			err = fmt.Errorf("shardSpec: %s must be an array of strings", name)
			return nil
		}
		var out []string
		out, err = nonNullStrings(list, name)
		return out
	}
	out := ShardSpec{Type: t}
	switch t {
	case ShardNumbered:
		out.PartitionNum = i32("partitionNum", 0)
		out.CorePartitions = i32("partitions", 0)
	case ShardLinear:
		if isNull(m["partitionNum"]) {
			return errors.New("shardSpec: Must set partitionNum on LinearShardSpec")
		}
		out.PartitionNum = i32("partitionNum", 0)
	case ShardHashed:
		out.PartitionNum = i32("partitionNum", 0)
		out.CorePartitions = i32("partitions", 0)
		d := &ShardDetail{
			BucketID:   i32("bucketId", out.PartitionNum),
			NumBuckets: i32("numBuckets", out.CorePartitions),
			Dimensions: strs("partitionDimensions"),
		}
		if d.Dimensions == nil {
			d.Dimensions = emptyList
		}
		if err == nil {
			d.PartitionFunction, err = jsonString(m["partitionFunction"], "shardSpec partitionFunction")
		}
		out.Detail = d
	case ShardSingle:
		out.PartitionNum = i32("partitionNum", 0)
		out.CorePartitions = i32("numCorePartitions", UnknownCorePartitions)
		d := &ShardDetail{}
		if !isNull(m["dimension"]) && err == nil {
			var dim string
			dim, err = jsonString(m["dimension"], "shardSpec dimension")
			d.Dimensions = []string{dim}
		}
		if err == nil {
			d.Start, err = parseSingleBound(m["start"])
		}
		if err == nil {
			d.End, err = parseSingleBound(m["end"])
		}
		out.Detail = d
	case ShardRange:
		out.PartitionNum = i32("partitionNum", 0)
		out.CorePartitions = i32("numCorePartitions", UnknownCorePartitions)
		d := &ShardDetail{Dimensions: strs("dimensions")}
		if err == nil {
			d.Start, err = parseBound(m["start"])
		}
		if err == nil {
			d.End, err = parseBound(m["end"])
		}
		if vc := bytes.TrimSpace(m["virtualColumns"]); err == nil && !isNull(vc) {
			var buf bytes.Buffer
			if err = json.Compact(&buf, vc); err == nil {
				d.VirtualColumns = RawJSON(buf.String())
			}
		}
		out.Detail = d
	case ShardTombstone:
		out.CorePartitions = 1
	case ShardNone:
	case ShardNumberedOverwrite:
		out.PartitionNum = i32("partitionId", 0)
		out.StartRootPartitionID = i32("startRootPartitionId", 0)
		out.EndRootPartitionID = i32("endRootPartitionId", 0)
		out.MinorVersion = i16("minorVersion")
		out.AtomicUpdateGroupSize = i16("atomicUpdateGroupSize")
	}
	if err != nil {
		return err
	}
	if err := out.Validate(); err != nil {
		return err
	}
	if out.Detail != nil {
		out.Detail.Dimensions = internList(out.Detail.Dimensions)
	}
	*s = out
	return nil
}

func nonNullStrings(in []*string, name string) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]string, len(in))
	for i, p := range in {
		if p == nil {
			return nil, fmt.Errorf("shardSpec: null in %s", name)
		}
		out[i] = *p
	}
	return out, nil
}

func parseSingleBound(raw json.RawMessage) (Bound, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("shardSpec: single start/end must be a string or null: %w", err)
	}
	return Bound{{S: s, Valid: true}}, nil
}

func parseBound(raw json.RawMessage) (Bound, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var vals []*string
	if err := json.Unmarshal(raw, &vals); err != nil {
		return nil, fmt.Errorf("shardSpec: range start/end must be an array of strings or null: %w", err)
	}
	b := make(Bound, len(vals))
	for i, v := range vals {
		if v != nil {
			b[i] = NullString{S: *v, Valid: true}
		}
	}
	return b, nil
}
