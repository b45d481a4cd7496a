package encoding

import (
	"math/bits"
)

// Integer block encodings (first byte of an encoded block).
const (
	// IntFOR is frame of reference: (v - min) / gcd, bit-packed.
	IntFOR byte = 1
	// IntDelta is delta coding: (v[i] - v[i-1] - minDelta) / gcd, bit-packed.
	IntDelta byte = 2
)

// MaxBlockValues bounds the value count a decoder accepts, so that a corrupt
// count cannot make it allocate without limit.
const MaxBlockValues = 1 << 22

// AppendInts appends vals encoded as one integer block. It always considers
// frame-of-reference coding; with tryDelta it also considers delta coding
// (good for sorted data such as timestamps) and keeps the smaller.
func AppendInts(dst []byte, vals []int64, tryDelta bool) []byte {
	n := len(vals)
	if n == 0 {
		dst = append(dst, IntFOR)
		return AppendUvarint(dst, 0)
	}
	mn, mx := vals[0], vals[0]
	for _, v := range vals[1:] {
		mn = min(mn, v)
		mx = max(mx, v)
	}
	g, fw := uint64(0), -1 // FOR parameters, computed when needed
	if tryDelta && n > 1 {
		if dmin, dg, dWidth, ok := deltaParams(vals); ok {
			// Every common divisor of the offsets from the minimum divides
			// every delta, so FOR's width is at least the width at the delta
			// GCD: when delta coding wins even then, skip FOR's own GCD.
			deltaSize := PackedLen(n-1, dWidth) + 10
			win := deltaSize < PackedLen(n, BitsFor(uint64(mx-mn)/dg))
			if !win {
				g = forGCD(vals, mn, mx)
				fw = BitsFor(uint64(mx-mn) / g)
				win = deltaSize < PackedLen(n, fw)
			}
			if win {
				dst = append(dst, IntDelta)
				dst = AppendUvarint(dst, uint64(n))
				dst = AppendVarint(dst, vals[0])
				dst = AppendVarint(dst, dmin)
				dst = AppendUvarint(dst, dg)
				dst = append(dst, byte(dWidth))
				return packDeltas(dst, vals, dmin, dg, dWidth)
			}
		}
	}
	if fw < 0 {
		g = forGCD(vals, mn, mx)
		fw = BitsFor(uint64(mx-mn) / g)
	}
	dst = append(dst, IntFOR)
	dst = AppendUvarint(dst, uint64(n))
	dst = AppendVarint(dst, mn)
	dst = AppendUvarint(dst, g)
	dst = append(dst, byte(fw))
	return packFOR(dst, vals, mn, g, fw)
}

// forGCD is the greatest common divisor of the offsets v - mn (1 when all
// values are equal).
func forGCD(vals []int64, mn, mx int64) uint64 {
	var g uint64
	if mx != mn {
		for _, v := range vals {
			if d := uint64(v - mn); d != 0 && d != g {
				g = gcd(g, d)
				if g == 1 {
					break
				}
			}
		}
	}
	return max(g, 1)
}

// deltaParams computes the parameters of delta coding, or ok=false when a
// difference overflows int64.
func deltaParams(vals []int64) (dmin int64, g uint64, width int, ok bool) {
	dmin, dmax := int64(0), int64(0)
	for i := 1; i < len(vals); i++ {
		a, b := vals[i], vals[i-1]
		d := a - b
		if (a^b)&(a^d) < 0 { // signed overflow
			return 0, 0, 0, false
		}
		if i == 1 {
			dmin, dmax = d, d
		} else {
			dmin = min(dmin, d)
			dmax = max(dmax, d)
		}
	}
	if dmax != dmin {
		for i := 1; i < len(vals); i++ {
			if x := uint64(vals[i] - vals[i-1] - dmin); x != 0 && x != g {
				g = gcd(g, x)
				if g == 1 {
					break
				}
			}
		}
	}
	if g == 0 {
		g = 1
	}
	return dmin, g, BitsFor(uint64(dmax-dmin) / g), true
}

// packFOR and packDeltas pack through a small stack buffer so that encoding
// needs no allocation per block.
func packFOR(dst []byte, vals []int64, mn int64, g uint64, width int) []byte {
	var buf [256]uint64
	for len(vals) > 0 {
		k := min(len(vals), len(buf))
		if g == 1 {
			for i, v := range vals[:k] {
				buf[i] = uint64(v - mn)
			}
		} else {
			for i, v := range vals[:k] {
				buf[i] = uint64(v-mn) / g
			}
		}
		dst = packAligned(dst, buf[:k], width)
		vals = vals[k:]
	}
	return dst
}

func packDeltas(dst []byte, vals []int64, dmin int64, g uint64, width int) []byte {
	var buf [256]uint64
	k := 0
	for i := 1; i < len(vals); i++ {
		buf[k] = uint64(vals[i]-vals[i-1]-dmin) / g
		k++
		if k == len(buf) {
			dst = packAligned(dst, buf[:k], width)
			k = 0
		}
	}
	return packAligned(dst, buf[:k], width)
}

// packAligned packs a chunk of a longer stream. Chunks are 256 values, and
// 256*width bits is a whole number of bytes, so chunks concatenate into one
// continuous bit stream.
func packAligned(dst []byte, vals []uint64, width int) []byte {
	return Pack(dst, vals, width)
}

// DecodeInts decodes an integer block into dst (resized and returned).
func DecodeInts(dst []int64, src []byte) ([]int64, error) {
	r := NewReader(src)
	enc := r.Byte()
	n := r.Int(MaxBlockValues)
	if r.Err() != nil {
		return dst, r.Err()
	}
	if cap(dst) < n {
		dst = make([]int64, n)
	}
	dst = dst[:n]
	if n == 0 {
		return dst, nil
	}
	switch enc {
	case IntFOR:
		mn := r.Varint()
		g := r.Uvarint()
		width := int(r.Byte())
		if r.Err() != nil {
			return dst, r.Err()
		}
		packed := r.Bytes(PackedLen(n, min(width, 64)))
		if r.Err() != nil {
			return dst, r.Err()
		}
		if _, err := Unpack(dst, packed, n, width); err != nil {
			return dst, err
		}
		if g == 1 {
			for i, v := range dst {
				dst[i] = mn + v
			}
		} else {
			for i, v := range dst {
				dst[i] = mn + int64(uint64(v)*g)
			}
		}
	case IntDelta:
		first := r.Varint()
		dmin := r.Varint()
		g := r.Uvarint()
		width := int(r.Byte())
		if r.Err() != nil {
			return dst, r.Err()
		}
		packed := r.Bytes(PackedLen(n-1, min(width, 64)))
		if r.Err() != nil {
			return dst, r.Err()
		}
		if _, err := Unpack(dst[1:], packed, n-1, width); err != nil {
			return dst, err
		}
		dst[0] = first
		prev := first
		for i := 1; i < n; i++ {
			prev += dmin + int64(uint64(dst[i])*g)
			dst[i] = prev
		}
	default:
		return dst, corrupt("unknown integer encoding")
	}
	return dst, nil
}

// gcd is Stein's binary GCD; gcd(0, x) = x.
func gcd(a, b uint64) uint64 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	shift := bits.TrailingZeros64(a | b)
	a >>= uint(bits.TrailingZeros64(a))
	for b != 0 {
		b >>= uint(bits.TrailingZeros64(b))
		if a > b {
			a, b = b, a
		}
		b -= a
	}
	return a << uint(shift)
}
