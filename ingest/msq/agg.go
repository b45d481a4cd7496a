package msq

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"strata/aggregate"
	"strata/aggregate/blob"
	"strata/aggregate/quantiles"
	"strata/expr"
	"strata/sql"
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

// sqlAgg is every SQL aggregator: the state and its algorithms are the
// aggregate package's, shared with the query engine and the segment
// writer; sqlAgg reads the argument values (expr.Value, row by row) into it
// and renders its results as SQL values.
type sqlAgg struct {
	spec *aggSpec
	st   *aggregate.State
}

func newAggregator(a *aggSpec) aggregator {
	spec := &aggregate.Spec{Float32: true, LgK: a.lgK, TgtHllType: a.tgt, Size: a.size, K: a.k, MaxStringBytes: a.maxBytes}
	switch a.kind {
	case aggCount:
		spec.Kind, spec.Op = aggregate.KindLong, aggregate.OpCount
	case aggSum, aggMin, aggMax:
		spec.Kind, spec.Op = kindOf(a.outType), map[aggKind]string{aggSum: aggregate.OpSum, aggMin: aggregate.OpMin, aggMax: aggregate.OpMax}[a.kind]
	case aggEarliest, aggLatest, aggAny:
		spec.Kind, spec.Op = kindOf(a.inType), map[aggKind]string{aggEarliest: aggregate.OpFirst, aggLatest: aggregate.OpLast, aggAny: aggregate.OpAny}[a.kind]
	case aggHLL:
		spec.Kind, spec.Round = aggregate.KindHLL, true
	case aggTheta:
		spec.Kind, spec.Round = aggregate.KindTheta, true
	case aggQuantiles:
		spec.Kind = aggregate.KindQuantiles
	default:
		panic(fmt.Sprintf("msq: no aggregator for kind %d", a.kind)) // planAggregate only builds the kinds above
	}
	return &sqlAgg{spec: a, st: aggregate.New(spec, 0)}
}

// kindOf is the aggregate state kind of values of SQL type t.
func kindOf(t Type) string {
	switch t.Kind {
	case KindLong:
		return aggregate.KindLong
	case KindFloat:
		return aggregate.KindFloat
	case KindDouble:
		return aggregate.KindDouble
	}
	return aggregate.KindString
}

func (a *sqlAgg) grow() { a.st.Grow(1) }

func (a *sqlAgg) add(g int, args []expr.Value) error {
	st, gi := a.st, int32(g)
	switch a.spec.kind {
	case aggCount:
		if a.spec.countStar || !args[0].IsNull() {
			st.AddCount(aggregate.Rows{To: 1, G: gi})
		}
		return nil
	case aggSum, aggMin, aggMax:
		return a.merge(g, args[0])
	case aggEarliest, aggLatest, aggAny:
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
		v := castTo(args[0], a.spec.inType)
		if a.spec.kind == aggAny && v.IsNull() || !st.Offer(gi, t) {
			return nil
		}
		a.set(gi, v)
		return nil
	case aggQuantiles:
		if a.spec.mergeIn {
			return a.merge(g, args[0])
		}
		x, ok := args[0].AsDouble()
		if args[0].IsNull() || !ok {
			return nil
		}
		return st.AddDouble(gi, x)
	}
	// HLL, theta: raw values hashed as the storage writer's sketch builds
	// hash them, so sketches built here and there merge.
	if args[0].IsNull() {
		return nil
	}
	return a.update(gi, args[0])
}

// update adds a value (each element of an array) to group g's sketch.
func (a *sqlAgg) update(g int32, v expr.Value) error {
	switch v.Type() {
	case expr.TypeString:
		s, _ := v.AsString()
		return a.st.AddString(g, s)
	case expr.TypeLong:
		n, _ := v.AsLong()
		return a.st.AddLong(g, n)
	case expr.TypeDouble:
		f, _ := v.AsDouble()
		return a.st.AddDouble(g, f)
	}
	for _, e := range v.Elems() {
		if !e.IsNull() {
			if err := a.update(g, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// set sets group g's earliest/latest value (of the input type).
func (a *sqlAgg) set(g int32, v expr.Value) {
	switch {
	case v.IsNull():
		a.st.SetNull(g)
	case a.st.Kind == aggregate.KindLong:
		n, _ := v.AsLong()
		a.st.SetLong(g, n)
	case a.st.Kind == aggregate.KindString:
		s, _ := v.AsString()
		a.st.SetString(g, strings.Clone(aggregate.ChopUTF8(s, a.spec.maxBytes)))
	default:
		f, _ := v.AsDouble()
		a.st.SetDouble(g, f)
	}
}

func (a *sqlAgg) merge(g int, v expr.Value) error {
	st, gi := a.st, int32(g)
	if v.IsNull() {
		return nil
	}
	switch a.spec.kind {
	case aggCount:
		n, _ := v.AsLong()
		return st.AddLong(gi, n)
	case aggSum, aggMin, aggMax:
		switch st.Kind {
		case aggregate.KindLong:
			if x, ok := v.AsLong(); ok {
				return st.AddLong(gi, x)
			}
		case aggregate.KindString:
			if x, ok := v.AsString(); ok {
				return st.AddString(gi, strings.Clone(x))
			}
		default:
			if x, ok := v.AsDouble(); ok {
				return st.AddDouble(gi, x)
			}
		}
		return nil
	case aggEarliest, aggLatest, aggAny:
		s, _ := v.AsString()
		p, err := blob.DecodePair(a.spec.pairType(), []byte(s))
		if err != nil || a.spec.kind == aggAny && p.Null {
			return err
		}
		p.String = strings.Clone(p.String)
		st.OfferPair(gi, p)
		return nil
	}
	s, _ := v.AsString()
	return st.MergeIntermediate(gi, "", []byte(s))
}

func (a *sqlAgg) inter(g int) (expr.Value, error) {
	switch a.spec.kind {
	case aggCount, aggSum, aggMin, aggMax:
		return a.final(g)
	case aggEarliest, aggLatest, aggAny:
		if !a.st.HasValue(g) {
			return expr.Null, nil
		}
	}
	b, _, err := a.st.AppendIntermediate(nil, a.spec.pairType(), int32(g))
	return expr.String(string(b)), err
}

func (a *sqlAgg) final(g int) (expr.Value, error) {
	switch a.spec.kind {
	case aggHLL, aggTheta, aggQuantiles:
		if a.spec.sketch {
			return a.inter(g)
		}
	}
	if a.spec.kind == aggQuantiles {
		sk, err := a.st.QuantilesSketch(g)
		if err != nil {
			return expr.Value{}, err
		}
		q, err := sk.Quantile(a.spec.fraction) // NaN for an empty sketch, as in Druid
		return expr.Double(q), err
	}
	if a.spec.kind != aggCount && !a.st.IsSketch() && !a.st.HasValue(g) {
		if a.spec.kind == aggEarliest || a.spec.kind == aggLatest || a.spec.kind == aggAny {
			return expr.NullOf(a.spec.outType.exprType()), nil
		}
		switch a.st.Kind {
		case aggregate.KindLong:
			return expr.NullOf(expr.TypeLong), nil
		case aggregate.KindString:
			return expr.Null, nil
		}
		return expr.NullOf(expr.TypeDouble), nil
	}
	r, err := a.st.Result(g, true)
	if err != nil {
		return expr.Value{}, err
	}
	switch r.Kind {
	case aggregate.ResultLong:
		return expr.Long(r.Long), nil
	case aggregate.ResultDouble, aggregate.ResultFloat:
		return expr.Double(r.Double), nil
	case aggregate.ResultString:
		return expr.String(r.Str), nil
	}
	return expr.NullOf(a.spec.outType.exprType()), nil
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
