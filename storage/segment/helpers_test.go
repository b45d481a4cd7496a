package segment

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// colData is a whole column read back through the public API.
type colData struct {
	kind    Kind
	longs   []int64
	doubles []float64
	nulls   []bool
	strs    [][]*string // per row; a nil element is null
	blobs   [][]byte
}

// readAll reads every column of seg through the public reader API and
// cross-checks the redundant structures (bitmap index against row ids,
// statistics against values). Any inconsistency is an error.
func readAll(seg *Segment) (map[string]*colData, error) {
	out := map[string]*colData{}
	n := seg.NumRows()
	for _, ci := range seg.Columns() {
		cd := &colData{kind: ci.Kind, nulls: make([]bool, n)}
		out[ci.Name] = cd
		switch ci.Kind {
		case KindLong, KindFloat, KindDouble:
			col, err := seg.Numeric(ci.Name)
			if err != nil {
				return nil, err
			}
			nulls, err := col.Nulls()
			if err != nil {
				return nil, err
			}
			for it := nulls.Iterator(); it.HasNext(); {
				r := int(it.Next())
				cd.nulls[r] = true
			}
			for b := range col.NumBlocks() {
				st := col.BlockStats(b)
				start, end := seg.BlockRows(b)
				if st.Rows != end-start {
					return nil, fmt.Errorf("%s block %d: stats rows %d", ci.Name, b, st.Rows)
				}
				nullsInBlock := 0
				if ci.Kind == KindLong {
					vals, err := col.Longs(b, nil)
					if err != nil {
						return nil, err
					}
					for i, v := range vals {
						if cd.nulls[start+i] {
							nullsInBlock++
							continue
						}
						if v < st.MinLong || v > st.MaxLong {
							return nil, fmt.Errorf("%s block %d: %d outside [%d, %d]", ci.Name, b, v, st.MinLong, st.MaxLong)
						}
					}
					cd.longs = append(cd.longs, vals...)
				} else {
					vals, err := col.Doubles(b, nil)
					if err != nil {
						return nil, err
					}
					if ci.Kind == KindFloat {
						fl, err := col.Floats(b, nil)
						if err != nil {
							return nil, err
						}
						for i := range fl {
							if math.Float32bits(fl[i]) != math.Float32bits(float32(vals[i])) {
								return nil, fmt.Errorf("%s: Floats and Doubles disagree", ci.Name)
							}
						}
					}
					for i, v := range vals {
						if cd.nulls[start+i] {
							nullsInBlock++
							continue
						}
						if v == v && (v < st.MinDouble || v > st.MaxDouble) {
							return nil, fmt.Errorf("%s block %d: %g outside [%g, %g]", ci.Name, b, v, st.MinDouble, st.MaxDouble)
						}
					}
					cd.doubles = append(cd.doubles, vals...)
				}
				if nullsInBlock != st.NullCount {
					return nil, fmt.Errorf("%s block %d: null count %d, stats say %d", ci.Name, b, nullsInBlock, st.NullCount)
				}
			}
		case KindString:
			if err := readStrings(seg, ci, cd); err != nil {
				return nil, err
			}
		case KindComplex:
			col, err := seg.Complex(ci.Name)
			if err != nil {
				return nil, err
			}
			nulls, err := col.Nulls()
			if err != nil {
				return nil, err
			}
			var bs Blobs
			for b := range col.NumBlocks() {
				if err := col.Block(b, &bs); err != nil {
					return nil, err
				}
				start, _ := seg.BlockRows(b)
				for i := range bs.Len() {
					if nulls.Contains(uint32(start + i)) {
						cd.nulls[start+i] = true
						cd.blobs = append(cd.blobs, nil)
						continue
					}
					cd.blobs = append(cd.blobs, append([]byte{}, bs.At(i)...))
				}
			}
		}
		if ci.Kind != KindString {
			cnt := 0
			for _, x := range cd.nulls {
				if x {
					cnt++
				}
			}
			if cnt != ci.NullCount {
				return nil, fmt.Errorf("%s: %d nulls, footer says %d", ci.Name, cnt, ci.NullCount)
			}
		}
	}
	return out, nil
}

func readStrings(seg *Segment, ci ColumnInfo, cd *colData) error {
	n := seg.NumRows()
	col, err := seg.Strings(ci.Name)
	if err != nil {
		return err
	}
	dict, err := col.Dictionary()
	if err != nil {
		return err
	}
	if dict.Len() != col.Cardinality() {
		return fmt.Errorf("%s: dictionary size", ci.Name)
	}
	values := make([]*string, dict.Len())
	for id := range dict.Len() {
		v, isNull, err := col.Lookup(id)
		if err != nil {
			return err
		}
		if !isNull {
			values[id] = &v
			if got, found, _ := col.Find(v); !found || got != id {
				return fmt.Errorf("%s: Find(%q) = %d, %v; want %d", ci.Name, v, got, found, id)
			}
		}
	}
	offs, ids, err := col.MultiIDs(0, n, nil, nil)
	if err != nil {
		return err
	}
	if !col.MultiValue() {
		single, err := col.IDs(0, n, nil)
		if err != nil {
			return err
		}
		if !slices.Equal(single, ids) {
			return fmt.Errorf("%s: IDs and MultiIDs disagree", ci.Name)
		}
	}
	// Rows per id from the row ids, to check the bitmap index.
	want := make([][]uint32, dict.Len())
	nullRows := 0
	for r := range n {
		row := ids[offs[r]:offs[r+1]]
		vals := make([]*string, len(row))
		hasNull := len(row) == 0
		for j, id := range row {
			vals[j] = values[id]
			if values[id] == nil {
				hasNull = true
			}
			if !slices.Contains(row[:j], id) {
				want[id] = append(want[id], uint32(r))
			}
		}
		if hasNull {
			nullRows++
			cd.nulls[r] = true
		}
		cd.strs = append(cd.strs, vals)
	}
	if nullRows != ci.NullCount {
		return fmt.Errorf("%s: %d null rows, footer says %d", ci.Name, nullRows, ci.NullCount)
	}
	for id := range dict.Len() {
		bm, err := col.Bitmap(id)
		if err != nil {
			return err
		}
		if !slices.Equal(bm.ToArray(), want[id]) && !(len(want[id]) == 0 && bm.IsEmpty()) {
			return fmt.Errorf("%s: bitmap of id %d disagrees with row ids", ci.Name, id)
		}
		c, err := col.BitmapCardinality(id)
		if err != nil {
			return err
		}
		if c != len(want[id]) {
			return fmt.Errorf("%s: cardinality of id %d", ci.Name, id)
		}
	}
	nb, err := col.NullBitmap()
	if err != nil {
		return err
	}
	if int(nb.GetCardinality()) != nullRows {
		return fmt.Errorf("%s: null bitmap has %d rows, want %d", ci.Name, nb.GetCardinality(), nullRows)
	}
	return nil
}

// fingerprint renders row r of the read-back columns (in column order) as
// a string, so whole rows can be compared as multisets.
func fingerprint(cols map[string]*colData, names []string, r int) string {
	var sb strings.Builder
	for _, name := range names {
		c := cols[name]
		sb.WriteString(name)
		sb.WriteByte('=')
		if c.nulls[r] && c.kind != KindString {
			sb.WriteString("null;")
			continue
		}
		switch c.kind {
		case KindLong:
			fmt.Fprintf(&sb, "%d;", c.longs[r])
		case KindFloat, KindDouble:
			fmt.Fprintf(&sb, "%x;", math.Float64bits(c.doubles[r]))
		case KindString:
			sb.WriteString(renderStrings(c.strs[r]))
			sb.WriteByte(';')
		case KindComplex:
			fmt.Fprintf(&sb, "%x;", c.blobs[r])
		}
	}
	return sb.String()
}

func renderStrings(vals []*string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			parts[i] = "<null>"
		} else {
			parts[i] = fmt.Sprintf("%q", *v)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func mustOpen(t testing.TB, path string) *Segment {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
