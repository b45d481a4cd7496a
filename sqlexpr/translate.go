package sqlexpr

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"strata/sql"
)

// Expr is a translated expression: native expression source and SQL type.
// Col is the native column name when the expression is a plain column
// reference (as the Scope said); IsLit marks a literal, whose value (string,
// int64, float64 or nil) is Lit.
type Expr struct {
	Src   string
	Type  string
	Col   string
	Lit   any
	IsLit bool
}

// IsNull reports whether e is the NULL literal.
func (e Expr) IsNull() bool { return e.IsLit && e.Lit == nil }

// Scope resolves the column references of the expressions it translates.
type Scope interface {
	Column(ref *sql.ColumnRef) (Expr, error)
}

// Interceptor is a Scope that answers some expressions before they are
// translated (ok true): an aggregating query's group keys and aggregates.
type Interceptor interface {
	Intercept(e sql.Expr) (Expr, bool, error)
}

// Functions is a Scope that plans function calls of its own (ok true):
// array functions, lookups, post-aggregation functions. It is asked before
// the shared function table, with the arguments translated.
type Functions interface {
	Call(name string, call *sql.FuncCall, args []Expr) (Expr, bool, error)
}

// Others is a Scope that translates expression forms the shared translator
// does not (array literals and subscripts, ...).
type Others interface {
	Other(e sql.Expr) (Expr, bool, error)
}

// Subqueries is a Scope that runs the subquery of "x IN (subquery)" or of
// a scalar subquery and returns its rows' values as literals.
type Subqueries interface {
	Subquery(x *sql.InExpr) ([]Expr, error)
}

// Param is one dynamic parameter ("?") value, as the SQL API sends it.
type Param struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Env is what every translation of one statement shares.
type Env struct {
	// TZ is the query's time zone (sqlTimeZone): timestamp literals are
	// read in it and the time functions default to it. nil is UTC.
	TZ     *time.Location
	TZName string
	// Now is CURRENT_TIMESTAMP, in milliseconds. Functions read it through
	// ReadNow.
	Now    int64
	Params []Param
	// NowRead is set once a translation read Now (CURRENT_TIMESTAMP,
	// CURRENT_DATE): what was translated holds only at that instant, so a
	// plan cache must not keep it.
	NowRead bool
}

// ReadNow is Now, noting that the translation depends on it; a nil Env's
// is the epoch.
func (env *Env) ReadNow() int64 {
	if env == nil {
		return 0
	}
	env.NowRead = true
	return env.Now
}

func (env *Env) loc() *time.Location {
	if env == nil || env.TZ == nil {
		return time.UTC
	}
	return env.TZ
}

func (env *Env) tz() string {
	if env == nil || env.TZName == "" {
		return "'UTC'"
	}
	return QuoteString(env.TZName)
}

// Translator translates expressions of one Scope.
type Translator struct {
	Scope Scope
	Env   *Env
}

// Translate translates e; a nil env is UTC, no parameters, and the epoch
// as CURRENT_TIMESTAMP.
func Translate(sc Scope, env *Env, e sql.Expr) (Expr, error) {
	if env == nil {
		env = &Env{}
	}
	return (&Translator{Scope: sc, Env: env}).Expr(e)
}

func boolLit(b bool) Expr {
	if b {
		return Expr{Src: "1", Type: Boolean, Lit: int64(1), IsLit: true}
	}
	return Expr{Src: "0", Type: Boolean, Lit: int64(0), IsLit: true}
}

func boolean(src string) Expr { return Expr{Src: src, Type: Boolean} }

func not(src string, neg bool) string {
	if neg {
		return "(!" + src + ")"
	}
	return src
}

// Expr translates e.
func (t *Translator) Expr(e sql.Expr) (Expr, error) {
	if ic, ok := t.Scope.(Interceptor); ok {
		if v, ok, err := ic.Intercept(e); ok || err != nil {
			return v, err
		}
	}
	switch x := e.(type) {
	case *sql.ColumnRef:
		v, err := t.Scope.Column(x)
		if err != nil && isPI(x) {
			// Calcite reads a bare PI that names no column as the constant.
			return Expr{Src: "pi()", Type: Double}, nil
		}
		return v, err
	case *sql.NumberLit:
		if x.IsInteger() {
			if n, err := x.Int64(); err == nil {
				return Expr{Src: LongLit(n), Type: Bigint, Lit: n, IsLit: true}, nil
			}
		}
		f, err := x.Float64()
		if err != nil {
			return Expr{}, invalidAt(x, "Invalid number %s", x.Text)
		}
		return Expr{Src: DoubleLit(f), Type: Double, Lit: f, IsLit: true}, nil
	case *sql.StringLit:
		return Expr{Src: QuoteString(x.Value), Type: Varchar, Lit: x.Value, IsLit: true}, nil
	case *sql.BoolLit:
		return boolLit(x.Value), nil
	case *sql.NullLit:
		return Expr{Src: "null", Type: Varchar, IsLit: true}, nil
	case *sql.TypedLit:
		if x.Kind != sql.TimestampLit && x.Kind != sql.DateLit {
			return Expr{}, invalidAt(x, "Illegal %s literal '%s'", x.Kind, x.Value)
		}
		ms, err := ParseTimestamp(x.Value, t.Env.loc())
		if err != nil {
			return Expr{}, invalidAt(x, "Illegal %s literal '%s'", x.Kind, x.Value)
		}
		return Expr{Src: LongLit(ms), Type: Timestamp, Lit: ms, IsLit: true}, nil
	case *sql.IntervalLit:
		return Expr{}, invalidAt(x, "INTERVAL literals are only supported added to or subtracted from a timestamp")
	case *sql.Param:
		return t.param(x)
	case *sql.UnaryExpr:
		if n, ok := x.X.(*sql.NumberLit); ok && x.Op == sql.OpNeg && n.Text == "9223372036854775808" {
			// The least BIGINT, whose magnitude alone is no BIGINT.
			return Expr{Src: LongLit(math.MinInt64), Type: Bigint, Lit: int64(math.MinInt64), IsLit: true}, nil
		}
		a, err := t.Expr(x.X)
		if err != nil {
			return Expr{}, err
		}
		switch x.Op {
		case sql.OpNot:
			return boolean("(!" + a.Src + ")"), nil
		case sql.OpNeg:
			if a.IsLit {
				switch v := a.Lit.(type) {
				case int64:
					if v != math.MinInt64 {
						return Expr{Src: LongLit(-v), Type: a.Type, Lit: -v, IsLit: true}, nil
					}
				case float64:
					return Expr{Src: DoubleLit(-v), Type: a.Type, Lit: -v, IsLit: true}, nil
				}
			}
			return Expr{Src: "(-" + a.Src + ")", Type: a.Type}, nil
		}
		return a, nil
	case *sql.BinaryExpr:
		return t.binary(x)
	case *sql.IsExpr:
		return t.is(x)
	case *sql.BetweenExpr:
		a, err := t.Expr(x.X)
		if err != nil {
			return Expr{}, err
		}
		lo, err := t.comparand(x.Low, a)
		if err != nil {
			return Expr{}, err
		}
		hi, err := t.comparand(x.High, a)
		if err != nil {
			return Expr{}, err
		}
		src := "((" + a.Src + " >= " + lo.Src + ") && (" + a.Src + " <= " + hi.Src + "))"
		if x.Symmetric {
			src = "(" + src + " || ((" + a.Src + " >= " + hi.Src + ") && (" + a.Src + " <= " + lo.Src + ")))"
		}
		return boolean(not(src, x.Not)), nil
	case *sql.InExpr:
		return t.in(x)
	case *sql.LikeExpr:
		if x.Similar {
			return Expr{}, unsupportedAt(x, "SIMILAR TO is not supported")
		}
		a, err := t.Expr(x.X)
		if err != nil {
			return Expr{}, err
		}
		// Druid's like() takes its pattern and escape as literals.
		pat, ok := x.Pattern.(*sql.StringLit)
		if !ok {
			return Expr{}, unsupportedAt(x, "LIKE needs a literal pattern")
		}
		args := a.Src + ", " + QuoteString(pat.Value)
		if x.Escape != nil {
			esc, ok := x.Escape.(*sql.StringLit)
			if !ok {
				return Expr{}, unsupportedAt(x, "LIKE needs a literal escape")
			}
			if utf8.RuneCountInString(esc.Value) != 1 {
				return Expr{}, invalidAt(x.Escape, "Invalid escape character '%s'", esc.Value)
			}
			args += ", " + QuoteString(esc.Value)
		}
		return boolean(not("like("+args+")", x.Not)), nil
	case *sql.CaseExpr:
		return t.caseExpr(x)
	case *sql.CastExpr:
		return t.cast(x)
	case *sql.FuncCall:
		return t.call(x)
	case *sql.FloorCeilExpr:
		a, err := t.Expr(x.X)
		if err != nil {
			return Expr{}, err
		}
		p := x.Unit.Period()
		if p == "" || x.Unit == sql.UnitMillisecond {
			return Expr{}, unsupportedAt(x, "FLOOR/CEIL to %s is not supported", x.Unit)
		}
		fn := "timestamp_floor"
		if x.Ceil {
			fn = "timestamp_ceil"
		}
		return Expr{Src: fn + "(" + a.Src + ", '" + p + "', null, " + t.Env.tz() + ")", Type: Timestamp}, nil
	case *sql.ExtractExpr:
		a, err := t.Expr(x.X)
		if err != nil {
			return Expr{}, err
		}
		unit := x.Unit.String()
		switch x.Unit {
		case sql.UnitDOW:
			unit = "DOW"
		case sql.UnitISODOW:
			unit = "ISODOW"
		case sql.UnitISOYear:
			unit = "ISOYEAR"
		}
		return Expr{Src: "timestamp_extract(" + a.Src + ", '" + unit + "', " + t.Env.tz() + ")", Type: Bigint}, nil
	case *sql.TimestampArith:
		return t.timestampArith(x)
	case *sql.PositionExpr:
		sub, err := t.Expr(x.Sub)
		if err != nil {
			return Expr{}, err
		}
		str, err := t.Expr(x.Str)
		if err != nil {
			return Expr{}, err
		}
		from := "0"
		if x.From != nil {
			f, err := t.Expr(x.From)
			if err != nil {
				return Expr{}, err
			}
			from = "(" + f.Src + " - 1)"
		}
		return Expr{Src: "(strpos(" + str.Src + ", " + sub.Src + ", " + from + ") + 1)", Type: Bigint}, nil
	case *sql.TrimExpr:
		a, err := t.Expr(x.X)
		if err != nil {
			return Expr{}, err
		}
		fn := map[sql.TrimSide]string{sql.TrimBoth: "trim", sql.TrimLeading: "ltrim", sql.TrimTrailing: "rtrim"}[x.Side]
		src := fn + "(" + a.Src
		if x.Chars != nil {
			c, err := t.Expr(x.Chars)
			if err != nil {
				return Expr{}, err
			}
			src += ", " + c.Src
		}
		return Expr{Src: src + ")", Type: Varchar}, nil
	case *sql.SubstringExpr:
		args := []sql.Expr{x.X, x.From}
		if x.For != nil {
			args = append(args, x.For)
		}
		return t.callAt(&sql.FuncCall{Name: sql.Ident{Name: "SUBSTRING"}, Args: args}, x)
	case *sql.SubqueryExpr:
		// A scalar subquery runs first, like an IN subquery: its one value
		// (NULL for no row) is a literal of the outer query.
		sq, ok := t.Scope.(Subqueries)
		if !ok {
			return Expr{}, unsupportedAt(x, "Subqueries in expressions are not supported here")
		}
		vals, err := sq.Subquery(&sql.InExpr{X: x, Query: x.Query})
		if err != nil {
			return Expr{}, err
		}
		switch len(vals) {
		case 0:
			return Expr{Src: "null", Type: Varchar, IsLit: true}, nil
		case 1:
			return vals[0], nil
		}
		return Expr{}, invalidAt(x, "A scalar subquery returned more than one row")
	case *sql.ArrayLit:
		return t.arrayLit(x)
	case *sql.StarExpr:
		return Expr{}, invalidAt(x, "'*' is not allowed here")
	case *sql.NamedArg:
		return Expr{}, invalidAt(x, "named argument %s is not allowed here", x.Name.Name)
	}
	if o, ok := t.Scope.(Others); ok {
		if v, ok, err := o.Other(e); ok || err != nil {
			return v, err
		}
	}
	return Expr{}, unsupportedAt(e, "Expression '%s' is not supported", e.String())
}

// arrayLit is ARRAY[...]: its elements' type ignores NULLs; mixed numbers
// are DOUBLE and anything else mixed VARCHAR. Arrays do not nest.
func (t *Translator) arrayLit(x *sql.ArrayLit) (Expr, error) {
	vals := make([]Expr, len(x.Elems))
	elem := ""
	for i, el := range x.Elems {
		v, err := t.Expr(el)
		if err != nil {
			return Expr{}, err
		}
		if IsArray(v.Type) {
			return Expr{}, unsupportedAt(el, "Nested arrays are not supported")
		}
		vals[i] = v
		switch {
		case v.IsNull():
		case elem == "":
			elem = v.Type
		case elem != v.Type && Numeric(elem) && Numeric(v.Type):
			elem = Double
		case elem != v.Type:
			elem = Varchar
		}
	}
	if elem == "" {
		elem = Varchar
	}
	// The native array() types its elements by the first one, so an
	// element of another type, or a NULL, is cast to the array's
	// (ARRAY[1, 2.5] would otherwise hold 1 and 2, and ARRAY[NULL, 1]
	// strings).
	typ := ArrayOf(elem)
	native := map[string]string{Bigint: "LONG", Double: "DOUBLE"}[Elem(typ)]
	if native == "" {
		native = "STRING"
	}
	elems := make([]string, len(vals))
	for i, v := range vals {
		elems[i] = v.Src
		if v.IsNull() || ArrayOf(v.Type) != typ {
			elems[i] = "cast(" + v.Src + ", '" + native + "')"
		}
	}
	return Expr{Src: "array(" + strings.Join(elems, ", ") + ")", Type: typ}, nil
}

func (t *Translator) param(x *sql.Param) (Expr, error) {
	if t.Env == nil || x.Index >= len(t.Env.Params) {
		return Expr{}, invalidAt(x, "No value bound for parameter (position [%d])", x.Index+1)
	}
	p := t.Env.Params[x.Index]
	typ := strings.ToUpper(p.Type)
	switch v := p.Value.(type) {
	case nil:
		return Expr{Src: "null", Type: Varchar, IsLit: true}, nil
	case string:
		if typ == "TIMESTAMP" || typ == "DATE" {
			ms, err := ParseTimestamp(v, t.Env.loc())
			if err != nil {
				return Expr{}, invalidAt(x, "Illegal TIMESTAMP parameter '%s'", v)
			}
			return Expr{Src: LongLit(ms), Type: Timestamp, Lit: ms, IsLit: true}, nil
		}
		return Expr{Src: QuoteString(v), Type: Varchar, Lit: v, IsLit: true}, nil
	case bool:
		return boolLit(v), nil
	case float64:
		if typ == "DOUBLE" || typ == "FLOAT" || typ == "REAL" || typ == "DECIMAL" || v != math.Trunc(v) || math.Abs(v) >= 1<<53 {
			return Expr{Src: DoubleLit(v), Type: Double, Lit: v, IsLit: true}, nil
		}
		if typ == "TIMESTAMP" {
			return Expr{Src: LongLit(int64(v)), Type: Timestamp, Lit: int64(v), IsLit: true}, nil
		}
		return Expr{Src: LongLit(int64(v)), Type: Bigint, Lit: int64(v), IsLit: true}, nil
	case int64:
		return Expr{Src: LongLit(v), Type: Bigint, Lit: v, IsLit: true}, nil
	}
	return Expr{}, invalidAt(x, "Unsupported value of parameter (position [%d])", x.Index+1)
}

// comparand translates e, compared with a: a string literal compared with
// a timestamp is read as a timestamp in the query's time zone, as Calcite
// does.
func (t *Translator) comparand(e sql.Expr, a Expr) (Expr, error) {
	b, err := t.Expr(e)
	if err != nil {
		return Expr{}, err
	}
	return t.asTimestamp(e, b, a.Type)
}

func (t *Translator) asTimestamp(n sql.Node, b Expr, other string) (Expr, error) {
	s, ok := b.Lit.(string)
	if other != Timestamp || b.Type != Varchar || !b.IsLit || !ok {
		return b, nil
	}
	ms, err := ParseTimestamp(s, t.Env.loc())
	if err != nil {
		return Expr{}, invalidAt(n, "Cannot apply comparison to TIMESTAMP and '%s'", s)
	}
	return Expr{Src: LongLit(ms), Type: Timestamp, Lit: ms, IsLit: true}, nil
}

// is translates IS [NOT] NULL/TRUE/FALSE/UNKNOWN. TRUE and FALSE follow
// Druid's truthiness of numbers (istrue/isfalse: positive is true), and a
// NULL is neither, so IS NOT FALSE holds for it.
func (t *Translator) is(x *sql.IsExpr) (Expr, error) {
	a, err := t.Expr(x.X)
	if err != nil {
		return Expr{}, err
	}
	var src string
	switch x.What {
	case sql.IsNull, sql.IsUnknown:
		if a.IsLit {
			return boolLit((a.Lit == nil) != x.Not), nil
		}
		src = "isnull(" + a.Src + ")"
	case sql.IsTrue:
		src = "(nvl(" + a.Src + ", 0) > 0)"
	case sql.IsFalse:
		src = "(notnull(" + a.Src + ") && (" + a.Src + " <= 0))"
	}
	return boolean(not(src, x.Not)), nil
}

func (t *Translator) in(x *sql.InExpr) (Expr, error) {
	a, err := t.Expr(x.X)
	if err != nil {
		return Expr{}, err
	}
	var vals []Expr
	if x.Query != nil {
		sq, ok := t.Scope.(Subqueries)
		if !ok {
			return Expr{}, unsupportedAt(x, "IN (subquery) is not supported here")
		}
		if vals, err = sq.Subquery(x); err != nil {
			return Expr{}, err
		}
	} else {
		for _, it := range x.List {
			v, err := t.comparand(it, a)
			if err != nil {
				return Expr{}, err
			}
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		// IN of nothing is false, NOT IN of nothing true.
		return boolLit(x.Not), nil
	}
	parts := make([]string, len(vals))
	for i, b := range vals {
		parts[i] = "(" + a.Src + " == " + b.Src + ")"
	}
	return boolean(not("("+strings.Join(parts, " || ")+")", x.Not)), nil
}

var compareOps = map[sql.BinaryOp]string{sql.OpEq: "==", sql.OpNe: "!=", sql.OpLt: "<", sql.OpLe: "<=", sql.OpGt: ">", sql.OpGe: ">="}
var arithOps = map[sql.BinaryOp]string{sql.OpAdd: "+", sql.OpSub: "-", sql.OpMul: "*", sql.OpDiv: "/", sql.OpMod: "%"}

// ArithType is the SQL type of arithmetic over values of types a and b.
func ArithType(a, b string) string {
	switch {
	case a == Double || b == Double || a == Varchar || b == Varchar:
		return Double
	case a == Float || b == Float:
		return Float
	}
	return Bigint
}

func (t *Translator) binary(x *sql.BinaryExpr) (Expr, error) {
	if x.Op == sql.OpAdd || x.Op == sql.OpSub {
		if iv, ok := x.Right.(*sql.IntervalLit); ok {
			return t.shift(x.Left, iv, x.Op == sql.OpSub)
		}
		if iv, ok := x.Left.(*sql.IntervalLit); ok && x.Op == sql.OpAdd {
			return t.shift(x.Right, iv, false)
		}
	}
	a, err := t.Expr(x.Left)
	if err != nil {
		return Expr{}, err
	}
	b, err := t.Expr(x.Right)
	if err != nil {
		return Expr{}, err
	}
	if _, cmp := compareOps[x.Op]; cmp || x.Op == sql.OpIsDistinctFrom || x.Op == sql.OpIsNotDistinctFrom {
		if b, err = t.asTimestamp(x.Right, b, a.Type); err != nil {
			return Expr{}, err
		}
		if a, err = t.asTimestamp(x.Left, a, b.Type); err != nil {
			return Expr{}, err
		}
	}
	switch x.Op {
	case sql.OpAnd:
		return boolean("(" + a.Src + " && " + b.Src + ")"), nil
	case sql.OpOr:
		return boolean("(" + a.Src + " || " + b.Src + ")"), nil
	case sql.OpConcat:
		return Expr{Src: "concat(" + a.Src + ", " + b.Src + ")", Type: Varchar}, nil
	case sql.OpIsDistinctFrom, sql.OpIsNotDistinctFrom:
		src := "((isnull(" + a.Src + ") && isnull(" + b.Src + ")) || (notnull(" + a.Src + ") && notnull(" + b.Src + ") && (" + a.Src + " == " + b.Src + ")))"
		return boolean(not(src, x.Op == sql.OpIsDistinctFrom)), nil
	}
	if op, ok := compareOps[x.Op]; ok {
		return boolean("(" + a.Src + " " + op + " " + b.Src + ")"), nil
	}
	op, ok := arithOps[x.Op]
	if !ok {
		return Expr{}, unsupportedAt(x, "Operator %s is not supported", x.Op)
	}
	typ := ArithType(a.Type, b.Type)
	switch {
	case x.Op == sql.OpSub && a.Type == Timestamp && b.Type == Timestamp:
		typ = Bigint
	case (x.Op == sql.OpAdd || x.Op == sql.OpSub) && (a.Type == Timestamp || b.Type == Timestamp):
		typ = Timestamp
	}
	if x.Op == sql.OpDiv && typ == Bigint {
		return Expr{Src: "div(" + a.Src + ", " + b.Src + ")", Type: typ}, nil
	}
	return Expr{Src: "(" + a.Src + " " + op + " " + b.Src + ")", Type: typ}, nil
}

// shift translates ts ± INTERVAL '<n>' unit, a shift in the query's time
// zone.
func (t *Translator) shift(tsExpr sql.Expr, iv *sql.IntervalLit, negate bool) (Expr, error) {
	ts, err := t.Expr(tsExpr)
	if err != nil {
		return Expr{}, err
	}
	p := iv.Unit.Period()
	if p == "" || iv.ToUnit != sql.UnitNone {
		return Expr{}, unsupportedAt(iv, "INTERVAL '%s' %s is not supported", iv.Value, iv.Unit)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(iv.Value), 10, 64)
	if err != nil {
		return Expr{}, unsupportedAt(iv, "INTERVAL '%s' must be a whole number of %s", iv.Value, iv.Unit)
	}
	if iv.Negative != negate {
		n = -n
	}
	return Expr{Src: "timestamp_shift(" + ts.Src + ", '" + p + "', " + LongLit(n) + ", " + t.Env.tz() + ")", Type: Timestamp}, nil
}

func (t *Translator) caseExpr(x *sql.CaseExpr) (Expr, error) {
	var parts []string
	typ := ""
	note := func(e Expr) {
		if !e.IsNull() {
			typ = Merge(typ, e.Type)
		}
	}
	fn := "case_searched("
	var op Expr
	if x.Operand != nil {
		var err error
		if op, err = t.Expr(x.Operand); err != nil {
			return Expr{}, err
		}
		fn = "case_simple("
		parts = append(parts, op.Src)
	}
	for _, w := range x.Whens {
		c, err := t.comparand(w.Cond, op)
		if err != nil {
			return Expr{}, err
		}
		r, err := t.Expr(w.Result)
		if err != nil {
			return Expr{}, err
		}
		note(r)
		parts = append(parts, c.Src, r.Src)
	}
	els := "null"
	if x.Else != nil {
		e, err := t.Expr(x.Else)
		if err != nil {
			return Expr{}, err
		}
		note(e)
		els = e.Src
	}
	if typ == "" {
		typ = Varchar
	}
	return Expr{Src: fn + strings.Join(append(parts, els), ", ") + ")", Type: typ}, nil
}

// CastType is the SQL type a CAST or EXTEND names ("" when not supported).
func CastType(name string, arrayDepth int) string {
	var t string
	switch strings.ToUpper(name) {
	case "VARCHAR", "CHAR", "CHARACTER", "STRING":
		t = Varchar
	case "BIGINT", "INTEGER", "INT", "SMALLINT", "TINYINT", "LONG":
		t = Bigint
	case "DOUBLE", "DECIMAL", "NUMERIC":
		t = Double
	case "FLOAT", "REAL":
		t = Float
	case "TIMESTAMP", "DATE":
		t = Timestamp
	case "BOOLEAN":
		t = Boolean
	default:
		return ""
	}
	switch arrayDepth {
	case 0:
		return t
	case 1:
		switch t {
		case Varchar, Bigint, Double:
			return t + ArraySuffix
		case Float:
			return Double + ArraySuffix
		}
	}
	return ""
}

func (t *Translator) cast(x *sql.CastExpr) (Expr, error) {
	a, err := t.Expr(x.X)
	if err != nil {
		return Expr{}, err
	}
	to := ""
	if x.Type.Complex == "" {
		to = CastType(x.Type.Name, x.Type.ArrayDepth)
	}
	tz := t.Env.tz()
	switch to {
	case "":
		return Expr{}, unsupportedAt(x, "CAST to %s is not supported", x.Type.String())
	case Varchar:
		if a.Type == Timestamp {
			return Expr{Src: "timestamp_format(" + a.Src + ", 'yyyy-MM-dd HH:mm:ss', " + tz + ")", Type: Varchar}, nil
		}
		return Expr{Src: "cast(" + a.Src + ", 'STRING')", Type: Varchar}, nil
	case Bigint:
		return Expr{Src: "cast(" + a.Src + ", 'LONG')", Type: Bigint}, nil
	case Double, Float:
		// A FLOAT is computed as a double; its column stores a float.
		return Expr{Src: "cast(" + a.Src + ", 'DOUBLE')", Type: to}, nil
	case Boolean:
		return boolean("(" + a.Src + " != 0)"), nil
	case Timestamp:
		src := a.Src
		switch {
		case a.Type == Varchar:
			src = "timestamp_parse(" + a.Src + ", null, " + tz + ")"
		case !Numeric(a.Type) && a.Type != Timestamp:
			src = "cast(" + a.Src + ", 'LONG')"
		}
		if strings.EqualFold(x.Type.Name, "DATE") {
			src = "timestamp_floor(" + src + ", 'P1D', null, " + tz + ")"
		}
		return Expr{Src: src, Type: Timestamp}, nil
	}
	native := map[string]string{Varchar + ArraySuffix: "ARRAY<STRING>", Bigint + ArraySuffix: "ARRAY<LONG>", Double + ArraySuffix: "ARRAY<DOUBLE>"}[to]
	return Expr{Src: "cast(" + a.Src + ", '" + native + "')", Type: to}, nil
}

// timestampArith is TIMESTAMPADD(unit, n, ts), a shift in the query's time
// zone, and TIMESTAMPDIFF(unit, a, b) for units of fixed length.
func (t *Translator) timestampArith(x *sql.TimestampArith) (Expr, error) {
	a, err := t.Expr(x.A)
	if err != nil {
		return Expr{}, err
	}
	b, err := t.Expr(x.B)
	if err != nil {
		return Expr{}, err
	}
	if !x.Diff {
		if (a.Type != Bigint && !a.IsNull()) || (b.Type != Timestamp && !b.IsNull()) {
			return Expr{}, cannotApply(x, "TIMESTAMPADD", []Expr{{Type: "SYMBOL"}, a, b})
		}
		p := x.Unit.Period()
		if p == "" {
			return Expr{}, unsupportedAt(x, "TIMESTAMPADD by %s is not supported", x.Unit)
		}
		return Expr{Src: "timestamp_shift(" + b.Src + ", '" + p + "', " + a.Src + ", " + t.Env.tz() + ")", Type: Timestamp}, nil
	}
	for _, v := range []Expr{a, b} {
		if v.Type != Timestamp && !v.IsNull() {
			return Expr{}, cannotApply(x, "TIMESTAMPDIFF", []Expr{{Type: "SYMBOL"}, a, b})
		}
	}
	if months, ok := monthUnits[x.Unit]; ok {
		// Druid counts whole calendar months in the query's time zone
		// (Joda's monthsBetween), then quarters and years as 3 and 12 of them.
		src := "subtract_months(" + b.Src + ", " + a.Src + ", " + t.Env.tz() + ")"
		if months > 1 {
			src = "div(" + src + ", " + LongLit(months) + ")"
		}
		return Expr{Src: src, Type: Bigint}, nil
	}
	ms, ok := fixedUnitMillis[x.Unit]
	if !ok {
		return Expr{}, unsupportedAt(x, "TIMESTAMPDIFF in %s is not supported", x.Unit)
	}
	return Expr{Src: "div((" + b.Src + " - " + a.Src + "), " + LongLit(ms) + ")", Type: Bigint}, nil
}
