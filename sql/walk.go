package sql

// Walk visits n and its descendants depth-first in source order. fn is called for each node
// before its children; if fn returns false, the children of that node are skipped.
func Walk(n Node, fn func(Node) bool) {
	w := walker(fn)
	w.node(n)
}

type walker func(Node) bool

func (w walker) expr(e Expr) {
	if e != nil {
		w.node(e)
	}
}

func (w walker) exprs(list []Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w walker) query(q *Query) {
	if q != nil {
		w.node(q)
	}
}

func (w walker) table(t TableExpr) {
	if t != nil {
		w.node(t)
	}
}

func (w walker) window(s *WindowSpec) {
	if s != nil {
		w.node(s)
	}
}

func (w walker) orderItems(items []*OrderItem) {
	for _, it := range items {
		if it != nil {
			w.node(it)
		}
	}
}

func (w walker) node(n Node) {
	if n == nil || !w(n) {
		return
	}
	switch x := n.(type) {
	case *Script:
		for _, s := range x.Sets {
			if s != nil {
				w.node(s)
			}
		}
		if x.Statement != nil {
			w.node(x.Statement)
		}
	case *SetStmt:
		w.expr(x.Value)
	case *Query:
		for _, c := range x.With {
			if c != nil {
				w.node(c)
			}
		}
		if x.Body != nil {
			w.node(x.Body)
		}
		w.orderItems(x.OrderBy)
		w.expr(x.Limit)
		w.expr(x.Offset)
	case *CTE:
		w.query(x.Query)
	case *Select:
		for _, it := range x.Columns {
			if it != nil {
				w.node(it)
			}
		}
		w.table(x.From)
		w.expr(x.Where)
		w.exprs(x.GroupBy)
		w.expr(x.Having)
		for _, nw := range x.Windows {
			if nw != nil {
				w.node(nw)
			}
		}
	case *SelectItem:
		w.expr(x.Expr)
	case *SetOp:
		if x.Left != nil {
			w.node(x.Left)
		}
		if x.Right != nil {
			w.node(x.Right)
		}
	case *OrderItem:
		w.expr(x.Expr)
	case *Insert:
		if x.Export != nil {
			w.node(x.Export)
		}
		w.query(x.Source)
		if x.PartitionedBy != nil {
			w.node(x.PartitionedBy)
		}
		w.exprs(x.ClusteredBy)
	case *Replace:
		if x.Export != nil {
			w.node(x.Export)
		}
		w.expr(x.OverwriteWhere)
		w.query(x.Source)
		if x.PartitionedBy != nil {
			w.node(x.PartitionedBy)
		}
		w.exprs(x.ClusteredBy)
	case *Explain:
		if x.Statement != nil {
			w.node(x.Statement)
		}
	case *NamedWindow:
		w.window(x.Spec)
	case *WindowSpec:
		w.exprs(x.PartitionBy)
		w.orderItems(x.OrderBy)
		if f := x.Frame; f != nil {
			if f.Start != nil {
				w.expr(f.Start.Offset)
			}
			if f.End != nil {
				w.expr(f.End.Offset)
			}
		}
	case *TableRef:
	case *DerivedTable:
		w.query(x.Query)
	case *TableFunc:
		if x.Call != nil {
			w.node(x.Call)
		}
		for _, c := range x.Extend {
			if c != nil {
				w.node(c)
			}
		}
	case *Unnest:
		w.expr(x.Expr)
	case *Join:
		w.table(x.Left)
		w.table(x.Right)
		w.expr(x.On)
	case *ColumnDef:
		if x.Type != nil {
			w.node(x.Type)
		}
	case *BinaryExpr:
		w.expr(x.Left)
		w.expr(x.Right)
	case *UnaryExpr:
		w.expr(x.X)
	case *IsExpr:
		w.expr(x.X)
	case *BetweenExpr:
		w.expr(x.X)
		w.expr(x.Low)
		w.expr(x.High)
	case *InExpr:
		w.expr(x.X)
		w.exprs(x.List)
		w.query(x.Query)
	case *LikeExpr:
		w.expr(x.X)
		w.expr(x.Pattern)
		w.expr(x.Escape)
	case *CaseExpr:
		w.expr(x.Operand)
		for _, wh := range x.Whens {
			if wh != nil {
				w.node(wh)
			}
		}
		w.expr(x.Else)
	case *When:
		w.expr(x.Cond)
		w.expr(x.Result)
	case *CastExpr:
		w.expr(x.X)
		if x.Type != nil {
			w.node(x.Type)
		}
	case *FuncCall:
		w.exprs(x.Args)
		w.expr(x.Filter)
		w.window(x.Over)
	case *NamedArg:
		w.expr(x.Value)
	case *GroupingSets:
		for _, set := range x.Sets {
			w.exprs(set)
		}
	case *ArrayLit:
		w.exprs(x.Elems)
	case *FloorCeilExpr:
		w.expr(x.X)
	case *ExtractExpr:
		w.expr(x.X)
	case *TimestampArith:
		w.expr(x.A)
		w.expr(x.B)
	case *PositionExpr:
		w.expr(x.Sub)
		w.expr(x.Str)
		w.expr(x.From)
	case *TrimExpr:
		w.expr(x.Chars)
		w.expr(x.X)
	case *SubstringExpr:
		w.expr(x.X)
		w.expr(x.From)
		w.expr(x.For)
	case *SubqueryExpr:
		w.query(x.Query)
	case *ExistsExpr:
		w.query(x.Query)
	case *IndexExpr:
		w.expr(x.X)
		w.expr(x.Index)
	}
}
