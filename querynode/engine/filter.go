package engine

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/querynode/query"
	"strata/storage/segment"
)

// tri is a three-valued match result (SQL logic).
type tri uint8

const (
	tFalse tri = iota
	tTrue
	tUnknown
)

func (t tri) matches(inclUnknown bool) bool { return t == tTrue || (inclUnknown && t == tUnknown) }

// strPred is a predicate on one string value (null when isNull).
type strPred func(v string, isNull bool) tri

// filterEval evaluates filters on one segment. Filters answered from the
// bitmap indexes (and, or and not of them) give row bitmaps; the others are
// row filters (rowFilter), which refine batches block by block: the query's
// pipeline runs them as a filterOp after the index-answered part, and
// eval collects their rows into a bitmap where one is needed (under or and
// not, and for filtered aggregators).
type filterEval struct {
	ctx  context.Context
	cols *columns
}

// eval returns the rows of u that match f. With inclUnknown, rows for
// which f is unknown (SQL null) match too; NOT uses it so that
// not(x = 'a') excludes rows where x is null.
func (fe *filterEval) eval(f *query.Filter, u *roaring.Bitmap, inclUnknown bool) (*roaring.Bitmap, error) {
	if u.IsEmpty() {
		return u, nil
	}
	switch f.Type {
	case "true":
		return u.Clone(), nil
	case "false":
		return roaring.New(), nil
	case "and":
		cur := u
		for _, sub := range sortByCost(f.Fields) {
			next, err := fe.eval(sub, cur, inclUnknown)
			if err != nil {
				return nil, err
			}
			cur = next
			if cur.IsEmpty() {
				break
			}
		}
		if cur == u {
			cur = u.Clone()
		}
		return cur, nil
	case "or":
		out := roaring.New()
		rest := u
		for _, sub := range sortByCost(f.Fields) {
			m, err := fe.eval(sub, rest, inclUnknown)
			if err != nil {
				return nil, err
			}
			out.Or(m)
			rest = roaring.AndNot(rest, m)
			if rest.IsEmpty() {
				break
			}
		}
		return out, nil
	case "not":
		m, err := fe.eval(f.Field, u, !inclUnknown)
		if err != nil {
			return nil, err
		}
		return roaring.AndNot(u, m), nil
	}
	rf, ok, err := fe.rowFilter(f, inclUnknown)
	if err != nil {
		return nil, err
	}
	if ok {
		return fe.scan(rf, u)
	}
	return fe.leaf(f, u, inclUnknown)
}

// scan returns the rows of u that rf matches.
func (fe *filterEval) scan(rf rowFilter, u *roaring.Bitmap) (*roaring.Bitmap, error) {
	src := newBlockSource(fe.ctx, fe.cols, selection{bm: u})
	return collectRows(&filterOp{in: src, filters: []rowFilter{rf}}, fe.cols.data)
}

// split divides a top-level filter into the part answered from indexes (to
// be evaluated into a bitmap, in order) and the row filters that refine the
// batches of the rows it leaves, in cost order.
func (fe *filterEval) split(f *query.Filter) (index []*query.Filter, rows []rowFilter, err error) {
	parts := []*query.Filter{f}
	if f.Type == "and" {
		parts = sortByCost(f.Fields)
	}
	for _, p := range parts {
		rf, ok, err := fe.rowFilter(p, false)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			rows = append(rows, rf)
		} else {
			index = append(index, p)
		}
	}
	return index, rows, nil
}

// rowFilter returns f as a row filter when it is evaluated by reading rows
// (expressions, column comparisons, ranges of numeric columns); ok is false
// when f is answered otherwise (bitmap indexes, boolean combinations).
func (fe *filterEval) rowFilter(f *query.Filter, incl bool) (rowFilter, bool, error) {
	c := fe.cols
	switch f.Type {
	case "true", "false", "and", "or", "not":
		return nil, false, nil
	case "expression":
		rf, err := fe.expressionFilter(f, incl)
		return rf, err == nil, err
	case "columnComparison":
		rf, err := fe.columnComparison(f)
		return rf, err == nil, err
	}
	kind, exists := c.colKind(f.Column)
	numeric := exists && (kind == segment.KindLong || kind == segment.KindFloat || kind == segment.KindDouble)
	if !numeric {
		return nil, false, nil
	}
	var np numPred
	switch {
	case f.Type == "null":
		np = numPred{null: tTrue}
	case f.Extraction == nil:
		var ok bool
		if np, ok = numericPred(f, kind == segment.KindLong); !ok {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	src, err := c.num(f.Column)
	if err != nil {
		return nil, false, err
	}
	return newNumFilter(src, np, incl), true, nil
}

// sortByCost puts filters answered from indexes before those that scan,
// so scans only visit rows the cheap filters left.
func sortByCost(fs []*query.Filter) []*query.Filter {
	out := append([]*query.Filter(nil), fs...)
	sort.SliceStable(out, func(i, j int) bool { return filterCost(out[i]) < filterCost(out[j]) })
	return out
}

func filterCost(f *query.Filter) int {
	switch f.Type {
	case "true", "false":
		return 0
	case "selector", "in", "equals", "null":
		if f.Extraction == nil {
			return 1
		}
	case "expression", "columnComparison":
		return 4
	case "and", "or":
		c := 0
		for _, s := range f.Fields {
			c = max(c, filterCost(s))
		}
		return c
	case "not":
		return filterCost(f.Field)
	}
	return 2
}

// leaf evaluates a leaf filter that is not a row filter, from the column's
// bitmap indexes or its values' ids.
func (fe *filterEval) leaf(f *query.Filter, u *roaring.Bitmap, incl bool) (*roaring.Bitmap, error) {
	if f.Type == "null" {
		if _, exists := fe.cols.colKind(f.Column); !exists {
			return u.Clone(), nil
		}
		return fe.keys(f.Column, nil, func(_ string, null bool) tri { return triOf(null) }, nil, false, u, incl)
	}
	pred, err := stringPred(f)
	if err != nil {
		return nil, err
	}
	var exact []*string
	usesExact := false
	if f.Extraction == nil {
		switch f.Type {
		case "selector":
			exact, usesExact = []*string{f.Value}, true
		case "in":
			exact, usesExact = f.Values, true
		case "equals":
			if f.MatchType == "STRING" {
				s := f.Match.S
				exact, usesExact = []*string{&s}, true
			}
		}
	}
	return fe.keys(f.Column, f.Extraction, pred, exact, usesExact, u, incl)
}

func triOf(b bool) tri {
	if b {
		return tTrue
	}
	return tFalse
}

// stringPred builds the value predicate of a leaf filter.
func stringPred(f *query.Filter) (strPred, error) {
	switch f.Type {
	case "selector":
		if f.Value == nil {
			return func(_ string, null bool) tri { return triOf(null) }, nil
		}
		want := *f.Value
		return func(v string, null bool) tri {
			if null {
				return tUnknown
			}
			return triOf(v == want)
		}, nil
	case "in":
		set := make(map[string]struct{}, len(f.Values))
		hasNull := false
		for _, v := range f.Values {
			if v == nil {
				hasNull = true
			} else {
				set[*v] = struct{}{}
			}
		}
		return func(v string, null bool) tri {
			if null {
				if hasNull {
					return tTrue
				}
				return tUnknown
			}
			_, ok := set[v]
			return triOf(ok)
		}, nil
	case "equals":
		m := f.Match
		if m.Type == "STRING" {
			return func(v string, null bool) tri {
				if null {
					return tUnknown
				}
				return triOf(v == m.S)
			}, nil
		}
		return func(v string, null bool) tri {
			if null {
				return tUnknown
			}
			d, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return tUnknown
			}
			return triOf(d == m.D)
		}, nil
	case "bound":
		ord := f.Ordering
		lower, upper := f.Lower, f.Upper
		return func(v string, null bool) tri {
			if null {
				if lower == nil {
					return tTrue
				}
				return tUnknown
			}
			if lower != nil {
				c := ord.Compare(v, false, *lower, false)
				if c < 0 || (c == 0 && f.LowerStrict) {
					return tFalse
				}
			}
			if upper != nil {
				c := ord.Compare(v, false, *upper, false)
				if c > 0 || (c == 0 && f.UpperStrict) {
					return tFalse
				}
			}
			return tTrue
		}, nil
	case "range":
		lo, hi := f.LowerS, f.UpperS
		if f.MatchType == "STRING" {
			return func(v string, null bool) tri {
				if null {
					return tUnknown
				}
				if lo != nil {
					c := strings.Compare(v, lo.S)
					if c < 0 || (c == 0 && f.LowerStrict) {
						return tFalse
					}
				}
				if hi != nil {
					c := strings.Compare(v, hi.S)
					if c > 0 || (c == 0 && f.UpperStrict) {
						return tFalse
					}
				}
				return tTrue
			}, nil
		}
		return func(v string, null bool) tri {
			if null {
				return tUnknown
			}
			d, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return tUnknown
			}
			return triOf(inFloatRange(d, lo, hi, f.LowerStrict, f.UpperStrict))
		}, nil
	case "like", "regex":
		re := f.Regex
		return func(v string, null bool) tri {
			if null {
				return tUnknown
			}
			return triOf(re.MatchString(v))
		}, nil
	case "search":
		s := f.Search
		return func(v string, null bool) tri {
			if null {
				return tUnknown
			}
			return triOf(s.Matches(v))
		}, nil
	case "interval":
		ivs := f.Intervals
		return func(v string, null bool) tri {
			if null {
				return tUnknown
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return tFalse
			}
			for _, iv := range ivs {
				if iv.ContainsTime(n) {
					return tTrue
				}
			}
			return tFalse
		}, nil
	}
	return nil, query.Invalidf("filter type [%s] cannot be applied to a column", f.Type)
}

func inFloatRange(d float64, lo, hi *query.Scalar, loStrict, hiStrict bool) bool {
	if lo != nil && (d < lo.D || (d == lo.D && loStrict)) {
		return false
	}
	if hi != nil && (d > hi.D || (d == hi.D && hiStrict)) {
		return false
	}
	return true
}

// keys evaluates a value predicate over a column read as ids. For
// dictionary columns without extraction it works from the bitmap indexes
// (exact values are looked up directly); otherwise it scans rows,
// evaluating the predicate once per distinct id.
func (fe *filterEval) keys(col string, fn *query.ExtractionFn, pred strPred, exact []*string, usesExact bool, u *roaring.Bitmap, incl bool) (*roaring.Bitmap, error) {
	var ks keySource
	var err error
	if fn != nil {
		ks, err = fe.cols.keyFor(&query.DimensionSpec{Dimension: col, Extraction: fn})
	} else {
		ks, err = fe.cols.key(col)
	}
	if err != nil {
		return nil, err
	}
	pk, isPhys := ks.(*physKey)
	if !isPhys {
		return fe.scan(newKeyFilter(ks, pred, incl), u)
	}
	var ids []int
	var nullMatches bool
	if usesExact {
		for _, v := range exact {
			if v == nil {
				nullMatches = true
				continue
			}
			if id, found, err := pk.col.Find(*v); err != nil {
				return nil, err
			} else if found {
				ids = append(ids, id)
			}
		}
		nullMatches = nullMatches || (incl && pred("", true) == tUnknown)
	} else {
		vals, err := pk.dict()
		if err != nil {
			return nil, err
		}
		for id := range vals {
			if pk.hasNull && id == 0 {
				continue
			}
			if pred(vals[id], false).matches(incl) {
				ids = append(ids, id)
			}
		}
		nullMatches = pred("", true).matches(incl)
		if len(ids) > 2048 && len(ids) > pk.n/16 {
			return fe.scan(newKeyFilter(ks, pred, incl), u)
		}
	}
	bms := make([]*roaring.Bitmap, 0, len(ids)+1)
	for _, id := range ids {
		bm, err := fe.cols.seg.bitmap(pk.name, pk.col, id)
		if err != nil {
			return nil, err
		}
		bms = append(bms, bm)
	}
	if nullMatches {
		bm, err := fe.cols.seg.bitmap(pk.name, pk.col, -1)
		if err != nil {
			return nil, err
		}
		bms = append(bms, bm)
	}
	var out *roaring.Bitmap
	switch len(bms) {
	case 0:
		return roaring.New(), nil
	case 1:
		out = roaring.And(bms[0], u)
	default:
		out = roaring.FastOr(bms...)
		out.And(u)
	}
	return out, nil
}

// keyFilter evaluates a value predicate on the ids of a column's rows,
// once per distinct id; a row of a multi-value column matches when any of
// its values does.
type keyFilter struct {
	ks      keySource
	pred    strPred
	incl    bool
	nullRes tri
	memo    []tri // per id; computed lazily
	known   []bool
	sel     []int32
}

func newKeyFilter(ks keySource, pred strPred, incl bool) *keyFilter {
	return &keyFilter{ks: ks, pred: pred, incl: incl, nullRes: pred("", true)}
}

func (f *keyFilter) eval(id int32) tri {
	if int(id) >= len(f.memo) {
		n := f.ks.card()
		f.memo = append(f.memo, make([]tri, n-len(f.memo))...)
		f.known = append(f.known, make([]bool, n-len(f.known))...)
	}
	if !f.known[id] {
		v := f.ks.value(id)
		s, ok := v.String()
		f.memo[id] = f.pred(s, !ok)
		f.known[id] = true
	}
	return f.memo[id]
}

func (f *keyFilter) refine(b Batch) (Batch, error) {
	offs, ids, err := f.ks.ids(b.Block)
	if err != nil {
		return Batch{}, err
	}
	out := f.sel[:0]
	test := func(i int) {
		var r tri
		if offs == nil {
			r = f.eval(ids[i])
		} else if offs[i] == offs[i+1] {
			r = f.nullRes
		} else {
			r = tFalse
			for _, id := range ids[offs[i]:offs[i+1]] {
				switch f.eval(id) {
				case tTrue:
					r = tTrue
				case tUnknown:
					if r == tFalse {
						r = tUnknown
					}
				}
				if r == tTrue {
					break
				}
			}
		}
		if r.matches(f.incl) {
			out = append(out, int32(i))
		}
	}
	if b.Sel == nil {
		for i := b.From; i < b.To; i++ {
			test(i)
		}
	} else {
		for _, i := range b.Sel {
			test(int(i))
		}
	}
	f.sel = out
	return b.narrowed(out), nil
}

// numPred is a predicate on numbers: a value matches when it lies in one of
// the ranges; null rows get the result null.
type numPred struct {
	isLong bool
	lr     []lrange // long columns: inclusive ranges
	dr     []drange // other columns
	null   tri
}

type lrange struct{ lo, hi int64 }

type drange struct {
	lo, hi             float64
	loStrict, hiStrict bool
}

func (p *numPred) matchLong(v int64) bool {
	for _, r := range p.lr {
		if v >= r.lo && v <= r.hi {
			return true
		}
	}
	return false
}

func (p *numPred) matchDouble(v float64) bool {
	for _, r := range p.dr {
		if (v > r.lo || (v == r.lo && !r.loStrict)) && (v < r.hi || (v == r.hi && !r.hiStrict)) {
			return true
		}
	}
	return false
}

// blockClass tells, from block statistics, whether every non-null value
// of the block matches (1), none does (0), or it must be scanned (-1).
func (p *numPred) blockClass(st segment.BlockStats) int {
	if p.isLong {
		for _, r := range p.lr {
			if st.MinLong >= r.lo && st.MaxLong <= r.hi {
				return 1
			}
		}
		for _, r := range p.lr {
			if st.MaxLong >= r.lo && st.MinLong <= r.hi {
				return -1
			}
		}
		return 0
	}
	if math.IsNaN(st.MinDouble) || math.IsNaN(st.MaxDouble) {
		return -1
	}
	lo, hi := st.MinDouble, st.MaxDouble
	for _, r := range p.dr {
		if (lo > r.lo || (lo == r.lo && !r.loStrict)) && (hi < r.hi || (hi == r.hi && !r.hiStrict)) {
			return 1
		}
	}
	for _, r := range p.dr {
		disjoint := hi < r.lo || (hi == r.lo && r.loStrict) || lo > r.hi || (lo == r.hi && r.hiStrict)
		if !disjoint {
			return -1
		}
	}
	return 0
}

// numericPred translates a leaf filter on a numeric column into ranges;
// ok is false when the filter must compare strings instead.
func numericPred(f *query.Filter, isLong bool) (numPred, bool) {
	p := numPred{isLong: isLong, null: tUnknown}
	point := func(s string) {
		d, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return
		}
		p.addRange(d, d, false, false)
	}
	switch f.Type {
	case "selector":
		if f.Value == nil {
			p.null = tTrue
			return p, true
		}
		point(*f.Value)
	case "in":
		for _, v := range f.Values {
			if v == nil {
				p.null = tTrue
			} else {
				point(*v)
			}
		}
	case "equals":
		if !f.Match.IsNum {
			return p, true
		}
		p.addRange(f.Match.D, f.Match.D, false, false)
	case "bound":
		if f.Ordering != query.Numeric {
			return p, false
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if f.Lower == nil {
			p.null = tTrue
		}
		if f.Lower != nil {
			d, err := strconv.ParseFloat(strings.TrimSpace(*f.Lower), 64)
			if err != nil {
				return p, false
			}
			lo = d
		}
		if f.Upper != nil {
			d, err := strconv.ParseFloat(strings.TrimSpace(*f.Upper), 64)
			if err != nil {
				return p, false
			}
			hi = d
		}
		p.addRange(lo, hi, f.LowerStrict && f.Lower != nil, f.UpperStrict && f.Upper != nil)
	case "range":
		if f.MatchType == "STRING" {
			return p, false
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if f.LowerS != nil {
			lo = f.LowerS.D
		}
		if f.UpperS != nil {
			hi = f.UpperS.D
		}
		p.addRange(lo, hi, f.LowerStrict && f.LowerS != nil, f.UpperStrict && f.UpperS != nil)
	case "interval":
		for _, iv := range f.Intervals {
			p.addRange(float64(iv.Start), float64(iv.End), false, true)
			if isLong {
				p.lr[len(p.lr)-1] = lrange{iv.Start, iv.End - 1}
			}
		}
	default:
		return p, false
	}
	return p, true
}

func (p *numPred) addRange(lo, hi float64, loStrict, hiStrict bool) {
	p.dr = append(p.dr, drange{lo, hi, loStrict, hiStrict})
	if !p.isLong {
		return
	}
	// Integer bounds: the smallest and largest longs inside the range.
	var l, h float64
	if loStrict {
		l = math.Floor(lo) + 1
	} else {
		l = math.Ceil(lo)
	}
	if hiStrict {
		h = math.Ceil(hi) - 1
	} else {
		h = math.Floor(hi)
	}
	if math.IsNaN(l) || math.IsNaN(h) || l > h {
		p.lr = append(p.lr, lrange{1, 0})
		return
	}
	p.lr = append(p.lr, lrange{clampLong(l), clampLong(h)})
}

func clampLong(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	if f <= math.MinInt64 {
		return math.MinInt64
	}
	return int64(f)
}

// numFilter evaluates a numeric predicate on the rows of a batch,
// deciding whole blocks from their statistics where it can.
type numFilter struct {
	src    numSource
	p      numPred
	nullOK bool
	sel    []int32
}

func newNumFilter(src numSource, p numPred, incl bool) *numFilter {
	return &numFilter{src: src, p: p, nullOK: p.null.matches(incl)}
}

func (f *numFilter) refine(b Batch) (Batch, error) {
	src, p, nullOK, blk := f.src, &f.p, f.nullOK, b.Block
	class := -1
	st, known := src.stats(blk)
	if known {
		switch {
		case st.NullCount == st.Rows:
			class = 2 // all null
		case len(p.lr) == 0 && len(p.dr) == 0:
			class = 0
		default:
			class = p.blockClass(st)
		}
		if class == 1 && st.NullCount > 0 && !nullOK {
			class = -1
		}
		if class == 0 && st.NullCount > 0 && nullOK {
			class = -1
		}
		if class == 2 {
			if !nullOK {
				return Batch{Block: blk}, nil
			}
			class = 1
		}
	}
	if class == 0 {
		return Batch{Block: blk}, nil
	}
	if class == 1 {
		return b, nil
	}
	nulls, err := src.nulls(blk)
	if err != nil {
		return Batch{}, err
	}
	out := f.sel[:0]
	if p.isLong && src.kind() == segment.KindLong {
		vals, err := src.longs(blk)
		if err != nil {
			return Batch{}, err
		}
		test := func(i int) {
			if bitSet(nulls, i) {
				if nullOK {
					out = append(out, int32(i))
				}
			} else if p.matchLong(vals[i]) {
				out = append(out, int32(i))
			}
		}
		if b.Sel == nil {
			if nulls == nil && len(p.lr) == 1 {
				lo, hi := p.lr[0].lo, p.lr[0].hi
				for i := b.From; i < b.To; i++ {
					if v := vals[i]; v >= lo && v <= hi {
						out = append(out, int32(i))
					}
				}
			} else {
				for i := b.From; i < b.To; i++ {
					test(i)
				}
			}
		} else {
			for _, i := range b.Sel {
				test(int(i))
			}
		}
	} else {
		vals, err := src.doubles(blk)
		if err != nil {
			return Batch{}, err
		}
		test := func(i int) {
			if bitSet(nulls, i) {
				if nullOK {
					out = append(out, int32(i))
				}
			} else if p.matchDouble(vals[i]) {
				out = append(out, int32(i))
			}
		}
		if b.Sel == nil {
			for i := b.From; i < b.To; i++ {
				test(i)
			}
		} else {
			for _, i := range b.Sel {
				test(int(i))
			}
		}
	}
	f.sel = out
	return b.narrowed(out), nil
}

// expressionFilter matches rows where the expression is true (> 0 for
// numbers, 'true' for strings); a null result is unknown. Vectorizable
// expressions are evaluated a block at a time.
func (fe *filterEval) expressionFilter(f *query.Filter, incl bool) (rowFilter, error) {
	c := fe.cols
	if _, ok := f.Expression.Expr.Vectorize(c.vecType, c.rpb); ok {
		src, err := c.newExprNum(&query.VirtualColumn{Name: "\x00filter", Expression: f.Expression})
		if err != nil {
			return nil, err
		}
		p := numPred{isLong: src.kind() == segment.KindLong, null: tUnknown}
		p.addRange(0, math.Inf(1), true, false)
		return newNumFilter(src, p, incl), nil
	}
	return &exprRowFilter{cols: c, f: f, incl: incl}, nil
}

// exprRowFilter evaluates an expression filter row by row.
type exprRowFilter struct {
	cols *columns
	f    *query.Filter
	incl bool
	sel  []int32
}

func (x *exprRowFilter) refine(b Batch) (Batch, error) {
	e := x.f.Expression.Expr
	rb := &rowBindings{cols: x.cols, b: b.Block}
	out := x.sel[:0]
	test := func(i int) error {
		rb.i = i
		v, err := e.Eval(rb)
		if err != nil {
			return query.Invalidf("expression [%s]: %v", x.f.Expression.Source, err)
		}
		if rb.err != nil {
			return rb.err
		}
		r := triOf(v.AsBool())
		if v.IsNull() {
			r = tUnknown
		}
		if r.matches(x.incl) {
			out = append(out, int32(i))
		}
		return nil
	}
	if b.Sel == nil {
		for i := b.From; i < b.To; i++ {
			if err := test(i); err != nil {
				return Batch{}, err
			}
		}
	} else {
		for _, i := range b.Sel {
			if err := test(int(i)); err != nil {
				return Batch{}, err
			}
		}
	}
	x.sel = out
	return b.narrowed(out), nil
}

// columnComparison matches rows whose dimensions all hold the same value,
// compared as strings (null equals null).
func (fe *filterEval) columnComparison(f *query.Filter) (rowFilter, error) {
	srcs := make([]keySource, len(f.Dimensions))
	for i, d := range f.Dimensions {
		ks, err := fe.cols.keyFor(d)
		if err != nil {
			return nil, err
		}
		srcs[i] = ks
	}
	return &colCmpFilter{srcs: srcs, offs: make([][]int32, len(srcs)), ids: make([][]int32, len(srcs))}, nil
}

type colCmpFilter struct {
	srcs      []keySource
	offs, ids [][]int32
	sel       []int32
}

func (f *colCmpFilter) refine(b Batch) (Batch, error) {
	srcs, offs, ids := f.srcs, f.offs, f.ids
	for k, ks := range srcs {
		var err error
		if offs[k], ids[k], err = ks.ids(b.Block); err != nil {
			return Batch{}, err
		}
	}
	rowVal := func(ks keySource, offs, ids []int32, i int) (string, bool) {
		id := int32(-1)
		if offs == nil {
			id = ids[i]
		} else if offs[i+1]-offs[i] >= 1 {
			id = ids[offs[i]]
		}
		if id < 0 {
			return "", false
		}
		return ks.value(id).String()
	}
	out := f.sel[:0]
	test := func(i int) {
		s0, ok0 := rowVal(srcs[0], offs[0], ids[0], i)
		for k := 1; k < len(srcs); k++ {
			s, ok := rowVal(srcs[k], offs[k], ids[k], i)
			if ok != ok0 || s != s0 {
				return
			}
		}
		out = append(out, int32(i))
	}
	if b.Sel == nil {
		for i := b.From; i < b.To; i++ {
			test(i)
		}
	} else {
		for _, i := range b.Sel {
			test(int(i))
		}
	}
	f.sel = out
	return b.narrowed(out), nil
}
