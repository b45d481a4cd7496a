package sqlplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"strata/internal/jsonenc"
	"strata/sql"
	"strata/sqlexpr"
)

// Planned is a planned statement: the native query to run and how to read
// its answer as SQL rows.
type Planned struct {
	// Natives are the native queries to run, context included, in order:
	// one, or one per branch of a top-level UNION ALL (see RowsOf).
	Natives []json.RawMessage
	// Native is Natives[0].
	Native json.RawMessage
	// Columns are the result's SQL columns.
	Columns []Column
	// Explain is set for EXPLAIN PLAN FOR: the answer is ExplainRow, not
	// the query's result.
	Explain bool
	// Context is the query context after SET statements.
	Context map[string]any
	// Resources are the datasources the query reads.
	Resources []string
	// ReadsClock is set when the plan holds the time it was made
	// (CURRENT_TIMESTAMP, CURRENT_DATE): it is for this statement only.
	ReadsClock bool
	// OuterLimit is the context's sqlOuterLimit (-1: none), the most rows
	// the statement answers; the caller caps a UNION ALL's concatenated
	// rows with it (outerlimit.go).
	OuterLimit int64

	b     *built
	parts []*built
	tz    *time.Location
}

// built is one planned query block.
type built struct {
	native    map[string]any
	queryType string
	out       []outCol
	// ctx holds context keys the plan needs (sortByDimsFirst).
	ctx map[string]any
	// limit and offset applied to the rows read (timeseries over all time
	// answers one row the native query cannot limit).
	limit, offset int64
	// sort is a scan's ORDER BY done on the broker (order.go).
	sort *brokerSort
}

// outCol is one output column: SQL name and type, and where its value is
// in a native result row ("" native: the row's timestamp).
type outCol struct {
	name, typ, native string
}

type planner struct {
	ctx    context.Context
	cat    Catalog
	req    Request
	qctx   map[string]any
	tz     *time.Location
	tzName string
	// now is CURRENT_TIMESTAMP; env the expression translator's view of
	// the statement (expr.go).
	now       time.Time
	env       *sqlexpr.Env
	ctes      map[string]*sql.Query
	resources map[string]bool
	// nested counts the subqueries being planned (their rows carry no
	// timestamp, so no key moves into the granularity there).
	nested int
	// inCache holds the values of IN subqueries already run, by their SQL.
	inCache map[string][]ex
	// joins counts the joins planned (their prefixes); where is the WHERE
	// of the SELECT whose FROM is being planned (join.go).
	joins     int
	where     sql.Expr
	joinWhere []sql.Expr // ON conditions of INNER joins moved to the WHERE clause
	// outer is sqlOuterLimit (-1: none), the limit of the top-level block
	// outerQ (outerlimit.go).
	outer  int64
	outerQ *sql.Query
}

// Plan parses and plans src.
func Plan(ctx context.Context, src string, req Request, cat Catalog) (*Planned, error) {
	sc, err := sql.ParseScript(src)
	if err != nil {
		var se *sql.Error
		if errors.As(err, &se) && se.Unsupported {
			return nil, unsupported("%s", parseMessage(se))
		}
		if errors.As(err, &se) {
			return nil, invalid("%s", parseMessage(se))
		}
		return nil, invalid("%s", err.Error())
	}
	qctx := make(map[string]any, len(req.Context)+len(sc.Sets))
	for k, v := range req.Context {
		qctx[k] = v
	}
	for _, s := range sc.Sets {
		v, err := setValue(s.Value)
		if err != nil {
			return nil, invalid("%s", sql.AtPos(s, err.Error()))
		}
		qctx[s.Key.Name] = v
	}
	p := &planner{ctx: ctx, cat: cat, req: req, qctx: qctx, tz: time.UTC, tzName: "UTC", now: time.Now(), resources: map[string]bool{}}
	if z, ok := qctx["sqlTimeZone"].(string); ok && z != "" {
		loc, err := time.LoadLocation(z)
		if err != nil {
			return nil, invalid("Invalid sqlTimeZone [%s]", z)
		}
		p.tz, p.tzName = loc, z
	}
	if p.outer, err = outerLimit(qctx); err != nil {
		return nil, err
	}
	st := sc.Statement
	out := &Planned{Context: qctx, tz: p.tz}
	if e, ok := st.(*sql.Explain); ok {
		out.Explain = true
		st = e.Statement
	}
	q, ok := st.(*sql.Query)
	if !ok {
		return nil, invalid("%s", sql.AtPos(st, "INSERT and REPLACE run as tasks: submit them to /druid/v2/sql/task"))
	}
	p.outerQ, out.OuterLimit = q, p.outer
	parts, err := p.union(q)
	if err != nil {
		return nil, err
	}
	for _, b := range parts {
		nctx := map[string]any{}
		for k, v := range qctx {
			nctx[k] = v
		}
		if id, ok := qctx["sqlQueryId"].(string); ok && id != "" {
			if _, set := nctx["queryId"]; !set {
				nctx["queryId"] = id
			}
		}
		if b.queryType == "timeseries" {
			if _, set := nctx["skipEmptyBuckets"]; !set && b.native["granularity"] != "all" {
				nctx["skipEmptyBuckets"] = true
			}
		}
		for k, v := range b.ctx {
			nctx[k] = v
		}
		b.native["context"] = nctx
		raw, err := jsonenc.Append(nil, b.native) // json.Marshal's bytes, faster
		if err != nil {
			return nil, err
		}
		out.Natives = append(out.Natives, raw)
	}
	out.Native = out.Natives[0]
	out.parts = parts
	out.b = parts[0]
	for _, c := range out.b.out {
		out.Columns = append(out.Columns, Column{Name: c.name, Type: c.typ})
	}
	for r := range p.resources {
		out.Resources = append(out.Resources, r)
	}
	out.ReadsClock = p.env != nil && p.env.NowRead
	return out, nil
}

// union plans a top-level UNION ALL as one native query per branch, whose
// rows the caller concatenates (Druid runs it the same way); any other
// statement is one part.
func (p *planner) union(q *sql.Query) ([]*built, error) {
	op, isUnion := q.Body.(*sql.SetOp)
	if !isUnion {
		b, err := p.query(q)
		if err != nil {
			return nil, err
		}
		return []*built{b}, nil
	}
	if op.Op != sql.Union || !op.All {
		return nil, unsupported("%s", sql.AtPos(op, op.Op.String()+" is not supported (only UNION ALL at the top level)"))
	}
	if len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, unsupported("%s", sql.AtPos(q, "ORDER BY, LIMIT and OFFSET over UNION ALL are not supported"))
	}
	var branches []sql.QueryBody
	var flatten func(b sql.QueryBody) error
	flatten = func(b sql.QueryBody) error {
		if o, ok := b.(*sql.SetOp); ok {
			if o.Op != sql.Union || !o.All {
				return unsupported("%s", sql.AtPos(o, o.Op.String()+" is not supported (only UNION ALL at the top level)"))
			}
			if err := flatten(o.Left); err != nil {
				return err
			}
			return flatten(o.Right)
		}
		branches = append(branches, b)
		return nil
	}
	if err := flatten(op); err != nil {
		return nil, err
	}
	var parts []*built
	for _, br := range branches {
		bq, ok := br.(*sql.Query)
		if !ok {
			bq = &sql.Query{Body: br}
		}
		if len(q.With) > 0 {
			with := *bq
			with.With = append(append([]*sql.CTE{}, q.With...), bq.With...)
			bq = &with
		}
		b, err := p.query(bq)
		if err != nil {
			return nil, err
		}
		if len(parts) > 0 && len(b.out) != len(parts[0].out) {
			return nil, invalid("%s", sql.AtPos(br, "Column count mismatch in UNION ALL"))
		}
		parts = append(parts, b)
	}
	return parts, nil
}

// parseMessage renders a syntax error with Druid's position suffix.
func parseMessage(e *sql.Error) string {
	var msg string
	if e.Encountered != "" {
		msg = "Incorrect syntax near the keyword or token [" + strings.Trim(e.Encountered, `"`) + "]"
		if e.Msg != "" {
			msg += ": " + e.Msg
		}
	} else {
		msg = e.Msg
	}
	return fmt.Sprintf("%s (line [%d], column [%d])", msg, e.Line, e.Column)
}

func setValue(e sql.Expr) (any, error) {
	switch x := e.(type) {
	case *sql.StringLit:
		return x.Value, nil
	case *sql.BoolLit:
		return x.Value, nil
	case *sql.NullLit:
		return nil, nil
	case *sql.NumberLit:
		if x.IsInteger() {
			return x.Int64()
		}
		return x.Float64()
	case *sql.UnaryExpr:
		if n, ok := x.X.(*sql.NumberLit); ok && x.Op == sql.OpNeg {
			v, err := setValue(n)
			switch v := v.(type) {
			case int64:
				return -v, err
			case float64:
				return -v, err
			}
		}
	}
	return nil, errors.New("SET value must be a literal")
}

func (p *planner) ctxBool(key string, def bool) bool {
	switch v := p.qctx[key].(type) {
	case bool:
		return v
	case string:
		b, err := strconv.ParseBool(v)
		if err == nil {
			return b
		}
	}
	return def
}

// from resolves a FROM item to a native data source and its columns.
func (p *planner) from(t sql.TableExpr) (any, []scopeCol, error) {
	switch x := t.(type) {
	case *sql.TableRef:
		if len(x.ColumnAliases) > 0 {
			return nil, nil, unsupported("%s", sql.AtPos(x, "Column aliases on a table are not supported"))
		}
		if len(x.Name) == 1 {
			if q, ok := p.ctes[x.Name[0].Name]; ok {
				return p.subquery(q)
			}
		}
		schema, name := "", x.Name[len(x.Name)-1].Name
		switch len(x.Name) {
		case 1:
		case 2:
			schema = x.Name[0].Name
		default:
			return nil, nil, invalid("%s", sql.AtPos(x, "Object '"+name+"' not found"))
		}
		tbl, err := p.cat.Table(p.ctx, schema, name)
		if err != nil {
			return nil, nil, err
		}
		if tbl == nil {
			full := name
			if schema != "" {
				full = schema + "." + name
			}
			return nil, nil, invalid("%s", sql.AtPos(x, "Object '"+full+"' not found"))
		}
		if schema == "" || strings.EqualFold(schema, "druid") {
			p.resources[name] = true
		}
		cols := make([]scopeCol, len(tbl.Columns))
		for i, c := range tbl.Columns {
			cols[i] = scopeCol{name: c.Name, native: c.Name, typ: c.Type}
		}
		return tbl.DataSource, cols, nil
	case *sql.DerivedTable:
		if x.Lateral || len(x.ColumnAliases) > 0 {
			return nil, nil, unsupported("%s", sql.AtPos(x, "LATERAL and column aliases on subqueries are not supported"))
		}
		return p.subquery(x.Query)
	case *sql.Join:
		return p.join(x) // join.go
	case *sql.Unnest:
		return nil, nil, unsupported("%s", sql.AtPos(x, "UNNEST is not supported"))
	case *sql.TableFunc:
		return nil, nil, unsupported("%s", sql.AtPos(x, "Table functions (EXTERN and others) are not supported in interactive SQL"))
	}
	return nil, nil, unsupported("%s", sql.AtPos(t, "FROM item is not supported"))
}

func (p *planner) subquery(q *sql.Query) (any, []scopeCol, error) {
	p.nested++
	b, err := p.query(q)
	p.nested--
	if err != nil {
		return nil, nil, err
	}
	if b.limit >= 0 || b.offset > 0 {
		return nil, nil, unsupported("%s", sql.AtPos(q, "This subquery's LIMIT/OFFSET cannot be planned as a native query data source"))
	}
	for _, c := range b.out {
		if c.native == "" {
			return nil, nil, unsupported("%s", sql.AtPos(q, "Subquery grouping on time cannot be planned as a query data source"))
		}
	}
	cols := make([]scopeCol, len(b.out))
	for i, c := range b.out {
		cols[i] = scopeCol{name: c.name, native: c.native, typ: c.typ, tableArray: isArrayType(c.typ)}
	}
	return map[string]any{"type": "query", "query": b.native}, cols, nil
}

// query plans one query block.
func (p *planner) query(q *sql.Query) (*built, error) {
	if len(q.With) > 0 {
		if p.ctes == nil {
			p.ctes = map[string]*sql.Query{}
		}
		for _, c := range q.With {
			if len(c.Columns) > 0 {
				return nil, unsupported("%s", sql.AtPos(c, "WITH column lists are not supported"))
			}
			p.ctes[c.Name.Name] = c.Query
		}
	}
	var sel *sql.Select
	switch body := q.Body.(type) {
	case *sql.Select:
		sel = body
	case *sql.Query:
		if len(q.OrderBy) == 0 && q.Limit == nil && q.Offset == nil {
			p.descendOuter(q, body)
			return p.query(body)
		}
		return nil, unsupported("%s", sql.AtPos(q, "ORDER BY/LIMIT around a parenthesized query is not supported"))
	case *sql.SetOp:
		return nil, unsupported("%s", sql.AtPos(body, body.Op.String()+" is not supported"))
	}
	if len(sel.Windows) > 0 {
		return nil, unsupported("%s", sql.AtPos(sel, "WINDOW is not supported"))
	}
	if sel2, err := p.exactDistinct(q, sel); err != nil {
		return nil, err
	} else if sel2 != nil {
		sel = sel2
	}
	if m := mergeArraySubquery(q, sel); m != nil {
		sel = m
	}
	var ds any
	var cols []scopeCol
	var err error
	leave := p.enterFrom(sel) // join.go
	if sel.From == nil {
		// SELECT without FROM reads one row of nothing, as Calcite's VALUES
		// does: a native inline data source of one row.
		ds = map[string]any{"type": "inline", "columnNames": []string{"ZERO"}, "columnTypes": []string{"LONG"}, "rows": [][]any{{0}}}
	} else if ds, cols, err = p.from(sel.From); err != nil {
		leave(sel)
		return nil, err
	}
	sel = leave(sel)
	limit, offset := int64(-1), int64(0)
	if q.Limit != nil {
		if limit, err = p.count(q.Limit, "LIMIT"); err != nil {
			return nil, err
		}
	}
	if q.Offset != nil {
		if offset, err = p.count(q.Offset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	limit = p.capOuter(q, limit)
	s := &selectPlan{p: p, sel: sel, q: q, ds: ds, cols: cols, quals: tableQuals(sel.From), limit: limit, offset: offset}
	if sel.Distinct || len(sel.GroupBy) > 0 || sel.Having != nil || hasAggregate(sel, q) || (sel.From == nil && hasArrayLit(sel)) {
		return s.aggregate()
	}
	return s.scan()
}

func (p *planner) count(e sql.Expr, what string) (int64, error) {
	t := &translator{p: p}
	v, err := t.expr(e)
	if err != nil {
		return 0, err
	}
	n, ok := v.lit.(int64)
	if !ok || n < 0 {
		return 0, invalid("%s", sql.AtPos(e, what+" must be a non-negative integer"))
	}
	return n, nil
}

// selectPlan plans one SELECT.
type selectPlan struct {
	p             *planner
	sel           *sql.Select
	q             *sql.Query
	ds            any
	cols          []scopeCol
	quals         []string // the names a column may be qualified with
	limit, offset int64
	vcols         []any
	nv            int
}

func (s *selectPlan) virtual(e ex) string {
	name := "v" + strconv.Itoa(s.nv)
	s.nv++
	vc := map[string]any{"type": "expression", "name": name, "expression": e.src, "outputType": nativeType(e.typ)}
	if isArrayType(e.typ) {
		delete(vc, "outputType") // the expression's own array type
	}
	s.vcols = append(s.vcols, vc)
	return name
}

// items expands the select list ("*" to the input's columns).
func (s *selectPlan) items() ([]sql.Expr, []string, error) {
	var exprs []sql.Expr
	var names []string
	for i, it := range s.sel.Columns {
		if st, ok := it.Expr.(*sql.StarExpr); ok {
			if len(st.Qualifier) > 0 {
				return nil, nil, unsupported("%s", sql.AtPos(st, "Qualified * is not supported"))
			}
			for _, c := range s.cols {
				if c.hidden { // a USING join lists the column once (join.go)
					continue
				}
				ref := &sql.ColumnRef{Parts: []sql.Ident{{Name: c.name, Quoted: true}}}
				if c.qual != "" { // a join's column: name its table, as two may share the name
					ref.Parts = []sql.Ident{{Name: c.qual, Quoted: true}, ref.Parts[0]}
				}
				exprs = append(exprs, ref)
				names = append(names, uniqueName(names, c.name)) // join.go
			}
			continue
		}
		exprs = append(exprs, it.Expr)
		switch {
		case it.Alias != nil:
			names = append(names, it.Alias.Name)
		default:
			if c, ok := it.Expr.(*sql.ColumnRef); ok {
				names = append(names, c.Column().Name)
			} else {
				names = append(names, "EXPR$"+strconv.Itoa(i))
			}
		}
	}
	return exprs, names, nil
}

func (s *selectPlan) scan() (*built, error) {
	t := &translator{p: s.p, cols: s.cols, quals: s.quals}
	exprs, names, err := s.items()
	if err != nil {
		return nil, err
	}
	native := map[string]any{"queryType": "scan", "dataSource": s.ds, "resultFormat": "compactedList", "legacy": false}
	b := &built{native: native, queryType: "scan", limit: -1}
	var columns []string
	seen := map[string]bool{}
	for i, e := range exprs {
		v, err := t.expr(e)
		if err != nil {
			return nil, err
		}
		if isArrayType(v.typ) && v.col == "" {
			return nil, scanArrayError(e)
		}
		col := v.col
		if col == "" {
			col = s.virtual(v)
		}
		if !seen[col] {
			seen[col] = true
			columns = append(columns, col)
		}
		b.out = append(b.out, outCol{name: names[i], typ: v.typ, native: col})
	}
	native["columns"] = columns
	if err := s.where(native, t); err != nil {
		return nil, err
	}
	sorted, err := s.scanOrder(native, b, t, exprs, names)
	if err != nil {
		return nil, err
	}
	if s.limit >= 0 && !sorted {
		native["limit"] = s.limit
	}
	if s.offset > 0 && !sorted {
		native["offset"] = s.offset
	}
	if len(s.vcols) > 0 {
		native["virtualColumns"] = s.vcols
	}
	return b, nil
}

// where puts WHERE's time bounds in intervals and the rest in filter.
func (s *selectPlan) where(native map[string]any, t *translator) error {
	native["intervals"] = map[string]any{"type": "intervals", "intervals": []string{"-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z"}}
	if s.sel.Where == nil {
		return nil
	}
	lo, hi := int64(minTime), int64(maxTime)
	var rest []any
	for _, c := range conjuncts(s.sel.Where) {
		if l, h, ok := s.timeBound(c, t); ok {
			lo, hi = max(lo, l), min(hi, h)
			continue
		}
		f, err := s.filter(c, t)
		if err != nil {
			return err
		}
		rest = append(rest, f)
	}
	if hi < lo {
		hi = lo
	}
	native["intervals"] = map[string]any{"type": "intervals", "intervals": []string{isoMillis(lo) + "/" + isoMillis(hi)}}
	switch len(rest) {
	case 0:
	case 1:
		native["filter"] = rest[0]
	default:
		native["filter"] = map[string]any{"type": "and", "fields": rest}
	}
	return nil
}

// The eternity interval's bounds, as Druid writes them.
const (
	minTime = -4611686018427387904
	maxTime = 4611686018427387903
)

func isoMillis(ms int64) string {
	switch ms {
	case minTime:
		return "-146136543-09-08T08:23:32.096Z"
	case maxTime:
		return "146140482-04-24T15:36:27.903Z"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func conjuncts(e sql.Expr) []sql.Expr {
	if b, ok := e.(*sql.BinaryExpr); ok && b.Op == sql.OpAnd {
		return append(conjuncts(b.Left), conjuncts(b.Right)...)
	}
	return []sql.Expr{e}
}

// timeBound reads "__time op literal" and "__time BETWEEN a AND b" as a
// half-open millisecond range.
func (s *selectPlan) timeBound(e sql.Expr, t *translator) (int64, int64, bool) {
	isTime := func(x sql.Expr) bool {
		v, err := t.expr(x)
		return err == nil && v.col == "__time" && v.typ == tTimestamp
	}
	lit := func(x sql.Expr) (int64, bool) {
		v, err := t.expr(x)
		if err != nil || !v.isLit {
			return 0, false
		}
		switch l := v.lit.(type) {
		case int64:
			if v.typ == tTimestamp {
				return l, true
			}
		case string:
			ms, err := s.p.parseTimestamp(l)
			return ms, err == nil
		}
		return 0, false
	}
	switch x := e.(type) {
	case *sql.BetweenExpr:
		if x.Not || x.Symmetric || !isTime(x.X) {
			return 0, 0, false
		}
		a, ok1 := lit(x.Low)
		b, ok2 := lit(x.High)
		return a, b + 1, ok1 && ok2
	case *sql.BinaryExpr:
		op := x.Op
		l, r := x.Left, x.Right
		if !isTime(l) {
			l, r = r, l
			op = map[sql.BinaryOp]sql.BinaryOp{sql.OpLt: sql.OpGt, sql.OpGt: sql.OpLt, sql.OpLe: sql.OpGe, sql.OpGe: sql.OpLe, sql.OpEq: sql.OpEq}[x.Op]
		}
		if !isTime(l) {
			return 0, 0, false
		}
		v, ok := lit(r)
		if !ok {
			return 0, 0, false
		}
		switch op {
		case sql.OpEq:
			return v, v + 1, true
		case sql.OpLt:
			return minTime, v, true
		case sql.OpLe:
			return minTime, v + 1, true
		case sql.OpGt:
			return v + 1, maxTime, true
		case sql.OpGe:
			return v, maxTime, true
		}
	}
	return 0, 0, false
}

// filter turns a condition into a native filter: simple forms on a column
// become the native filter of that form, anything else an expression filter.
func (s *selectPlan) filter(e sql.Expr, t *translator) (any, error) {
	switch x := e.(type) {
	case *sql.BinaryExpr:
		switch x.Op {
		case sql.OpAnd, sql.OpOr:
			a, err := s.filter(x.Left, t)
			if err != nil {
				return nil, err
			}
			b, err := s.filter(x.Right, t)
			if err != nil {
				return nil, err
			}
			typ := "and"
			if x.Op == sql.OpOr {
				typ = "or"
			}
			return map[string]any{"type": typ, "fields": []any{a, b}}, nil
		case sql.OpEq, sql.OpLt, sql.OpLe, sql.OpGt, sql.OpGe:
			l, err := t.expr(x.Left)
			if err != nil {
				return nil, err
			}
			r, err := t.expr(x.Right)
			if err != nil {
				return nil, err
			}
			op := x.Op
			if l.isLit && r.col != "" {
				l, r = r, l
				op = map[sql.BinaryOp]sql.BinaryOp{sql.OpLt: sql.OpGt, sql.OpGt: sql.OpLt, sql.OpLe: sql.OpGe, sql.OpGe: sql.OpLe, sql.OpEq: sql.OpEq}[op]
			}
			if l.col != "" && r.isLit && r.lit != nil && matchable(l.typ, r) {
				mt, mv := matchValue(l.typ, r)
				if op == sql.OpEq {
					if mt == "STRING" {
						return map[string]any{"type": "selector", "dimension": l.col, "value": mv}, nil
					}
					return map[string]any{"type": "equals", "column": l.col, "matchValueType": mt, "matchValue": mv}, nil
				}
				f := map[string]any{"type": "range", "column": l.col, "matchValueType": mt}
				switch op {
				case sql.OpLt, sql.OpLe:
					f["upper"], f["upperOpen"] = mv, op == sql.OpLt
				default:
					f["lower"], f["lowerOpen"] = mv, op == sql.OpGt
				}
				return f, nil
			}
		}
	case *sql.UnaryExpr:
		if x.Op == sql.OpNot {
			// NOT over a native filter would keep nulls Druid's SQL drops:
			// the expression form is three-valued.
			break
		}
	case *sql.IsExpr:
		if x.What == sql.IsNull && !x.Not {
			v, err := t.expr(x.X)
			if err != nil {
				return nil, err
			}
			if v.col != "" {
				return map[string]any{"type": "null", "column": v.col}, nil
			}
		}
	case *sql.InExpr:
		if !x.Not {
			v, err := t.expr(x.X)
			if err != nil {
				return nil, err
			}
			if v.col != "" && v.typ == tVarchar {
				list, err := t.inValues(x)
				if err != nil {
					return nil, err
				}
				vals := []any{}
				ok := true
				for _, lv := range list {
					str, isStr := lv.lit.(string)
					if !lv.isLit || !isStr {
						ok = false
						break
					}
					vals = append(vals, str)
				}
				if ok && len(vals) > 0 {
					return map[string]any{"type": "in", "dimension": v.col, "values": vals}, nil
				}
			}
		}
	case *sql.LikeExpr:
		if !x.Not && !x.Similar {
			v, err := t.expr(x.X)
			if err != nil {
				return nil, err
			}
			pat, ok := x.Pattern.(*sql.StringLit)
			if v.col != "" && ok && v.typ == tVarchar {
				f := map[string]any{"type": "like", "dimension": v.col, "pattern": pat.Value}
				if x.Escape != nil {
					esc, ok := x.Escape.(*sql.StringLit)
					if !ok {
						return nil, unsupported("%s", sql.AtPos(x, "LIKE needs a literal escape"))
					}
					f["escape"] = esc.Value
				}
				return f, nil
			}
		}
	}
	v, err := t.expr(e)
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "expression", "expression": v.src}, nil
}

// matchable reports whether a column of type typ compares with literal v
// natively (same family: strings with strings, numbers with numbers).
func matchable(typ string, v ex) bool {
	switch v.lit.(type) {
	case string:
		return typ == tVarchar
	case int64, float64:
		return numeric(typ) || typ == tTimestamp
	}
	return false
}

func matchValue(typ string, v ex) (string, any) {
	switch l := v.lit.(type) {
	case string:
		return "STRING", l
	case int64:
		if typ == tDouble || typ == tFloat {
			return "DOUBLE", float64(l)
		}
		return "LONG", l
	case float64:
		return "DOUBLE", l
	}
	return "STRING", v.lit
}

// tableQuals are the names that qualify the columns of a FROM item: its
// alias, or else its (last) name.
func tableQuals(t sql.TableExpr) []string {
	switch x := t.(type) {
	case *sql.TableRef:
		if x.Alias != nil {
			return []string{x.Alias.Name}
		}
		return []string{x.Name[len(x.Name)-1].Name}
	case *sql.DerivedTable:
		if x.Alias != nil {
			return []string{x.Alias.Name}
		}
	case *sql.Join:
		return append(tableQuals(x.Left), tableQuals(x.Right)...)
	}
	return nil
}
