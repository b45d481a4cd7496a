package sql

import "strings"

// GroupingSets is GROUP BY GROUPING SETS (set, ...): each set a list of
// expressions, () the empty set (the grand total). It appears only as an
// item of Select.GroupBy; ROLLUP(...) and CUBE(...) stay function calls.
type GroupingSets struct {
	node
	Sets [][]Expr
}

func (*GroupingSets) exprNode() {}

func (n *GroupingSets) String() string { return Format(n) }

// atGroupingSets reports whether the parser is at the words GROUPING
// SETS (neither is reserved: GROUPING alone is the GROUPING() function).
func (p *parser) atGroupingSets() bool {
	t, next := p.tok(), p.peek(1)
	return t.kind == tokWord && strings.EqualFold(t.text, "GROUPING") &&
		next.kind == tokWord && strings.EqualFold(next.text, "SETS")
}

// parseGroupBy parses the GROUP BY list: expressions, GROUPING SETS and
// the empty set ().
func (p *parser) parseGroupBy() []Expr {
	var list []Expr
	for {
		if p.atGroupingSets() {
			list = append(list, p.parseGroupingSets())
		} else if t := p.tok(); t.kind == tokLParen && p.peek(1).kind == tokRParen {
			// () is the empty grouping set: GROUPING SETS (()).
			p.advance()
			p.advance()
			list = append(list, &GroupingSets{node: node{t.pos}, Sets: [][]Expr{{}}})
		} else {
			list = append(list, p.parseExpr())
		}
		if !p.accept(tokComma) {
			return list
		}
	}
}

// parseGroupingSets parses GROUPING SETS ( set [, set]* ), a set being an
// expression, or a parenthesized list of expressions, maybe empty.
func (p *parser) parseGroupingSets() *GroupingSets {
	t := p.advance()
	p.advance()
	g := &GroupingSets{node: node{t.pos}}
	p.expect(tokLParen)
	for {
		if p.accept(tokLParen) {
			set := []Expr{}
			if !p.accept(tokRParen) {
				set = p.parseExprList()
				p.expect(tokRParen)
			}
			g.Sets = append(g.Sets, set)
		} else {
			g.Sets = append(g.Sets, []Expr{p.parseExpr()})
		}
		if !p.accept(tokComma) {
			break
		}
	}
	p.expect(tokRParen)
	return g
}

// groupingSets prints GROUPING SETS with every set parenthesized.
func (pr *printer) groupingSets(g *GroupingSets) {
	pr.w("GROUPING SETS (")
	for i, set := range g.Sets {
		if i > 0 {
			pr.w(", ")
		}
		pr.w("(")
		pr.exprList(set)
		pr.w(")")
	}
	pr.w(")")
}
