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
// left side with them (for RIGHT and FULL joins, the broker reads the left
// side too and joins on its own). Right columns are named in the native
// query with the join's prefix ("j0." for the first join, as Druid's
// planner names them). Joins take an ON condition of equalities, ANDed,
// each between an expression of the left side and one of the right side;
// comma and CROSS joins are joins on the equalities of the WHERE clause
// that relate the two sides, or cross joins (which the engine bounds).

// join plans a FROM item that joins two others.
func (p *planner) join(j *sql.Join) (any, []scopeCol, error) {
	where := p.where // the WHERE of the SELECT this FROM belongs to
	if (j.Natural || len(j.Using) > 0) && j.Kind != sql.JoinInner && j.Kind != sql.JoinLeft {
		return nil, nil, unsupported("%s", sql.AtPos(j, "NATURAL and USING are supported for INNER and LEFT joins; write the condition of a "+j.Kind.String()+" with ON"))
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
	using, err := usingColumns(j, lcols, rcols)
	if err != nil {
		return nil, nil, err
	}
	cols := slices.Clone(lcols)
	for _, c := range qualified(rcols, rq) {
		c.native = prefix + c.native
		cols = append(cols, c)
	}
	usingCond := ""
	if len(using) > 0 {
		cols, usingCond = usingScope(cols, len(lcols), using)
	}
	t := &translator{p: p, cols: cols, quals: append(tableQuals(j.Left), rq...)}
	cond := "1"
	switch {
	case usingCond != "":
		cond = usingCond
	case j.On != nil:
		on, err := p.splitOn(j, lcols, qualified(rcols, rq), rq)
		if err != nil {
			return nil, nil, err
		}
		rds = on.right(rds, rcols)
		cond = on.condition(prefix)
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
	switch j.Kind {
	case sql.JoinLeft:
		joinType = "LEFT"
	case sql.JoinRight:
		joinType = "RIGHT"
	case sql.JoinFull:
		joinType = "FULL"
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

// onParts is an ON condition split as a broadcast join runs it: equality
// keys (a left expression, and a right column or an expression of the
// right side computed by a scan of the right side), conditions on the right
// side alone (that scan's filter), and, for an INNER join, conditions on
// the left side alone (moved to the WHERE clause, which is the same there).
type onParts struct {
	keys     []onKey
	rightVCs []any    // virtual columns of the right side's scan
	rightFil []string // expressions filtering the right side
}

type onKey struct{ left, right string } // native expression, right column (unprefixed)

// splitOn reads each conjunct of j's ON condition by the side(s) it reads.
func (p *planner) splitOn(j *sql.Join, lcols, rcols []scopeCol, rq []string) (*onParts, error) {
	tl := &translator{p: p, cols: lcols, quals: tableQuals(j.Left)}
	tr := &translator{p: p, cols: rcols, quals: rq}
	on := &onParts{}
	taken := map[string]bool{}
	for _, c := range rcols {
		taken[c.native] = true
	}
	for _, c := range conjuncts(j.On) {
		if b, ok := c.(*sql.BinaryExpr); ok && b.Op == sql.OpEq {
			l, r := b.Left, b.Right
			lv, errL := tl.expr(l)
			rv, errR := tr.expr(r)
			if errL != nil || errR != nil {
				lv, errL = tl.expr(r)
				rv, errR = tr.expr(l)
			}
			if errL == nil && errR == nil && !lv.isLit && !rv.isLit {
				col := rv.col
				if col == "" {
					// An expression of the right side: a column of its scan.
					for n := 0; col == "" || taken[col]; n++ {
						col = "jv" + strconv.Itoa(n)
					}
					taken[col] = true
					on.rightVCs = append(on.rightVCs, map[string]any{"type": "expression", "name": col, "expression": rv.src,
						"outputType": nativeType(rv.typ)})
				}
				on.keys = append(on.keys, onKey{left: lv.src, right: col})
				continue
			}
		}
		// A condition on one side alone filters that side's rows before the
		// join (the right side's, by a scan of it), or the joined rows after
		// it (the left side's, in WHERE): only where the join keeps no
		// unmatched rows of that side.
		keepsRight := j.Kind == sql.JoinRight || j.Kind == sql.JoinFull
		if v, err := tr.expr(c); err == nil && !keepsRight {
			on.rightFil = append(on.rightFil, v.src)
			continue
		}
		if _, err := tl.expr(c); err == nil && j.Kind == sql.JoinInner {
			p.joinWhere = append(p.joinWhere, c)
			continue
		}
		return nil, unsupported("%s", sql.AtPos(c, errJoinCondition{}.Error()))
	}
	return on, nil
}

// condition is the native join condition of the keys.
func (on *onParts) condition(prefix string) string {
	if len(on.keys) == 0 {
		return "1"
	}
	parts := make([]string, len(on.keys))
	for i, k := range on.keys {
		parts[i] = "(" + k.left + " == " + quoteIdent(prefix+k.right) + ")"
	}
	return strings.Join(parts, " && ")
}

// right is the right side's data source: as it is, or a scan of it that
// computes the expressions the keys compare and filters its rows.
func (on *onParts) right(rds any, rcols []scopeCol) any {
	if len(on.rightVCs) == 0 && len(on.rightFil) == 0 {
		return rds
	}
	var columns []string
	for _, c := range rcols {
		columns = append(columns, c.native)
	}
	for _, vc := range on.rightVCs {
		columns = append(columns, vc.(map[string]any)["name"].(string))
	}
	scan := map[string]any{"queryType": "scan", "dataSource": rds, "resultFormat": "compactedList", "legacy": false, "columns": columns,
		"intervals": map[string]any{"type": "intervals", "intervals": []string{isoMillis(minTime) + "/" + isoMillis(maxTime)}}}
	if len(on.rightVCs) > 0 {
		scan["virtualColumns"] = on.rightVCs
	}
	if len(on.rightFil) > 0 {
		scan["filter"] = map[string]any{"type": "expression", "expression": strings.Join(on.rightFil, " && ")}
	}
	return map[string]any{"type": "query", "query": scan}
}

// enterFrom is called as a SELECT's FROM is planned: it gives joins the
// SELECT's WHERE, and returns what to call after, which ANDs the ON
// conditions of INNER joins moved to the WHERE clause into sel's.
func (p *planner) enterFrom(sel *sql.Select) func(*sql.Select) *sql.Select {
	savedWhere, savedMoved := p.where, p.joinWhere
	p.where, p.joinWhere = sel.Where, nil
	return func(sel *sql.Select) *sql.Select {
		moved := p.joinWhere
		p.where, p.joinWhere = savedWhere, savedMoved
		if len(moved) == 0 {
			return sel
		}
		out := *sel
		for _, c := range moved {
			if out.Where == nil {
				out.Where = c
			} else {
				out.Where = &sql.BinaryExpr{Op: sql.OpAnd, Left: out.Where, Right: c}
			}
		}
		return &out
	}
}

// uniqueName is name, or when an earlier column of a SELECT * has it (the
// two sides of a join share column names), name followed by the first
// number that makes it unique, as Calcite names them: page, page0.
func uniqueName(names []string, name string) string {
	if !slices.Contains(names, name) {
		return name
	}
	for n := 0; ; n++ {
		if c := name + strconv.Itoa(n); !slices.Contains(names, c) {
			return c
		}
	}
}

// usingColumns are the names a USING list (or, for NATURAL, every name the
// two sides share) joins on; each must name one column on each side.
func usingColumns(j *sql.Join, lcols, rcols []scopeCol) ([]string, error) {
	var names []string
	for _, id := range j.Using {
		names = append(names, id.Name)
	}
	if j.Natural {
		for _, c := range lcols {
			if slices.ContainsFunc(rcols, func(r scopeCol) bool { return r.name == c.name }) && !slices.Contains(names, c.name) {
				names = append(names, c.name)
			}
		}
	}
	count := func(cols []scopeCol, n string) int {
		k := 0
		for _, c := range cols {
			if c.name == n {
				k++
			}
		}
		return k
	}
	for _, n := range names {
		if count(lcols, n) != 1 || count(rcols, n) != 1 {
			return nil, invalid("%s", sql.AtPos(j, "Column '"+n+"' of the join's USING must name one column of each side"))
		}
	}
	return names, nil
}

// usingScope orders a USING join's columns as Calcite does (the USING
// columns, then the other columns of the left side, then those of the
// right) and hides the right side's USING columns from unqualified names
// and SELECT *: an unqualified name is the left side's. It returns the
// join condition.
func usingScope(cols []scopeCol, nLeft int, using []string) ([]scopeCol, string) {
	var first, rest []scopeCol
	var cond []string
	for i, c := range cols {
		if !slices.Contains(using, c.name) {
			rest = append(rest, c)
			continue
		}
		if i < nLeft {
			first = append(first, c)
			continue
		}
		c.hidden = true
		rest = append(rest, c)
	}
	for _, n := range using {
		l := first[slices.IndexFunc(first, func(c scopeCol) bool { return c.name == n })]
		r := rest[slices.IndexFunc(rest, func(c scopeCol) bool { return c.name == n && c.hidden })]
		cond = append(cond, "("+quoteIdent(l.native)+" == "+quoteIdent(r.native)+")")
	}
	return append(first, rest...), strings.Join(cond, " && ")
}
