package expr

import (
	"strconv"
	"strings"

	"strata/javacompat"
)

// Bindings supplies the value of each column (identifier) for one row. A
// missing column should return the zero Value (null).
type Bindings interface {
	Get(name string) Value
}

// ValueBindings is a Bindings backed by a map of Values.
type ValueBindings map[string]Value

// Get implements Bindings.
func (m ValueBindings) Get(name string) Value { return m[name] }

// MapBindings is a Bindings backed by plain Go values, converted with FromAny
// on every access. Convenient for tests and ingestion-time transforms.
type MapBindings map[string]any

// Get implements Bindings.
func (m MapBindings) Get(name string) Value { return FromAny(m[name]) }

// env is the evaluation context of one row. It is passed by value so that
// evaluating does not allocate; locals holds lambda arguments.
type env struct {
	b      Bindings
	locals []Value
}

// node is a compiled expression tree node.
type node interface {
	eval(e env) (Value, error)
	// write appends a parseable rendering of the node.
	write(sb *strings.Builder)
}

// constNode is a literal (or a folded constant subtree).
type constNode struct{ v Value }

func (n *constNode) eval(env) (Value, error) { return n.v, nil }

func (n *constNode) write(sb *strings.Builder) { writeLiteral(sb, n.v) }

func writeLiteral(sb *strings.Builder, v Value) {
	if v.IsNull() {
		if v.typ != TypeString && v.typ != TypeUnknown {
			sb.WriteString("cast(null, '" + v.typ.String() + "')") // keeps the type
			return
		}
		sb.WriteString("null")
		return
	}
	switch v.typ {
	case TypeLong:
		sb.WriteString(strconv.FormatInt(int64(v.bits), 10))
	case TypeDouble:
		d := v.Double()
		s := javacompat.FormatDouble(d)
		if d < 0 {
			sb.WriteString("-")
			s = s[1:]
		}
		sb.WriteString(s)
	case TypeString:
		writeQuoted(sb, v.str, '\'')
	default:
		sb.WriteString("ARRAY<" + v.typ.Elem().String() + ">[")
		for i, e := range v.elems() {
			if i > 0 {
				sb.WriteString(", ")
			}
			if e.IsNull() {
				sb.WriteString("null")
				continue
			}
			switch e.typ {
			case TypeString:
				writeQuoted(sb, e.str, '\'')
			default:
				s, _ := e.AsString()
				sb.WriteString(s)
			}
		}
		sb.WriteString("]")
	}
}

// writeQuoted writes s between quotes q with Java escapes.
func writeQuoted(sb *strings.Builder, s string, q byte) {
	sb.WriteByte(q)
	for _, r := range s {
		switch r {
		case '\\':
			sb.WriteString(`\\`)
		case '\'', '"':
			if byte(r) == q {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		default:
			if r < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteByte("0123456789abcdef"[r>>4])
				sb.WriteByte("0123456789abcdef"[r&15])
				continue
			}
			sb.WriteRune(r)
		}
	}
	sb.WriteByte(q)
}

// identNode reads a column (slot < 0) or a lambda argument (slot >= 0).
type identNode struct {
	name string
	slot int
}

func (n *identNode) eval(e env) (Value, error) {
	if n.slot >= 0 {
		return e.locals[n.slot], nil
	}
	if e.b == nil {
		return Null, nil
	}
	// a zero Value (typ 0) is a null STRING everywhere; no need to normalize
	return e.b.Get(n.name), nil
}

func (n *identNode) write(sb *strings.Builder) {
	if isPlainIdent(n.name) {
		sb.WriteString(n.name)
		return
	}
	writeQuoted(sb, n.name, '"')
}

func isPlainIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	switch s {
	case "null", "NaN", "Infinity", "ARRAY":
		return false
	}
	return true
}

type unaryNode struct {
	not bool // '!' when true, '-' otherwise
	x   node
}

func (n *unaryNode) eval(e env) (Value, error) {
	v, err := n.x.eval(e)
	if err != nil {
		return Value{}, err
	}
	return evalUnary(n.not, v)
}

func evalUnary(not bool, v Value) (Value, error) {
	if v.IsNull() {
		if not {
			return NullOf(TypeLong), nil
		}
		return v, nil
	}
	if not {
		return Bool(!v.AsBool()), nil
	}
	switch v.typ {
	case TypeLong:
		return Long(-int64(v.bits)), nil
	case TypeDouble:
		return Double(-v.Double()), nil
	}
	return Value{}, evalErrorf("unary '-' is not supported on type %s", v.typ)
}

func (n *unaryNode) write(sb *strings.Builder) {
	if n.not {
		sb.WriteByte('!')
	} else {
		sb.WriteByte('-')
	}
	n.x.write(sb)
}

type binaryNode struct {
	op   opcode
	l, r node
}

func (n *binaryNode) eval(e env) (Value, error) {
	switch n.op {
	case opAnd:
		return evalAnd(e, n.l, n.r)
	case opOr:
		return evalOr(e, n.l, n.r)
	}
	l, err := n.l.eval(e)
	if err != nil {
		return Value{}, err
	}
	r, err := n.r.eval(e)
	if err != nil {
		return Value{}, err
	}
	if n.op.isArith() {
		return evalArith(n.op, l, r)
	}
	return evalCompare(n.op, l, r)
}

func (n *binaryNode) write(sb *strings.Builder) {
	sb.WriteByte('(')
	n.l.write(sb)
	sb.WriteString(" " + n.op.String() + " ")
	n.r.write(sb)
	sb.WriteByte(')')
}

// evalAnd: false wins over null, null wins over true (SQL three-valued logic).
func evalAnd(e env, ln, rn node) (Value, error) {
	l, err := ln.eval(e)
	if err != nil {
		return Value{}, err
	}
	if !l.IsNull() && !l.AsBool() {
		return Bool(false), nil
	}
	r, err := rn.eval(e)
	if err != nil {
		return Value{}, err
	}
	if l.IsNull() {
		if r.IsNull() || r.AsBool() {
			return NullOf(TypeLong), nil
		}
		return Bool(false), nil
	}
	if r.IsNull() {
		return NullOf(TypeLong), nil
	}
	return Bool(r.AsBool()), nil
}

// evalOr: true wins over null, null wins over false.
func evalOr(e env, ln, rn node) (Value, error) {
	l, err := ln.eval(e)
	if err != nil {
		return Value{}, err
	}
	if !l.IsNull() && l.AsBool() {
		return Bool(true), nil
	}
	r, err := rn.eval(e)
	if err != nil {
		return Value{}, err
	}
	if l.IsNull() {
		if r.IsNull() || !r.AsBool() {
			return NullOf(TypeLong), nil
		}
		return Bool(true), nil
	}
	if r.IsNull() {
		return NullOf(TypeLong), nil
	}
	return Bool(r.AsBool()), nil
}

// evalFunc evaluates a function call from its argument nodes; functions
// decide themselves which arguments to evaluate (if, nvl, case are lazy).
type evalFunc func(e env, args []node) (Value, error)

type callNode struct {
	name string
	args []node
	fn   evalFunc
	def  *funcDef
}

func (n *callNode) eval(e env) (Value, error) {
	v, err := n.fn(e, n.args)
	if err != nil {
		if _, ok := err.(*EvalError); ok {
			return Value{}, err
		}
		return Value{}, evalErrorf("function[%s]: %v", n.name, err)
	}
	return v, nil
}

func (n *callNode) write(sb *strings.Builder) {
	sb.WriteString(n.name)
	sb.WriteByte('(')
	for i, a := range n.args {
		if i > 0 {
			sb.WriteString(", ")
		}
		a.write(sb)
	}
	sb.WriteByte(')')
}

// lambdaNode is `(x, y) -> body`; its arguments live in env.locals slots.
type lambdaNode struct {
	params []string
	slots  []int
	body   node
}

func (n *lambdaNode) eval(env) (Value, error) {
	return Value{}, evalErrorf("a lambda cannot be evaluated on its own")
}

func (n *lambdaNode) write(sb *strings.Builder) {
	sb.WriteByte('(')
	for i, p := range n.params {
		if i > 0 {
			sb.WriteString(", ")
		}
		(&identNode{name: p}).write(sb)
	}
	sb.WriteString(") -> ")
	n.body.write(sb)
}

// call binds the lambda's arguments and evaluates its body.
func (n *lambdaNode) call(e env, args ...Value) (Value, error) {
	for i, s := range n.slots {
		e.locals[s] = args[i]
	}
	return n.body.eval(e)
}

// applyNode is a call of map/filter/fold/... with a lambda first argument.
type applyNode struct {
	callNode
	lambda *lambdaNode
}

func (n *applyNode) write(sb *strings.Builder) {
	sb.WriteString(n.name)
	sb.WriteByte('(')
	n.lambda.write(sb)
	for _, a := range n.args {
		sb.WriteString(", ")
		a.write(sb)
	}
	sb.WriteByte(')')
}

// evalArgs evaluates every argument (strict functions).
func evalArgs(e env, args []node, out []Value) error {
	for i, a := range args {
		v, err := a.eval(e)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}
