package segment

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/aggregate/blob"
)

// group is the independent model of one rolled-up row.
type group struct {
	count              int64
	lsum, lmin, lmax   *int64
	dsum, dmin, dmax   *float64
	fsum               *float32
	lfirst, llast      blob.Pair
	dfirst, dlast      blob.Pair
	ffirst, flast      blob.Pair
	sfirst, slast      blob.Pair
	hllBuild           hll.HllSketch
	hllMerge           hll.Union
	theta              *theta.QuickSelectUpdateSketch
	ds                 []float64 // the non-null d values, for the quantiles sketch
	seenFirst, seenAll bool
}

func rollupSpec() Spec {
	return Spec{
		Fields: []Field{
			{Name: "s", Kind: KindString}, {Name: "mv", Kind: KindString}, {Name: "l", Kind: KindLong},
			{Name: "d", Kind: KindDouble}, {Name: "f", Kind: KindFloat}, {Name: "sk", Kind: KindComplex},
		},
		Dimensions: []Dimension{{Name: "s"}, {Name: "mv", MultiValue: true}},
		Metrics: []Metric{
			{Type: "count", Name: "count"},
			{Type: "longSum", Name: "lsum", FieldName: "l"},
			{Type: "longMin", Name: "lmin", FieldName: "l"},
			{Type: "longMax", Name: "lmax", FieldName: "l"},
			{Type: "doubleSum", Name: "dsum", FieldName: "d"},
			{Type: "doubleMin", Name: "dmin", FieldName: "d"},
			{Type: "doubleMax", Name: "dmax", FieldName: "d"},
			{Type: "floatSum", Name: "fsum", FieldName: "f"},
			{Type: "longFirst", Name: "lfirst", FieldName: "l"},
			{Type: "longLast", Name: "llast", FieldName: "l"},
			{Type: "doubleFirst", Name: "dfirst", FieldName: "d"},
			{Type: "doubleLast", Name: "dlast", FieldName: "d"},
			{Type: "floatFirst", Name: "ffirst", FieldName: "f"},
			{Type: "floatLast", Name: "flast", FieldName: "f"},
			{Type: "stringFirst", Name: "sfirst", FieldName: "mv", MaxStringBytes: 3},
			{Type: "stringLast", Name: "slast", FieldName: "s"},
			{Type: "HLLSketchBuild", Name: "hllb", FieldName: "l", LgK: 10},
			{Type: "HLLSketchMerge", Name: "hllm", FieldName: "sk", LgK: 10},
			{Type: "thetaSketch", Name: "theta", FieldName: "mv", Size: 1024},
			{Type: "quantilesDoublesSketch", Name: "dq", FieldName: "d", K: 16},
		},
		Rollup:       true,
		Truncate:     func(ms int64) int64 { return ms - ms%10_000 },
		Interval:     Interval{Start: 0, End: day},
		RowsPerBlock: 32,
	}
}

func TestRollupMatchesIndependentComputation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	spec := rollupSpec()
	svals := []string{"x", "y", "é"}
	mvals := []string{"alpha", "beta", "ga"}
	var rows []Row
	groups := map[string]*group{}
	var order []string
	for i := 0; i < 3000; i++ {
		t := rng.Int64N(60) * 1000 // 6 buckets of 10 distinct times: many ties
		v := make([]Value, 6)
		if rng.IntN(4) == 0 {
			v[0] = Null()
		} else {
			v[0] = String(svals[rng.IntN(len(svals))])
		}
		switch rng.IntN(4) {
		case 0:
			v[1] = Null()
		case 1:
			v[1] = Strings(nil)
		default:
			v[1] = Strings([]string{mvals[rng.IntN(3)], mvals[rng.IntN(3)]}[:1+rng.IntN(2)])
		}
		if rng.IntN(3) == 0 {
			v[2] = Null()
		} else {
			v[2] = Long(rng.Int64N(1000) - 500)
		}
		if rng.IntN(3) == 0 {
			v[3] = Null()
		} else {
			v[3] = Double(rng.NormFloat64())
		}
		if rng.IntN(3) == 0 {
			v[4] = Null()
		} else {
			v[4] = Double(rng.Float64())
		}
		if rng.IntN(3) == 0 {
			v[5] = Null()
		} else {
			sk, _ := hll.NewHllSketch(8, hll.TgtHllTypeHll8)
			sk.UpdateInt64(rng.Int64N(100))
			b, _ := sk.ToCompactSlice()
			v[5] = Bytes(b)
		}
		row := Row{Time: t, Values: v}
		rows = append(rows, row)

		key := modelKey(spec.Truncate(t), v[0], v[1])
		g := groups[key]
		if g == nil {
			g = &group{}
			g.hllBuild, _ = hll.NewHllSketch(10, hll.TgtHllTypeHll4)
			g.hllMerge, _ = hll.NewUnion(10)
			g.theta, _ = theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(10))
			groups[key] = g
			order = append(order, key)
		}
		g.add(row)
	}
	if len(groups) > 400 {
		t.Fatalf("test data rolls up too little: %d groups", len(groups))
	}

	path, info := writeSegment(t, spec, rows)
	if info.Rows != len(groups) {
		t.Fatalf("segment has %d rows, model has %d groups", info.Rows, len(groups))
	}
	seg := mustOpen(t, path)
	if !seg.Rollup() {
		t.Fatal("rollup flag not stored")
	}
	got, err := readAll(seg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for r := range seg.NumRows() {
		key := modelKeyFromRead(got, r)
		g := groups[key]
		if g == nil {
			t.Fatalf("row %d: key %s not in model", r, key)
		}
		if seen[key] {
			t.Fatalf("key %s appears twice", key)
		}
		seen[key] = true
		if msg := g.check(got, r); msg != "" {
			t.Fatalf("row %d (%s): %s", r, key, msg)
		}
	}
}

func modelKey(t int64, s, mv Value) string {
	sk := "null"
	if !s.IsNull() {
		sk = fmt.Sprintf("%q", s.str())
	}
	mk := "[<null>]"
	if !mv.IsNull() {
		parts := make([]string, len(mv.strs()))
		for i, x := range mv.strs() {
			parts[i] = fmt.Sprintf("%q", x)
		}
		mk = "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("%d|%s|%s", t, sk, mk)
}

func modelKeyFromRead(cols map[string]*colData, r int) string {
	sk := "null"
	if v := cols["s"].strs[r][0]; v != nil {
		sk = fmt.Sprintf("%q", *v)
	}
	return fmt.Sprintf("%d|%s|%s", cols[TimeColumn].longs[r], sk, renderStrings(cols["mv"].strs[r]))
}

func (g *group) add(row Row) {
	s, mv, l, d, f, sk := row.Values[0], row.Values[1], row.Values[2], row.Values[3], row.Values[4], row.Values[5]
	first := g.count == 0
	g.count++
	if lv, ok := l.AsLong(); ok {
		if g.lsum == nil {
			g.lsum, g.lmin, g.lmax = new(int64), new(int64), new(int64)
			*g.lmin, *g.lmax = lv, lv
		}
		*g.lsum += lv
		*g.lmin = min(*g.lmin, lv)
		*g.lmax = max(*g.lmax, lv)
		g.hllBuild.UpdateInt64(lv)
	}
	if dv, ok := d.AsDouble(); ok {
		if g.dsum == nil {
			g.dsum, g.dmin, g.dmax = new(float64), new(float64), new(float64)
			*g.dmin, *g.dmax = dv, dv
			*g.dsum = dv
		} else {
			*g.dsum += dv
		}
		*g.dmin = math.Min(*g.dmin, dv)
		*g.dmax = math.Max(*g.dmax, dv)
		g.ds = append(g.ds, dv)
	}
	if fv, ok := f.AsDouble(); ok {
		if g.fsum == nil {
			g.fsum = new(float32)
			*g.fsum = float32(fv)
		} else {
			*g.fsum += float32(fv)
		}
	}
	pick := func(p *blob.Pair, isFirst bool, fill func(*blob.Pair)) {
		if first || (isFirst && row.Time < p.Time) || (!isFirst && row.Time >= p.Time) {
			*p = blob.Pair{Time: row.Time}
			fill(p)
		}
	}
	longFill := func(p *blob.Pair) { v, ok := l.AsLong(); p.Long, p.Null = v, !ok }
	dblFill := func(p *blob.Pair) { v, ok := d.AsDouble(); p.Double, p.Null = v, !ok }
	fltFill := func(p *blob.Pair) { v, ok := f.AsDouble(); p.Double, p.Null = float64(float32(v)), !ok }
	pick(&g.lfirst, true, longFill)
	pick(&g.llast, false, longFill)
	pick(&g.dfirst, true, dblFill)
	pick(&g.dlast, false, dblFill)
	pick(&g.ffirst, true, fltFill)
	pick(&g.flast, false, fltFill)
	pick(&g.sfirst, true, func(p *blob.Pair) {
		// A multi-value input is a string only when it has one element.
		if len(mv.strs()) == 1 {
			p.String = mv.strs()[0]
			if len(p.String) > 3 {
				p.String = p.String[:3]
			}
		} else {
			p.Null = true
		}
	})
	pick(&g.slast, false, func(p *blob.Pair) {
		if s.IsNull() {
			p.Null = true
		} else {
			p.String = s.str()
		}
	})
	if b, ok := sk.AsBytes(); ok {
		in, _ := hll.NewHllSketchFromSlice(b, true)
		g.hllMerge.UpdateSketch(in)
	}
	for _, x := range mv.strs() {
		g.theta.UpdateString(x)
	}
}

func (g *group) check(cols map[string]*colData, r int) string {
	eqLong := func(name string, want *int64) string {
		c := cols[name]
		if (want == nil) != c.nulls[r] || (want != nil && *want != c.longs[r]) {
			return fmt.Sprintf("%s = %d (null %v), want %v", name, c.longs[r], c.nulls[r], want)
		}
		return ""
	}
	eqDouble := func(name string, want *float64) string {
		c := cols[name]
		if (want == nil) != c.nulls[r] || (want != nil && *want != c.doubles[r]) {
			return fmt.Sprintf("%s = %g (null %v), want %v", name, c.doubles[r], c.nulls[r], want)
		}
		return ""
	}
	eqBlob := func(name string, want []byte) string {
		if !bytes.Equal(cols[name].blobs[r], want) {
			return fmt.Sprintf("%s blob differs", name)
		}
		return ""
	}
	pair := func(typ string, p blob.Pair) []byte { b, _ := blob.AppendPair(nil, typ, p); return b }
	var fsum *float64
	if g.fsum != nil {
		fsum = new(float64)
		*fsum = float64(*g.fsum)
	}
	hb, _ := g.hllBuild.ToCompactSlice()
	mres, _ := g.hllMerge.GetResult(hll.TgtHllTypeHll4)
	mb, _ := mres.ToCompactSlice()
	tb, _ := g.theta.CompactOrdered().MarshalBinary()
	for _, msg := range []string{
		eqLong("count", &g.count),
		eqLong("lsum", g.lsum), eqLong("lmin", g.lmin), eqLong("lmax", g.lmax),
		eqDouble("dsum", g.dsum), eqDouble("dmin", g.dmin), eqDouble("dmax", g.dmax),
		eqDouble("fsum", fsum),
		eqBlob("lfirst", pair(blob.TypePairLongLong, g.lfirst)),
		eqBlob("llast", pair(blob.TypePairLongLong, g.llast)),
		eqBlob("dfirst", pair(blob.TypePairLongDouble, g.dfirst)),
		eqBlob("dlast", pair(blob.TypePairLongDouble, g.dlast)),
		eqBlob("ffirst", pair(blob.TypePairLongFloat, g.ffirst)),
		eqBlob("flast", pair(blob.TypePairLongFloat, g.flast)),
		eqBlob("sfirst", pair(blob.TypePairLongString, g.sfirst)),
		eqBlob("slast", pair(blob.TypePairLongString, g.slast)),
		eqBlob("hllb", hb),
		eqBlob("hllm", mb),
		eqBlob("theta", tb),
	} {
		if msg != "" {
			return msg
		}
	}
	// The stored sketches decode and estimate like the model's.
	sk, err := blob.DecodeHLL(cols["hllm"].blobs[r])
	if err != nil {
		return err.Error()
	}
	e1, _ := sk.GetEstimate()
	e2, _ := mres.GetEstimate()
	if e1 != e2 {
		return "hll estimate differs"
	}
	th, err := blob.DecodeTheta(cols["theta"].blobs[r])
	if err != nil {
		return err.Error()
	}
	if th.Estimate() != g.theta.Estimate() {
		return "theta estimate differs"
	}
	// Fewer than 2k values per group: the quantiles sketch is exact.
	q, err := blob.DecodeQuantiles(cols["dq"].blobs[r])
	if err != nil {
		return err.Error()
	}
	sorted := slices.Sorted(slices.Values(g.ds))
	if q.N() != int64(len(sorted)) || q.K() != 16 {
		return fmt.Sprintf("quantiles n=%d k=%d, want n=%d", q.N(), q.K(), len(sorted))
	}
	if len(sorted) > 0 {
		med, _ := q.Quantile(0.5)
		if q.Min() != sorted[0] || q.Max() != sorted[len(sorted)-1] || !slices.Contains(sorted, med) {
			return fmt.Sprintf("quantiles min %v max %v median %v over %v", q.Min(), q.Max(), med, sorted)
		}
	}
	return ""
}

func TestBuilderPartitions(t *testing.T) {
	spec := rollupSpec()
	spec.Rollup = false
	dir := t.TempDir()
	b, err := NewBuilder(spec, 250, DirPaths(dir, "wiki_2024"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	total := 1000 + 17
	for i := range total {
		v := []Value{String("a"), Strings([]string{"b"}), Long(int64(i)), Null(), Null(), Null()}
		if err := b.Add(Row{Time: rng.Int64N(day), Values: v}); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := b.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 5 {
		t.Fatalf("%d partitions, want 5", len(parts))
	}
	sum := 0
	seen := map[int64]bool{}
	for i, p := range parts {
		if p.Partition != i || p.Rows > 250 {
			t.Fatalf("partition %d: %+v", i, p)
		}
		seg := mustOpen(t, p.Path)
		l, _ := seg.Numeric("lsum")
		for blk := range l.NumBlocks() {
			vals, err := l.Longs(blk, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				seen[v] = true
			}
		}
		sum += seg.NumRows()
	}
	if sum != total || len(seen) != total {
		t.Fatalf("rows: %d in segments, %d distinct, want %d", sum, len(seen), total)
	}
	if err := b.Add(Row{}); err == nil {
		t.Fatal("Add after Close accepted")
	}
	// An empty chunk writes nothing.
	b2, _ := NewBuilder(spec, 10, DirPaths(t.TempDir(), "x"))
	if parts, err := b2.Close(); err != nil || len(parts) != 0 {
		t.Fatalf("empty builder: %v %v", parts, err)
	}
}

// TestSketchMergeWithoutRollup covers the per-row (serialize at once) path
// of the sketch-merging aggregators, which reuses one union for all rows.
func TestSketchMergeWithoutRollup(t *testing.T) {
	spec := Spec{
		Fields: []Field{{Name: "h", Kind: KindComplex}, {Name: "t", Kind: KindComplex}},
		Metrics: []Metric{
			{Type: "HLLSketchMerge", Name: "hm", FieldName: "h"},
			{Type: "thetaSketch", Name: "tm", FieldName: "t", IsInputThetaSketch: true},
		},
		Interval: Interval{Start: 0, End: day},
	}
	var rows []Row
	var wantH, wantT []float64
	for i := 0; i < 50; i++ {
		hs, _ := hll.NewHllSketch(12, hll.TgtHllTypeHll4)
		ts, _ := theta.NewQuickSelectUpdateSketch()
		for k := 0; k <= i; k++ {
			hs.UpdateInt64(int64(k))
			blob.UpdateTheta(ts, int64(k))
		}
		hb, _ := hs.ToCompactSlice()
		tb, _ := ts.CompactOrdered().MarshalBinary()
		rows = append(rows, Row{Time: int64(i), Values: []Value{Bytes(hb), Bytes(tb)}})
		e, _ := hs.GetEstimate()
		wantH = append(wantH, e)
		wantT = append(wantT, ts.Estimate())
	}
	path, _ := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	hc, _ := seg.Complex("hm")
	tc, _ := seg.Complex("tm")
	for r := range rows {
		hb, err := hc.Blob(r)
		if err != nil {
			t.Fatal(err)
		}
		sk, err := blob.DecodeHLL(hb)
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := sk.GetEstimate(); math.Abs(e-wantH[r]) > 1e-9*wantH[r]+1e-9 {
			t.Fatalf("row %d: hll estimate %g, want %g", r, e, wantH[r])
		}
		tb, _ := tc.Blob(r)
		th, err := blob.DecodeTheta(tb)
		if err != nil {
			t.Fatal(err)
		}
		if th.Estimate() != wantT[r] {
			t.Fatalf("row %d: theta estimate %g, want %g", r, th.Estimate(), wantT[r])
		}
	}
}
