package sqlplan

import (
	"encoding/json"
	"strconv"
	"strings"

	"strata/sql"
	"strata/sqlexpr"
)

// SQL arrays: ARRAY_AGG and STRING_AGG/LISTAGG, planned as Druid plans
// them onto the native "expression" aggregator (an array_append or
// array_set_add fold), ARRAY[...] literals, and the array functions over
// their values.
//
// An array's SQL type is its element type followed by " ARRAY" (Calcite's
// spelling: "BIGINT ARRAY"), so a timestamp array stays a timestamp array.

const arraySuffix = " ARRAY"

func isArrayType(t string) bool { return strings.HasSuffix(t, arraySuffix) }

func arrayOf(elem string) string { return sqlexpr.ArrayOf(elem) }

func elemOf(t string) string { return strings.TrimSuffix(t, arraySuffix) }

// arrayNativeType is the native type of an array SQL type.
func arrayNativeType(t string) string {
	return "ARRAY<" + elemNative(elemOf(t)) + ">"
}

// elemNative is the expression element type values of a SQL type have.
func elemNative(t string) string {
	switch t {
	case tBigint, tTimestamp, tBoolean:
		return "LONG"
	case tDouble, tFloat:
		return "DOUBLE"
	}
	return "STRING"
}

var arrayAggNames = map[string]bool{"ARRAY_AGG": true, "STRING_AGG": true, "LISTAGG": true}

// addArrayAgg plans ARRAY_AGG(x [, maxSizeBytes]), STRING_AGG(x, sep [,
// maxSizeBytes]) and LISTAGG(x [, sep [, maxSizeBytes]]), with DISTINCT and
// FILTER, as Druid does: an expression aggregator folding x's values into
// an array (DISTINCT: a sorted set), STRING_AGG skipping nulls and joining
// the array in its finalize expression.
func (a *aggPlan) addArrayAgg(c *sql.FuncCall, name, fname string) error {
	str := fname != "ARRAY_AGG"
	min, max := 1, 2
	if fname == "STRING_AGG" {
		min, max = 2, 3
	} else if fname == "LISTAGG" {
		max = 3
	}
	if len(c.Args) < min || len(c.Args) > max {
		return invalid("%s", sql.AtPos(c, "Invalid number of arguments to function '"+fname+"'"))
	}
	v, err := a.base.expr(c.Args[0])
	if err != nil {
		return err
	}
	if isArrayType(v.typ) {
		return unsupported("%s", sql.AtPos(c, fname+" of an array is not supported"))
	}
	sep := ","
	sizeArg := 1
	if str {
		sizeArg = 2
		if len(c.Args) > 1 {
			s, ok := c.Args[1].(*sql.StringLit)
			if !ok {
				return unsupported("%s", sql.AtPos(c.Args[1], fname+" needs a literal separator"))
			}
			sep = s.Value
		}
	}
	size := int64(1024)
	if len(c.Args) > sizeArg {
		n, ok := c.Args[sizeArg].(*sql.NumberLit)
		var err error
		if ok {
			size, err = n.Int64()
		}
		if !ok || err != nil || size < 1 || size > 1<<30 {
			return invalid("%s", sql.AtPos(c.Args[sizeArg], fname+"'s maxSizeBytes must be a positive integer literal"))
		}
	}
	// A constant input is folded by Druid into a virtual column its native
	// engine cannot aggregate this way: such statements fail there, and
	// here say so.
	if v.isLit && (str || len(c.Args) > sizeArg) {
		return unsupported("%s", sql.AtPos(c, fname+" of a constant"+map[bool]string{true: "", false: " with a size limit"}[str]+" is not supported"))
	}
	col := v.col
	if col == "" {
		col = a.virtual(v)
	}
	elem := elemNative(v.typ)
	fold, combine := "array_append", "array_concat"
	if c.Distinct {
		fold, combine = "array_set_add", "array_set_add_all"
	}
	// Druid's initial values: a typed empty array for numbers, [] (whose
	// type the values give) for strings.
	init := "[]"
	if elem != "STRING" {
		init = "<" + elem + ">[]"
	}
	agg := map[string]any{
		"type": "expression", "name": name, "fields": []string{col}, "accumulatorIdentifier": "__acc",
		"initialValue": init, "isNullUnlessAggregated": true,
		"fold":         fold + `("__acc", ` + quoteIdent(col) + ")",
		"combine":      combine + `("__acc", ` + quoteIdent(name) + ")",
		"maxSizeBytes": size,
	}
	typ := arrayOf(v.typ)
	var filters []any
	if str {
		agg["finalize"] = "if(array_length(o) == 0, null, array_to_string(o, " + quoteString(sep) + "))"
		typ = tVarchar
		filters = append(filters, map[string]any{"type": "not", "field": map[string]any{"type": "null", "column": col}})
	}
	if c.Filter != nil {
		f, err := a.filter(c.Filter, a.base)
		if err != nil {
			return err
		}
		filters = append([]any{f}, filters...)
	}
	var out any = agg
	switch len(filters) {
	case 0:
	case 1:
		out = map[string]any{"type": "filtered", "name": name, "filter": filters[0], "aggregator": agg}
	default:
		out = map[string]any{"type": "filtered", "name": name, "filter": map[string]any{"type": "and", "fields": filters}, "aggregator": agg}
	}
	a.aggs = append(a.aggs, out)
	a.post[c.String()] = scopeCol{name: c.String(), native: name, typ: typ}
	return nil
}

// arrayFn is an array (or string) function: native name, argument bounds,
// and its result type from the arguments' types.
type arrayFn struct {
	native   string
	min, max int
	typ      func(args []ex) string
}

func fixed(t string) func([]ex) string { return func([]ex) string { return t } }

func argType(i int) func([]ex) string {
	return func(args []ex) string {
		if isArrayType(args[i].typ) {
			return args[i].typ
		}
		return arrayOf(args[i].typ)
	}
}

func elemAt(i int) func([]ex) string {
	return func(args []ex) string { return elemOf(args[i].typ) }
}

var arrayFns = map[string]arrayFn{
	"ARRAY_LENGTH": {"array_length", 1, 1, fixed(tBigint)},
	"ARRAY_OFFSET": {"array_offset", 2, 2, elemAt(0)}, "ARRAY_ORDINAL": {"array_ordinal", 2, 2, elemAt(0)},
	"ARRAY_CONTAINS": {"array_contains", 2, 2, fixed(tBoolean)}, "ARRAY_OVERLAP": {"array_overlap", 2, 2, fixed(tBoolean)},
	"ARRAY_OFFSET_OF": {"array_offset_of", 2, 2, fixed(tBigint)}, "ARRAY_ORDINAL_OF": {"array_ordinal_of", 2, 2, fixed(tBigint)},
	"ARRAY_TO_STRING": {"array_to_string", 2, 2, fixed(tVarchar)},
	"ARRAY_PREPEND":   {"array_prepend", 2, 2, argType(1)}, "ARRAY_APPEND": {"array_append", 2, 2, argType(0)},
	"ARRAY_CONCAT": {"array_concat", 2, 2, argType(0)}, "ARRAY_SLICE": {"array_slice", 2, 3, argType(0)},
	"STRING_TO_ARRAY": {"string_to_array", 2, 2, fixed(arrayOf(tVarchar))},
	"CONTAINS_STRING": {"contains_string", 2, 2, fixed(tBoolean)}, "ICONTAINS_STRING": {"icontains_string", 2, 2, fixed(tBoolean)},
	"REGEXP_EXTRACT": {"regexp_extract", 2, 3, fixed(tVarchar)}, "REGEXP_LIKE": {"regexp_like", 2, 2, fixed(tBoolean)},
	"STRING_FORMAT": {"format", 1, -1, fixed(tVarchar)}, "PARSE_LONG": {"parse_long", 1, 2, fixed(tBigint)},
}

// arrayCall translates the functions of arrayFns; ok is false for others.
func (t *translator) arrayCall(name string, args []ex, at sql.Node) (ex, bool, error) {
	f, ok := arrayFns[name]
	if !ok {
		return ex{}, false, nil
	}
	if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
		return ex{}, true, invalid("%s", sql.AtPos(at, "Invalid number of arguments to function '"+name+"'"))
	}
	srcs := make([]string, len(args))
	for i, a := range args {
		srcs[i] = a.src
	}
	return ex{src: f.native + "(" + strings.Join(srcs, ", ") + ")", typ: f.typ(args)}, true, nil
}

// hasArrayLit reports whether a select list holds an ARRAY[...] literal: a
// SELECT without FROM over one is planned as post-aggregation over the
// one-row table, whose expression results may be arrays.
func hasArrayLit(sel *sql.Select) bool {
	found := false
	for _, it := range sel.Columns {
		sql.Walk(it.Expr, func(n sql.Node) bool {
			if _, ok := n.(*sql.ArrayLit); ok {
				found = true
			}
			return !found
		})
	}
	return found
}

// mergeArraySubquery folds a SELECT over an aggregating subquery that makes
// arrays (ARRAY_AGG) into the subquery, as Calcite folds a projection and a
// filter over an aggregate into it: the outer filter becomes the
// subquery's HAVING, and an outer projection (when the outer SELECT does not
// aggregate) its select list. Array values then never pass through a
// subquery's result table, whose columns hold scalars and multi-value
// strings only. It returns the SELECT to plan, or nil to plan sel as it is.
func mergeArraySubquery(q *sql.Query, sel *sql.Select) *sql.Select {
	dt, ok := sel.From.(*sql.DerivedTable)
	if !ok || dt.Lateral || len(dt.ColumnAliases) > 0 || len(dt.Query.With) > 0 || len(dt.Query.OrderBy) > 0 ||
		dt.Query.Limit != nil || dt.Query.Offset != nil || len(sel.Windows) > 0 {
		return nil
	}
	in, ok := dt.Query.Body.(*sql.Select)
	if !ok || in.Distinct || len(in.Windows) > 0 || !hasArrayAgg(in) {
		return nil
	}
	if len(in.GroupBy) == 0 && in.Having == nil && !hasAggregate(in, dt.Query) {
		return nil
	}
	// The subquery's columns by output name.
	cols := map[string]sql.Expr{}
	for i, it := range in.Columns {
		if _, star := it.Expr.(*sql.StarExpr); star {
			return nil
		}
		switch {
		case it.Alias != nil:
			cols[it.Alias.Name] = it.Expr
		case isColumnRef(it.Expr):
			cols[it.Expr.(*sql.ColumnRef).Column().Name] = it.Expr
		default:
			cols["EXPR$"+strconv.Itoa(i)] = it.Expr
		}
	}
	quals := tableQuals(sel.From)
	merged := *in
	if sel.Where != nil {
		w, ok := substitute(sel.Where, cols, quals)
		if !ok {
			return nil
		}
		if merged.Having == nil {
			merged.Having = w
		} else {
			merged.Having = &sql.BinaryExpr{Op: sql.OpAnd, Left: merged.Having, Right: w}
		}
	}
	aggregates := sel.Distinct || len(sel.GroupBy) > 0 || sel.Having != nil || hasAggregate(sel, q)
	if aggregates || len(q.OrderBy) > 0 {
		if sel.Where == nil {
			return nil
		}
		out := *sel
		out.Where = nil
		out.From = &sql.DerivedTable{Query: &sql.Query{Body: &merged}, Alias: dt.Alias}
		return &out
	}
	merged.Columns = nil
	for _, it := range sel.Columns {
		if st, star := it.Expr.(*sql.StarExpr); star {
			if len(st.Qualifier) > 0 {
				return nil
			}
			// * is the subquery's own select list.
			merged.Columns = append(merged.Columns, in.Columns...)
			continue
		}
		e, ok := substitute(it.Expr, cols, quals)
		if !ok {
			return nil
		}
		alias := it.Alias
		if alias == nil {
			if c, isCol := it.Expr.(*sql.ColumnRef); isCol {
				id := c.Column()
				alias = &id
			}
		}
		merged.Columns = append(merged.Columns, &sql.SelectItem{Expr: e, Alias: alias})
	}
	return &merged
}

func isColumnRef(e sql.Expr) bool {
	_, ok := e.(*sql.ColumnRef)
	return ok
}

func hasArrayAgg(sel *sql.Select) bool {
	found := false
	for _, it := range sel.Columns {
		sql.Walk(it.Expr, func(n sql.Node) bool {
			if f, ok := n.(*sql.FuncCall); ok && strings.EqualFold(f.Name.Name, "ARRAY_AGG") {
				found = true
			}
			return !found
		})
	}
	return found
}

// substitute returns e with each reference to a column of cols replaced by
// its expression; ok is false when e holds a form it does not rewrite (it
// is then planned as it is).
func substitute(e sql.Expr, cols map[string]sql.Expr, quals []string) (sql.Expr, bool) {
	ok := true
	var sub func(e sql.Expr) sql.Expr
	list := func(l []sql.Expr) []sql.Expr {
		out := make([]sql.Expr, len(l))
		for i, x := range l {
			out[i] = sub(x)
		}
		return out
	}
	sub = func(e sql.Expr) sql.Expr {
		if e == nil || !ok {
			return e
		}
		switch x := e.(type) {
		case *sql.ColumnRef:
			if len(x.Parts) > 2 || (len(x.Parts) == 2 && !contains(quals, x.Parts[0].Name)) {
				ok = false
				return e
			}
			r, found := cols[x.Column().Name]
			if !found {
				ok = false
				return e
			}
			return r
		case *sql.NumberLit, *sql.StringLit, *sql.BoolLit, *sql.NullLit, *sql.TypedLit, *sql.IntervalLit, *sql.Param:
			return e
		case *sql.BinaryExpr:
			y := *x
			y.Left, y.Right = sub(x.Left), sub(x.Right)
			return &y
		case *sql.UnaryExpr:
			y := *x
			y.X = sub(x.X)
			return &y
		case *sql.IsExpr:
			y := *x
			y.X = sub(x.X)
			return &y
		case *sql.BetweenExpr:
			y := *x
			y.X, y.Low, y.High = sub(x.X), sub(x.Low), sub(x.High)
			return &y
		case *sql.InExpr:
			if x.Query != nil {
				ok = false
				return e
			}
			y := *x
			y.X, y.List = sub(x.X), list(x.List)
			return &y
		case *sql.LikeExpr:
			y := *x
			y.X, y.Pattern, y.Escape = sub(x.X), sub(x.Pattern), sub(x.Escape)
			return &y
		case *sql.CastExpr:
			y := *x
			y.X = sub(x.X)
			return &y
		case *sql.FuncCall:
			if x.Over != nil || x.Filter != nil || isAggregate(x) {
				ok = false
				return e
			}
			y := *x
			y.Args = list(x.Args)
			return &y
		case *sql.ArrayLit:
			y := *x
			y.Elems = list(x.Elems)
			return &y
		case *sql.TrimExpr:
			y := *x
			y.X, y.Chars = sub(x.X), sub(x.Chars)
			return &y
		case *sql.SubstringExpr:
			y := *x
			y.X, y.From, y.For = sub(x.X), sub(x.From), sub(x.For)
			return &y
		case *sql.PositionExpr:
			y := *x
			y.Sub, y.Str, y.From = sub(x.Sub), sub(x.Str), sub(x.From)
			return &y
		}
		ok = false
		return e
	}
	out := sub(e)
	return out, ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// arrayValue is an array result: the JSON array, or its JSON text when
// sqlStringifyArrays is on (Druid's default).
func (p *Planned) arrayValue(v any) (any, error) {
	if !p.stringifyArrays() {
		return v, nil
	}
	bs, err := json.Marshal(v)
	return string(bs), err
}

// neverNull reports whether e's SQL type is NOT NULL as Druid's planner
// (Calcite) types it: literals, COUNT, ARRAY_AGG (a non-null array of
// nullable elements), ARRAY_LENGTH, ARRAY_ORDINAL_OF and ARRAY_TO_STRING
// (declared with non-null return types), ARRAY_SLICE of a non-null array,
// ARRAY[...], and the standard functions (and ARRAY_CONTAINS, ARRAY_OVERLAP:
// BOOLEAN_NULLABLE) whose arguments are all non-null.
// Calcite folds "x IS NULL" to FALSE for such x before anything runs, even
// where the value computed at run time is null (ARRAY_ORDINAL_OF of no
// match), and Druid's answers follow; anything not known here is nullable.
func neverNull(e sql.Expr) bool {
	switch x := e.(type) {
	case *sql.NumberLit, *sql.StringLit, *sql.BoolLit, *sql.TypedLit, *sql.ArrayLit:
		return true
	case *sql.FuncCall:
		if x.Over != nil || x.Name.Quoted {
			return false
		}
		switch strings.ToUpper(x.Name.Name) {
		case "COUNT", "ARRAY_AGG", "ARRAY_LENGTH", "ARRAY_ORDINAL_OF", "ARRAY_TO_STRING":
			return true
		case "ARRAY_SLICE":
			return len(x.Args) > 0 && neverNull(x.Args[0])
		case "LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "UPPER", "LOWER", "ARRAY_CONTAINS", "ARRAY_OVERLAP":
			for _, a := range x.Args {
				if !neverNull(a) {
					return false
				}
			}
			return len(x.Args) > 0
		}
	case *sql.BinaryExpr:
		switch x.Op {
		case sql.OpAdd, sql.OpSub, sql.OpMul, sql.OpDiv, sql.OpMod, sql.OpConcat:
			return neverNull(x.Left) && neverNull(x.Right)
		}
	}
	return false
}

// notNullCheck is "x IS [NOT] NULL" of a never-null x: a constant.
func notNullCheck(not bool) ex {
	if not {
		return ex{src: "1", typ: tBoolean, lit: int64(1), isLit: true}
	}
	return ex{src: "0", typ: tBoolean, lit: int64(0), isLit: true}
}

// subqueryArrayError refuses to read an array column of a subquery that was
// not folded into it (mergeArraySubquery): the subquery's result table
// would hand it over as a multi-value string, its nulls and element types
// lost, so the answer could be wrong.
func subqueryArrayError(ref *sql.ColumnRef) error {
	return unsupported("%s", sql.AtPos(ref, "Reading the ARRAY column '"+ref.Column().Name+"' of a subquery is not supported here (only a filter or projection over an ARRAY_AGG subquery is)"))
}

// scanArrayError refuses an array-valued expression in a query that does
// not aggregate: a scan's virtual columns hold strings, so the array would
// come back as its string form.
func scanArrayError(e sql.Expr) error {
	return unsupported("%s", sql.AtPos(e, "ARRAY-valued expressions are supported only in queries that aggregate (or have no FROM)"))
}
