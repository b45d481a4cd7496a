package sqlplan

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"strata/sql"
)

// SQL types the planner distinguishes.
const (
	tVarchar   = "VARCHAR"
	tBigint    = "BIGINT"
	tDouble    = "DOUBLE"
	tFloat     = "FLOAT"
	tTimestamp = "TIMESTAMP"
	tBoolean   = "BOOLEAN"
	tOther     = "OTHER"
)

func numeric(t string) bool { return t == tBigint || t == tDouble || t == tFloat || t == tBoolean }

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
	// qualified reference matches only its table's columns.
	qual string
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

func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

func longLit(n int64) string {
	if n < 0 {
		return "(" + strconv.FormatInt(n, 10) + ")"
	}
	return strconv.FormatInt(n, 10)
}

func doubleLit(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") && !math.IsInf(f, 0) && !math.IsNaN(f) {
		s += ".0"
	}
	if f < 0 {
		return "(" + s + ")"
	}
	return s
}

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
		if t.cols[i].name == name && (q == "" || t.cols[i].qual == "" || t.cols[i].qual == q) {
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

// expr translates e.
func (t *translator) expr(e sql.Expr) (ex, error) {
	if t.post != nil {
		if c, ok := t.post[e.String()]; ok {
			return ex{src: quoteIdent(c.native), typ: c.typ, col: c.native}, nil
		}
		if f, ok := e.(*sql.FuncCall); ok && isAggregate(f) {
			return ex{}, invalid("%s", sql.AtPos(e, "Aggregate '"+f.Name.Name+"' is not allowed here"))
		}
	}
	switch x := e.(type) {
	case *sql.ColumnRef:
		if t.post != nil {
			return ex{}, invalid("%s", sql.AtPos(x, "Expression '"+x.Column().Name+"' is not being grouped"))
		}
		c, err := t.resolve(x)
		if err != nil {
			return ex{}, err
		}
		return ex{src: quoteIdent(c.native), typ: c.typ, col: c.native}, nil
	case *sql.NumberLit:
		if x.IsInteger() {
			if n, err := x.Int64(); err == nil {
				return ex{src: longLit(n), typ: tBigint, lit: n, isLit: true}, nil
			}
		}
		f, err := x.Float64()
		if err != nil {
			return ex{}, invalid("%s", sql.AtPos(x, "Invalid number "+x.Text))
		}
		return ex{src: doubleLit(f), typ: tDouble, lit: f, isLit: true}, nil
	case *sql.StringLit:
		return ex{src: quoteString(x.Value), typ: tVarchar, lit: x.Value, isLit: true}, nil
	case *sql.BoolLit:
		n := int64(0)
		if x.Value {
			n = 1
		}
		return ex{src: longLit(n), typ: tBoolean, lit: n, isLit: true}, nil
	case *sql.NullLit:
		return ex{src: "null", typ: tVarchar, lit: nil, isLit: true}, nil
	case *sql.TypedLit:
		ms, err := t.p.parseTimestamp(x.Value)
		if err != nil || x.Kind == sql.TimeLit {
			return ex{}, invalid("%s", sql.AtPos(x, "Illegal "+x.Kind.String()+" literal '"+x.Value+"'"))
		}
		return ex{src: longLit(ms), typ: tTimestamp, lit: ms, isLit: true}, nil
	case *sql.Param:
		return t.param(x)
	case *sql.UnaryExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		switch x.Op {
		case sql.OpNot:
			return ex{src: "(!" + a.src + ")", typ: tBoolean}, nil
		case sql.OpNeg:
			if a.isLit {
				switch v := a.lit.(type) {
				case int64:
					return ex{src: longLit(-v), typ: a.typ, lit: -v, isLit: true}, nil
				case float64:
					return ex{src: doubleLit(-v), typ: a.typ, lit: -v, isLit: true}, nil
				}
			}
			return ex{src: "(-" + a.src + ")", typ: a.typ}, nil
		}
		return a, nil
	case *sql.BinaryExpr:
		return t.binary(x)
	case *sql.IsExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		if x.What == sql.IsNull && neverNull(x.X) {
			return notNullCheck(x.Not), nil
		}
		var src string
		switch x.What {
		case sql.IsNull, sql.IsUnknown:
			src = "isnull(" + a.src + ")"
		case sql.IsTrue:
			src = "(" + a.src + " > 0)"
		case sql.IsFalse:
			src = "(" + a.src + " <= 0)"
		}
		if x.Not {
			src = "(!" + src + ")"
		}
		return ex{src: src, typ: tBoolean}, nil
	case *sql.BetweenExpr:
		if x.Symmetric {
			return ex{}, unsupported("%s", sql.AtPos(x, "BETWEEN SYMMETRIC is not supported"))
		}
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		lo, err := t.expr(x.Low)
		if err != nil {
			return ex{}, err
		}
		hi, err := t.expr(x.High)
		if err != nil {
			return ex{}, err
		}
		src := "((" + a.src + " >= " + lo.src + ") && (" + a.src + " <= " + hi.src + "))"
		if x.Not {
			src = "(!" + src + ")"
		}
		return ex{src: src, typ: tBoolean}, nil
	case *sql.InExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		vals, err := t.inValues(x)
		if err != nil {
			return ex{}, err
		}
		if len(vals) == 0 {
			// IN of nothing is false, NOT IN of nothing true.
			if x.Not {
				return ex{src: "1", typ: tBoolean}, nil
			}
			return ex{src: "0", typ: tBoolean}, nil
		}
		parts := make([]string, len(vals))
		for i, b := range vals {
			parts[i] = "(" + a.src + " == " + b.src + ")"
		}
		src := "(" + strings.Join(parts, " || ") + ")"
		if x.Not {
			src = "(!" + src + ")"
		}
		return ex{src: src, typ: tBoolean}, nil
	case *sql.LikeExpr:
		if x.Similar {
			return ex{}, unsupported("%s", sql.AtPos(x, "SIMILAR TO is not supported"))
		}
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		pat, ok := x.Pattern.(*sql.StringLit)
		if !ok {
			return ex{}, unsupported("%s", sql.AtPos(x, "LIKE needs a literal pattern"))
		}
		args := a.src + ", " + quoteString(pat.Value)
		if x.Escape != nil {
			esc, ok := x.Escape.(*sql.StringLit)
			if !ok {
				return ex{}, unsupported("%s", sql.AtPos(x, "LIKE needs a literal escape"))
			}
			args += ", " + quoteString(esc.Value)
		}
		src := "like(" + args + ")"
		if x.Not {
			src = "(!" + src + ")"
		}
		return ex{src: src, typ: tBoolean}, nil
	case *sql.CaseExpr:
		return t.caseExpr(x)
	case *sql.CastExpr:
		return t.cast(x)
	case *sql.FloorCeilExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		p := x.Unit.Period()
		if p == "" {
			return ex{}, unsupported("%s", sql.AtPos(x, "FLOOR/CEIL to "+x.Unit.String()+" is not supported"))
		}
		fn := "timestamp_floor"
		if x.Ceil {
			fn = "timestamp_ceil"
		}
		return ex{src: fn + "(" + a.src + ", '" + p + "', null, " + quoteString(t.p.tzName) + ")", typ: tTimestamp}, nil
	case *sql.ExtractExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		return ex{src: "timestamp_extract(" + a.src + ", '" + x.Unit.String() + "', " + quoteString(t.p.tzName) + ")", typ: tBigint}, nil
	case *sql.SubstringExpr:
		args := []sql.Expr{x.X, x.From}
		if x.For != nil {
			args = append(args, x.For)
		}
		return t.call(&sql.FuncCall{Name: sql.Ident{Name: "SUBSTRING"}, Args: args}, x)
	case *sql.TrimExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return ex{}, err
		}
		fn := map[sql.TrimSide]string{sql.TrimBoth: "trim", sql.TrimLeading: "ltrim", sql.TrimTrailing: "rtrim"}[x.Side]
		src := fn + "(" + a.src
		if x.Chars != nil {
			c, err := t.expr(x.Chars)
			if err != nil {
				return ex{}, err
			}
			src += ", " + c.src
		}
		return ex{src: src + ")", typ: tVarchar}, nil
	case *sql.FuncCall:
		return t.call(x, x)
	case *sql.TimestampArith:
		return t.timestampArith(x)
	case *sql.SubqueryExpr:
		// A scalar subquery runs first, like an IN subquery: its one value
		// (NULL for no row) is a literal of the outer query.
		vals, err := t.inValues(&sql.InExpr{X: x, Query: x.Query})
		if err != nil {
			return ex{}, err
		}
		switch len(vals) {
		case 0:
			return ex{src: "null", typ: tVarchar, isLit: true}, nil
		case 1:
			return vals[0], nil
		}
		return ex{}, invalid("%s", sql.AtPos(x, "A scalar subquery returned more than one row"))
	}
	if v, ok, err := t.arrayExpr(e); ok {
		return v, err
	}
	return ex{}, unsupported("%s", sql.AtPos(e, "Expression '"+e.String()+"' is not supported"))
}

func (t *translator) param(x *sql.Param) (ex, error) {
	if x.Index >= len(t.p.req.Parameters) {
		return ex{}, invalid("%s", sql.AtPos(x, "No value bound for parameter (position ["+strconv.Itoa(x.Index+1)+"])"))
	}
	pv := t.p.req.Parameters[x.Index]
	switch v := pv.Value.(type) {
	case nil:
		return ex{src: "null", typ: tVarchar, isLit: true}, nil
	case string:
		switch strings.ToUpper(pv.Type) {
		case "TIMESTAMP", "DATE":
			ms, err := t.p.parseTimestamp(v)
			if err != nil {
				return ex{}, invalid("%s", sql.AtPos(x, "Illegal TIMESTAMP parameter '"+v+"'"))
			}
			return ex{src: longLit(ms), typ: tTimestamp, lit: ms, isLit: true}, nil
		}
		return ex{src: quoteString(v), typ: tVarchar, lit: v, isLit: true}, nil
	case bool:
		n := int64(0)
		if v {
			n = 1
		}
		return ex{src: longLit(n), typ: tBoolean, lit: n, isLit: true}, nil
	case float64:
		if v == math.Trunc(v) && strings.ToUpper(pv.Type) != "DOUBLE" && strings.ToUpper(pv.Type) != "FLOAT" && math.Abs(v) < 1<<53 {
			return ex{src: longLit(int64(v)), typ: tBigint, lit: int64(v), isLit: true}, nil
		}
		return ex{src: doubleLit(v), typ: tDouble, lit: v, isLit: true}, nil
	}
	return ex{}, invalid("%s", sql.AtPos(x, "Unsupported parameter value"))
}

var compareOps = map[sql.BinaryOp]string{sql.OpEq: "==", sql.OpNe: "!=", sql.OpLt: "<", sql.OpLe: "<=", sql.OpGt: ">", sql.OpGe: ">="}
var arithOps = map[sql.BinaryOp]string{sql.OpAdd: "+", sql.OpSub: "-", sql.OpMul: "*", sql.OpDiv: "/", sql.OpMod: "%"}

func (t *translator) binary(x *sql.BinaryExpr) (ex, error) {
	if iv, ok := x.Right.(*sql.IntervalLit); ok && (x.Op == sql.OpAdd || x.Op == sql.OpSub) {
		a, err := t.expr(x.Left)
		if err != nil {
			return ex{}, err
		}
		p := iv.Unit.Period()
		if p == "" || iv.ToUnit != sql.UnitNone {
			return ex{}, unsupported("%s", sql.AtPos(x, "INTERVAL '"+iv.Value+"' "+iv.Unit.String()+" is not supported"))
		}
		n, err := strconv.Atoi(iv.Value)
		if err != nil {
			return ex{}, unsupported("%s", sql.AtPos(iv, "INTERVAL '"+iv.Value+"' is not supported"))
		}
		if iv.Negative != (x.Op == sql.OpSub) {
			n = -n
		}
		return ex{src: "timestamp_shift(" + a.src + ", '" + p + "', " + strconv.Itoa(n) + ", " + quoteString(t.p.tzName) + ")", typ: tTimestamp}, nil
	}
	a, err := t.expr(x.Left)
	if err != nil {
		return ex{}, err
	}
	b, err := t.expr(x.Right)
	if err != nil {
		return ex{}, err
	}
	if a.typ == tTimestamp && b.typ == tVarchar && b.isLit {
		if b, err = t.timestampLit(x.Right, b); err != nil {
			return ex{}, err
		}
	}
	if b.typ == tTimestamp && a.typ == tVarchar && a.isLit {
		if a, err = t.timestampLit(x.Left, a); err != nil {
			return ex{}, err
		}
	}
	switch x.Op {
	case sql.OpAnd:
		return ex{src: "(" + a.src + " && " + b.src + ")", typ: tBoolean}, nil
	case sql.OpOr:
		return ex{src: "(" + a.src + " || " + b.src + ")", typ: tBoolean}, nil
	case sql.OpConcat:
		return ex{src: "concat(" + a.src + ", " + b.src + ")", typ: tVarchar}, nil
	case sql.OpIsDistinctFrom, sql.OpIsNotDistinctFrom:
		src := "((isnull(" + a.src + ") && isnull(" + b.src + ")) || (notnull(" + a.src + ") && notnull(" + b.src + ") && (" + a.src + " == " + b.src + ")))"
		if x.Op == sql.OpIsDistinctFrom {
			src = "(!" + src + ")"
		}
		return ex{src: src, typ: tBoolean}, nil
	}
	if op, ok := compareOps[x.Op]; ok {
		return ex{src: "(" + a.src + " " + op + " " + b.src + ")", typ: tBoolean}, nil
	}
	op := arithOps[x.Op]
	typ := tBigint
	switch {
	case a.typ == tDouble || b.typ == tDouble || a.typ == tVarchar || b.typ == tVarchar:
		typ = tDouble
	case a.typ == tFloat || b.typ == tFloat:
		typ = tFloat
	}
	if x.Op == sql.OpDiv && typ == tBigint {
		return ex{src: "div(" + a.src + ", " + b.src + ")", typ: typ}, nil
	}
	return ex{src: "(" + a.src + " " + op + " " + b.src + ")", typ: typ}, nil
}

// timestampLit reads a string literal compared with a timestamp as a
// timestamp, as Druid's SQL does.
func (t *translator) timestampLit(n sql.Expr, e ex) (ex, error) {
	ms, err := t.p.parseTimestamp(e.lit.(string))
	if err != nil {
		return ex{}, invalid("%s", sql.AtPos(n, "Cannot apply comparison to TIMESTAMP and '"+e.lit.(string)+"'"))
	}
	return ex{src: longLit(ms), typ: tTimestamp, lit: ms, isLit: true}, nil
}

func (t *translator) caseExpr(x *sql.CaseExpr) (ex, error) {
	var parts []string
	typ := ""
	note := func(e ex) {
		if e.isLit && e.lit == nil {
			return
		}
		switch {
		case typ == "":
			typ = e.typ
		case typ != e.typ && numeric(typ) && numeric(e.typ):
			typ = tDouble
		}
	}
	fn := "case_searched("
	if x.Operand != nil {
		op, err := t.expr(x.Operand)
		if err != nil {
			return ex{}, err
		}
		fn = "case_simple("
		parts = append(parts, op.src)
	}
	for _, w := range x.Whens {
		c, err := t.expr(w.Cond)
		if err != nil {
			return ex{}, err
		}
		r, err := t.expr(w.Result)
		if err != nil {
			return ex{}, err
		}
		note(r)
		parts = append(parts, c.src, r.src)
	}
	if x.Else != nil {
		e, err := t.expr(x.Else)
		if err != nil {
			return ex{}, err
		}
		note(e)
		parts = append(parts, e.src)
	} else {
		parts = append(parts, "null")
	}
	if typ == "" {
		typ = tVarchar
	}
	return ex{src: fn + strings.Join(parts, ", ") + ")", typ: typ}, nil
}

func (t *translator) cast(x *sql.CastExpr) (ex, error) {
	a, err := t.expr(x.X)
	if err != nil {
		return ex{}, err
	}
	if x.Type.ArrayDepth > 0 || x.Type.Complex != "" {
		return ex{}, unsupported("%s", sql.AtPos(x, "CAST to "+x.Type.String()+" is not supported"))
	}
	switch x.Type.Name {
	case "VARCHAR", "CHAR", "STRING":
		if a.typ == tTimestamp {
			return ex{src: "timestamp_format(" + a.src + ", 'yyyy-MM-dd HH:mm:ss', " + quoteString(t.p.tzName) + ")", typ: tVarchar}, nil
		}
		return ex{src: "cast(" + a.src + ", 'STRING')", typ: tVarchar}, nil
	case "BIGINT", "INTEGER", "INT", "SMALLINT", "TINYINT":
		return ex{src: "cast(" + a.src + ", 'LONG')", typ: tBigint}, nil
	case "DOUBLE", "DECIMAL", "REAL", "NUMERIC":
		return ex{src: "cast(" + a.src + ", 'DOUBLE')", typ: tDouble}, nil
	case "FLOAT":
		return ex{src: "cast(" + a.src + ", 'DOUBLE')", typ: tFloat}, nil
	case "BOOLEAN":
		return ex{src: "(" + a.src + " != 0)", typ: tBoolean}, nil
	case "TIMESTAMP", "DATE":
		src := a.src
		if a.typ == tVarchar {
			src = "timestamp_parse(" + a.src + ", null, " + quoteString(t.p.tzName) + ")"
		}
		if x.Type.Name == "DATE" {
			src = "timestamp_floor(" + src + ", 'P1D', null, " + quoteString(t.p.tzName) + ")"
		}
		return ex{src: src, typ: tTimestamp}, nil
	}
	return ex{}, unsupported("%s", sql.AtPos(x, "CAST to "+x.Type.Name+" is not supported"))
}

// fn describes a scalar function: native name, argument bounds and the
// result type ("" = the first argument's).
type fn struct {
	native   string
	min, max int
	typ      string
}

var scalarFns = map[string]fn{
	"CONCAT": {"concat", 1, -1, tVarchar}, "TEXTCAT": {"concat", 2, 2, tVarchar},
	"UPPER": {"upper", 1, 1, tVarchar}, "LOWER": {"lower", 1, 1, tVarchar},
	"LENGTH": {"strlen", 1, 1, tBigint}, "CHAR_LENGTH": {"strlen", 1, 1, tBigint},
	"CHARACTER_LENGTH": {"strlen", 1, 1, tBigint}, "STRLEN": {"strlen", 1, 1, tBigint},
	"LEFT": {"left", 2, 2, tVarchar}, "RIGHT": {"right", 2, 2, tVarchar},
	"REPLACE": {"replace", 3, 3, tVarchar}, "TRIM": {"trim", 1, 2, tVarchar},
	"BTRIM": {"trim", 1, 2, tVarchar}, "LTRIM": {"ltrim", 1, 2, tVarchar}, "RTRIM": {"rtrim", 1, 2, tVarchar},
	"LPAD": {"lpad", 2, 3, tVarchar}, "RPAD": {"rpad", 2, 3, tVarchar},
	"REVERSE": {"reverse", 1, 1, tVarchar}, "REPEAT": {"repeat", 2, 2, tVarchar},
	"ABS": {"abs", 1, 1, ""}, "SQRT": {"sqrt", 1, 1, tDouble}, "EXP": {"exp", 1, 1, tDouble},
	"LN": {"log", 1, 1, tDouble}, "LOG10": {"log10", 1, 1, tDouble}, "POWER": {"pow", 2, 2, tDouble},
	"ROUND":    {"round", 1, 2, ""},
	"GREATEST": {"greatest", 1, -1, ""}, "LEAST": {"least", 1, -1, ""},
	"NVL": {"nvl", 2, 2, ""}, "COALESCE": {"coalesce", 1, -1, ""},
	"TIME_PARSE": {"timestamp_parse", 1, 3, tTimestamp}, "TIME_FORMAT": {"timestamp_format", 1, 3, tVarchar},
	"TIME_FLOOR": {"timestamp_floor", 2, 4, tTimestamp}, "TIME_CEIL": {"timestamp_ceil", 2, 4, tTimestamp},
	"TIME_SHIFT":          {"timestamp_shift", 3, 4, tTimestamp},
	"MILLIS_TO_TIMESTAMP": {"", 1, 1, tTimestamp}, "TIMESTAMP_TO_MILLIS": {"", 1, 1, tBigint},
}

func (t *translator) call(x *sql.FuncCall, at sql.Node) (ex, error) {
	name := strings.ToUpper(x.Name.Name)
	if x.Over != nil {
		return ex{}, unsupported("%s", sql.AtPos(at, "Window functions are not supported"))
	}
	if isAggregate(x) {
		return ex{}, invalid("%s", sql.AtPos(at, "Aggregate '"+x.Name.Name+"' is not allowed here"))
	}
	args := make([]ex, len(x.Args))
	for i, a := range x.Args {
		v, err := t.expr(a)
		if err != nil {
			return ex{}, err
		}
		args[i] = v
	}
	srcs := func() string {
		s := make([]string, len(args))
		for i, a := range args {
			s[i] = a.src
		}
		return strings.Join(s, ", ")
	}
	count := func(min, max int) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			return invalid("%s", sql.AtPos(at, "Invalid number of arguments to function '"+name+"'"))
		}
		return nil
	}
	tz := quoteString(t.p.tzName)
	switch name {
	case "MOD":
		if err := count(2, 2); err != nil {
			return ex{}, err
		}
		return ex{src: "(" + args[0].src + " % " + args[1].src + ")", typ: args[0].typ}, nil
	case "NULLIF":
		if err := count(2, 2); err != nil {
			return ex{}, err
		}
		return ex{src: "if((" + args[0].src + " == " + args[1].src + "), null, " + args[0].src + ")", typ: args[0].typ}, nil
	case "SUBSTRING", "SUBSTR":
		if err := count(2, 3); err != nil {
			return ex{}, err
		}
		n := "-1"
		if len(args) == 3 {
			n = args[2].src
		}
		return ex{src: "substring(" + args[0].src + ", (" + args[1].src + " - 1), " + n + ")", typ: tVarchar}, nil
	case "STRPOS", "POSITION":
		if err := count(2, 2); err != nil {
			return ex{}, err
		}
		return ex{src: "(strpos(" + srcs() + ") + 1)", typ: tBigint}, nil
	case "FLOOR", "CEIL":
		if err := count(1, 1); err != nil {
			return ex{}, err
		}
		typ := args[0].typ
		if typ != tBigint {
			typ = tDouble
		}
		return ex{src: strings.ToLower(name) + "(" + args[0].src + ")", typ: typ}, nil
	case "TIME_EXTRACT":
		if err := count(1, 3); err != nil {
			return ex{}, err
		}
		unit := "'MILLISECOND'"
		if len(args) > 1 {
			unit = args[1].src
		}
		z := tz
		if len(args) > 2 {
			z = args[2].src
		}
		return ex{src: "timestamp_extract(" + args[0].src + ", " + unit + ", " + z + ")", typ: tBigint}, nil
	case "LOOKUP":
		return t.lookupCall(x, args, at)
	case "DATE_TRUNC":
		if err := count(2, 2); err != nil {
			return ex{}, err
		}
		u, ok := x.Args[0].(*sql.StringLit)
		p := ""
		if ok {
			p = unitPeriods[strings.ToUpper(u.Value)]
		}
		if p == "" {
			return ex{}, unsupported("%s", sql.AtPos(at, "DATE_TRUNC needs a literal unit (SECOND … YEAR)"))
		}
		return ex{src: "timestamp_floor(" + args[1].src + ", '" + p + "', null, " + tz + ")", typ: tTimestamp}, nil
	}
	if pf := postFns[name]; pf != nil {
		return pf(t, x, args)
	}
	if v, ok, err := t.arrayCall(name, args, at); ok {
		return v, err
	}
	f, ok := scalarFns[name]
	if !ok {
		return ex{}, unsupported("%s", sql.AtPos(at, "Function '"+x.Name.Name+"' is not supported"))
	}
	if err := count(f.min, f.max); err != nil {
		return ex{}, err
	}
	typ := f.typ
	if typ == "" {
		typ = args[0].typ
	}
	switch name {
	case "MILLIS_TO_TIMESTAMP", "TIMESTAMP_TO_MILLIS":
		return ex{src: args[0].src, typ: typ}, nil
	case "TIME_FLOOR", "TIME_CEIL", "TIME_SHIFT", "TIME_PARSE", "TIME_FORMAT":
		// Druid's SQL time functions default to the query's time zone.
		s := srcs()
		full := map[string]int{"TIME_FLOOR": 4, "TIME_CEIL": 4, "TIME_SHIFT": 4, "TIME_PARSE": 3, "TIME_FORMAT": 3}[name]
		if len(args) < full {
			if (name == "TIME_FLOOR" || name == "TIME_CEIL") && len(args) == 2 {
				s += ", null"
			}
			if (name == "TIME_PARSE" || name == "TIME_FORMAT") && len(args) == 1 {
				s += ", null"
			}
			s += ", " + tz
		}
		return ex{src: f.native + "(" + s + ")", typ: typ}, nil
	}
	return ex{src: f.native + "(" + srcs() + ")", typ: typ}, nil
}

var unitPeriods = map[string]string{
	"SECOND": "PT1S", "MINUTE": "PT1M", "HOUR": "PT1H", "DAY": "P1D", "WEEK": "P1W",
	"MONTH": "P1M", "QUARTER": "P3M", "YEAR": "P1Y",
}

// parseTimestamp reads a SQL timestamp literal ("2000-01-01 00:00:00",
// "2000-01-01", ISO forms) in the query's time zone.
func (p *planner) parseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04"} {
		if tm, err := time.ParseInLocation(layout, s, p.tz); err == nil {
			return tm.UnixMilli(), nil
		}
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return tm.UnixMilli(), nil
}

// fixedUnitMillis are the units TIMESTAMPDIFF counts by division.
var fixedUnitMillis = map[sql.TimeUnit]int64{
	sql.UnitMillisecond: 1, sql.UnitSecond: 1000, sql.UnitMinute: 60_000, sql.UnitHour: 3_600_000,
	sql.UnitDay: 86_400_000, sql.UnitWeek: 7 * 86_400_000,
}

// timestampArith is TIMESTAMPADD(unit, n, ts) (a shift in the query's time
// zone) and TIMESTAMPDIFF(unit, a, b) for units of fixed length.
func (t *translator) timestampArith(x *sql.TimestampArith) (ex, error) {
	a, err := t.expr(x.A)
	if err != nil {
		return ex{}, err
	}
	b, err := t.expr(x.B)
	if err != nil {
		return ex{}, err
	}
	if !x.Diff {
		p := x.Unit.Period()
		if p == "" {
			return ex{}, unsupported("%s", sql.AtPos(x, "TIMESTAMPADD by "+x.Unit.String()+" is not supported"))
		}
		return ex{src: "timestamp_shift(" + b.src + ", '" + p + "', " + a.src + ", " + quoteString(t.p.tzName) + ")", typ: tTimestamp}, nil
	}
	ms, ok := fixedUnitMillis[x.Unit]
	if !ok {
		return ex{}, unsupported("%s", sql.AtPos(x, "TIMESTAMPDIFF in "+x.Unit.String()+" is not supported"))
	}
	return ex{src: "div((" + b.src + " - " + a.src + "), " + longLit(ms) + ")", typ: tBigint}, nil
}

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
