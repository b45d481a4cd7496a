package encoding

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
)

// Floating-point block encodings (first byte of an encoded block).
const (
	// Float64Raw is n little-endian IEEE-754 doubles.
	Float64Raw byte = 3
	// Float64Decimal stores each value v as the integer m = v*10^e, where
	// float64(m) / 10^e reproduces v bit for bit, as a nested integer block.
	Float64Decimal byte = 4
	// Float32Raw is n little-endian IEEE-754 singles.
	Float32Raw byte = 5
	// Float32Decimal is Float64Decimal for singles: v == float32(float64(m)/10^e).
	Float32Decimal byte = 6
)

// MaxDecimalExponent is the largest e the decimal encodings use.
const MaxDecimalExponent = 12

// pow10 holds exact powers of ten (all below 2^53, so exactly representable).
var pow10 = func() [MaxDecimalExponent + 1]float64 {
	var p [MaxDecimalExponent + 1]float64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

var intScratch = sync.Pool{New: func() any { s := make([]int64, 0, 8192); return &s }}

// AppendFloat64s appends vals encoded as one block: decimal coding when every
// value is a short decimal (prices, rounded measurements) and that is
// smaller, raw otherwise.
func AppendFloat64s(dst []byte, vals []float64) []byte {
	sp := intScratch.Get().(*[]int64)
	defer intScratch.Put(sp)
	if ints, e, ok := decimals64(vals, (*sp)[:0]); ok {
		*sp = ints
		start := len(dst)
		dst = append(dst, Float64Decimal)
		dst = AppendUvarint(dst, uint64(len(vals)))
		dst = append(dst, byte(e))
		dst = AppendInts(dst, ints, false)
		if len(dst)-start < 8*len(vals) {
			return dst
		}
		dst = dst[:start]
	}
	dst = append(dst, Float64Raw)
	dst = AppendUvarint(dst, uint64(len(vals)))
	for _, v := range vals {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	}
	return dst
}

// decimals64 finds the smallest exponent e at which every value
// round-trips and returns the scaled integers, in one pass: when a value
// needs a larger e, the values before it are redone at the new e.
func decimals64(vals []float64, ints []int64) ([]int64, int, bool) {
	e := 0
	for i := 0; i < len(vals); i++ {
		m, ok := scaled64(vals[i], e)
		for !ok {
			if e++; e > MaxDecimalExponent {
				return ints, 0, false
			}
			m, ok = scaled64(vals[i], e)
			if ok && i > 0 {
				// Redo the earlier values at the new exponent.
				ints = ints[:0]
				i = -1
				break
			}
		}
		if i >= 0 {
			ints = append(ints, m)
		}
	}
	return ints, e, true
}

// scaled64 returns round(v*10^e) if dividing it by 10^e gives v back bit
// for bit.
func scaled64(v float64, e int) (int64, bool) {
	m := v * pow10[e]
	if !(math.Abs(m) < 1<<53) { // also rejects NaN and infinities
		return 0, false
	}
	n := int64(math.Round(m))
	return n, math.Float64bits(float64(n)/pow10[e]) == math.Float64bits(v)
}

func exact32(v float32, e int) bool {
	m := float64(v) * pow10[e]
	if !(math.Abs(m) < 1<<53) {
		return false
	}
	return math.Float32bits(float32(float64(int64(math.Round(m)))/pow10[e])) == math.Float32bits(v)
}

func decimalExponent32(vals []float32) (int, bool) {
	e := 0
	for _, v := range vals {
		for !exact32(v, e) {
			if e++; e > MaxDecimalExponent {
				return 0, false
			}
		}
	}
	for ; e <= MaxDecimalExponent; e++ {
		ok := true
		for _, v := range vals {
			if !exact32(v, e) {
				ok = false
				break
			}
		}
		if ok {
			return e, true
		}
	}
	return 0, false
}

// DecodeFloat64s decodes a block written by AppendFloat64s into dst.
func DecodeFloat64s(dst []float64, src []byte) ([]float64, error) {
	r := NewReader(src)
	enc := r.Byte()
	n := r.Int(MaxBlockValues)
	if r.Err() != nil {
		return dst, r.Err()
	}
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	switch enc {
	case Float64Raw:
		raw := r.Bytes(8 * n)
		if r.Err() != nil {
			return dst, r.Err()
		}
		for i := range dst {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case Float64Decimal:
		e := int(r.Byte())
		if r.Err() != nil {
			return dst, r.Err()
		}
		if e > MaxDecimalExponent {
			return dst, corrupt("decimal exponent out of range")
		}
		if n == 0 {
			return dst, nil
		}
		// Decode the integers in place: int64 and float64 have the same size.
		ints := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(dst))), n)
		got, err := DecodeInts(ints, src[r.Offset():])
		if err != nil {
			return dst, err
		}
		if len(got) != n || unsafe.SliceData(got) != unsafe.SliceData(ints) {
			return dst, corrupt("decimal block count mismatch")
		}
		p := pow10[e]
		for i, m := range ints {
			dst[i] = float64(m) / p
		}
	default:
		return dst, corrupt("unknown float64 encoding")
	}
	return dst, nil
}

// AppendFloat32s appends vals encoded as one block (decimal or raw).
func AppendFloat32s(dst []byte, vals []float32) []byte {
	if e, ok := decimalExponent32(vals); ok {
		sp := intScratch.Get().(*[]int64)
		ints := (*sp)[:0]
		p := pow10[e]
		for _, v := range vals {
			ints = append(ints, int64(math.Round(float64(v)*p)))
		}
		start := len(dst)
		dst = append(dst, Float32Decimal)
		dst = AppendUvarint(dst, uint64(len(vals)))
		dst = append(dst, byte(e))
		dst = AppendInts(dst, ints, false)
		*sp = ints
		intScratch.Put(sp)
		if len(dst)-start < 4*len(vals) {
			return dst
		}
		dst = dst[:start]
	}
	dst = append(dst, Float32Raw)
	dst = AppendUvarint(dst, uint64(len(vals)))
	for _, v := range vals {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

// DecodeFloat32s decodes a block written by AppendFloat32s into dst.
func DecodeFloat32s(dst []float32, src []byte) ([]float32, error) {
	r := NewReader(src)
	enc := r.Byte()
	n := r.Int(MaxBlockValues)
	if r.Err() != nil {
		return dst, r.Err()
	}
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	switch enc {
	case Float32Raw:
		raw := r.Bytes(4 * n)
		if r.Err() != nil {
			return dst, r.Err()
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case Float32Decimal:
		e := int(r.Byte())
		if r.Err() != nil {
			return dst, r.Err()
		}
		if e > MaxDecimalExponent {
			return dst, corrupt("decimal exponent out of range")
		}
		sp := intScratch.Get().(*[]int64)
		defer intScratch.Put(sp)
		ints, err := DecodeInts((*sp)[:0], src[r.Offset():])
		*sp = ints[:0]
		if err != nil {
			return dst, err
		}
		if len(ints) != n {
			return dst, corrupt("decimal block count mismatch")
		}
		p := pow10[e]
		for i, m := range ints {
			dst[i] = float32(float64(m) / p)
		}
	default:
		return dst, corrupt("unknown float32 encoding")
	}
	return dst, nil
}
