package msq

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"strata/expr"
	"strata/sql"
	"strata/sqlexpr"
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

// translator turns SQL expressions of one scope into native expressions
// through the translator interactive SQL shares (package sqlexpr): it is
// the Scope that resolves column references to row positions, matches an
// aggregating block's group keys and aggregates, and passes functions the
// shared table lacks to the native function of the same name.
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
	env    *sqlexpr.Env
}

// sqlEnv is the shared translator's view of the statement: SQL ingestion
// reads timestamps in UTC.
func (q *queryEnv) sqlEnv() *sqlexpr.Env {
	if q.env == nil {
		q.env = &sqlexpr.Env{Now: q.now}
		for _, p := range q.params {
			q.env.Params = append(q.env.Params, sqlexpr.Param{Type: p.typ, Value: p.value})
		}
	}
	return q.env
}

type paramValue struct {
	typ   string
	value any
}

func ident(i int) string { return "c" + strconv.Itoa(i) }

func (t *translator) errAt(n sql.Node, format string, a ...any) error {
	return invalidInput("%s", sql.AtPos(n, fmt.Sprintf(format, a...)))
}

func (t *translator) notSupported(n sql.Node, format string, a ...any) error {
	return unsupported("%s", sql.AtPos(n, fmt.Sprintf(format, a...)))
}

// expr translates one expression.
func (t *translator) expr(e sql.Expr) (tx, error) {
	v, err := sqlexpr.Translate(t, t.q.sqlEnv(), e)
	if err != nil {
		var se *sqlexpr.Error
		if errors.As(err, &se) {
			if se.Category == sqlexpr.CategoryUnsupported {
				return tx{}, unsupported("%s", se.Msg)
			}
			return tx{}, invalidInput("%s", se.Msg)
		}
		return tx{}, err
	}
	return tx{src: v.Src, typ: typeOfSQL(v.Type), node: e}, nil
}

// shared is t's translation as the shared translator's value.
func (v tx) shared() sqlexpr.Expr {
	return sqlexpr.Expr{Src: v.src, Type: v.typ.sqlType(), IsLit: v.isNullLit()}
}

func (t *translator) sharedExpr(e sql.Expr) (sqlexpr.Expr, error) {
	v, err := t.expr(e)
	return v.shared(), err
}

// Intercept answers an aggregating block's group keys and aggregates.
func (t *translator) Intercept(e sql.Expr) (sqlexpr.Expr, bool, error) {
	if t.post != nil && !t.inAgg {
		if r, ok, err := t.post.match(t, e); ok || err != nil {
			return r.shared(), true, err
		}
	}
	call, ok := e.(*sql.FuncCall)
	if !ok {
		return sqlexpr.Expr{}, false, nil
	}
	name := strings.ToUpper(call.Name.Name)
	if !isAggregate(name) {
		return sqlexpr.Expr{}, false, nil
	}
	if call.Over != nil {
		return sqlexpr.Expr{}, true, t.notSupported(call, "window functions are not supported")
	}
	if t.post == nil {
		return sqlexpr.Expr{}, true, t.errAt(call, "aggregate %s is not allowed here", name)
	}
	if t.inAgg {
		return sqlexpr.Expr{}, true, t.errAt(call, "aggregate %s cannot be nested in another aggregate", name)
	}
	r, err := t.post.aggregate(t, call, name)
	return r.shared(), true, err
}

// Column resolves a column reference to its row position.
func (t *translator) Column(x *sql.ColumnRef) (sqlexpr.Expr, error) {
	i, err := t.sc.resolve(x)
	if err != nil {
		return sqlexpr.Expr{}, err
	}
	if i < 0 {
		if t.post != nil && !t.inAgg {
			if r, ok, err := t.post.alias(t, x); ok || err != nil {
				return r.shared(), err
			}
			if j, _ := t.post.pre.resolve(x); j >= 0 {
				return sqlexpr.Expr{}, t.errAt(x, "Expression '%s' is not being grouped", sql.Format(x))
			}
		}
		return sqlexpr.Expr{}, t.errAt(x, "Column '%s' not found in any table", sql.Format(x))
	}
	return sqlexpr.Expr{Src: ident(i), Type: t.sc.cols[i].typ.sqlType()}, nil
}

// Other translates array subscripts.
func (t *translator) Other(e sql.Expr) (sqlexpr.Expr, bool, error) {
	switch x := e.(type) {
	case *sql.IndexExpr:
		a, err := t.sharedExpr(x.X)
		if err != nil {
			return sqlexpr.Expr{}, true, err
		}
		i, err := t.sharedExpr(x.Index)
		if err != nil {
			return sqlexpr.Expr{}, true, err
		}
		return sqlexpr.Expr{Src: "array_ordinal(" + a.Src + ", " + i.Src + ")", Type: elemType(typeOfSQL(a.Type)).sqlType()}, true, nil
	}
	return sqlexpr.Expr{}, false, nil
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

// typedLitMillis reads TIMESTAMP '...' and DATE '...' literals (UTC).
func typedLitMillis(x *sql.TypedLit) (int64, error) {
	switch x.Kind {
	case sql.TimestampLit, sql.DateLit:
		ms, err := sqlexpr.ParseTimestamp(x.Value, time.UTC)
		if err != nil {
			return 0, fmt.Errorf("invalid %s literal '%s'", x.Kind, x.Value)
		}
		return ms, nil
	}
	return 0, fmt.Errorf("%s literals are not supported", x.Kind)
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

// index is the row position an identifier c<N> names; -1 for any other.
func (s *scope) index(name string) int {
	if len(name) < 2 || name[0] != 'c' {
		return -1
	}
	n, err := strconv.Atoi(name[1:])
	if err != nil || n >= len(s.cols) {
		return -1
	}
	return n
}
