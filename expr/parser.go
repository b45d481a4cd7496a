package expr

import (
	"math"
	"strconv"
	"strings"

	"strata/javacompat"
)

// Options configures compilation.
type Options struct {
	// Lookup resolves the lookup name of lookup(expr, 'name'[, missing]) to a
	// key→value function. When nil, lookup() is rejected at compile time.
	Lookup func(name string) (func(key string) (string, bool), error)
}

// Expr is a compiled expression. It is immutable and safe for concurrent use.
type Expr struct {
	src     string
	root    node
	columns []string
	nslots  int
}

// Compile parses and compiles a Druid native expression.
func Compile(src string) (*Expr, error) { return CompileWith(src, Options{}) }

// MustCompile is Compile that panics on error, for tests and constants.
func MustCompile(src string) *Expr {
	e, err := Compile(src)
	if err != nil {
		panic(err)
	}
	return e
}

// CompileWith compiles src with the given options.
func CompileWith(src string, opts Options) (*Expr, error) {
	p := &parser{src: src, opts: &opts}
	lx := lexer{src: src}
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		p.toks = append(p.toks, t)
		if t.kind == tEOF {
			break
		}
	}
	root, err := p.parseExpr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errorf(t.pos, "unexpected %s", t.describe())
	}
	e := &Expr{src: src, root: root, nslots: p.nslots}
	seen := map[string]bool{}
	walk(root, func(n node) {
		if id, ok := n.(*identNode); ok && id.slot < 0 && !seen[id.name] {
			seen[id.name] = true
			e.columns = append(e.columns, id.name)
		}
	})
	return e, nil
}

// RequiredColumns lists the columns the expression reads, in order of first
// appearance. Lambda arguments are not columns.
func (x *Expr) RequiredColumns() []string { return x.columns }

// Source returns the text the expression was compiled from.
func (x *Expr) Source() string { return x.src }

// String renders the compiled expression (constants folded, operators fully
// parenthesized) in a form that compiles back to the same expression.
func (x *Expr) String() string {
	var sb strings.Builder
	x.root.write(&sb)
	return sb.String()
}

// IsConstant reports whether the expression reads no columns; its value is
// then Eval(nil).
func (x *Expr) IsConstant() bool {
	_, ok := x.root.(*constNode)
	return ok
}

// Eval evaluates the expression for one row.
func (x *Expr) Eval(b Bindings) (Value, error) {
	e := env{b: b}
	if x.nslots > 0 {
		e.locals = make([]Value, x.nslots)
	}
	return x.root.eval(e)
}

// walk visits every node of the tree (pre-order).
func walk(n node, f func(node)) {
	f(n)
	switch t := n.(type) {
	case *unaryNode:
		walk(t.x, f)
	case *binaryNode:
		walk(t.l, f)
		walk(t.r, f)
	case *callNode:
		for _, a := range t.args {
			walk(a, f)
		}
	case *applyNode:
		walk(t.lambda.body, f)
		for _, a := range t.args {
			walk(a, f)
		}
	}
}

type parser struct {
	src    string
	toks   []token
	i      int
	opts   *Options
	scopes []map[string]int // lambda argument name -> slot, innermost last
	nslots int
	depth  int // nesting of parse calls, bounded by maxDepth
	nodes  int // operator nodes built, bounded by maxNodes
}

// maxDepth bounds the nesting of sub-expressions and maxNodes the number of
// operators, so that hostile input cannot exhaust the stack when the tree is
// parsed or evaluated recursively.
const (
	maxDepth = 500
	maxNodes = 100000
)

// enter counts one level of nesting; callers must call p.leave.
func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf(pos, "expression is nested too deeply")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) countNode(pos int) error {
	p.nodes++
	if p.nodes > maxNodes {
		return p.errorf(pos, "expression is too large")
	}
	return nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(text string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == text
}

func (p *parser) expectOp(text string) error {
	t := p.peek()
	if t.kind != tOp || t.text != text {
		return p.errorf(t.pos, "expected %q but found %s", text, t.describe())
	}
	p.i++
	return nil
}

func (p *parser) errorf(pos int, format string, args ...any) *SyntaxError {
	lx := lexer{src: p.src}
	return lx.errorf(pos, format, args...)
}

// binary operator precedence: && || < comparisons < + - < * / % < ^
func binaryOp(t token) (opcode, int, bool) {
	if t.kind != tOp {
		return 0, 0, false
	}
	switch t.text {
	case "&&":
		return opAnd, 1, true
	case "||":
		return opOr, 1, true
	case "<":
		return opLT, 2, true
	case "<=":
		return opLE, 2, true
	case ">":
		return opGT, 2, true
	case ">=":
		return opGE, 2, true
	case "==":
		return opEQ, 2, true
	case "!=":
		return opNE, 2, true
	case "+":
		return opAdd, 3, true
	case "-":
		return opSub, 3, true
	case "*":
		return opMul, 4, true
	case "/":
		return opDiv, 4, true
	case "%":
		return opMod, 4, true
	case "^":
		return opPow, 5, true
	}
	return 0, 0, false
}

func (p *parser) parseExpr(minPrec int) (node, error) {
	if err := p.enter(p.peek().pos); err != nil {
		return nil, err
	}
	defer p.leave()
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		op, prec, ok := binaryOp(p.peek())
		if !ok || prec < minPrec {
			return left, nil
		}
		if err := p.countNode(p.advance().pos); err != nil {
			return nil, err
		}
		next := prec + 1
		if op == opPow { // right associative
			next = prec
		}
		right, err := p.parseExpr(next)
		if err != nil {
			return nil, err
		}
		left = fold(&binaryNode{op: op, l: left, r: right})
	}
}

// parseUnary: unary operators bind tighter than every binary operator, so
// -2^2 is (-2)^2 as in Druid's grammar.
func (p *parser) parseUnary() (node, error) {
	t := p.peek()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	if t.kind == tOp && (t.text == "-" || t.text == "!") {
		p.advance()
		// -9223372036854775808 is a valid long literal although its magnitude is not.
		if n := p.peek(); t.text == "-" && n.kind == tLong && n.text == "9223372036854775808" {
			p.advance()
			return &constNode{v: Long(math.MinInt64)}, nil
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return fold(&unaryNode{not: t.text == "!", x: x}), nil
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (node, error) {
	t := p.advance()
	switch t.kind {
	case tEOF:
		return nil, p.errorf(t.pos, "unexpected end of input")
	case tNull:
		return &constNode{v: Null}, nil
	case tLong:
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.errorf(t.pos, "number %s is out of LONG range", t.text)
		}
		return &constNode{v: Long(v)}, nil
	case tDouble:
		return &constNode{v: Double(parseDoubleLiteral(t.text))}, nil
	case tString:
		return &constNode{v: String(t.text)}, nil
	case tIdent:
		if p.isOp("(") {
			return p.parseCall(t)
		}
		return p.identifier(t.text), nil
	case tTypedArray:
		return p.parseArrayLiteral(t, t.text)
	case tOp:
		switch t.text {
		case "(":
			x, err := p.parseExpr(0)
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return x, nil
		case "[":
			p.i-- // let parseArrayLiteral consume '['
			return p.parseArrayLiteral(t, "")
		}
	}
	return nil, p.errorf(t.pos, "unexpected %s", t.describe())
}

func parseDoubleLiteral(s string) float64 {
	switch s {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	}
	d, _ := strconv.ParseFloat(s, 64) // the lexer guarantees the syntax; range errors give ±Inf/0 like Java
	return d
}

func (p *parser) identifier(name string) node {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if slot, ok := p.scopes[i][name]; ok {
			return &identNode{name: name, slot: slot}
		}
	}
	return &identNode{name: name, slot: -1}
}

// parseArrayLiteral parses [a, b, ...] optionally prefixed by a type
// (<LONG>, <DOUBLE>, <STRING>, ARRAY<...>). Elements must be literals.
func (p *parser) parseArrayLiteral(start token, typeName string) (node, error) {
	if err := p.expectOp("["); err != nil {
		return nil, err
	}
	type elem struct {
		tok token
		neg bool
	}
	var elems []elem
	for !p.isOp("]") {
		if len(elems) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		neg := false
		if p.isOp("-") {
			p.advance()
			neg = true
		}
		t := p.advance()
		switch t.kind {
		case tLong, tDouble:
		case tString, tNull:
			if neg {
				return nil, p.errorf(t.pos, "unexpected %s after '-'", t.describe())
			}
		default:
			return nil, p.errorf(t.pos, "array elements must be literals, found %s", t.describe())
		}
		elems = append(elems, elem{t, neg})
	}
	p.advance() // ']'

	var typ Type
	if typeName != "" {
		typ, _ = ParseType(typeName)
	} else {
		// infer: strings (or only nulls) -> STRING, all longs -> LONG, numbers -> DOUBLE
		hasStr, hasLong, hasDouble := false, false, false
		for _, e := range elems {
			switch e.tok.kind {
			case tString:
				hasStr = true
			case tLong:
				hasLong = true
			case tDouble:
				hasDouble = true
			}
		}
		switch {
		case hasStr && (hasLong || hasDouble):
			return nil, p.errorf(start.pos, "array literal mixes strings and numbers; use a typed array such as <STRING>[...]")
		case hasDouble:
			typ = TypeDouble
		case hasLong:
			typ = TypeLong
		default:
			typ = TypeString
		}
	}
	out := make([]Value, len(elems))
	for i, e := range elems {
		t := e.tok
		if t.kind == tNull {
			out[i] = NullOf(typ)
			continue
		}
		text := t.text
		if e.neg {
			text = "-" + text
		}
		switch typ {
		case TypeString:
			out[i] = String(text)
		case TypeLong:
			if l, ok := tryParseLong(text); ok {
				out[i] = Long(l)
			} else if d, ok := tryParseDouble(text); ok {
				out[i] = Long(javacompat.DoubleToLong(d))
			} else {
				return nil, p.errorf(t.pos, "cannot parse %q as LONG", text)
			}
		case TypeDouble:
			d, ok := tryParseDouble(text)
			if !ok {
				return nil, p.errorf(t.pos, "cannot parse %q as DOUBLE", text)
			}
			out[i] = Double(d)
		}
	}
	return &constNode{v: Value{typ: typ.ArrayOf(), arr: &out}}, nil
}

// parseCall parses name( args ) or name( lambda, args ) for apply functions.
func (p *parser) parseCall(name token) (node, error) {
	p.advance() // '('
	lname := strings.ToLower(name.text)
	if ad, ok := applyFuncs[lname]; ok && p.lambdaAhead() {
		return p.parseApply(name, ad)
	}
	var args []node
	for !p.isOp(")") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := p.parseExpr(0)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	p.advance() // ')'
	def, ok := functions[lname]
	if !ok {
		if _, isApply := applyFuncs[lname]; isApply {
			return nil, p.errorf(name.pos, "function '%s' needs a lambda expression as its first argument", name.text)
		}
		return nil, p.errorf(name.pos, "function '%s' is not defined", name.text)
	}
	if len(args) < def.minArgs || (def.maxArgs >= 0 && len(args) > def.maxArgs) {
		return nil, p.errorf(name.pos, "function '%s' %s", lname, arityText(def.minArgs, def.maxArgs, len(args)))
	}
	fn, err := def.build(&buildCtx{name: lname, opts: p.opts}, args)
	if err != nil {
		return nil, p.errorf(name.pos, "function '%s': %v", lname, err)
	}
	return fold(&callNode{name: lname, args: args, fn: fn, def: def}), nil
}

func arityText(min, max, got int) string {
	switch {
	case min == max:
		return "needs " + strconv.Itoa(min) + " argument(s), got " + strconv.Itoa(got)
	case max < 0:
		return "needs at least " + strconv.Itoa(min) + " argument(s), got " + strconv.Itoa(got)
	}
	return "needs " + strconv.Itoa(min) + " to " + strconv.Itoa(max) + " arguments, got " + strconv.Itoa(got)
}

// lambdaAhead reports whether the tokens after '(' start a lambda:
// x ->, () ->, (x, y) ->.
func (p *parser) lambdaAhead() bool {
	t := p.peek()
	if t.kind == tIdent {
		n := p.peekAt(1)
		return n.kind == tOp && n.text == "->"
	}
	if t.kind != tOp || t.text != "(" {
		return false
	}
	k := 1
	if n := p.peekAt(k); n.kind == tOp && n.text == ")" {
		n2 := p.peekAt(k + 1)
		return n2.kind == tOp && n2.text == "->"
	}
	for {
		if p.peekAt(k).kind != tIdent {
			return false
		}
		k++
		n := p.peekAt(k)
		if n.kind != tOp {
			return false
		}
		if n.text == ")" {
			n2 := p.peekAt(k + 1)
			return n2.kind == tOp && n2.text == "->"
		}
		if n.text != "," {
			return false
		}
		k++
	}
}

func (p *parser) parseLambda() (*lambdaNode, error) {
	var params []string
	if p.peek().kind == tIdent {
		params = append(params, p.advance().text)
	} else {
		p.advance() // '('
		for !p.isOp(")") {
			if len(params) > 0 {
				p.advance() // ','
			}
			params = append(params, p.advance().text)
		}
		p.advance() // ')'
	}
	if err := p.expectOp("->"); err != nil {
		return nil, err
	}
	scope := map[string]int{}
	l := &lambdaNode{params: params}
	for _, name := range params {
		scope[name] = p.nslots
		l.slots = append(l.slots, p.nslots)
		p.nslots++
	}
	p.scopes = append(p.scopes, scope)
	body, err := p.parseExpr(0)
	p.scopes = p.scopes[:len(p.scopes)-1]
	if err != nil {
		return nil, err
	}
	l.body = body
	return l, nil
}

func (p *parser) parseApply(name token, ad *applyDef) (node, error) {
	lambda, err := p.parseLambda()
	if err != nil {
		return nil, err
	}
	var args []node
	for !p.isOp(")") {
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
		a, err := p.parseExpr(0)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	p.advance() // ')'
	lname := strings.ToLower(name.text)
	fn, err := ad.build(lambda, args)
	if err != nil {
		return nil, p.errorf(name.pos, "function '%s': %v", lname, err)
	}
	return &applyNode{callNode: callNode{name: lname, args: args, fn: fn}, lambda: lambda}, nil
}

// fold replaces a node whose children are all constants by its value, when
// evaluating it succeeds (errors are left to surface at evaluation time).
func fold(n node) node {
	switch t := n.(type) {
	case *unaryNode:
		if !isConst(t.x) {
			return n
		}
	case *binaryNode:
		if !isConst(t.l) || !isConst(t.r) {
			return n
		}
	case *callNode:
		if t.def != nil && t.def.volatile {
			return n
		}
		for _, a := range t.args {
			if !isConst(a) {
				return n
			}
		}
	default:
		return n
	}
	v, err := n.eval(env{})
	if err != nil {
		return n
	}
	return &constNode{v: v}
}

func isConst(n node) bool {
	_, ok := n.(*constNode)
	return ok
}

// constValue returns the value of a constant argument.
func constValue(n node) (Value, bool) {
	if c, ok := n.(*constNode); ok {
		return c.v, true
	}
	return Value{}, false
}
