package segment

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/javacompat"
	"strata/storage/encoding"
)

// BlockStats are the statistics of one block of a numeric column. Min and
// Max cover the non-null values only and are meaningless when
// NullCount == Rows. For long columns MinDouble/MaxDouble hold the same
// range converted; for float and double columns MinLong/MaxLong are the
// floor of the minimum and the ceiling of the maximum, saturated.
type BlockStats struct {
	Rows, NullCount      int
	MinLong, MaxLong     int64
	MinDouble, MaxDouble float64
}

// NumericColumn reads a long, float or double column (or __time) block by
// block into caller-provided buffers. Values at null rows are unspecified
// (the writer stores the block minimum); consult Nulls.
type NumericColumn struct {
	s *Segment
	c *columnMeta
}

// Info describes the column.
func (n *NumericColumn) Info() ColumnInfo { return n.c.info() }

// Kind is KindLong, KindFloat or KindDouble.
func (n *NumericColumn) Kind() Kind { return n.c.kind }

// NumBlocks is the number of blocks.
func (n *NumericColumn) NumBlocks() int { return len(n.c.blocks) }

// HasNulls reports whether any row is null.
func (n *NumericColumn) HasNulls() bool { return n.c.flags&flagHasNulls != 0 }

// BlockStats returns the footer statistics of block b, without reading it.
func (n *NumericColumn) BlockStats(b int) BlockStats {
	if b < 0 || b >= len(n.c.blocks) {
		return BlockStats{}
	}
	bl := &n.c.blocks[b]
	st := BlockStats{Rows: n.s.ft.blockRowsAt(b), NullCount: int(bl.nullCount)}
	if n.c.kind == KindLong {
		st.MinLong, st.MaxLong = int64(bl.min), int64(bl.max)
		st.MinDouble, st.MaxDouble = float64(st.MinLong), float64(st.MaxLong)
	} else {
		st.MinDouble, st.MaxDouble = math.Float64frombits(bl.min), math.Float64frombits(bl.max)
		st.MinLong, st.MaxLong = javacompat.DoubleToLong(math.Floor(st.MinDouble)), javacompat.DoubleToLong(math.Ceil(st.MaxDouble))
	}
	return st
}

func (n *NumericColumn) checkCount(b, got int) error {
	if want := n.s.ft.blockRowsAt(b); got != want {
		return corruptf("column %q block %d: %d values, want %d", n.c.name, b, got, want)
	}
	return nil
}

// Longs decodes block b into dst (resized and returned). Float and double
// values are converted like Java's (long) cast.
func (n *NumericColumn) Longs(b int, dst []int64) ([]int64, error) {
	var out []int64
	err := n.s.withBlock(n.c, b, func(raw []byte) error {
		var err error
		switch n.c.kind {
		case KindLong:
			out, err = encoding.DecodeInts(dst, raw)
		case KindDouble:
			out, err = decodeDoublesAsLongs(dst, raw)
		case KindFloat:
			var f []float32
			f, err = encoding.DecodeFloat32s(nil, raw)
			out = resize(dst, len(f))
			for i, v := range f {
				out[i] = javacompat.DoubleToLong(float64(v))
			}
		}
		if err != nil {
			return err
		}
		return n.checkCount(b, len(out))
	})
	return out, err
}

func decodeDoublesAsLongs(dst []int64, raw []byte) ([]int64, error) {
	out := resize(dst, 0)
	f := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(out))), cap(out))
	f, err := encoding.DecodeFloat64s(f[:0], raw)
	if err != nil {
		return dst, err
	}
	if cap(out) < len(f) || unsafe.SliceData(f) != (*float64)(unsafe.Pointer(unsafe.SliceData(out))) {
		out = make([]int64, len(f))
	}
	out = out[:len(f)]
	for i, v := range f {
		out[i] = javacompat.DoubleToLong(v)
	}
	return out, nil
}

// Doubles decodes block b into dst as float64, converting longs and floats.
func (n *NumericColumn) Doubles(b int, dst []float64) ([]float64, error) {
	var out []float64
	err := n.s.withBlock(n.c, b, func(raw []byte) error {
		var err error
		switch n.c.kind {
		case KindDouble:
			out, err = encoding.DecodeFloat64s(dst, raw)
		case KindLong:
			// Decode the integers in place, then convert.
			out = resize(dst, 0)
			ints := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(out))), cap(out))
			var got []int64
			got, err = encoding.DecodeInts(ints[:0], raw)
			if err == nil {
				if len(got) > cap(out) {
					out = make([]float64, len(got))
				}
				out = out[:len(got)]
				for i, v := range got {
					out[i] = float64(v)
				}
			}
		case KindFloat:
			var f []float32
			f, err = encoding.DecodeFloat32s(nil, raw)
			out = resize(dst, len(f))
			for i, v := range f {
				out[i] = float64(v)
			}
		}
		if err != nil {
			return err
		}
		return n.checkCount(b, len(out))
	})
	return out, err
}

// Floats decodes block b of a float column into dst; other kinds are
// converted to float32.
func (n *NumericColumn) Floats(b int, dst []float32) ([]float32, error) {
	if n.c.kind != KindFloat {
		d, err := n.Doubles(b, nil)
		if err != nil {
			return dst, err
		}
		out := resize(dst, len(d))
		for i, v := range d {
			out[i] = float32(v)
		}
		return out, nil
	}
	var out []float32
	err := n.s.withBlock(n.c, b, func(raw []byte) error {
		var err error
		if out, err = encoding.DecodeFloat32s(dst, raw); err != nil {
			return err
		}
		return n.checkCount(b, len(out))
	})
	return out, err
}

// Nulls returns the rows that are null (an empty bitmap when none). The
// bitmap references the column's verified copy of its null bitmap and is
// copy-on-write.
func (n *NumericColumn) Nulls() (*roaring.Bitmap, error) { return nullBitmap(n.s, n.c) }

func nullBitmap(s *Segment, c *columnMeta) (*roaring.Bitmap, error) {
	b, ok, err := s.region(c, regionNullBitmap)
	if err != nil {
		return nil, err
	}
	if !ok {
		return roaring.New(), nil
	}
	bm, err := encoding.DecodeBitmap(b)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q null bitmap: %v", ErrCorrupt, c.name, err)
	}
	if bm.GetCardinality() != uint64(c.nullCount) || (!bm.IsEmpty() && int(bm.Maximum()) >= s.ft.numRows) {
		return nil, corruptf("column %q: null bitmap does not match the footer", c.name)
	}
	return bm, nil
}

func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// stringState holds the lazily loaded, validated index structures of a
// string column, over the verified heap copies of its regions. The postings
// region is copied on the first posting read, so a column only grouped on
// never holds its postings in memory.
type stringState struct {
	once     sync.Once
	err      error
	dict     *encoding.Dict
	offWidth int
	offs     []byte
}

func (s *Segment) stringState(i int) (*stringState, error) {
	st := s.strs[i]
	st.once.Do(func() { st.err = s.loadStrings(&s.ft.columns[i], st) })
	return st, st.err
}

func (s *Segment) loadStrings(c *columnMeta, st *stringState) error {
	d, _, err := s.region(c, regionDictionary)
	if err != nil {
		return err
	}
	offs, _, err := s.region(c, regionPostingOffsets)
	if err != nil {
		return err
	}
	post, _ := c.region(regionPostings)
	p, err := parseStrings(c, d, offs, post.length)
	if err != nil {
		return err
	}
	st.dict, st.offWidth, st.offs = p.dict, p.offWidth, p.offs
	return nil
}

// parseStrings opens and validates the dictionary and posting offsets of a
// string column whose postings region is postLen bytes long.
func parseStrings(c *columnMeta, d, offs []byte, postLen uint64) (*stringState, error) {
	dict, err := encoding.OpenDict(d)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q dictionary: %v", ErrCorrupt, c.name, err)
	}
	single := c.flags&flagMultiValue == 0
	if dict.Len() != c.cardinality || (single && dict.HasNull() != (c.nullCount > 0)) || (dict.HasNull() && c.nullCount == 0) {
		return nil, corruptf("column %q: dictionary does not match the footer", c.name)
	}
	if len(offs) < 1 || offs[0] > 64 || len(offs)-1 != encoding.PackedLen(c.cardinality+1, int(offs[0])) {
		return nil, corruptf("column %q: bad posting offsets", c.name)
	}
	w := int(offs[0])
	packed := offs[1:]
	var prev uint64
	for id := 0; id <= c.cardinality; id++ {
		o := encoding.Get(packed, id, w)
		if (id == 0 && o != 0) || o < prev || o > postLen {
			return nil, corruptf("column %q: bad posting offsets", c.name)
		}
		prev = o
	}
	if prev != postLen {
		return nil, corruptf("column %q: postings length mismatch", c.name)
	}
	return &stringState{dict: dict, offWidth: w, offs: packed}, nil
}

// Dictionary is the sorted dictionary of a string column: ids are
// positions in byte order with null (if present) as id 0.
type Dictionary = encoding.Dict

// StringColumn reads a string dimension: dictionary, per-row ids and the
// bitmap index.
type StringColumn struct {
	s   *Segment
	c   *columnMeta
	idx int
}

// Info describes the column.
func (c *StringColumn) Info() ColumnInfo { return c.c.info() }

// MultiValue reports whether rows may hold several values.
func (c *StringColumn) MultiValue() bool { return c.c.flags&flagMultiValue != 0 }

// Cardinality is the number of dictionary ids, counting null.
func (c *StringColumn) Cardinality() int { return c.c.cardinality }

// NumBlocks is the number of blocks.
func (c *StringColumn) NumBlocks() int { return len(c.c.blocks) }

// Dictionary loads (on first use, validating it fully) and returns the
// dictionary.
func (c *StringColumn) Dictionary() (*Dictionary, error) {
	st, err := c.s.stringState(c.idx)
	if err != nil {
		return nil, err
	}
	return st.dict, nil
}

// Lookup returns the value of id; isNull reports the null id.
func (c *StringColumn) Lookup(id int) (value string, isNull bool, err error) {
	d, err := c.Dictionary()
	if err != nil {
		return "", false, err
	}
	if id < 0 || id >= d.Len() {
		return "", false, fmt.Errorf("segment: column %q: id %d out of range", c.c.name, id)
	}
	if d.IsNull(id) {
		return "", true, nil
	}
	return d.Value(id), false, nil
}

// Find returns the id of value by binary search, or found=false.
func (c *StringColumn) Find(value string) (id int, found bool, err error) {
	d, err := c.Dictionary()
	if err != nil {
		return 0, false, err
	}
	id, found = d.Find(value)
	return id, found, nil
}

// NullID returns the id of null, if the dictionary has one (always 0).
func (c *StringColumn) NullID() (int, bool, error) {
	d, err := c.Dictionary()
	if err != nil {
		return 0, false, err
	}
	return 0, d.HasNull(), nil
}

// BlockIDs decodes the ids of block b of a single-value column into dst.
func (c *StringColumn) BlockIDs(b int, dst []int32) ([]int32, error) {
	if c.MultiValue() {
		return dst, fmt.Errorf("segment: column %q is multi-value; use MultiIDs", c.c.name)
	}
	var out []int32
	err := c.s.withBlock(c.c, b, func(raw []byte) error {
		r := encoding.NewReader(raw)
		var err error
		out, err = decodeIDs(r, dst, c.c.cardinality)
		if err != nil {
			return err
		}
		if r.Remaining() != 0 {
			return corruptf("column %q block %d: trailing bytes", c.c.name, b)
		}
		if want := c.s.ft.blockRowsAt(b); len(out) != want {
			return corruptf("column %q block %d: %d ids, want %d", c.c.name, b, len(out), want)
		}
		return nil
	})
	return out, err
}

// decodeIDs reads an id block (count, min, width, packed) and checks every
// id is below card.
func decodeIDs(r *encoding.Reader, dst []int32, card int) ([]int32, error) {
	n := r.Int(encoding.MaxBlockValues)
	mn := r.Uvarint()
	w := int(r.Byte())
	if r.Err() != nil {
		return dst, r.Err()
	}
	if w > 32 || mn > math.MaxInt32 {
		return dst, corruptf("bad id block header")
	}
	packed := r.Bytes(encoding.PackedLen(n, w))
	if r.Err() != nil {
		return dst, r.Err()
	}
	out, err := encoding.Unpack(resize(dst, n), packed, n, w)
	if err != nil {
		return dst, err
	}
	top := uint64(mn) + (uint64(1)<<uint(w) - 1)
	if mn > 0 {
		for i := range out {
			out[i] += int32(mn)
		}
	}
	if top >= uint64(card) && n > 0 {
		for _, id := range out {
			if id < 0 || int(id) >= card {
				return dst, corruptf("id %d out of range (cardinality %d)", id, card)
			}
		}
	}
	return out, nil
}

// IDs decodes the ids of rows [from, to) of a single-value column into dst.
func (c *StringColumn) IDs(from, to int, dst []int32) ([]int32, error) {
	if from < 0 || to > c.s.ft.numRows || from > to {
		return dst, fmt.Errorf("segment: row range [%d, %d) out of range", from, to)
	}
	dst = dst[:0]
	rpb := c.s.ft.rowsPerBlock
	var buf []int32
	for b := from / rpb; b*rpb < to; b++ {
		var err error
		if buf, err = c.BlockIDs(b, buf); err != nil {
			return dst, err
		}
		start := b * rpb
		dst = append(dst, buf[max(from-start, 0):min(to-start, len(buf))]...)
	}
	return dst, nil
}

// BlockMultiIDs decodes block b into offsets and ids: row i of the block
// holds ids[offs[i]:offs[i+1]] (len(offs) = rows+1). It works on
// single-value columns too (one id per row).
func (c *StringColumn) BlockMultiIDs(b int, offs, ids []int32) ([]int32, []int32, error) {
	if !c.MultiValue() {
		var err error
		ids, err = c.BlockIDs(b, ids)
		if err != nil {
			return offs, ids, err
		}
		offs = resize(offs, len(ids)+1)
		for i := range offs {
			offs[i] = int32(i)
		}
		return offs, ids, nil
	}
	outOffs, outIDs := offs, ids
	err := c.s.withBlock(c.c, b, func(raw []byte) error {
		r := encoding.NewReader(raw)
		n := r.Int(encoding.MaxBlockValues)
		cw := int(r.Byte())
		if r.Err() != nil {
			return r.Err()
		}
		if want := c.s.ft.blockRowsAt(b); n != want {
			return corruptf("column %q block %d: %d rows, want %d", c.c.name, b, n, want)
		}
		if cw > 31 {
			return corruptf("column %q block %d: bad count width", c.c.name, b)
		}
		packed := r.Bytes(encoding.PackedLen(n, cw))
		if r.Err() != nil {
			return r.Err()
		}
		o := resize(offs, n+1)
		if _, err := encoding.Unpack(o[1:], packed, n, cw); err != nil {
			return err
		}
		o[0] = 0
		var total int64
		for i := 1; i <= n; i++ {
			total += int64(o[i])
			if total > encoding.MaxBlockValues {
				return corruptf("column %q block %d: too many values", c.c.name, b)
			}
			o[i] = int32(total)
		}
		v, err := decodeIDs(r, ids, c.c.cardinality)
		if err != nil {
			return err
		}
		if int64(len(v)) != total || r.Remaining() != 0 {
			return corruptf("column %q block %d: value count mismatch", c.c.name, b)
		}
		outOffs, outIDs = o, v
		return nil
	})
	return outOffs, outIDs, err
}

// MultiIDs decodes rows [from, to): row from+i holds ids[offs[i]:offs[i+1]].
func (c *StringColumn) MultiIDs(from, to int, offs, ids []int32) ([]int32, []int32, error) {
	if from < 0 || to > c.s.ft.numRows || from > to {
		return offs, ids, fmt.Errorf("segment: row range [%d, %d) out of range", from, to)
	}
	offs, ids = append(offs[:0], 0), ids[:0]
	rpb := c.s.ft.rowsPerBlock
	var bo, bi []int32
	for b := from / rpb; b*rpb < to; b++ {
		var err error
		if bo, bi, err = c.BlockMultiIDs(b, bo, bi); err != nil {
			return offs, ids, err
		}
		start := b * rpb
		lo, hi := max(from-start, 0), min(to-start, len(bo)-1)
		base := int32(len(ids)) - bo[lo]
		ids = append(ids, bi[bo[lo]:bo[hi]]...)
		for i := lo + 1; i <= hi; i++ {
			offs = append(offs, bo[i]+base)
		}
	}
	return offs, ids, nil
}

func (c *StringColumn) posting(id int) ([]byte, error) {
	st, err := c.s.stringState(c.idx)
	if err != nil {
		return nil, err
	}
	if id < 0 || id >= c.c.cardinality {
		return nil, fmt.Errorf("segment: column %q: id %d out of range", c.c.name, id)
	}
	post, _, err := c.s.region(c.c, regionPostings)
	if err != nil {
		return nil, err
	}
	lo := encoding.Get(st.offs, id, st.offWidth)
	hi := encoding.Get(st.offs, id+1, st.offWidth)
	return post[lo:hi], nil
}

// Bitmap returns the rows holding value id. The bitmap may reference the
// column's verified copy of its postings; it is copy-on-write, so modifying
// it is safe.
func (c *StringColumn) Bitmap(id int) (*roaring.Bitmap, error) {
	p, err := c.posting(id)
	if err != nil {
		return nil, err
	}
	bm, err := encoding.DecodePosting(p, c.s.ft.numRows)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q posting %d: %v", ErrCorrupt, c.c.name, id, err)
	}
	return bm, nil
}

// BitmapCardinality returns the number of rows holding value id without
// decoding its posting.
func (c *StringColumn) BitmapCardinality(id int) (int, error) {
	p, err := c.posting(id)
	if err != nil {
		return 0, err
	}
	n, err := encoding.PostingCardinality(p)
	if err != nil {
		return 0, fmt.Errorf("%w: column %q posting %d: %v", ErrCorrupt, c.c.name, id, err)
	}
	return n, nil
}

// NullBitmap returns the rows that are null: rows holding the null id and,
// for multi-value columns, rows holding no value at all.
func (c *StringColumn) NullBitmap() (*roaring.Bitmap, error) {
	d, err := c.Dictionary()
	if err != nil {
		return nil, err
	}
	bm := roaring.New()
	if d.HasNull() {
		if bm, err = c.Bitmap(0); err != nil {
			return nil, err
		}
	}
	if c.MultiValue() {
		e, err := c.EmptyRows()
		if err != nil {
			return nil, err
		}
		if !e.IsEmpty() {
			bm = roaring.Or(bm, e)
		}
	}
	return bm, nil
}

// EmptyRows returns the rows of a multi-value column that hold no value.
func (c *StringColumn) EmptyRows() (*roaring.Bitmap, error) {
	b, ok, err := c.s.region(c.c, regionEmptyRows)
	if err != nil || !ok {
		return roaring.New(), err
	}
	bm, err := encoding.DecodeBitmap(b)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q empty rows: %v", ErrCorrupt, c.c.name, err)
	}
	if !bm.IsEmpty() && int(bm.Maximum()) >= c.s.ft.numRows {
		return nil, corruptf("column %q: empty-row bitmap out of range", c.c.name)
	}
	return bm, nil
}

// ComplexColumn reads a complex (blob) column.
type ComplexColumn struct {
	s *Segment
	c *columnMeta
}

// Info describes the column.
func (c *ComplexColumn) Info() ColumnInfo { return c.c.info() }

// Type is the complex type name (package blob).
func (c *ComplexColumn) Type() string { return c.c.complexType }

// Version is the format version of the blobs.
func (c *ComplexColumn) Version() int { return c.c.complexVersion }

// NumBlocks is the number of blocks.
func (c *ComplexColumn) NumBlocks() int { return len(c.c.blocks) }

// Nulls returns the null rows.
func (c *ComplexColumn) Nulls() (*roaring.Bitmap, error) { return nullBitmap(c.s, c.c) }

// Blobs holds the decoded blobs of one block. Reuse one across calls to
// avoid allocation.
type Blobs struct {
	ends []uint32 // ends[i] is the end of row i's blob in data
	data []byte
}

// Len is the number of rows in the block.
func (bs *Blobs) Len() int { return len(bs.ends) }

// At returns the blob of row i of the block (empty for null rows). The
// slice must not be modified.
func (bs *Blobs) At(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = bs.ends[i-1]
	}
	return bs.data[start:bs.ends[i]:bs.ends[i]]
}

// Block decodes block b into bs.
func (c *ComplexColumn) Block(b int, bs *Blobs) error {
	raw, err := c.s.blockData(c.c, b)
	if err != nil {
		return err
	}
	r := encoding.NewReader(raw)
	n := r.Int(encoding.MaxBlockValues)
	w := int(r.Byte())
	if r.Err() != nil || w > 32 {
		return corruptf("column %q block %d: bad blob header", c.c.name, b)
	}
	if want := c.s.ft.blockRowsAt(b); n != want {
		return corruptf("column %q block %d: %d rows, want %d", c.c.name, b, n, want)
	}
	packed := r.Bytes(encoding.PackedLen(n, w))
	if r.Err() != nil {
		return corruptf("column %q block %d: truncated", c.c.name, b)
	}
	ends, err := encoding.Unpack(bs.ends[:0], packed, n, w)
	if err != nil {
		return fmt.Errorf("%w: column %q block %d: %v", ErrCorrupt, c.c.name, b, err)
	}
	var total uint64
	for i, l := range ends {
		total += uint64(l)
		if total > uint64(r.Remaining()) {
			return corruptf("column %q block %d: blob lengths exceed block", c.c.name, b)
		}
		ends[i] = uint32(total)
	}
	if total != uint64(r.Remaining()) {
		return corruptf("column %q block %d: trailing bytes", c.c.name, b)
	}
	bs.ends, bs.data = ends, raw[r.Offset():]
	return nil
}

// Blob returns a copy of the blob of one row (nil for a null row).
func (c *ComplexColumn) Blob(row int) ([]byte, error) {
	if row < 0 || row >= c.s.ft.numRows {
		return nil, fmt.Errorf("segment: row %d out of range", row)
	}
	var bs Blobs
	b := row / c.s.ft.rowsPerBlock
	if err := c.Block(b, &bs); err != nil {
		return nil, err
	}
	if c.c.flags&flagHasNulls != 0 {
		nulls, err := c.Nulls()
		if err != nil {
			return nil, err
		}
		if nulls.Contains(uint32(row)) {
			return nil, nil
		}
	}
	return append([]byte{}, bs.At(row-b*c.s.ft.rowsPerBlock)...), nil
}
