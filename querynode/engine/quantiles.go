package engine

import (
	"math"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/aggregate"
	"strata/aggregate/blob"
	"strata/aggregate/quantiles"
	"strata/querynode/query"
	"strata/storage/segment"
)

// quantilesAgg is quantilesDoublesSketch over one segment: it feeds each
// group's sketch from a numeric column, or merges the sketches stored in a
// quantilesDoublesSketch column (the usual case after ingestion rollup).
type quantilesAgg struct {
	rc    *columns
	st    *AggState
	num   numSource
	cx    *segment.ComplexColumn
	cxNul *roaring.Bitmap
	blobs segment.Blobs
}

func (rc *columns) newQuantilesAgg(a *query.Aggregator, st *AggState) (segAgg, error) {
	q := &quantilesAgg{rc: rc, st: st}
	kind, ok := rc.colKind(a.FieldName)
	if !ok {
		return q, nil // missing column: empty sketches
	}
	switch kind {
	case segment.KindComplex:
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
	case segment.KindString:
		// A query data source's sketches, base64 strings.
		return rc.newStringSketchAgg(a, st, blob.TypeQuantiles)
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
func (q *quantilesAgg) grow(n int)       { q.st.Grow(n) }
func (q *quantilesAgg) finish() error    { return nil }

func (q *quantilesAgg) add(b, from, to int, sel []int32, g int32, groups []int32) error {
	rows := aggregate.Rows{From: from, To: to, Sel: sel, G: g, Groups: groups}
	switch {
	case q.cx != nil:
		return q.rc.eachBlob(q.cx, q.cxNul, &q.blobs, b, rows, q.st.MergeIntermediate)
	case q.num != nil:
		return eachNumber(q.num, b, rows, q.st.AddLong, q.st.AddDouble)
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
