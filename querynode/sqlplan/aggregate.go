package sqlplan

import (
	"encoding/json"
	"strconv"
	"strings"

	"strata/sql"
	"strata/sqlexpr"
)

var aggregateNames = map[string]bool{
	"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true,
	"APPROX_COUNT_DISTINCT": true, "APPROX_COUNT_DISTINCT_BUILTIN": true,
	"APPROX_COUNT_DISTINCT_DS_HLL": true, "APPROX_COUNT_DISTINCT_DS_THETA": true,
	"EARLIEST": true, "LATEST": true, "EARLIEST_BY": true, "LATEST_BY": true, "ANY_VALUE": true,
	// Known to Druid, not planned here: they fail as unsupported rather
	// than as unknown functions.
	"APPROX_QUANTILE": true, "APPROX_QUANTILE_DS": true, "ARRAY_AGG": true, "STRING_AGG": true,
	"LISTAGG": true, "BIT_AND": true, "BIT_OR": true, "BIT_XOR": true, "GROUPING": true,
	"DS_HLL": true, "DS_THETA": true, "DS_QUANTILES_SKETCH": true, "STDDEV": true, "VARIANCE": true,
	"VAR_POP": true, "VAR_SAMP": true, "STDDEV_POP": true, "STDDEV_SAMP": true,
}

func isAggregate(f *sql.FuncCall) bool {
	return f.Over == nil && !f.Name.Quoted && aggregateNames[strings.ToUpper(f.Name.Name)]
}

func hasAggregate(sel *sql.Select, q *sql.Query) bool {
	found := false
	visit := func(n sql.Node) bool {
		if f, ok := n.(*sql.FuncCall); ok && isAggregate(f) {
			found = true
		}
		_, sub := n.(*sql.Query)
		return !found && !sub
	}
	for _, it := range sel.Columns {
		sql.Walk(it.Expr, visit)
	}
	for _, o := range q.OrderBy {
		sql.Walk(o.Expr, visit)
	}
	return found
}

// aggPlan accumulates an aggregate query's parts.
type aggPlan struct {
	*selectPlan
	base     *translator // over the input columns
	post     map[string]scopeCol
	dims     []any
	keys     []key
	aggs     []any
	postAggs []any
	na, np   int
}

// key is one GROUP BY key.
type key struct {
	expr   sql.Expr
	native string
	typ    string
	// period is set when the key floors __time (a timeseries granularity).
	period string
}

func (s *selectPlan) aggregate() (*built, error) {
	a := &aggPlan{selectPlan: s, base: &translator{p: s.p, cols: s.cols, quals: s.quals}, post: map[string]scopeCol{}}
	exprs, names, err := s.items()
	if err != nil {
		return nil, err
	}
	// GROUP BY keys: ordinals and select aliases name select items.
	groupExprs := s.sel.GroupBy
	if s.sel.Distinct {
		if len(groupExprs) > 0 || hasAggregate(s.sel, s.q) {
			return nil, unsupported("%s", sql.AtPos(s.sel, "SELECT DISTINCT with GROUP BY or aggregates is not supported"))
		}
		groupExprs = exprs
	}
	// ROLLUP(...) and CUBE(...) list keys and the subtotals to compute over
	// them (the native subtotalsSpec); the plain keys are in every subtotal.
	var grouping *sql.FuncCall
	var plainKeys, setKeys []string
	var sets [][]string // GROUPING SETS (grouping.go)
	for _, g := range groupExprs {
		if gs, ok := g.(*sql.GroupingSets); ok {
			if sets != nil || grouping != nil {
				return nil, unsupported("%s", sql.AtPos(gs, "Only one ROLLUP, CUBE or GROUPING SETS per GROUP BY is supported"))
			}
			if sets, err = a.groupingSets(gs, exprs, names); err != nil {
				return nil, err
			}
			continue
		}
		if f, ok := g.(*sql.FuncCall); ok && !f.Name.Quoted && (strings.EqualFold(f.Name.Name, "ROLLUP") || strings.EqualFold(f.Name.Name, "CUBE")) {
			if grouping != nil || sets != nil || len(f.Args) == 0 || len(f.Args) > 8 {
				return nil, unsupported("%s", sql.AtPos(f, "Only one ROLLUP or CUBE of at most 8 keys per GROUP BY is supported"))
			}
			grouping = f
			for _, arg := range f.Args {
				name, err := a.groupKey(arg, exprs, names)
				if err != nil {
					return nil, err
				}
				setKeys = append(setKeys, name)
			}
			continue
		}
		name, err := a.groupKey(g, exprs, names)
		if err != nil {
			return nil, err
		}
		plainKeys = append(plainKeys, name)
	}
	var subtotals [][]string
	if grouping != nil {
		subtotals = subtotalSets(strings.ToUpper(grouping.Name.Name), plainKeys, setKeys)
	}
	if sets != nil {
		subtotals = withPlainKeys(plainKeys, sets)
	}
	// Aggregates anywhere in the select list, HAVING and ORDER BY.
	var calls []*sql.FuncCall
	collect := func(n sql.Node) bool {
		if f, ok := n.(*sql.FuncCall); ok && isAggregate(f) {
			calls = append(calls, f)
			return false
		}
		_, sub := n.(*sql.Query)
		return !sub
	}
	for _, e := range exprs {
		sql.Walk(e, collect)
	}
	if s.sel.Having != nil {
		sql.Walk(s.sel.Having, collect)
	}
	for _, o := range s.q.OrderBy {
		sql.Walk(resolveAlias(o.Expr, exprs, names), collect)
	}
	for _, c := range calls {
		if _, done := a.post[c.String()]; done {
			continue
		}
		if err := a.addAggregate(c); err != nil {
			return nil, err
		}
	}
	pt := &translator{p: s.p, cols: s.cols, quals: s.quals, post: a.post, agg: a}
	var out []outCol
	for i, e := range exprs {
		v, err := pt.expr(e)
		if err != nil {
			return nil, err
		}
		out = append(out, outCol{name: names[i], typ: v.typ, native: a.postAgg(v)})
	}
	native := map[string]any{"dataSource": s.ds, "granularity": "all"}
	if err := s.where(native, a.base); err != nil {
		return nil, err
	}
	var having any
	if s.sel.Having != nil {
		v, err := pt.expr(s.sel.Having)
		if err != nil {
			return nil, err
		}
		having = map[string]any{"type": "filter", "filter": map[string]any{"type": "expression", "expression": v.src}}
	}
	var orders []sortKey
	for _, o := range s.q.OrderBy {
		e := resolveAlias(o.Expr, exprs, names)
		if n, ok := e.(*sql.NumberLit); ok {
			i, err := n.Int64()
			if err != nil || i < 1 || int(i) > len(exprs) {
				return nil, invalid("%s", sql.AtPos(n, "Ordinal out of range"))
			}
			orders = append(orders, sortKey{out[i-1].native, out[i-1].typ, o.Desc})
			continue
		}
		v, err := pt.expr(e)
		if err != nil {
			return nil, err
		}
		orders = append(orders, sortKey{a.postAgg(v), v.typ, o.Desc})
	}
	b := &built{native: native, out: out, limit: -1}
	if len(a.vcolsOf()) > 0 {
		native["virtualColumns"] = a.vcolsOf()
	}
	if len(a.aggs) > 0 {
		native["aggregations"] = a.aggs
	}
	if len(a.postAggs) > 0 {
		native["postAggregations"] = a.postAggs
	}
	// timeBoundary: MIN/MAX(__time) alone over a table with no filter.
	if subtotals == nil && len(a.keys) == 0 && having == nil && s.sel.Where == nil && a.timeBoundary(b) {
		b.limit, b.offset = s.limit, s.offset
		return b, nil
	}
	// timeseries: no keys, or one key flooring __time ordered by itself.
	if subtotals == nil && having == nil && (len(a.keys) == 0 || (len(a.keys) == 1 && a.keys[0].period != "" && s.offset == 0)) {
		ok := true
		desc := false
		if len(a.keys) == 1 {
			for _, o := range orders {
				if o.native != a.keys[0].native {
					ok = false
				}
				desc = o.desc
			}
			for _, pa := range a.postAggs {
				if src, _ := pa.(map[string]any)["expression"].(string); strings.Contains(src, quoteIdent(a.keys[0].native)) {
					ok = false
				}
			}
		}
		if ok {
			b.queryType = "timeseries"
			native["queryType"] = "timeseries"
			if len(a.keys) == 1 {
				k := a.keys[0]
				native["granularity"] = map[string]any{"type": "period", "period": k.period, "timeZone": s.p.tzName}
				delete(native, "virtualColumns")
				native["virtualColumns"] = a.vcolsExcept(k.native)
				if len(native["virtualColumns"].([]any)) == 0 {
					delete(native, "virtualColumns")
				}
				for i := range b.out {
					if b.out[i].native == k.native {
						b.out[i].native = ""
					}
				}
				if desc {
					native["descending"] = true
				}
				if s.limit >= 0 {
					native["limit"] = s.limit
				}
			} else {
				b.limit, b.offset = s.limit, s.offset
			}
			return b, nil
		}
	}
	// topN: one string key, ordered by one aggregate, with a limit.
	if subtotals == nil && having == nil && len(a.keys) == 1 && a.keys[0].period == "" && a.keys[0].typ == tVarchar &&
		len(orders) == 1 && s.limit >= 0 && s.offset == 0 && s.p.ctxBool("useApproximateTopN", true) {
		k := a.keys[0]
		o := orders[0]
		var metric any
		if o.native == k.native {
			dir := "lexicographic"
			metric = map[string]any{"type": "dimension", "ordering": dir}
			if o.desc {
				metric = map[string]any{"type": "inverted", "metric": metric}
			}
		} else if numeric(o.typ) {
			metric = map[string]any{"type": "numeric", "metric": o.native}
			if !o.desc {
				metric = map[string]any{"type": "inverted", "metric": metric}
			}
		}
		if metric != nil {
			b.queryType = "topN"
			native["queryType"] = "topN"
			native["dimension"] = a.dims[0]
			native["metric"] = metric
			native["threshold"] = s.limit
			return b, nil
		}
	}
	b.queryType = "groupBy"
	native["queryType"] = "groupBy"
	if subtotals != nil {
		native["subtotalsSpec"] = subtotals
	} else if rest, ok := a.granular(b, having, orders); ok {
		orders = rest
	}
	native["dimensions"] = a.dims
	if a.dims == nil {
		native["dimensions"] = []any{}
	}
	if having != nil {
		native["having"] = having
	}
	if len(orders) > 0 || s.limit >= 0 || s.offset > 0 {
		ls := map[string]any{"type": "default"}
		var cols []any
		for _, o := range orders {
			ord := "lexicographic"
			if numeric(o.typ) || o.typ == tTimestamp {
				ord = "numeric"
			}
			dir := "ascending"
			if o.desc {
				dir = "descending"
			}
			cols = append(cols, map[string]any{"dimension": o.native, "direction": dir, "dimensionOrder": ord})
		}
		ls["columns"] = cols
		if cols == nil {
			ls["columns"] = []any{}
		}
		if s.limit >= 0 {
			ls["limit"] = s.limit
		}
		if s.offset > 0 {
			ls["offset"] = s.offset
		}
		native["limitSpec"] = ls
	}
	return b, nil
}

// resolveAlias replaces a bare name that is a select alias (and not an
// input column) with the aliased expression.
func resolveAlias(e sql.Expr, exprs []sql.Expr, names []string) sql.Expr {
	c, ok := e.(*sql.ColumnRef)
	if !ok || len(c.Parts) != 1 {
		return e
	}
	for i, n := range names {
		if n == c.Parts[0].Name {
			if ref, isRef := exprs[i].(*sql.ColumnRef); isRef && ref.Column().Name == n {
				return e
			}
			return exprs[i]
		}
	}
	return e
}

func (a *aggPlan) vcolsOf() []any { return a.vcols }

func (a *aggPlan) vcolsExcept(dim string) []any {
	var keep []any
	for _, d := range a.dims {
		dm := d.(map[string]any)
		if dm["outputName"] == dim {
			dim = dm["dimension"].(string)
		}
	}
	for _, v := range a.vcols {
		if v.(map[string]any)["name"] != dim {
			keep = append(keep, v)
		}
	}
	if keep == nil {
		keep = []any{}
	}
	return keep
}

func (a *aggPlan) addKey(g sql.Expr) error {
	v, err := a.base.expr(g)
	if err != nil {
		return err
	}
	col := v.col
	if col == "" {
		col = a.virtual(v)
	}
	name := "d" + strconv.Itoa(len(a.keys))
	a.dims = append(a.dims, map[string]any{"type": "default", "dimension": col, "outputName": name, "outputType": nativeType(v.typ)})
	a.keys = append(a.keys, key{expr: g, native: name, typ: v.typ, period: a.timeFloor(g)})
	a.post[g.String()] = scopeCol{name: g.String(), native: name, typ: v.typ}
	return nil
}

// timeFloor returns the period of a key that floors __time in the query's
// time zone (FLOOR(__time TO unit), TIME_FLOOR(__time, 'period'),
// DATE_TRUNC('unit', __time)); "" for any other key.
func (a *aggPlan) timeFloor(g sql.Expr) string {
	isTime := func(e sql.Expr) bool {
		v, err := a.base.expr(e)
		return err == nil && v.col == "__time"
	}
	switch x := g.(type) {
	case *sql.FloorCeilExpr:
		if !x.Ceil && isTime(x.X) {
			return x.Unit.Period()
		}
	case *sql.FuncCall:
		switch strings.ToUpper(x.Name.Name) {
		case "TIME_FLOOR":
			if len(x.Args) == 2 && isTime(x.Args[0]) {
				if p, ok := x.Args[1].(*sql.StringLit); ok {
					return p.Value
				}
			}
		case "DATE_TRUNC":
			if len(x.Args) == 2 && isTime(x.Args[1]) {
				if u, ok := x.Args[0].(*sql.StringLit); ok {
					return sqlexpr.UnitPeriods[strings.ToUpper(u.Value)]
				}
			}
		}
	}
	return ""
}

// postAgg returns the native name of a translated post-scope expression,
// adding an expression post-aggregator when it is not a key or aggregate.
func (a *aggPlan) postAgg(v ex) string {
	if v.col != "" {
		return v.col
	}
	name := "p" + strconv.Itoa(a.np)
	a.np++
	pa := map[string]any{"type": "expression", "name": name, "expression": v.src, "outputType": nativeType(v.typ)}
	if isArrayType(v.typ) {
		delete(pa, "outputType") // the expression's own array type
	}
	a.postAggs = append(a.postAggs, pa)
	return name
}

// field is an aggregator's input: a column name or an expression.
func (a *aggPlan) field(agg map[string]any, e sql.Expr) (ex, error) {
	v, err := a.base.expr(e)
	if err != nil {
		return ex{}, err
	}
	if v.col != "" {
		agg["fieldName"] = v.col
	} else {
		agg["expression"] = v.src
	}
	return v, nil
}

func typePrefix(t string) string {
	switch t {
	case tBigint, tTimestamp, tBoolean:
		return "long"
	case tFloat:
		return "float"
	case tDouble:
		return "double"
	}
	return ""
}

func (a *aggPlan) addAggregate(c *sql.FuncCall) error {
	name := "a" + strconv.Itoa(a.na)
	a.na++
	fname := strings.ToUpper(c.Name.Name)
	nargs := func(min, max int) error {
		if len(c.Args) < min || len(c.Args) > max {
			return invalid("%s", sql.AtPos(c, "Invalid number of arguments to function '"+fname+"'"))
		}
		return nil
	}
	var agg map[string]any
	typ := tBigint
	if arrayAggNames[fname] {
		return a.addArrayAgg(c, name, fname)
	}
	if c.Distinct && fname != "COUNT" {
		return unsupported("%s", sql.AtPos(c, fname+"(DISTINCT) is not supported"))
	}
	switch fname {
	case "COUNT":
		if err := nargs(1, 1); err != nil && len(c.Args) != 0 {
			return err
		}
		if c.Distinct {
			v, err := a.base.expr(c.Args[0])
			if err != nil {
				return err
			}
			col := v.col
			if col == "" {
				col = a.virtual(v)
			}
			agg = map[string]any{"type": "cardinality", "name": name, "fields": []string{col}, "round": true}
			break
		}
		agg = map[string]any{"type": "count", "name": name}
		if len(c.Args) == 1 {
			if _, star := c.Args[0].(*sql.StarExpr); !star {
				v, err := a.base.expr(c.Args[0])
				if err != nil {
					return err
				}
				if !(v.isLit && v.lit != nil) {
					agg = map[string]any{"type": "filtered", "name": name, "filter": map[string]any{"type": "expression", "expression": "notnull(" + v.src + ")"}, "aggregator": agg}
				}
			}
		}
	case "SUM", "MIN", "MAX":
		if err := nargs(1, 1); err != nil {
			return err
		}
		agg = map[string]any{"name": name}
		v, err := a.field(agg, c.Args[0])
		if err != nil {
			return err
		}
		pre := typePrefix(v.typ)
		if pre == "" {
			if v.typ != tVarchar {
				return unsupported("%s", sql.AtPos(c, fname+" of "+v.typ+" is not supported"))
			}
			pre, v.typ = "double", tDouble
		}
		agg["type"] = pre + strings.ToUpper(fname[:1]) + strings.ToLower(fname[1:])
		typ = v.typ
		if typ == tBoolean {
			typ = tBigint
		}
	case "AVG":
		if err := nargs(1, 1); err != nil {
			return err
		}
		sum := map[string]any{"name": name + ":sum"}
		v, err := a.field(sum, c.Args[0])
		if err != nil {
			return err
		}
		pre := typePrefix(v.typ)
		if pre == "" {
			pre = "double"
		}
		sum["type"] = pre + "Sum"
		var notNull any = map[string]any{"type": "expression", "expression": "notnull(" + v.src + ")"}
		var sumAgg any = sum
		if c.Filter != nil {
			f, err := a.filter(c.Filter, a.base)
			if err != nil {
				return err
			}
			sumAgg = map[string]any{"type": "filtered", "name": name + ":sum", "filter": f, "aggregator": sum}
			notNull = map[string]any{"type": "and", "fields": []any{f, notNull}}
		}
		cnt := map[string]any{"type": "filtered", "name": name + ":count", "filter": notNull,
			"aggregator": map[string]any{"type": "count", "name": name + ":count"}}
		a.aggs = append(a.aggs, sumAgg, cnt)
		a.postAggs = append(a.postAggs, map[string]any{"type": "arithmetic", "name": name, "fn": "quotient",
			"fields": []any{map[string]any{"type": "fieldAccess", "fieldName": name + ":sum"}, map[string]any{"type": "fieldAccess", "fieldName": name + ":count"}}})
		a.post[c.String()] = scopeCol{name: c.String(), native: name, typ: tDouble}
		return nil
	case "APPROX_COUNT_DISTINCT", "APPROX_COUNT_DISTINCT_BUILTIN", "APPROX_COUNT_DISTINCT_DS_HLL", "APPROX_COUNT_DISTINCT_DS_THETA":
		if err := nargs(1, 3); err != nil {
			return err
		}
		v, err := a.base.expr(c.Args[0])
		if err != nil {
			return err
		}
		col := v.col
		if col == "" {
			col = a.virtual(v)
		}
		switch fname {
		case "APPROX_COUNT_DISTINCT_DS_HLL":
			agg = map[string]any{"type": "HLLSketchBuild", "name": name, "fieldName": col, "round": true}
		case "APPROX_COUNT_DISTINCT_DS_THETA":
			agg = map[string]any{"type": "thetaSketch", "name": name, "fieldName": col}
		default:
			agg = map[string]any{"type": "cardinality", "name": name, "fields": []string{col}, "round": true}
		}
		if err := a.distinctSketchArgs(c, fname, agg); err != nil {
			return err
		}
	case "EARLIEST", "LATEST", "EARLIEST_BY", "LATEST_BY", "ANY_VALUE":
		by := strings.HasSuffix(fname, "_BY")
		min, max := 1, 2
		if by {
			min, max = 2, 3
		}
		if err := nargs(min, max); err != nil {
			return err
		}
		agg = map[string]any{"name": name}
		v, err := a.base.expr(c.Args[0])
		if err != nil {
			return err
		}
		if v.col == "" {
			return unsupported("%s", sql.AtPos(c, fname+" of an expression is not supported"))
		}
		agg["fieldName"] = v.col
		pre := typePrefix(v.typ)
		if v.typ == tVarchar {
			pre = "string"
			if len(c.Args) == max {
				n, ok := c.Args[max-1].(*sql.NumberLit)
				if !ok {
					return invalid("%s", sql.AtPos(c, fname+"'s maxBytesPerString must be a number"))
				}
				m, _ := n.Int64()
				agg["maxStringBytes"] = m
			}
		}
		if pre == "" {
			return unsupported("%s", sql.AtPos(c, fname+" of "+v.typ+" is not supported"))
		}
		op := map[string]string{"EARLIEST": "First", "EARLIEST_BY": "First", "LATEST": "Last", "LATEST_BY": "Last", "ANY_VALUE": "Any"}[fname]
		agg["type"] = pre + op
		if by {
			t, err := a.base.expr(c.Args[1])
			if err != nil {
				return err
			}
			if t.col == "" || t.typ != tTimestamp {
				return unsupported("%s", sql.AtPos(c, fname+" needs a TIMESTAMP column as its second argument"))
			}
			agg["timeColumn"] = t.col
		}
		typ = v.typ
	default:
		if b := aggBuilders[fname]; b != nil {
			return b(a, c, name)
		}
		return unsupported("%s", sql.AtPos(c, "Aggregation '"+fname+"' is not supported"))
	}
	if c.Filter != nil {
		f, err := a.filter(c.Filter, a.base)
		if err != nil {
			return err
		}
		agg = map[string]any{"type": "filtered", "name": name, "filter": f, "aggregator": agg}
	}
	a.aggs = append(a.aggs, agg)
	a.post[c.String()] = scopeCol{name: c.String(), native: name, typ: typ}
	return nil
}

// timeBoundary turns MIN(__time)/MAX(__time) alone into a timeBoundary
// query; false if the query is anything else.
func (a *aggPlan) timeBoundary(b *built) bool {
	if len(a.postAggs) > 0 || len(a.aggs) == 0 || len(a.aggs) > 2 {
		return false
	}
	bound := map[string]string{}
	for _, g := range a.aggs {
		m := g.(map[string]any)
		switch {
		case m["type"] == "longMin" && m["fieldName"] == "__time":
			bound[m["name"].(string)] = "minTime"
		case m["type"] == "longMax" && m["fieldName"] == "__time":
			bound[m["name"].(string)] = "maxTime"
		default:
			return false
		}
	}
	n := b.native
	if ds, ok := n["dataSource"].(map[string]any); ok && ds["type"] == "query" {
		return false
	}
	b.queryType = "timeBoundary"
	n["queryType"] = "timeBoundary"
	delete(n, "aggregations")
	delete(n, "granularity")
	delete(n, "intervals")
	for i := range b.out {
		b.out[i].native = "result." + bound[b.out[i].native]
		b.out[i].typ = tTimestamp
	}
	if len(bound) == 1 {
		for _, v := range bound {
			n["bound"] = v
		}
	}
	return true
}

// distinctColumn names the counted value in exactDistinct's inner query.
const distinctColumn = "__distinct"

// exactDistinct rewrites COUNT(DISTINCT x) for useApproximateCountDistinct
// false into two group-bys, as Druid plans it: the inner one groups by the
// keys and x, the outer one counts the non-null x per key. It returns the
// outer SELECT, or nil when the statement needs no rewrite.
func (p *planner) exactDistinct(q *sql.Query, sel *sql.Select) (*sql.Select, error) {
	if p.ctxBool("useApproximateCountDistinct", true) {
		return nil, nil
	}
	var calls []*sql.FuncCall
	collect := func(n sql.Node) bool {
		if f, ok := n.(*sql.FuncCall); ok && isAggregate(f) {
			calls = append(calls, f)
			return false
		}
		_, sub := n.(*sql.Query)
		return !sub
	}
	for _, it := range sel.Columns {
		sql.Walk(it.Expr, collect)
	}
	if sel.Having != nil {
		sql.Walk(sel.Having, collect)
	}
	for _, o := range q.OrderBy {
		sql.Walk(o.Expr, collect)
	}
	distinct := ""
	for _, c := range calls {
		if c.Distinct && strings.EqualFold(c.Name.Name, "COUNT") {
			distinct = c.Args[0].String()
		}
	}
	if distinct == "" {
		return nil, nil
	}
	for _, c := range calls {
		if !c.Distinct || !strings.EqualFold(c.Name.Name, "COUNT") || c.Args[0].String() != distinct || c.Filter != nil {
			return nil, unsupported("%s", sql.AtPos(c, "Exact COUNT(DISTINCT) (useApproximateCountDistinct=false) is supported only as the query's one aggregate"))
		}
	}
	var exprs []sql.Expr
	var names []string
	for i, it := range sel.Columns {
		exprs = append(exprs, it.Expr)
		if it.Alias != nil {
			names = append(names, it.Alias.Name)
		} else {
			names = append(names, "EXPR$"+strconv.Itoa(i))
		}
	}
	inner := &sql.Select{From: sel.From, Where: sel.Where}
	timeKey := false
	for _, g := range sel.GroupBy {
		g = resolveAlias(g, exprs, names)
		if n, ok := g.(*sql.NumberLit); ok {
			i, err := n.Int64()
			if err != nil || i < 1 || int(i) > len(exprs) {
				return nil, invalid("%s", sql.AtPos(n, "Ordinal out of range"))
			}
			g = exprs[i-1]
		}
		item := &sql.SelectItem{Expr: g}
		switch x := g.(type) {
		case *sql.ColumnRef:
		case *sql.FloorCeilExpr, *sql.FuncCall:
			c, isCol := floorArg(x)
			if !isCol || c.Column().Name != "__time" || timeKey {
				return nil, unsupported("%s", sql.AtPos(g, "Exact COUNT(DISTINCT) grouped by an expression is not supported"))
			}
			// The floored time keeps the name __time, so the outer query's
			// floor by the same period reads it unchanged.
			timeKey = true
			item.Alias = &sql.Ident{Name: "__time", Quoted: true}
		default:
			return nil, unsupported("%s", sql.AtPos(g, "Exact COUNT(DISTINCT) grouped by an expression is not supported"))
		}
		inner.Columns = append(inner.Columns, item)
		inner.GroupBy = append(inner.GroupBy, g)
	}
	x := calls[0].Args[0]
	inner.Columns = append(inner.Columns, &sql.SelectItem{Expr: x, Alias: &sql.Ident{Name: distinctColumn, Quoted: true}})
	inner.GroupBy = append(inner.GroupBy, x)
	for _, c := range calls {
		c.Distinct = false
		c.Args = []sql.Expr{&sql.ColumnRef{Parts: []sql.Ident{{Name: distinctColumn, Quoted: true}}}}
	}
	outer := *sel
	outer.From = &sql.DerivedTable{Query: &sql.Query{Body: inner}}
	outer.Where = nil
	return &outer, nil
}

// floorArg returns the column a time floor (FLOOR(c TO unit),
// TIME_FLOOR(c, ...), DATE_TRUNC('unit', c)) floors.
func floorArg(e sql.Expr) (*sql.ColumnRef, bool) {
	var arg sql.Expr
	switch x := e.(type) {
	case *sql.FloorCeilExpr:
		if !x.Ceil {
			arg = x.X
		}
	case *sql.FuncCall:
		switch strings.ToUpper(x.Name.Name) {
		case "TIME_FLOOR":
			if len(x.Args) >= 2 {
				arg = x.Args[0]
			}
		case "DATE_TRUNC":
			if len(x.Args) == 2 {
				arg = x.Args[1]
			}
		}
	}
	c, ok := arg.(*sql.ColumnRef)
	return c, ok
}

// sortKey is one ORDER BY item of an aggregate query: the native name it
// sorts on, its SQL type, and its direction.
type sortKey struct {
	native, typ string
	desc        bool
}

// granular moves a groupBy's time-floor key into the query's granularity,
// as the engine buckets time much faster than it groups a virtual column:
// the row timestamp becomes the key. It applies at the top level only (a
// subquery's rows carry no timestamp), when nothing but the ordering reads
// the key and the ordering is the engine's: time first (the key first and
// ascending, or not at all, then sortByDimsFirst puts it last). It returns
// the ORDER BY items left for the limitSpec.
func (a *aggPlan) granular(b *built, having any, orders []sortKey) ([]sortKey, bool) {
	if a.p.nested > 0 || len(a.keys) < 2 {
		return nil, false
	}
	ti := -1
	for i, k := range a.keys {
		if k.period != "" {
			if ti >= 0 {
				return nil, false
			}
			ti = i
		}
	}
	if ti < 0 {
		return nil, false
	}
	k := a.keys[ti]
	ref := quoteIdent(k.native)
	for _, pa := range a.postAggs {
		if src, _ := pa.(map[string]any)["expression"].(string); strings.Contains(src, ref) {
			return nil, false
		}
	}
	if having != nil && strings.Contains(string(mustMarshal(having)), ref) {
		return nil, false
	}
	rest := orders
	dimsFirst := false
	if len(orders) > 0 && orders[0].native == k.native {
		if orders[0].desc {
			return nil, false
		}
		rest = orders[1:]
	} else if len(orders) > 0 {
		dimsFirst = true
	}
	for _, o := range rest {
		if o.native == k.native {
			return nil, false
		}
	}
	n := b.native
	n["granularity"] = map[string]any{"type": "period", "period": k.period, "timeZone": a.p.tzName}
	vcols := a.vcolsExcept(k.native)
	if len(vcols) == 0 {
		delete(n, "virtualColumns")
	} else {
		n["virtualColumns"] = vcols
	}
	var dims []any
	for _, d := range a.dims {
		if d.(map[string]any)["outputName"] != k.native {
			dims = append(dims, d)
		}
	}
	a.dims = dims
	for i := range b.out {
		if b.out[i].native == k.native {
			b.out[i].native = ""
		}
	}
	if dimsFirst {
		b.ctx = map[string]any{"sortByDimsFirst": true}
	}
	return rest, true
}

func mustMarshal(v any) []byte {
	out, _ := json.Marshal(v)
	return out
}

// groupKey adds one GROUP BY item (an ordinal, a select alias or an
// expression) as a key and returns its output name.
func (a *aggPlan) groupKey(g sql.Expr, exprs []sql.Expr, names []string) (string, error) {
	g = resolveAlias(g, exprs, names)
	if n, ok := g.(*sql.NumberLit); ok {
		i, err := n.Int64()
		if err != nil || i < 1 || int(i) > len(exprs) {
			return "", invalid("%s", sql.AtPos(n, "Ordinal out of range"))
		}
		g = exprs[i-1]
	}
	if c, dup := a.post[g.String()]; dup {
		return c.native, nil
	}
	if err := a.addKey(g); err != nil {
		return "", err
	}
	return a.keys[len(a.keys)-1].native, nil
}

// subtotalSets lists the key sets of ROLLUP(set) (every prefix, longest
// first) or CUBE(set) (every subset, larger first, in key order), each
// with the plain keys.
func subtotalSets(kind string, plain, set []string) [][]string {
	var out [][]string
	with := func(keys []string) []string {
		return append(append([]string{}, plain...), keys...)
	}
	if kind == "ROLLUP" {
		for n := len(set); n >= 0; n-- {
			out = append(out, with(set[:n]))
		}
		return out
	}
	for size := len(set); size >= 0; size-- {
		for mask := (1 << len(set)) - 1; mask >= 0; mask-- {
			var keys []string
			for i := range set {
				if mask&(1<<(len(set)-1-i)) != 0 {
					keys = append(keys, set[i])
				}
			}
			if len(keys) == size {
				out = append(out, with(keys))
			}
		}
	}
	return out
}
