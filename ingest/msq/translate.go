package msq

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"strata/expr"
	"strata/interval"
	"strata/javacompat"
	"strata/sql"
)

// SQL expressions are translated into Druid native expressions (package
// expr), as Druid's planner does for virtual columns and expression filters,
// so that functions behave exactly like native ones. Column references
// become identifiers c<N> naming the N-th value of the input row.

// scope resolves column names of one SELECT block to input row positions.
type scope struct {
	cols []scopeCol
}

type scopeCol struct {
	quals []string // names that qualify the column (table name, alias)
	name  string
	typ   Type
}

func scopeOf(sig Signature, quals ...string) *scope {
	s := &scope{}
	for _, c := range sig {
		s.cols = append(s.cols, scopeCol{quals: quals, name: c.Name, typ: c.Type})
	}
	return s
}

func (s *scope) signature() Signature {
	out := make(Signature, len(s.cols))
	for i, c := range s.cols {
		out[i] = Column{Name: c.name, Type: c.typ}
	}
	return out
}

// resolve finds a column reference; -1 when unknown.
func (s *scope) resolve(ref *sql.ColumnRef) (int, error) {
	name := ref.Column().Name
	var qual string
	switch len(ref.Parts) {
	case 1:
	case 2:
		qual = ref.Parts[0].Name
	default:
		q := ref.Parts[len(ref.Parts)-2].Name
		qual = q
	}
	found := -1
	for i, c := range s.cols {
		if c.name != name {
			continue
		}
		if qual != "" {
			ok := false
			for _, q := range c.quals {
				if q == qual {
					ok = true
				}
			}
			if !ok {
				continue
			}
		}
		if found >= 0 {
			return -1, invalidInput("%s", sql.AtPos(ref, fmt.Sprintf("Column '%s' is ambiguous", name)))
		}
		found = i
	}
	return found, nil
}

// tx is a translated expression.
type tx struct {
	src  string // native expression source
	typ  Type
	node sql.Expr
}

func (t tx) isNullLit() bool { _, ok := t.node.(*sql.NullLit); return ok }

// translator turns SQL expressions of one scope into native expressions.
type translator struct {
	sc    *scope
	q     *queryEnv
	post  *postCtx // set while translating expressions over aggregated rows
	inAgg bool     // inside an aggregate's arguments
}

// queryEnv holds what every translation of a statement shares.
type queryEnv struct {
	params []paramValue
	now    int64 // CURRENT_TIMESTAMP: the job start
}

type paramValue struct {
	typ   string
	value any
}

func ident(i int) string { return "c" + strconv.Itoa(i) }

func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func longLit(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "(-9223372036854775807 - 1)"
		}
		return "(-" + strconv.FormatInt(-n, 10) + ")"
	}
	return strconv.FormatInt(n, 10)
}

func doubleLit(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "(-Infinity)"
	}
	s := javacompat.FormatDouble(math.Abs(f))
	if f < 0 || (f == 0 && math.Signbit(f)) {
		return "(-" + s + ")"
	}
	return s
}

func (t *translator) errAt(n sql.Node, format string, a ...any) error {
	return invalidInput("%s", sql.AtPos(n, fmt.Sprintf(format, a...)))
}

func (t *translator) notSupported(n sql.Node, format string, a ...any) error {
	return unsupported("%s", sql.AtPos(n, fmt.Sprintf(format, a...)))
}

// expr translates one expression.
func (t *translator) expr(e sql.Expr) (tx, error) {
	if t.post != nil && !t.inAgg {
		if r, ok, err := t.post.match(t, e); ok || err != nil {
			return r, err
		}
	}
	switch x := e.(type) {
	case *sql.ColumnRef:
		return t.column(x)
	case *sql.NumberLit:
		return numberLit(x)
	case *sql.StringLit:
		return tx{src: quoteString(x.Value), typ: typeString, node: e}, nil
	case *sql.BoolLit:
		if x.Value {
			return tx{src: "1", typ: typeLong, node: e}, nil
		}
		return tx{src: "0", typ: typeLong, node: e}, nil
	case *sql.NullLit:
		return tx{src: "null", typ: typeString, node: e}, nil
	case *sql.TypedLit:
		ms, err := typedLitMillis(x)
		if err != nil {
			return tx{}, t.errAt(x, "%v", err)
		}
		return tx{src: longLit(ms), typ: typeTimestamp, node: e}, nil
	case *sql.IntervalLit:
		return tx{}, t.errAt(x, "INTERVAL literals are only supported added to or subtracted from a timestamp")
	case *sql.Param:
		return t.param(x)
	case *sql.BinaryExpr:
		return t.binary(x)
	case *sql.UnaryExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		switch x.Op {
		case sql.OpNot:
			return tx{src: "(!" + a.src + ")", typ: typeLong, node: e}, nil
		case sql.OpNeg:
			return tx{src: "(-" + a.src + ")", typ: a.typ, node: e}, nil
		}
		return a, nil
	case *sql.IsExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		var s string
		switch x.What {
		case sql.IsNull, sql.IsUnknown:
			s = "isnull(" + a.src + ")"
		case sql.IsTrue:
			s = "nvl(" + a.src + ", 0)"
			s = "(" + s + " != 0)"
		case sql.IsFalse:
			s = "(notnull(" + a.src + ") && (" + a.src + " == 0))"
		}
		if x.Not {
			s = "(!" + s + ")"
		}
		return tx{src: s, typ: typeLong, node: e}, nil
	case *sql.BetweenExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		lo, err := t.exprAs(x.Low, a.typ)
		if err != nil {
			return tx{}, err
		}
		hi, err := t.exprAs(x.High, a.typ)
		if err != nil {
			return tx{}, err
		}
		s := "((" + a.src + " >= " + lo.src + ") && (" + a.src + " <= " + hi.src + "))"
		if x.Symmetric {
			s = "(" + s + " || ((" + a.src + " >= " + hi.src + ") && (" + a.src + " <= " + lo.src + ")))"
		}
		if x.Not {
			s = "(!" + s + ")"
		}
		return tx{src: s, typ: typeLong, node: e}, nil
	case *sql.InExpr:
		if x.Query != nil {
			return tx{}, t.notSupported(x, "IN (subquery) is not supported")
		}
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		parts := make([]string, 0, len(x.List))
		for _, it := range x.List {
			v, err := t.exprAs(it, a.typ)
			if err != nil {
				return tx{}, err
			}
			parts = append(parts, "("+a.src+" == "+v.src+")")
		}
		s := "(" + strings.Join(parts, " || ") + ")"
		if x.Not {
			s = "(!" + s + ")"
		}
		return tx{src: s, typ: typeLong, node: e}, nil
	case *sql.LikeExpr:
		if x.Similar {
			return tx{}, t.notSupported(x, "SIMILAR TO is not supported")
		}
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		p, err := t.expr(x.Pattern)
		if err != nil {
			return tx{}, err
		}
		s := "like(" + a.src + ", " + p.src
		if x.Escape != nil {
			esc, err := t.expr(x.Escape)
			if err != nil {
				return tx{}, err
			}
			s += ", " + esc.src
		}
		s += ")"
		if x.Not {
			s = "(!" + s + ")"
		}
		return tx{src: s, typ: typeLong, node: e}, nil
	case *sql.CaseExpr:
		return t.caseExpr(x)
	case *sql.CastExpr:
		return t.cast(x)
	case *sql.FuncCall:
		return t.call(x)
	case *sql.FloorCeilExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		p := x.Unit.Period()
		if p == "" || x.Unit == sql.UnitMillisecond {
			return tx{}, t.errAt(x, "unsupported unit %s", x.Unit)
		}
		fn := "timestamp_floor"
		if x.Ceil {
			fn = "timestamp_ceil"
		}
		return tx{src: fn + "(" + a.src + ", '" + p + "')", typ: typeTimestamp, node: e}, nil
	case *sql.ExtractExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
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
		return tx{src: "timestamp_extract(" + a.src + ", '" + unit + "')", typ: typeLong, node: e}, nil
	case *sql.TimestampArith:
		return t.timestampArith(x)
	case *sql.PositionExpr:
		sub, err := t.expr(x.Sub)
		if err != nil {
			return tx{}, err
		}
		str, err := t.expr(x.Str)
		if err != nil {
			return tx{}, err
		}
		from := "0"
		if x.From != nil {
			f, err := t.expr(x.From)
			if err != nil {
				return tx{}, err
			}
			from = "(" + f.src + " - 1)"
		}
		return tx{src: "(strpos(" + str.src + ", " + sub.src + ", " + from + ") + 1)", typ: typeLong, node: e}, nil
	case *sql.TrimExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		fn := map[sql.TrimSide]string{sql.TrimBoth: "trim", sql.TrimLeading: "ltrim", sql.TrimTrailing: "rtrim"}[x.Side]
		s := fn + "(" + a.src
		if x.Chars != nil {
			c, err := t.expr(x.Chars)
			if err != nil {
				return tx{}, err
			}
			s += ", " + c.src
		}
		return tx{src: s + ")", typ: typeString, node: e}, nil
	case *sql.SubstringExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		from, err := t.expr(x.From)
		if err != nil {
			return tx{}, err
		}
		length := "-1"
		if x.For != nil {
			l, err := t.expr(x.For)
			if err != nil {
				return tx{}, err
			}
			length = l.src
		}
		return tx{src: "substring(" + a.src + ", (" + from.src + " - 1), " + length + ")", typ: typeString, node: e}, nil
	case *sql.IndexExpr:
		a, err := t.expr(x.X)
		if err != nil {
			return tx{}, err
		}
		i, err := t.expr(x.Index)
		if err != nil {
			return tx{}, err
		}
		return tx{src: "array_ordinal(" + a.src + ", " + i.src + ")", typ: elemType(a.typ), node: e}, nil
	case *sql.ArrayLit:
		parts := make([]string, len(x.Elems))
		et := Type{}
		for i, el := range x.Elems {
			v, err := t.expr(el)
			if err != nil {
				return tx{}, err
			}
			parts[i] = v.src
			if i == 0 {
				et = v.typ
			} else {
				et = mergeTypes(et, v.typ)
			}
		}
		at := Type{Kind: KindStringArray}
		switch et.Kind {
		case KindLong:
			at = Type{Kind: KindLongArray}
		case KindDouble, KindFloat:
			at = Type{Kind: KindDoubleArray}
		}
		return tx{src: "array(" + strings.Join(parts, ", ") + ")", typ: at, node: e}, nil
	case *sql.StarExpr:
		return tx{}, t.errAt(x, "'*' is not allowed here")
	case *sql.SubqueryExpr, *sql.ExistsExpr:
		return tx{}, t.notSupported(e, "subqueries in expressions are not supported")
	case *sql.NamedArg:
		return tx{}, t.errAt(x, "named argument %s is not allowed here", x.Name.Name)
	}
	return tx{}, t.notSupported(e, "unsupported expression %s", sql.Format(e))
}

func elemType(t Type) Type {
	switch t.Kind {
	case KindLongArray:
		return typeLong
	case KindDoubleArray:
		return typeDouble
	}
	return typeString
}

func numberLit(x *sql.NumberLit) (tx, error) {
	if x.IsInteger() {
		n, err := x.Int64()
		if err == nil {
			return tx{src: longLit(n), typ: typeLong, node: x}, nil
		}
	}
	f, err := x.Float64()
	if err != nil {
		return tx{}, invalidInput("%s", sql.AtPos(x, "invalid number "+x.Text))
	}
	return tx{src: doubleLit(f), typ: typeDouble, node: x}, nil
}

func (t *translator) column(x *sql.ColumnRef) (tx, error) {
	i, err := t.sc.resolve(x)
	if err != nil {
		return tx{}, err
	}
	if i < 0 {
		if t.post != nil && !t.inAgg {
			if r, ok, err := t.post.alias(t, x); ok || err != nil {
				return r, err
			}
			if j, _ := t.post.pre.resolve(x); j >= 0 {
				return tx{}, t.errAt(x, "Expression '%s' is not being grouped", sql.Format(x))
			}
		}
		return tx{}, t.errAt(x, "Column '%s' not found in any table", sql.Format(x))
	}
	return tx{src: ident(i), typ: t.sc.cols[i].typ, node: x}, nil
}

func (t *translator) param(x *sql.Param) (tx, error) {
	if x.Index >= len(t.q.params) {
		return tx{}, t.errAt(x, "no value for parameter %d", x.Index+1)
	}
	p := t.q.params[x.Index]
	typ := strings.ToUpper(p.typ)
	switch v := p.value.(type) {
	case nil:
		return tx{src: "null", typ: typeString, node: x}, nil
	case string:
		if typ == "TIMESTAMP" || typ == "DATE" {
			ms, err := interval.ParseTimeLenient(v, time.UTC)
			if err != nil {
				return tx{}, t.errAt(x, "invalid %s parameter %q", typ, v)
			}
			return tx{src: longLit(ms), typ: typeTimestamp, node: x}, nil
		}
		return tx{src: quoteString(v), typ: typeString, node: x}, nil
	case bool:
		if v {
			return tx{src: "1", typ: typeLong, node: x}, nil
		}
		return tx{src: "0", typ: typeLong, node: x}, nil
	case float64:
		if typ == "DOUBLE" || typ == "FLOAT" || typ == "DECIMAL" || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return tx{src: doubleLit(v), typ: typeDouble, node: x}, nil
		}
		if typ == "TIMESTAMP" {
			return tx{src: longLit(int64(v)), typ: typeTimestamp, node: x}, nil
		}
		return tx{src: longLit(int64(v)), typ: typeLong, node: x}, nil
	case int64:
		return tx{src: longLit(v), typ: typeLong, node: x}, nil
	}
	return tx{}, t.errAt(x, "unsupported value of parameter %d", x.Index+1)
}

// typedLitMillis reads TIMESTAMP '...' and DATE '...' literals (UTC).
func typedLitMillis(x *sql.TypedLit) (int64, error) {
	switch x.Kind {
	case sql.TimestampLit, sql.DateLit:
		ms, err := interval.ParseTimeLenient(strings.TrimSpace(x.Value), time.UTC)
		if err != nil {
			return 0, fmt.Errorf("invalid %s literal '%s'", x.Kind, x.Value)
		}
		return ms, nil
	}
	return 0, fmt.Errorf("%s literals are not supported", x.Kind)
}

// exprAs translates e for comparison with a value of type want: string
// literals compared with timestamps are read as timestamps, as Calcite does.
func (t *translator) exprAs(e sql.Expr, want Type) (tx, error) {
	if want.Timestamp {
		if s, ok := e.(*sql.StringLit); ok {
			ms, err := interval.ParseTimeLenient(strings.TrimSpace(s.Value), time.UTC)
			if err != nil {
				return tx{}, t.errAt(s, "cannot read '%s' as a TIMESTAMP", s.Value)
			}
			return tx{src: longLit(ms), typ: typeTimestamp, node: e}, nil
		}
	}
	return t.expr(e)
}

func (t *translator) binary(x *sql.BinaryExpr) (tx, error) {
	// timestamp ± INTERVAL
	if x.Op == sql.OpAdd || x.Op == sql.OpSub {
		if iv, ok := x.Right.(*sql.IntervalLit); ok {
			return t.shift(x, x.Left, iv, x.Op == sql.OpSub)
		}
		if iv, ok := x.Left.(*sql.IntervalLit); ok && x.Op == sql.OpAdd {
			return t.shift(x, x.Right, iv, false)
		}
	}
	var a, b tx
	var err error
	switch x.Op {
	case sql.OpEq, sql.OpNe, sql.OpLt, sql.OpLe, sql.OpGt, sql.OpGe, sql.OpIsDistinctFrom, sql.OpIsNotDistinctFrom:
		// Read a string literal against a timestamp as a timestamp (either side).
		if _, isStr := x.Left.(*sql.StringLit); isStr {
			if b, err = t.expr(x.Right); err != nil {
				return tx{}, err
			}
			if a, err = t.exprAs(x.Left, b.typ); err != nil {
				return tx{}, err
			}
		} else {
			if a, err = t.expr(x.Left); err != nil {
				return tx{}, err
			}
			if b, err = t.exprAs(x.Right, a.typ); err != nil {
				return tx{}, err
			}
		}
	default:
		if a, err = t.expr(x.Left); err != nil {
			return tx{}, err
		}
		if b, err = t.expr(x.Right); err != nil {
			return tx{}, err
		}
	}
	op := ""
	typ := typeLong
	switch x.Op {
	case sql.OpAnd:
		op = "&&"
	case sql.OpOr:
		op = "||"
	case sql.OpEq:
		op = "=="
	case sql.OpNe:
		op = "!="
	case sql.OpLt:
		op = "<"
	case sql.OpLe:
		op = "<="
	case sql.OpGt:
		op = ">"
	case sql.OpGe:
		op = ">="
	case sql.OpIsNotDistinctFrom, sql.OpIsDistinctFrom:
		s := "case_searched((isnull(" + a.src + ") && isnull(" + b.src + ")), 1, (isnull(" + a.src + ") || isnull(" + b.src + ")), 0, (" + a.src + " == " + b.src + "))"
		if x.Op == sql.OpIsDistinctFrom {
			s = "(!" + s + ")"
		}
		return tx{src: s, typ: typeLong, node: x}, nil
	case sql.OpConcat:
		return tx{src: "concat(" + a.src + ", " + b.src + ")", typ: typeString, node: x}, nil
	case sql.OpAdd, sql.OpSub, sql.OpMul, sql.OpDiv, sql.OpMod:
		op = map[sql.BinaryOp]string{sql.OpAdd: "+", sql.OpSub: "-", sql.OpMul: "*", sql.OpDiv: "/", sql.OpMod: "%"}[x.Op]
		typ = arithType(a.typ, b.typ)
		if x.Op == sql.OpSub && a.typ.Timestamp && b.typ.Timestamp {
			typ = typeLong
		} else if (x.Op == sql.OpAdd || x.Op == sql.OpSub) && (a.typ.Timestamp || b.typ.Timestamp) {
			typ = typeTimestamp
		}
	default:
		return tx{}, t.notSupported(x, "unsupported operator %s", x.Op)
	}
	return tx{src: "(" + a.src + " " + op + " " + b.src + ")", typ: typ, node: x}, nil
}

func arithType(a, b Type) Type {
	if a.Kind == KindLong && b.Kind == KindLong {
		return typeLong
	}
	if (a.Kind == KindFloat || a.Kind == KindLong) && (b.Kind == KindFloat || b.Kind == KindLong) && (a.Kind == KindFloat || b.Kind == KindFloat) {
		return Type{Kind: KindFloat}
	}
	if a.numeric() || b.numeric() {
		if a.Kind == KindString || b.Kind == KindString {
			return typeDouble
		}
		return typeDouble
	}
	return typeDouble
}

// shift translates ts ± INTERVAL '...' unit.
func (t *translator) shift(x sql.Expr, tsExpr sql.Expr, iv *sql.IntervalLit, negate bool) (tx, error) {
	ts, err := t.expr(tsExpr)
	if err != nil {
		return tx{}, err
	}
	if iv.ToUnit != sql.UnitNone {
		return tx{}, t.notSupported(iv, "INTERVAL ... TO ... is not supported")
	}
	p := iv.Unit.Period()
	if p == "" {
		return tx{}, t.notSupported(iv, "unsupported INTERVAL unit %s", iv.Unit)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(iv.Value), 10, 64)
	if err != nil {
		return tx{}, t.notSupported(iv, "INTERVAL '%s' must be a whole number of %s", iv.Value, iv.Unit)
	}
	if iv.Negative != negate {
		n = -n
	}
	return tx{src: "timestamp_shift(" + ts.src + ", '" + p + "', " + longLit(n) + ")", typ: typeTimestamp, node: x}, nil
}

func (t *translator) caseExpr(x *sql.CaseExpr) (tx, error) {
	var parts []string
	var typ Type
	first := true
	addType := func(v tx) {
		if v.isNullLit() {
			return
		}
		if first {
			typ, first = v.typ, false
		} else if typ != v.typ {
			ts := typ.Timestamp && v.typ.Timestamp
			typ = mergeTypes(typ, v.typ)
			typ.Timestamp = ts
		}
	}
	var op tx
	if x.Operand != nil {
		var err error
		if op, err = t.expr(x.Operand); err != nil {
			return tx{}, err
		}
	}
	for _, w := range x.Whens {
		c, err := t.exprAs(w.Cond, op.typ)
		if err != nil {
			return tx{}, err
		}
		r, err := t.expr(w.Result)
		if err != nil {
			return tx{}, err
		}
		addType(r)
		parts = append(parts, c.src, r.src)
	}
	els := "null"
	if x.Else != nil {
		r, err := t.expr(x.Else)
		if err != nil {
			return tx{}, err
		}
		addType(r)
		els = r.src
	}
	if first {
		typ = typeString
	}
	parts = append(parts, els)
	if x.Operand != nil {
		return tx{src: "case_simple(" + op.src + ", " + strings.Join(parts, ", ") + ")", typ: typ, node: x}, nil
	}
	return tx{src: "case_searched(" + strings.Join(parts, ", ") + ")", typ: typ, node: x}, nil
}

func (t *translator) cast(x *sql.CastExpr) (tx, error) {
	a, err := t.expr(x.X)
	if err != nil {
		return tx{}, err
	}
	to, ok := sqlTypeToType(x.Type.Name, x.Type.ArrayDepth)
	if !ok {
		return tx{}, t.notSupported(x.Type, "CAST to %s is not supported", sql.Format(x.Type))
	}
	switch {
	case to.Timestamp:
		s := a.src
		if a.typ.Kind == KindString {
			s = "timestamp_parse(" + a.src + ")"
		} else if !a.typ.numeric() {
			s = "cast(" + a.src + ", 'LONG')"
		}
		if strings.EqualFold(x.Type.Name, "DATE") {
			s = "timestamp_floor(" + s + ", 'P1D')"
		}
		return tx{src: s, typ: typeTimestamp, node: x}, nil
	case strings.EqualFold(x.Type.Name, "BOOLEAN"):
		return tx{src: "(" + a.src + " != 0)", typ: typeLong, node: x}, nil
	case to.Kind == KindString && a.typ.Timestamp:
		return tx{src: "timestamp_format(" + a.src + ", 'yyyy-MM-dd HH:mm:ss')", typ: typeString, node: x}, nil
	}
	native := to.Native()
	if to.Kind == KindFloat {
		native = "DOUBLE"
	}
	return tx{src: "cast(" + a.src + ", '" + native + "')", typ: to, node: x}, nil
}

func (t *translator) timestampArith(x *sql.TimestampArith) (tx, error) {
	a, err := t.expr(x.A)
	if err != nil {
		return tx{}, err
	}
	b, err := t.expr(x.B)
	if err != nil {
		return tx{}, err
	}
	p := x.Unit.Period()
	if p == "" {
		return tx{}, t.notSupported(x, "unsupported unit %s", x.Unit)
	}
	if !x.Diff {
		return tx{src: "timestamp_shift(" + b.src + ", '" + p + "', " + a.src + ")", typ: typeTimestamp, node: x}, nil
	}
	per, err := interval.ParsePeriod(p)
	if err != nil || !per.IsFixed() {
		return tx{}, t.notSupported(x, "TIMESTAMPDIFF in %s is not supported", x.Unit)
	}
	ms := per.FixedMillis()
	return tx{src: "((" + b.src + " - " + a.src + ") / " + longLit(ms) + ")", typ: typeLong, node: x}, nil
}

// compiled is a translated expression ready to evaluate over rows.
type compiled struct {
	sql  string // the SQL text, for reports and messages
	src  string
	typ  Type
	x    *expr.Expr
	col  int // >= 0: the expression is input column col, read directly
	args []int
}

// compile turns a translation into a compiled expression.
func compileTx(v tx) (*compiled, error) {
	c := &compiled{sql: sql.Format(v.node), src: v.src, typ: v.typ, col: -1}
	if len(v.src) > 1 && v.src[0] == 'c' {
		if n, err := strconv.Atoi(v.src[1:]); err == nil {
			c.col = n
			return c, nil
		}
	}
	x, err := expr.Compile(v.src)
	if err != nil {
		return nil, invalidInput("%s", sql.AtPos(v.node, fmt.Sprintf("cannot plan expression %s: %v", c.sql, err)))
	}
	c.x = x
	for _, name := range x.RequiredColumns() {
		n, err := strconv.Atoi(strings.TrimPrefix(name, "c"))
		if err != nil || !strings.HasPrefix(name, "c") {
			return nil, invalidInput("%s", sql.AtPos(v.node, "unknown identifier "+name))
		}
		c.args = append(c.args, n)
	}
	return c, nil
}

// rowBindings gives expressions the values of one row.
type rowBindings struct{ row []expr.Value }

// Get reads identifier c<N>.
func (b *rowBindings) Get(name string) expr.Value {
	n := 0
	for i := 1; i < len(name); i++ {
		n = n*10 + int(name[i]-'0')
	}
	if n < len(b.row) {
		return b.row[n]
	}
	return expr.Null
}

// eval evaluates the expression for row.
func (c *compiled) eval(b *rowBindings) (expr.Value, error) {
	if c.col >= 0 {
		return b.row[c.col], nil
	}
	v, err := c.x.Eval(b)
	if err != nil {
		return v, newFault(CodeQueryRuntimeError, "error evaluating %s: %v", c.sql, err).
			with("baseErrorMessage", err.Error())
	}
	return v, nil
}
