package encoding

import "encoding/binary"

// Reader decodes the primitive fields of the format (varints, fixed-width
// integers, length-prefixed byte strings) from a byte slice. The first
// failure is sticky: later reads return zero values and Err reports it, so a
// decoder can read a whole record and check once.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Err returns the first error met, if any.
func (r *Reader) Err() error { return r.err }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.buf) - r.off }

func (r *Reader) fail(msg string) {
	if r.err == nil {
		r.err = corrupt(msg)
	}
	r.off = len(r.buf)
}

// Uvarint reads an unsigned LEB128 varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.off += n
	return v
}

// Varint reads a zig-zag signed varint.
func (r *Reader) Varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

// Int reads a uvarint that must be at most limit, as an int.
func (r *Reader) Int(limit int) int {
	v := r.Uvarint()
	if v > uint64(limit) {
		r.fail("count out of range")
		return 0
	}
	return int(v)
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.buf) {
		r.fail("unexpected end")
		return 0
	}
	b := r.buf[r.off]
	r.off++
	return b
}

// Uint32 reads a little-endian uint32.
func (r *Reader) Uint32() uint32 {
	b := r.Bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// Uint64 reads a little-endian uint64.
func (r *Reader) Uint64() uint64 {
	b := r.Bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// Bytes returns the next n bytes (a sub-slice, not a copy).
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf)-r.off {
		r.fail("unexpected end")
		return nil
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// LenBytes reads a uvarint length followed by that many bytes.
func (r *Reader) LenBytes() []byte {
	n := r.Int(r.Remaining())
	return r.Bytes(n)
}

// String reads a length-prefixed string (copied).
func (r *Reader) String() string { return string(r.LenBytes()) }

// AppendUvarint appends v as an unsigned varint.
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendVarint appends v as a zig-zag signed varint.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendUint32 appends v little-endian.
func AppendUint32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// AppendUint64 appends v little-endian.
func AppendUint64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// AppendLenBytes appends a uvarint length and the bytes of s.
func AppendLenBytes[S ~string | ~[]byte](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
