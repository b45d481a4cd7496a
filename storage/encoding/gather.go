package encoding

import (
	"encoding/binary"
	"errors"
	"math"
)

// Selective decoding: a filtered scan that keeps a few rows of a block only
// needs those rows. Frame-of-reference and raw blocks are addressable value
// by value, so reading k rows costs O(k) instead of O(block). Delta blocks
// depend on every earlier value and are decoded whole.

// GatherInts decodes the values at the positions idx (each below the block's
// value count, in any order) of an integer block into dst, resized to
// len(idx) and returned with the block's value count n.
func GatherInts(dst []int64, src []byte, idx []int32) (out []int64, n int, err error) {
	r := NewReader(src)
	enc := r.Byte()
	n = r.Int(MaxBlockValues)
	if r.Err() != nil {
		return dst, 0, r.Err()
	}
	if err := checkIdx(idx, n); err != nil {
		return dst, n, err
	}
	dst = resizeInts(dst, len(idx))
	if len(idx) == 0 {
		return dst, n, nil
	}
	switch enc {
	case IntFOR:
		mn := r.Varint()
		g := r.Uvarint()
		width := int(r.Byte())
		if r.Err() != nil {
			return dst, n, r.Err()
		}
		if width > 64 {
			return dst, n, corrupt("bit width out of range")
		}
		packed := r.Bytes(PackedLen(n, width))
		if r.Err() != nil {
			return dst, n, r.Err()
		}
		gatherFOR(dst, packed, idx, mn, g, width)
	case IntDelta:
		sp := intScratch.Get().(*[]int64)
		defer intScratch.Put(sp)
		all, err := DecodeInts((*sp)[:0], src)
		if err != nil {
			return dst, n, err
		}
		*sp = all[:0]
		for k, i := range idx {
			dst[k] = all[i]
		}
	default:
		return dst, n, corrupt("unknown integer encoding")
	}
	return dst, n, nil
}

// gatherFOR reads the packed values at idx: one unaligned 8-byte load per
// value where the stream allows (the common case), else Get.
func gatherFOR(dst []int64, packed []byte, idx []int32, mn int64, g uint64, width int) {
	dst = dst[:len(idx)]
	if width == 0 {
		for k := range dst {
			dst[k] = mn
		}
		return
	}
	if width > 56 || len(packed) < 8 {
		for k, i := range idx {
			dst[k] = mn + int64(Get(packed, int(i), width)*g)
		}
		return
	}
	mask := uint64(1)<<uint(width) - 1
	limit := len(packed) - 8
	for k, i := range idx {
		pos := int(i) * width
		off := pos >> 3
		var v uint64
		if off <= limit {
			v = binary.LittleEndian.Uint64(packed[off:]) >> uint(pos&7) & mask
		} else {
			v = Get(packed, int(i), width)
		}
		dst[k] = mn + int64(v*g)
	}
}

// GatherFloat64s is GatherInts for a block written by AppendFloat64s.
func GatherFloat64s(dst []float64, src []byte, idx []int32) (out []float64, n int, err error) {
	return gatherFloats(dst, src, idx, Float64Raw, Float64Decimal, 8,
		func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
}

// GatherFloat32s is GatherInts for a block written by AppendFloat32s.
func GatherFloat32s(dst []float32, src []byte, idx []int32) (out []float32, n int, err error) {
	return gatherFloats(dst, src, idx, Float32Raw, Float32Decimal, 4,
		func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
}

// gatherFloats reads a raw block (size bytes per value, load decodes one)
// or a decimal block, whose value is T(m / 10^e) computed in double
// precision, exactly as the whole-block decoders do.
func gatherFloats[T float32 | float64](dst []T, src []byte, idx []int32, rawEnc, decEnc byte, size int, load func([]byte) T) ([]T, int, error) {
	r := NewReader(src)
	enc := r.Byte()
	n := r.Int(MaxBlockValues)
	if r.Err() != nil {
		return dst, 0, r.Err()
	}
	if err := checkIdx(idx, n); err != nil {
		return dst, n, err
	}
	if cap(dst) < len(idx) {
		dst = make([]T, len(idx))
	}
	dst = dst[:len(idx)]
	switch enc {
	case rawEnc:
		raw := r.Bytes(size * n)
		if r.Err() != nil {
			return dst, n, r.Err()
		}
		for k, i := range idx {
			dst[k] = load(raw[size*int(i):])
		}
	case decEnc:
		e := int(r.Byte())
		if r.Err() != nil {
			return dst, n, r.Err()
		}
		if e > MaxDecimalExponent {
			return dst, n, corrupt("decimal exponent out of range")
		}
		if n == 0 {
			return dst, n, nil
		}
		sp := intScratch.Get().(*[]int64)
		defer intScratch.Put(sp)
		ms, m, err := GatherInts((*sp)[:0], src[r.Offset():], idx)
		if err != nil {
			return dst, n, err
		}
		*sp = ms[:0]
		if m != n {
			return dst, n, corrupt("decimal block count mismatch")
		}
		p := pow10[e]
		for k, v := range ms {
			dst[k] = T(float64(v) / p)
		}
	default:
		return dst, n, corrupt("unknown float encoding")
	}
	return dst, n, nil
}

// errPosition is a caller's mistake, not a corrupt block.
var errPosition = errors.New("encoding: row position outside the block")

func checkIdx(idx []int32, n int) error {
	for _, i := range idx {
		if i < 0 || int(i) >= n {
			return errPosition
		}
	}
	return nil
}

func resizeInts(b []int64, n int) []int64 {
	if cap(b) < n {
		return make([]int64, n)
	}
	return b[:n]
}
