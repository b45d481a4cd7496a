package engine

import (
	"strata/expr"
	"strata/querynode/query"
	"strata/storage/segment"
)

// dictExprKeys enables dictExprKey; tests turn it off to compare.
var dictExprKeys = true

// newExprKey reads a string expression virtual column. An expression of
// one single-value dictionary column (a join's lookup of its key, an
// upper(), a substring...) is evaluated once per dictionary value that
// occurs rather than once per row: its value depends on that column's alone.
func newExprKey(c *columns, v *query.VirtualColumn) (keySource, error) {
	generic := &exprKey{cols: c, v: v, b: -1, byVal: map[string]int32{}, vals: []Value{Null}}
	in := v.Expression.Expr.RequiredColumns()
	if len(in) != 1 || !dictExprKeys {
		return generic, nil
	}
	if _, virtual := c.vcols[in[0]]; virtual {
		return generic, nil
	}
	if kind, ok := c.colKind(in[0]); !ok || kind != segment.KindString {
		return generic, nil
	}
	ks, err := c.key(in[0])
	if err != nil {
		return nil, err
	}
	p, ok := ks.(*physKey)
	if !ok || p.multi {
		return generic, nil
	}
	mapped := make([]int32, p.card())
	for i := range mapped {
		mapped[i] = -1
	}
	return &dictExprKey{v: v, name: in[0], inner: p, mapped: mapped, b: -1, byVal: map[string]int32{}, vals: []Value{Null}}, nil
}

// dictExprKey is a string expression of one dictionary column, mapped from
// the column's ids to ids of its own dictionary of results. Id 0 is null.
type dictExprKey struct {
	v      *query.VirtualColumn
	name   string
	inner  *physKey
	mapped []int32 // inner id → own id; -1 not evaluated yet
	b      int
	buf    []int32
	byVal  map[string]int32
	vals   []Value
}

func (d *dictExprKey) card() int            { return len(d.vals) }
func (d *dictExprKey) value(id int32) Value { return d.vals[id] }

func (d *dictExprKey) ids(b int) ([]int32, []int32, error) {
	if d.b == b {
		return nil, d.buf, nil
	}
	_, in, err := d.inner.ids(b)
	if err != nil {
		return nil, nil, err
	}
	d.buf = resize(d.buf, len(in))
	for i, id := range in {
		m := d.mapped[id]
		if m < 0 {
			if m, err = d.eval(id); err != nil {
				return nil, nil, err
			}
			d.mapped[id] = m
		}
		d.buf[i] = m
	}
	d.b = b
	return nil, d.buf, nil
}

// eval computes the expression for the column's value id, as exprKey does
// for a row holding it.
func (d *dictExprKey) eval(id int32) (int32, error) {
	val, err := d.v.Expression.Expr.Eval(expr.ValueBindings{d.name: valueToExpr(d.inner.value(id))})
	if err != nil {
		return 0, query.Invalidf("expression [%s]: %v", d.v.Expression.Source, err)
	}
	s, ok := val.AsString()
	if !ok {
		return 0, nil
	}
	out, found := d.byVal[s]
	if !found {
		d.vals = append(d.vals, Str(s))
		out = int32(len(d.vals) - 1)
		d.byVal[s] = out
	}
	return out, nil
}
