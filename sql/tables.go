package sql

// BaseTables calls fn for each table reference of stmt that names no CTE in
// scope (the tables the statement reads), in the order a planner meets them:
// a SELECT's FROM items (joins left to right), then sub-queries in its WHERE,
// select list, GROUP BY, HAVING and WINDOW clauses, then those of ORDER BY.
// UNION branches come left to right. The target of INSERT and REPLACE is not
// a reference; their source query is. If fn returns false the walk stops.
//
// CTE scoping follows the msq planner: a one-part name is looked up in the
// WITH lists in scope, innermost first and, within a list, last entry first;
// a CTE's body sees the CTEs before it (not itself or later ones) and the
// enclosing WITH lists, so a CTE shadows a table of the same name only inside
// its WITH's scope. Qualified names (druid.t) never name a CTE. A CTE's body
// is visited where the CTE is first referenced; bodies of CTEs nobody
// references are not visited, since nothing plans them.
func BaseTables(stmt Statement, fn func(*TableRef) bool) {
	r := &tableResolver{fn: fn, visited: map[*CTE]bool{}}
	r.statement(stmt)
}

type tableResolver struct {
	fn      func(*TableRef) bool
	scope   [][]*CTE // WITH lists in scope, innermost last
	visited map[*CTE]bool
	stopped bool
}

func (r *tableResolver) statement(s Statement) {
	switch x := s.(type) {
	case *Query:
		r.query(x)
	case *Insert:
		r.query(x.Source)
	case *Replace:
		r.query(x.Source)
	case *Explain:
		r.statement(x.Statement)
	}
}

func (r *tableResolver) query(q *Query) {
	if q == nil || r.stopped {
		return
	}
	if len(q.With) > 0 {
		r.scope = append(r.scope, q.With)
		defer func() { r.scope = r.scope[:len(r.scope)-1] }()
	}
	r.body(q.Body)
	for _, it := range q.OrderBy {
		if it != nil {
			r.expr(it.Expr)
		}
	}
}

func (r *tableResolver) body(b QueryBody) {
	switch x := b.(type) {
	case *Select:
		r.selectBlock(x)
	case *SetOp:
		r.body(x.Left)
		r.body(x.Right)
	case *Query:
		r.query(x)
	}
}

func (r *tableResolver) selectBlock(s *Select) {
	if s == nil {
		return
	}
	r.from(s.From)
	r.expr(s.Where)
	for _, it := range s.Columns {
		if it != nil {
			r.expr(it.Expr)
		}
	}
	for _, g := range s.GroupBy {
		r.expr(g)
	}
	r.expr(s.Having)
	for _, nw := range s.Windows {
		if nw != nil && nw.Spec != nil {
			r.expr(nw.Spec)
		}
	}
}

func (r *tableResolver) from(t TableExpr) {
	if r.stopped {
		return
	}
	switch x := t.(type) {
	case *TableRef:
		if x == nil || len(x.Name) == 0 {
			return
		}
		if len(x.Name) == 1 {
			if c, visible := r.findCTE(x.Name[0].Name); c != nil {
				// A CTE's body always resolves in the same scope, so one visit is enough.
				if !r.visited[c] {
					r.visited[c] = true
					saved := r.scope
					r.scope = visible
					r.query(c.Query)
					r.scope = saved
				}
				return
			}
		}
		if !r.fn(x) {
			r.stopped = true
		}
	case *DerivedTable:
		if x != nil {
			r.query(x.Query)
		}
	case *TableFunc:
		if x != nil && x.Call != nil {
			r.expr(x.Call)
		}
	case *Unnest:
		if x != nil {
			r.expr(x.Expr)
		}
	case *Join:
		if x != nil {
			r.from(x.Left)
			r.from(x.Right)
			r.expr(x.On)
		}
	}
}

// findCTE looks a name up in the WITH lists in scope and returns the CTE and
// the scope its body resolves in.
func (r *tableResolver) findCTE(name string) (*CTE, [][]*CTE) {
	for i := len(r.scope) - 1; i >= 0; i-- {
		for j := len(r.scope[i]) - 1; j >= 0; j-- {
			if c := r.scope[i][j]; c != nil && c.Name.Name == name {
				visible := make([][]*CTE, i, i+1)
				copy(visible, r.scope[:i])
				return c, append(visible, r.scope[i][:j])
			}
		}
	}
	return nil, nil
}

// expr visits the sub-queries of an expression (IN (SELECT ...), EXISTS,
// scalar sub-queries) in the current scope.
func (r *tableResolver) expr(n Node) {
	if n == nil || r.stopped {
		return
	}
	Walk(n, func(m Node) bool {
		if r.stopped {
			return false
		}
		if q, ok := m.(*Query); ok {
			r.query(q)
			return false
		}
		return true
	})
}
