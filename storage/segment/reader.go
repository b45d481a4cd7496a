package segment

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"strata/storage/encoding"
)

// Segment is an open, read-only segment file. Open memory-maps the file and
// checks its header, trailer and footer (with the footer checksum). Bytes of
// the mapping are never used unchecked: the file can change under the
// mapping at any time (a write to it, or a page read back from a failing
// disk after the kernel evicted it), so a check made once would not cover
// later reads. A column block is copied out of the mapping and its checksum
// verified on the copy, and the copy is what is decoded; the process-wide
// block cache (SetBlockCacheBytes) keeps recent verified copies for later
// reads. A region (dictionary, postings, null bitmap) is copied and
// verified the first time it is read and that heap copy serves every later
// read. Damage
// anywhere in the file surfaces as an error wrapping ErrCorrupt, from Open
// or from a read, never as changed values. Verify checks the whole file as
// it is now.
//
// A Segment is safe for concurrent use. Close unmaps the file; it must not
// be called while other goroutines still read the segment.
type Segment struct {
	data    []byte
	unmap   func([]byte) error
	ft      *footer
	byName  map[string]int
	regions []heldRegion // by region idx
	strs    []*stringState
	closed  atomic.Bool
}

// heldRegion is a region's verified heap copy, made on first use.
type heldRegion struct {
	once sync.Once
	b    []byte
	err  error
}

// Open memory-maps and opens the segment file at path.
func Open(path string) (*Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < headerSize+trailerSize {
		return nil, corruptf("%s: file too short (%d bytes)", path, size)
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("segment: %s: file too large to map", path)
	}
	data, unmap, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("segment: map %s: %w", path, err)
	}
	s, err := newSegment(data)
	if err != nil {
		unmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.unmap = unmap
	return s, nil
}

// OpenBytes opens a segment held in memory (tests, fuzzing, small files).
// data must not be modified while the Segment is in use.
func OpenBytes(data []byte) (*Segment, error) { return newSegment(data) }

func newSegment(data []byte) (*Segment, error) {
	ft, err := parseFile(data)
	if err != nil {
		return nil, err
	}
	s := &Segment{data: data, ft: ft, byName: make(map[string]int, len(ft.columns))}
	regions := 0
	for i := range ft.columns {
		c := &ft.columns[i]
		s.byName[c.name] = i
		regions += len(c.regions)
	}
	s.regions = make([]heldRegion, regions)
	s.strs = make([]*stringState, len(ft.columns))
	for i := range ft.columns {
		if ft.columns[i].kind == KindString {
			s.strs[i] = &stringState{}
		}
	}
	return s, nil
}

// Close unmaps the file.
func (s *Segment) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	blocks.drop(s)
	if s.unmap == nil {
		return nil
	}
	return s.unmap(s.data)
}

// NumRows is the number of rows.
func (s *Segment) NumRows() int { return s.ft.numRows }

// RowsPerBlock is the number of rows in every column block but the last.
func (s *Segment) RowsPerBlock() int { return s.ft.rowsPerBlock }

// NumBlocks is the number of blocks of every column.
func (s *Segment) NumBlocks() int { return len(s.ft.columns[0].blocks) }

// BlockRows returns the row range [start, end) of block b.
func (s *Segment) BlockRows(b int) (start, end int) {
	start = b * s.ft.rowsPerBlock
	return start, min(start+s.ft.rowsPerBlock, s.ft.numRows)
}

// Interval is the time chunk the segment was built for.
func (s *Segment) Interval() Interval { return s.ft.interval }

// TimeRange returns the least and greatest stored row time (0, 0 when the
// segment is empty).
func (s *Segment) TimeRange() (minTime, maxTime int64) { return s.ft.minTime, s.ft.maxTime }

// Rollup reports whether the segment was built with rollup.
func (s *Segment) Rollup() bool { return s.ft.rollup }

// SortColumns are the dimensions rows are sorted by after __time.
func (s *Segment) SortColumns() []string { return append([]string(nil), s.ft.sortColumns...) }

// Metadata returns the key/value metadata stored by the writer.
func (s *Segment) Metadata() map[string]string {
	m := make(map[string]string, len(s.ft.meta))
	for _, kv := range s.ft.meta {
		m[kv[0]] = kv[1]
	}
	return m
}

// Size is the file size in bytes.
func (s *Segment) Size() int64 { return int64(len(s.data)) }

// Columns describes all columns, __time first, then dimensions and metrics
// in spec order.
func (s *Segment) Columns() []ColumnInfo {
	out := make([]ColumnInfo, len(s.ft.columns))
	for i := range s.ft.columns {
		out[i] = s.ft.columns[i].info()
	}
	return out
}

// Column describes one column.
func (s *Segment) Column(name string) (ColumnInfo, bool) {
	i, ok := s.byName[name]
	if !ok {
		return ColumnInfo{}, false
	}
	return s.ft.columns[i].info(), true
}

func (c *columnMeta) info() ColumnInfo {
	return ColumnInfo{
		Name: c.name, Kind: c.kind, Role: c.role,
		MultiValue:     c.flags&flagMultiValue != 0,
		HasNulls:       c.flags&flagHasNulls != 0,
		NullCount:      c.nullCount,
		ComplexType:    c.complexType,
		ComplexVersion: c.complexVersion,
		Aggregator:     c.aggregator,
		Codec:          c.codec.String(),
		Size:           c.size(),
		MinLong:        c.minLong, MaxLong: c.maxLong,
		MinDouble: c.minDouble, MaxDouble: c.maxDouble,
		Cardinality: c.cardinality, TotalValues: c.totalValues,
		MinString: c.minString, MaxString: c.maxString,
	}
}

// ErrNoColumn is returned for a column the segment does not have.
var ErrNoColumn = errors.New("segment: no such column")

func (s *Segment) col(name string, kinds ...Kind) (*columnMeta, int, error) {
	i, ok := s.byName[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: %q", ErrNoColumn, name)
	}
	c := &s.ft.columns[i]
	for _, k := range kinds {
		if c.kind == k {
			return c, i, nil
		}
	}
	return nil, 0, fmt.Errorf("segment: column %q is %v", name, c.kind)
}

// copyChecked copies length bytes at off out of the mapping into dst
// (resized and returned) and verifies the copy against want: the bytes the
// caller goes on to use are exactly the bytes checked, whatever happens to
// the file meanwhile.
func (s *Segment) copyChecked(dst []byte, off, length uint64, want uint32) ([]byte, error) {
	if s.closed.Load() {
		return dst, errors.New("segment: closed")
	}
	dst = append(dst[:0], s.data[off:off+length]...)
	if crc(dst) != want {
		return dst, corruptf("checksum mismatch at offset %d (%d bytes)", off, length)
	}
	return dst, nil
}

// region returns the verified heap copy of a region of c (ok=false when c
// has none), copying it out of the mapping on first use. Regions are read
// often and in small pieces (one posting, one dictionary value), so they are
// checked once, as a whole, on the copy that then serves every read. A
// damaged region stays an error.
func (s *Segment) region(c *columnMeta, kind byte) ([]byte, bool, error) {
	r, ok := c.region(kind)
	if !ok {
		return nil, false, nil
	}
	h := &s.regions[r.idx]
	h.once.Do(func() {
		b, err := s.copyChecked(make([]byte, 0, r.length), r.off, r.length, r.crc)
		if err != nil {
			h.err = fmt.Errorf("column %q region %d: %w", c.name, kind, err)
			return
		}
		h.b = b
	})
	return h.b, true, h.err
}

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// blockData returns block b of c decompressed, from the block cache or else
// copied out of the mapping, verified and decompressed (then cached). The
// bytes are shared and must not be modified.
func (s *Segment) blockData(c *columnMeta, b int) ([]byte, error) {
	if b < 0 || b >= len(c.blocks) {
		return nil, fmt.Errorf("segment: column %q: block %d out of range", c.name, b)
	}
	k := blockKey{s, c, b}
	if raw, ok := blocks.get(k); ok {
		return raw, nil
	}
	bl := &c.blocks[b]
	var raw []byte
	if c.codec == encoding.CodecNone {
		var err error
		if raw, err = s.copyChecked(make([]byte, 0, bl.length), bl.off, bl.length, bl.crc); err != nil {
			return nil, fmt.Errorf("column %q block %d: %w", c.name, b, err)
		}
		if len(raw) != int(bl.raw) {
			return nil, corruptf("column %q block %d: stored length mismatch", c.name, b)
		}
	} else {
		sp := scratchPool.Get().(*[]byte)
		defer scratchPool.Put(sp)
		stored, err := s.copyChecked(*sp, bl.off, bl.length, bl.crc)
		*sp = stored[:0]
		if err != nil {
			return nil, fmt.Errorf("column %q block %d: %w", c.name, b, err)
		}
		if raw, err = encoding.Decompress(c.codec, make([]byte, 0, bl.raw), stored, int(bl.raw)); err != nil {
			return nil, fmt.Errorf("%w: column %q block %d: %v", ErrCorrupt, c.name, b, err)
		}
	}
	blocks.put(k, raw)
	return raw, nil
}

// withBlock runs fn on the decompressed bytes of a block.
func (s *Segment) withBlock(c *columnMeta, b int, fn func(raw []byte) error) error {
	raw, err := s.blockData(c, b)
	if err != nil {
		return err
	}
	if err := fn(raw); err != nil {
		if errors.Is(err, encoding.ErrCorrupt) {
			return fmt.Errorf("%w: column %q block %d: %v", ErrCorrupt, c.name, b, err)
		}
		return err
	}
	return nil
}

// Verify checks the file as it is now: the checksum of every region and
// block, and the structure of the string dictionaries and posting tables,
// returning the first problem. It reads the mapping in place and keeps
// nothing: the copies reads use are verified when they are made.
func (s *Segment) Verify() error {
	if s.closed.Load() {
		return errors.New("segment: closed")
	}
	for i := range s.ft.columns {
		c := &s.ft.columns[i]
		for _, r := range c.regions {
			if crc(s.data[r.off:r.off+r.length]) != r.crc {
				return fmt.Errorf("column %q region %d: %w", c.name, r.kind, corruptf("checksum mismatch at offset %d (%d bytes)", r.off, r.length))
			}
		}
		for j, bl := range c.blocks {
			if crc(s.data[bl.off:bl.off+bl.length]) != bl.crc {
				return fmt.Errorf("column %q block %d: %w", c.name, j, corruptf("checksum mismatch at offset %d (%d bytes)", bl.off, bl.length))
			}
		}
		if c.kind == KindString {
			at := func(kind byte) []byte {
				r, _ := c.region(kind) // validate made sure the regions exist
				return s.data[r.off : r.off+r.length]
			}
			if _, err := parseStrings(c, at(regionDictionary), at(regionPostingOffsets), uint64(len(at(regionPostings)))); err != nil {
				return err
			}
		}
	}
	return nil
}

// Times decodes the whole __time column into dst.
func (s *Segment) Times(dst []int64) ([]int64, error) {
	t := s.Time()
	dst = dst[:0]
	var buf []int64
	for b := range s.NumBlocks() {
		var err error
		if buf, err = t.Longs(b, buf); err != nil {
			return dst, err
		}
		dst = append(dst, buf...)
	}
	return dst, nil
}

// Time returns the __time column.
func (s *Segment) Time() *NumericColumn { return &NumericColumn{s: s, c: &s.ft.columns[0]} }

// Numeric returns a long, float or double column.
func (s *Segment) Numeric(name string) (*NumericColumn, error) {
	c, _, err := s.col(name, KindLong, KindFloat, KindDouble)
	if err != nil {
		return nil, err
	}
	return &NumericColumn{s: s, c: c}, nil
}

// Strings returns a string column.
func (s *Segment) Strings(name string) (*StringColumn, error) {
	c, i, err := s.col(name, KindString)
	if err != nil {
		return nil, err
	}
	return &StringColumn{s: s, c: c, idx: i}, nil
}

// Complex returns a complex column.
func (s *Segment) Complex(name string) (*ComplexColumn, error) {
	c, _, err := s.col(name, KindComplex)
	if err != nil {
		return nil, err
	}
	return &ComplexColumn{s: s, c: c}, nil
}
