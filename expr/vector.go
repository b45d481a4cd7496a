package expr

import (
	"fmt"
	"math"

	"strata/javacompat"
)

// Vector is a batch of LONG or DOUBLE values with a null bitmap, the unit of
// the vectorized evaluation path. Only the slice matching Type is used. Bit i
// of Nulls (word i/64, bit i%64) is set when row i is null; a nil Nulls means
// no row is null.
type Vector struct {
	Type    Type
	Longs   []int64
	Doubles []float64
	Nulls   []uint64
}

// IsNull reports whether row i is null.
func (v *Vector) IsNull(i int) bool {
	return v.Nulls != nil && v.Nulls[i>>6]&(1<<(uint(i)&63)) != 0
}

// SetNull marks row i of a null bitmap as null.
func SetNull(bits []uint64, i int) { bits[i>>6] |= 1 << (uint(i) & 63) }

// Value returns row i as a Value (for callers mixing row and vector code).
func (v *Vector) Value(i int) Value {
	if v.IsNull(i) {
		return NullOf(v.Type)
	}
	if v.Type == TypeLong {
		return Long(v.Longs[i])
	}
	return Double(v.Doubles[i])
}

// VectorBindings supplies column vectors for the current batch. A nil result
// means the column does not exist (read as all nulls).
type VectorBindings interface {
	Vector(name string) *Vector
}

// VectorProgram evaluates an expression over batches of rows. It reuses
// internal buffers, so one program must not be used by several goroutines
// at once; build one per goroutine with Vectorize.
type VectorProgram struct {
	root    vnode
	maxRows int
}

// Vectorize compiles the expression for batch evaluation when every part of
// it has a vectorized form: numeric (LONG/DOUBLE) columns and constants,
// + - * / % ^, comparisons, && || !, unary minus, and the functions abs,
// ceil, floor, sqrt, cbrt, exp, log, log10, max, min, isnull, notnull, nvl,
// cast to LONG/DOUBLE, timestamp_floor/timestamp_ceil with constant
// granularity. types reports the type of each column; maxRows bounds the
// batch size. It returns false when the row path must be used. Results are
// identical to Eval row by row.
func (x *Expr) Vectorize(types func(name string) (Type, bool), maxRows int) (*VectorProgram, bool) {
	if maxRows <= 0 {
		return nil, false
	}
	c := &vcompiler{types: types, size: maxRows}
	root, ok := c.compile(x.root)
	if !ok {
		return nil, false
	}
	return &VectorProgram{root: root, maxRows: maxRows}, true
}

// OutputType is the type of the vectors Eval returns.
func (p *VectorProgram) OutputType() Type { return p.root.typ() }

// Eval evaluates n rows (n <= maxRows). The returned vector belongs to the
// program (or is one of the input vectors) and is valid until the next call;
// callers must not modify it.
func (p *VectorProgram) Eval(in VectorBindings, n int) (*Vector, error) {
	if n < 0 || n > p.maxRows {
		return nil, fmt.Errorf("vector size %d exceeds the program's maximum %d", n, p.maxRows)
	}
	return p.root.eval(in, n)
}

type vnode interface {
	typ() Type
	eval(in VectorBindings, n int) (*Vector, error)
}

type vcompiler struct {
	types func(string) (Type, bool)
	size  int
}

func (c *vcompiler) newVector(t Type) *Vector {
	v := &Vector{Type: t}
	if t == TypeLong {
		v.Longs = make([]int64, c.size)
	} else {
		v.Doubles = make([]float64, c.size)
	}
	return v
}

func (c *vcompiler) nullBits() []uint64 { return make([]uint64, (c.size+63)/64) }

func (c *vcompiler) compile(n node) (vnode, bool) {
	switch t := n.(type) {
	case *constNode:
		return c.constant(t.v)
	case *identNode:
		if t.slot >= 0 || c.types == nil {
			return nil, false
		}
		ty, ok := c.types(t.name)
		if !ok || !ty.IsNumeric() {
			return nil, false
		}
		return &vColumn{name: t.name, t: ty, empty: c.allNull(ty)}, true
	case *unaryNode:
		x, ok := c.compile(t.x)
		if !ok {
			return nil, false
		}
		out := c.newVector(x.typ())
		if t.not {
			out = c.newVector(TypeLong)
		}
		return &vUnary{not: t.not, x: x, out: out, nulls: c.nullBits()}, true
	case *binaryNode:
		return c.binary(t)
	case *callNode:
		return c.call(t)
	}
	return nil, false
}

func (c *vcompiler) allNull(t Type) *Vector {
	v := c.newVector(t)
	v.Nulls = c.nullBits()
	for i := range v.Nulls {
		v.Nulls[i] = ^uint64(0)
	}
	return v
}

func (c *vcompiler) constant(v Value) (vnode, bool) {
	if v.IsNull() || !v.Type().IsNumeric() {
		return nil, false
	}
	out := c.newVector(v.typ)
	if v.typ == TypeLong {
		for i := range out.Longs {
			out.Longs[i] = v.Long()
		}
	} else {
		for i := range out.Doubles {
			out.Doubles[i] = v.Double()
		}
	}
	return &vConst{v: out}, true
}

// toDouble wraps a LONG node so that it yields doubles.
func (c *vcompiler) toDouble(x vnode) vnode {
	if x.typ() == TypeDouble {
		return x
	}
	return &vCast{x: x, out: c.newVector(TypeDouble)}
}

// canError reports whether evaluating n may fail at run time (integer
// division, modulo and power). Such nodes are not evaluated eagerly on the
// right of && and ||, where the row path may skip them.
func canError(n node) bool {
	found := false
	walk(n, func(m node) {
		switch t := m.(type) {
		case *binaryNode:
			if t.op == opDiv || t.op == opMod || t.op == opPow {
				found = true
			}
		case *callNode:
			if t.name == "div" {
				found = true
			}
		}
	})
	return found
}

func (c *vcompiler) binary(b *binaryNode) (vnode, bool) {
	l, ok := c.compile(b.l)
	if !ok {
		return nil, false
	}
	r, ok := c.compile(b.r)
	if !ok {
		return nil, false
	}
	switch {
	case b.op == opAnd || b.op == opOr:
		if canError(b.r) {
			return nil, false
		}
		return &vLogic{and: b.op == opAnd, l: l, r: r, out: c.newVector(TypeLong), nulls: c.nullBits()}, true
	case b.op.isArith():
		if l.typ() == TypeLong && r.typ() == TypeLong {
			return &vArith{op: b.op, l: l, r: r, out: c.newVector(TypeLong), nulls: c.nullBits()}, true
		}
		return &vArith{op: b.op, l: c.toDouble(l), r: c.toDouble(r), out: c.newVector(TypeDouble), nulls: c.nullBits()}, true
	default:
		if l.typ() != r.typ() {
			l, r = c.toDouble(l), c.toDouble(r)
		}
		return &vCompare{op: b.op, l: l, r: r, out: c.newVector(TypeLong), nulls: c.nullBits()}, true
	}
}

var vectorMath = map[string]func(float64) float64{
	"ceil": math.Ceil, "floor": math.Floor, "sqrt": math.Sqrt, "cbrt": math.Cbrt,
	"exp": math.Exp, "log": math.Log, "log10": math.Log10,
}

func (c *vcompiler) call(n *callNode) (vnode, bool) {
	if f, ok := vectorMath[n.name]; ok {
		x, ok := c.compile(n.args[0])
		if !ok {
			return nil, false
		}
		return &vMap{x: c.toDouble(x), f: f, out: c.newVector(TypeDouble), nulls: c.nullBits()}, true
	}
	switch n.name {
	case "abs":
		x, ok := c.compile(n.args[0])
		if !ok {
			return nil, false
		}
		if x.typ() == TypeLong {
			return &vMapLong{x: x, f: func(v int64) int64 {
				if v < 0 {
					return -v
				}
				return v
			}, out: c.newVector(TypeLong), nulls: c.nullBits()}, true
		}
		return &vMap{x: x, f: math.Abs, out: c.newVector(TypeDouble), nulls: c.nullBits()}, true
	case "isnull", "notnull":
		x, ok := c.compile(n.args[0])
		if !ok {
			return nil, false
		}
		return &vIsNull{x: x, not: n.name == "notnull", out: c.newVector(TypeLong)}, true
	case "cast":
		s, isNull, ok := literalString(n.args[1])
		if !ok || isNull {
			return nil, false
		}
		t, ok := ParseType(s)
		if !ok || !t.IsNumeric() {
			return nil, false
		}
		x, ok := c.compile(n.args[0])
		if !ok {
			return nil, false
		}
		if x.typ() == t {
			return x, true
		}
		return &vCast{x: x, out: c.newVector(t)}, true
	case "nvl":
		a, ok1 := c.compile(n.args[0])
		b, ok2 := c.compile(n.args[1])
		if !ok1 || !ok2 || a.typ() != b.typ() {
			return nil, false
		}
		return &vNvl{a: a, b: b, out: c.newVector(a.typ()), nulls: c.nullBits()}, true
	case "max", "min":
		l, ok1 := c.compile(n.args[0])
		r, ok2 := c.compile(n.args[1])
		if !ok1 || !ok2 {
			return nil, false
		}
		isMax := n.name == "max"
		if l.typ() == TypeLong && r.typ() == TypeLong {
			return &vMinMax{max: isMax, l: l, r: r, out: c.newVector(TypeLong), nulls: c.nullBits()}, true
		}
		return &vMinMax{max: isMax, l: c.toDouble(l), r: c.toDouble(r), out: c.newVector(TypeDouble), nulls: c.nullBits()}, true
	case "timestamp_floor", "timestamp_ceil":
		for _, a := range n.args[1:] {
			if !isConst(a) {
				return nil, false
			}
		}
		vals := make([]Value, len(n.args))
		for i := 1; i < len(n.args); i++ {
			vals[i], _ = constValue(n.args[i])
		}
		g, err := granularityArgs(vals)
		if err != nil {
			return nil, false
		}
		x, ok := c.compile(n.args[0])
		if !ok {
			return nil, false
		}
		if x.typ() != TypeLong {
			x = &vCast{x: x, out: c.newVector(TypeLong)}
		}
		r := timeRounder{g: g, ceil: n.name == "timestamp_ceil"}
		return &vMapLong{x: x, f: func(ms int64) int64 { return roundTime(r.g, ms, r.ceil) }, out: c.newVector(TypeLong), nulls: c.nullBits()}, true
	}
	return nil, false
}

// orNulls sets dst to a|b over the words covering n rows and reports whether
// any row is null; nil inputs mean "no nulls".
func orNulls(dst, a, b []uint64, n int) []uint64 {
	if a == nil && b == nil {
		return nil
	}
	words := (n + 63) / 64
	switch {
	case a == nil:
		copy(dst[:words], b[:words])
	case b == nil:
		copy(dst[:words], a[:words])
	default:
		for i := 0; i < words; i++ {
			dst[i] = a[i] | b[i]
		}
	}
	return dst
}

func isNullBit(bits []uint64, i int) bool {
	return bits != nil && bits[i>>6]&(1<<(uint(i)&63)) != 0
}

type vConst struct{ v *Vector }

func (n *vConst) typ() Type                                 { return n.v.Type }
func (n *vConst) eval(VectorBindings, int) (*Vector, error) { return n.v, nil }

type vColumn struct {
	name  string
	t     Type
	empty *Vector
}

func (n *vColumn) typ() Type { return n.t }

func (n *vColumn) eval(in VectorBindings, rows int) (*Vector, error) {
	v := in.Vector(n.name)
	if v == nil {
		return n.empty, nil
	}
	if v.Type != n.t {
		return nil, fmt.Errorf("column %q: vector type %s, expected %s", n.name, v.Type, n.t)
	}
	if (n.t == TypeLong && len(v.Longs) < rows) || (n.t == TypeDouble && len(v.Doubles) < rows) ||
		(v.Nulls != nil && len(v.Nulls) < (rows+63)/64) {
		return nil, fmt.Errorf("column %q: vector shorter than %d rows", n.name, rows)
	}
	return v, nil
}

type vCast struct {
	x   vnode
	out *Vector
}

func (n *vCast) typ() Type { return n.out.Type }

func (n *vCast) eval(in VectorBindings, rows int) (*Vector, error) {
	x, err := n.x.eval(in, rows)
	if err != nil {
		return nil, err
	}
	if n.out.Type == TypeDouble {
		for i := 0; i < rows; i++ {
			n.out.Doubles[i] = float64(x.Longs[i])
		}
	} else {
		for i := 0; i < rows; i++ {
			n.out.Longs[i] = javacompat.DoubleToLong(x.Doubles[i])
		}
	}
	n.out.Nulls = x.Nulls
	return n.out, nil
}

type vArith struct {
	op    opcode
	l, r  vnode
	out   *Vector
	nulls []uint64
}

func (n *vArith) typ() Type { return n.out.Type }

func (n *vArith) eval(in VectorBindings, rows int) (*Vector, error) {
	l, err := n.l.eval(in, rows)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(in, rows)
	if err != nil {
		return nil, err
	}
	nulls := orNulls(n.nulls, l.Nulls, r.Nulls, rows)
	n.out.Nulls = nulls
	if n.out.Type == TypeLong {
		a, b, o := l.Longs[:rows], r.Longs[:rows], n.out.Longs[:rows]
		switch n.op {
		case opAdd:
			for i := range o {
				o[i] = a[i] + b[i]
			}
		case opSub:
			for i := range o {
				o[i] = a[i] - b[i]
			}
		case opMul:
			for i := range o {
				o[i] = a[i] * b[i]
			}
		default:
			for i := range o {
				if isNullBit(nulls, i) {
					o[i] = 0
					continue
				}
				v, err := longArith(n.op, a[i], b[i])
				if err != nil {
					return nil, err
				}
				o[i] = v
			}
		}
		return n.out, nil
	}
	a, b, o := l.Doubles[:rows], r.Doubles[:rows], n.out.Doubles[:rows]
	switch n.op {
	case opAdd:
		for i := range o {
			o[i] = a[i] + b[i]
		}
	case opSub:
		for i := range o {
			o[i] = a[i] - b[i]
		}
	case opMul:
		for i := range o {
			o[i] = a[i] * b[i]
		}
	case opDiv:
		for i := range o {
			o[i] = a[i] / b[i]
		}
	default:
		for i := range o {
			o[i] = doubleArith(n.op, a[i], b[i])
		}
	}
	return n.out, nil
}

type vCompare struct {
	op    opcode
	l, r  vnode
	out   *Vector
	nulls []uint64
}

func (n *vCompare) typ() Type { return TypeLong }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (n *vCompare) eval(in VectorBindings, rows int) (*Vector, error) {
	l, err := n.l.eval(in, rows)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(in, rows)
	if err != nil {
		return nil, err
	}
	n.out.Nulls = orNulls(n.nulls, l.Nulls, r.Nulls, rows)
	o := n.out.Longs[:rows]
	if l.Type == TypeLong {
		a, b := l.Longs[:rows], r.Longs[:rows]
		switch n.op {
		case opLT:
			for i := range o {
				o[i] = b2i(a[i] < b[i])
			}
		case opLE:
			for i := range o {
				o[i] = b2i(a[i] <= b[i])
			}
		case opGT:
			for i := range o {
				o[i] = b2i(a[i] > b[i])
			}
		case opGE:
			for i := range o {
				o[i] = b2i(a[i] >= b[i])
			}
		case opEQ:
			for i := range o {
				o[i] = b2i(a[i] == b[i])
			}
		case opNE:
			for i := range o {
				o[i] = b2i(a[i] != b[i])
			}
		}
		return n.out, nil
	}
	a, b := l.Doubles[:rows], r.Doubles[:rows]
	for i := range o {
		o[i] = b2i(compareDoubles(n.op, a[i], b[i]))
	}
	return n.out, nil
}

// truth reads row i of a numeric vector as a boolean (> 0).
func truth(v *Vector, i int) bool {
	if v.Type == TypeLong {
		return v.Longs[i] > 0
	}
	return v.Doubles[i] > 0
}

type vUnary struct {
	not   bool
	x     vnode
	out   *Vector
	nulls []uint64
}

func (n *vUnary) typ() Type { return n.out.Type }

func (n *vUnary) eval(in VectorBindings, rows int) (*Vector, error) {
	x, err := n.x.eval(in, rows)
	if err != nil {
		return nil, err
	}
	n.out.Nulls = x.Nulls
	switch {
	case n.not:
		for i := 0; i < rows; i++ {
			n.out.Longs[i] = b2i(!truth(x, i))
		}
	case x.Type == TypeLong:
		for i := 0; i < rows; i++ {
			n.out.Longs[i] = -x.Longs[i]
		}
	default:
		for i := 0; i < rows; i++ {
			n.out.Doubles[i] = -x.Doubles[i]
		}
	}
	return n.out, nil
}

// vLogic is && / || with SQL three-valued logic.
type vLogic struct {
	and   bool
	l, r  vnode
	out   *Vector
	nulls []uint64
}

func (n *vLogic) typ() Type { return TypeLong }

func (n *vLogic) eval(in VectorBindings, rows int) (*Vector, error) {
	l, err := n.l.eval(in, rows)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(in, rows)
	if err != nil {
		return nil, err
	}
	words := (rows + 63) / 64
	clear(n.nulls[:words])
	anyNull := false
	for i := 0; i < rows; i++ {
		ln, rn := isNullBit(l.Nulls, i), isNullBit(r.Nulls, i)
		var lv, rv bool
		if !ln {
			lv = truth(l, i)
		}
		if !rn {
			rv = truth(r, i)
		}
		var res, null bool
		if n.and {
			switch {
			case !ln && !lv:
				res = false
			case ln:
				null = rn || rv
			case rn:
				null = true
			default:
				res = rv
			}
		} else {
			switch {
			case !ln && lv:
				res = true
			case ln:
				null = rn || !rv
				res = !null
			case rn:
				null = true
			default:
				res = rv
			}
		}
		if null {
			SetNull(n.nulls, i)
			anyNull = true
			n.out.Longs[i] = 0
			continue
		}
		n.out.Longs[i] = b2i(res)
	}
	n.out.Nulls = nil
	if anyNull {
		n.out.Nulls = n.nulls
	}
	return n.out, nil
}

type vMap struct {
	x     vnode
	f     func(float64) float64
	out   *Vector
	nulls []uint64
}

func (n *vMap) typ() Type { return TypeDouble }

func (n *vMap) eval(in VectorBindings, rows int) (*Vector, error) {
	x, err := n.x.eval(in, rows)
	if err != nil {
		return nil, err
	}
	for i := 0; i < rows; i++ {
		n.out.Doubles[i] = n.f(x.Doubles[i])
	}
	n.out.Nulls = x.Nulls
	return n.out, nil
}

type vMapLong struct {
	x     vnode
	f     func(int64) int64
	out   *Vector
	nulls []uint64
}

func (n *vMapLong) typ() Type { return TypeLong }

func (n *vMapLong) eval(in VectorBindings, rows int) (*Vector, error) {
	x, err := n.x.eval(in, rows)
	if err != nil {
		return nil, err
	}
	for i := 0; i < rows; i++ {
		if isNullBit(x.Nulls, i) {
			n.out.Longs[i] = 0
			continue
		}
		n.out.Longs[i] = n.f(x.Longs[i])
	}
	n.out.Nulls = x.Nulls
	return n.out, nil
}

type vIsNull struct {
	x   vnode
	not bool
	out *Vector
}

func (n *vIsNull) typ() Type { return TypeLong }

func (n *vIsNull) eval(in VectorBindings, rows int) (*Vector, error) {
	x, err := n.x.eval(in, rows)
	if err != nil {
		return nil, err
	}
	for i := 0; i < rows; i++ {
		n.out.Longs[i] = b2i(isNullBit(x.Nulls, i) != n.not)
	}
	return n.out, nil
}

type vNvl struct {
	a, b  vnode
	out   *Vector
	nulls []uint64
}

func (n *vNvl) typ() Type { return n.out.Type }

func (n *vNvl) eval(in VectorBindings, rows int) (*Vector, error) {
	a, err := n.a.eval(in, rows)
	if err != nil {
		return nil, err
	}
	if a.Nulls == nil {
		return a, nil
	}
	b, err := n.b.eval(in, rows)
	if err != nil {
		return nil, err
	}
	words := (rows + 63) / 64
	anyNull := false
	for w := 0; w < words; w++ {
		n.nulls[w] = a.Nulls[w]
		if b.Nulls != nil {
			n.nulls[w] &= b.Nulls[w]
		} else {
			n.nulls[w] = 0
		}
		anyNull = anyNull || n.nulls[w] != 0
	}
	for i := 0; i < rows; i++ {
		src := a
		if isNullBit(a.Nulls, i) {
			src = b
		}
		if n.out.Type == TypeLong {
			n.out.Longs[i] = src.Longs[i]
		} else {
			n.out.Doubles[i] = src.Doubles[i]
		}
	}
	n.out.Nulls = nil
	if anyNull {
		n.out.Nulls = n.nulls
	}
	return n.out, nil
}

type vMinMax struct {
	max   bool
	l, r  vnode
	out   *Vector
	nulls []uint64
}

func (n *vMinMax) typ() Type { return n.out.Type }

func (n *vMinMax) eval(in VectorBindings, rows int) (*Vector, error) {
	l, err := n.l.eval(in, rows)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(in, rows)
	if err != nil {
		return nil, err
	}
	n.out.Nulls = orNulls(n.nulls, l.Nulls, r.Nulls, rows)
	if n.out.Type == TypeLong {
		for i := 0; i < rows; i++ {
			if n.max {
				n.out.Longs[i] = max(l.Longs[i], r.Longs[i])
			} else {
				n.out.Longs[i] = min(l.Longs[i], r.Longs[i])
			}
		}
		return n.out, nil
	}
	for i := 0; i < rows; i++ {
		if n.max {
			n.out.Doubles[i] = math.Max(l.Doubles[i], r.Doubles[i])
		} else {
			n.out.Doubles[i] = math.Min(l.Doubles[i], r.Doubles[i])
		}
	}
	return n.out, nil
}
