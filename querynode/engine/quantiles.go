package engine

import (
	"math"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/querynode/query"
	"strata/storage/blob"
	"strata/storage/quantiles"
	seg "strata/storage/segment"
)

// quantilesAgg is quantilesDoublesSketch over one segment: it feeds each
// group's sketch from a numeric column, or merges the sketches stored in a
// quantilesDoublesSketch column (the usual case after ingestion rollup).
type quantilesAgg struct {
	rc    *runCtx
	st    *AggState
	num   numSource
	cx    *seg.ComplexColumn
	cxNul *roaring.Bitmap
	blobs seg.Blobs
}

func (rc *runCtx) newQuantilesAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	q := &quantilesAgg{rc: rc, st: st}
	kind, ok := rc.colKind(a.FieldName)
	if !ok {
		return q, nil // missing column: empty sketches
	}
	switch kind {
	case seg.KindComplex:
		cx, err := rc.data.Complex(a.FieldName)
		if err != nil {
			return nil, err
		}
		if cx.Type() != blob.TypeQuantiles {
			return nil, query.Invalidf("aggregator [%s]: column [%s] holds %s values, not %s", a.Name, a.FieldName, cx.Type(), blob.TypeQuantiles)
		}
		q.cx = cx
		if q.cxNul, err = cx.Nulls(); err != nil {
			return nil, err
		}
	case seg.KindString:
		return nil, query.Invalidf("aggregator [%s]: column [%s] holds strings, not numbers or quantiles sketches", a.Name, a.FieldName)
	default:
		src, err := rc.num(a.FieldName)
		if err != nil {
			return nil, err
		}
		q.num = src
	}
	return q, nil
}

func (q *quantilesAgg) state() *AggState { return q.st }
func (q *quantilesAgg) grow(n int)       { q.st.grow(n) }
func (q *quantilesAgg) finish() error    { return nil }

// sketch returns group g's sketch, made on first use.
func (q *quantilesAgg) sketch(g int32) (*quantiles.Sketch, error) {
	if sk := q.st.Quant[g]; sk != nil {
		return sk, nil
	}
	sk, err := quantiles.New(q.st.quantilesK())
	if err != nil {
		return nil, err
	}
	q.st.Quant[g] = sk
	return sk, nil
}

func (q *quantilesAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	// rows visits the selected rows of block b: k is the position in sel
	// (or from the block's start), i the row within the block.
	rows := func(fn func(k, i int) error) error {
		if sel == nil {
			for i := from; i < to; i++ {
				if err := fn(i-from, i); err != nil {
					return err
				}
			}
			return nil
		}
		for k, i := range sel {
			if err := fn(k, int(i)); err != nil {
				return err
			}
		}
		return nil
	}
	group := func(k int) int32 {
		if groups != nil {
			return groups[k]
		}
		return g
	}
	switch {
	case q.cx != nil:
		if err := q.cx.Block(b, &q.blobs); err != nil {
			return err
		}
		start, _ := q.rc.data.BlockRows(b)
		return rows(func(k, i int) error {
			if q.cxNul != nil && q.cxNul.Contains(uint32(start+i)) {
				return nil
			}
			in, err := blob.DecodeQuantiles(q.blobs.At(i))
			if err != nil {
				return err
			}
			sk, err := q.sketch(group(k))
			if err != nil {
				return err
			}
			return sk.Merge(in)
		})
	case q.num != nil:
		nulls, err := q.num.nulls(b)
		if err != nil {
			return err
		}
		if q.num.kind() == seg.KindLong {
			vals, err := q.num.longs(b)
			if err != nil {
				return err
			}
			return rows(func(k, i int) error {
				if bitSet(nulls, i) {
					return nil
				}
				sk, err := q.sketch(group(k))
				if err == nil {
					sk.Update(float64(vals[i]))
				}
				return err
			})
		}
		vals, err := q.num.doubles(b)
		if err != nil {
			return err
		}
		return rows(func(k, i int) error {
			if bitSet(nulls, i) {
				return nil
			}
			sk, err := q.sketch(group(k))
			if err == nil {
				sk.Update(vals[i])
			}
			return err
		})
	}
	return nil
}

// quantilesSketch resolves the field of a quantilesDoublesSketchTo*
// post-aggregator: a (finalizing) field access to a quantilesDoublesSketch
// aggregator of the row. The sketch itself is needed, not its finalized count.
func (r *rowEnv) quantilesSketch(p *query.PostAggregator) (*quantiles.Sketch, error) {
	f := p.Fields[0]
	if f.Type == "fieldAccess" || f.Type == "finalizingFieldAccess" {
		if sl, ok := r.schema.index[f.FieldName]; ok && sl.kind == 1 && r.row.quant != nil && r.row.quant[sl.i] != nil {
			return r.row.quant[sl.i], nil
		}
	}
	return nil, query.Invalidf("post-aggregator [%s]: field must access a quantilesDoublesSketch aggregator", p.Name)
}

// evalQuantilesPostAgg computes a quantilesDoublesSketchTo* post-aggregator.
// An empty sketch gives NaN in every position, as Druid's does.
func evalQuantilesPostAgg(p *query.PostAggregator, env *rowEnv) (Value, error) {
	sk, err := env.quantilesSketch(p)
	if err != nil {
		return Null, err
	}
	switch p.Type {
	case "quantilesDoublesSketchToQuantile":
		v, err := sk.Quantile(p.Fractions[0])
		return Double(v), err
	case "quantilesDoublesSketchToQuantiles":
		v, err := sk.Quantiles(p.Fractions)
		return doubles(v), err
	case "quantilesDoublesSketchToRank":
		return Double(sk.Rank(p.Value)), nil
	case "quantilesDoublesSketchToCDF":
		v, err := sk.CDF(p.SplitPoints)
		return doubles(v), err
	case "quantilesDoublesSketchToHistogram":
		return quantilesHistogram(sk, p)
	case "quantilesDoublesSketchToString":
		return Str(sk.String()), nil
	}
	return Null, query.Errorf(query.Unsupported, "post-aggregator type [%s] is not supported", p.Type)
}

// quantilesHistogram counts the values in the bins bounded by the split
// points, or in numBins equal bins between the sketch's min and max.
func quantilesHistogram(sk *quantiles.Sketch, p *query.PostAggregator) (Value, error) {
	bins := p.NumBins
	if p.SplitPoints != nil {
		bins = len(p.SplitPoints) + 1
	}
	out := make([]float64, bins)
	if sk.IsEmpty() {
		for i := range out {
			out[i] = math.NaN()
		}
		return doubles(out), nil
	}
	split := p.SplitPoints
	if split == nil {
		lo, hi := sk.Min(), sk.Max()
		if lo == hi { // one distinct value: every count lands in the first bin
			out[0] = float64(sk.N())
			return doubles(out), nil
		}
		split = make([]float64, bins-1)
		for i := range split {
			split[i] = lo + (hi-lo)/float64(bins)*float64(i+1)
		}
	}
	pmf, err := sk.PMF(split)
	if err != nil {
		return Null, err
	}
	for i, f := range pmf {
		out[i] = f * float64(sk.N())
	}
	return doubles(out), nil
}
