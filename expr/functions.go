package expr

import (
	"errors"
	"fmt"
)

// funcDef describes a built-in function.
type funcDef struct {
	minArgs, maxArgs int // maxArgs < 0: unlimited
	// build validates the (already compiled) arguments and returns the
	// evaluator; it is where literal-only arguments are checked and
	// precomputed (patterns, periods, time zones).
	build func(c *buildCtx, args []node) (evalFunc, error)
	// outType infers the result type from the argument types (TypeUnknown
	// when they are not known); nil means unknown.
	outType func(args []node, in []Type) Type
	// volatile functions are never constant-folded.
	volatile bool
}

type buildCtx struct {
	name string
	opts *Options
}

// functions is the registry of built-in functions, keyed by lower-case name.
var functions = map[string]*funcDef{}

func register(names []string, def *funcDef) {
	for _, n := range names {
		functions[n] = def
	}
}

// --- builders for the common shapes ---------------------------------------

// simple wraps an evaluator that needs no compile-time preparation.
func simple(f evalFunc) func(*buildCtx, []node) (evalFunc, error) {
	return func(*buildCtx, []node) (evalFunc, error) { return f, nil }
}

func unaryFn(f func(Value) (Value, error)) func(*buildCtx, []node) (evalFunc, error) {
	return simple(func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		return f(v)
	})
}

func binaryFn(f func(a, b Value) (Value, error)) func(*buildCtx, []node) (evalFunc, error) {
	return simple(func(e env, args []node) (Value, error) {
		a, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		b, err := args[1].eval(e)
		if err != nil {
			return Value{}, err
		}
		return f(a, b)
	})
}

// variadicFn evaluates every argument into a slice.
func variadicFn(f func([]Value) (Value, error)) func(*buildCtx, []node) (evalFunc, error) {
	return simple(func(e env, args []node) (Value, error) {
		vals := make([]Value, len(args))
		if err := evalArgs(e, args, vals); err != nil {
			return Value{}, err
		}
		return f(vals)
	})
}

// optArgsFn evaluates every argument; for functions with optional arguments
// of at most 4 parameters (avoids allocating for the common case).
func optArgsFn(f func(vals []Value) (Value, error)) func(*buildCtx, []node) (evalFunc, error) {
	return simple(func(e env, args []node) (Value, error) {
		var buf [4]Value
		vals := buf[:len(args)]
		if err := evalArgs(e, args, vals); err != nil {
			return Value{}, err
		}
		return f(vals)
	})
}

// --- type rules -------------------------------------------------------------

func fixedType(t Type) func([]node, []Type) Type {
	return func([]node, []Type) Type { return t }
}

func argType(i int) func([]node, []Type) Type {
	return func(_ []node, in []Type) Type {
		if i < len(in) {
			return in[i]
		}
		return TypeUnknown
	}
}

// operatorType is ExpressionTypeConversion.operator: strings stay strings,
// longs stay longs, everything else is a double.
func operatorType(a, b Type) Type {
	switch {
	case a == TypeUnknown:
		return b
	case b == TypeUnknown:
		return a
	case a.IsArray() || b.IsArray():
		if a == b {
			return a
		}
		return TypeUnknown
	case a == TypeString && b == TypeString:
		return TypeString
	case a == TypeLong && b == TypeLong:
		return TypeLong
	}
	return TypeDouble
}

// functionType is ExpressionTypeConversion.function: any string makes a string.
func functionType(a, b Type) Type {
	switch {
	case a == TypeUnknown:
		return b
	case b == TypeUnknown:
		return a
	case a.IsArray() || b.IsArray():
		if a == b {
			return a
		}
		return TypeUnknown
	case a == TypeString || b == TypeString:
		return TypeString
	case a == TypeLong && b == TypeLong:
		return TypeLong
	}
	return TypeDouble
}

// conditionalType merges the types of the given argument positions.
func conditionalType(pos func(n int) []int) func([]node, []Type) Type {
	return func(_ []node, in []Type) Type {
		t := TypeUnknown
		for _, i := range pos(len(in)) {
			t = functionType(t, in[i])
		}
		return t
	}
}

// --- literal helpers --------------------------------------------------------

var errNotLiteral = errors.New("argument must be a literal")

// literalString returns a constant string argument; isNull reports a null
// literal. ok is false for non-constant arguments.
func literalString(n node) (s string, isNull bool, ok bool) {
	v, ok := constValue(n)
	if !ok {
		return "", false, false
	}
	if v.IsNull() {
		return "", true, true
	}
	s, _ = v.AsString()
	return s, false, true
}

func requireStringLiteral(n node, what string) (string, error) {
	v, ok := constValue(n)
	if !ok || v.IsNull() || v.Type() != TypeString {
		return "", fmt.Errorf("%s must be a STRING literal", what)
	}
	return v.str, nil
}

// --- general functions ------------------------------------------------------

func init() {
	register([]string{"cast"}, &funcDef{minArgs: 2, maxArgs: 2, build: buildCast,
		outType: func(args []node, _ []Type) Type {
			if s, isNull, ok := literalString(args[1]); ok && !isNull {
				t, _ := ParseType(s)
				return t
			}
			return TypeUnknown
		}})
	register([]string{"if"}, &funcDef{minArgs: 3, maxArgs: 3, build: simple(evalIf),
		outType: conditionalType(func(int) []int { return []int{1, 2} })})
	register([]string{"nvl"}, &funcDef{minArgs: 2, maxArgs: 2, build: simple(evalNvl),
		outType: conditionalType(func(int) []int { return []int{0, 1} })})
	register([]string{"coalesce"}, &funcDef{minArgs: 1, maxArgs: -1, build: simple(evalCoalesce),
		outType: conditionalType(func(n int) []int { return seq(0, n, 1) })})
	register([]string{"case_searched"}, &funcDef{minArgs: 2, maxArgs: -1, build: simple(evalCaseSearched),
		outType: conditionalType(func(n int) []int { return append(seq(1, n, 2), n-1) })})
	register([]string{"case_simple"}, &funcDef{minArgs: 3, maxArgs: -1, build: simple(evalCaseSimple),
		outType: conditionalType(func(n int) []int { return append(seq(2, n, 2), n-1) })})
	register([]string{"isnull"}, &funcDef{minArgs: 1, maxArgs: 1, outType: fixedType(TypeLong),
		build: unaryFn(func(v Value) (Value, error) { return Bool(v.IsNull()), nil })})
	register([]string{"notnull"}, &funcDef{minArgs: 1, maxArgs: 1, outType: fixedType(TypeLong),
		build: unaryFn(func(v Value) (Value, error) { return Bool(!v.IsNull()), nil })})
}

func seq(from, to, step int) []int {
	var out []int
	for i := from; i < to; i += step {
		out = append(out, i)
	}
	return out
}

func buildCast(_ *buildCtx, args []node) (evalFunc, error) {
	castTo := func(v, t Value) (Value, error) {
		if v.IsNull() {
			if s, ok := t.AsString(); ok {
				if ty, ok := ParseType(s); ok {
					return NullOf(ty), nil
				}
			}
			return Null, nil
		}
		s, _ := t.AsString()
		ty, ok := ParseType(s)
		if !ok {
			return Value{}, evalErrorf("cast: invalid type [%s]", s)
		}
		return v.Cast(ty)
	}
	if s, isNull, ok := literalString(args[1]); ok {
		if isNull {
			return nil, fmt.Errorf("invalid type [null]")
		}
		ty, ok := ParseType(s)
		if !ok {
			return nil, fmt.Errorf("invalid type [%s]", s)
		}
		return func(e env, args []node) (Value, error) {
			v, err := args[0].eval(e)
			if err != nil {
				return Value{}, err
			}
			if v.IsNull() {
				return NullOf(ty), nil
			}
			return v.Cast(ty)
		}, nil
	}
	return binaryFn(castTo)(nil, args)
}

func evalIf(e env, args []node) (Value, error) {
	c, err := args[0].eval(e)
	if err != nil {
		return Value{}, err
	}
	if c.AsBool() {
		return args[1].eval(e)
	}
	return args[2].eval(e)
}

func evalNvl(e env, args []node) (Value, error) {
	v, err := args[0].eval(e)
	if err != nil || !v.IsNull() {
		return v, err
	}
	return args[1].eval(e)
}

func evalCoalesce(e env, args []node) (Value, error) {
	var v Value
	for _, a := range args {
		var err error
		v, err = a.eval(e)
		if err != nil || !v.IsNull() {
			return v, err
		}
	}
	return v, nil
}

func evalCaseSearched(e env, args []node) (Value, error) {
	for i := 0; i < len(args); i += 2 {
		if i == len(args)-1 {
			return args[i].eval(e)
		}
		c, err := args[i].eval(e)
		if err != nil {
			return Value{}, err
		}
		if c.AsBool() {
			return args[i+1].eval(e)
		}
	}
	return Null, nil
}

func evalCaseSimple(e env, args []node) (Value, error) {
	x, err := args[0].eval(e)
	if err != nil {
		return Value{}, err
	}
	for i := 1; i < len(args); i += 2 {
		if i == len(args)-1 {
			return args[i].eval(e)
		}
		w, err := args[i].eval(e)
		if err != nil {
			return Value{}, err
		}
		eq, err := evalCompare(opEQ, x, w)
		if err != nil {
			return Value{}, err
		}
		if eq.AsBool() {
			return args[i+1].eval(e)
		}
	}
	return Null, nil
}
