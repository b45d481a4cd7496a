package encoding

import (
	"bytes"
	"unsafe"
)

// DictBucketShift is log2 of the number of values per front-coded bucket the
// writer uses. Readers take the shift from the region header.
const DictBucketShift = 4

// AppendDict appends a front-coded dictionary of values, which must be
// sorted in strictly increasing byte order. When hasNull is set, id 0 is
// null and values[i] gets id i+1.
//
// Layout: flags byte (bit 0: has null), count uvarint (non-null values),
// bucket shift byte, offset width byte, bucket offsets (ceil(count/2^shift)
// entries, bit-packed), then the buckets. A bucket holds its first value as
// uvarint length + bytes, then each further value as uvarint shared-prefix
// length, uvarint suffix length, suffix bytes.
func AppendDict(dst []byte, values []string, hasNull bool) []byte {
	var flags byte
	if hasNull {
		flags = 1
	}
	dst = append(dst, flags)
	dst = AppendUvarint(dst, uint64(len(values)))
	dst = append(dst, DictBucketShift)
	size := 1 << DictBucketShift
	var data []byte
	offsets := make([]uint64, 0, (len(values)+size-1)/size)
	for i, v := range values {
		if i%size == 0 {
			offsets = append(offsets, uint64(len(data)))
			data = AppendLenBytes(data, v)
			continue
		}
		prev := values[i-1]
		p := 0
		for p < len(prev) && p < len(v) && prev[p] == v[p] {
			p++
		}
		data = AppendUvarint(data, uint64(p))
		data = AppendLenBytes(data, v[p:])
	}
	width := 0
	if len(offsets) > 0 {
		width = BitsFor(offsets[len(offsets)-1])
	}
	dst = append(dst, byte(width))
	dst = Pack(dst, offsets, width)
	return append(dst, data...)
}

// Dict is a read-only view of a front-coded dictionary. It references the
// bytes it was opened on. OpenDict validates the whole structure, so the
// accessors need no error results.
type Dict struct {
	hasNull  bool
	count    int // non-null values
	shift    uint
	offWidth int
	offsets  []byte
	data     []byte
}

// OpenDict parses and fully validates a dictionary region: every bucket
// decodes within bounds and values are strictly increasing.
func OpenDict(b []byte) (*Dict, error) {
	r := NewReader(b)
	flags := r.Byte()
	count := r.Int(len(b)) // every value takes at least one byte
	shift := int(r.Byte())
	width := int(r.Byte())
	if r.Err() != nil {
		return nil, r.Err()
	}
	if flags > 1 || shift > 16 || width > 64 {
		return nil, corrupt("bad dictionary header")
	}
	nb := 0
	if count > 0 {
		nb = (count-1)>>uint(shift) + 1
	}
	offs := r.Bytes(PackedLen(nb, width))
	if r.Err() != nil {
		return nil, r.Err()
	}
	d := &Dict{hasNull: flags == 1, count: count, shift: uint(shift), offWidth: width, offsets: offs, data: b[r.Offset():]}
	// Validate by walking every value in order.
	var prev, cur []byte
	first := true
	for bkt := 0; bkt < nb; bkt++ {
		off := Get(offs, bkt, width)
		if off > uint64(len(d.data)) {
			return nil, corrupt("dictionary bucket offset out of range")
		}
		if bkt > 0 && off <= Get(offs, bkt-1, width) {
			return nil, corrupt("dictionary bucket offsets not increasing")
		}
		br := NewReader(d.data[off:])
		end := min(count, (bkt+1)<<uint(shift))
		for i := bkt << uint(shift); i < end; i++ {
			if i == bkt<<uint(shift) {
				cur = append(cur[:0], br.LenBytes()...)
			} else {
				p := br.Int(len(cur))
				suffix := br.LenBytes()
				cur = append(cur[:p], suffix...)
			}
			if br.Err() != nil {
				return nil, br.Err()
			}
			if !first && bytes.Compare(prev, cur) >= 0 {
				return nil, corrupt("dictionary values not strictly increasing")
			}
			first = false
			prev = append(prev[:0], cur...)
		}
	}
	return d, nil
}

// Len is the number of ids, including the null id when present.
func (d *Dict) Len() int {
	if d.hasNull {
		return d.count + 1
	}
	return d.count
}

// HasNull reports whether id 0 stands for null.
func (d *Dict) HasNull() bool { return d.hasNull }

// IsNull reports whether id is the null id.
func (d *Dict) IsNull(id int) bool { return d.hasNull && id == 0 }

// AppendValue appends the bytes of value id to dst. The null id and ids out
// of range append nothing.
func (d *Dict) AppendValue(dst []byte, id int) []byte {
	if d.hasNull {
		id--
	}
	if id < 0 || id >= d.count {
		return dst
	}
	bkt := id >> d.shift
	br := NewReader(d.data[Get(d.offsets, bkt, d.offWidth):])
	start := len(dst)
	dst = append(dst, br.LenBytes()...)
	for i := bkt << d.shift; i < id; i++ {
		p := br.Int(len(dst) - start)
		dst = append(dst[:start+p], br.LenBytes()...)
	}
	return dst
}

// Value returns value id as a string ("" for the null id; check IsNull).
func (d *Dict) Value(id int) string {
	var buf [64]byte
	b := d.AppendValue(buf[:0], id)
	return string(b)
}

// head returns the first value of bucket bkt without copying.
func (d *Dict) head(bkt int) []byte {
	br := NewReader(d.data[Get(d.offsets, bkt, d.offWidth):])
	return br.LenBytes()
}

// Find returns the id of v, or found=false and the id where v would be
// inserted. Null is not a value: use the null id directly.
func (d *Dict) Find(v string) (id int, found bool) {
	key := unsafe.Slice(unsafe.StringData(v), len(v))
	nb := 0
	if d.count > 0 {
		nb = (d.count-1)>>d.shift + 1
	}
	// Last bucket whose head is <= key.
	lo, hi := 0, nb
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(d.head(mid), key) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	base := 0
	if d.hasNull {
		base = 1
	}
	if lo == 0 {
		return base, false
	}
	bkt := lo - 1
	br := NewReader(d.data[Get(d.offsets, bkt, d.offWidth):])
	var buf [64]byte
	cur := append(buf[:0], br.LenBytes()...)
	end := min(d.count, (bkt+1)<<d.shift)
	for i := bkt << d.shift; i < end; i++ {
		if i > bkt<<d.shift {
			p := br.Int(len(cur))
			cur = append(cur[:p], br.LenBytes()...)
		}
		switch c := bytes.Compare(cur, key); {
		case c == 0:
			return base + i, true
		case c > 0:
			return base + i, false
		}
	}
	return base + end, false
}

// ForEach calls fn for every non-null value in id order, stopping early when
// fn returns false. The slice passed to fn is reused between calls.
func (d *Dict) ForEach(fn func(id int, v []byte) bool) {
	base := 0
	if d.hasNull {
		base = 1
	}
	var cur []byte
	nb := 0
	if d.count > 0 {
		nb = (d.count-1)>>d.shift + 1
	}
	for bkt := 0; bkt < nb; bkt++ {
		br := NewReader(d.data[Get(d.offsets, bkt, d.offWidth):])
		end := min(d.count, (bkt+1)<<d.shift)
		for i := bkt << d.shift; i < end; i++ {
			if i == bkt<<d.shift {
				cur = append(cur[:0], br.LenBytes()...)
			} else {
				p := br.Int(len(cur))
				cur = append(cur[:p], br.LenBytes()...)
			}
			if !fn(base+i, cur) {
				return
			}
		}
	}
}
