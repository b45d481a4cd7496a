package msq

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/datasketches-go/hll"
	"github.com/apache/datasketches-go/theta"

	"strata/expr"
	"strata/sql"
	"strata/storage/blob"
	"strata/storage/quantiles"
)

// aggKind is the family of an aggregate function.
type aggKind uint8

const (
	aggCount aggKind = iota
	aggSum
	aggMin
	aggMax
	aggEarliest
	aggLatest
	aggAny
	aggHLL
	aggTheta
	aggQuantiles
)

var aggregateNames = map[string]bool{
	"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true,
	"EARLIEST": true, "EARLIEST_BY": true, "LATEST": true, "LATEST_BY": true, "ANY_VALUE": true,
	"APPROX_COUNT_DISTINCT": true, "APPROX_COUNT_DISTINCT_DS_HLL": true, "APPROX_COUNT_DISTINCT_DS_THETA": true,
	"DS_HLL": true, "DS_THETA": true, "DS_QUANTILES_SKETCH": true, "APPROX_QUANTILE": true,
	"APPROX_QUANTILE_DS": true, "STRING_AGG": true, "ARRAY_AGG": true, "LISTAGG": true, "STDDEV": true,
	"VARIANCE": true, "VAR_POP": true, "VAR_SAMP": true, "STDDEV_POP": true, "STDDEV_SAMP": true,
	"BIT_AND": true, "BIT_OR": true, "BIT_XOR": true, "GROUPING": true,
}

func isAggregate(upper string) bool { return aggregateNames[upper] }

// aggSpec is one aggregator of a grouping stage.
type aggSpec struct {
	kind      aggKind
	fn        string // SQL function name
	sql       string // the call as written (formatted)
	countStar bool
	args      []*compiled // value (and time for earliest/latest) over the input rows
	filter    *compiled
	inType    Type // type of the value argument
	outType   Type // type of the finalized value
	sketch    bool // DS_HLL/DS_THETA: the value is the sketch itself
	mergeIn   bool // the input is a sketch (or pair) column to merge
	lgK       int
	tgt       string
	size      int
	maxBytes  int
	k         int     // DS_QUANTILES_SKETCH, APPROX_QUANTILE_DS
	fraction  float64 // APPROX_QUANTILE_DS
}

// pairType is the stored complex type of an earliest/latest value.
func (a *aggSpec) pairType() string {
	switch a.inType.Kind {
	case KindLong:
		return blob.TypePairLongLong
	case KindFloat:
		return blob.TypePairLongFloat
	case KindDouble:
		return blob.TypePairLongDouble
	}
	return blob.TypePairLongString
}

// interType is the type of the intermediate value a worker hands on.
func (a *aggSpec) interType() Type {
	switch a.kind {
	case aggEarliest, aggLatest:
		return Type{Kind: KindComplex, Complex: a.pairType()}
	case aggHLL:
		return Type{Kind: KindComplex, Complex: blob.TypeHLL}
	case aggTheta:
		return Type{Kind: KindComplex, Complex: blob.TypeTheta}
	case aggQuantiles:
		return Type{Kind: KindComplex, Complex: blob.TypeQuantiles}
	}
	return a.outType
}

// metric is the storage aggregator that rolls up stored intermediate values
// of this aggregator (Druid's combining factory); "" when there is none and
// the column must be stored as a dimension.
func (a *aggSpec) metric() string {
	switch a.kind {
	case aggCount:
		return "longSum"
	case aggSum, aggMin, aggMax:
		op := map[aggKind]string{aggSum: "Sum", aggMin: "Min", aggMax: "Max"}[a.kind]
		switch a.outType.Kind {
		case KindLong:
			return "long" + op
		case KindDouble:
			return "double" + op
		case KindFloat:
			return "float" + op
		}
	case aggEarliest, aggLatest:
		suffix := "First"
		if a.kind == aggLatest {
			suffix = "Last"
		}
		switch a.inType.Kind {
		case KindLong:
			return "long" + suffix
		case KindFloat:
			return "float" + suffix
		case KindDouble:
			return "double" + suffix
		case KindString:
			return "string" + suffix
		}
	case aggHLL:
		return "HLLSketchMerge"
	case aggTheta:
		return "thetaSketch"
	case aggQuantiles:
		return "quantilesDoublesSketch"
	}
	return ""
}

// planAggregate builds the aggregator for a call; args are translated in
// the pre-aggregation scope by tr.
func planAggregate(tr *translator, call *sql.FuncCall, name string) (*aggSpec, error) {
	a := &aggSpec{fn: name, sql: sql.Format(call), maxBytes: 1024, lgK: 12, tgt: "HLL_4", size: 16384, k: quantiles.DefaultK}
	var vals []tx
	var literals []sql.Expr
	for _, arg := range call.Args {
		if _, ok := arg.(*sql.StarExpr); ok {
			if name != "COUNT" {
				return nil, tr.errAt(arg, "'*' is only allowed in COUNT(*)")
			}
			a.countStar = true
			continue
		}
		if na, ok := arg.(*sql.NamedArg); ok {
			return nil, tr.errAt(na, "named arguments are not supported for %s", name)
		}
		v, err := tr.expr(arg)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		literals = append(literals, arg)
	}
	need := func(min, max int) error {
		if len(vals) < min || len(vals) > max {
			return tr.errAt(call, "%s takes %s arguments, got %d", name, argCount(min, max), len(vals))
		}
		return nil
	}
	intLit := func(i int, what string) (int, error) {
		n, ok := literals[i].(*sql.NumberLit)
		if !ok || !n.IsInteger() {
			return 0, tr.errAt(literals[i], "%s of %s must be an integer literal", what, name)
		}
		v, err := strconv.Atoi(n.Text)
		if err != nil {
			return 0, tr.errAt(literals[i], "%s of %s is out of range", what, name)
		}
		return v, nil
	}
	if call.Distinct && name != "COUNT" && name != "APPROX_COUNT_DISTINCT" && name != "MIN" && name != "MAX" {
		return nil, tr.notSupported(call, "%s(DISTINCT ...) is not supported", name)
	}
	switch name {
	case "COUNT":
		if a.countStar {
			a.kind, a.outType = aggCount, typeLong
			break
		}
		if err := need(1, 1); err != nil {
			return nil, err
		}
		if call.Distinct {
			a.kind, a.outType, a.inType = aggHLL, typeLong, vals[0].typ
			break
		}
		a.kind, a.outType, a.inType = aggCount, typeLong, vals[0].typ
	case "SUM", "MIN", "MAX":
		if err := need(1, 1); err != nil {
			return nil, err
		}
		a.inType = vals[0].typ
		a.kind = map[string]aggKind{"SUM": aggSum, "MIN": aggMin, "MAX": aggMax}[name]
		switch a.inType.Kind {
		case KindLong:
			a.outType = typeLong
			if name != "SUM" && a.inType.Timestamp {
				a.outType = typeTimestamp
			}
		case KindFloat:
			a.outType = typeFloat
		case KindDouble:
			a.outType = typeDouble
		case KindString:
			if name == "SUM" {
				a.outType = typeDouble
			} else {
				a.outType = typeString
			}
		default:
			return nil, tr.errAt(call, "%s does not accept %s values", name, a.inType.SQL())
		}
	case "EARLIEST", "LATEST", "ANY_VALUE", "EARLIEST_BY", "LATEST_BY":
		byTime := strings.HasSuffix(name, "_BY")
		max := 2
		if byTime {
			max = 3
		}
		if err := need(1, max); err != nil {
			return nil, err
		}
		a.inType, a.outType = vals[0].typ, vals[0].typ
		if a.inType.Kind == KindComplex {
			if !strings.HasPrefix(a.inType.Complex, "serializablePair") {
				return nil, tr.errAt(call, "%s does not accept %s values", name, a.inType.SQL())
			}
			a.mergeIn = true
			a.inType, a.outType = pairValueType(a.inType.Complex), pairValueType(a.inType.Complex)
		}
		if a.inType.Kind >= KindStringArray {
			return nil, tr.notSupported(call, "%s of arrays is not supported", name)
		}
		switch {
		case strings.HasPrefix(name, "EARLIEST"):
			a.kind = aggEarliest
		case strings.HasPrefix(name, "LATEST"):
			a.kind = aggLatest
		default:
			a.kind = aggAny
		}
		if byTime {
			if len(vals) < 2 {
				return nil, tr.errAt(call, "%s needs a time argument", name)
			}
			if len(vals) == 3 {
				n, err := intLit(2, "maxBytesPerString")
				if err != nil {
					return nil, err
				}
				a.maxBytes = n
			}
		} else {
			if len(vals) == 2 {
				n, err := intLit(1, "maxBytesPerString")
				if err != nil {
					return nil, err
				}
				a.maxBytes = n
				vals = vals[:1]
			}
			if a.kind != aggAny && !a.mergeIn {
				// EARLIEST(x) orders by the input's __time.
				i, _ := tr.sc.resolve(&sql.ColumnRef{Parts: []sql.Ident{{Name: "__time"}}})
				if i < 0 {
					return nil, tr.errAt(call, "%s needs a __time column in its input; use %s_BY", name, name)
				}
				vals = append(vals, tx{src: ident(i), typ: typeTimestamp, node: call})
			}
		}
	case "APPROX_COUNT_DISTINCT", "APPROX_COUNT_DISTINCT_DS_HLL", "DS_HLL":
		if err := need(1, 3); err != nil {
			return nil, err
		}
		a.kind, a.inType, a.outType = aggHLL, vals[0].typ, typeLong
		if name == "DS_HLL" {
			a.sketch, a.outType = true, Type{Kind: KindComplex, Complex: blob.TypeHLL}
		}
		if len(vals) >= 2 {
			n, err := intLit(1, "lgK")
			if err != nil {
				return nil, err
			}
			if n < 4 || n > 21 {
				return nil, tr.errAt(call, "lgK %d of %s out of range [4, 21]", n, name)
			}
			a.lgK = n
		}
		if len(vals) == 3 {
			s, ok := literals[2].(*sql.StringLit)
			if !ok || (s.Value != "HLL_4" && s.Value != "HLL_6" && s.Value != "HLL_8") {
				return nil, tr.errAt(literals[2], "tgtHllType of %s must be 'HLL_4', 'HLL_6' or 'HLL_8'", name)
			}
			a.tgt = s.Value
		}
		vals = vals[:1]
	case "APPROX_COUNT_DISTINCT_DS_THETA", "DS_THETA":
		if err := need(1, 2); err != nil {
			return nil, err
		}
		a.kind, a.inType, a.outType = aggTheta, vals[0].typ, typeLong
		if name == "DS_THETA" {
			a.sketch, a.outType = true, Type{Kind: KindComplex, Complex: blob.TypeTheta}
		}
		if len(vals) == 2 {
			n, err := intLit(1, "size")
			if err != nil {
				return nil, err
			}
			if n < 16 || n > 1<<26 || n&(n-1) != 0 {
				return nil, tr.errAt(call, "size %d of %s must be a power of two in [16, 2^26]", n, name)
			}
			a.size = n
		}
		vals = vals[:1]
	case "DS_QUANTILES_SKETCH", "APPROX_QUANTILE_DS":
		// DS_QUANTILES_SKETCH(expr [, k]); APPROX_QUANTILE_DS(expr, probability [, k])
		kArg := 1
		if name == "APPROX_QUANTILE_DS" {
			if err := need(2, 3); err != nil {
				return nil, err
			}
			f := -1.0
			if n, ok := literals[1].(*sql.NumberLit); ok {
				if v, err := strconv.ParseFloat(n.Text, 64); err == nil {
					f = v
				}
			}
			if f < 0 || f > 1 {
				return nil, tr.errAt(literals[1], "probability of %s must be a number literal in [0, 1]", name)
			}
			a.fraction, a.outType, kArg = f, typeDouble, 2
		} else {
			if err := need(1, 2); err != nil {
				return nil, err
			}
			a.sketch, a.outType = true, Type{Kind: KindComplex, Complex: blob.TypeQuantiles}
		}
		a.kind, a.inType = aggQuantiles, vals[0].typ
		if len(vals) > kArg {
			n, err := intLit(kArg, "k")
			if err != nil {
				return nil, err
			}
			if n < 2 || n > 32768 || n&(n-1) != 0 {
				return nil, tr.errAt(call, "k %d of %s must be a power of two in [2, 32768]", n, name)
			}
			a.k = n
		}
		switch a.inType.Kind {
		case KindLong, KindFloat, KindDouble:
		case KindComplex:
			if a.inType.Complex != blob.TypeQuantiles {
				return nil, tr.errAt(call, "%s cannot read %s values", name, a.inType.SQL())
			}
			a.mergeIn = true
		default:
			return nil, tr.errAt(call, "%s takes a numeric argument, not %s", name, a.inType.SQL())
		}
		vals = vals[:1]
	case "AVG":
		return nil, nil // expanded by the caller into SUM / COUNT
	default:
		return nil, tr.notSupported(call, "aggregate %s is not supported", name)
	}
	if a.kind == aggHLL || a.kind == aggTheta {
		if a.inType.Kind == KindComplex {
			want := blob.TypeHLL
			if a.kind == aggTheta {
				want = blob.TypeTheta
			}
			if a.inType.Complex != want {
				return nil, tr.errAt(call, "%s cannot read %s values", name, a.inType.SQL())
			}
			a.mergeIn = true
		}
	}
	for _, v := range vals {
		c, err := compileTx(v)
		if err != nil {
			return nil, err
		}
		a.args = append(a.args, c)
	}
	if call.Filter != nil {
		f, err := tr.expr(call.Filter)
		if err != nil {
			return nil, err
		}
		if a.filter, err = compileTx(f); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func pairValueType(complex string) Type {
	switch complex {
	case blob.TypePairLongLong:
		return typeLong
	case blob.TypePairLongDouble:
		return typeDouble
	case blob.TypePairLongFloat:
		return typeFloat
	}
	return typeString
}

// aggregator keeps the state of one aggregator for many groups (indexed by
// group number), in arrays.
type aggregator interface {
	// grow adds the state of a new group.
	grow()
	// add folds one input row's argument values into group g.
	add(g int, args []expr.Value) error
	// merge folds an intermediate value produced by another worker.
	merge(g int, v expr.Value) error
	// inter is the intermediate value of group g.
	inter(g int) (expr.Value, error)
	// final is the finalized value of group g.
	final(g int) (expr.Value, error)
}

func newAggregator(a *aggSpec) aggregator {
	switch a.kind {
	case aggCount:
		return &countAgg{star: a.countStar}
	case aggSum, aggMin, aggMax:
		return &numAgg{kind: a.kind, typ: a.outType}
	case aggEarliest, aggLatest, aggAny:
		return &pairAgg{spec: a, ptype: a.pairType()}
	case aggHLL:
		t, _ := hllTgt(a.tgt)
		return &hllAgg{lgK: a.lgK, tgt: t, sketch: a.sketch}
	case aggTheta:
		return &thetaAgg{lgK: uint8(math.Log2(float64(a.size))), sketch: a.sketch}
	case aggQuantiles:
		return &quantilesAgg{spec: a}
	}
	panic(fmt.Sprintf("msq: no aggregator for kind %d", a.kind)) // planAggregate only builds the kinds above
}

func hllTgt(s string) (hll.TgtHllType, bool) {
	switch s {
	case "HLL_6":
		return hll.TgtHllTypeHll6, true
	case "HLL_8":
		return hll.TgtHllTypeHll8, true
	}
	return hll.TgtHllTypeHll4, true
}

type countAgg struct {
	star bool
	n    []int64
}

func (a *countAgg) grow() { a.n = append(a.n, 0) }
func (a *countAgg) add(g int, args []expr.Value) error {
	if a.star || !args[0].IsNull() {
		a.n[g]++
	}
	return nil
}
func (a *countAgg) merge(g int, v expr.Value) error {
	n, _ := v.AsLong()
	a.n[g] += n
	return nil
}
func (a *countAgg) inter(g int) (expr.Value, error) { return expr.Long(a.n[g]), nil }
func (a *countAgg) final(g int) (expr.Value, error) { return expr.Long(a.n[g]), nil }

// numAgg is SUM, MIN or MAX over longs, floats, doubles or (MIN/MAX) strings.
// The result is null when no non-null value was seen.
type numAgg struct {
	kind aggKind
	typ  Type
	l    []int64
	d    []float64
	s    []string
	set  []bool
}

func (a *numAgg) grow() {
	a.set = append(a.set, false)
	switch a.typ.Kind {
	case KindLong:
		a.l = append(a.l, 0)
	case KindString:
		a.s = append(a.s, "")
	default:
		a.d = append(a.d, 0)
	}
}

func (a *numAgg) add(g int, args []expr.Value) error { return a.merge(g, args[0]) }

func (a *numAgg) merge(g int, v expr.Value) error {
	if v.IsNull() {
		return nil
	}
	first := !a.set[g]
	switch a.typ.Kind {
	case KindLong:
		x, ok := v.AsLong()
		if !ok {
			return nil
		}
		switch {
		case first:
			a.l[g] = x
		case a.kind == aggSum:
			a.l[g] += x
		case a.kind == aggMin:
			a.l[g] = min(a.l[g], x)
		default:
			a.l[g] = max(a.l[g], x)
		}
	case KindString:
		x, ok := v.AsString()
		if !ok {
			return nil
		}
		if first || (a.kind == aggMin && x < a.s[g]) || (a.kind == aggMax && x > a.s[g]) {
			a.s[g] = strings.Clone(x)
		}
	default:
		x, ok := v.AsDouble()
		if !ok {
			return nil
		}
		if a.typ.Kind == KindFloat {
			x = float64(float32(x))
		}
		switch {
		case first:
			a.d[g] = x
		case a.kind == aggSum:
			a.d[g] += x
			if a.typ.Kind == KindFloat {
				a.d[g] = float64(float32(a.d[g]))
			}
		case math.IsNaN(x) || math.IsNaN(a.d[g]):
			a.d[g] = math.NaN()
		case a.kind == aggMin:
			a.d[g] = math.Min(a.d[g], x)
		default:
			a.d[g] = math.Max(a.d[g], x)
		}
	}
	a.set[g] = true
	return nil
}

func (a *numAgg) inter(g int) (expr.Value, error) { return a.final(g) }

func (a *numAgg) final(g int) (expr.Value, error) {
	switch a.typ.Kind {
	case KindLong:
		if !a.set[g] {
			return expr.NullOf(expr.TypeLong), nil
		}
		return expr.Long(a.l[g]), nil
	case KindString:
		if !a.set[g] {
			return expr.Null, nil
		}
		return expr.String(a.s[g]), nil
	}
	if !a.set[g] {
		return expr.NullOf(expr.TypeDouble), nil
	}
	return expr.Double(a.d[g]), nil
}

// pairAgg is EARLIEST/LATEST (by a time) and ANY_VALUE. The earliest row wins
// even when its value is null; on equal times EARLIEST keeps the first row
// seen and LATEST the last.
type pairAgg struct {
	spec  *aggSpec
	ptype string
	t     []int64
	v     []expr.Value
	set   []bool
}

func (a *pairAgg) grow() {
	a.t = append(a.t, 0)
	a.v = append(a.v, expr.Value{})
	a.set = append(a.set, false)
}

func (a *pairAgg) take(g int, t int64, v expr.Value) {
	switch a.spec.kind {
	case aggEarliest:
		if a.set[g] && t >= a.t[g] {
			return
		}
	case aggLatest:
		if a.set[g] && t < a.t[g] {
			return
		}
	case aggAny:
		if a.set[g] || v.IsNull() {
			return
		}
	}
	if s, ok := v.AsString(); ok && v.Type() == expr.TypeString {
		if len(s) > a.spec.maxBytes {
			cut := a.spec.maxBytes
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut]
		}
		v = expr.String(strings.Clone(s))
	}
	a.t[g], a.v[g], a.set[g] = t, v, true
}

func (a *pairAgg) add(g int, args []expr.Value) error {
	if a.spec.mergeIn {
		return a.merge(g, args[0])
	}
	var t int64
	if a.spec.kind != aggAny {
		var ok bool
		if t, ok = args[1].AsLong(); !ok {
			return nil // rows without a time take no part
		}
	}
	a.take(g, t, castTo(args[0], a.spec.inType))
	return nil
}

func (a *pairAgg) merge(g int, v expr.Value) error {
	if v.IsNull() {
		return nil
	}
	s, _ := v.AsString()
	p, err := blob.DecodePair(a.ptype, []byte(s))
	if err != nil {
		return err
	}
	var x expr.Value
	switch {
	case p.Null:
		x = expr.NullOf(a.spec.inType.exprType())
	case a.ptype == blob.TypePairLongLong:
		x = expr.Long(p.Long)
	case a.ptype == blob.TypePairLongString:
		x = expr.String(p.String)
	default:
		x = expr.Double(p.Double)
	}
	a.take(g, p.Time, x)
	return nil
}

func (a *pairAgg) inter(g int) (expr.Value, error) {
	if !a.set[g] {
		return expr.Null, nil
	}
	p := blob.Pair{Time: a.t[g], Null: a.v[g].IsNull()}
	switch a.ptype {
	case blob.TypePairLongLong:
		p.Long, _ = a.v[g].AsLong()
	case blob.TypePairLongString:
		p.String, _ = a.v[g].AsString()
	default:
		p.Double, _ = a.v[g].AsDouble()
	}
	b, err := blob.AppendPair(nil, a.ptype, p)
	return expr.String(string(b)), err
}

func (a *pairAgg) final(g int) (expr.Value, error) {
	if !a.set[g] {
		return expr.NullOf(a.spec.outType.exprType()), nil
	}
	return a.v[g], nil
}

// hllAgg is an HLL union per group: raw values are hashed as the storage
// writer's HLLSketchBuild does, so sketches built here and there merge.
type hllAgg struct {
	lgK    int
	tgt    hll.TgtHllType
	sketch bool
	u      []hll.Union
}

func (a *hllAgg) grow() { a.u = append(a.u, nil) }

func (a *hllAgg) union(g int) (hll.Union, error) {
	if a.u[g] == nil {
		u, err := hll.NewUnion(a.lgK)
		if err != nil {
			return nil, err
		}
		a.u[g] = u
	}
	return a.u[g], nil
}

func (a *hllAgg) add(g int, args []expr.Value) error {
	v := args[0]
	if v.IsNull() {
		return nil
	}
	u, err := a.union(g)
	if err != nil {
		return err
	}
	return hllUpdate(u, v)
}

func hllUpdate(u hll.Union, v expr.Value) error {
	switch v.Type() {
	case expr.TypeString:
		s, _ := v.AsString()
		return u.UpdateString(s)
	case expr.TypeLong:
		n, _ := v.AsLong()
		return u.UpdateInt64(n)
	case expr.TypeDouble:
		f, _ := v.AsDouble()
		if f == 0 {
			f = 0 // -0 hashes as +0
		}
		return u.UpdateInt64(int64(math.Float64bits(f)))
	}
	for _, e := range v.Elems() {
		if !e.IsNull() {
			if err := hllUpdate(u, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *hllAgg) merge(g int, v expr.Value) error {
	if v.IsNull() {
		return nil
	}
	s, _ := v.AsString()
	sk, err := blob.DecodeHLL([]byte(s))
	if err != nil {
		return err
	}
	u, err := a.union(g)
	if err != nil {
		return err
	}
	return u.UpdateSketch(sk)
}

func (a *hllAgg) result(g int) (hll.HllSketch, error) {
	u, err := a.union(g)
	if err != nil {
		return nil, err
	}
	return u.GetResult(a.tgt)
}

func (a *hllAgg) inter(g int) (expr.Value, error) {
	sk, err := a.result(g)
	if err != nil {
		return expr.Value{}, err
	}
	b, err := sk.ToCompactSlice()
	return expr.String(string(b)), err
}

func (a *hllAgg) final(g int) (expr.Value, error) {
	if a.sketch {
		return a.inter(g)
	}
	if a.u[g] == nil {
		return expr.Long(0), nil
	}
	est, err := a.u[g].GetEstimate()
	return expr.Long(int64(math.Round(est))), err
}

// thetaAgg keeps an update sketch for raw values and a union for merged ones.
type thetaAgg struct {
	lgK    uint8
	sketch bool
	upd    []*theta.QuickSelectUpdateSketch
	uni    []*theta.Union
}

func (a *thetaAgg) grow() {
	a.upd = append(a.upd, nil)
	a.uni = append(a.uni, nil)
}

func (a *thetaAgg) add(g int, args []expr.Value) error {
	v := args[0]
	if v.IsNull() {
		return nil
	}
	if a.upd[g] == nil {
		sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(a.lgK))
		if err != nil {
			return err
		}
		a.upd[g] = sk
	}
	thetaUpdate(a.upd[g], v)
	return nil
}

func thetaUpdate(sk *theta.QuickSelectUpdateSketch, v expr.Value) {
	switch v.Type() {
	case expr.TypeString:
		s, _ := v.AsString()
		blob.UpdateTheta(sk, s)
	case expr.TypeLong:
		n, _ := v.AsLong()
		blob.UpdateTheta(sk, n)
	case expr.TypeDouble:
		f, _ := v.AsDouble()
		blob.UpdateTheta(sk, f)
	default:
		for _, e := range v.Elems() {
			if !e.IsNull() {
				thetaUpdate(sk, e)
			}
		}
	}
}

func (a *thetaAgg) merge(g int, v expr.Value) error {
	if v.IsNull() {
		return nil
	}
	s, _ := v.AsString()
	sk, err := blob.DecodeTheta([]byte(s))
	if err != nil {
		return err
	}
	if a.uni[g] == nil {
		u, err := theta.NewUnion(theta.WithUnionLgK(a.lgK))
		if err != nil {
			return err
		}
		a.uni[g] = u
	}
	return a.uni[g].Update(sk)
}

func (a *thetaAgg) result(g int) (*theta.CompactSketch, error) {
	if a.uni[g] == nil {
		if a.upd[g] == nil {
			sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(a.lgK))
			if err != nil {
				return nil, err
			}
			a.upd[g] = sk
		}
		return a.upd[g].CompactOrdered(), nil
	}
	if a.upd[g] != nil {
		if err := a.uni[g].Update(a.upd[g].CompactOrdered()); err != nil {
			return nil, err
		}
		a.upd[g] = nil
	}
	return a.uni[g].OrderedResult()
}

func (a *thetaAgg) inter(g int) (expr.Value, error) {
	cs, err := a.result(g)
	if err != nil {
		return expr.Value{}, err
	}
	b, err := cs.MarshalBinary()
	return expr.String(string(b)), err
}

func (a *thetaAgg) final(g int) (expr.Value, error) {
	if a.sketch {
		return a.inter(g)
	}
	cs, err := a.result(g)
	if err != nil {
		return expr.Value{}, err
	}
	return expr.Long(int64(math.Round(cs.Estimate()))), nil
}

// castTo converts v to the value kind of t (numbers parsed from strings and
// so on), as storing into a column of type t would.
func castTo(v expr.Value, t Type) expr.Value {
	if v.IsNull() {
		return expr.NullOf(t.exprType())
	}
	want := t.exprType()
	if v.Type() == want {
		if t.Kind == KindFloat {
			f, _ := v.AsDouble()
			return expr.Double(float64(float32(f)))
		}
		return v
	}
	if t.Kind == KindComplex {
		return v
	}
	c, err := v.Cast(want)
	if err != nil {
		return expr.NullOf(want)
	}
	if t.Kind == KindFloat && !c.IsNull() {
		f, _ := c.AsDouble()
		return expr.Double(float64(float32(f)))
	}
	return c
}

// compareValues orders two values of the same column: nulls first, then
// numbers numerically and strings by UTF-8 bytes (Druid's lexicographic order).
func compareValues(a, b expr.Value) int {
	an, bn := a.IsNull(), b.IsNull()
	if an || bn {
		switch {
		case an && bn:
			return 0
		case an:
			return -1
		}
		return 1
	}
	switch a.Type() {
	case expr.TypeLong:
		if b.Type() == expr.TypeLong {
			x, _ := a.AsLong()
			y, _ := b.AsLong()
			return cmp.Compare(x, y)
		}
		fallthrough
	case expr.TypeDouble:
		x, ok1 := a.AsDouble()
		y, ok2 := b.AsDouble()
		if ok1 && ok2 {
			return cmp.Compare(x, y)
		}
	case expr.TypeString:
		if b.Type() == expr.TypeString {
			x, _ := a.AsString()
			y, _ := b.AsString()
			return strings.Compare(x, y)
		}
	}
	if a.Type().IsArray() && b.Type().IsArray() {
		ea, eb := a.Elems(), b.Elems()
		for i := 0; i < len(ea) && i < len(eb); i++ {
			if c := compareValues(ea[i], eb[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(ea), len(eb))
	}
	x, _ := a.AsString()
	y, _ := b.AsString()
	return strings.Compare(x, y)
}

// quantilesAgg is DS_QUANTILES_SKETCH (the sketch) and APPROX_QUANTILE_DS
// (one quantile of it): a DataSketches quantiles sketch of numbers, or the
// union of the sketches of a quantilesDoublesSketch column.
type quantilesAgg struct {
	spec *aggSpec
	sk   []*quantiles.Sketch
}

func (a *quantilesAgg) grow() { a.sk = append(a.sk, nil) }

func (a *quantilesAgg) sketch(g int) (*quantiles.Sketch, error) {
	if a.sk[g] == nil {
		sk, err := quantiles.New(a.spec.k)
		if err != nil {
			return nil, err
		}
		a.sk[g] = sk
	}
	return a.sk[g], nil
}

func (a *quantilesAgg) add(g int, args []expr.Value) error {
	if a.spec.mergeIn {
		return a.merge(g, args[0])
	}
	x, ok := args[0].AsDouble()
	if args[0].IsNull() || !ok {
		return nil
	}
	sk, err := a.sketch(g)
	if err == nil {
		sk.Update(x)
	}
	return err
}

func (a *quantilesAgg) merge(g int, v expr.Value) error {
	if v.IsNull() {
		return nil
	}
	s, _ := v.AsString()
	in, err := blob.DecodeQuantiles([]byte(s))
	if err != nil {
		return err
	}
	sk, err := a.sketch(g)
	if err != nil {
		return err
	}
	return sk.Merge(in)
}

func (a *quantilesAgg) inter(g int) (expr.Value, error) {
	sk, err := a.sketch(g)
	if err != nil {
		return expr.Value{}, err
	}
	b, err := sk.MarshalBinary()
	return expr.String(string(b)), err
}

func (a *quantilesAgg) final(g int) (expr.Value, error) {
	if a.spec.sketch {
		return a.inter(g)
	}
	sk, err := a.sketch(g)
	if err != nil {
		return expr.Value{}, err
	}
	q, err := sk.Quantile(a.spec.fraction) // NaN for an empty sketch, as in Druid
	return expr.Double(q), err
}
