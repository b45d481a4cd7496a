// Package encoding holds the low-level encodings of the segment format:
// bit packing, frame-of-reference and delta coding of integers, decimal
// coding of floating-point values, front-coded string dictionaries, posting
// lists and block compression. Every decoder validates its input and returns
// an error on malformed bytes; none panics.
//
// The byte layouts are specified in docs/segment-format.md.
package encoding

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrCorrupt is wrapped by every decoding error caused by malformed input.
var ErrCorrupt = errors.New("corrupt encoded data")

func corrupt(msg string) error { return &corruptError{msg} }

type corruptError struct{ msg string }

func (e *corruptError) Error() string { return "encoding: " + e.msg }
func (e *corruptError) Unwrap() error { return ErrCorrupt }

// BitsFor returns the number of bits needed to represent v (0 for v == 0).
func BitsFor(v uint64) int { return bits.Len64(v) }

// PackedLen is the number of bytes that n values of the given bit width
// occupy when packed.
func PackedLen(n, width int) int { return (n*width + 7) / 8 }

// Pack appends the low width bits of each value to dst as a little-endian
// bit stream: value i occupies stream bits [i*width, (i+1)*width), and stream
// bit k is bit k%8 of byte k/8. It appends exactly PackedLen(len(vals), width)
// bytes. Bits above width in a value are ignored.
func Pack[T ~uint64 | ~uint32 | ~int64 | ~int32](dst []byte, vals []T, width int) []byte {
	n := PackedLen(len(vals), width)
	if width == 0 || len(vals) == 0 {
		return dst
	}
	start := len(dst)
	dst = grow(dst, n+8)
	out := dst[start : start+n+8]
	mask := ^uint64(0)
	if width < 64 {
		mask = (1 << uint(width)) - 1
	}
	// Accumulate bits in a word and store whole words as they fill.
	w := uint(width)
	var acc uint64
	var nb uint // bits in acc
	pos := 0
	for _, v := range vals {
		u := uint64(v) & mask
		acc |= u << nb
		nb += w
		if nb >= 64 {
			binary.LittleEndian.PutUint64(out[pos:], acc)
			pos += 8
			nb -= 64
			acc = u >> (w - nb) // the bits that did not fit (0 when nb == 0)
		}
	}
	binary.LittleEndian.PutUint64(out[pos:], acc) // tail; slack covers it
	return dst[:start+n]
}

// Unpack decodes n values of the given width from src into dst, which is
// resized as needed and returned. src must hold at least PackedLen(n, width)
// bytes.
func Unpack[T ~uint64 | ~uint32 | ~int64 | ~int32](dst []T, src []byte, n, width int) ([]T, error) {
	if width < 0 || width > 64 {
		return dst, corrupt("bit width out of range")
	}
	if n < 0 || len(src) < PackedLen(n, width) {
		return dst, corrupt("packed data too short")
	}
	if cap(dst) < n {
		dst = make([]T, n)
	}
	dst = dst[:n]
	if width == 0 {
		clear(dst)
		return dst, nil
	}
	mask := ^uint64(0)
	if width < 64 {
		mask = (1 << uint(width)) - 1
	}
	i := 0
	if width <= 56 {
		// Fast path: one unaligned 8-byte load per value while 8 bytes remain.
		pos := 0
		limit := len(src) - 8
		for ; i < n; i++ {
			byteOff := pos >> 3
			if byteOff > limit {
				break
			}
			dst[i] = T((binary.LittleEndian.Uint64(src[byteOff:]) >> uint(pos&7)) & mask)
			pos += width
		}
	}
	for ; i < n; i++ {
		dst[i] = T(getSlow(src, i*width, width))
	}
	return dst, nil
}

// Get returns value i of a packed stream without decoding the others. The
// caller guarantees src holds at least PackedLen(i+1, width) bytes.
func Get(src []byte, i, width int) uint64 {
	if width == 0 {
		return 0
	}
	pos := i * width
	byteOff := pos >> 3
	if width <= 56 && byteOff+8 <= len(src) {
		return (binary.LittleEndian.Uint64(src[byteOff:]) >> uint(pos&7)) & ((1 << uint(width)) - 1)
	}
	return getSlow(src, pos, width)
}

// getSlow reads width bits starting at stream bit pos one byte at a time.
func getSlow(src []byte, pos, width int) uint64 {
	var v uint64
	for b := 0; b < width; {
		byteOff := (pos + b) >> 3
		shift := uint((pos + b) & 7)
		take := min(8-int(shift), width-b)
		chunk := uint64(src[byteOff]>>shift) & ((1 << uint(take)) - 1)
		v |= chunk << uint(b)
		b += take
	}
	return v
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}
