package msq

import (
	"strings"

	"strata/sql"
)

// postCtx translates the expressions of an aggregating SELECT block (select
// list, HAVING, ORDER BY) over grouped rows: the group keys followed by the
// aggregator results. Sub-expressions equal to a GROUP BY expression become
// that key; aggregate calls become aggregators.
type postCtx struct {
	pre     *scope // the scope aggregator arguments and keys are evaluated in
	keys    []groupKey
	aggs    []*aggSpec
	aggIdx  map[string]int // formatted call → aggregator index
	sc      *scope         // the post scope: keys, then aggregators
	aliases map[string]sql.Expr
	busy    map[string]bool // aliases being expanded (guards cycles)
}

type groupKey struct {
	fmt string
	col int // pre-scope column when the key is a plain column reference, else -1
	tx  tx  // translated in the pre scope
}

func newPostCtx(pre *scope) *postCtx {
	return &postCtx{pre: pre, aggIdx: map[string]int{}, sc: &scope{}, aliases: map[string]sql.Expr{}, busy: map[string]bool{}}
}

// addKey registers a GROUP BY expression, already translated in the pre scope.
func (p *postCtx) addKey(e sql.Expr, t tx) {
	k := groupKey{fmt: sql.Format(e), col: -1, tx: t}
	if ref, ok := e.(*sql.ColumnRef); ok {
		if i, _ := p.pre.resolve(ref); i >= 0 {
			k.col = i
		}
	}
	p.keys = append(p.keys, k)
	p.sc.cols = append(p.sc.cols, scopeCol{typ: t.typ})
}

// match maps e to a group key if it is one.
func (p *postCtx) match(t *translator, e sql.Expr) (tx, bool, error) {
	switch x := e.(type) {
	case *sql.NumberLit, *sql.StringLit, *sql.NullLit, *sql.BoolLit:
		return tx{}, false, nil
	case *sql.ColumnRef:
		i, err := p.pre.resolve(x)
		if err != nil {
			return tx{}, false, err
		}
		if i < 0 {
			return tx{}, false, nil
		}
		for k, key := range p.keys {
			if key.col == i {
				return tx{src: ident(k), typ: key.tx.typ, node: e}, true, nil
			}
		}
		return tx{}, false, nil
	}
	f := sql.Format(e)
	for k, key := range p.keys {
		if key.col < 0 && key.fmt == f {
			return tx{src: ident(k), typ: key.tx.typ, node: e}, true, nil
		}
	}
	return tx{}, false, nil
}

// alias expands a reference to a select-list alias (allowed in HAVING and
// ORDER BY).
func (p *postCtx) alias(t *translator, ref *sql.ColumnRef) (tx, bool, error) {
	if len(ref.Parts) != 1 {
		return tx{}, false, nil
	}
	name := ref.Parts[0].Name
	e, ok := p.aliases[name]
	if !ok || p.busy[name] {
		return tx{}, false, nil
	}
	p.busy[name] = true
	defer delete(p.busy, name)
	r, err := t.expr(e)
	return r, err == nil, err
}

// aggregate registers the aggregator of call and returns its reference.
func (p *postCtx) aggregate(t *translator, call *sql.FuncCall, name string) (tx, error) {
	sub := &translator{sc: p.pre, q: t.q, inAgg: true}
	if name == "AVG" {
		if len(call.Args) != 1 {
			return tx{}, t.errAt(call, "AVG takes 1 argument")
		}
		if call.Distinct {
			return tx{}, t.notSupported(call, "AVG(DISTINCT ...) is not supported")
		}
		sum, err := p.register(sub, &sql.FuncCall{Name: sql.Ident{Name: "SUM"}, Args: call.Args, Filter: call.Filter}, "SUM")
		if err != nil {
			return tx{}, err
		}
		cnt, err := p.register(sub, &sql.FuncCall{Name: sql.Ident{Name: "COUNT"}, Args: call.Args, Filter: call.Filter}, "COUNT")
		if err != nil {
			return tx{}, err
		}
		src := "case_searched((" + cnt.src + " == 0), null, (cast(" + sum.src + ", 'DOUBLE') / " + cnt.src + "))"
		return tx{src: src, typ: typeDouble, node: call}, nil
	}
	r, err := p.register(sub, call, name)
	if err != nil {
		return tx{}, err
	}
	r.node = call
	return r, nil
}

func (p *postCtx) register(sub *translator, call *sql.FuncCall, name string) (tx, error) {
	key := strings.ToUpper(name) + "|" + sql.Format(call)
	if i, ok := p.aggIdx[key]; ok {
		return tx{src: ident(len(p.keys) + i), typ: p.aggs[i].outType, node: call}, nil
	}
	a, err := planAggregate(sub, call, name)
	if err != nil {
		return tx{}, err
	}
	p.aggIdx[key] = len(p.aggs)
	p.aggs = append(p.aggs, a)
	p.sc.cols = append(p.sc.cols, scopeCol{typ: a.outType})
	return tx{src: ident(len(p.keys) + len(p.aggs) - 1), typ: a.outType, node: call}, nil
}

// hasAggregate reports whether e contains an aggregate call (outside sub-queries).
func hasAggregate(e sql.Expr) bool {
	found := false
	sql.Walk(e, func(n sql.Node) bool {
		switch x := n.(type) {
		case *sql.FuncCall:
			if x.Over == nil && isAggregate(strings.ToUpper(x.Name.Name)) {
				found = true
			}
		case *sql.SubqueryExpr, *sql.ExistsExpr, *sql.Query:
			return false
		}
		return !found
	})
	return found
}
