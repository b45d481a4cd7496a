package segmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Binary encoding of a DataSegment, used in commands and FSM snapshots.
// Every value is varint- or length-prefixed; strings and lists decode into
// their interned copies. The encoding is deterministic, and
// decode(encode(s)) == s for every valid segment (nil and empty
// Dimensions/Metrics both decode as empty).
//
// Repeating values (datasource, version, dimension and metric lists, ...)
// are written as a reference: 0 followed by the value inline, or n > 0
// naming the n-th value inlined earlier in the same stream. AppendBinary and
// DecodeBinary handle one self-contained record (always inline); Encoder and
// Decoder share a dictionary across a stream of records, which keeps a
// snapshot of a million segments small and its decoding cheap.
//
//	record  = tag(1) ds:ref version:ref start:varint len:uvarint
//	          loadSpec:str dims:lref metrics:lref flags(1) [projections:lref]
//	          [compactionState:ref] [fingerprint:ref] [binaryVersion:varint]
//	          size:varint shard
//	shard   = type(1) partitionNum:varint core:varint
//	          [startRoot endRoot minor augSize :varint] (numbered_overwrite)
//	          hasDetail(1) [bucketId numBuckets :varint function:ref
//	          dims:lref start:bound end:bound virtualColumns:str]
//	ref     = 0 str | n:uvarint          lref = 0 list | n:uvarint
//	str     = len:uvarint bytes          list = count:uvarint str*
//	bound   = n:uvarint (0 = open, else n-1 values) (valid(1) str)*
const binaryTag = 1

const (
	flagProjections = 1 << iota
	flagCompactionState
	flagFingerprint
	flagBinaryVersion
)

// Encoder writes a stream of segment records sharing a dictionary of
// repeated values. Records must be decoded, in order, by one Decoder.
type Encoder struct {
	strs  map[string]uint64
	lists map[listIdentity]uint64
}

// listIdentity identifies an interned list by its backing array.
type listIdentity struct {
	p *string
	n int
}

// NewEncoder returns an encoder with an empty dictionary.
func NewEncoder() *Encoder {
	return &Encoder{strs: map[string]uint64{}, lists: map[listIdentity]uint64{}}
}

// Append appends the record of s to dst.
func (e *Encoder) Append(dst []byte, s *DataSegment) []byte { return s.appendBinary(dst, e) }

// AppendBinary appends the segment's self-contained binary record to dst.
func (s *DataSegment) AppendBinary(dst []byte) []byte { return s.appendBinary(dst, nil) }

func (e *Encoder) ref(dst []byte, v string) []byte {
	if e != nil {
		if n, ok := e.strs[v]; ok {
			return binary.AppendUvarint(dst, n)
		}
		e.strs[v] = uint64(len(e.strs)) + 1
	}
	return appendStr(append(dst, 0), v)
}

func (e *Encoder) lref(dst []byte, list []string) []byte {
	if e != nil && len(list) > 0 {
		k := listIdentity{&list[0], len(list)}
		if n, ok := e.lists[k]; ok {
			return binary.AppendUvarint(dst, n)
		}
		e.lists[k] = uint64(len(e.lists)) + 1
	}
	return appendListKey(append(dst, 0), list)
}

func (s *DataSegment) appendBinary(dst []byte, e *Encoder) []byte {
	dst = append(dst, binaryTag)
	dst = e.ref(dst, s.DataSource)
	dst = e.ref(dst, s.Version)
	dst = binary.AppendVarint(dst, s.Interval.Start)
	dst = binary.AppendUvarint(dst, uint64(s.Interval.End)-uint64(s.Interval.Start))
	dst = appendStr(dst, string(s.LoadSpec))
	dst = e.lref(dst, s.Dimensions)
	dst = e.lref(dst, s.Metrics)
	var flags byte
	if s.Projections != nil {
		flags |= flagProjections
	}
	if s.LastCompactionState != "" {
		flags |= flagCompactionState
	}
	if s.CompactionStateFingerprint != "" {
		flags |= flagFingerprint
	}
	if s.BinaryVersion.Valid {
		flags |= flagBinaryVersion
	}
	dst = append(dst, flags)
	if s.Projections != nil {
		dst = e.lref(dst, s.Projections)
	}
	if s.LastCompactionState != "" {
		dst = e.ref(dst, string(s.LastCompactionState))
	}
	if s.CompactionStateFingerprint != "" {
		dst = e.ref(dst, s.CompactionStateFingerprint)
	}
	if s.BinaryVersion.Valid {
		dst = binary.AppendVarint(dst, int64(s.BinaryVersion.V))
	}
	dst = binary.AppendVarint(dst, s.Size)
	return s.ShardSpec.appendBinary(dst, e)
}

func (sp *ShardSpec) appendBinary(dst []byte, e *Encoder) []byte {
	dst = append(dst, byte(sp.Type))
	dst = binary.AppendVarint(dst, int64(sp.PartitionNum))
	dst = binary.AppendVarint(dst, int64(sp.CorePartitions))
	if sp.Type == ShardNumberedOverwrite {
		dst = binary.AppendVarint(dst, int64(sp.StartRootPartitionID))
		dst = binary.AppendVarint(dst, int64(sp.EndRootPartitionID))
		dst = binary.AppendVarint(dst, int64(sp.MinorVersion))
		dst = binary.AppendVarint(dst, int64(sp.AtomicUpdateGroupSize))
	}
	d := sp.Detail
	if d == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = binary.AppendVarint(dst, int64(d.BucketID))
	dst = binary.AppendVarint(dst, int64(d.NumBuckets))
	dst = e.ref(dst, d.PartitionFunction)
	dst = e.lref(dst, d.Dimensions)
	dst = appendBoundBinary(dst, d.Start)
	dst = appendBoundBinary(dst, d.End)
	return appendStr(dst, string(d.VirtualColumns))
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBoundBinary(dst []byte, b Bound) []byte {
	if b == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	for _, v := range b {
		if v.Valid {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
		dst = appendStr(dst, v.S)
	}
	return dst
}

var errTruncated = errors.New("segment: truncated binary record")

// reader decodes the primitives; the first error sticks and later reads
// return zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail(errTruncated)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errTruncated)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errTruncated)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int32() int32 {
	v := r.varint()
	if v < -1<<31 || v > 1<<31-1 {
		r.fail(errors.New("segment: int32 out of range"))
		return 0
	}
	return int32(v)
}

func (r *reader) int16() int16 {
	v := r.varint()
	if v < -1<<15 || v > 1<<15-1 {
		r.fail(errors.New("segment: int16 out of range"))
		return 0
	}
	return int16(v)
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

// str returns a fresh string; istr returns the interned copy.
func (r *reader) str() string  { return string(r.bytes()) }
func (r *reader) istr() string { return internBytes(r.bytes()) }

// list decodes an interned list, using its encoded bytes as the intern key.
func (r *reader) list() []string {
	start := r.b
	count := r.uvarint()
	if r.err != nil {
		return nil
	}
	if count > uint64(len(r.b)) { // every item takes at least one byte
		r.fail(errTruncated)
		return nil
	}
	for i := uint64(0); i < count; i++ {
		r.bytes()
	}
	if r.err != nil {
		return nil
	}
	key := start[:len(start)-len(r.b)]
	if count == 0 {
		return emptyList
	}
	return internListKey(key, func() []string {
		kr := reader{b: key}
		out := make([]string, kr.uvarint())
		for i := range out {
			out[i] = kr.istr()
		}
		return out
	})
}

func (r *reader) bound() Bound {
	n := r.uvarint()
	if n == 0 || r.err != nil {
		return nil
	}
	n--
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return nil
	}
	b := make(Bound, n)
	for i := range b {
		switch r.byte() {
		case 0:
		case 1:
			b[i].Valid = true
		default:
			r.fail(errors.New("segment: bad bound flag"))
		}
		b[i].S = r.str()
	}
	return b
}

// Decoder reads a stream written by one Encoder.
type Decoder struct {
	strs  []string
	lists [][]string
}

// NewDecoder returns a decoder with an empty dictionary.
func NewDecoder() *Decoder { return &Decoder{} }

// Decode decodes the next record of the stream into s and returns the bytes
// that follow it.
func (d *Decoder) Decode(s *DataSegment, src []byte) (rest []byte, err error) {
	return s.decodeBinary(src, d)
}

// DecodeBinary decodes one self-contained record written by AppendBinary
// into s and returns the bytes that follow it.
func (s *DataSegment) DecodeBinary(src []byte) (rest []byte, err error) {
	return s.decodeBinary(src, nil)
}

var errBadRef = errors.New("segment: binary record refers to an unknown dictionary entry")

func (r *reader) ref(d *Decoder) string {
	n := r.uvarint()
	if n == 0 {
		v := r.istr()
		if d != nil && r.err == nil {
			d.strs = append(d.strs, v)
		}
		return v
	}
	if d == nil || n > uint64(len(d.strs)) {
		r.fail(errBadRef)
		return ""
	}
	return d.strs[n-1]
}

func (r *reader) lref(d *Decoder) []string {
	n := r.uvarint()
	if n == 0 {
		v := r.list()
		if d != nil && r.err == nil && len(v) > 0 {
			d.lists = append(d.lists, v)
		}
		return v
	}
	if d == nil || n > uint64(len(d.lists)) {
		r.fail(errBadRef)
		return nil
	}
	return d.lists[n-1]
}

func (s *DataSegment) decodeBinary(src []byte, dec *Decoder) (rest []byte, err error) {
	r := reader{b: src}
	if tag := r.byte(); r.err == nil && tag != binaryTag {
		return src, fmt.Errorf("segment: unknown binary record tag %d", tag)
	}
	// On error the stream is unusable anyway; the dictionary may have grown.
	var out DataSegment
	out.DataSource = r.ref(dec)
	out.Version = r.ref(dec)
	out.Interval.Start = r.varint()
	out.Interval.End = int64(uint64(out.Interval.Start) + r.uvarint())
	out.LoadSpec = RawJSON(r.str())
	out.Dimensions = r.lref(dec)
	out.Metrics = r.lref(dec)
	flags := r.byte()
	if flags&flagProjections != 0 {
		out.Projections = r.lref(dec)
	}
	if flags&flagCompactionState != 0 {
		out.LastCompactionState = RawJSON(r.ref(dec))
	}
	if flags&flagFingerprint != 0 {
		out.CompactionStateFingerprint = r.ref(dec)
	}
	if flags&flagBinaryVersion != 0 {
		out.BinaryVersion = NullInt32{V: r.int32(), Valid: true}
	}
	out.Size = r.varint()
	sp := &out.ShardSpec
	t := r.byte()
	if t >= byte(numShardTypes) {
		r.fail(fmt.Errorf("segment: unknown shard type %d", t))
	}
	sp.Type = ShardType(t)
	sp.PartitionNum = r.int32()
	sp.CorePartitions = r.int32()
	if sp.Type == ShardNumberedOverwrite {
		sp.StartRootPartitionID = r.int32()
		sp.EndRootPartitionID = r.int32()
		sp.MinorVersion = r.int16()
		sp.AtomicUpdateGroupSize = r.int16()
	}
	switch r.byte() {
	case 0:
	case 1:
		d := &ShardDetail{}
		d.BucketID = r.int32()
		d.NumBuckets = r.int32()
		d.PartitionFunction = r.ref(dec)
		d.Dimensions = r.lref(dec)
		d.Start = r.bound()
		d.End = r.bound()
		d.VirtualColumns = RawJSON(r.str())
		sp.Detail = d
	default:
		r.fail(errors.New("segment: bad shard detail flag"))
	}
	if r.err != nil {
		return src, r.err
	}
	if err := out.Validate(); err != nil {
		return src, err
	}
	*s = out
	return r.b, nil
}
