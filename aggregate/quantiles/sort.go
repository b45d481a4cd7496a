package quantiles

import (
	"slices"
	"unsafe"
)

// radixMin is the length from which radix sort beats pdqsort (whose cost is
// mostly branch mispredictions; radix pays ~1µs for its histograms).
const radixMin = 96

// sortFloats sorts the NaN-free a ascending, using tmp (allocated if shorter
// than a) as scratch. Each float is mapped in place to an order-preserving
// uint64 key and the keys are LSD-radix sorted: on fresh random data this is
// ~3x faster than pdqsort, whose branch mispredictions dominated Update's
// profile. Like Java's Arrays.sort, -0 sorts before +0.
func sortFloats(a []float64, tmp []uint64) {
	if len(a) < 2 {
		return
	}
	u := unsafe.Slice((*uint64)(unsafe.Pointer(&a[0])), len(a))
	for i, b := range u {
		// negative: flip all bits; positive: flip the sign bit.
		u[i] = b ^ (uint64(int64(b)>>63) | 1<<63)
	}
	switch {
	case len(u) < radixMin:
		slices.Sort(u)
	case len(tmp) < len(u):
		radixSort(u, make([]uint64, len(u)))
	default:
		radixSort(u, tmp[:len(u)])
	}
	for i, k := range u {
		u[i] = k ^ (^uint64(int64(k)>>63) | 1<<63)
	}
}

// radixSort sorts u ascending by bytes, least significant first, skipping
// bytes on which all keys agree (common for the high bytes of floats).
func radixSort(u, tmp []uint64) {
	var count [8][256]uint32
	for _, k := range u {
		for p := range 8 {
			count[p][uint8(k>>(8*p))]++
		}
	}
	src, dst := u, tmp
	for p := range 8 {
		c := &count[p]
		shift := uint(8 * p)
		if int(c[uint8(src[0]>>shift)]) == len(src) {
			continue
		}
		var sum uint32
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, k := range src {
			d := uint8(k >> shift)
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &u[0] {
		copy(u, src)
	}
}
