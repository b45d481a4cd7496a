package encoding

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// A posting is the set of rows holding one dictionary value. It starts with
// a uvarint h: count = h>>1 rows. When h&1 == 0 a sorted list follows: the
// first row as uvarint, then (if count > 1) a width byte and the count-1
// gaps minus one, bit-packed. When h&1 == 1 the rest of the posting is a
// roaring bitmap in the portable serialization format.

// AppendPostingList appends rows (strictly increasing) as a list posting.
func AppendPostingList(dst []byte, rows []uint32) []byte {
	dst = AppendUvarint(dst, uint64(len(rows))<<1)
	if len(rows) == 0 {
		return dst
	}
	dst = AppendUvarint(dst, uint64(rows[0]))
	if len(rows) == 1 {
		return dst
	}
	var maxGap uint32
	for i := 1; i < len(rows); i++ {
		maxGap = max(maxGap, rows[i]-rows[i-1]-1)
	}
	width := BitsFor(uint64(maxGap))
	dst = append(dst, byte(width))
	var buf [256]uint32
	k := 0
	for i := 1; i < len(rows); i++ {
		buf[k] = rows[i] - rows[i-1] - 1
		if k++; k == len(buf) {
			dst = Pack(dst, buf[:k], width)
			k = 0
		}
	}
	return Pack(dst, buf[:k], width)
}

// AppendPostingBitmap appends bm as a roaring posting.
func AppendPostingBitmap(dst []byte, bm *roaring.Bitmap) ([]byte, error) {
	dst = AppendUvarint(dst, bm.GetCardinality()<<1|1)
	buf, err := bm.ToBytes()
	if err != nil {
		return dst, err
	}
	return append(dst, buf...), nil
}

// PostingCardinality returns the number of rows in a posting without
// decoding it.
func PostingCardinality(src []byte) (int, error) {
	r := NewReader(src)
	h := r.Uvarint()
	if r.Err() != nil {
		return 0, r.Err()
	}
	if h>>1 > math.MaxUint32 {
		return 0, corrupt("posting count out of range")
	}
	return int(h >> 1), nil
}

// DecodePosting decodes a posting whose rows must all be below numRows into
// a bitmap. A roaring posting is read without copying: the bitmap
// references src and is copy-on-write, so src must stay valid and
// unmodified while the bitmap (or any bitmap derived from it without
// cloning) is in use.
func DecodePosting(src []byte, numRows int) (bm *roaring.Bitmap, err error) {
	r := NewReader(src)
	h := r.Uvarint()
	if r.Err() != nil {
		return nil, r.Err()
	}
	count := h >> 1
	if count > uint64(numRows) || uint64(numRows) > math.MaxUint32+1 {
		return nil, corrupt("posting count out of range")
	}
	limit := uint64(numRows)
	if h&1 == 1 {
		bm, err := decodeRoaring(src[r.Offset():], int64(count))
		if err == nil && !bm.IsEmpty() && uint64(bm.Maximum()) >= limit {
			return nil, corrupt("posting row out of range")
		}
		return bm, err
	}
	if count == 0 {
		if r.Remaining() != 0 {
			return nil, corrupt("trailing bytes after empty posting")
		}
		return roaring.New(), nil
	}
	first := r.Uvarint()
	if r.Err() != nil {
		return nil, r.Err()
	}
	if first >= limit {
		return nil, corrupt("posting row out of range")
	}
	if count == 1 {
		return roaring.BitmapOf(uint32(first)), checkEnd(r)
	}
	width := int(r.Byte())
	if r.Err() != nil {
		return nil, r.Err()
	}
	if width > 32 {
		return nil, corrupt("posting width out of range")
	}
	if uint64(r.Remaining()) < uint64(PackedLen(int(min(count, 1<<40)-1), width)) {
		return nil, corrupt("posting list too short")
	}
	packed := r.Bytes(PackedLen(int(count-1), width))
	rp := rowPool.Get().(*[]uint32)
	defer rowPool.Put(rp)
	rows := append((*rp)[:0], uint32(first))
	var buf [256]uint32
	row := first
	for done := 0; done < int(count-1); {
		k := min(len(buf), int(count-1)-done)
		// Sub-streams start on byte boundaries because 256*width bits is whole bytes.
		vals, err := Unpack(buf[:0], packed[PackedLen(done, width):], k, width)
		if err != nil {
			return nil, err
		}
		for _, g := range vals {
			row += uint64(g) + 1
			rows = append(rows, uint32(row))
		}
		if row >= limit {
			return nil, corrupt("posting row out of range")
		}
		done += k
	}
	*rp = rows
	if err := checkEnd(r); err != nil {
		return nil, err
	}
	if len(rows) <= 16 {
		return roaring.BitmapOf(rows...), nil
	}
	return RowsToBitmap(rows), nil
}

var rowPool = sync.Pool{New: func() any { s := make([]uint32, 0, 1024); return &s }}

// RowsToBitmap builds a roaring bitmap from strictly increasing rows by
// writing its portable serialization (array containers, and bitmap
// containers above 4096 rows) and reading that back without copying:
// several times faster than adding the rows one at a time.
func RowsToBitmap(rows []uint32) *roaring.Bitmap {
	bm := roaring.New()
	if len(rows) == 0 {
		return bm
	}
	buf, _ := appendRoaring(nil, rows)
	if _, err := bm.FromBuffer(buf); err != nil {
		// Impossible: the buffer was built to the format above.
		panic("encoding: building roaring bitmap: " + err.Error())
	}
	return bm
}

// AppendPostingRows appends strictly increasing rows as a roaring posting,
// exactly as AppendPostingBitmap of RowsToBitmap(rows) after RunOptimize.
// When no container of the bitmap is smaller as runs, the usual case for
// the rows of a value that is not a leading sort key, that serialization is
// the one RowsToBitmap writes, and it is appended directly instead of
// being built, parsed, optimized and serialized again.
func AppendPostingRows(dst []byte, rows []uint32) ([]byte, error) {
	if len(rows) > 0 {
		start := len(dst)
		dst = AppendUvarint(dst, uint64(len(rows))<<1|1)
		var runs bool
		if dst, runs = appendRoaring(dst, rows); !runs {
			return dst, nil
		}
		dst = dst[:start]
	}
	bm := RowsToBitmap(rows)
	bm.RunOptimize()
	return AppendPostingBitmap(dst, bm)
}

// appendRoaring appends the portable serialization of strictly increasing
// rows with array and bitmap containers only (cookie 12346: no run
// containers). runs reports whether RunOptimize would turn some container
// into runs, in which case what was appended is not what the roaring
// library would serialize after it.
func appendRoaring(dst []byte, rows []uint32) (_ []byte, runs bool) {
	// Container boundaries: rows[bounds[i]:bounds[i+1]] share the high 16
	// bits. A container becomes runs when 2+4*runs bytes are fewer than
	// both its array (2 per row) and bitmap (8 KB, plus the library's
	// 32-byte header) forms.
	bounds := make([]int, 0, 1+int(rows[len(rows)-1]>>16-rows[0]>>16))
	size := 8
	for i := 0; i < len(rows); {
		j, nruns := i+1, 1
		for j < len(rows) && rows[j]>>16 == rows[i]>>16 {
			if rows[j] != rows[j-1]+1 {
				nruns++
			}
			j++
		}
		bounds = append(bounds, i)
		size += 8 + min(2*(j-i), 8192)
		if 2+4*nruns < min(2*(j-i), 8192+32) {
			runs = true
		}
		i = j
	}
	bounds = append(bounds, len(rows))
	nc := len(bounds) - 1
	start := len(dst)
	dst = grow(dst, size)[:start+size]
	buf := dst[start:]
	binary.LittleEndian.PutUint32(buf, 12346) // cookie: arrays and bitmaps only
	binary.LittleEndian.PutUint32(buf[4:], uint32(nc))
	off := 8 + 8*nc
	for c := 0; c < nc; c++ {
		part := rows[bounds[c]:bounds[c+1]]
		binary.LittleEndian.PutUint16(buf[8+4*c:], uint16(part[0]>>16))
		binary.LittleEndian.PutUint16(buf[10+4*c:], uint16(len(part)-1))
		binary.LittleEndian.PutUint32(buf[8+4*nc+4*c:], uint32(off))
		if len(part) <= 4096 {
			for _, r := range part {
				binary.LittleEndian.PutUint16(buf[off:], uint16(r))
				off += 2
			}
		} else {
			words := buf[off : off+8192]
			clear(words)
			for _, r := range part {
				lo := uint16(r)
				words[lo>>3] |= 1 << (lo & 7)
			}
			off += 8192
		}
	}
	return dst, runs
}

func checkEnd(r *Reader) error {
	if r.Err() != nil {
		return r.Err()
	}
	if r.Remaining() != 0 {
		return corrupt("trailing bytes after posting")
	}
	return nil
}

// decodeRoaring reads a portable roaring bitmap that must span exactly b
// and, when count >= 0, hold count rows. The roaring library is not hardened
// against hostile input, so its panics are turned into errors.
func decodeRoaring(b []byte, count int64) (bm *roaring.Bitmap, err error) {
	defer func() {
		if p := recover(); p != nil {
			bm, err = nil, corrupt(fmt.Sprint("roaring: ", p))
		}
	}()
	bm = roaring.New()
	n, err := bm.FromBuffer(b)
	if err != nil {
		return nil, corrupt("roaring: " + err.Error())
	}
	if n != int64(len(b)) {
		return nil, corrupt("roaring bitmap length mismatch")
	}
	// Checksums make damage here unlikely, but an invalid bitmap (unsorted
	// or miscounted containers) would give wrong answers later, not errors.
	if err := bm.Validate(); err != nil {
		return nil, corrupt("roaring: " + err.Error())
	}
	if count >= 0 && bm.GetCardinality() != uint64(count) {
		return nil, corrupt("roaring bitmap cardinality mismatch")
	}
	return bm, nil
}

// DecodeBitmap reads a standalone portable roaring bitmap spanning all of b
// (null bitmaps, empty-row bitmaps); an empty b is the empty bitmap. Like
// DecodePosting it does not copy.
func DecodeBitmap(b []byte) (*roaring.Bitmap, error) {
	if len(b) == 0 {
		return roaring.New(), nil
	}
	return decodeRoaring(b, -1)
}
