package expr

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// EvalError is a runtime failure while evaluating an expression, such as an
// integer division by zero or an operator applied to an unsupported type.
type EvalError struct {
	Msg string
}

func (e *EvalError) Error() string { return e.Msg }

func evalErrorf(format string, args ...any) error {
	return &EvalError{Msg: fmt.Sprintf(format, args...)}
}

type opcode uint8

const (
	opAdd opcode = iota
	opSub
	opMul
	opDiv
	opMod
	opPow
	opLT
	opLE
	opGT
	opGE
	opEQ
	opNE
	opAnd
	opOr
)

var opText = [...]string{"+", "-", "*", "/", "%", "^", "<", "<=", ">", ">=", "==", "!=", "&&", "||"}

func (o opcode) String() string { return opText[o] }

func (o opcode) isArith() bool { return o <= opPow }

func (o opcode) isCompare() bool { return o >= opLT && o <= opNE }

// autoDetect is Druid's per-row type choice for a binary operator: STRING
// when both sides are strings, LONG when both (non-null) sides are longs,
// DOUBLE otherwise. A null side takes the other side's type.
func autoDetect(l, r Value) Type {
	lt, rt := l.Type(), r.Type()
	if lt == TypeString && rt == TypeString {
		return TypeString
	}
	if l.IsNull() {
		lt = rt
	}
	if r.IsNull() {
		rt = lt
	}
	if lt == TypeLong && rt == TypeLong {
		return TypeLong
	}
	return TypeDouble
}

// evalArith applies + - * / % ^ with Druid's rules.
func evalArith(op opcode, l, r Value) (Value, error) {
	// fast paths for the common non-null numeric cases
	if !l.null && !r.null {
		switch {
		case l.typ == TypeLong && r.typ == TypeLong:
			a, b := int64(l.bits), int64(r.bits)
			switch op {
			case opAdd:
				return Long(a + b), nil
			case opSub:
				return Long(a - b), nil
			case opMul:
				return Long(a * b), nil
			}
		case l.typ == TypeDouble && r.typ == TypeDouble:
			return Double(doubleArith(op, math.Float64frombits(l.bits), math.Float64frombits(r.bits))), nil
		case l.typ == TypeDouble && r.typ == TypeLong:
			return Double(doubleArith(op, math.Float64frombits(l.bits), float64(int64(r.bits)))), nil
		case l.typ == TypeLong && r.typ == TypeDouble:
			return Double(doubleArith(op, float64(int64(l.bits)), math.Float64frombits(r.bits))), nil
		}
	}
	t := autoDetect(l, r)
	if l.IsNull() || r.IsNull() {
		return NullOf(t), nil
	}
	switch t {
	case TypeString:
		if op != opAdd {
			return Value{}, evalErrorf("operator '%s' is not supported on type STRING", op)
		}
		return String(l.str + r.str), nil
	case TypeLong:
		v, err := longArith(op, int64(l.bits), int64(r.bits))
		if err != nil {
			return Value{}, err
		}
		return Long(v), nil
	}
	ln, rn := l.numeric(), r.numeric()
	if !ln.ok || !rn.ok {
		return NullOf(TypeDouble), nil
	}
	return Double(doubleArith(op, ln.asDouble(), rn.asDouble())), nil
}

var errDivByZero = &EvalError{Msg: "/ by zero"}

func longArith(op opcode, a, b int64) (int64, error) {
	switch op {
	case opAdd:
		return a + b, nil
	case opSub:
		return a - b, nil
	case opMul:
		return a * b, nil
	case opDiv:
		if b == 0 {
			return 0, errDivByZero
		}
		return a / b, nil
	case opMod:
		if b == 0 {
			return 0, errDivByZero
		}
		return a % b, nil
	case opPow:
		return longPow(a, b)
	}
	return 0, evalErrorf("bad arithmetic operator %s", op)
}

// longPow is Guava's LongMath.pow (wrapping on overflow) with Ints.checkedCast
// on the exponent, as Druid's ^ on two longs.
func longPow(b, k int64) (int64, error) {
	if k != int64(int32(k)) {
		return 0, evalErrorf("exponent %d out of int range", k)
	}
	if k < 0 {
		return 0, evalErrorf("exponent (%d) must be >= 0", k)
	}
	switch b {
	case 0:
		if k == 0 {
			return 1, nil
		}
		return 0, nil
	case 1:
		return 1, nil
	case -1:
		if k&1 == 0 {
			return 1, nil
		}
		return -1, nil
	case 2:
		if k < 64 {
			return 1 << uint(k), nil
		}
		return 0, nil
	case -2:
		if k < 64 {
			if k&1 == 0 {
				return 1 << uint(k), nil
			}
			return -(1 << uint(k)), nil
		}
		return 0, nil
	}
	accum := int64(1)
	for {
		switch k {
		case 0:
			return accum, nil
		case 1:
			return accum * b, nil
		}
		if k&1 != 0 {
			accum *= b
		}
		b *= b
		k >>= 1
	}
}

func doubleArith(op opcode, a, b float64) float64 {
	switch op {
	case opAdd:
		return a + b
	case opSub:
		return a - b
	case opMul:
		return a * b
	case opDiv:
		return a / b
	case opMod:
		return math.Mod(a, b)
	case opPow:
		return javaPow(a, b)
	}
	return math.NaN()
}

// javaPow is Math.pow; it differs from math.Pow for a NaN exponent (always
// NaN in Java) and for |base| == 1 with an infinite exponent (NaN in Java).
func javaPow(x, y float64) float64 {
	if y != y {
		return math.NaN()
	}
	if math.IsInf(y, 0) && (x == 1 || x == -1) {
		return math.NaN()
	}
	return math.Pow(x, y)
}

// javaDoubleCompare is Double.compare: -0.0 < 0.0 and NaN above everything.
func javaDoubleCompare(a, b float64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	ab, bb := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if a != a {
		ab = 0x7ff8000000000000
	}
	if b != b {
		bb = 0x7ff8000000000000
	}
	switch {
	case ab == bb:
		return 0
	case ab < bb:
		return -1
	}
	return 1
}

// compareJavaStrings orders strings like Java's String.compareTo (UTF-16
// code units), which differs from Go's byte order only when a supplementary
// character meets a BMP character at or above U+E000.
func compareJavaStrings(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		switch {
		case len(a) == len(b):
			return 0
		case len(a) < len(b):
			return -1
		}
		return 1
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	// back up to the start of the differing rune
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	ua, ub := utf16First(ra), utf16First(rb)
	switch {
	case ua < ub:
		return -1
	case ua > ub:
		return 1
	}
	// same first unit: both supplementary; code point order equals unit order
	if ra < rb {
		return -1
	}
	return 1
}

func utf16First(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + ((r - 0x10000) >> 10)
	}
	return r
}

// evalCompare applies < <= > >= == != with Druid's rules (LONG 1/0 result,
// null when either side is null).
func evalCompare(op opcode, l, r Value) (Value, error) {
	if !l.null && !r.null && l.typ == TypeLong && r.typ == TypeLong {
		a, b := int64(l.bits), int64(r.bits)
		c := 0
		if a < b {
			c = -1
		} else if a > b {
			c = 1
		}
		return Bool(cmpResult(op, c)), nil
	}
	if l.IsNull() || r.IsNull() {
		return NullOf(TypeLong), nil
	}
	if l.typ.IsArray() || r.typ.IsArray() {
		c, err := compareArrays(l, r)
		if err != nil {
			return Value{}, err
		}
		return Bool(cmpResult(op, c)), nil
	}
	switch autoDetect(l, r) {
	case TypeString:
		if op == opEQ {
			return Bool(l.str == r.str), nil
		}
		if op == opNE {
			return Bool(l.str != r.str), nil
		}
		return Bool(cmpResult(op, compareJavaStrings(l.str, r.str))), nil
	case TypeLong:
		a, b := int64(l.bits), int64(r.bits)
		c := 0
		if a < b {
			c = -1
		} else if a > b {
			c = 1
		}
		return Bool(cmpResult(op, c)), nil
	}
	ln, rn := l.numeric(), r.numeric()
	if !ln.ok || !rn.ok {
		return NullOf(TypeLong), nil
	}
	return Bool(compareDoubles(op, ln.asDouble(), rn.asDouble())), nil
}

// compareDoubles: ordering uses Double.compare, equality uses ==.
func compareDoubles(op opcode, a, b float64) bool {
	switch op {
	case opEQ:
		return a == b
	case opNE:
		return a != b
	}
	return cmpResult(op, javaDoubleCompare(a, b))
}

func cmpResult(op opcode, c int) bool {
	switch op {
	case opLT:
		return c < 0
	case opLE:
		return c <= 0
	case opGT:
		return c > 0
	case opGE:
		return c >= 0
	case opEQ:
		return c == 0
	case opNE:
		return c != 0
	}
	return false
}

// leastRestrictive is the common type two values are compared or merged in.
func leastRestrictive(a, b Type) Type {
	ea, eb := a.Elem(), b.Elem()
	var e Type
	switch {
	case ea == eb:
		e = ea
	case ea == TypeString || eb == TypeString:
		e = TypeString
	default:
		e = TypeDouble
	}
	if a.IsArray() || b.IsArray() {
		return e.ArrayOf()
	}
	return e
}

// compareArrays orders arrays element by element, nulls first, a shorter
// prefix first, after casting both to their least restrictive array type.
func compareArrays(l, r Value) (int, error) {
	t := leastRestrictive(l.Type(), r.Type()).ArrayOf()
	lc, err := l.Cast(t)
	if err != nil {
		return 0, err
	}
	rc, err := r.Cast(t)
	if err != nil {
		return 0, err
	}
	return compareValues(lc, rc), nil
}

// compareValues is a total order on values of the same type: nulls first,
// numbers numerically (Double.compare), strings like Java, arrays
// lexicographically.
func compareValues(a, b Value) int {
	an, bn := a.IsNull(), b.IsNull()
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	switch a.typ {
	case TypeLong:
		x, y := int64(a.bits), int64(b.bits)
		if b.typ != TypeLong {
			return javaDoubleCompare(float64(x), b.numeric().asDouble())
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case TypeDouble:
		return javaDoubleCompare(math.Float64frombits(a.bits), b.numeric().asDouble())
	case TypeString:
		bs, _ := b.AsString()
		return compareJavaStrings(a.str, bs)
	}
	for i := 0; i < len(a.elems()) && i < len(b.elems()); i++ {
		if c := compareValues(a.elems()[i], b.elems()[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a.elems()) < len(b.elems()):
		return -1
	case len(a.elems()) > len(b.elems()):
		return 1
	}
	return 0
}

// valuesEqual is Java's Objects.equals on element values of the same type.
func valuesEqual(a, b Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	if a.typ != b.typ {
		return false
	}
	switch a.typ {
	case TypeLong, TypeDouble:
		// Double.equals compares bit patterns (NaN equals NaN, -0.0 != 0.0)
		if a.typ == TypeDouble {
			x, y := math.Float64frombits(a.bits), math.Float64frombits(b.bits)
			if x != x && y != y {
				return true
			}
		}
		return a.bits == b.bits
	case TypeString:
		return a.str == b.str
	}
	return compareValues(a, b) == 0
}
