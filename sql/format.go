package sql

import (
	"strconv"
	"strings"
)

// Format prints a node as canonical SQL on one line: keywords upper-case, identifiers quoted only
// when they were quoted or must be, explicit AS before aliases, and parentheses only where
// precedence requires them. Parsing the output yields the same tree (positions aside).
func Format(n Node) string {
	var pr printer
	pr.node(n)
	return pr.b.String()
}

type printer struct{ b strings.Builder }

func (pr *printer) w(s string) { pr.b.WriteString(s) }

func (pr *printer) node(n Node) {
	switch x := n.(type) {
	case nil:
	case *Script:
		for _, s := range x.Sets {
			pr.node(s)
			pr.w(" ")
		}
		if x.Statement != nil {
			pr.node(x.Statement)
		}
	case *SetStmt:
		pr.w("SET ")
		pr.ident(x.Key)
		pr.w(" = ")
		pr.expr(x.Value, 0)
		pr.w(";")
	case *Query:
		pr.query(x)
	case *Select:
		pr.selectBlock(x)
	case *SetOp:
		pr.setOp(x)
	case *Insert:
		pr.w("INSERT INTO ")
		pr.ingestTarget(x.Table, x.Export)
		pr.w(" ")
		pr.query(x.Source)
		pr.ingestTail(x.PartitionedBy, x.ClusteredBy)
	case *Replace:
		pr.w("REPLACE INTO ")
		pr.ingestTarget(x.Table, x.Export)
		if x.OverwriteWhere == nil {
			pr.w(" OVERWRITE ALL ")
		} else {
			pr.w(" OVERWRITE WHERE ")
			pr.expr(x.OverwriteWhere, 0)
			pr.w(" ")
		}
		pr.query(x.Source)
		pr.ingestTail(x.PartitionedBy, x.ClusteredBy)
	case *Explain:
		pr.w("EXPLAIN PLAN FOR ")
		pr.node(x.Statement)
	case *Export:
		pr.export(x)
	case *Granularity:
		pr.granularity(x)
	case *CTE:
		pr.cte(x)
	case *SelectItem:
		pr.selectItem(x)
	case *OrderItem:
		pr.orderItem(x)
	case *NamedWindow:
		pr.ident(x.Name)
		pr.w(" AS ")
		pr.windowSpec(x.Spec)
	case *WindowSpec:
		pr.windowSpec(x)
	case *ColumnDef:
		pr.ident(x.Name)
		pr.w(" ")
		pr.dataType(x.Type)
	case *DataType:
		pr.dataType(x)
	case *When:
		pr.w("WHEN ")
		pr.expr(x.Cond, 0)
		pr.w(" THEN ")
		pr.expr(x.Result, 0)
	case TableExpr:
		pr.table(x)
	case Expr:
		pr.expr(x, 0)
	}
}

func (pr *printer) ident(id Ident) {
	if id.Quoted || needsQuotes(id.Name) {
		pr.w(`"`)
		pr.w(strings.ReplaceAll(id.Name, `"`, `""`))
		pr.w(`"`)
		return
	}
	pr.w(id.Name)
}

// needsQuotes reports whether name cannot be written as a bare identifier.
func needsQuotes(name string) bool {
	if name == "" || lookupKeyword(name).reserved() {
		return true
	}
	for i, r := range name {
		if (i == 0 && !isIdentStart(r)) || !isIdentPart(r) {
			return true
		}
	}
	return false
}

func (pr *printer) name(parts []Ident) {
	for i, id := range parts {
		if i > 0 {
			pr.w(".")
		}
		pr.ident(id)
	}
}

func (pr *printer) identList(ids []Ident) {
	pr.w("(")
	for i, id := range ids {
		if i > 0 {
			pr.w(", ")
		}
		pr.ident(id)
	}
	pr.w(")")
}

func (pr *printer) str(s string) {
	pr.w("'")
	pr.w(strings.ReplaceAll(s, "'", "''"))
	pr.w("'")
}

func (pr *printer) exprList(list []Expr) {
	for i, e := range list {
		if i > 0 {
			pr.w(", ")
		}
		pr.expr(e, 0)
	}
}

// ---------------------------------------------------------------------------------------------
// Statements and queries

func (pr *printer) ingestTarget(table []Ident, ex *Export) {
	if ex != nil {
		pr.export(ex)
		return
	}
	pr.name(table)
}

func (pr *printer) export(x *Export) {
	if x == nil {
		return
	}
	pr.w("EXTERN(")
	pr.ident(x.Destination)
	pr.w("(")
	for i, prop := range x.Properties {
		if i > 0 {
			pr.w(", ")
		}
		pr.ident(prop.Name)
		pr.w(" => ")
		pr.str(prop.Value)
	}
	pr.w(")) AS ")
	pr.ident(x.Format)
}

func (pr *printer) ingestTail(g *Granularity, cluster []Expr) {
	if g != nil {
		pr.w(" PARTITIONED BY ")
		pr.granularity(g)
	}
	if len(cluster) > 0 {
		pr.w(" CLUSTERED BY ")
		pr.exprList(cluster)
	}
}

func (pr *printer) granularity(g *Granularity) {
	if g == nil {
		return
	}
	switch g.Form {
	case GranAll:
		pr.w("ALL")
	case GranKeyword:
		pr.w(g.Unit.String())
	case GranString:
		pr.str(g.Literal)
	case GranTimeFloor:
		pr.w("TIME_FLOOR(__time, ")
		pr.str(g.Literal)
		pr.w(")")
	case GranFloor:
		pr.w("FLOOR(__time TO ")
		pr.w(g.Unit.String())
		pr.w(")")
	}
}

func (pr *printer) query(q *Query) {
	if q == nil {
		return
	}
	if len(q.With) > 0 {
		pr.w("WITH ")
		for i, c := range q.With {
			if i > 0 {
				pr.w(", ")
			}
			pr.cte(c)
		}
		pr.w(" ")
	}
	pr.body(q.Body)
	if len(q.OrderBy) > 0 {
		pr.w(" ORDER BY ")
		pr.orderItems(q.OrderBy)
	}
	if q.Limit != nil {
		pr.w(" LIMIT ")
		pr.expr(q.Limit, 0)
	}
	if q.Offset != nil {
		pr.w(" OFFSET ")
		pr.expr(q.Offset, 0)
	}
}

func (pr *printer) cte(c *CTE) {
	if c == nil {
		return
	}
	pr.ident(c.Name)
	if len(c.Columns) > 0 {
		pr.w(" ")
		pr.identList(c.Columns)
	}
	pr.w(" AS (")
	pr.query(c.Query)
	pr.w(")")
}

func (pr *printer) body(b QueryBody) {
	switch x := b.(type) {
	case *Select:
		pr.selectBlock(x)
	case *SetOp:
		pr.setOp(x)
	case *Query:
		pr.w("(")
		pr.query(x)
		pr.w(")")
	}
}

func setOpPrec(k SetOpKind) int {
	if k == Intersect {
		return 2
	}
	return 1
}

func (pr *printer) setOp(x *SetOp) {
	if x == nil {
		return
	}
	side := func(b QueryBody, right bool) {
		if s, ok := b.(*SetOp); ok {
			if sp, xp := setOpPrec(s.Op), setOpPrec(x.Op); sp < xp || (right && sp == xp) {
				pr.w("(")
				pr.setOp(s)
				pr.w(")")
				return
			}
		}
		pr.body(b)
	}
	side(x.Left, false)
	pr.w(" ")
	pr.w(x.Op.String())
	if x.All {
		pr.w(" ALL")
	}
	pr.w(" ")
	side(x.Right, true)
}

func (pr *printer) selectBlock(s *Select) {
	if s == nil {
		return
	}
	pr.w("SELECT ")
	if s.Distinct {
		pr.w("DISTINCT ")
	}
	for i, it := range s.Columns {
		if i > 0 {
			pr.w(", ")
		}
		pr.selectItem(it)
	}
	if s.From != nil {
		pr.w(" FROM ")
		pr.table(s.From)
	}
	if s.Where != nil {
		pr.w(" WHERE ")
		pr.expr(s.Where, 0)
	}
	if len(s.GroupBy) > 0 {
		pr.w(" GROUP BY ")
		pr.exprList(s.GroupBy)
	}
	if s.Having != nil {
		pr.w(" HAVING ")
		pr.expr(s.Having, 0)
	}
	if len(s.Windows) > 0 {
		pr.w(" WINDOW ")
		for i, w := range s.Windows {
			if i > 0 {
				pr.w(", ")
			}
			pr.ident(w.Name)
			pr.w(" AS ")
			pr.windowSpec(w.Spec)
		}
	}
}

func (pr *printer) selectItem(it *SelectItem) {
	if it == nil {
		return
	}
	pr.expr(it.Expr, 0)
	if it.Alias != nil {
		pr.w(" AS ")
		pr.ident(*it.Alias)
	}
}

func (pr *printer) orderItems(items []*OrderItem) {
	for i, it := range items {
		if i > 0 {
			pr.w(", ")
		}
		pr.orderItem(it)
	}
}

func (pr *printer) orderItem(it *OrderItem) {
	if it == nil {
		return
	}
	pr.expr(it.Expr, 0)
	if it.Desc {
		pr.w(" DESC")
	}
	switch it.Nulls {
	case NullsFirst:
		pr.w(" NULLS FIRST")
	case NullsLast:
		pr.w(" NULLS LAST")
	}
}

// ---------------------------------------------------------------------------------------------
// FROM

func (pr *printer) table(t TableExpr) {
	switch x := t.(type) {
	case *TableRef:
		pr.name(x.Name)
		pr.alias(x.Alias, x.ColumnAliases)
	case *DerivedTable:
		if x.Lateral {
			pr.w("LATERAL ")
		}
		pr.w("(")
		pr.query(x.Query)
		pr.w(")")
		pr.alias(x.Alias, x.ColumnAliases)
	case *TableFunc:
		pr.w("TABLE(")
		pr.expr(x.Call, 0)
		pr.w(")")
		if x.Extend != nil {
			pr.w(" EXTEND (")
			for i, c := range x.Extend {
				if i > 0 {
					pr.w(", ")
				}
				pr.ident(c.Name)
				pr.w(" ")
				pr.dataType(c.Type)
			}
			pr.w(")")
		}
		pr.alias(x.Alias, x.ColumnAliases)
	case *Unnest:
		pr.w("UNNEST(")
		pr.expr(x.Expr, 0)
		pr.w(")")
		pr.alias(x.Alias, x.ColumnAliases)
	case *Join:
		pr.table(x.Left)
		if x.Kind == JoinComma {
			pr.w(", ")
		} else {
			pr.w(" ")
			if x.Natural {
				pr.w("NATURAL ")
			}
			pr.w(x.Kind.String())
			pr.w(" ")
		}
		pr.table(x.Right)
		if x.On != nil {
			pr.w(" ON ")
			pr.expr(x.On, 0)
		} else if len(x.Using) > 0 {
			pr.w(" USING ")
			pr.identList(x.Using)
		}
	}
}

func (pr *printer) alias(a *Ident, cols []Ident) {
	if a == nil {
		return
	}
	pr.w(" AS ")
	pr.ident(*a)
	if len(cols) > 0 {
		pr.w(" ")
		pr.identList(cols)
	}
}

func (pr *printer) dataType(t *DataType) {
	if t == nil {
		return
	}
	if t.Name == "TYPE" && t.Complex != "" {
		pr.w("TYPE(")
		pr.str(t.Complex)
		pr.w(")")
	} else {
		pr.w(t.Name)
		if len(t.Params) > 0 {
			pr.w("(")
			for i, v := range t.Params {
				if i > 0 {
					pr.w(", ")
				}
				pr.w(strconv.Itoa(v))
			}
			pr.w(")")
		}
		if t.WithLocalTimeZone {
			pr.w(" WITH LOCAL TIME ZONE")
		}
	}
	for i := 0; i < t.ArrayDepth; i++ {
		pr.w(" ARRAY")
	}
}

// ---------------------------------------------------------------------------------------------
// Expressions

// exprPrec is the precedence of e's outermost operator (precPrimary for atoms).
func exprPrec(e Expr) int {
	switch x := e.(type) {
	case *BinaryExpr:
		switch x.Op {
		case OpOr:
			return precOr
		case OpAnd:
			return precAnd
		case OpAdd, OpSub:
			return precAdd
		case OpMul, OpDiv, OpMod, OpConcat:
			return precMul
		}
		return precCmp
	case *UnaryExpr:
		if x.Op == OpNot {
			return precNot
		}
		return precUnary
	case *IsExpr:
		return precIs
	case *BetweenExpr, *InExpr, *LikeExpr:
		return precBetween
	case *IndexExpr:
		return precPostfix
	}
	return precPrimary
}

// expr prints e, in parentheses if it binds more loosely than minPrec.
func (pr *printer) expr(e Expr, minPrec int) {
	if e == nil {
		return
	}
	if exprPrec(e) < minPrec {
		pr.w("(")
		pr.expr(e, 0)
		pr.w(")")
		return
	}
	switch x := e.(type) {
	case *ColumnRef:
		pr.name(x.Parts)
	case *StarExpr:
		for _, q := range x.Qualifier {
			pr.ident(q)
			pr.w(".")
		}
		pr.w("*")
	case *NumberLit:
		pr.w(x.Text)
	case *StringLit:
		pr.str(x.Value)
	case *BoolLit:
		if x.Value {
			pr.w("TRUE")
		} else {
			pr.w("FALSE")
		}
	case *NullLit:
		pr.w("NULL")
	case *TypedLit:
		pr.w(x.Kind.String())
		pr.w(" ")
		pr.str(x.Value)
	case *IntervalLit:
		pr.w("INTERVAL ")
		if x.Negative {
			pr.w("-")
		}
		pr.str(x.Value)
		pr.w(" ")
		pr.w(x.Unit.String())
		if x.ToUnit != UnitNone {
			pr.w(" TO ")
			pr.w(x.ToUnit.String())
		}
	case *GroupingSets:
		pr.groupingSets(x)
	case *ArrayLit:
		pr.w("ARRAY[")
		pr.exprList(x.Elems)
		pr.w("]")
	case *Param:
		pr.w("?")
	case *BinaryExpr:
		prec := exprPrec(x)
		pr.expr(x.Left, prec)
		pr.w(" ")
		pr.w(x.Op.String())
		pr.w(" ")
		pr.expr(x.Right, prec+1)
	case *UnaryExpr:
		switch x.Op {
		case OpNot:
			pr.w("NOT ")
			pr.expr(x.X, precNot)
			return
		case OpNeg:
			pr.w("-")
		case OpPlus:
			pr.w("+")
		}
		if u, ok := x.X.(*UnaryExpr); ok && u.Op != OpNot {
			pr.w(" ") // "--" would start a comment
		}
		pr.expr(x.X, precUnary)
	case *IsExpr:
		pr.expr(x.X, precIs)
		pr.w(" IS ")
		if x.Not {
			pr.w("NOT ")
		}
		pr.w(x.What.String())
	case *BetweenExpr:
		pr.expr(x.X, precBetween)
		pr.not(x.Not)
		pr.w(" BETWEEN ")
		if x.Symmetric {
			pr.w("SYMMETRIC ")
		}
		pr.expr(x.Low, precBetween+1)
		pr.w(" AND ")
		pr.expr(x.High, precBetween+1)
	case *InExpr:
		pr.expr(x.X, precBetween)
		pr.not(x.Not)
		pr.w(" IN (")
		if x.Query != nil {
			pr.query(x.Query)
		} else {
			pr.exprList(x.List)
		}
		pr.w(")")
	case *LikeExpr:
		pr.expr(x.X, precBetween)
		pr.not(x.Not)
		if x.Similar {
			pr.w(" SIMILAR TO ")
		} else {
			pr.w(" LIKE ")
		}
		pr.expr(x.Pattern, precBetween+1)
		if x.Escape != nil {
			pr.w(" ESCAPE ")
			pr.expr(x.Escape, precBetween+1)
		}
	case *CaseExpr:
		pr.w("CASE")
		if x.Operand != nil {
			pr.w(" ")
			pr.expr(x.Operand, 0)
		}
		for _, w := range x.Whens {
			pr.w(" WHEN ")
			pr.expr(w.Cond, 0)
			pr.w(" THEN ")
			pr.expr(w.Result, 0)
		}
		if x.Else != nil {
			pr.w(" ELSE ")
			pr.expr(x.Else, 0)
		}
		pr.w(" END")
	case *CastExpr:
		pr.w("CAST(")
		pr.expr(x.X, 0)
		pr.w(" AS ")
		pr.dataType(x.Type)
		pr.w(")")
	case *FuncCall:
		pr.funcCall(x)
	case *NamedArg:
		pr.ident(x.Name)
		pr.w(" => ")
		pr.expr(x.Value, 0)
	case *FloorCeilExpr:
		if x.Ceil {
			pr.w("CEIL(")
		} else {
			pr.w("FLOOR(")
		}
		pr.expr(x.X, 0)
		pr.w(" TO ")
		pr.w(x.Unit.String())
		pr.w(")")
	case *ExtractExpr:
		pr.w("EXTRACT(")
		pr.w(x.Unit.String())
		pr.w(" FROM ")
		pr.expr(x.X, 0)
		pr.w(")")
	case *TimestampArith:
		if x.Diff {
			pr.w("TIMESTAMPDIFF(")
		} else {
			pr.w("TIMESTAMPADD(")
		}
		pr.w(x.Unit.String())
		pr.w(", ")
		pr.expr(x.A, 0)
		pr.w(", ")
		pr.expr(x.B, 0)
		pr.w(")")
	case *PositionExpr:
		pr.w("POSITION(")
		pr.expr(x.Sub, precBetween+1)
		pr.w(" IN ")
		pr.expr(x.Str, 0)
		if x.From != nil {
			pr.w(" FROM ")
			pr.expr(x.From, 0)
		}
		pr.w(")")
	case *TrimExpr:
		pr.w("TRIM(")
		if x.Side != TrimBoth || x.Chars != nil {
			pr.w(x.Side.String())
			pr.w(" ")
			if x.Chars != nil {
				pr.expr(x.Chars, 0)
				pr.w(" ")
			}
			pr.w("FROM ")
		}
		pr.expr(x.X, 0)
		pr.w(")")
	case *SubstringExpr:
		pr.w("SUBSTRING(")
		pr.expr(x.X, 0)
		pr.w(" FROM ")
		pr.expr(x.From, 0)
		if x.For != nil {
			pr.w(" FOR ")
			pr.expr(x.For, 0)
		}
		pr.w(")")
	case *SubqueryExpr:
		pr.w("(")
		pr.query(x.Query)
		pr.w(")")
	case *ExistsExpr:
		pr.w("EXISTS (")
		pr.query(x.Query)
		pr.w(")")
	case *IndexExpr:
		pr.expr(x.X, precPostfix)
		pr.w("[")
		pr.expr(x.Index, 0)
		pr.w("]")
	}
}

func (pr *printer) not(not bool) {
	if not {
		pr.w(" NOT")
	}
}

// specialCallNames are function names that only parse as a special form when written bare;
// a plain call with one of these names must be quoted to print back as a plain call.
var specialCallNames = map[string]bool{"EXTRACT": true, "TIMESTAMPADD": true, "TIMESTAMPDIFF": true,
	"POSITION": true, "TRIM": true}

func (pr *printer) funcCall(x *FuncCall) {
	name := x.Name
	if !name.Quoted && specialCallNames[strings.ToUpper(name.Name)] {
		name.Quoted = true
	}
	switch k := lookupKeyword(name.Name); {
	case name.Quoted:
		pr.ident(name)
	case k == kwLEFT || k == kwRIGHT || k == kwREPLACE || k == kwCURRENT_DATE || k == kwCURRENT_TIME ||
		k == kwCURRENT_TIMESTAMP || k == kwLOCALTIME || k == kwLOCALTIMESTAMP:
		pr.w(name.Name) // reserved words that parse as function names
	default:
		pr.ident(name)
	}
	if x.Niladic && len(x.Args) == 0 {
		return
	}
	pr.w("(")
	if x.Distinct {
		pr.w("DISTINCT ")
	}
	pr.exprList(x.Args)
	pr.w(")")
	if x.Filter != nil {
		pr.w(" FILTER (WHERE ")
		pr.expr(x.Filter, 0)
		pr.w(")")
	}
	if x.Over != nil {
		pr.w(" OVER ")
		pr.windowSpec(x.Over)
	}
}

func (pr *printer) windowSpec(w *WindowSpec) {
	if w == nil {
		return
	}
	if w.Ref != nil {
		pr.ident(*w.Ref)
		return
	}
	pr.w("(")
	sep := ""
	if len(w.PartitionBy) > 0 {
		pr.w("PARTITION BY ")
		pr.exprList(w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		pr.w(sep)
		pr.w("ORDER BY ")
		pr.orderItems(w.OrderBy)
		sep = " "
	}
	if f := w.Frame; f != nil {
		pr.w(sep)
		if f.Range {
			pr.w("RANGE ")
		} else {
			pr.w("ROWS ")
		}
		if f.End != nil {
			pr.w("BETWEEN ")
			pr.frameBound(f.Start)
			pr.w(" AND ")
			pr.frameBound(f.End)
		} else {
			pr.frameBound(f.Start)
		}
	}
	pr.w(")")
}

func (pr *printer) frameBound(b *FrameBound) {
	if b == nil {
		return
	}
	switch b.Kind {
	case UnboundedPreceding:
		pr.w("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		pr.w("UNBOUNDED FOLLOWING")
	case CurrentRow:
		pr.w("CURRENT ROW")
	case Preceding:
		pr.expr(b.Offset, precBetween+1)
		pr.w(" PRECEDING")
	case Following:
		pr.expr(b.Offset, precBetween+1)
		pr.w(" FOLLOWING")
	}
}
