package quantiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// DataSketches' serialized layout (little-endian), see PreambleUtil.java:
//
//	byte 0: preamble longs (1 when empty, else 2; 5 in serVer 1)
//	byte 1: serialization version (3; 1 and 2 are read for compatibility)
//	byte 2: family id (8 = QUANTILES)
//	byte 3: flags
//	bytes 4-5: k (uint16); bytes 6-7 unused
//	bytes 8-15: n (int64)             -- absent in the 8-byte empty form
//	bytes 16-23: min, 24-31: max (float64)
//	then (serVer 1: after 8 more bytes) the combined buffer:
//	  compact:   the n%2k base buffer items, then each valid level's k items
//	  updatable: a 2k-slot base buffer, then every level up to the highest
//	             valid one (k slots each); when there are no levels only the
//	             base buffer items need be present.
const (
	serVer      = 3
	familyID    = 8
	flagRO      = 2
	flagEmpty   = 4
	flagCompact = 8
	flagOrdered = 16
	headerBytes = 32
)

func (s *Sketch) compactSize() int {
	if s.n == 0 {
		return 8
	}
	return headerBytes + 8*s.numRetained()
}

// MarshalBinary writes DataSketches' compact, ordered, read-only form, i.e.
// what DataSketches-java toByteArray(true) produces and Druid stores.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	b := make([]byte, s.compactSize())
	b[1] = serVer
	b[2] = familyID
	binary.LittleEndian.PutUint16(b[4:], uint16(s.k))
	flags := byte(flagCompact | flagRO | flagOrdered)
	if s.n == 0 {
		b[0] = 1
		b[3] = flags | flagEmpty
		return b, nil
	}
	b[0] = 2
	b[3] = flags
	binary.LittleEndian.PutUint64(b[8:], uint64(s.n))
	binary.LittleEndian.PutUint64(b[16:], math.Float64bits(s.minV))
	binary.LittleEndian.PutUint64(b[24:], math.Float64bits(s.maxV))
	off := headerBytes
	put := func(vs []float64) {
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[off:], math.Float64bits(v))
			off += 8
		}
	}
	base := slices.Clone(s.base)
	sortFloats(base, nil)
	put(base)
	for lvl, p := 0, s.bitPattern; p != 0; lvl, p = lvl+1, p>>1 {
		if p&1 != 0 {
			put(s.level(lvl))
		}
	}
	return b, nil
}

var errCorrupt = errors.New("quantiles: corrupt sketch")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// validHeader reports whether (preLongs, serVer, empty, compact) is one of the
// combinations DataSketches accepts (HeapUpdateDoublesSketch.checkPreLongsFlagsSerVer).
func validHeader(preLongs, ver int, empty, compact bool) bool {
	switch ver {
	case 1:
		return !compact && ((empty && preLongs == 1) || (!empty && preLongs == 5))
	case 2:
		return !compact && ((empty && preLongs == 1) || (!empty && preLongs == 2))
	case 3:
		return preLongs == 2 || (preLongs == 1 && empty)
	}
	return false
}

// Decode reads a serialized DataSketches DoublesSketch in compact or updatable
// form (serialization versions 1-3), including the 8-byte empty form. Besides
// DataSketches' own checks it rejects NaN items, unsorted levels and items
// outside [min, max], so a decoded sketch always answers queries sanely.
func Decode(b []byte) (*Sketch, error) {
	if len(b) < 8 {
		return nil, corrupt("%d bytes, need at least 8", len(b))
	}
	preLongs, ver, fam, flags := int(b[0]), int(b[1]), int(b[2]), int(b[3])
	k := int(binary.LittleEndian.Uint16(b[4:]))
	if fam != familyID {
		return nil, corrupt("family id %d, want %d (quantiles)", fam, familyID)
	}
	if ver < 1 || ver > serVer {
		return nil, corrupt("unsupported serialization version %d", ver)
	}
	if flags&^(flagRO|flagEmpty|flagCompact|flagOrdered) != 0 {
		return nil, corrupt("invalid flags %#x", flags)
	}
	empty := flags&flagEmpty != 0
	if !validHeader(preLongs, ver, empty, flags&flagCompact != 0) {
		return nil, corrupt("inconsistent preamble longs %d, version %d, flags %#x", preLongs, ver, flags)
	}
	if err := checkK(k); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	s := newSketch(k)
	if empty {
		return s, nil
	}
	if len(b) < 16 {
		return nil, corrupt("%d bytes, too short for n", len(b))
	}
	n := int64(binary.LittleEndian.Uint64(b[8:]))
	if n < 0 || n > maxN {
		return nil, corrupt("n %d out of range [0, %d]", n, int64(maxN))
	}
	if n == 0 {
		return s, nil
	}

	twoK := 2 * int64(k)
	bbCount := int(n % twoK)
	pattern := uint64(n / twoK)
	totalLevels := bits.Len64(pattern)
	retained := bbCount + bits.OnesCount64(pattern)*k
	compact := ver == 2 || flags&(flagCompact|flagRO) != 0
	pre := headerBytes
	if ver == 1 {
		pre += 8
	}
	need := int64(pre) + 8*int64(retained)
	if !compact && totalLevels > 0 {
		need = int64(pre) + 8*int64(2+totalLevels)*int64(k)
	}
	if int64(len(b)) < need {
		return nil, corrupt("%d bytes, need %d for k=%d n=%d", len(b), need, k, n)
	}

	minV := math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
	maxV := math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
	if !(minV <= maxV) {
		return nil, corrupt("min %v, max %v", minV, maxV)
	}
	get := func(dst []float64, off int) error {
		for i := range dst {
			v := math.Float64frombits(binary.LittleEndian.Uint64(b[off+8*i:]))
			if !(v >= minV && v <= maxV) {
				return corrupt("item %v outside [%v, %v]", v, minV, maxV)
			}
			dst[i] = v
		}
		return nil
	}

	s.n, s.minV, s.maxV, s.bitPattern = n, minV, maxV, pattern
	s.base = make([]float64, bbCount)
	if err := get(s.base, pre); err != nil {
		return nil, err
	}
	s.levels = make([]float64, totalLevels*k)
	off := pre + 8*bbCount // compact: levels follow the base items
	if !compact {
		off = pre + 16*k // updatable: levels follow the 2k-slot base buffer
	}
	for lvl := 0; lvl < totalLevels; lvl++ {
		valid := pattern&(1<<uint(lvl)) != 0
		if !valid {
			if !compact {
				off += 8 * k
			}
			continue
		}
		l := s.level(lvl)
		if err := get(l, off); err != nil {
			return nil, err
		}
		if !slices.IsSorted(l) {
			return nil, corrupt("level %d not sorted", lvl)
		}
		off += 8 * k
	}
	return s, nil
}
