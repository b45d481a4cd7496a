// Package blob defines the typed, versioned values stored in complex
// segment columns: HLL and theta sketches (the serialized forms of
// github.com/apache/datasketches-go v0.2.0), quantiles sketches (DataSketches'
// DoublesSketch, package strata/aggregate/quantiles) and the (time, value) pairs
// kept by the first/last aggregators. The type names are Druid's.
//
// A complex column records its type name and format version in the segment
// footer; each row of the column is one blob in the format below. Decoders
// return errors on malformed input and never panic.
package blob

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/quantiles"
)

// Type names of complex columns.
const (
	TypeHLL            = "HLLSketch"
	TypeTheta          = "thetaSketch"
	TypeQuantiles      = "quantilesDoublesSketch"
	TypePairLongLong   = "serializablePairLongLong"
	TypePairLongDouble = "serializablePairLongDouble"
	TypePairLongFloat  = "serializablePairLongFloat"
	TypePairLongString = "serializablePairLongString"
)

// Current format versions. Version 1 of the sketch types is the compact
// serialization of datasketches-go v0.2.0 (HllSketch.ToCompactSlice,
// CompactSketch.MarshalBinary with the default seed 9001; for quantiles,
// DataSketches' compact DoublesSketch form). Version 1 of the
// pair types is the layout described at Pair.
var versions = map[string]int{
	TypeHLL: 1, TypeTheta: 1, TypeQuantiles: 1,
	TypePairLongLong: 1, TypePairLongDouble: 1, TypePairLongFloat: 1, TypePairLongString: 1,
}

// Version returns the current format version of a known type.
func Version(typeName string) (int, bool) {
	v, ok := versions[typeName]
	return v, ok
}

// ErrCorrupt is wrapped by decoding errors caused by malformed blobs.
var ErrCorrupt = errors.New("blob: corrupt value")

// Pair is a first/last aggregator value: the time of the chosen row and its
// value, which may be null. Exactly one of Long, Double (also used for
// float pairs) and String is meaningful, depending on the column type.
//
// Layout (version 1): flags byte (bit 0: value is null), time int64
// little-endian, then the value: int64 LE (long), float64 LE (double),
// float32 LE (float) or the raw UTF-8 bytes to the end of the blob
// (string). A null value is written as zero bytes of the same width (none
// for strings).
type Pair struct {
	Time   int64
	Null   bool
	Long   int64
	Double float64
	String string
}

// AppendPair appends p encoded for the given pair type.
func AppendPair(dst []byte, typeName string, p Pair) ([]byte, error) {
	var flags byte
	if p.Null {
		flags = 1
	}
	dst = append(dst, flags)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(p.Time))
	switch typeName {
	case TypePairLongLong:
		v := p.Long
		if p.Null {
			v = 0
		}
		return binary.LittleEndian.AppendUint64(dst, uint64(v)), nil
	case TypePairLongDouble:
		v := p.Double
		if p.Null {
			v = 0
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v)), nil
	case TypePairLongFloat:
		v := float32(p.Double)
		if p.Null {
			v = 0
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v)), nil
	case TypePairLongString:
		if p.Null {
			return dst, nil
		}
		return append(dst, p.String...), nil
	}
	return dst, fmt.Errorf("blob: %q is not a pair type", typeName)
}

// DecodePair decodes a pair blob of the given type.
func DecodePair(typeName string, b []byte) (Pair, error) {
	var p Pair
	if len(b) < 9 || b[0] > 1 {
		return p, fmt.Errorf("%w: bad pair header", ErrCorrupt)
	}
	p.Null = b[0] == 1
	p.Time = int64(binary.LittleEndian.Uint64(b[1:]))
	rest := b[9:]
	want := -1
	switch typeName {
	case TypePairLongLong:
		want = 8
		if len(rest) == 8 {
			p.Long = int64(binary.LittleEndian.Uint64(rest))
		}
	case TypePairLongDouble:
		want = 8
		if len(rest) == 8 {
			p.Double = math.Float64frombits(binary.LittleEndian.Uint64(rest))
		}
	case TypePairLongFloat:
		want = 4
		if len(rest) == 4 {
			p.Double = float64(math.Float32frombits(binary.LittleEndian.Uint32(rest)))
		}
	case TypePairLongString:
		if p.Null && len(rest) != 0 {
			return p, fmt.Errorf("%w: null string pair with bytes", ErrCorrupt)
		}
		p.String = string(rest)
		return p, nil
	default:
		return p, fmt.Errorf("blob: %q is not a pair type", typeName)
	}
	if len(rest) != want {
		return p, fmt.Errorf("%w: pair value has %d bytes, want %d", ErrCorrupt, len(rest), want)
	}
	return p, nil
}

// DecodeHLL deserializes an HLL sketch blob.
func DecodeHLL(b []byte) (sk hll.HllSketch, err error) {
	defer func() {
		if r := recover(); r != nil {
			sk, err = nil, fmt.Errorf("%w: hll: %v", ErrCorrupt, r)
		}
	}()
	if err := checkHLLHeader(b); err != nil {
		return nil, err
	}
	sk, err = hll.NewHllSketchFromSlice(b, true)
	if err != nil {
		return nil, fmt.Errorf("%w: hll: %v", ErrCorrupt, err)
	}
	return sk, nil
}

// checkHLLHeader checks an HLL image's declared sizes against its length
// before the library sees it. The library allocates arrays sized from the
// header (2^lgK registers, 2^lgArr ints, coupon and aux-entry counts), so a
// hostile header could make it allocate gigabytes and crash the process,
// which no recover catches; and it silently decodes truncated images. An
// image must have exactly the size its header implies (updatable HLL_4
// images: at least that).
func checkHLLHeader(b []byte) error {
	if len(b) < 8 {
		return nil // the library rejects it
	}
	lgK, lgArr, compact := int(b[3]), int(b[4]), b[5]&8 != 0
	if lgK < 4 || lgK > 21 {
		return fmt.Errorf("%w: hll: lgK %d out of range [4, 21]", ErrCorrupt, lgK)
	}
	if !compact && lgArr > 26 {
		return fmt.Errorf("%w: hll: lgArr %d out of range", ErrCorrupt, lgArr)
	}
	u32 := func(off int) uint64 {
		if len(b) < off+4 {
			return math.MaxUint32
		}
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	}
	var need uint64
	switch mode := b[7] & 3; mode {
	case 0: // list: 8-byte preamble, then 4-byte coupons
		need = 8 + 4*uint64(b[6])
		if !compact {
			need = 8 + 4<<lgArr
		}
	case 1: // set: 12-byte preamble, then 4-byte coupons
		count := u32(8)
		if 12+4*count > uint64(len(b)) {
			return fmt.Errorf("%w: hll: %d coupons in a %d-byte image", ErrCorrupt, count, len(b))
		}
		need = 12 + 4*count
		if !compact {
			// The table has 2^lgArr slots; below 2^5 the library sizes it
			// from the count instead (bounded above).
			if lgArr < 5 {
				return nil
			}
			need = 12 + 4<<lgArr
		}
	case 2: // hll: 40-byte preamble, registers, then (HLL_4) aux entries
		k := uint64(1) << lgK
		switch tgt := b[7] >> 2 & 3; tgt {
		case 0:
			need = 40 + k/2
			if compact {
				need += 4 * u32(36)
			} else {
				// Updatable: an aux table of 2^lgArr ints is read when the aux
				// count is not 0; its size otherwise depends on library tables.
				aux := u32(36)
				if aux > 0 && (4<<lgArr < 4*aux || uint64(len(b)) < need+4<<lgArr) {
					return fmt.Errorf("%w: hll: aux table does not fit the image", ErrCorrupt)
				}
				if uint64(len(b)) < need {
					return fmt.Errorf("%w: hll: %d-byte image too short", ErrCorrupt, len(b))
				}
				return nil
			}
		case 1:
			need = 40 + 3*k/4 + 1
		case 2:
			need = 40 + k
		default:
			return fmt.Errorf("%w: hll: unknown type %d", ErrCorrupt, tgt)
		}
	default:
		return fmt.Errorf("%w: hll: unknown mode %d", ErrCorrupt, mode)
	}
	if uint64(len(b)) != need {
		return fmt.Errorf("%w: hll: %d-byte image, header implies %d", ErrCorrupt, len(b), need)
	}
	return nil
}

// DecodeQuantiles deserializes a quantiles (DoublesSketch) blob. Zero bytes
// are an empty sketch: Druid writes an empty sketch that way.
func DecodeQuantiles(b []byte) (*quantiles.Sketch, error) {
	if len(b) == 0 {
		return quantiles.New(quantiles.DefaultK)
	}
	sk, err := quantiles.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%w: quantiles: %v", ErrCorrupt, err)
	}
	return sk, nil
}

// DecodeTheta deserializes a theta sketch blob (default seed).
func DecodeTheta(b []byte) (sk *theta.CompactSketch, err error) {
	defer func() {
		if r := recover(); r != nil {
			sk, err = nil, fmt.Errorf("%w: theta: %v", ErrCorrupt, r)
		}
	}()
	// Serial version 4 packs entries with a width from the header; the
	// library trusts a width of 0 with any entry count and would allocate
	// up to 32 GiB. A real width bounds the count by the image size.
	if len(b) >= 8 && b[1] == 4 && (b[3] == 0 || b[3] > 64) {
		return nil, fmt.Errorf("%w: theta: entry width %d", ErrCorrupt, b[3])
	}
	sk, err = theta.Decode(b, theta.DefaultSeed)
	if err != nil {
		return nil, fmt.Errorf("%w: theta: %v", ErrCorrupt, err)
	}
	return sk, nil
}

// UpdateHLLString adds a string to an HLL sketch, hashing its UTF-8 bytes.
// Every writer and reader of HLL columns must hash the same way so that
// sketches built at ingestion and at query time can be merged.
func UpdateHLLString(sk hll.HllSketch, s string) error { return sk.UpdateString(s) }

// UpdateHLLDouble adds a double to an HLL sketch: the IEEE-754 bits of the
// value, with -0 folded into +0, hashed as a long (as Java's
// HllSketch.update(double) does).
func UpdateHLLDouble(sk hll.HllSketch, f float64) error {
	if f == 0 {
		f = 0
	}
	return sk.UpdateInt64(int64(math.Float64bits(f)))
}

// UpdateTheta adds a value to a theta update sketch: a string (ignored when
// empty, as in Java), an int64 or a float64. The library reports values
// that do not change the sketch (duplicates, hashes above theta, empty
// strings) as errors; none of them is a failure, so they are ignored.
func UpdateTheta(sk *theta.QuickSelectUpdateSketch, v any) {
	switch x := v.(type) {
	case string:
		_ = sk.UpdateString(x)
	case int64:
		_ = sk.UpdateInt64(x)
	case float64:
		_ = sk.UpdateFloat64(x)
	case []byte:
		_ = sk.UpdateBytes(x)
	}
}
