package segment

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// internTable assigns dense ids to distinct strings in insertion order. It
// is an open-addressing hash table built for the writer's hot path:
// pointer-free (the garbage collector never scans it), with keys of up to
// 16 bytes stored inline in the slot so that a lookup of a short value
// touches one cache line. All values live in one arena.
type internTable struct {
	seed  maphash.Seed
	s0    uint64 // seed for short keys
	slots []islot
	mask  uint32
	arena []byte
	ends  []uint32 // ends[id] is the end of value id in arena
	// touched sums the slots internShort preloads, so that the compiler
	// keeps the loads.
	touched uint32
}

type islot struct {
	hash   uint32
	id1    uint32 // id+1; 0 marks an empty slot
	n      uint32 // key length
	_      uint32
	k0, k1 uint64 // the key's first 16 bytes, zero-padded, little-endian
}

func newInternTable() *internTable {
	t := &internTable{seed: maphash.MakeSeed()}
	t.s0 = maphash.Comparable(t.seed, 0)
	t.init(1024)
	return t
}

func (t *internTable) init(slots int) {
	t.slots = make([]islot, slots)
	t.mask = uint32(slots - 1)
}

// len is the number of distinct values.
func (t *internTable) len() int { return len(t.ends) }

// value returns value id; the string aliases the arena and is valid until
// reset.
func (t *internTable) value(id int32) string {
	start := uint32(0)
	if id > 0 {
		start = t.ends[id-1]
	}
	b := t.arena[start:t.ends[id]]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// words returns the first 16 bytes of s, zero-padded, as two
// little-endian words, using unaligned overlapping loads instead of a copy.
func words(s string) (k0, k1 uint64) {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	n := len(b)
	switch {
	case n >= 16:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	case n > 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:]) >> (8 * uint(16-n))
	case n == 8:
		return binary.LittleEndian.Uint64(b), 0
	case n >= 4:
		lo := uint64(binary.LittleEndian.Uint32(b))
		hi := uint64(binary.LittleEndian.Uint32(b[n-4:])) >> (8 * uint(8-n))
		return lo | hi<<32, 0
	}
	for i := n - 1; i >= 0; i-- {
		k0 = k0<<8 | uint64(b[i])
	}
	return k0, 0
}

// hash hashes a key: short keys with one 128-bit multiply of their two
// words (the wyhash mixer, seeded randomly per table), longer ones with
// maphash.
func (t *internTable) hash(s string, k0, k1 uint64) uint32 {
	if len(s) > 16 {
		return uint32(maphash.String(t.seed, s))
	}
	return t.hashShort(k0, k1, len(s))
}

func (t *internTable) hashShort(k0, k1 uint64, n int) uint32 {
	hi, lo := bits.Mul64(k0^t.s0^0xa0761d6478bd642f, k1^uint64(n)^0xe7037ed1a0b428db)
	return uint32(hi ^ lo ^ (hi >> 32))
}

// ikey is a value prepared for lookup: its first 16 bytes as two
// little-endian words (zero-padded), its length and its hash. A key of at
// most 16 bytes is complete without the string, so it can be looked up
// after the caller's bytes are gone.
type ikey struct {
	k0, k1 uint64
	n, h   uint32
}

func (t *internTable) key(s string) ikey {
	k0, k1 := words(s)
	return ikey{k0: k0, k1: k1, n: uint32(len(s)), h: t.hash(s, k0, k1)}
}

func (t *internTable) intern(s string) int32 { return t.find(s, t.key(s)) }

// find returns the id of key k of value s, adding it if new. s is only
// read for keys longer than 16 bytes.
func (t *internTable) find(s string, k ikey) int32 {
	for i := k.h & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.id1 == 0 {
			return t.insert(sl, s, k)
		}
		if sl.hash == k.h && sl.k0 == k.k0 && sl.k1 == k.k1 && sl.n == k.n &&
			(k.n <= 16 || t.value(int32(sl.id1-1)) == s) {
			return int32(sl.id1 - 1)
		}
	}
}

// internShort interns a batch of keys of at most 16 bytes whose hash is
// not set yet, writing their ids to ids (same length), skipping the
// entries whose length is skipKey. A first pass hashes the keys and loads
// their home slots: the loads are independent, so their cache misses
// overlap instead of costing a full memory latency each (the table of a
// high-cardinality column takes megabytes, and most of its lookups miss);
// the lookups proper then run from cache.
func (t *internTable) internShort(keys []ikey, ids []int32) {
	var sum uint32
	for i := range keys {
		k := &keys[i]
		k.h = t.hashShort(k.k0, k.k1, int(k.n))
		sum += t.slots[k.h&t.mask].id1
	}
	t.touched += sum // keeps the loads
	for i := range keys {
		if keys[i].n != skipKey {
			ids[i] = t.find("", keys[i])
		}
	}
}

// skipKey marks an entry of a batch that internShort leaves alone.
const skipKey = math.MaxUint32

func (t *internTable) insert(sl *islot, s string, k ikey) int32 {
	id := int32(len(t.ends))
	if k.n <= 16 {
		// The words hold the whole value.
		start := len(t.arena)
		t.arena = binary.LittleEndian.AppendUint64(t.arena, k.k0)
		t.arena = binary.LittleEndian.AppendUint64(t.arena, k.k1)
		t.arena = t.arena[:start+int(k.n)]
	} else {
		t.arena = append(t.arena, s...)
	}
	t.ends = append(t.ends, uint32(len(t.arena)))
	*sl = islot{hash: k.h, id1: uint32(id + 1), n: k.n, k0: k.k0, k1: k.k1}
	if uint32(len(t.ends))*4 > uint32(len(t.slots))*3 {
		t.grow()
	}
	return id
}

func (t *internTable) grow() {
	old := t.slots
	t.init(2 * len(old))
	for _, sl := range old {
		if sl.id1 == 0 {
			continue
		}
		i := sl.hash & t.mask
		for t.slots[i].id1 != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = sl
	}
}

// reset empties the table, keeping its memory.
func (t *internTable) reset() {
	clear(t.slots)
	t.arena = t.arena[:0]
	t.ends = t.ends[:0]
}

// compare orders values a and b by their bytes.
func (t *internTable) compare(a, b int32) int {
	return bytes.Compare(t.bytes(a), t.bytes(b))
}

func (t *internTable) bytes(id int32) []byte {
	start := uint32(0)
	if id > 0 {
		start = t.ends[id-1]
	}
	return t.arena[start:t.ends[id]]
}

// sortedIDs returns all ids ordered by the bytes of their values. It
// LSD-radix-sorts on the first 16 bytes (big-endian, zero-padded: the
// order of padded prefixes agrees with byte order except for ties) and
// finishes runs of equal prefixes with a full comparison.
func (t *internTable) sortedIDs() []int32 {
	n := t.len()
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i)
	}
	if n < 512 {
		slices.SortFunc(ids, t.compare)
		return ids
	}
	type rec struct {
		hi, lo uint64
		id     int32
	}
	src, dst := make([]rec, n), make([]rec, n)
	for i := range src {
		var pad [16]byte
		copy(pad[:], t.bytes(int32(i)))
		src[i] = rec{binary.BigEndian.Uint64(pad[:8]), binary.BigEndian.Uint64(pad[8:]), int32(i)}
	}
	for pos := 15; pos >= 0; pos-- {
		digit := func(r *rec) int {
			if pos < 8 {
				return int(r.hi >> (8 * uint(7-pos)) & 0xff)
			}
			return int(r.lo >> (8 * uint(15-pos)) & 0xff)
		}
		var count [257]int
		for i := range src {
			count[digit(&src[i])+1]++
		}
		if count[digit(&src[0])+1] == n {
			continue // all keys share this byte
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for i := range src {
			d := digit(&src[i])
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	for i := range src {
		ids[i] = src[i].id
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && src[j].hi == src[i].hi && src[j].lo == src[i].lo {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ids[i:j], t.compare)
		}
		i = j
	}
	return ids
}
