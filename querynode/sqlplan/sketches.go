package sqlplan

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"strata/sql"
)

// SQL types of the sketches the DS_* aggregates return (the column types
// Druid's SQL layer gives them).
const (
	tHLLSketch       = "COMPLEX<HLLSketch>"
	tThetaSketch     = "COMPLEX<thetaSketch>"
	tQuantilesSketch = "COMPLEX<quantilesDoublesSketch>"
)

// aggBuilder plans one aggregate call onto native aggregators (and
// post-aggregators) under the native name given, registering the call's
// result in a.post. Files that add aggregate functions register theirs in
// aggBuilders; addAggregate falls back to it.
type aggBuilder func(a *aggPlan, c *sql.FuncCall, name string) error

var aggBuilders = map[string]aggBuilder{}

// postFn plans a function over aggregates (a sketch's estimate, quantile,
// union...) onto a native post-aggregator; args are the translated
// arguments. Registered in postFns; translator.call falls back to it.
type postFn func(t *translator, x *sql.FuncCall, args []ex) (ex, error)

var postFns = map[string]postFn{}

func init() {
	for _, n := range []string{"APPROX_QUANTILE_DS", "APPROX_QUANTILE"} {
		aggBuilders[n] = approxQuantile
	}
	aggBuilders["DS_QUANTILES_SKETCH"] = dsQuantilesSketch
	aggBuilders["DS_HLL"] = dsHLL
	aggBuilders["DS_THETA"] = dsTheta
	for _, n := range []string{"DS_GET_QUANTILE", "DS_GET_QUANTILES", "DS_RANK", "DS_CDF", "DS_HISTOGRAM", "DS_QUANTILE_SUMMARY"} {
		postFns[n] = quantilesPost
	}
	postFns["HLL_SKETCH_ESTIMATE"] = hllEstimate
	postFns["THETA_SKETCH_ESTIMATE"] = thetaEstimate
	postFns["HLL_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS"] = hllBounds
	postFns["HLL_SKETCH_TO_STRING"] = hllToString
	postFns["HLL_SKETCH_UNION"] = hllUnion
	postFns["THETA_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS"] = thetaBounds
	for _, n := range []string{"THETA_SKETCH_UNION", "THETA_SKETCH_INTERSECT", "THETA_SKETCH_NOT"} {
		postFns[n] = thetaSetOp
	}
}

// argCount checks an aggregate's or function's number of arguments.
func argCount(c *sql.FuncCall, min, max int) error {
	if len(c.Args) < min || len(c.Args) > max {
		return invalid("%s", sql.AtPos(c, "Invalid number of arguments to function '"+strings.ToUpper(c.Name.Name)+"'"))
	}
	return nil
}

// numberArg reads a numeric literal argument (a parameter counts).
func (t *translator) numberArg(c *sql.FuncCall, i int, what string) (float64, error) {
	v, err := t.expr(c.Args[i])
	if err != nil {
		return 0, err
	}
	switch n := v.lit.(type) {
	case int64:
		if v.isLit && v.typ != tBoolean {
			return float64(n), nil
		}
	case float64:
		if v.isLit {
			return n, nil
		}
	}
	return 0, invalid("%s", sql.AtPos(c.Args[i], strings.ToUpper(c.Name.Name)+"'s "+what+" must be a numeric literal"))
}

// intArg reads an integer literal argument in [lo, hi]; pow2 asks for a
// power of two.
func (t *translator) intArg(c *sql.FuncCall, i int, what string, lo, hi int64, pow2 bool) (int64, error) {
	f, err := t.numberArg(c, i, what)
	if err != nil {
		return 0, err
	}
	n := int64(f)
	if float64(n) != f || n < lo || n > hi || (pow2 && bits.OnesCount64(uint64(n)) != 1) {
		kind := "an integer"
		if pow2 {
			kind = "a power of 2"
		}
		return 0, invalid("%s", sql.AtPos(c.Args[i], strings.ToUpper(c.Name.Name)+"'s "+what+" must be "+kind+
			" in ["+strconv.FormatInt(lo, 10)+", "+strconv.FormatInt(hi, 10)+"], got "+strconv.FormatFloat(f, 'g', -1, 64)))
	}
	return n, nil
}

// fraction reads a fraction literal argument, in [0, 1].
func (t *translator) fraction(c *sql.FuncCall, i int) (float64, error) {
	f, err := t.numberArg(c, i, "fraction")
	if err != nil {
		return 0, err
	}
	if !(f >= 0 && f <= 1) {
		return 0, invalid("%s", sql.AtPos(c.Args[i], strings.ToUpper(c.Name.Name)+"'s fraction must be in [0, 1], got "+strconv.FormatFloat(f, 'g', -1, 64)))
	}
	return f, nil
}

// sketchInput is the input column of a sketch aggregate: a column (a
// number, a string or a stored sketch of the kind given) or an expression
// as a virtual column. Numbers only when numericOnly (quantiles).
func (a *aggPlan) sketchInput(c *sql.FuncCall, sketchType string, numericOnly bool) (string, error) {
	v, err := a.base.expr(c.Args[0])
	if err != nil {
		return "", err
	}
	switch {
	case v.typ == sketchType, numeric(v.typ), v.typ == tTimestamp:
	case v.typ == tVarchar && !numericOnly:
	default:
		return "", invalid("%s", sql.AtPos(c, "Cannot apply '"+strings.ToUpper(c.Name.Name)+"' to arguments of type '"+
			strings.ToUpper(c.Name.Name)+"(<"+v.typ+">)'"))
	}
	if v.col != "" {
		return v.col, nil
	}
	return a.virtual(v), nil
}

// addAgg appends one native aggregator for call c (filtered by its FILTER
// clause) and registers the call's value as native column name of SQL
// type typ.
func (a *aggPlan) addAgg(c *sql.FuncCall, agg map[string]any, name, typ string) error {
	if c.Filter != nil {
		f, err := a.filter(c.Filter, a.base)
		if err != nil {
			return err
		}
		agg = map[string]any{"type": "filtered", "name": agg["name"], "filter": f, "aggregator": agg}
	}
	a.aggs = append(a.aggs, agg)
	a.post[c.String()] = scopeCol{name: c.String(), native: name, typ: typ}
	return nil
}

// quantilesAgg is the quantilesDoublesSketch aggregator of APPROX_QUANTILE*
// and DS_QUANTILES_SKETCH: its input and k (argument kArg when given).
func (a *aggPlan) quantilesAgg(c *sql.FuncCall, name string, kArg int) (map[string]any, error) {
	col, err := a.sketchInput(c, tQuantilesSketch, true)
	if err != nil {
		return nil, err
	}
	agg := map[string]any{"type": "quantilesDoublesSketch", "name": name, "fieldName": col, "k": int64(128)}
	if kArg < len(c.Args) {
		k, err := a.base.intArg(c, kArg, "k", 2, 32768, true)
		if err != nil {
			return nil, err
		}
		agg["k"] = k
	}
	return agg, nil
}

// approxQuantile plans APPROX_QUANTILE_DS(expr, fraction[, k]) as Druid
// does: a quantilesDoublesSketch aggregator and a ToQuantile
// post-aggregator. APPROX_QUANTILE(expr, fraction[, resolution]) is
// Druid's deprecated approximate-histogram form; it is planned onto the
// same sketch (its resolution is checked and not used), since this engine
// has no approximate histogram: an approximation of the same quantile,
// within the sketch's documented error.
func approxQuantile(a *aggPlan, c *sql.FuncCall, name string) error {
	if err := argCount(c, 2, 3); err != nil {
		return err
	}
	kArg := 2
	if strings.EqualFold(c.Name.Name, "APPROX_QUANTILE") {
		if len(c.Args) == 3 {
			if _, err := a.base.intArg(c, 2, "resolution", 1, 1<<20, false); err != nil {
				return err
			}
		}
		kArg = 3
	}
	frac, err := a.base.fraction(c, 1)
	if err != nil {
		return err
	}
	agg, err := a.quantilesAgg(c, name+":agg", kArg)
	if err != nil {
		return err
	}
	if err := a.addAgg(c, agg, name, tDouble); err != nil {
		return err
	}
	a.postAggs = append(a.postAggs, map[string]any{"type": "quantilesDoublesSketchToQuantile", "name": name,
		"field": map[string]any{"type": "fieldAccess", "fieldName": name + ":agg"}, "fraction": frac})
	return nil
}

// dsQuantilesSketch plans DS_QUANTILES_SKETCH(expr[, k]): the sketch
// itself (shouldFinalize false), for the DS_* functions or as a result.
func dsQuantilesSketch(a *aggPlan, c *sql.FuncCall, name string) error {
	if err := argCount(c, 1, 2); err != nil {
		return err
	}
	agg, err := a.quantilesAgg(c, name, 1)
	if err != nil {
		return err
	}
	agg["shouldFinalize"] = false
	return a.addAgg(c, agg, name, tQuantilesSketch)
}

// dsHLL plans DS_HLL(expr[, lgK[, tgtHllType]]): an HLL sketch of the
// values (or the union of stored sketches), answered as the sketch.
func dsHLL(a *aggPlan, c *sql.FuncCall, name string) error {
	if err := argCount(c, 1, 3); err != nil {
		return err
	}
	col, err := a.sketchInput(c, tHLLSketch, false)
	if err != nil {
		return err
	}
	agg := map[string]any{"type": "HLLSketchBuild", "name": name, "fieldName": col, "lgK": int64(12),
		"tgtHllType": "HLL_4", "round": true, "shouldFinalize": false}
	if in, _ := a.base.expr(c.Args[0]); in.typ == tHLLSketch {
		agg["type"] = "HLLSketchMerge"
	}
	if len(c.Args) > 1 {
		if agg["lgK"], err = a.base.intArg(c, 1, "lgK", 4, 21, false); err != nil {
			return err
		}
	}
	if len(c.Args) > 2 {
		s, ok := c.Args[2].(*sql.StringLit)
		if !ok || (s.Value != "HLL_4" && s.Value != "HLL_6" && s.Value != "HLL_8") {
			return invalid("%s", sql.AtPos(c.Args[2], "DS_HLL's tgtHllType must be 'HLL_4', 'HLL_6' or 'HLL_8'"))
		}
		agg["tgtHllType"] = s.Value
	}
	return a.addAgg(c, agg, name, tHLLSketch)
}

// dsTheta plans DS_THETA(expr[, size]): a theta sketch of the values (or
// the union of stored sketches), answered as the sketch.
func dsTheta(a *aggPlan, c *sql.FuncCall, name string) error {
	if err := argCount(c, 1, 2); err != nil {
		return err
	}
	col, err := a.sketchInput(c, tThetaSketch, false)
	if err != nil {
		return err
	}
	agg := map[string]any{"type": "thetaSketch", "name": name, "fieldName": col, "size": int64(16384), "shouldFinalize": false}
	if in, _ := a.base.expr(c.Args[0]); in.typ == tThetaSketch {
		agg["isInputThetaSketch"] = true
	}
	if len(c.Args) > 1 {
		if agg["size"], err = a.base.intArg(c, 1, "size", 16, 1<<26, true); err != nil {
			return err
		}
	}
	return a.addAgg(c, agg, name, tThetaSketch)
}

// sketchField is the fieldAccess of a post-aggregator's sketch argument:
// an aggregate (or post-aggregator) of the query of SQL type want.
func (t *translator) sketchField(x *sql.FuncCall, arg ex, want string) (map[string]any, error) {
	if x.Filter != nil || x.Distinct {
		return nil, invalid("%s", sql.AtPos(x, strings.ToUpper(x.Name.Name)+" is not an aggregate function: FILTER and DISTINCT go on the aggregate it reads"))
	}
	if t.agg == nil {
		if agg := sketchAggOf[arg.typ]; arg.col != "" && agg != "" {
			return nil, storedSketchRowByRow(x, arg.col, agg)
		}
		return nil, unsupported("%s", sql.AtPos(x, strings.ToUpper(x.Name.Name)+" is supported only over a sketch aggregate of the same query"))
	}
	if arg.col == "" || arg.typ != want {
		return nil, invalid("%s", sql.AtPos(x, "Cannot apply '"+strings.ToUpper(x.Name.Name)+"' to arguments of type '"+
			strings.ToUpper(x.Name.Name)+"(<"+arg.typ+">)': its first argument must be a "+want+" aggregate"))
	}
	return map[string]any{"type": "fieldAccess", "fieldName": arg.col}, nil
}

// addPost appends the native post-aggregator call x plans to and returns
// its column; x is registered as computed, so the select list, HAVING and
// ORDER BY share one post-aggregator.
func (t *translator) addPost(x *sql.FuncCall, pa map[string]any, typ string) ex {
	name := "p" + strconv.Itoa(t.agg.np)
	t.agg.np++
	pa["name"] = name
	t.agg.postAggs = append(t.agg.postAggs, pa)
	t.post[x.String()] = scopeCol{name: x.String(), native: name, typ: typ}
	return ex{src: quoteIdent(name), typ: typ, col: name}
}

// quantilesPost plans the DS_* functions over a quantiles sketch onto the
// quantilesDoublesSketchTo* post-aggregators.
func quantilesPost(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	name := strings.ToUpper(x.Name.Name)
	min, max := 2, 2
	switch name {
	case "DS_QUANTILE_SUMMARY":
		min = 1
		max = 1
	case "DS_GET_QUANTILES", "DS_CDF", "DS_HISTOGRAM":
		max = math.MaxInt
	}
	if err := argCount(x, min, max); err != nil {
		return ex{}, err
	}
	field, err := t.sketchField(x, args[0], tQuantilesSketch)
	if err != nil {
		return ex{}, err
	}
	pa := map[string]any{"field": field}
	numbers := func(what string) ([]float64, error) {
		var out []float64
		for i := 1; i < len(x.Args); i++ {
			var f float64
			var err error
			if what == "fraction" {
				f, err = t.fraction(x, i)
			} else {
				f, err = t.numberArg(x, i, what)
			}
			if err != nil {
				return nil, err
			}
			if i > 1 && what == "split point" && !(f > out[len(out)-1]) {
				return nil, invalid("%s", sql.AtPos(x.Args[i], name+"'s split points must be increasing"))
			}
			out = append(out, f)
		}
		return out, nil
	}
	switch name {
	case "DS_GET_QUANTILE":
		f, err := t.fraction(x, 1)
		if err != nil {
			return ex{}, err
		}
		pa["type"], pa["fraction"] = "quantilesDoublesSketchToQuantile", f
		return t.addPost(x, pa, tDouble), nil
	case "DS_GET_QUANTILES":
		fs, err := numbers("fraction")
		if err != nil {
			return ex{}, err
		}
		pa["type"], pa["fractions"] = "quantilesDoublesSketchToQuantiles", fs
	case "DS_RANK":
		v, err := t.numberArg(x, 1, "value")
		if err != nil {
			return ex{}, err
		}
		pa["type"], pa["value"] = "quantilesDoublesSketchToRank", v
		return t.addPost(x, pa, tDouble), nil
	case "DS_CDF", "DS_HISTOGRAM":
		sp, err := numbers("split point")
		if err != nil {
			return ex{}, err
		}
		pa["type"], pa["splitPoints"] = "quantilesDoublesSketchToCDF", sp
		if name == "DS_HISTOGRAM" {
			pa["type"] = "quantilesDoublesSketchToHistogram"
		}
	case "DS_QUANTILE_SUMMARY":
		pa["type"] = "quantilesDoublesSketchToString"
		return t.addPost(x, pa, tVarchar), nil
	}
	return t.addPost(x, pa, tOther), nil
}

// hllEstimate plans HLL_SKETCH_ESTIMATE(sketch[, round]).
func hllEstimate(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	if err := argCount(x, 1, 2); err != nil {
		return ex{}, err
	}
	field, err := t.sketchField(x, args[0], tHLLSketch)
	if err != nil {
		return ex{}, err
	}
	pa := map[string]any{"type": "HLLSketchEstimate", "field": field}
	if len(x.Args) == 2 {
		b, ok := x.Args[1].(*sql.BoolLit)
		if !ok {
			return ex{}, invalid("%s", sql.AtPos(x.Args[1], "HLL_SKETCH_ESTIMATE's round must be TRUE or FALSE"))
		}
		pa["round"] = b.Value
	}
	return t.addPost(x, pa, tDouble), nil
}

// thetaEstimate plans THETA_SKETCH_ESTIMATE(sketch).
func thetaEstimate(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	if err := argCount(x, 1, 1); err != nil {
		return ex{}, err
	}
	field, err := t.sketchField(x, args[0], tThetaSketch)
	if err != nil {
		return ex{}, err
	}
	return t.addPost(x, map[string]any{"type": "thetaSketchEstimate", "field": field}, tDouble), nil
}

// stdDevArg reads an optional number of standard deviations (1, 2 or 3).
func (t *translator) stdDevArg(x *sql.FuncCall, i int) (int64, error) {
	if i >= len(x.Args) {
		return 1, nil
	}
	return t.intArg(x, i, "number of standard deviations", 1, 3, false)
}

// hllBounds plans HLL_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS(sketch[,
// numStdDev]): [estimate, lower bound, upper bound].
func hllBounds(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	if err := argCount(x, 1, 2); err != nil {
		return ex{}, err
	}
	field, err := t.sketchField(x, args[0], tHLLSketch)
	if err != nil {
		return ex{}, err
	}
	n, err := t.stdDevArg(x, 1)
	if err != nil {
		return ex{}, err
	}
	return t.addPost(x, map[string]any{"type": "HLLSketchEstimateWithBounds", "field": field, "numStdDev": n}, tOther), nil
}

// hllToString plans HLL_SKETCH_TO_STRING(sketch): the sketch's summary.
func hllToString(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	if err := argCount(x, 1, 1); err != nil {
		return ex{}, err
	}
	field, err := t.sketchField(x, args[0], tHLLSketch)
	if err != nil {
		return ex{}, err
	}
	return t.addPost(x, map[string]any{"type": "HLLSketchToString", "field": field}, tVarchar), nil
}

// sketchFields reads the sketch arguments of a union or set operation
// from argument from on.
func (t *translator) sketchFields(x *sql.FuncCall, args []ex, from int, typ string) ([]any, error) {
	if from >= len(args) {
		return nil, invalid("%s", sql.AtPos(x, strings.ToUpper(x.Name.Name)+" needs a sketch argument"))
	}
	var fields []any
	for _, a := range args[from:] {
		f, err := t.sketchField(x, a, typ)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// hllUnion plans HLL_SKETCH_UNION([lgK, tgtHllType,] sketch, ...).
func hllUnion(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	pa := map[string]any{"type": "HLLSketchUnion", "lgK": int64(12), "tgtHllType": "HLL_4"}
	from := 0
	if len(args) > 0 && args[0].isLit {
		if len(args) < 2 || !args[1].isLit {
			return ex{}, invalid("%s", sql.AtPos(x, "HLL_SKETCH_UNION takes lgK and tgtHllType together before its sketches"))
		}
		k, err := t.intArg(x, 0, "lgK", 4, 21, false)
		if err != nil {
			return ex{}, err
		}
		tgt, _ := args[1].lit.(string)
		if tgt != "HLL_4" && tgt != "HLL_6" && tgt != "HLL_8" {
			return ex{}, invalid("%s", sql.AtPos(x.Args[1], "HLL_SKETCH_UNION's tgtHllType must be 'HLL_4', 'HLL_6' or 'HLL_8'"))
		}
		pa["lgK"], pa["tgtHllType"], from = k, tgt, 2
	}
	fields, err := t.sketchFields(x, args, from, tHLLSketch)
	if err != nil {
		return ex{}, err
	}
	pa["fields"] = fields
	return t.addPost(x, pa, tHLLSketch), nil
}

// thetaBounds plans THETA_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS(sketch,
// errorBoundsStdDev): Druid's {estimate, highBound, lowBound, numStdDev}.
func thetaBounds(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	if err := argCount(x, 2, 2); err != nil {
		return ex{}, err
	}
	field, err := t.sketchField(x, args[0], tThetaSketch)
	if err != nil {
		return ex{}, err
	}
	n, err := t.stdDevArg(x, 1)
	if err != nil {
		return ex{}, err
	}
	return t.addPost(x, map[string]any{"type": "thetaSketchEstimate", "field": field, "errorBoundsStdDev": n}, tOther), nil
}

// thetaSetOp plans THETA_SKETCH_UNION/INTERSECT/NOT([size,] sketch, ...)
// onto thetaSketchSetOp; NOT is the first sketch less the others.
func thetaSetOp(t *translator, x *sql.FuncCall, args []ex) (ex, error) {
	name := strings.ToUpper(x.Name.Name)
	pa := map[string]any{"type": "thetaSketchSetOp", "func": strings.TrimPrefix(name, "THETA_SKETCH_"), "size": int64(16384)}
	from := 0
	if len(args) > 0 && args[0].isLit {
		size, err := t.intArg(x, 0, "size", 16, 1<<26, true)
		if err != nil {
			return ex{}, err
		}
		pa["size"], from = size, 1
	}
	fields, err := t.sketchFields(x, args, from, tThetaSketch)
	if err != nil {
		return ex{}, err
	}
	pa["fields"] = fields
	return t.addPost(x, pa, tThetaSketch), nil
}

// distinctSketchArgs reads the optional arguments of
// APPROX_COUNT_DISTINCT_DS_HLL(expr[, lgK[, tgtHllType]]) and
// APPROX_COUNT_DISTINCT_DS_THETA(expr[, size]) into their aggregator; the
// other APPROX_COUNT_DISTINCT forms take none.
func (a *aggPlan) distinctSketchArgs(c *sql.FuncCall, fname string, agg map[string]any) error {
	if len(c.Args) == 1 {
		return nil
	}
	var err error
	switch {
	case fname == "APPROX_COUNT_DISTINCT_DS_HLL":
		if agg["lgK"], err = a.base.intArg(c, 1, "lgK", 4, 21, false); err != nil {
			return err
		}
		if len(c.Args) == 3 {
			s, ok := c.Args[2].(*sql.StringLit)
			if !ok || (s.Value != "HLL_4" && s.Value != "HLL_6" && s.Value != "HLL_8") {
				return invalid("%s", sql.AtPos(c.Args[2], fname+"'s tgtHllType must be 'HLL_4', 'HLL_6' or 'HLL_8'"))
			}
			agg["tgtHllType"] = s.Value
		}
		return nil
	case fname == "APPROX_COUNT_DISTINCT_DS_THETA" && len(c.Args) == 2:
		agg["size"], err = a.base.intArg(c, 1, "size", 16, 1<<26, true)
		return err
	}
	return invalid("%s", sql.AtPos(c, "Invalid number of arguments to function '"+fname+"'"))
}
