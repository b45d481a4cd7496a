package segment

import (
	"github.com/RoaringBitmap/roaring/v2"

	"strata/storage/encoding"
)

// A value's posting is stored as a roaring bitmap when it has at least
// roaringMinRows rows or covers one row in denseFraction, and as a
// gap-coded list otherwise. Lists are smaller (about log2(rows/count)+1
// bits a row against roaring's 16 for sparse containers) but must be
// converted on every read, at a few ns a row; roaring postings are used in
// place from the mapped file.
const (
	roaringMinRows = 1024
	denseFraction  = 16
)

// writeStrings writes a string dimension: row blocks of dictionary ids, the
// front-coded dictionary, and one posting (bitmap index) per id.
func (fw *fileWriter) writeStrings(c *columnMeta, comp Compression, d *stringDim, perm []int32) error {
	card := d.cardinality()
	c.cardinality = card
	if len(d.sorted) > 0 {
		c.minString, c.maxString = d.sorted[0], d.sorted[len(d.sorted)-1]
	}
	if d.multi {
		c.flags |= flagMultiValue
	}

	// Count the rows of each id (multi-value: rows holding it at least once).
	// 32-bit counters: next below is written at random for every row, and
	// at half the size it stays in the second-level cache for columns of a
	// few hundred thousand values.
	fw.counts = scratch(fw.counts, card+1)
	counts := fw.counts
	clear(counts)
	if !d.multi {
		for _, id := range d.ids {
			counts[id+1]++
		}
	} else {
		for r := range fw.numRows {
			row := d.mv[d.offs[r]:d.offs[r+1]]
			for j, id := range row {
				if !containsBefore(row, j, id) {
					counts[id+1]++
				}
			}
		}
	}
	// counts[id+1] becomes the start of id's rows in byID (prefix sums).
	total := uint32(0)
	for i := 1; i <= card; i++ {
		n := counts[i]
		counts[i] = total
		total += n
	}
	fw.byID = scratch(fw.byID, int(total))
	byID := fw.byID
	next := counts[1:] // next free slot per id

	var empty *roaring.Bitmap
	if !d.multi {
		fw.ids = scratch(fw.ids, fw.rowsPerBlock)
		ids := fw.ids[:0]
		for b := range fw.numBlocks() {
			start, end := fw.blockRange(b)
			ids = ids[:0]
			mn := uint32(card)
			var mx uint32
			for i := start; i < end; i++ {
				id := d.ids[rowAt(perm, i)]
				byID[next[id]] = uint32(i)
				next[id]++
				ids = append(ids, uint32(id))
				mn, mx = min(mn, uint32(id)), max(mx, uint32(id))
			}
			fw.raw = appendIDBlock(fw.raw[:0], ids, mn, mx)
			if err := fw.addBlock(c, comp, fw.raw, block{}); err != nil {
				return err
			}
		}
		c.totalValues = fw.numRows
		if d.hasNull {
			c.nullCount = int(next[0]) // all of id 0's rows have been placed
		}
	} else {
		cnts := make([]uint32, 0, fw.rowsPerBlock)
		vals := make([]uint32, 0, 2*fw.rowsPerBlock)
		for b := range fw.numBlocks() {
			start, end := fw.blockRange(b)
			cnts, vals = cnts[:0], vals[:0]
			mn := uint32(card)
			var mx, maxCnt uint32
			for i := start; i < end; i++ {
				r := rowAt(perm, i)
				row := d.mv[d.offs[r]:d.offs[r+1]]
				if len(row) == 0 {
					if empty == nil {
						empty = roaring.New()
					}
					empty.Add(uint32(i))
				}
				cnts = append(cnts, uint32(len(row)))
				maxCnt = max(maxCnt, uint32(len(row)))
				for j, id := range row {
					if !containsBefore(row, j, id) {
						byID[next[id]] = uint32(i)
						next[id]++
					}
					vals = append(vals, uint32(id))
					mn, mx = min(mn, uint32(id)), max(mx, uint32(id))
				}
			}
			cw := encoding.BitsFor(uint64(maxCnt))
			fw.raw = encoding.AppendUvarint(fw.raw[:0], uint64(len(cnts)))
			fw.raw = append(fw.raw, byte(cw))
			fw.raw = encoding.Pack(fw.raw, cnts, cw)
			fw.raw = appendIDBlock(fw.raw, vals, mn, mx)
			if err := fw.addBlock(c, comp, fw.raw, block{}); err != nil {
				return err
			}
		}
		c.totalValues = len(d.mv)
		if d.hasNull {
			c.nullCount = int(next[0])
		}
		if empty != nil {
			c.nullCount += int(empty.GetCardinality())
		}
	}
	if c.nullCount > 0 {
		c.flags |= flagHasNulls
	}

	if err := fw.addRegion(c, regionDictionary, encoding.AppendDict(nil, d.sorted, d.hasNull)); err != nil {
		return err
	}
	// Postings and their offsets.
	var postings []byte
	offsets := make([]uint64, 0, card+1)
	start := uint32(0)
	for id := range card {
		offsets = append(offsets, uint64(len(postings)))
		rows := byID[start:next[id]]
		start = next[id]
		if len(rows) >= roaringMinRows || (len(rows) >= 64 && len(rows)*denseFraction >= fw.numRows) {
			var err error
			if postings, err = encoding.AppendPostingRows(postings, rows); err != nil {
				return err
			}
		} else {
			postings = encoding.AppendPostingList(postings, rows)
		}
	}
	offsets = append(offsets, uint64(len(postings)))
	w := encoding.BitsFor(uint64(len(postings)))
	offRegion := append([]byte{byte(w)}, encoding.Pack(nil, offsets, w)...)
	if err := fw.addRegion(c, regionPostingOffsets, offRegion); err != nil {
		return err
	}
	if err := fw.addRegion(c, regionPostings, postings); err != nil {
		return err
	}
	if empty != nil {
		empty.RunOptimize()
		b, err := empty.ToBytes()
		if err != nil {
			return err
		}
		return fw.addRegion(c, regionEmptyRows, b)
	}
	return nil
}

// appendIDBlock appends dictionary ids frame-of-reference coded: count,
// minimum, bit width, then the packed differences from the minimum.
func appendIDBlock(dst []byte, ids []uint32, mn, mx uint32) []byte {
	if len(ids) == 0 {
		mn, mx = 0, 0
	}
	w := encoding.BitsFor(uint64(mx - mn))
	dst = encoding.AppendUvarint(dst, uint64(len(ids)))
	dst = encoding.AppendUvarint(dst, uint64(mn))
	dst = append(dst, byte(w))
	if mn == 0 {
		return encoding.Pack(dst, ids, w)
	}
	var buf [256]uint32
	for len(ids) > 0 {
		k := min(len(ids), len(buf))
		for i, id := range ids[:k] {
			buf[i] = id - mn
		}
		dst = encoding.Pack(dst, buf[:k], w)
		ids = ids[k:]
	}
	return dst
}

func containsBefore(row []int32, j int, id int32) bool {
	for _, x := range row[:j] {
		if x == id {
			return true
		}
	}
	return false
}
