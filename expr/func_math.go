package expr

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"strata/javacompat"
)

// univariate builds a one-argument math function with Druid's
// UnivariateMathFunction rules: null (or non-numeric) input gives null, only
// LONG and DOUBLE inputs are computed (numeric strings give null). A missing
// long implementation converts to double; a missing double implementation
// truncates to long after a range check.
func univariate(out Type, onLong func(int64) Value, onDouble func(float64) (Value, error)) *funcDef {
	var f func(v Value) (Value, error)
	f = func(v Value) (Value, error) {
		n := v.numeric()
		if !n.ok {
			return NullOf(resultOr(out, v.Type())), nil
		}
		switch v.typ {
		case TypeLong:
			if onLong != nil {
				return onLong(n.l), nil
			}
			return onDouble(float64(n.l))
		case TypeDouble:
			if onDouble != nil {
				return onDouble(n.d)
			}
			if n.d < math.MinInt64 || n.d > math.MaxInt64 {
				return Value{}, evalErrorf("Possible data truncation, param [%s] is out of LONG value range", javacompat.FormatDouble(n.d))
			}
			return onLong(javacompat.DoubleToLong(n.d)), nil
		}
		return NullOf(resultOr(out, v.Type())), nil
	}
	def := &funcDef{minArgs: 1, maxArgs: 1, build: unaryFn(f)}
	if out == TypeUnknown {
		def.outType = argType(0)
	} else {
		def.outType = fixedType(out)
	}
	return def
}

func resultOr(out, in Type) Type {
	if out != TypeUnknown {
		return out
	}
	if in.IsNumeric() {
		return in
	}
	return TypeDouble
}

func doubleFn(f func(float64) float64) *funcDef {
	return univariate(TypeDouble, nil, func(d float64) (Value, error) { return Double(f(d)), nil })
}

// bivariate builds a two-argument math function with Druid's
// BivariateMathFunction rules: a null argument gives null, two strings give
// null, two longs use the long implementation, otherwise doubles (a
// non-numeric string reads as 0.0 here, as in Druid).
func bivariate(outType func([]node, []Type) Type, onLong func(a, b int64) (Value, error), onDouble func(a, b float64) (Value, error)) *funcDef {
	f := func(x, y Value) (Value, error) {
		t := autoDetect(x, y)
		if x.IsNull() || y.IsNull() || t == TypeString {
			return NullOf(resultOr(outType(nil, []Type{x.Type(), y.Type()}), t)), nil
		}
		xn, yn := x.numeric(), y.numeric()
		if t == TypeLong {
			if onLong != nil {
				return onLong(xn.asLong(), yn.asLong())
			}
			return onDouble(float64(xn.asLong()), float64(yn.asLong()))
		}
		if onDouble != nil {
			return onDouble(xn.asDouble(), yn.asDouble())
		}
		return onLong(javacompat.DoubleToLong(xn.asDouble()), javacompat.DoubleToLong(yn.asDouble()))
	}
	return &funcDef{minArgs: 2, maxArgs: 2, build: binaryFn(f), outType: outType}
}

func doubleBivariate(f func(a, b float64) float64) *funcDef {
	return bivariate(fixedType(TypeDouble), nil, func(a, b float64) (Value, error) { return Double(f(a, b)), nil })
}

// bitwise is BivariateBitwiseMathFunction: strings give null, everything
// else is read as a long.
func bitwise(f func(a, b int64) int64) *funcDef {
	g := func(x, y Value) (Value, error) {
		if x.IsNull() || y.IsNull() || autoDetect(x, y) == TypeString {
			return NullOf(TypeLong), nil
		}
		return Long(f(x.numeric().asLong(), y.numeric().asLong())), nil
	}
	return &funcDef{minArgs: 2, maxArgs: 2, build: binaryFn(g), outType: fixedType(TypeLong)}
}

func mathOperatorType(_ []node, in []Type) Type { return functionType(in[0], in[1]) }

func init() {
	register([]string{"abs"}, univariate(TypeUnknown,
		func(l int64) Value {
			if l < 0 {
				return Long(-l)
			}
			return Long(l)
		},
		func(d float64) (Value, error) { return Double(math.Abs(d)), nil }))
	register([]string{"acos"}, doubleFn(math.Acos))
	register([]string{"asin"}, doubleFn(math.Asin))
	register([]string{"atan"}, doubleFn(math.Atan))
	register([]string{"cbrt"}, doubleFn(math.Cbrt))
	register([]string{"ceil"}, doubleFn(math.Ceil))
	register([]string{"cos"}, doubleFn(math.Cos))
	register([]string{"cosh"}, doubleFn(math.Cosh))
	register([]string{"cot"}, doubleFn(func(d float64) float64 { return math.Cos(d) / math.Sin(d) }))
	register([]string{"exp"}, doubleFn(math.Exp))
	register([]string{"expm1"}, doubleFn(math.Expm1))
	register([]string{"floor"}, doubleFn(math.Floor))
	register([]string{"log"}, doubleFn(math.Log))
	register([]string{"log10"}, doubleFn(math.Log10))
	register([]string{"log1p"}, doubleFn(math.Log1p))
	register([]string{"nextup"}, doubleFn(javaNextUp))
	register([]string{"rint"}, doubleFn(math.RoundToEven))
	register([]string{"signum"}, doubleFn(javaSignum))
	register([]string{"sin"}, doubleFn(math.Sin))
	register([]string{"sinh"}, doubleFn(math.Sinh))
	register([]string{"sqrt"}, doubleFn(math.Sqrt))
	register([]string{"tan"}, doubleFn(math.Tan))
	register([]string{"tanh"}, doubleFn(math.Tanh))
	register([]string{"todegrees"}, doubleFn(func(d float64) float64 { return d * 57.29577951308232 }))
	register([]string{"toradians"}, doubleFn(func(d float64) float64 { return d * 0.017453292519943295 }))
	register([]string{"ulp"}, doubleFn(javaUlp))
	register([]string{"getexponent"}, univariate(TypeLong, nil, func(d float64) (Value, error) {
		return Long(int64(javaGetExponent(d))), nil
	}))
	register([]string{"bitwisecomplement"}, univariate(TypeLong, func(l int64) Value { return Long(^l) }, nil))
	register([]string{"bitwiseconvertlongbitstodouble"}, univariate(TypeDouble,
		func(l int64) Value { return Double(math.Float64frombits(uint64(l))) }, nil))
	register([]string{"bitwiseconvertdoubletolongbits"}, univariate(TypeLong, nil, func(d float64) (Value, error) {
		if d != d {
			return Long(0x7ff8000000000000), nil // Double.doubleToLongBits canonical NaN
		}
		return Long(int64(math.Float64bits(d))), nil
	}))
	register([]string{"bitwiseand"}, bitwise(func(a, b int64) int64 { return a & b }))
	register([]string{"bitwiseor"}, bitwise(func(a, b int64) int64 { return a | b }))
	register([]string{"bitwisexor"}, bitwise(func(a, b int64) int64 { return a ^ b }))
	register([]string{"bitwiseshiftleft"}, bitwise(func(a, b int64) int64 { return a << uint(b&63) }))
	register([]string{"bitwiseshiftright"}, bitwise(func(a, b int64) int64 { return a >> uint(b&63) }))

	register([]string{"atan2"}, doubleBivariate(math.Atan2))
	register([]string{"copysign"}, doubleBivariate(math.Copysign))
	register([]string{"hypot"}, doubleBivariate(math.Hypot))
	register([]string{"remainder"}, doubleBivariate(math.Remainder))
	register([]string{"nextafter"}, doubleBivariate(javaNextAfter))
	register([]string{"pow"}, doubleBivariate(javaPow))
	register([]string{"max"}, bivariate(mathOperatorType,
		func(a, b int64) (Value, error) { return Long(max(a, b)), nil },
		func(a, b float64) (Value, error) { return Double(math.Max(a, b)), nil }))
	register([]string{"min"}, bivariate(mathOperatorType,
		func(a, b int64) (Value, error) { return Long(min(a, b)), nil },
		func(a, b float64) (Value, error) { return Double(math.Min(a, b)), nil }))
	register([]string{"div"}, bivariate(fixedType(TypeLong),
		func(a, b int64) (Value, error) {
			if b == 0 {
				return Value{}, errDivByZero
			}
			return Long(a / b), nil
		},
		func(a, b float64) (Value, error) { return Long(javacompat.DoubleToLong(a / b)), nil }))
	register([]string{"safe_divide"}, bivariate(mathOperatorType,
		func(a, b int64) (Value, error) {
			if b == 0 {
				if a != 0 {
					return NullOf(TypeLong), nil
				}
				return Long(0), nil
			}
			return Long(a / b), nil
		},
		func(a, b float64) (Value, error) {
			if b == 0 || b != b {
				if a != 0 {
					return NullOf(TypeDouble), nil
				}
				return Double(0), nil
			}
			return Double(a / b), nil
		}))
	register([]string{"scalb"}, &funcDef{minArgs: 2, maxArgs: 2, outType: fixedType(TypeDouble),
		build: binaryFn(func(x, y Value) (Value, error) {
			if x.IsNull() || y.IsNull() || autoDetect(x, y) == TypeString {
				return NullOf(TypeDouble), nil
			}
			return Double(math.Ldexp(x.numeric().asDouble(), y.asInt())), nil
		})})
	register([]string{"pi"}, &funcDef{minArgs: 0, maxArgs: 0, outType: fixedType(TypeDouble),
		build: simple(func(env, []node) (Value, error) { return Double(math.Pi), nil })})
	register([]string{"round"}, &funcDef{minArgs: 1, maxArgs: 2, outType: argType(0), build: optArgsFn(evalRound)})
	register([]string{"greatest"}, &funcDef{minArgs: 0, maxArgs: -1, outType: reduceType,
		build: variadicFn(func(vals []Value) (Value, error) { return reduce(vals, 1) })})
	register([]string{"least"}, &funcDef{minArgs: 0, maxArgs: -1, outType: reduceType,
		build: variadicFn(func(vals []Value) (Value, error) { return reduce(vals, -1) })})
}

func javaNextUp(d float64) float64 {
	if d != d || math.IsInf(d, 1) {
		return d
	}
	if d == 0 {
		return math.SmallestNonzeroFloat64
	}
	return math.Nextafter(d, math.Inf(1))
}

func javaNextAfter(start, dir float64) float64 {
	if start == dir && start == start {
		return dir
	}
	return math.Nextafter(start, dir)
}

func javaSignum(d float64) float64 {
	if d == 0 || d != d {
		return d
	}
	return math.Copysign(1, d)
}

func javaUlp(d float64) float64 {
	d = math.Abs(d)
	switch {
	case d != d:
		return d
	case math.IsInf(d, 0):
		return math.Inf(1)
	case d == math.MaxFloat64:
		return 0x1p971
	}
	return math.Nextafter(d, math.Inf(1)) - d
}

func javaGetExponent(d float64) int {
	return int((math.Float64bits(d)>>52)&0x7ff) - 1023
}

// evalRound is round(x[, scale]): BigDecimal HALF_UP rounding of the
// decimal printed by Double.toString (so round(2.675, 2) is 2.68).
func evalRound(vals []Value) (Value, error) {
	x := vals[0]
	if !x.numeric().ok {
		return NullOf(resultOr(TypeUnknown, x.Type())), nil
	}
	if x.typ != TypeLong && x.typ != TypeDouble {
		return Value{}, evalErrorf("round: first argument should be a LONG or DOUBLE but got %s instead", x.Type())
	}
	scale := 0
	if len(vals) > 1 {
		if vals[1].Type() != TypeLong || vals[1].IsNull() {
			return Value{}, evalErrorf("round: second argument should be a LONG but got %s instead", vals[1].Type())
		}
		scale = int(int32(vals[1].Long()))
	}
	if x.typ == TypeLong {
		return Long(roundLong(x.Long(), scale)), nil
	}
	return Double(roundDouble(x.Double(), scale)), nil
}

func roundLong(l int64, scale int) int64 {
	if scale >= 0 {
		return l
	}
	// HALF_UP to a multiple of 10^-scale; BigDecimal.longValue wraps.
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)
	v := big.NewInt(l)
	neg := v.Sign() < 0
	v.Abs(v)
	q, r := new(big.Int).QuoRem(v, p, new(big.Int))
	if r.Lsh(r, 1).Cmp(p) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	q.Mul(q, p)
	if neg {
		q.Neg(q)
	}
	// low 64 bits, two's complement
	mod := new(big.Int).Lsh(big.NewInt(1), 64)
	q.Mod(q, mod)
	return int64(q.Uint64())
}

func roundDouble(d float64, scale int) float64 {
	switch {
	case d != d:
		return 0
	case math.IsInf(d, 1):
		d = math.MaxFloat64
	case math.IsInf(d, -1):
		d = -math.MaxFloat64
	}
	s := javacompat.FormatDouble(d)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	// decimal digits m and exponent q with value m * 10^q
	mant, exp := s, 0
	if i := strings.IndexByte(s, 'E'); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	q := exp - len(frac)
	if digits == "" || q >= -scale {
		if digits == "" {
			return 0
		}
		return d
	}
	drop := -scale - q
	var m uint64
	for i := 0; i < len(digits); i++ {
		m = m*10 + uint64(digits[i]-'0')
	}
	var r uint64
	if drop < 19 { // otherwise m < 10^17 is below half a unit and rounds to 0
		p := uint64(1)
		for i := 0; i < drop; i++ {
			p *= 10
		}
		r = m / p
		if (m%p)*2 >= p {
			r++
		}
	}
	if r == 0 {
		return 0
	}
	out, _ := strconv.ParseFloat(strconv.FormatUint(r, 10)+"e"+strconv.Itoa(-scale), 64)
	if neg {
		out = -out
	}
	return out
}

// reduceType is the type of greatest/least: LONG merged with every argument
// by the function rule.
func reduceType(_ []node, in []Type) Type {
	t := TypeLong
	for _, a := range in {
		if a == TypeUnknown {
			return TypeUnknown
		}
		t = functionType(t, a)
	}
	return t
}

// reduce is greatest (dir 1) or least (dir -1): nulls are skipped (all null
// gives null) and the comparison type is LONG, DOUBLE or STRING depending
// on every argument's type, null ones included, as in Druid.
func reduce(vals []Value, dir int) (Value, error) {
	if len(vals) == 0 {
		return Null, nil
	}
	t := TypeLong
	var best Value
	found := false
	for _, v := range vals {
		if v.Type().IsArray() {
			return Value{}, evalErrorf("does not accept %s types", v.Type())
		}
		t = functionType(t, v.Type())
	}
	for _, v := range vals {
		if v.IsNull() {
			continue
		}
		c := castScalarElem(v, t)
		if !found {
			best, found = c, true
			continue
		}
		cmp := 0
		switch t {
		case TypeLong:
			a, b := c.Long(), best.Long()
			if a > b {
				cmp = 1
			} else if a < b {
				cmp = -1
			}
		case TypeDouble:
			// Math.max/min semantics: NaN wins.
			a, b := c.Double(), best.Double()
			var r float64
			if dir > 0 {
				r = math.Max(b, a)
			} else {
				r = math.Min(b, a)
			}
			best = Double(r)
			continue
		default:
			cmp = compareJavaStrings(c.str, best.str)
		}
		if cmp*dir > 0 {
			best = c
		}
	}
	if !found {
		return NullOf(t), nil
	}
	return best, nil
}
