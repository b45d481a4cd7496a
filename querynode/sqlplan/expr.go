package sqlplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"strata/sql"
	"strata/sqlexpr"
)

// SQL types the planner distinguishes (package sqlexpr's).
const (
	tVarchar   = sqlexpr.Varchar
	tBigint    = sqlexpr.Bigint
	tDouble    = sqlexpr.Double
	tFloat     = sqlexpr.Float
	tTimestamp = sqlexpr.Timestamp
	tBoolean   = sqlexpr.Boolean
	tOther     = sqlexpr.Other
)

func numeric(t string) bool { return sqlexpr.Numeric(t) }

// nativeType is the native column type a SQL type is carried as.
func nativeType(t string) string {
	if isArrayType(t) {
		return arrayNativeType(t)
	}
	switch t {
	case tBigint, tTimestamp, tBoolean:
		return "LONG"
	case tDouble:
		return "DOUBLE"
	case tFloat:
		return "FLOAT"
	case tVarchar:
		return "STRING"
	}
	return "COMPLEX"
}

// sqlTypeOf maps a native column type to SQL.
func sqlTypeOf(native string) string {
	switch strings.ToUpper(native) {
	case "LONG":
		return tBigint
	case "DOUBLE":
		return tDouble
	case "FLOAT":
		return tFloat
	case "STRING":
		return tVarchar
	}
	return tOther
}

// scopeCol is a column visible to expressions: its SQL name, the name it
// has in the native rows, and its SQL type.
type scopeCol struct {
	name, native, typ string
	// qual is the table a column of a join belongs to (join.go): a
	// qualified reference matches only its table's columns. hidden marks
	// the right side's column of a USING join, reached only qualified.
	qual   string
	hidden bool
	// tableArray marks an array column of a subquery's result, which its
	// table holds as a multi-value string (arrays.go).
	tableArray bool
}

// ex is a translated expression: native expression source and SQL type. col
// is set when it is a plain column reference (the native column name), lit
// when it is a literal (its value as Go: string, int64, float64, nil).
type ex struct {
	src   string
	typ   string
	col   string
	lit   any
	isLit bool
}

// translator turns SQL expressions into native expression source.
type translator struct {
	p    *planner
	cols []scopeCol
	// quals are the names a column reference may be qualified with: one
	// naming anything else (an outer query's table, in a correlated
	// subquery) must not resolve to a column of this one.
	quals []string
	// post, when set, names expressions already computed (group keys and
	// aggregates, by their SQL text): an aggregate query's select list,
	// HAVING and ORDER BY are expressions over those.
	post map[string]scopeCol
	// agg, in an aggregate query's post scope, takes the native
	// post-aggregators functions over aggregates plan to (postFns).
	agg *aggPlan
}

// The native literal and quoting rules are package sqlexpr's.
var (
	quoteString = sqlexpr.QuoteString
	quoteIdent  = sqlexpr.QuoteIdent
	longLit     = sqlexpr.LongLit
	doubleLit   = sqlexpr.DoubleLit
)

func (t *translator) resolve(ref *sql.ColumnRef) (scopeCol, error) {
	name := ref.Column().Name
	q := ""
	if len(ref.Parts) > 1 {
		q = ref.Parts[len(ref.Parts)-2].Name
		if !slices.Contains(t.quals, q) {
			return scopeCol{}, invalid("%s", sql.AtPos(ref, "Table '"+q+"' not found for column '"+name+"' (correlated subqueries are not supported)"))
		}
	}
	var found *scopeCol
	for i := range t.cols {
		if t.cols[i].name == name && (q == "" && !t.cols[i].hidden || q != "" && (t.cols[i].qual == "" || t.cols[i].qual == q)) {
			if found != nil {
				return scopeCol{}, invalid("%s", sql.AtPos(ref, "Column '"+name+"' is ambiguous"))
			}
			found = &t.cols[i]
		}
	}
	if found == nil {
		return scopeCol{}, invalid("%s", sql.AtPos(ref, "Column '"+name+"' not found in any table"))
	}
	if found.tableArray {
		return scopeCol{}, subqueryArrayError(ref)
	}
	return *found, nil
}

// expr translates e through the translator SQL ingestion shares (package
// sqlexpr); t is its Scope, and plans what only interactive SQL has:
// aggregates' results, subqueries, arrays, lookups and sketch functions.
func (t *translator) expr(e sql.Expr) (ex, error) {
	v, err := sqlexpr.Translate(t, t.p.sqlEnv(), e)
	return fromShared(v), err
}

func fromShared(v sqlexpr.Expr) ex {
	return ex{src: v.Src, typ: v.Type, col: v.Col, lit: v.Lit, isLit: v.IsLit}
}

func (v ex) shared() sqlexpr.Expr {
	return sqlexpr.Expr{Src: v.src, Type: v.typ, Col: v.col, Lit: v.lit, IsLit: v.isLit}
}

// Intercept answers an aggregate query's computed expressions (group keys
// and aggregates) and refuses aggregates elsewhere.
func (t *translator) Intercept(e sql.Expr) (sqlexpr.Expr, bool, error) {
	if t.post != nil {
		if c, ok := t.post[e.String()]; ok {
			return sqlexpr.Expr{Src: quoteIdent(c.native), Type: c.typ, Col: c.native}, true, nil
		}
	}
	switch x := e.(type) {
	case *sql.FuncCall:
		if isAggregate(x) {
			if x.Over != nil && t.post == nil {
				return sqlexpr.Expr{}, true, unsupported("%s", sql.AtPos(x, "Window functions are not supported"))
			}
			return sqlexpr.Expr{}, true, invalid("%s", sql.AtPos(e, "Aggregate '"+x.Name.Name+"' is not allowed here"))
		}
	case *sql.IsExpr:
		if x.What == sql.IsNull && neverNull(x.X) {
			return notNullCheck(x.Not).shared(), true, nil
		}
	}
	return sqlexpr.Expr{}, false, nil
}

// Column resolves a column reference of this scope.
func (t *translator) Column(x *sql.ColumnRef) (sqlexpr.Expr, error) {
	if t.post != nil {
		return sqlexpr.Expr{}, invalid("%s", sql.AtPos(x, "Expression '"+x.Column().Name+"' is not being grouped"))
	}
	c, err := t.resolve(x)
	if err != nil {
		return sqlexpr.Expr{}, err
	}
	return sqlexpr.Expr{Src: quoteIdent(c.native), Type: c.typ, Col: c.native}, nil
}

// Call plans interactive SQL's own functions: LOOKUP, functions over
// aggregated sketches, and array functions.
func (t *translator) Call(name string, x *sql.FuncCall, args []sqlexpr.Expr) (sqlexpr.Expr, bool, error) {
	if name != "LOOKUP" && postFns[name] == nil && arrayFns[name].native == "" {
		return sqlexpr.Expr{}, false, nil
	}
	a := make([]ex, len(args))
	for i, v := range args {
		a[i] = fromShared(v)
	}
	var v ex
	var err error
	switch {
	case name == "LOOKUP":
		v, err = t.lookupCall(x, a, x)
	case postFns[name] != nil:
		v, err = postFns[name](t, x, a)
	default:
		var ok bool
		if v, ok, err = t.arrayCall(name, a, x); !ok {
			return sqlexpr.Expr{}, false, nil
		}
	}
	return v.shared(), true, err
}

// Subquery runs an IN or scalar subquery first.
func (t *translator) Subquery(x *sql.InExpr) ([]sqlexpr.Expr, error) {
	vals, err := t.inValues(x)
	out := make([]sqlexpr.Expr, len(vals))
	for i, v := range vals {
		out[i] = v.shared()
	}
	return out, err
}

// sqlEnv is what every translation of the statement shares: the query's
// time zone, its parameters and its start time.
func (p *planner) sqlEnv() *sqlexpr.Env {
	if p.env == nil {
		p.env = &sqlexpr.Env{TZ: p.tz, TZName: p.tzName, Now: p.now.UnixMilli(), Params: p.req.Parameters}
	}
	return p.env
}

// parseTimestamp reads a SQL timestamp literal ("2000-01-01 00:00:00",
// "2000-01-01", ISO forms) in the query's time zone.
func (p *planner) parseTimestamp(s string) (int64, error) { return sqlexpr.ParseTimestamp(s, p.tz) }

// inValues are the values of an IN list, or the rows of an IN subquery,
// which runs first (Request.Run) as its own native query: the outer query
// filters on its values as it would on a list. A NULL among them is kept,
// so NOT IN with a NULL matches nothing, as SQL's three-valued logic says.
func (t *translator) inValues(x *sql.InExpr) ([]ex, error) {
	if x.Query == nil {
		vals := make([]ex, len(x.List))
		for i, v := range x.List {
			b, err := t.expr(v)
			if err != nil {
				return nil, err
			}
			vals[i] = b
		}
		return vals, nil
	}
	if t.p.req.Run == nil {
		return nil, unsupported("%s", sql.AtPos(x, "Subqueries in expressions are not supported here"))
	}
	key := x.Query.String()
	if v, ok := t.p.inCache[key]; ok {
		return v, nil
	}
	t.p.nested++
	b, err := t.p.query(x.Query)
	t.p.nested--
	if err != nil {
		return nil, err
	}
	if len(b.out) != 1 {
		return nil, invalid("%s", sql.AtPos(x, "A subquery in an expression must return one column"))
	}
	nctx := map[string]any{}
	for k, v := range t.p.qctx {
		nctx[k] = v
	}
	b.native["context"] = nctx
	raw, err := json.Marshal(b.native)
	if err != nil {
		return nil, err
	}
	ans, err := t.p.req.Run(t.p.ctx, raw)
	if err != nil {
		return nil, err
	}
	pl := &Planned{b: b, parts: []*built{b}, tz: t.p.tz, Context: t.p.qctx}
	rows, err := pl.Rows(ans)
	if err != nil {
		return nil, err
	}
	// The values become the outer query's filter: cap them as Druid caps
	// a subquery's rows (maxSubqueryRows, default 100000).
	limit := int64(100000)
	switch v := t.p.qctx["maxSubqueryRows"].(type) {
	case float64:
		limit = int64(v)
	case int64:
		limit = v
	}
	if int64(len(rows)) > limit {
		return nil, invalid("%s", sql.AtPos(x, fmt.Sprintf("Resource limit exceeded: IN (subquery) returned more than %d rows (maxSubqueryRows)", limit)))
	}
	vals := make([]ex, 0, len(rows))
	for _, r := range rows {
		switch v := r[0].(type) {
		case nil:
			vals = append(vals, ex{src: "null", typ: b.out[0].typ, isLit: true})
		case string:
			if b.out[0].typ == tTimestamp {
				ms, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return nil, err
				}
				vals = append(vals, ex{src: longLit(ms.UnixMilli()), typ: tTimestamp, lit: ms.UnixMilli(), isLit: true})
				continue
			}
			vals = append(vals, ex{src: quoteString(v), typ: tVarchar, lit: v, isLit: true})
		case int64:
			vals = append(vals, ex{src: longLit(v), typ: tBigint, lit: v, isLit: true})
		case float64:
			vals = append(vals, ex{src: doubleLit(v), typ: tDouble, lit: v, isLit: true})
		case bool:
			n := int64(0)
			if v {
				n = 1
			}
			vals = append(vals, ex{src: longLit(n), typ: tBigint, lit: n, isLit: true})
		default:
			return nil, unsupported("%s", sql.AtPos(x, "IN (subquery) over this column type is not supported"))
		}
	}
	if t.p.inCache == nil {
		t.p.inCache = map[string][]ex{}
	}
	t.p.inCache[key] = vals
	return vals, nil
}
