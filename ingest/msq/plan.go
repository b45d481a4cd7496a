package msq

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"strata/expr"
	"strata/ingest/input"
	"strata/interval"
	"strata/segmeta"
	"strata/sql"
	"strata/sqlexpr"
	"strata/storage/segment"
)

// A query is planned into stages. Each stage reads splits (files, segments or
// partitions of an earlier stage) through branches: a source plus per-row
// operators (filters and projections). Row-by-row parts of a query (WHERE,
// projections, UNION ALL, simple sub-queries) stay inside branches; GROUP BY,
// ORDER BY ... LIMIT and segment generation get stages of their own.

// relation is the planned output of a FROM item or query.
type relation struct {
	sig      Signature
	quals    []string
	branches []*branch
}

// branch is one source of rows and the operators applied to them.
type branch struct {
	src source
	ops []rowOp
}

// rowOp is a filter (keep rows where it is true) or a projection.
type rowOp struct {
	filter  *compiled
	project []*compiled
	width   int // row width after the op
}

func (b *branch) with(op rowOp) *branch {
	return &branch{src: b.src, ops: append(slices.Clone(b.ops), op)}
}

// source produces rows for a branch.
type source interface{ sourceSig() Signature }

// externalSource reads files of an input source.
type externalSource struct {
	src    input.Source
	format input.Format
	sig    Signature
	cols   []input.Column
}

func (s *externalSource) sourceSig() Signature { return s.sig }

// tableSource reads segments of a datasource.
type tableSource struct {
	dataSource string
	sig        Signature
	pieces     []tablePiece
}

type tablePiece struct {
	seg  *segmeta.DataSegment
	clip interval.Interval // rows outside are overshadowed
}

func (s *tableSource) sourceSig() Signature { return s.sig }

// stageSource reads the output partitions of a stage.
type stageSource struct{ st *stage }

func (s *stageSource) sourceSig() Signature { return s.st.outSig }

// valuesSource is rows given in the plan (SELECT without FROM).
type valuesSource struct {
	sig  Signature
	rows [][]expr.Value
}

func (s *valuesSource) sourceSig() Signature { return s.sig }

// procKind is what a stage does.
type procKind uint8

const (
	procScan procKind = iota
	procGroupPre
	procGroupPost
	procSort
	procSegGen
)

// partKind is how a stage partitions its output.
type partKind uint8

const (
	partSingle partKind = iota
	partHash
	partChunk
)

type partSpec struct {
	kind partKind
	n    int // partHash: partitions
	keys int // partHash: hash the first keys columns
	gen  *segGenPlan
}

// stage is one stage of the plan.
type stage struct {
	num    int
	kind   procKind
	inputs []*branch
	outSig Signature
	outOps []rowOp
	part   partSpec
	group  *groupPlan
	sort   *sortPlan
	gen    *segGenPlan
	used   bool // another stage (or the results) reads it
	out    *partitionSet
}

// groupPlan is the grouping of a pre-/post-shuffle stage pair.
type groupPlan struct {
	keys     []*compiled // over input rows
	keyTypes []Type
	aggs     []*aggSpec
	having   *compiled // over post rows (keys + finalized aggregators)
	outputs  []outCol
	implicit bool // no GROUP BY: one group even for empty input
	rollup   bool // direct aggregator outputs keep intermediate values
}

type outCol struct {
	c   *compiled // over post rows
	agg int       // >= 0: the column is aggregator agg itself
}

// sortPlan orders rows and applies OFFSET / LIMIT.
type sortPlan struct {
	keys   []int
	desc   []bool
	nulls  []sql.NullsOrder
	offset int64
	limit  int64 // -1: none
}

type planner struct {
	ctx    context.Context
	env    Env
	q      *queryEnv
	opts   *options
	stages []*stage
	ctes   [][]*sql.CTE // WITH lists in scope, innermost last
	tables map[string]*tableInfo
}

// tableInfo is what the planner knows of a datasource.
type tableInfo struct {
	sig    Signature
	pieces []tablePiece
}

func (p *planner) newStage(kind procKind, inputs []*branch, outSig Signature) *stage {
	st := &stage{num: len(p.stages), kind: kind, inputs: inputs, outSig: outSig}
	p.stages = append(p.stages, st)
	for _, b := range inputs {
		if s, ok := b.src.(*stageSource); ok {
			s.st.used = true
		}
	}
	return st
}

// ---------------------------------------------------------------------------------------------
// Queries

// queryOut is a planned query: its relation and, for the ORDER BY of the
// caller, the formatted select expressions of a plain SELECT body.
type queryOut struct {
	rel      *relation
	itemFmts []string
}

// planQuery plans a query. ORDER BY with LIMIT/OFFSET is applied with a sort
// stage; a lone ORDER BY is dropped unless keepOrder (top-level SELECT).
func (p *planner) planQuery(q *sql.Query, keepOrder bool) (*queryOut, error) {
	if len(q.With) > 0 {
		p.ctes = append(p.ctes, q.With)
		defer func() { p.ctes = p.ctes[:len(p.ctes)-1] }()
	}
	out, err := p.planBody(q.Body)
	if err != nil {
		return nil, err
	}
	if q.Limit == nil && q.Offset == nil && (!keepOrder || len(q.OrderBy) == 0) {
		return out, nil
	}
	sp, err := p.sortPlan(q, out)
	if err != nil {
		return nil, err
	}
	src := p.materialize(out.rel)
	st := p.newStage(procSort, []*branch{{src: &stageSource{st: src}}}, out.rel.sig)
	st.sort = sp
	return &queryOut{rel: &relation{sig: out.rel.sig, branches: []*branch{{src: &stageSource{st: st}}}}, itemFmts: out.itemFmts}, nil
}

func (p *planner) sortPlan(q *sql.Query, out *queryOut) (*sortPlan, error) {
	sp := &sortPlan{limit: -1}
	lim := func(e sql.Expr, what string) (int64, error) {
		switch x := e.(type) {
		case *sql.NumberLit:
			n, err := x.Int64()
			if err != nil || n < 0 {
				return 0, invalidInput("%s", sql.AtPos(x, "invalid "+what))
			}
			return n, nil
		case *sql.Param:
			if x.Index < len(p.q.params) {
				if f, ok := p.q.params[x.Index].value.(float64); ok && f >= 0 {
					return int64(f), nil
				}
			}
		}
		return 0, invalidInput("%s", sql.AtPos(e, what+" must be a non-negative integer"))
	}
	if q.Limit != nil {
		n, err := lim(q.Limit, "LIMIT")
		if err != nil {
			return nil, err
		}
		sp.limit = n
	}
	if q.Offset != nil {
		n, err := lim(q.Offset, "OFFSET")
		if err != nil {
			return nil, err
		}
		sp.offset = n
	}
	sig := out.rel.sig
	for _, it := range q.OrderBy {
		col := -1
		switch x := it.Expr.(type) {
		case *sql.NumberLit:
			n, err := x.Int64()
			if err != nil || n < 1 || int(n) > len(sig) {
				return nil, invalidInput("%s", sql.AtPos(x, "ORDER BY ordinal out of range"))
			}
			col = int(n) - 1
		case *sql.ColumnRef:
			if len(x.Parts) == 1 {
				col = sig.index(x.Parts[0].Name)
			}
		}
		if col < 0 {
			f := sql.Format(it.Expr)
			for i, s := range out.itemFmts {
				if s == f {
					col = i
					break
				}
			}
		}
		if col < 0 {
			return nil, unsupported("%s", sql.AtPos(it.Expr, "ORDER BY must refer to an output column (by name, alias, ordinal or the same expression)"))
		}
		sp.keys = append(sp.keys, col)
		sp.desc = append(sp.desc, it.Desc)
		sp.nulls = append(sp.nulls, it.Nulls)
	}
	return sp, nil
}

// materialize returns a stage producing rel's rows: the stage behind a
// single untouched stage branch, or a new scan stage.
func (p *planner) materialize(rel *relation) *stage {
	if len(rel.branches) == 1 {
		if s, ok := rel.branches[0].src.(*stageSource); ok && !s.st.used {
			s.st.outOps = append(s.st.outOps, rel.branches[0].ops...)
			s.st.outSig = rel.sig
			return s.st
		}
	}
	return p.newStage(procScan, rel.branches, rel.sig)
}

func (p *planner) planBody(b sql.QueryBody) (*queryOut, error) {
	switch x := b.(type) {
	case *sql.Select:
		return p.planSelect(x, false)
	case *sql.Query:
		return p.planQuery(x, false)
	case *sql.SetOp:
		if x.Op != sql.Union {
			return nil, unsupported("%s", sql.AtPos(x, x.Op.String()+" is not supported"))
		}
		if !x.All {
			return nil, unsupported("%s", sql.AtPos(x, "UNION is not supported; use UNION ALL"))
		}
		l, err := p.planBody(x.Left)
		if err != nil {
			return nil, err
		}
		r, err := p.planBody(x.Right)
		if err != nil {
			return nil, err
		}
		rel, err := unionAll(l.rel, r.rel, x)
		if err != nil {
			return nil, err
		}
		return &queryOut{rel: rel, itemFmts: l.itemFmts}, nil
	}
	return nil, unsupported("unsupported query")
}

// unionAll concatenates the branches of two relations, casting columns
// whose types differ to their common type.
func unionAll(l, r *relation, at sql.Node) (*relation, error) {
	if len(l.sig) != len(r.sig) {
		return nil, invalidInput("%s", sql.AtPos(at, fmt.Sprintf("UNION ALL branches have %d and %d columns", len(l.sig), len(r.sig))))
	}
	sig := make(Signature, len(l.sig))
	for i := range sig {
		t := mergeTypes(l.sig[i].Type, r.sig[i].Type)
		t.Timestamp = l.sig[i].Type.Timestamp && r.sig[i].Type.Timestamp
		sig[i] = Column{Name: l.sig[i].Name, Type: t}
	}
	out := &relation{sig: sig}
	for _, side := range []*relation{l, r} {
		cast, err := castOp(side.sig, sig)
		if err != nil {
			return nil, err
		}
		for _, b := range side.branches {
			if cast != nil {
				b = b.with(*cast)
			}
			out.branches = append(out.branches, b)
		}
	}
	return out, nil
}

// castOp is a projection converting rows of signature from to the types of
// to; nil when nothing changes.
func castOp(from, to Signature) (*rowOp, error) {
	same := true
	for i := range from {
		if from[i].Type.exprType() != to[i].Type.exprType() || (to[i].Type.Kind == KindFloat) != (from[i].Type.Kind == KindFloat) {
			same = false
		}
	}
	if same {
		return nil, nil
	}
	op := rowOp{width: len(to)}
	for i := range from {
		src := ident(i)
		if from[i].Type.exprType() != to[i].Type.exprType() {
			src = "cast(" + src + ", '" + to[i].Type.exprType().String() + "')"
		}
		c, err := compileTx(tx{src: src, typ: to[i].Type, node: &sql.ColumnRef{Parts: []sql.Ident{{Name: to[i].Name}}}})
		if err != nil {
			return nil, err
		}
		op.project = append(op.project, c)
	}
	return &op, nil
}

// planSelect plans one SELECT block.
func (p *planner) planSelect(sel *sql.Select, _ bool) (*queryOut, error) {
	var from *relation
	var err error
	if sel.From == nil {
		from = &relation{branches: []*branch{{src: &valuesSource{rows: [][]expr.Value{{}}}}}}
	} else if from, err = p.planFrom(sel.From); err != nil {
		return nil, err
	}
	if len(sel.Windows) > 0 {
		return nil, unsupported("%s", sql.AtPos(sel, "WINDOW clauses are not supported"))
	}
	sc := scopeOf(from.sig, from.quals...)
	tr := &translator{sc: sc, q: p.q}
	branches := from.branches
	if sel.Where != nil {
		if hasAggregate(sel.Where) {
			return nil, invalidInput("%s", sql.AtPos(sel.Where, "aggregate functions are not allowed in WHERE"))
		}
		w, err := tr.expr(sel.Where)
		if err != nil {
			return nil, err
		}
		c, err := compileTx(w)
		if err != nil {
			return nil, err
		}
		pruneTables(branches, sel.Where, sc)
		op := rowOp{filter: c, width: len(from.sig)}
		for i, b := range branches {
			branches[i] = b.with(op)
		}
	}
	// Expand the select list.
	type item struct {
		e     sql.Expr
		alias string
		named bool
		col   int // scope column of a '*' expansion, -1 otherwise
	}
	var items []item
	for i, it := range sel.Columns {
		if star, ok := it.Expr.(*sql.StarExpr); ok {
			n := 0
			for ci, c := range sc.cols {
				if len(star.Qualifier) > 0 && !slices.Contains(c.quals, star.Qualifier[len(star.Qualifier)-1].Name) {
					continue
				}
				ref := &sql.ColumnRef{Parts: []sql.Ident{{Name: c.name}}}
				if len(c.quals) > 0 {
					ref.Parts = []sql.Ident{{Name: c.quals[0]}, {Name: c.name}}
				}
				items = append(items, item{e: ref, alias: c.name, named: true, col: ci})
				n++
			}
			if n == 0 {
				return nil, invalidInput("%s", sql.AtPos(star, "'*' matches no columns"))
			}
			continue
		}
		name := "EXPR$" + strconv.Itoa(i)
		named := false
		if it.Alias != nil {
			name, named = it.Alias.Name, true
		} else if ref, ok := it.Expr.(*sql.ColumnRef); ok {
			name, named = ref.Column().Name, true
		}
		items = append(items, item{e: it.Expr, alias: name, named: named, col: -1})
	}
	grouping := len(sel.GroupBy) > 0 || sel.Having != nil || sel.Distinct
	for _, it := range items {
		if hasAggregate(it.e) {
			grouping = true
		}
	}
	fmts := make([]string, len(items))
	for i, it := range items {
		fmts[i] = sql.Format(it.e)
	}
	outSig := make(Signature, len(items))
	if !grouping {
		op := rowOp{width: len(items)}
		for i, it := range items {
			var v tx
			if it.col >= 0 {
				v = tx{src: ident(it.col), typ: sc.cols[it.col].typ, node: it.e}
			} else if v, err = tr.expr(it.e); err != nil {
				return nil, err
			}
			c, err := compileTx(v)
			if err != nil {
				return nil, err
			}
			op.project = append(op.project, c)
			outSig[i] = Column{Name: it.alias, Type: v.typ}
		}
		out := &relation{sig: outSig}
		identity := len(op.project) == len(from.sig)
		for i, c := range op.project {
			if c.col != i || outSig[i].Type != from.sig[i].Type {
				identity = false
			}
		}
		for _, b := range branches {
			if !identity {
				b = b.with(op)
			}
			out.branches = append(out.branches, b)
		}
		return &queryOut{rel: out, itemFmts: fmts}, nil
	}

	// Grouping: keys, aggregators and the post-aggregation projection.
	pc := newPostCtx(sc)
	for _, it := range items {
		if it.named {
			pc.aliases[it.alias] = it.e
		}
	}
	keyExprs := sel.GroupBy
	if sel.Distinct {
		if len(sel.GroupBy) > 0 {
			return nil, unsupported("%s", sql.AtPos(sel, "SELECT DISTINCT with GROUP BY is not supported"))
		}
		for _, it := range items {
			keyExprs = append(keyExprs, it.e)
		}
	}
	gp := &groupPlan{implicit: len(keyExprs) == 0}
	for _, k := range keyExprs {
		e := k
		if n, ok := k.(*sql.NumberLit); ok && !sel.Distinct {
			i, err := n.Int64()
			if err != nil || i < 1 || int(i) > len(items) {
				return nil, invalidInput("%s", sql.AtPos(k, "GROUP BY ordinal out of range"))
			}
			e = items[i-1].e
		} else if ref, ok := k.(*sql.ColumnRef); ok && len(ref.Parts) == 1 {
			if j, _ := sc.resolve(ref); j < 0 {
				if a, ok := pc.aliases[ref.Parts[0].Name]; ok {
					e = a
				}
			}
		}
		if hasAggregate(e) {
			return nil, invalidInput("%s", sql.AtPos(k, "aggregate functions are not allowed in GROUP BY"))
		}
		v, err := tr.expr(e)
		if err != nil {
			return nil, err
		}
		c, err := compileTx(v)
		if err != nil {
			return nil, err
		}
		pc.addKey(e, v)
		gp.keys = append(gp.keys, c)
		gp.keyTypes = append(gp.keyTypes, v.typ)
	}
	post := &translator{sc: pc.sc, q: p.q, post: pc}
	for i, it := range items {
		v, err := post.expr(it.e)
		if err != nil {
			return nil, err
		}
		c, err := compileTx(v)
		if err != nil {
			return nil, err
		}
		oc := outCol{c: c, agg: -1}
		if c.col >= len(pc.keys) {
			oc.agg = c.col - len(pc.keys)
		}
		gp.outputs = append(gp.outputs, oc)
		outSig[i] = Column{Name: it.alias, Type: v.typ}
	}
	if sel.Having != nil {
		v, err := post.expr(sel.Having)
		if err != nil {
			return nil, err
		}
		if gp.having, err = compileTx(v); err != nil {
			return nil, err
		}
	}
	gp.aggs = pc.aggs
	preSig := make(Signature, 0, len(gp.keys)+len(gp.aggs))
	for i, t := range gp.keyTypes {
		preSig = append(preSig, Column{Name: "d" + strconv.Itoa(i), Type: t})
	}
	for i, a := range gp.aggs {
		preSig = append(preSig, Column{Name: "a" + strconv.Itoa(i), Type: a.interType()})
	}
	pre := p.newStage(procGroupPre, branches, preSig)
	pre.group = gp
	pre.part = partSpec{kind: partHash, n: p.opts.maxWorkers, keys: len(gp.keys)}
	if gp.implicit {
		pre.part = partSpec{kind: partSingle}
	}
	postSt := p.newStage(procGroupPost, []*branch{{src: &stageSource{st: pre}}}, outSig)
	postSt.group = gp
	return &queryOut{rel: &relation{sig: outSig, branches: []*branch{{src: &stageSource{st: postSt}}}}, itemFmts: fmts}, nil
}

// ---------------------------------------------------------------------------------------------
// FROM items

func (p *planner) planFrom(t sql.TableExpr) (*relation, error) {
	switch x := t.(type) {
	case *sql.TableRef:
		name := x.Name[len(x.Name)-1].Name
		alias := name
		if x.Alias != nil {
			alias = x.Alias.Name
		}
		if len(x.Name) == 1 {
			if c, visible := p.findCTE(name); c != nil {
				// A CTE sees the CTEs before it, not itself or later ones.
				saved := p.ctes
				p.ctes = visible
				out, err := p.planQuery(c.Query, false)
				p.ctes = saved
				if err != nil {
					return nil, err
				}
				rel := out.rel
				if err := renameColumns(rel, c.Columns, c); err != nil {
					return nil, err
				}
				if err := renameColumns(rel, x.ColumnAliases, x); err != nil {
					return nil, err
				}
				rel.quals = []string{alias}
				return rel, nil
			}
		}
		if len(x.Name) > 2 || (len(x.Name) == 2 && x.Name[0].Name != "druid") {
			return nil, unsupported("%s", sql.AtPos(x, "table "+sql.Format(x)+" is not supported; only datasources of the druid schema"))
		}
		info, err := p.table(name)
		if err != nil {
			return nil, err
		}
		if info == nil {
			return nil, invalidInput("%s", sql.AtPos(x, fmt.Sprintf("Object '%s' not found", name)))
		}
		src := &tableSource{dataSource: name, sig: info.sig, pieces: info.pieces}
		rel := &relation{sig: slices.Clone(info.sig), quals: []string{alias}, branches: []*branch{{src: src}}}
		if len(x.Name) == 2 && x.Alias == nil {
			rel.quals = append(rel.quals, "druid."+name)
		}
		if err := renameColumns(rel, x.ColumnAliases, x); err != nil {
			return nil, err
		}
		return rel, nil
	case *sql.DerivedTable:
		if x.Lateral {
			return nil, unsupported("%s", sql.AtPos(x, "LATERAL is not supported"))
		}
		out, err := p.planQuery(x.Query, false)
		if err != nil {
			return nil, err
		}
		rel := out.rel
		if x.Alias != nil {
			rel.quals = []string{x.Alias.Name}
		} else {
			rel.quals = nil
		}
		if err := renameColumns(rel, x.ColumnAliases, x); err != nil {
			return nil, err
		}
		return rel, nil
	case *sql.TableFunc:
		rel, err := p.planTableFunc(x)
		if err != nil {
			return nil, err
		}
		if x.Alias != nil {
			rel.quals = []string{x.Alias.Name}
		}
		if err := renameColumns(rel, x.ColumnAliases, x); err != nil {
			return nil, err
		}
		return rel, nil
	case *sql.Join:
		return nil, unsupported("%s", sql.AtPos(x, "joins are not supported by this engine"))
	case *sql.Unnest:
		return nil, unsupported("%s", sql.AtPos(x, "UNNEST is not supported by this engine"))
	}
	return nil, unsupported("unsupported FROM item")
}

// findCTE looks a name up in the WITH lists in scope and returns the CTE and
// the scope its query is planned in.
func (p *planner) findCTE(name string) (*sql.CTE, [][]*sql.CTE) {
	for i := len(p.ctes) - 1; i >= 0; i-- {
		for j := len(p.ctes[i]) - 1; j >= 0; j-- {
			if c := p.ctes[i][j]; c.Name.Name == name {
				visible := append(slices.Clone(p.ctes[:i]), p.ctes[i][:j])
				return c, visible
			}
		}
	}
	return nil, nil
}

func renameColumns(rel *relation, names []sql.Ident, at sql.Node) error {
	if len(names) == 0 {
		return nil
	}
	if len(names) != len(rel.sig) {
		return invalidInput("%s", sql.AtPos(at, fmt.Sprintf("%d column names given for %d columns", len(names), len(rel.sig))))
	}
	sig := slices.Clone(rel.sig)
	for i, n := range names {
		sig[i].Name = n.Name
	}
	rel.sig = sig
	return nil
}

// table returns a datasource's signature and visible segments; nil when it
// has none.
func (p *planner) table(name string) (*tableInfo, error) {
	if info, ok := p.tables[name]; ok {
		return info, nil
	}
	segs, err := p.env.UsedSegments(p.ctx, name, interval.Eternity)
	if err != nil {
		return nil, err
	}
	tl := segmeta.NewTimeline(name)
	if _, err := tl.Add(segs); err != nil {
		return nil, err
	}
	info := &tableInfo{}
	var dataSegs []*segmeta.DataSegment
	for _, h := range tl.Lookup(interval.Eternity) {
		if !h.HasData {
			continue
		}
		for _, s := range h.Segments {
			if s.IsTombstone() {
				continue
			}
			info.pieces = append(info.pieces, tablePiece{seg: s, clip: h.Interval})
			dataSegs = append(dataSegs, s)
		}
	}
	if len(segs) == 0 {
		p.tables[name] = nil
		return nil, nil
	}
	// Column order: __time, then the columns of the newest segments first.
	slices.SortStableFunc(dataSegs, func(a, b *segmeta.DataSegment) int { return strings.Compare(b.Version, a.Version) })
	info.sig = Signature{{Name: "__time", Type: typeTimestamp}}
	known := map[string]bool{"__time": true}
	var missing []string
	for _, s := range dataSegs {
		for _, c := range append(slices.Clone(s.Dimensions), s.Metrics...) {
			if !known[c] {
				known[c] = true
				missing = append(missing, c)
			}
		}
	}
	types := map[string]Type{}
	for _, s := range dataSegs {
		need := false
		for _, c := range append(slices.Clone(s.Dimensions), s.Metrics...) {
			if _, ok := types[c]; !ok {
				need = true
			}
		}
		if !need {
			continue
		}
		sg, release, err := p.env.OpenSegment(p.ctx, s)
		if err != nil {
			return nil, err
		}
		for _, ci := range sg.Columns() {
			if _, ok := types[ci.Name]; !ok && ci.Role != segment.RoleTime {
				types[ci.Name] = fromSegmentColumn(ci)
			}
		}
		release()
	}
	for _, c := range missing {
		t, ok := types[c]
		if !ok {
			t = typeString
		}
		info.sig = append(info.sig, Column{Name: c, Type: t})
	}
	p.tables[name] = info
	return info, nil
}

// pruneTables restricts table sources of branches to the __time ranges a
// WHERE clause allows.
func pruneTables(branches []*branch, where sql.Expr, sc *scope) {
	ivs, ok := timeRanges(where, func(e sql.Expr) bool {
		ref, ok := e.(*sql.ColumnRef)
		if !ok || ref.Column().Name != "__time" {
			return false
		}
		i, _ := sc.resolve(ref)
		return i >= 0 && sc.cols[i].typ.Timestamp
	}, true)
	if !ok {
		return
	}
	for _, b := range branches {
		ts, isTable := b.src.(*tableSource)
		if !isTable || len(b.ops) > 0 {
			continue
		}
		var kept []tablePiece
		for _, pc := range ts.pieces {
			for _, iv := range ivs {
				if c, ok := pc.clip.Intersect(iv); ok && !c.IsEmpty() {
					kept = append(kept, tablePiece{seg: pc.seg, clip: c})
				}
			}
		}
		b.src = &tableSource{dataSource: ts.dataSource, sig: ts.sig, pieces: kept}
	}
}

// ---------------------------------------------------------------------------------------------
// Table functions: EXTERN and the input-source functions

func (p *planner) planTableFunc(tf *sql.TableFunc) (*relation, error) {
	srcJSON, fmtJSON, sigJSON, haveSig, err := p.tableFuncArgs(tf)
	if err != nil {
		return nil, err
	}
	src, err := input.ParseSource([]byte(srcJSON))
	if err != nil {
		return nil, invalidInput("%s", sql.AtPos(tf, err.Error()))
	}
	format, err := input.ParseFormat([]byte(fmtJSON))
	if err != nil {
		return nil, invalidInput("%s", sql.AtPos(tf, err.Error()))
	}
	var sig Signature
	if haveSig {
		var cols []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(sigJSON), &cols); err != nil {
			return nil, invalidInput("%s", sql.AtPos(tf, "invalid EXTERN signature: "+err.Error()))
		}
		for _, c := range cols {
			t, ok := parseSignatureType(c.Type)
			if !ok {
				return nil, invalidInput("%s", sql.AtPos(tf, fmt.Sprintf("unsupported type %q of column %q in EXTERN signature", c.Type, c.Name)))
			}
			sig = append(sig, Column{Name: c.Name, Type: t})
		}
	} else {
		for _, cd := range tf.Extend {
			st := sqlexpr.CastType(cd.Type.Name, cd.Type.ArrayDepth)
			t := typeOfSQL(st)
			if st == "" || cd.Type.Complex != "" || cd.Type.Name == "TIMESTAMP" || cd.Type.Name == "DATE" {
				return nil, invalidInput("%s", sql.AtPos(cd, fmt.Sprintf("unsupported type %s of column %s", sql.Format(cd.Type), cd.Name.Name)))
			}
			sig = append(sig, Column{Name: cd.Name.Name, Type: t})
		}
	}
	seen := map[string]bool{}
	cols := make([]input.Column, len(sig))
	for i, c := range sig {
		if c.Name == "" {
			return nil, invalidInput("%s", sql.AtPos(tf, "EXTERN signature has a column without a name"))
		}
		if seen[c.Name] {
			return nil, invalidInput("%s", sql.AtPos(tf, fmt.Sprintf("column %q appears twice in the EXTERN signature", c.Name)))
		}
		seen[c.Name] = true
		cols[i] = input.Column{Name: c.Name, Kind: c.Type.inputKind()}
	}
	es := &externalSource{src: src, format: format, sig: sig, cols: cols}
	return &relation{sig: slices.Clone(sig), branches: []*branch{{src: es}}}, nil
}

// tableFuncArgs returns the input source, input format and signature (when
// given as an argument) of a table function as JSON.
func (p *planner) tableFuncArgs(tf *sql.TableFunc) (srcJSON, fmtJSON, sigJSON string, haveSig bool, err error) {
	name := strings.ToUpper(tf.Call.Name.Name)
	switch name {
	case "EXTERN":
		var pos []sql.Expr
		named := map[string]sql.Expr{}
		for _, a := range tf.Call.Args {
			if na, ok := a.(*sql.NamedArg); ok {
				named[strings.ToLower(na.Name.Name)] = na.Value
			} else {
				pos = append(pos, a)
			}
		}
		get := func(i int, key string) (string, bool, error) {
			var e sql.Expr
			if i < len(pos) {
				e = pos[i]
			} else if v, ok := named[strings.ToLower(key)]; ok {
				e = v
			} else {
				return "", false, nil
			}
			s, err := p.stringArg(e)
			return s, true, err
		}
		var ok bool
		if srcJSON, ok, err = get(0, "inputSource"); err != nil || !ok {
			if err == nil {
				err = invalidInput("%s", sql.AtPos(tf, "EXTERN requires an inputSource"))
			}
			return "", "", "", false, err
		}
		if fmtJSON, ok, err = get(1, "inputFormat"); err != nil || !ok {
			if err == nil {
				err = invalidInput("%s", sql.AtPos(tf, "EXTERN requires an inputFormat"))
			}
			return "", "", "", false, err
		}
		if sigJSON, haveSig, err = get(2, "signature"); err != nil {
			return "", "", "", false, err
		}
		if len(pos) > 3 {
			return "", "", "", false, invalidInput("%s", sql.AtPos(tf, "EXTERN takes at most 3 arguments"))
		}
	case "INLINE", "LOCALFILES", "HTTP":
		if srcJSON, fmtJSON, err = p.sourceFunction(name, tf.Call); err != nil {
			return "", "", "", false, err
		}
	default:
		return "", "", "", false, unsupported("%s", sql.AtPos(tf, "table function "+tf.Call.Name.Name+" is not supported"))
	}
	if haveSig && len(tf.Extend) > 0 {
		return "", "", "", false, invalidInput("%s", sql.AtPos(tf, "EXTERN takes a signature argument or an EXTEND list, not both"))
	}
	if !haveSig && len(tf.Extend) == 0 {
		return "", "", "", false, invalidInput("%s", sql.AtPos(tf, "EXTERN needs a signature: a third argument or EXTEND (column TYPE, ...)"))
	}
	return srcJSON, fmtJSON, sigJSON, haveSig, nil
}

// stringArg reads a string literal (or string parameter) argument.
func (p *planner) stringArg(e sql.Expr) (string, error) {
	switch x := e.(type) {
	case *sql.StringLit:
		return x.Value, nil
	case *sql.Param:
		if x.Index < len(p.q.params) {
			if s, ok := p.q.params[x.Index].value.(string); ok {
				return s, nil
			}
		}
	}
	return "", invalidInput("%s", sql.AtPos(e, "expected a string literal"))
}

// literalArg converts a literal argument of an input-source function to JSON.
func (p *planner) literalArg(e sql.Expr) (any, error) {
	switch x := e.(type) {
	case *sql.StringLit:
		return x.Value, nil
	case *sql.NumberLit:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		f, err := x.Float64()
		return f, err
	case *sql.BoolLit:
		return x.Value, nil
	case *sql.NullLit:
		return nil, nil
	case *sql.ArrayLit:
		out := make([]any, len(x.Elems))
		for i, el := range x.Elems {
			v, err := p.literalArg(el)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *sql.Param:
		if x.Index < len(p.q.params) {
			return p.q.params[x.Index].value, nil
		}
	}
	return nil, invalidInput("%s", sql.AtPos(e, "expected a literal"))
}

// sourceFunction builds the inputSource and inputFormat of inline(...),
// localfiles(...) and http(...): source arguments go to the source, format
// and every other argument to the format.
func (p *planner) sourceFunction(name string, call *sql.FuncCall) (string, string, error) {
	src := map[string]any{}
	format := map[string]any{}
	sourceKeys := map[string]map[string]string{
		"INLINE":     {"data": "data"},
		"LOCALFILES": {"files": "files", "basedir": "baseDir", "filter": "filter", "systemfields": "systemFields"},
		"HTTP": {"uris": "uris", "username": "httpAuthenticationUsername", "password": "httpAuthenticationPassword",
			"passwordenvvar": "", "requestheaders": "requestHeaders", "systemfields": "systemFields"},
	}[name]
	src["type"] = map[string]string{"INLINE": "inline", "LOCALFILES": "local", "HTTP": "http"}[name]
	for _, a := range call.Args {
		na, ok := a.(*sql.NamedArg)
		if !ok {
			return "", "", invalidInput("%s", sql.AtPos(a, name+" takes named arguments (name => value)"))
		}
		v, err := p.literalArg(na.Value)
		if err != nil {
			return "", "", err
		}
		key := strings.ToLower(na.Name.Name)
		if k, isSrc := sourceKeys[key]; isSrc {
			if k == "" {
				return "", "", unsupported("%s", sql.AtPos(na, name+": "+na.Name.Name+" is not supported"))
			}
			if k == "data" {
				if list, ok := v.([]any); ok {
					parts := make([]string, len(list))
					for i, x := range list {
						parts[i] = fmt.Sprint(x)
					}
					v = strings.Join(parts, "\n")
				}
			}
			src[k] = v
			continue
		}
		if key == "format" {
			format["type"] = v
			continue
		}
		format[na.Name.Name] = v
	}
	if _, ok := format["type"]; !ok {
		return "", "", invalidInput("%s", sql.AtPos(call, name+" requires format => 'csv' | 'tsv' | 'json'"))
	}
	sj, _ := json.Marshal(src)
	fj, _ := json.Marshal(format)
	return string(sj), string(fj), nil
}
