package expr

import "strings"

// Conjuncts splits x at its top-level && operators into the expressions
// ANDed together, in order; x itself when it is not an &&. A join reads its
// condition this way: one equality per conjunct.
func (x *Expr) Conjuncts() []*Expr {
	var out []*Expr
	var split func(n node)
	split = func(n node) {
		if b, ok := n.(*binaryNode); ok && b.op == opAnd {
			split(b.l)
			split(b.r)
			return
		}
		out = append(out, x.sub(n))
	}
	split(x.root)
	return out
}

// Equality returns the two sides of x when x is l == r.
func (x *Expr) Equality() (l, r *Expr, ok bool) {
	b, isBin := x.root.(*binaryNode)
	if !isBin || b.op != opEQ {
		return nil, nil, false
	}
	return x.sub(b.l), x.sub(b.r), true
}

// Column returns the column x reads when x is a plain column reference.
func (x *Expr) Column() (string, bool) {
	id, ok := x.root.(*identNode)
	if !ok || id.slot >= 0 {
		return "", false
	}
	return id.name, true
}

// sub is the subtree n of x as an expression of its own. It keeps x's
// lambda slots, since n may hold lambdas numbered within x.
func (x *Expr) sub(n node) *Expr {
	var sb strings.Builder
	n.write(&sb)
	e := &Expr{src: sb.String(), root: n, nslots: x.nslots}
	seen := map[string]bool{}
	walk(n, func(n node) {
		if id, ok := n.(*identNode); ok && id.slot < 0 && !seen[id.name] {
			seen[id.name] = true
			e.columns = append(e.columns, id.name)
		}
	})
	return e
}
