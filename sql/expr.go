package sql

// Operator precedence, lowest first, following Calcite (which Druid's parser is built on).
// "||" binds like "*", and IS tests bind more loosely than comparisons.
const (
	precOr      = 1
	precAnd     = 2
	precNot     = 3 // prefix NOT
	precIs      = 4 // postfix IS [NOT] NULL/TRUE/FALSE/UNKNOWN
	precCmp     = 5 // = <> < <= > >= IS [NOT] DISTINCT FROM
	precBetween = 6 // [NOT] BETWEEN, IN, LIKE, SIMILAR TO
	precAdd     = 7 // + -
	precMul     = 8 // * / % ||
	precUnary   = 9 // prefix - +
	precPostfix = 10
	precPrimary = 11
)

func (p *parser) parseExpr() Expr { return p.parseExprPrec(0) }

// parseExprPrec parses an expression whose operators all bind at least as tightly as minPrec.
func (p *parser) parseExprPrec(minPrec int) Expr {
	p.enter()
	chain := 1 // depth added by this call: one, plus one per operator applied below
	left := p.parsePrefix()
	for {
		t := p.tok()
		var op BinaryOp
		prec := 0
		switch t.kind {
		case tokWord:
			switch t.kw {
			case kwOR:
				op, prec = OpOr, precOr
			case kwAND:
				op, prec = OpAnd, precAnd
			case kwIS:
				prec = precIs
				if p.peekKw(1, kwDISTINCT) || (p.peekKw(1, kwNOT) && p.peekKw(2, kwDISTINCT)) {
					prec = precCmp
				}
			case kwNOT:
				if k := p.peek(1); k.kind == tokWord &&
					(k.kw == kwBETWEEN || k.kw == kwIN || k.kw == kwLIKE || k.kw == kwSIMILAR) {
					prec = precBetween
				}
			case kwBETWEEN, kwIN, kwLIKE, kwSIMILAR:
				prec = precBetween
			}
		case tokEq:
			op, prec = OpEq, precCmp
		case tokNe:
			op, prec = OpNe, precCmp
		case tokLt:
			op, prec = OpLt, precCmp
		case tokLe:
			op, prec = OpLe, precCmp
		case tokGt:
			op, prec = OpGt, precCmp
		case tokGe:
			op, prec = OpGe, precCmp
		case tokPlus:
			op, prec = OpAdd, precAdd
		case tokMinus:
			op, prec = OpSub, precAdd
		case tokStar:
			op, prec = OpMul, precMul
		case tokSlash:
			op, prec = OpDiv, precMul
		case tokPercent:
			op, prec = OpMod, precMul
		case tokConcat:
			op, prec = OpConcat, precMul
		case tokLBracket:
			prec = precPostfix
		}
		if prec == 0 || prec < minPrec {
			p.depth -= chain
			return left
		}
		p.enter()
		chain++
		start := node{left.Position()}
		switch {
		case t.kind == tokLBracket:
			p.advance()
			idx := p.parseExpr()
			p.expect(tokRBracket)
			left = &IndexExpr{start, left, idx}
		case t.kind == tokWord && t.kw == kwIS:
			left = p.parseIsTail(start, left)
		case t.kind == tokWord && (t.kw == kwNOT || prec == precBetween):
			left = p.parsePredicateTail(start, left)
		default:
			p.advance()
			left = &BinaryExpr{start, op, left, p.parseExprPrec(prec + 1)}
		}
	}
}

// parseIsTail parses what follows x in "x IS [NOT] ...".
func (p *parser) parseIsTail(start node, x Expr) Expr {
	p.advance() // IS
	not := p.acceptKw(kwNOT)
	var what IsKind
	switch {
	case p.acceptKw(kwNULL):
		what = IsNull
	case p.acceptKw(kwTRUE):
		what = IsTrue
	case p.acceptKw(kwFALSE):
		what = IsFalse
	case p.acceptKw(kwUNKNOWN):
		what = IsUnknown
	case p.acceptKw(kwDISTINCT):
		p.expectKw(kwFROM)
		op := OpIsDistinctFrom
		if not {
			op = OpIsNotDistinctFrom
		}
		return &BinaryExpr{start, op, x, p.parseExprPrec(precCmp + 1)}
	default:
		p.fail()
	}
	return &IsExpr{start, x, not, what}
}

// parsePredicateTail parses what follows x in "x [NOT] BETWEEN|IN|LIKE|SIMILAR TO ...".
func (p *parser) parsePredicateTail(start node, x Expr) Expr {
	not := p.acceptKw(kwNOT)
	t := p.advance()
	switch t.kw {
	case kwBETWEEN:
		b := &BetweenExpr{node: start, X: x, Not: not}
		if p.acceptKw(kwSYMMETRIC) {
			b.Symmetric = true
		} else {
			p.acceptKw(kwASYMMETRIC)
		}
		b.Low = p.parseExprPrec(precBetween + 1)
		p.expectKw(kwAND)
		b.High = p.parseExprPrec(precBetween + 1)
		return b
	case kwIN:
		in := &InExpr{node: start, X: x, Not: not}
		p.expect(tokLParen)
		p.refuseValues()
		if p.isKw(kwSELECT) || p.isKw(kwWITH) {
			in.Query = p.parseQuery()
		} else {
			in.List = p.parseExprList()
		}
		p.expect(tokRParen)
		return in
	default: // LIKE, SIMILAR TO
		l := &LikeExpr{node: start, X: x, Not: not, Similar: t.kw == kwSIMILAR}
		if l.Similar {
			p.expectKw(kwTO)
		}
		l.Pattern = p.parseExprPrec(precBetween + 1)
		if p.acceptKw(kwESCAPE) {
			l.Escape = p.parseExprPrec(precBetween + 1)
		}
		return l
	}
}

func (p *parser) parsePrefix() Expr {
	t := p.tok()
	switch {
	case t.kind == tokWord && t.kw == kwNOT:
		p.advance()
		return &UnaryExpr{node{t.pos}, OpNot, p.parseExprPrec(precNot)}
	case t.kind == tokMinus:
		p.advance()
		return &UnaryExpr{node{t.pos}, OpNeg, p.parseExprPrec(precUnary)}
	case t.kind == tokPlus:
		p.advance()
		return &UnaryExpr{node{t.pos}, OpPlus, p.parseExprPrec(precUnary)}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() Expr {
	t := p.tok()
	at := node{t.pos}
	switch t.kind {
	case tokNumber:
		p.advance()
		return &NumberLit{at, t.text}
	case tokString:
		p.advance()
		return &StringLit{at, t.text}
	case tokParam:
		p.advance()
		p.nparams++
		return &Param{at, p.nparams - 1}
	case tokLParen:
		p.advance()
		p.refuseValues()
		if p.isKw(kwSELECT) || p.isKw(kwWITH) {
			q := p.parseQuery()
			p.expect(tokRParen)
			return &SubqueryExpr{at, q}
		}
		e := p.parseExpr()
		p.expect(tokRParen)
		return e
	case tokQuoted:
		return p.parseNameExpr()
	case tokWord:
		switch t.kw {
		case kwNULL:
			p.advance()
			return &NullLit{at}
		case kwTRUE, kwFALSE:
			p.advance()
			return &BoolLit{at, t.kw == kwTRUE}
		case kwCASE:
			return p.parseCase()
		case kwCAST:
			p.advance()
			p.expect(tokLParen)
			c := &CastExpr{node: at, X: p.parseExpr()}
			p.expectKw(kwAS)
			c.Type = p.parseType()
			p.expect(tokRParen)
			return c
		case kwINTERVAL:
			return p.parseInterval()
		case kwARRAY:
			p.advance()
			p.expect(tokLBracket)
			a := &ArrayLit{node: at}
			if !p.at(tokRBracket) {
				a.Elems = p.parseExprList()
			}
			p.expect(tokRBracket)
			return a
		case kwEXISTS:
			p.advance()
			p.expect(tokLParen)
			if !p.atKw(kwSELECT) && !p.atKw(kwWITH) {
				p.fail()
			}
			q := p.parseQuery()
			p.expect(tokRParen)
			return &ExistsExpr{at, q}
		case kwTIMESTAMP, kwDATE, kwTIME:
			if s := p.peek(1); s.kind == tokString {
				p.advance()
				p.advance()
				kind := TimestampLit
				if t.kw == kwDATE {
					kind = DateLit
				} else if t.kw == kwTIME {
					kind = TimeLit
				}
				return &TypedLit{at, kind, s.text}
			}
		case kwCURRENT_DATE, kwCURRENT_TIME, kwCURRENT_TIMESTAMP, kwLOCALTIME, kwLOCALTIMESTAMP:
			p.advance()
			if p.tok().kind == tokLParen {
				return p.parseCall(t)
			}
			return &FuncCall{node: at, Name: Ident{Name: t.text}, Niladic: true}
		case kwLEFT, kwRIGHT, kwREPLACE:
			// Reserved words that double as function names.
			if p.peek(1).kind == tokLParen {
				p.advance()
				return p.parseCall(t)
			}
		}
		if !t.kw.reserved() {
			return p.parseNameExpr()
		}
	}
	p.want("an expression")
	p.fail()
	return nil
}

// parseNameExpr parses a column reference or a function call.
func (p *parser) parseNameExpr() Expr {
	t := p.tok()
	first := p.parseIdent()
	if p.tok().kind == tokLParen {
		return p.parseCall(t)
	}
	c := &ColumnRef{node: node{t.pos}, Parts: []Ident{first}}
	for p.tok().kind == tokDot {
		p.advance()
		c.Parts = append(c.Parts, p.parseIdent())
	}
	if p.tok().kind == tokLParen {
		p.failAt(p.tok().pos, "Qualified function names are not supported")
	}
	return c
}

// parseCall parses a call whose name token t has been consumed; the current token is "(".
func (p *parser) parseCall(t *token) Expr {
	at := node{t.pos}
	p.expect(tokLParen)
	var first Expr // first argument, already parsed while looking for a special form
	if t.kind == tokWord {
		switch t.kw {
		case kwEXTRACT:
			e := &ExtractExpr{node: at, Unit: p.parseUnit()}
			p.expectKw(kwFROM)
			e.X = p.parseExpr()
			p.expect(tokRParen)
			return e
		case kwFLOOR, kwCEIL, kwCEILING:
			first = p.parseExpr()
			if p.acceptKw(kwTO) {
				e := &FloorCeilExpr{node: at, Ceil: t.kw != kwFLOOR, X: first, Unit: p.parseUnit()}
				p.expect(tokRParen)
				return e
			}
		case kwTIMESTAMPADD, kwTIMESTAMPDIFF:
			e := &TimestampArith{node: at, Diff: t.kw == kwTIMESTAMPDIFF, Unit: p.parseUnit()}
			p.expect(tokComma)
			e.A = p.parseExpr()
			p.expect(tokComma)
			e.B = p.parseExpr()
			p.expect(tokRParen)
			return e
		case kwPOSITION:
			e := &PositionExpr{node: at, Sub: p.parseExprPrec(precBetween + 1)}
			p.expectKw(kwIN)
			e.Str = p.parseExpr()
			if p.acceptKw(kwFROM) {
				e.From = p.parseExpr()
			}
			p.expect(tokRParen)
			return e
		case kwTRIM:
			return p.parseTrimArgs(at)
		case kwSUBSTRING:
			first = p.parseExpr()
			if p.acceptKw(kwFROM) {
				e := &SubstringExpr{node: at, X: first, From: p.parseExpr()}
				if p.acceptKw(kwFOR) {
					e.For = p.parseExpr()
				}
				p.expect(tokRParen)
				return e
			}
		}
	}
	call := &FuncCall{node: at, Name: Ident{Name: t.text, Quoted: t.kind == tokQuoted}}
	if first != nil {
		call.Args = append(call.Args, first)
		for p.accept(tokComma) {
			call.Args = append(call.Args, p.parseArg())
		}
	} else if !p.at(tokRParen) {
		if p.acceptKw(kwDISTINCT) {
			call.Distinct = true
		} else {
			p.acceptKw(kwALL)
		}
		if s := p.tok(); s.kind == tokStar && p.peek(1).kind == tokRParen {
			p.advance()
			call.Args = []Expr{&StarExpr{node: node{s.pos}}}
		} else {
			for {
				call.Args = append(call.Args, p.parseArg())
				if !p.accept(tokComma) {
					break
				}
			}
		}
	}
	p.expect(tokRParen)
	if p.acceptKw(kwFILTER) {
		p.expect(tokLParen)
		p.expectKw(kwWHERE)
		call.Filter = p.parseExpr()
		p.expect(tokRParen)
	}
	if p.acceptKw(kwOVER) {
		if p.isIdent() {
			s := p.tok()
			ref := p.parseIdent()
			call.Over = &WindowSpec{node: node{s.pos}, Ref: &ref}
		} else {
			call.Over = p.parseWindowSpec()
		}
	}
	return call
}

// parseArg parses a function argument, which may be named: "name => value".
func (p *parser) parseArg() Expr {
	t := p.tok()
	if p.isIdent() && p.peek(1).kind == tokArrow {
		name := p.parseIdent()
		p.advance()
		return &NamedArg{node{t.pos}, name, p.parseExpr()}
	}
	return p.parseExpr()
}

func (p *parser) parseTrimArgs(at node) Expr {
	e := &TrimExpr{node: at, Side: TrimBoth}
	side := false
	switch {
	case p.isKw(kwBOTH):
		side = true
	case p.isKw(kwLEADING):
		e.Side, side = TrimLeading, true
	case p.isKw(kwTRAILING):
		e.Side, side = TrimTrailing, true
	}
	if side {
		p.advance()
	}
	if p.acceptKw(kwFROM) {
		e.X = p.parseExpr()
	} else {
		x := p.parseExpr()
		if p.acceptKw(kwFROM) {
			e.Chars, e.X = x, p.parseExpr()
		} else if side {
			p.fail()
		} else {
			e.X = x
		}
	}
	p.expect(tokRParen)
	return e
}

func (p *parser) parseUnit() TimeUnit {
	t := p.tok()
	if t.kind == tokWord {
		if u := parseTimeUnit(t.text); u != UnitNone {
			p.advance()
			return u
		}
	}
	p.want("a time unit (SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR, ...)")
	p.fail()
	return UnitNone
}

func (p *parser) parseInterval() Expr {
	t := p.advance() // INTERVAL
	iv := &IntervalLit{node: node{t.pos}}
	if p.tok().kind == tokMinus {
		p.advance()
		iv.Negative = true
	} else if p.tok().kind == tokPlus {
		p.advance()
	}
	if !p.at(tokString) {
		p.fail()
	}
	iv.Value = p.advance().text
	iv.Unit = p.parseUnit()
	if p.acceptKw(kwTO) {
		iv.ToUnit = p.parseUnit()
	}
	return iv
}

func (p *parser) parseCase() Expr {
	t := p.advance() // CASE
	c := &CaseExpr{node: node{t.pos}}
	if !p.isKw(kwWHEN) {
		c.Operand = p.parseExpr()
	}
	for p.atKw(kwWHEN) {
		w := p.advance()
		cond := p.parseExpr()
		p.expectKw(kwTHEN)
		c.Whens = append(c.Whens, &When{node{w.pos}, cond, p.parseExpr()})
	}
	if len(c.Whens) == 0 {
		p.fail()
	}
	if p.acceptKw(kwELSE) {
		c.Else = p.parseExpr()
	}
	p.expectKw(kwEND)
	return c
}

func (p *parser) parseWindowSpec() *WindowSpec {
	t := p.expect(tokLParen)
	w := &WindowSpec{node: node{t.pos}}
	if p.acceptKw(kwPARTITION) {
		p.expectKw(kwBY)
		w.PartitionBy = p.parseExprList()
	}
	if p.acceptKw(kwORDER) {
		p.expectKw(kwBY)
		w.OrderBy = p.parseOrderItems()
	}
	rows, rng := p.atKw(kwROWS), p.atKw(kwRANGE)
	if rows || rng {
		p.advance()
		f := &WindowFrame{Range: rng}
		if p.acceptKw(kwBETWEEN) {
			f.Start = p.parseFrameBound()
			p.expectKw(kwAND)
			f.End = p.parseFrameBound()
		} else {
			f.Start = p.parseFrameBound()
		}
		w.Frame = f
	}
	p.expect(tokRParen)
	return w
}

func (p *parser) parseFrameBound() *FrameBound {
	switch {
	case p.isKw(kwUNBOUNDED) && p.peekKw(1, kwPRECEDING):
		p.advance()
		p.advance()
		return &FrameBound{Kind: UnboundedPreceding}
	case p.isKw(kwUNBOUNDED) && p.peekKw(1, kwFOLLOWING):
		p.advance()
		p.advance()
		return &FrameBound{Kind: UnboundedFollowing}
	case p.isKw(kwCURRENT) && p.peekKw(1, kwROW):
		p.advance()
		p.advance()
		return &FrameBound{Kind: CurrentRow}
	}
	b := &FrameBound{Offset: p.parseExprPrec(precBetween + 1)}
	if p.acceptKw(kwPRECEDING) {
		b.Kind = Preceding
	} else {
		p.expectKw(kwFOLLOWING)
		b.Kind = Following
	}
	return b
}
