package segment

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"

	"strata/storage/encoding"
)

// FormatVersion is the version of the file format this package writes and
// reads (docs/segment-format.md).
const FormatVersion = 1

var magic = [4]byte{'S', 'S', 'E', 'G'}

const (
	headerSize  = 8  // magic, version uint16, reserved uint16
	trailerSize = 24 // footer offset u64, footer length u32, footer crc u32, version u16, reserved u16, magic

	maxRowsPerBlock = 1 << 20
	maxRows         = math.MaxInt32
)

// Region kinds (per-column auxiliary data).
const (
	regionDictionary     byte = 1
	regionPostingOffsets byte = 2
	regionPostings       byte = 3
	regionNullBitmap     byte = 4
	regionEmptyRows      byte = 5
)

// Column flags.
const (
	flagHasNulls   byte = 1
	flagMultiValue byte = 2
)

// ErrCorrupt is wrapped by every error caused by a malformed or damaged file.
var ErrCorrupt = errors.New("segment: corrupt file")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

type region struct {
	kind        byte
	off, length uint64
	crc         uint32
	idx         int // index of this region's heap copy (Segment.regions)
}

type block struct {
	off, length uint64
	raw         uint32
	crc         uint32
	nullCount   uint32
	min, max    uint64 // int64 for long kinds, float64 bits for float/double
}

type columnMeta struct {
	name           string
	kind           Kind
	role           Role
	flags          byte
	codec          encoding.Codec
	complexType    string
	complexVersion int
	aggregator     string
	nullCount      int
	minLong        int64
	maxLong        int64
	minDouble      float64
	maxDouble      float64
	cardinality    int
	totalValues    int
	minString      string
	maxString      string
	regions        []region
	blocks         []block
}

type footer struct {
	numRows      int
	rowsPerBlock int
	interval     Interval
	minTime      int64
	maxTime      int64
	rollup       bool
	meta         [][2]string
	sortColumns  []string
	columns      []columnMeta
}

func (c *columnMeta) region(kind byte) (region, bool) {
	for _, r := range c.regions {
		if r.kind == kind {
			return r, true
		}
	}
	return region{}, false
}

func (c *columnMeta) size() int64 {
	var n uint64
	for _, r := range c.regions {
		n += r.length
	}
	for _, b := range c.blocks {
		n += b.length
	}
	return int64(n)
}

func isLongKind(k Kind) bool  { return k == KindLong }
func isFloatKind(k Kind) bool { return k == KindFloat || k == KindDouble }

func (f *footer) encode() []byte {
	var b []byte
	b = encoding.AppendUvarint(b, FormatVersion)
	b = encoding.AppendUvarint(b, uint64(f.numRows))
	b = encoding.AppendUvarint(b, uint64(f.rowsPerBlock))
	b = encoding.AppendVarint(b, f.interval.Start)
	b = encoding.AppendVarint(b, f.interval.End)
	b = encoding.AppendVarint(b, f.minTime)
	b = encoding.AppendVarint(b, f.maxTime)
	if f.rollup {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = encoding.AppendUvarint(b, uint64(len(f.meta)))
	for _, kv := range f.meta {
		b = encoding.AppendLenBytes(b, kv[0])
		b = encoding.AppendLenBytes(b, kv[1])
	}
	b = encoding.AppendUvarint(b, uint64(len(f.sortColumns)))
	for _, s := range f.sortColumns {
		b = encoding.AppendLenBytes(b, s)
	}
	b = encoding.AppendUvarint(b, uint64(len(f.columns)))
	for i := range f.columns {
		c := &f.columns[i]
		b = encoding.AppendLenBytes(b, c.name)
		b = append(b, byte(c.kind), byte(c.role), c.flags, byte(c.codec))
		b = encoding.AppendLenBytes(b, c.complexType)
		b = encoding.AppendUvarint(b, uint64(c.complexVersion))
		b = encoding.AppendLenBytes(b, c.aggregator)
		b = encoding.AppendUvarint(b, uint64(c.nullCount))
		switch {
		case isLongKind(c.kind):
			b = encoding.AppendVarint(b, c.minLong)
			b = encoding.AppendVarint(b, c.maxLong)
		case isFloatKind(c.kind):
			b = encoding.AppendUint64(b, math.Float64bits(c.minDouble))
			b = encoding.AppendUint64(b, math.Float64bits(c.maxDouble))
		case c.kind == KindString:
			b = encoding.AppendUvarint(b, uint64(c.cardinality))
			b = encoding.AppendUvarint(b, uint64(c.totalValues))
			b = encoding.AppendLenBytes(b, c.minString)
			b = encoding.AppendLenBytes(b, c.maxString)
		}
		b = encoding.AppendUvarint(b, uint64(len(c.regions)))
		for _, r := range c.regions {
			b = append(b, r.kind)
			b = encoding.AppendUvarint(b, r.off)
			b = encoding.AppendUvarint(b, r.length)
			b = encoding.AppendUint32(b, r.crc)
		}
		b = encoding.AppendUvarint(b, uint64(len(c.blocks)))
		for _, bl := range c.blocks {
			b = encoding.AppendUvarint(b, bl.off)
			b = encoding.AppendUvarint(b, bl.length)
			b = encoding.AppendUvarint(b, uint64(bl.raw))
			b = encoding.AppendUint32(b, bl.crc)
			switch {
			case isLongKind(c.kind):
				b = encoding.AppendUvarint(b, uint64(bl.nullCount))
				b = encoding.AppendVarint(b, int64(bl.min))
				b = encoding.AppendVarint(b, int64(bl.max))
			case isFloatKind(c.kind):
				b = encoding.AppendUvarint(b, uint64(bl.nullCount))
				b = encoding.AppendUint64(b, bl.min)
				b = encoding.AppendUint64(b, bl.max)
			}
		}
	}
	return b
}

// encodeTrailer returns the fixed trailer that ends every file.
func encodeTrailer(footerOff uint64, footer []byte) []byte {
	t := make([]byte, 0, trailerSize)
	t = binary.LittleEndian.AppendUint64(t, footerOff)
	t = binary.LittleEndian.AppendUint32(t, uint32(len(footer)))
	t = binary.LittleEndian.AppendUint32(t, crc(footer))
	t = binary.LittleEndian.AppendUint16(t, FormatVersion)
	t = binary.LittleEndian.AppendUint16(t, 0)
	return append(t, magic[:]...)
}

func encodeHeader() []byte {
	h := append([]byte(nil), magic[:]...)
	h = binary.LittleEndian.AppendUint16(h, FormatVersion)
	return binary.LittleEndian.AppendUint16(h, 0)
}

// parseFile checks header and trailer, verifies the footer checksum and
// decodes and validates the footer. It does not look at column data.
func parseFile(data []byte) (*footer, error) {
	if len(data) < headerSize+trailerSize {
		return nil, corruptf("file too short (%d bytes)", len(data))
	}
	if [4]byte(data[:4]) != magic {
		return nil, corruptf("bad magic")
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != FormatVersion {
		return nil, fmt.Errorf("%w: unsupported format version %d", ErrCorrupt, v)
	}
	if binary.LittleEndian.Uint16(data[6:]) != 0 {
		return nil, corruptf("reserved header bytes set")
	}
	t := data[len(data)-trailerSize:]
	if [4]byte(t[20:24]) != magic {
		return nil, corruptf("bad trailer magic (truncated file?)")
	}
	if v := binary.LittleEndian.Uint16(t[16:]); v != FormatVersion || binary.LittleEndian.Uint16(t[18:]) != 0 {
		return nil, corruptf("bad trailer version")
	}
	footOff := binary.LittleEndian.Uint64(t[0:])
	footLen := uint64(binary.LittleEndian.Uint32(t[8:]))
	dataEnd := uint64(len(data) - trailerSize)
	if footOff < headerSize || footOff > dataEnd || footLen != dataEnd-footOff {
		return nil, corruptf("footer location out of range")
	}
	fb := data[footOff:dataEnd]
	if crc(fb) != binary.LittleEndian.Uint32(t[12:]) {
		return nil, corruptf("footer checksum mismatch")
	}
	f, err := decodeFooter(fb)
	if err != nil {
		return nil, err
	}
	if err := f.validate(footOff); err != nil {
		return nil, err
	}
	return f, nil
}

func decodeFooter(fb []byte) (*footer, error) {
	r := encoding.NewReader(fb)
	if v := r.Uvarint(); v != FormatVersion && r.Err() == nil {
		return nil, corruptf("footer version %d", v)
	}
	f := &footer{}
	f.numRows = r.Int(maxRows)
	f.rowsPerBlock = r.Int(maxRowsPerBlock)
	f.interval.Start = r.Varint()
	f.interval.End = r.Varint()
	f.minTime = r.Varint()
	f.maxTime = r.Varint()
	f.rollup = r.Byte() == 1
	nMeta := r.Int(r.Remaining() / 2)
	for i := 0; i < nMeta && r.Err() == nil; i++ {
		k := r.String()
		v := r.String()
		f.meta = append(f.meta, [2]string{k, v})
	}
	nSort := r.Int(r.Remaining())
	for i := 0; i < nSort && r.Err() == nil; i++ {
		f.sortColumns = append(f.sortColumns, r.String())
	}
	nCols := r.Int(r.Remaining() / 8)
	regions := 0
	for i := 0; i < nCols && r.Err() == nil; i++ {
		var c columnMeta
		c.name = r.String()
		c.kind = Kind(r.Byte())
		c.role = Role(r.Byte())
		c.flags = r.Byte()
		c.codec = encoding.Codec(r.Byte())
		c.complexType = r.String()
		c.complexVersion = r.Int(math.MaxInt32)
		c.aggregator = r.String()
		c.nullCount = r.Int(maxRows)
		switch {
		case isLongKind(c.kind):
			c.minLong = r.Varint()
			c.maxLong = r.Varint()
		case isFloatKind(c.kind):
			c.minDouble = math.Float64frombits(r.Uint64())
			c.maxDouble = math.Float64frombits(r.Uint64())
		case c.kind == KindString:
			c.cardinality = r.Int(maxRows + 1)
			c.totalValues = r.Int(math.MaxInt64)
			c.minString = r.String()
			c.maxString = r.String()
		}
		nReg := r.Int(r.Remaining() / 7)
		for j := 0; j < nReg && r.Err() == nil; j++ {
			reg := region{kind: r.Byte(), off: r.Uvarint(), length: r.Uvarint(), crc: r.Uint32(), idx: regions}
			regions++
			c.regions = append(c.regions, reg)
		}
		nBlocks := r.Int(r.Remaining() / 7)
		if r.Err() == nil {
			c.blocks = make([]block, 0, nBlocks)
		}
		for j := 0; j < nBlocks && r.Err() == nil; j++ {
			bl := block{off: r.Uvarint(), length: r.Uvarint()}
			raw := r.Uvarint()
			if raw > encoding.MaxRawBlock {
				return nil, corruptf("column %q block %d: raw length %d too large", c.name, j, raw)
			}
			bl.raw = uint32(raw)
			bl.crc = r.Uint32()
			switch {
			case isLongKind(c.kind):
				bl.nullCount = uint32(r.Int(maxRowsPerBlock))
				bl.min = uint64(r.Varint())
				bl.max = uint64(r.Varint())
			case isFloatKind(c.kind):
				bl.nullCount = uint32(r.Int(maxRowsPerBlock))
				bl.min = r.Uint64()
				bl.max = r.Uint64()
			}
			c.blocks = append(c.blocks, bl)
		}
		f.columns = append(f.columns, c)
	}
	if r.Err() != nil {
		return nil, fmt.Errorf("%w: footer: %v", ErrCorrupt, r.Err())
	}
	if r.Remaining() != 0 {
		return nil, corruptf("trailing bytes in footer")
	}
	return f, nil
}

// validate checks the footer's internal consistency: block counts, kinds,
// required regions, and that the regions and blocks of all columns tile the
// data area between header and footer exactly, so every stored byte is
// covered by exactly one checksum.
func (f *footer) validate(dataEnd uint64) error {
	if f.rowsPerBlock <= 0 {
		return corruptf("rows per block %d", f.rowsPerBlock)
	}
	if f.interval.End < f.interval.Start {
		return corruptf("interval end before start")
	}
	wantBlocks := (f.numRows + f.rowsPerBlock - 1) / f.rowsPerBlock
	if len(f.columns) == 0 || f.columns[0].name != TimeColumn || f.columns[0].kind != KindLong || f.columns[0].role != RoleTime {
		return corruptf("first column must be the %s long column", TimeColumn)
	}
	seen := make(map[string]bool, len(f.columns))
	type span struct{ off, end uint64 }
	var spans []span
	for i := range f.columns {
		c := &f.columns[i]
		if seen[c.name] {
			return corruptf("duplicate column %q", c.name)
		}
		seen[c.name] = true
		if c.kind < KindLong || c.kind > KindComplex || c.role > RoleMetric || (c.role == RoleTime) != (i == 0) {
			return corruptf("column %q: bad kind or role", c.name)
		}
		if c.flags&^(flagHasNulls|flagMultiValue) != 0 || (c.flags&flagMultiValue != 0 && c.kind != KindString) {
			return corruptf("column %q: bad flags", c.name)
		}
		if !c.codec.Valid() {
			return corruptf("column %q: unknown codec %d", c.name, c.codec)
		}
		if c.nullCount > f.numRows || (c.nullCount > 0) != (c.flags&flagHasNulls != 0) {
			return corruptf("column %q: null count inconsistent", c.name)
		}
		if len(c.blocks) != wantBlocks {
			return corruptf("column %q: %d blocks, want %d", c.name, len(c.blocks), wantBlocks)
		}
		for j, bl := range c.blocks {
			if int(bl.nullCount) > f.blockRowsAt(j) {
				return corruptf("column %q block %d: null count too large", c.name, j)
			}
			if bl.off > dataEnd || bl.length > dataEnd-bl.off {
				return corruptf("column %q block %d out of range", c.name, j)
			}
			spans = append(spans, span{bl.off, bl.off + bl.length})
		}
		kinds := map[byte]bool{}
		for _, r := range c.regions {
			if kinds[r.kind] {
				return corruptf("column %q: duplicate region %d", c.name, r.kind)
			}
			kinds[r.kind] = true
			if r.off > dataEnd || r.length > dataEnd-r.off {
				return corruptf("column %q region %d out of range", c.name, r.kind)
			}
			spans = append(spans, span{r.off, r.off + r.length})
		}
		var allowed, required []byte
		switch c.kind {
		case KindString:
			required = []byte{regionDictionary, regionPostingOffsets, regionPostings}
			allowed = required
			if c.flags&flagMultiValue != 0 {
				allowed = append(allowed, regionEmptyRows)
			}
			if c.cardinality == 0 && f.numRows > 0 && c.flags&flagMultiValue == 0 {
				return corruptf("column %q: empty dictionary", c.name)
			}
		default:
			if c.flags&flagHasNulls != 0 {
				required = []byte{regionNullBitmap}
			}
			allowed = required
		}
		for _, k := range required {
			if !kinds[k] {
				return corruptf("column %q: missing region %d", c.name, k)
			}
		}
		for k := range kinds {
			ok := false
			for _, a := range allowed {
				ok = ok || a == k
			}
			if !ok {
				return corruptf("column %q: unexpected region %d", c.name, k)
			}
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	pos := uint64(headerSize)
	for _, s := range spans {
		if s.off != pos {
			return corruptf("data area not contiguous at offset %d", pos)
		}
		pos = s.end
	}
	if pos != dataEnd {
		return corruptf("data area ends at %d, footer at %d", pos, dataEnd)
	}
	return nil
}

// blockRowsAt is the number of rows in block j.
func (f *footer) blockRowsAt(j int) int {
	start := j * f.rowsPerBlock
	return min(f.numRows-start, f.rowsPerBlock)
}
