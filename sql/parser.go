package sql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of the syntax tree (parentheses, sub-queries, and chains of
// operators, joins and set operations, all of which deepen the tree). It keeps hostile input
// from exhausting the stack here and in code that walks the tree recursively.
const maxDepth = 2000

// Parse parses one statement: a query (SELECT, WITH, UNION ALL ...), INSERT, REPLACE, or
// EXPLAIN PLAN FOR one of those. A trailing semicolon is allowed. Errors are *Error values.
func Parse(src string) (Statement, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var st Statement
	err = p.run(func() {
		st = p.parseStatement()
		p.parseEnd()
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// ParseScript parses zero or more "SET key = literal;" statements followed by one statement,
// the form accepted by the SQL task API.
func ParseScript(src string) (*Script, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	sc := &Script{node: node{p.tok().pos}}
	err = p.run(func() {
		for p.atKw(kwSET) {
			sc.Sets = append(sc.Sets, p.parseSet())
		}
		sc.Statement = p.parseStatement()
		p.parseEnd()
	})
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// ParseExpr parses a single scalar expression.
func ParseExpr(src string) (Expr, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var e Expr
	err = p.run(func() {
		e = p.parseExpr()
		if !p.at(tokEOF) {
			p.fail()
		}
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

type parser struct {
	src      string
	toks     []token
	pos      int
	depth    int
	nparams  int
	expected []string // what was tried, unsuccessfully, at toks[pos]
	err      *Error
}

// bailout unwinds the parser after p.err is set; run turns it back into an error.
type bailout struct{}

func newParser(src string) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	return &parser{src: src, toks: toks, expected: make([]string, 0, 16)}, nil
}

func (p *parser) run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			err = p.err
		}
	}()
	f()
	return nil
}

// ---------------------------------------------------------------------------------------------
// Token helpers

func (p *parser) tok() *token { return &p.toks[p.pos] }

func (p *parser) peek(n int) *token {
	i := p.pos + n
	if i >= len(p.toks) {
		i = len(p.toks) - 1
	}
	return &p.toks[i]
}

func (p *parser) advance() *token {
	t := &p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	p.expected = p.expected[:0]
	return t
}

// isKw reports whether the current token is the unquoted word k. It records nothing.
func (p *parser) isKw(k keyword) bool {
	t := &p.toks[p.pos]
	return t.kind == tokWord && t.kw == k
}

func (p *parser) peekKw(n int, k keyword) bool {
	t := p.peek(n)
	return t.kind == tokWord && t.kw == k
}

// want records an alternative for the "Was expecting" part of a syntax error at this token.
func (p *parser) want(s string) {
	for _, e := range p.expected {
		if e == s {
			return
		}
	}
	p.expected = append(p.expected, s)
}

// atKw is isKw, but records k as expected when it does not match.
func (p *parser) atKw(k keyword) bool {
	if p.isKw(k) {
		return true
	}
	p.want(keywordQuoted[k])
	return false
}

func (p *parser) acceptKw(k keyword) bool {
	if p.atKw(k) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expectKw(k keyword) *token {
	if !p.atKw(k) {
		p.fail()
	}
	return p.advance()
}

func (p *parser) at(kind tokKind) bool {
	if p.toks[p.pos].kind == kind {
		return true
	}
	p.want(tokDisplay[kind])
	return false
}

func (p *parser) accept(kind tokKind) bool {
	if p.at(kind) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expect(kind tokKind) *token {
	if !p.at(kind) {
		p.fail()
	}
	return p.advance()
}

// fail reports the current token as unexpected.
func (p *parser) fail() {
	t := p.tok()
	p.err = &Error{Line: t.pos.Line, Column: t.pos.Column, Offset: t.pos.Offset,
		Encountered: p.describe(t), Expected: append([]string(nil), p.expected...)}
	panic(bailout{})
}

// failAt reports msg at pos.
func (p *parser) failAt(pos Pos, msg string) {
	p.err = &Error{Line: pos.Line, Column: pos.Column, Offset: pos.Offset, Msg: msg}
	panic(bailout{})
}

// refuseValues fails on a VALUES list where a query may start: it is valid
// SQL (Druid plans it as an inline data source) that this parser does not
// accept, so the error says it is not supported rather than a syntax error.
func (p *parser) refuseValues() {
	if p.isKw(kwVALUES) {
		t := p.tok()
		p.err = &Error{Line: t.pos.Line, Column: t.pos.Column, Offset: t.pos.Offset, Msg: "VALUES lists are not supported", Unsupported: true}
		panic(bailout{})
	}
}

// describe renders a token for an error message, as written in the source.
func (p *parser) describe(t *token) string {
	if t.kind == tokEOF {
		return "<EOF>"
	}
	text := p.src[t.pos.Offset:t.end]
	if utf8.RuneCountInString(text) > 40 {
		r := []rune(text)
		text = string(r[:37]) + "..."
	}
	return `"` + text + `"`
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failAt(p.tok().pos, "Statement is nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

// isIdent reports whether the current token can be an identifier: quoted, or an unquoted word
// that is not reserved.
func (p *parser) isIdent() bool {
	t := p.tok()
	return t.kind == tokQuoted || (t.kind == tokWord && !t.kw.reserved())
}

func (p *parser) parseIdent() Ident {
	if !p.isIdent() {
		p.want("an identifier")
		p.fail()
	}
	t := p.advance()
	return Ident{Name: t.text, Quoted: t.kind == tokQuoted}
}

// parseCompoundName parses name(.name)*.
func (p *parser) parseCompoundName() []Ident {
	parts := []Ident{p.parseIdent()}
	for p.tok().kind == tokDot {
		p.advance()
		parts = append(parts, p.parseIdent())
	}
	return parts
}

// parseIdentList parses "(a, b, ...)".
func (p *parser) parseIdentList() []Ident {
	p.expect(tokLParen)
	var ids []Ident
	for {
		ids = append(ids, p.parseIdent())
		if !p.accept(tokComma) {
			break
		}
	}
	p.expect(tokRParen)
	return ids
}

func (p *parser) parseEnd() {
	p.accept(tokSemi)
	if !p.at(tokEOF) {
		p.fail()
	}
}

// ---------------------------------------------------------------------------------------------
// Statements

func (p *parser) parseSet() *SetStmt {
	t := p.expectKw(kwSET)
	s := &SetStmt{node: node{t.pos}, Key: p.parseIdent()}
	p.expect(tokEq)
	v := p.tok()
	switch {
	case v.kind == tokString:
		s.Value = &StringLit{node{v.pos}, v.text}
	case v.kind == tokNumber:
		s.Value = &NumberLit{node{v.pos}, v.text}
	case v.kind == tokMinus && p.peek(1).kind == tokNumber:
		p.advance()
		n := p.tok()
		s.Value = &UnaryExpr{node{v.pos}, OpNeg, &NumberLit{node{n.pos}, n.text}}
	case p.isKw(kwTRUE), p.isKw(kwFALSE):
		s.Value = &BoolLit{node{v.pos}, v.kw == kwTRUE}
	case p.isKw(kwNULL):
		s.Value = &NullLit{node{v.pos}}
	default:
		p.want("a literal")
		p.fail()
	}
	p.advance()
	p.expect(tokSemi)
	return s
}

func (p *parser) parseStatement() Statement {
	if p.atKw(kwEXPLAIN) {
		t := p.advance()
		p.expectKw(kwPLAN)
		p.expectKw(kwFOR)
		return &Explain{node{t.pos}, p.parseInnerStatement()}
	}
	return p.parseInnerStatement()
}

func (p *parser) parseInnerStatement() Statement {
	p.refuseValues()
	switch {
	case p.atKw(kwINSERT):
		return p.parseInsert()
	case p.atKw(kwREPLACE):
		return p.parseReplace()
	case p.atQueryStart():
		return p.parseQuery()
	}
	p.fail()
	return nil
}

// atQueryStart reports whether a query starts here: SELECT, WITH or "(".
func (p *parser) atQueryStart() bool {
	a, b, c := p.atKw(kwSELECT), p.atKw(kwWITH), p.at(tokLParen)
	return a || b || c
}

func (p *parser) parseInsert() *Insert {
	t := p.expectKw(kwINSERT)
	p.expectKw(kwINTO)
	ins := &Insert{node: node{t.pos}}
	ins.Table, ins.Export = p.parseIngestTarget("INSERT")
	ins.Source = p.parseIngestSource()
	ins.PartitionedBy, ins.ClusteredBy = p.parseIngestTail("INSERT", ins.Export == nil)
	return ins
}

func (p *parser) parseReplace() *Replace {
	t := p.expectKw(kwREPLACE)
	p.expectKw(kwINTO)
	r := &Replace{node: node{t.pos}}
	r.Table, r.Export = p.parseIngestTarget("REPLACE")
	if !p.atKw(kwOVERWRITE) {
		if p.atQueryStart() {
			p.failAt(p.tok().pos, "REPLACE requires OVERWRITE ALL or OVERWRITE WHERE <condition on __time>")
		}
		p.fail()
	}
	p.advance()
	if !p.acceptKw(kwALL) {
		if !p.atKw(kwWHERE) {
			p.failAt(p.tok().pos, "REPLACE requires OVERWRITE ALL or OVERWRITE WHERE <condition on __time>")
		}
		p.advance()
		r.OverwriteWhere = p.parseExpr()
	}
	r.Source = p.parseIngestSource()
	r.PartitionedBy, r.ClusteredBy = p.parseIngestTail("REPLACE", r.Export == nil)
	return r
}

// parseIngestTarget parses the table name, or EXTERN(dest(...)) AS format, after INTO.
func (p *parser) parseIngestTarget(op string) ([]Ident, *Export) {
	if p.isKw(kwEXTERN) && p.peek(1).kind == tokLParen {
		t := p.advance()
		p.advance()
		ex := &Export{node: node{t.pos}, Destination: p.parseIdent()}
		if p.accept(tokLParen) {
			if !p.at(tokRParen) {
				for {
					name := p.parseIdent()
					p.expect(tokArrow)
					if !p.at(tokString) {
						p.fail()
					}
					ex.Properties = append(ex.Properties, ExportProperty{Name: name, Value: p.advance().text})
					if !p.accept(tokComma) {
						break
					}
				}
			}
			p.expect(tokRParen)
		}
		p.expect(tokRParen)
		p.expectKw(kwAS)
		ex.Format = p.parseIdent()
		return nil, ex
	}
	name := p.parseCompoundName()
	if p.tok().kind == tokLParen && !p.queryAfterParen() {
		p.failAt(p.tok().pos, op+" with a target column list is not supported; columns are matched by name")
	}
	return name, nil
}

// queryAfterParen reports whether the "(" at the current token opens a query.
func (p *parser) queryAfterParen() bool {
	for i := 1; ; i++ {
		t := p.peek(i)
		if t.kind == tokLParen {
			continue
		}
		return t.kind == tokWord && (t.kw == kwSELECT || t.kw == kwWITH)
	}
}

func (p *parser) parseIngestSource() *Query {
	if !p.atQueryStart() {
		p.fail()
	}
	return p.parseQuery()
}

func (p *parser) parseIngestTail(op string, requirePartition bool) (*Granularity, []Expr) {
	if p.isKw(kwCLUSTERED) {
		p.failAt(p.tok().pos, "CLUSTERED BY must come after PARTITIONED BY")
	}
	var g *Granularity
	if p.acceptKw(kwPARTITIONED) {
		p.expectKw(kwBY)
		g = p.parseGranularity()
	} else if requirePartition {
		t := p.tok()
		if t.kind != tokEOF && t.kind != tokSemi {
			p.fail()
		}
		p.failAt(t.pos, op+" statements must specify a PARTITIONED BY clause")
	}
	var cluster []Expr
	if p.acceptKw(kwCLUSTERED) {
		p.expectKw(kwBY)
		for {
			cluster = append(cluster, p.parseExpr())
			if p.isKw(kwDESC) {
				p.failAt(p.tok().pos, "CLUSTERED BY does not support DESC ordering")
			}
			p.acceptKw(kwASC)
			if !p.accept(tokComma) {
				break
			}
		}
	}
	return g, cluster
}

const granularityHelp = "expected HOUR, DAY, MONTH, YEAR, ALL, ALL TIME, a period string such as 'P1D', " +
	"TIME_FLOOR(__time, 'PT1H') or FLOOR(__time TO DAY)"

func (p *parser) parseGranularity() *Granularity {
	t := p.tok()
	g := &Granularity{node: node{t.pos}}
	if p.acceptKw(kwALL) {
		p.acceptKw(kwTIME)
		g.Form = GranAll
		return g
	}
	if t.kind == tokWord {
		switch u := parseTimeUnit(t.text); u {
		case UnitHour, UnitDay, UnitMonth, UnitYear:
			if !strings.HasPrefix(strings.ToUpper(t.text), "SQL_TSI_") {
				p.advance()
				g.Form, g.Unit, g.Period = GranKeyword, u, u.Period()
				return g
			}
		}
	}
	e := p.parseExpr()
	switch x := e.(type) {
	case *StringLit:
		period, ok := partitionPeriods[strings.ToUpper(x.Value)]
		if !ok {
			p.failAt(t.pos, "Unsupported PARTITIONED BY granularity '"+x.Value+"'; supported periods are "+
				strings.Join(supportedPartitionPeriods, ", ")+" and ALL")
		}
		g.Form, g.Literal, g.Period = GranString, x.Value, period
		return g
	case *FuncCall:
		if !x.Name.Quoted && strings.EqualFold(x.Name.Name, "TIME_FLOOR") && len(x.Args) == 2 &&
			!x.Distinct && x.Filter == nil && x.Over == nil {
			if !isTimeColumn(x.Args[0]) {
				p.failAt(x.Args[0].Position(), "The first argument of TIME_FLOOR in PARTITIONED BY must be __time")
			}
			lit, ok := x.Args[1].(*StringLit)
			if !ok {
				p.failAt(x.Args[1].Position(), "The second argument of TIME_FLOOR in PARTITIONED BY must be a period string such as 'PT1H'")
			}
			period, ok := partitionPeriods[strings.ToUpper(lit.Value)]
			if !ok || !strings.HasPrefix(strings.ToUpper(lit.Value), "P") { // TIME_FLOOR takes periods, not names
				p.failAt(lit.At, "Unsupported PARTITIONED BY granularity '"+lit.Value+"'; supported periods are "+
					strings.Join(supportedPartitionPeriods, ", "))
			}
			g.Form, g.Literal, g.Period = GranTimeFloor, lit.Value, period
			return g
		}
	case *FloorCeilExpr:
		if !x.Ceil {
			if !isTimeColumn(x.X) {
				p.failAt(x.X.Position(), "The first argument of FLOOR in PARTITIONED BY must be __time")
			}
			switch x.Unit {
			case UnitSecond, UnitMinute, UnitHour, UnitDay, UnitWeek, UnitMonth, UnitQuarter, UnitYear:
				g.Form, g.Unit, g.Period = GranFloor, x.Unit, x.Unit.Period()
				return g
			}
			p.failAt(x.At, "Unsupported PARTITIONED BY granularity FLOOR(__time TO "+x.Unit.String()+")")
		}
	}
	p.failAt(t.pos, "Invalid PARTITIONED BY granularity: "+granularityHelp)
	return nil
}

func isTimeColumn(e Expr) bool {
	c, ok := e.(*ColumnRef)
	return ok && len(c.Parts) == 1 && c.Parts[0].Name == "__time"
}

// ---------------------------------------------------------------------------------------------
// Queries

func (p *parser) parseQuery() *Query {
	p.enter()
	q := &Query{node: node{p.tok().pos}}
	if p.acceptKw(kwWITH) {
		for {
			q.With = append(q.With, p.parseCTE())
			if !p.accept(tokComma) {
				break
			}
		}
	}
	q.Body = p.parseSetOps()
	if p.acceptKw(kwORDER) {
		p.expectKw(kwBY)
		q.OrderBy = p.parseOrderItems()
	}
	if p.acceptKw(kwLIMIT) {
		if !p.acceptKw(kwALL) {
			q.Limit = p.parseLimitValue()
		}
	}
	if p.acceptKw(kwOFFSET) {
		q.Offset = p.parseLimitValue()
		if !p.acceptKw(kwROWS) {
			p.acceptKw(kwROW)
		}
	}
	p.leave()
	return q
}

func (p *parser) parseCTE() *CTE {
	t := p.tok()
	c := &CTE{node: node{t.pos}, Name: p.parseIdent()}
	if p.tok().kind == tokLParen {
		c.Columns = p.parseIdentList()
	}
	p.expectKw(kwAS)
	p.expect(tokLParen)
	c.Query = p.parseQuery()
	p.expect(tokRParen)
	return c
}

func (p *parser) parseLimitValue() Expr {
	t := p.tok()
	switch {
	case t.kind == tokParam:
		p.advance()
		p.nparams++
		return &Param{node{t.pos}, p.nparams - 1}
	case t.kind == tokNumber && isDigits(t.text):
		p.advance()
		return &NumberLit{node{t.pos}, t.text}
	}
	p.want("a non-negative integer")
	p.want(`"?"`)
	p.fail()
	return nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseSetOps parses query terms joined by UNION/EXCEPT (and, binding tighter, INTERSECT).
func (p *parser) parseSetOps() QueryBody {
	left := p.parseIntersects()
	n := 0
	for {
		var op SetOpKind
		switch {
		case p.atKw(kwUNION):
			op = Union
		case p.atKw(kwEXCEPT):
			op = Except
		default:
			p.depth -= n
			return left
		}
		p.advance()
		p.enter()
		n++
		all := p.acceptKw(kwALL)
		if !all {
			p.acceptKw(kwDISTINCT)
		}
		right := p.parseIntersects()
		left = &SetOp{node: node{left.Position()}, Op: op, All: all, Left: left, Right: right}
	}
}

func (p *parser) parseIntersects() QueryBody {
	left := p.parseQueryTerm()
	n := 0
	for p.atKw(kwINTERSECT) {
		p.advance()
		p.enter()
		n++
		all := p.acceptKw(kwALL)
		if !all {
			p.acceptKw(kwDISTINCT)
		}
		right := p.parseQueryTerm()
		left = &SetOp{node: node{left.Position()}, Op: Intersect, All: all, Left: left, Right: right}
	}
	p.depth -= n
	return left
}

func (p *parser) parseQueryTerm() QueryBody {
	p.refuseValues()
	if p.atKw(kwSELECT) {
		return p.parseSelect()
	}
	if p.at(tokLParen) {
		p.advance()
		q := p.parseQuery()
		p.expect(tokRParen)
		return q
	}
	p.fail()
	return nil
}

func (p *parser) parseSelect() *Select {
	t := p.expectKw(kwSELECT)
	s := &Select{node: node{t.pos}}
	if p.acceptKw(kwDISTINCT) {
		s.Distinct = true
	} else {
		p.acceptKw(kwALL)
	}
	for {
		s.Columns = append(s.Columns, p.parseSelectItem())
		if !p.accept(tokComma) {
			break
		}
	}
	if p.acceptKw(kwFROM) {
		s.From = p.parseFrom()
	}
	if p.acceptKw(kwWHERE) {
		s.Where = p.parseExpr()
	}
	if p.acceptKw(kwGROUP) {
		p.expectKw(kwBY)
		s.GroupBy = p.parseGroupBy()
	}
	if p.acceptKw(kwHAVING) {
		s.Having = p.parseExpr()
	}
	if p.acceptKw(kwWINDOW) {
		for {
			t := p.tok()
			w := &NamedWindow{node: node{t.pos}, Name: p.parseIdent()}
			p.expectKw(kwAS)
			w.Spec = p.parseWindowSpec()
			s.Windows = append(s.Windows, w)
			if !p.accept(tokComma) {
				break
			}
		}
	}
	return s
}

func (p *parser) parseSelectItem() *SelectItem {
	t := p.tok()
	item := &SelectItem{node: node{t.pos}}
	if p.at(tokStar) {
		p.advance()
		item.Expr = &StarExpr{node: node{t.pos}}
		return item
	}
	if q, ok := p.qualifiedStarAhead(); ok {
		parts := make([]Ident, 0, q)
		for i := 0; i < q; i++ {
			parts = append(parts, p.parseIdent())
			p.advance() // "."
		}
		p.advance() // "*"
		item.Expr = &StarExpr{node{t.pos}, parts}
		return item
	}
	item.Expr = p.parseExpr()
	item.Alias = p.parseAlias()
	return item
}

// qualifiedStarAhead reports whether "name.name. ... .*" starts here, and how many names.
func (p *parser) qualifiedStarAhead() (int, bool) {
	n := 0
	for i := 0; ; i += 2 {
		t := p.peek(i)
		if !(t.kind == tokQuoted || (t.kind == tokWord && !t.kw.reserved())) || p.peek(i+1).kind != tokDot {
			return 0, false
		}
		n++
		if p.peek(i+2).kind == tokStar {
			return n, true
		}
	}
}

// parseAlias parses an optional "[AS] alias".
func (p *parser) parseAlias() *Ident {
	if p.acceptKw(kwAS) {
		id := p.parseIdent()
		return &id
	}
	if p.isIdent() {
		id := p.parseIdent()
		return &id
	}
	return nil
}

func (p *parser) parseExprList() []Expr {
	var list []Expr
	for {
		list = append(list, p.parseExpr())
		if !p.accept(tokComma) {
			return list
		}
	}
}

func (p *parser) parseOrderItems() []*OrderItem {
	var items []*OrderItem
	for {
		t := p.tok()
		it := &OrderItem{node: node{t.pos}, Expr: p.parseExpr()}
		if p.acceptKw(kwDESC) {
			it.Desc = true
		} else {
			p.acceptKw(kwASC)
		}
		if p.acceptKw(kwNULLS) {
			if p.acceptKw(kwFIRST) {
				it.Nulls = NullsFirst
			} else {
				p.expectKw(kwLAST)
				it.Nulls = NullsLast
			}
		}
		items = append(items, it)
		if !p.accept(tokComma) {
			return items
		}
	}
}

// ---------------------------------------------------------------------------------------------
// FROM

func (p *parser) parseFrom() TableExpr {
	left := p.parseJoinChain()
	n := 0
	for p.at(tokComma) {
		t := p.advance()
		p.enter()
		n++
		right := p.parseJoinChain()
		left = &Join{node: node{t.pos}, Kind: JoinComma, Left: left, Right: right}
	}
	p.depth -= n
	return left
}

func (p *parser) parseJoinChain() TableExpr {
	left := p.parseTablePrimary()
	n := 0
	for {
		t := p.tok()
		natural := p.acceptKw(kwNATURAL)
		var kind JoinKind
		switch {
		case p.acceptKw(kwJOIN):
			kind = JoinInner
		case p.acceptKw(kwINNER):
			kind = JoinInner
			p.expectKw(kwJOIN)
		case p.acceptKw(kwLEFT):
			kind = JoinLeft
			p.acceptKw(kwOUTER)
			p.expectKw(kwJOIN)
		case p.acceptKw(kwRIGHT):
			kind = JoinRight
			p.acceptKw(kwOUTER)
			p.expectKw(kwJOIN)
		case p.acceptKw(kwFULL):
			kind = JoinFull
			p.acceptKw(kwOUTER)
			p.expectKw(kwJOIN)
		case !natural && p.acceptKw(kwCROSS):
			kind = JoinCross
			p.expectKw(kwJOIN)
		default:
			if natural {
				p.fail()
			}
			p.depth -= n
			return left
		}
		p.enter()
		n++
		j := &Join{node: node{t.pos}, Kind: kind, Natural: natural, Left: left, Right: p.parseTablePrimary()}
		if !natural && kind != JoinCross {
			if p.acceptKw(kwON) {
				j.On = p.parseExpr()
			} else if p.atKw(kwUSING) {
				p.advance()
				j.Using = p.parseIdentList()
			}
		}
		left = j
	}
}

func (p *parser) parseTablePrimary() TableExpr {
	p.enter()
	defer p.leave()
	t := p.tok()
	switch {
	case p.isKw(kwTABLE):
		p.advance()
		p.expect(tokLParen)
		name := p.tok()
		if !p.isIdent() || p.peek(1).kind != tokLParen {
			p.want("a table function call")
			p.fail()
		}
		p.advance()
		call, ok := p.parseCall(name).(*FuncCall)
		if !ok || call.Filter != nil || call.Over != nil {
			p.failAt(name.pos, "TABLE(...) requires a table function call")
		}
		p.expect(tokRParen)
		tf := &TableFunc{node: node{t.pos}, Call: call}
		if p.acceptKw(kwEXTEND) {
			tf.Extend = p.parseColumnDefs()
		} else if p.tok().kind == tokLParen {
			tf.Extend = p.parseColumnDefs()
		}
		tf.Alias, tf.ColumnAliases = p.parseTableAlias()
		return tf
	case p.isKw(kwUNNEST):
		p.advance()
		p.expect(tokLParen)
		u := &Unnest{node: node{t.pos}, Expr: p.parseExpr()}
		p.expect(tokRParen)
		u.Alias, u.ColumnAliases = p.parseTableAlias()
		return u
	case p.isKw(kwLATERAL), p.tok().kind == tokLParen:
		d := &DerivedTable{node: node{t.pos}, Lateral: p.isKw(kwLATERAL)}
		if d.Lateral {
			p.advance()
		}
		p.expect(tokLParen)
		p.refuseValues()
		if !p.atQueryStart() {
			p.fail()
		}
		d.Query = p.parseQuery()
		p.expect(tokRParen)
		d.Alias, d.ColumnAliases = p.parseTableAlias()
		return d
	case p.isIdent():
		r := &TableRef{node: node{t.pos}, Name: p.parseCompoundName()}
		r.Alias, r.ColumnAliases = p.parseTableAlias()
		return r
	}
	p.want("a table name")
	p.want(`"("`)
	p.want(`"TABLE"`)
	p.want(`"UNNEST"`)
	p.fail()
	return nil
}

func (p *parser) parseTableAlias() (*Ident, []Ident) {
	alias := p.parseAlias()
	if alias != nil && p.tok().kind == tokLParen {
		return alias, p.parseIdentList()
	}
	return alias, nil
}

func (p *parser) parseColumnDefs() []*ColumnDef {
	p.expect(tokLParen)
	var cols []*ColumnDef
	for {
		t := p.tok()
		c := &ColumnDef{node: node{t.pos}, Name: p.parseIdent()}
		c.Type = p.parseType()
		cols = append(cols, c)
		if !p.accept(tokComma) {
			break
		}
	}
	p.expect(tokRParen)
	return cols
}

func (p *parser) parseType() *DataType {
	p.enter()
	defer p.leave()
	t := p.tok()
	if t.kind != tokWord || (t.kw.reserved() && t.kw != kwARRAY) {
		p.want("a type name")
		p.fail()
	}
	var dt *DataType
	switch {
	case t.kw == kwTYPE && p.peek(1).kind == tokLParen:
		p.advance()
		p.advance()
		if !p.at(tokString) {
			p.fail()
		}
		dt = &DataType{node: node{t.pos}, Name: "TYPE", Complex: p.advance().text}
		p.expect(tokRParen)
	case t.kw == kwARRAY:
		p.advance()
		p.expect(tokLt)
		dt = p.parseType()
		p.expect(tokGt)
		dt.ArrayDepth++
		dt.At = t.pos
	default:
		p.advance()
		dt = &DataType{node: node{t.pos}, Name: strings.ToUpper(t.text)}
		switch dt.Name {
		case "DOUBLE":
			p.acceptKw(kwPRECISION)
		case "CHARACTER", "CHAR":
			if p.acceptKw(kwVARYING) {
				dt.Name = "VARCHAR"
			}
		}
		if p.accept(tokLParen) {
			for {
				n := p.tok()
				if n.kind != tokNumber || !isDigits(n.text) {
					p.want("an integer")
					p.fail()
				}
				v, err := strconv.Atoi(n.text)
				if err != nil || v > 1<<30 {
					p.failAt(n.pos, "Type precision "+n.text+" is too large")
				}
				p.advance()
				dt.Params = append(dt.Params, v)
				if !p.accept(tokComma) {
					break
				}
			}
			p.expect(tokRParen)
		}
		if (dt.Name == "TIMESTAMP" || dt.Name == "TIME") && p.isKw(kwWITH) && p.peekKw(1, kwLOCAL) {
			p.advance()
			p.advance()
			p.expectKw(kwTIME)
			p.expectKw(kwZONE)
			dt.WithLocalTimeZone = true
		}
	}
	for p.isKw(kwARRAY) && p.peek(1).kind != tokLt {
		p.advance()
		dt.ArrayDepth++
	}
	return dt
}
