package segment

import (
	"strata/storage/encoding"

	"strata/javacompat"
)

// LongsAt decodes only the rows rows (positions within block b, any order)
// of the column into dst, resized to len(rows): the path for a filter that
// keeps a few rows per block. Values convert like Longs.
func (n *NumericColumn) LongsAt(b int, rows []int32, dst []int64) ([]int64, error) {
	out := dst
	err := n.s.withBlock(n.c, b, func(raw []byte) error {
		var err error
		var count int
		switch n.c.kind {
		case KindLong:
			out, count, err = encoding.GatherInts(dst, raw, rows)
		case KindDouble:
			var d []float64
			d, count, err = encoding.GatherFloat64s(nil, raw, rows)
			out = resize(dst, len(d))
			for i, v := range d {
				out[i] = javacompat.DoubleToLong(v)
			}
		case KindFloat:
			var f []float32
			f, count, err = encoding.GatherFloat32s(nil, raw, rows)
			out = resize(dst, len(f))
			for i, v := range f {
				out[i] = javacompat.DoubleToLong(float64(v))
			}
		}
		if err != nil {
			return err
		}
		return n.checkCount(b, count)
	})
	return out, err
}

// DoublesAt is LongsAt converting to float64, like Doubles.
func (n *NumericColumn) DoublesAt(b int, rows []int32, dst []float64) ([]float64, error) {
	out := dst
	err := n.s.withBlock(n.c, b, func(raw []byte) error {
		var err error
		var count int
		switch n.c.kind {
		case KindDouble:
			out, count, err = encoding.GatherFloat64s(dst, raw, rows)
		case KindLong:
			var l []int64
			l, count, err = encoding.GatherInts(nil, raw, rows)
			out = resize(dst, len(l))
			for i, v := range l {
				out[i] = float64(v)
			}
		case KindFloat:
			var f []float32
			f, count, err = encoding.GatherFloat32s(nil, raw, rows)
			out = resize(dst, len(f))
			for i, v := range f {
				out[i] = float64(v)
			}
		}
		if err != nil {
			return err
		}
		return n.checkCount(b, count)
	})
	return out, err
}
