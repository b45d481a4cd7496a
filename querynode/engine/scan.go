package engine

import (
	"sort"

	"strata/javacompat"
	"strata/querynode/query"
	"strata/storage/segment"
)

// ScanBatch is a batch of scanned rows of one segment, columnar.
type ScanBatch struct {
	SegmentID string     `json:"segmentId"`
	Columns   []string   `json:"columns"`
	Types     []string   `json:"types"` // column types for rowSignature ("" unknown)
	Cols      []*ScanCol `json:"cols"`
	Times     []int64    `json:"times"` // __time of each row, for ordering
}

// Len is the number of rows.
func (b *ScanBatch) Len() int { return len(b.Times) }

// ScanCol is one scanned column: scalar values, or for multi-value string
// columns a list of values per row.
type ScanCol struct {
	*DimCol
	Multi [][]string `json:"multi,omitempty"`
	// MultiNull marks the null elements of Multi's rows (nil for a row
	// without one); it stays nil while no row has one.
	MultiNull [][]bool `json:"multiNull,omitempty"`
	IsMV      bool     `json:"mv,omitempty"`
}

// appendMulti appends a row's list (nil: not a list) and its null marks.
func (c *ScanCol) appendMulti(list []string, null []bool) {
	if null != nil && c.MultiNull == nil {
		c.MultiNull = make([][]bool, len(c.Multi), cap(c.Multi))
	}
	c.Multi = append(c.Multi, list)
	if c.MultiNull != nil {
		c.MultiNull = append(c.MultiNull, null)
	}
}

// nullAt reports whether element j of row i's list is null.
func (c *ScanCol) nullAt(i, j int) bool {
	return i < len(c.MultiNull) && j < len(c.MultiNull[i]) && c.MultiNull[i][j]
}

// nullsOf is row i's null marks.
func (c *ScanCol) nullsOf(i int) []bool {
	if i < len(c.MultiNull) {
		return c.MultiNull[i]
	}
	return nil
}

func (c *ScanCol) value(i int) Value { return c.DimCol.Value(i) }

// scanColumns lists the columns a scan returns.
func scanColumns(sq *segQuery) []string {
	if len(sq.q.Scan.Columns) > 0 {
		return sq.q.Scan.Columns
	}
	var out []string
	for _, c := range sq.cols.data.Columns() {
		out = append(out, c.Name)
	}
	return out
}

// runScan collects the numbers of the rows to return (in time order: the
// pipeline's rows, up to offset+limit; descending: the selection read from
// its end), then reads their columns in batches.
func runScan(_ *Engine, sq *segQuery) (*Partial, error) {
	q := sq.q
	s := q.Scan
	p := &Partial{Type: q.Type}
	want := int64(query.Unlimited)
	if q.Limit < query.Unlimited-s.Offset {
		want = s.Offset + q.Limit
	}
	var rows []int32
	if s.Order == "descending" {
		sel, _, err := sq.selection()
		if err != nil {
			return nil, err
		}
		it := sel.bitmap().ReverseIterator()
		for it.HasNext() && int64(len(rows)) < want {
			rows = append(rows, int32(it.Next()))
		}
	} else {
		op, _, err := sq.rows()
		if err != nil {
			return nil, err
		}
		data := sq.cols.data
		err = drain(op, sinkFunc(func(b Batch) error {
			start, _ := data.BlockRows(b.Block)
			if b.Sel == nil {
				for i := b.From; i < b.To && int64(len(rows)) < want; i++ {
					rows = append(rows, int32(start+i))
				}
			} else {
				for _, i := range b.Sel {
					if int64(len(rows)) >= want {
						break
					}
					rows = append(rows, int32(start)+i)
				}
			}
			if int64(len(rows)) >= want {
				return errStop
			}
			return nil
		}))
		if err != nil {
			return nil, err
		}
	}
	cols := scanColumns(sq)
	for lo := 0; lo < len(rows); lo += s.BatchSize {
		hi := min(lo+s.BatchSize, len(rows))
		b, err := scanBatch(sq, cols, rows[lo:hi])
		if err != nil {
			return nil, err
		}
		p.Scan = append(p.Scan, b)
	}
	return p, nil
}

// scanBatch reads the given rows (segment row numbers, any order).
func scanBatch(sq *segQuery, cols []string, rows []int32) (*ScanBatch, error) {
	c := sq.cols
	b := &ScanBatch{SegmentID: sq.seg.ID, Columns: cols}
	times, err := c.num(timeColumn)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		blk := int(r) / c.rpb
		start, _ := c.data.BlockRows(blk)
		ts, err := times.longs(blk)
		if err != nil {
			return nil, err
		}
		b.Times = append(b.Times, ts[int(r)-start])
	}
	for _, name := range cols {
		kind, ok := c.colKind(name)
		col := &ScanCol{}
		typ := ""
		switch {
		case !ok:
			col.DimCol = newDimCol("STRING")
			for range rows {
				col.Append(Null)
			}
		case kind == segment.KindString:
			typ = "STRING"
			col.DimCol = newDimCol("STRING")
			ks, err := c.key(name)
			if err != nil {
				return nil, err
			}
			if err := scanStrings(c, ks, rows, col); err != nil {
				return nil, err
			}
		case kind == segment.KindComplex:
			cx, err := c.data.Complex(name)
			if err != nil {
				return nil, err
			}
			typ = "COMPLEX<" + cx.Type() + ">"
			col.DimCol = newDimCol("STRING")
			for _, r := range rows {
				blobBytes, err := cx.Blob(int(r))
				if err != nil {
					return nil, err
				}
				if blobBytes == nil {
					col.Append(Null)
				} else {
					col.Append(Str(b64(blobBytes)))
				}
			}
		default:
			typ = kind.String()
			col.DimCol = newDimCol(typ)
			src, err := c.num(name)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				blk := int(r) / c.rpb
				start, _ := c.data.BlockRows(blk)
				i := int(r) - start
				nulls, err := src.nulls(blk)
				if err != nil {
					return nil, err
				}
				if bitSet(nulls, i) {
					col.Append(Null)
					continue
				}
				if kind == segment.KindLong {
					l, err := src.longs(blk)
					if err != nil {
						return nil, err
					}
					col.Append(Long(l[i]))
				} else {
					d, err := src.doubles(blk)
					if err != nil {
						return nil, err
					}
					if kind == segment.KindFloat {
						col.Append(Float(float32(d[i])))
					} else {
						col.Append(Double(d[i]))
					}
				}
			}
		}
		b.Types = append(b.Types, typ)
		b.Cols = append(b.Cols, col)
	}
	return b, nil
}

func scanStrings(c *columns, ks keySource, rows []int32, col *ScanCol) error {
	for _, r := range rows {
		blk := int(r) / c.rpb
		start, _ := c.data.BlockRows(blk)
		i := int(r) - start
		offs, ids, err := ks.ids(blk)
		if err != nil {
			return err
		}
		if offs == nil {
			col.Append(ks.value(ids[i]))
			if col.IsMV {
				col.appendMulti(nil, nil)
			}
			continue
		}
		vals := ids[offs[i]:offs[i+1]]
		if len(vals) == 1 {
			col.Append(ks.value(vals[0]))
			col.appendMulti(nil, nil)
		} else {
			col.Append(Null)
			list := make([]string, 0, len(vals))
			var null []bool // Druid keeps a list's null elements
			for j, id := range vals {
				v := ks.value(id)
				if v.IsNull() {
					if null == nil {
						null = make([]bool, len(vals))
					}
					null[j] = true
				}
				s, _ := v.String()
				list = append(list, s)
			}
			if len(vals) == 0 {
				list = nil
			}
			col.appendMulti(list, null)
		}
		col.IsMV = true
	}
	return nil
}

// mergeScan concatenates batches (ordering by time when asked), keeping at
// most offset+limit rows.
func mergeScan(_ *Engine, q *query.Query, parts []*Partial, out *Partial) error {
	s := q.Scan
	want := int64(query.Unlimited)
	if q.Limit < query.Unlimited-s.Offset {
		want = s.Offset + q.Limit
	}
	var batches []*ScanBatch
	for _, p := range parts {
		batches = append(batches, p.Scan...)
	}
	if s.Order == "none" {
		var n int64
		for _, b := range batches {
			if n >= want {
				break
			}
			if n+int64(b.Len()) > want {
				b = b.slice(0, int(want-n))
			}
			out.Scan = append(out.Scan, b)
			n += int64(b.Len())
		}
		return nil
	}
	type ref struct {
		b *ScanBatch
		i int
	}
	var refs []ref
	for _, b := range batches {
		for i := range b.Len() {
			refs = append(refs, ref{b, i})
		}
	}
	desc := s.Order == "descending"
	sort.SliceStable(refs, func(i, j int) bool {
		ti, tj := refs[i].b.Times[refs[i].i], refs[j].b.Times[refs[j].i]
		if desc {
			return ti > tj
		}
		return ti < tj
	})
	if int64(len(refs)) > want {
		refs = refs[:want]
	}
	if len(refs) == 0 {
		return nil
	}
	// One combined batch; Finalize re-batches.
	first := refs[0].b
	comb := &ScanBatch{Columns: first.Columns, Types: first.Types}
	for range first.Columns {
		comb.Cols = append(comb.Cols, &ScanCol{DimCol: newDimCol("STRING")})
	}
	typed := false
	for _, r := range refs {
		if !typed {
			for k, c := range r.b.Cols {
				comb.Cols[k].DimCol = newDimCol(c.Type)
			}
			typed = true
		}
		comb.Times = append(comb.Times, r.b.Times[r.i])
		for k, c := range r.b.Cols {
			if k >= len(comb.Cols) {
				continue
			}
			comb.Cols[k].Append(c.value(r.i))
			var mv []string
			var null []bool
			if c.IsMV {
				mv, null = c.Multi[r.i], c.nullsOf(r.i)
				comb.Cols[k].IsMV = true
			}
			comb.Cols[k].appendMulti(mv, null)
		}
	}
	out.Scan = []*ScanBatch{comb}
	return nil
}

// slice returns rows [lo, hi) of the batch.
func (b *ScanBatch) slice(lo, hi int) *ScanBatch {
	out := &ScanBatch{SegmentID: b.SegmentID, Columns: b.Columns, Types: b.Types, Times: b.Times[lo:hi]}
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	for _, c := range b.Cols {
		nc := &ScanCol{DimCol: c.DimCol.gather(idx), IsMV: c.IsMV}
		if c.IsMV {
			nc.Multi = c.Multi[lo:hi]
			if c.MultiNull != nil {
				nc.MultiNull = c.MultiNull[lo:hi]
			}
		}
		out.Cols = append(out.Cols, nc)
	}
	return out
}

func finalizeScan(_ *Engine, q *query.Query, p *Partial) ([]byte, error) {
	s := q.Scan
	w := newWriter(q)
	w.raw("[")
	skip := s.Offset
	left := q.Limit
	nb := 0
	emit := func(b *ScanBatch, lo, hi int, segID *string) {
		if nb > 0 {
			w.raw(",")
		}
		nb++
		w.raw(`{"segmentId":`)
		if segID == nil {
			w.raw("null")
		} else {
			w.b = javacompat.AppendJSONString(w.b, *segID)
		}
		w.raw(`,"columns":[`)
		for k, c := range b.Columns {
			if k > 0 {
				w.raw(",")
			}
			w.b = javacompat.AppendJSONString(w.b, c)
		}
		w.raw(`],"events":[`)
		for i := lo; i < hi; i++ {
			if i > lo {
				w.raw(",")
			}
			if s.ResultFormat == "compactedList" {
				w.raw("[")
			} else {
				w.raw("{")
			}
			for k, c := range b.Cols {
				if k > 0 {
					w.raw(",")
				}
				if s.ResultFormat != "compactedList" {
					w.key(b.Columns[k])
				}
				if c.IsMV && c.Multi[i] != nil {
					w.raw("[")
					for j, v := range c.Multi[i] {
						if j > 0 {
							w.raw(",")
						}
						if c.nullAt(i, j) {
							w.raw("null")
							continue
						}
						w.b = javacompat.AppendJSONString(w.b, v)
					}
					w.raw("]")
				} else {
					w.value(c.value(i))
				}
			}
			if s.ResultFormat == "compactedList" {
				w.raw("]")
			} else {
				w.raw("}")
			}
		}
		w.raw(`],"rowSignature":[`)
		for k, c := range b.Columns {
			if k > 0 {
				w.raw(",")
			}
			w.raw(`{"name":`)
			w.b = javacompat.AppendJSONString(w.b, c)
			if b.Types[k] != "" {
				w.raw(`,"type":`)
				w.b = javacompat.AppendJSONString(w.b, b.Types[k])
			}
			w.raw("}")
		}
		w.raw("]}")
	}
	for _, b := range p.Scan {
		lo, hi := 0, b.Len()
		if skip > 0 {
			d := min(skip, int64(hi))
			lo += int(d)
			skip -= d
		}
		if int64(hi-lo) > left {
			hi = lo + int(left)
		}
		if hi <= lo {
			if left == 0 {
				break
			}
			continue
		}
		left -= int64(hi - lo)
		if s.Order != "none" {
			for k := lo; k < hi; k += s.BatchSize {
				emit(b, k, min(k+s.BatchSize, hi), nil)
			}
			continue
		}
		id := b.SegmentID
		emit(b, lo, hi, &id)
	}
	w.raw("]")
	return w.b, nil
}
