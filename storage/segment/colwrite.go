package segment

import (
	"bufio"
	"math"
	"os"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/storage/encoding"
)

// fileWriter appends regions and blocks to a segment file and records their
// locations and checksums in the column metadata.
type fileWriter struct {
	f            *os.File
	bw           *bufio.Writer
	off          uint64
	numRows      int
	rowsPerBlock int
	raw          []byte // encoded block scratch
	comp         []byte // compressed block scratch
	// Scratch reused by the columns of a file.
	longs   []int64
	doubles []float64
	floats  []float32
	ids     []uint32
	counts  []uint32
	byID    []uint32
}

// scratch returns s resized to n elements, reusing its storage; the
// contents are unspecified.
func scratch[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (fw *fileWriter) write(b []byte) error {
	n, err := fw.bw.Write(b)
	fw.off += uint64(n)
	return err
}

func (fw *fileWriter) numBlocks() int {
	return (fw.numRows + fw.rowsPerBlock - 1) / fw.rowsPerBlock
}

func (fw *fileWriter) blockRange(b int) (int, int) {
	start := b * fw.rowsPerBlock
	return start, min(start+fw.rowsPerBlock, fw.numRows)
}

func (fw *fileWriter) addRegion(c *columnMeta, kind byte, data []byte) error {
	c.regions = append(c.regions, region{kind: kind, off: fw.off, length: uint64(len(data)), crc: crc(data)})
	return fw.write(data)
}

// addBlock compresses raw with the column codec and appends it. With
// automatic compression the codec is chosen on the column's first block.
func (fw *fileWriter) addBlock(c *columnMeta, comp Compression, raw []byte, bl block) error {
	if len(c.blocks) == 0 {
		switch comp {
		case CompressNone:
			c.codec = encoding.CodecNone
		case CompressLZ4:
			c.codec = encoding.CodecLZ4
		case CompressZstd:
			c.codec = encoding.CodecZstd
		default:
			c.codec = encoding.ChooseCodec(raw)
		}
	}
	stored := raw
	if c.codec != encoding.CodecNone {
		var err error
		fw.comp, err = encoding.Compress(c.codec, fw.comp[:0], raw)
		if err != nil {
			return err
		}
		stored = fw.comp
	}
	bl.off, bl.length, bl.raw, bl.crc = fw.off, uint64(len(stored)), uint32(len(raw)), crc(stored)
	c.blocks = append(c.blocks, bl)
	return fw.write(stored)
}

// rowAt maps a sorted row position to the accumulator row; a nil perm is
// the identity.
func rowAt(perm []int32, i int) int32 {
	if perm == nil {
		return int32(i)
	}
	return perm[i]
}

// nullRegion writes the null bitmap (in sorted row positions) if any.
func (fw *fileWriter) nullRegion(c *columnMeta, nulls *bitset, perm []int32) error {
	if nulls.n == 0 {
		return nil
	}
	bm := roaring.New()
	for i := range fw.numRows {
		if nulls.has(rowAt(perm, i)) {
			bm.Add(uint32(i))
		}
	}
	bm.RunOptimize()
	b, err := bm.ToBytes()
	if err != nil {
		return err
	}
	c.flags |= flagHasNulls
	c.nullCount = nulls.n
	return fw.addRegion(c, regionNullBitmap, b)
}

func (fw *fileWriter) writeLongs(c *columnMeta, comp Compression, src *longSource, perm []int32, tryDelta bool) error {
	fw.longs = scratch(fw.longs, fw.rowsPerBlock)
	buf := fw.longs[:0]
	first := true
	for b := range fw.numBlocks() {
		start, end := fw.blockRange(b)
		buf = buf[:0]
		var bl block
		var mn, mx int64
		seen := false
		for i := start; i < end; i++ {
			r := rowAt(perm, i)
			if src.nulls.n > 0 && src.nulls.has(r) {
				bl.nullCount++
				buf = append(buf, 0)
				continue
			}
			v := src.vals[r]
			if !seen {
				mn, mx, seen = v, v, true
			} else {
				mn, mx = min(mn, v), max(mx, v)
			}
			buf = append(buf, v)
		}
		if bl.nullCount > 0 {
			// Null slots take the block minimum so they do not widen the frame.
			for i := start; i < end; i++ {
				if src.nulls.has(rowAt(perm, i)) {
					buf[i-start] = mn
				}
			}
		}
		bl.min, bl.max = uint64(mn), uint64(mx)
		if seen {
			if first {
				c.minLong, c.maxLong, first = mn, mx, false
			} else {
				c.minLong, c.maxLong = min(c.minLong, mn), max(c.maxLong, mx)
			}
		}
		fw.raw = encoding.AppendInts(fw.raw[:0], buf, tryDelta)
		if err := fw.addBlock(c, comp, fw.raw, bl); err != nil {
			return err
		}
	}
	return fw.nullRegion(c, &src.nulls, perm)
}

func (fw *fileWriter) writeDoubles(c *columnMeta, comp Compression, src *doubleSource, perm []int32) error {
	fw.doubles = scratch(fw.doubles, fw.rowsPerBlock)
	buf := fw.doubles[:0]
	first := true
	for b := range fw.numBlocks() {
		start, end := fw.blockRange(b)
		buf = buf[:0]
		var bl block
		var mn, mx float64
		seen := false
		for i := start; i < end; i++ {
			r := rowAt(perm, i)
			if src.nulls.n > 0 && src.nulls.has(r) {
				bl.nullCount++
				buf = append(buf, 0)
				continue
			}
			v := src.vals[r]
			if !seen {
				mn, mx, seen = minFloat(v, v), maxFloat(v, v), true
			} else {
				mn, mx = minFloat(mn, v), maxFloat(mx, v)
			}
			buf = append(buf, v)
		}
		if bl.nullCount > 0 {
			for i := start; i < end; i++ {
				if src.nulls.has(rowAt(perm, i)) {
					buf[i-start] = mn
				}
			}
		}
		bl.min, bl.max = math.Float64bits(mn), math.Float64bits(mx)
		if seen {
			if first {
				c.minDouble, c.maxDouble, first = mn, mx, false
			} else {
				c.minDouble, c.maxDouble = minFloat(c.minDouble, mn), maxFloat(c.maxDouble, mx)
			}
		}
		fw.raw = encoding.AppendFloat64s(fw.raw[:0], buf)
		if err := fw.addBlock(c, comp, fw.raw, bl); err != nil {
			return err
		}
	}
	return fw.nullRegion(c, &src.nulls, perm)
}

func (fw *fileWriter) writeFloats(c *columnMeta, comp Compression, src *floatSource, perm []int32) error {
	fw.floats = scratch(fw.floats, fw.rowsPerBlock)
	buf := fw.floats[:0]
	first := true
	for b := range fw.numBlocks() {
		start, end := fw.blockRange(b)
		buf = buf[:0]
		var bl block
		var mn, mx float32
		seen := false
		for i := start; i < end; i++ {
			r := rowAt(perm, i)
			if src.nulls.n > 0 && src.nulls.has(r) {
				bl.nullCount++
				buf = append(buf, 0)
				continue
			}
			v := src.vals[r]
			if !seen {
				mn, mx, seen = float32(minFloat(float64(v), float64(v))), float32(maxFloat(float64(v), float64(v))), true
			} else {
				mn, mx = float32(minFloat(float64(mn), float64(v))), float32(maxFloat(float64(mx), float64(v)))
			}
			buf = append(buf, v)
		}
		if bl.nullCount > 0 {
			for i := start; i < end; i++ {
				if src.nulls.has(rowAt(perm, i)) {
					buf[i-start] = mn
				}
			}
		}
		bl.min, bl.max = math.Float64bits(float64(mn)), math.Float64bits(float64(mx))
		if seen {
			if first {
				c.minDouble, c.maxDouble, first = float64(mn), float64(mx), false
			} else {
				c.minDouble, c.maxDouble = minFloat(c.minDouble, float64(mn)), maxFloat(c.maxDouble, float64(mx))
			}
		}
		fw.raw = encoding.AppendFloat32s(fw.raw[:0], buf)
		if err := fw.addBlock(c, comp, fw.raw, bl); err != nil {
			return err
		}
	}
	return fw.nullRegion(c, &src.nulls, perm)
}

// minFloat and maxFloat ignore NaN unless both are NaN, so block ranges stay
// usable for pruning; a NaN value is recorded by widening to ±Inf.
func minFloat(a, b float64) float64 {
	switch {
	case a != a:
		return math.Inf(-1)
	case b != b:
		return math.Inf(-1)
	}
	return math.Min(a, b)
}

func maxFloat(a, b float64) float64 {
	switch {
	case a != a:
		return math.Inf(1)
	case b != b:
		return math.Inf(1)
	}
	return math.Max(a, b)
}

// writeBlobs writes a complex column: per block, the row count, the blob
// lengths bit-packed, then the blob bytes.
func (fw *fileWriter) writeBlobs(c *columnMeta, comp Compression, src blobSource, perm []int32) error {
	var nulls bitset
	var data []byte
	lens := make([]uint64, 0, fw.rowsPerBlock)
	for b := range fw.numBlocks() {
		start, end := fw.blockRange(b)
		data, lens = data[:0], lens[:0]
		var maxLen uint64
		for i := start; i < end; i++ {
			before := len(data)
			var ok bool
			var err error
			data, ok, err = src.appendBlob(data, rowAt(perm, i))
			if err != nil {
				return err
			}
			if !ok {
				data = data[:before]
				nulls.set(int32(i))
			}
			l := uint64(len(data) - before)
			lens = append(lens, l)
			maxLen = max(maxLen, l)
		}
		width := encoding.BitsFor(maxLen)
		fw.raw = encoding.AppendUvarint(fw.raw[:0], uint64(end-start))
		fw.raw = append(fw.raw, byte(width))
		fw.raw = encoding.Pack(fw.raw, lens, width)
		fw.raw = append(fw.raw, data...)
		if err := fw.addBlock(c, comp, fw.raw, block{}); err != nil {
			return err
		}
	}
	// nulls is indexed by sorted position already.
	return fw.nullRegion(c, &nulls, nil)
}
