package sqlplan

import (
	"slices"
	"strconv"
	"strings"

	"strata/expr"
	"strata/sql"
)

// Joins plan onto Druid's native join data source: the left FROM item is
// the join's left side (a join itself, for a chain), the right item its
// right side, run broadcast: the broker turns the right side into rows
// (within maxSubqueryRows) and every data server joins its segments of the
// left side with them. Right columns are named in the native query with the
// join's prefix ("j0." for the first join, as Druid's planner names them).
// INNER and LEFT joins take an ON condition of equalities, ANDed, each
// between an expression of the left side and a column of the right side;
// comma and CROSS joins are joins on the equalities of the WHERE clause
// that relate the two sides, or cross joins (which the engine bounds).

// join plans a FROM item that joins two others.
func (p *planner) join(j *sql.Join) (any, []scopeCol, error) {
	where := p.where // the WHERE of the SELECT this FROM belongs to
	switch j.Kind {
	case sql.JoinInner, sql.JoinLeft, sql.JoinComma, sql.JoinCross:
	default:
		return nil, nil, unsupported("%s", sql.AtPos(j, j.Kind.String()+" is not supported; INNER, LEFT, CROSS and comma joins are"))
	}
	if j.Natural || len(j.Using) > 0 {
		return nil, nil, unsupported("%s", sql.AtPos(j, "NATURAL joins and JOIN ... USING are not supported; write the condition with ON"))
	}
	if _, ok := j.Right.(*sql.Join); ok {
		return nil, nil, unsupported("%s", sql.AtPos(j.Right, "A join on the right side of a join is not supported; join the tables left to right"))
	}
	lds, lcols, err := p.from(j.Left)
	if err != nil {
		return nil, nil, err
	}
	lcols = qualified(lcols, tableQuals(j.Left))
	rds, rcols, err := p.from(j.Right)
	if err != nil {
		return nil, nil, err
	}
	prefix := p.joinPrefix(lcols)
	rq := tableQuals(j.Right)
	cols := slices.Clone(lcols)
	for _, c := range qualified(rcols, rq) {
		c.native = prefix + c.native
		cols = append(cols, c)
	}
	t := &translator{p: p, cols: cols, quals: append(tableQuals(j.Left), rq...)}
	cond := "1"
	switch {
	case j.On != nil:
		v, err := t.expr(j.On)
		if err != nil {
			return nil, nil, err
		}
		cond = v.src
		if err := checkJoinCondition(cond, prefix); err != nil {
			return nil, nil, unsupported("%s", sql.AtPos(j.On, err.Error()))
		}
	case where != nil && (j.Kind == sql.JoinComma || j.Kind == sql.JoinCross):
		// The WHERE clause still filters the joined rows; its equalities
		// between the sides only spare the cross product.
		var keys []string
		for _, c := range conjuncts(where) {
			b, ok := c.(*sql.BinaryExpr)
			if !ok || b.Op != sql.OpEq {
				continue
			}
			v, err := t.expr(b)
			if err != nil || checkJoinCondition(v.src, prefix) != nil {
				continue
			}
			keys = append(keys, v.src)
		}
		if len(keys) > 0 {
			cond = strings.Join(keys, " && ")
		}
	}
	joinType := "INNER"
	if j.Kind == sql.JoinLeft {
		joinType = "LEFT"
	}
	ds := map[string]any{"type": "join", "left": lds, "right": rds, "rightPrefix": prefix, "condition": cond, "joinType": joinType}
	return ds, cols, nil
}

// qualified names each column's table (its FROM item's alias or name) where
// it has none yet, so that a qualified reference picks its side.
func qualified(cols []scopeCol, quals []string) []scopeCol {
	if len(quals) != 1 {
		return cols
	}
	out := make([]scopeCol, len(cols))
	for i, c := range cols {
		if c.qual == "" {
			c.qual = quals[0]
		}
		out[i] = c
	}
	return out
}

// joinPrefix is the next join's right prefix, "j0.", "j1." and so on, one
// that no left column starts with (a left column under the prefix would be
// shadowed by the right side's).
func (p *planner) joinPrefix(left []scopeCol) string {
	for {
		prefix := "j" + strconv.Itoa(p.joins) + "."
		p.joins++
		if !slices.ContainsFunc(left, func(c scopeCol) bool { return strings.HasPrefix(c.native, prefix) }) {
			return prefix
		}
	}
}

// errJoinCondition explains which ON conditions a broadcast join can run.
type errJoinCondition struct{}

func (errJoinCondition) Error() string {
	return "This join condition is not supported: a join's condition must be an equality between an expression of the left " +
		"side and a column of the right side, or an AND of such equalities"
}

// checkJoinCondition tells whether the native join can run cond: every
// conjunct an equality of a left-side expression and a right-side column
// (the native join data source checks the same when it parses the query).
func checkJoinCondition(cond, prefix string) error {
	e, err := expr.Compile(cond)
	if err != nil {
		return errJoinCondition{}
	}
	if e.IsConstant() {
		return nil
	}
	isRight := func(col string) bool { return strings.HasPrefix(col, prefix) }
	for _, part := range e.Conjuncts() {
		l, r, ok := part.Equality()
		if !ok {
			return errJoinCondition{}
		}
		if col, isCol := l.Column(); isCol && isRight(col) && !slices.ContainsFunc(r.RequiredColumns(), isRight) {
			continue
		}
		if col, isCol := r.Column(); isCol && isRight(col) && !slices.ContainsFunc(l.RequiredColumns(), isRight) {
			continue
		}
		return errJoinCondition{}
	}
	return nil
}
