package expr

import (
	"fmt"
	"sort"
	"strings"
)

// asArray is Druid's ExprEval.asArray: arrays as they are, a non-null scalar
// as a one-element array, null as nil (ok false).
func asArray(v Value) ([]Value, Type, bool) {
	if v.IsNull() {
		return nil, v.Type().ArrayOf(), false
	}
	if v.typ.IsArray() {
		return v.elems(), v.typ, true
	}
	return []Value{v}, v.typ.ArrayOf(), true
}

func arrayArgType(i int) func([]node, []Type) Type {
	return func(_ []node, in []Type) Type {
		if i < len(in) && in[i] != TypeUnknown {
			return in[i].ArrayOf()
		}
		return TypeUnknown
	}
}

func elemArgType(i int) func([]node, []Type) Type {
	return func(_ []node, in []Type) Type {
		if i < len(in) {
			return in[i].Elem()
		}
		return TypeUnknown
	}
}

func init() {
	long := fixedType(TypeLong)
	register([]string{"array"}, &funcDef{minArgs: 1, maxArgs: -1, build: variadicFn(evalArrayConstructor),
		outType: func(_ []node, in []Type) Type {
			if len(in) == 0 || in[0] == TypeUnknown || in[0].IsArray() {
				return TypeUnknown
			}
			return in[0].ArrayOf()
		}})
	register([]string{"array_length"}, &funcDef{minArgs: 1, maxArgs: 1, outType: long, build: unaryFn(func(v Value) (Value, error) {
		arr, _, ok := asArray(v)
		if !ok {
			return NullOf(TypeLong), nil
		}
		return Long(int64(len(arr))), nil
	})})
	register([]string{"array_offset"}, &funcDef{minArgs: 2, maxArgs: 2, outType: elemArgType(0), build: binaryFn(func(a, i Value) (Value, error) {
		return arrayAt(a, i.asInt())
	})})
	register([]string{"array_ordinal"}, &funcDef{minArgs: 2, maxArgs: 2, outType: elemArgType(0), build: binaryFn(func(a, i Value) (Value, error) {
		return arrayAt(a, i.asInt()-1)
	})})
	register([]string{"array_contains"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: binaryFn(func(a, b Value) (Value, error) {
		return arraysMatch(a, b, true)
	})})
	register([]string{"array_overlap"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: binaryFn(func(a, b Value) (Value, error) {
		return arraysMatch(a, b, false)
	})})
	register([]string{"scalar_in_array"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: binaryFn(func(x, a Value) (Value, error) {
		if x.IsNull() {
			return NullOf(TypeLong), nil
		}
		if x.Type().IsArray() {
			return Value{}, evalErrorf("scalar_in_array: first argument must be a scalar but got %s", x.Type())
		}
		arr, t, ok := asArray(a)
		if !ok {
			return NullOf(TypeLong), nil
		}
		return Bool(indexOfScalar(arr, t, x) >= 0), nil
	})})
	register([]string{"array_offset_of"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: binaryFn(func(a, x Value) (Value, error) {
		return arrayIndexOf(a, x, 0)
	})})
	register([]string{"array_ordinal_of"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: binaryFn(func(a, x Value) (Value, error) {
		return arrayIndexOf(a, x, 1)
	})})
	register([]string{"array_append"}, &funcDef{minArgs: 2, maxArgs: 2, outType: arrayArgType(0), build: binaryFn(func(a, x Value) (Value, error) {
		return arrayAdd(a, x, false, false)
	})})
	register([]string{"array_prepend"}, &funcDef{minArgs: 2, maxArgs: 2, outType: arrayArgType(1), build: binaryFn(func(x, a Value) (Value, error) {
		return arrayAdd(a, x, true, false)
	})})
	register([]string{"array_set_add"}, &funcDef{minArgs: 2, maxArgs: 2, outType: arrayArgType(0), build: binaryFn(func(a, x Value) (Value, error) {
		return arrayAdd(a, x, false, true)
	})})
	register([]string{"array_concat"}, &funcDef{minArgs: 2, maxArgs: 2, outType: arrayArgType(0), build: binaryFn(func(a, b Value) (Value, error) {
		return arrayMerge(a, b, false)
	})})
	register([]string{"array_set_add_all"}, &funcDef{minArgs: 2, maxArgs: 2, outType: arrayArgType(0), build: binaryFn(func(a, b Value) (Value, error) {
		return arrayMerge(a, b, true)
	})})
	register([]string{"array_slice"}, &funcDef{minArgs: 2, maxArgs: 3, outType: arrayArgType(0), build: optArgsFn(evalArraySlice)})
	register([]string{"array_to_string"}, &funcDef{minArgs: 2, maxArgs: 2, outType: fixedType(TypeString), build: binaryFn(evalArrayToString)})
	register([]string{"string_to_array"}, &funcDef{minArgs: 2, maxArgs: 2, outType: fixedType(TypeStringArray), build: buildStringToArray})
	register([]string{"mv_to_array", "array_to_mv"}, &funcDef{minArgs: 1, maxArgs: 1, outType: fixedType(TypeStringArray),
		build: func(c *buildCtx, args []node) (evalFunc, error) {
			if id, ok := args[0].(*identNode); !ok || id.slot >= 0 {
				return nil, fmt.Errorf("argument should be an identifier expression; use array() instead")
			}
			return unaryFn(func(v Value) (Value, error) { return v.Cast(TypeStringArray) })(c, args)
		}})
}

// evalArrayConstructor is array(a, b, ...): the first argument's type is the
// element type; other arguments are cast to it.
func evalArrayConstructor(vals []Value) (Value, error) {
	et := vals[0].Type()
	if et.IsArray() {
		return Value{}, evalErrorf("array: nested arrays are not supported")
	}
	out := make([]Value, len(vals))
	for i, v := range vals {
		if et.IsNumeric() && !v.numeric().ok {
			out[i] = NullOf(et)
			continue
		}
		out[i] = castScalarElem(v, et)
	}
	return Value{typ: et.ArrayOf(), arr: &out}, nil
}

func arrayAt(a Value, pos int) (Value, error) {
	arr, t, ok := asArray(a)
	if !ok || pos < 0 || pos >= len(arr) {
		return NullOf(t.Elem()), nil
	}
	return arr[pos], nil
}

// arraysMatch is array_contains (all of b in a) or array_overlap (any of b
// in a); b is cast to a's array type first.
func arraysMatch(a, b Value, all bool) (Value, error) {
	arr, t, ok := asArray(a)
	if !ok {
		return NullOf(TypeLong), nil
	}
	other, _, ok := asArray(b)
	if !ok {
		return NullOf(TypeLong), nil
	}
	for _, x := range other {
		found := indexOfScalar(arr, t, x) >= 0
		if all && !found {
			return Bool(false), nil
		}
		if !all && found {
			return Bool(true), nil
		}
	}
	return Bool(all), nil
}

// indexOfScalar finds x in arr (of array type t) after casting x to the
// element type; a cast that changes the value (1.5 to LONG) matches nothing.
func indexOfScalar(arr []Value, t Type, x Value) int {
	et := t.Elem()
	c := castScalarElem(x, et)
	if !x.IsNull() && c.IsNull() {
		return -1
	}
	if et == TypeLong && x.Type() == TypeDouble && float64(c.Long()) != x.Double() {
		return -1
	}
	for i, e := range arr {
		if valuesEqual(e, c) {
			return i
		}
	}
	return -1
}

func arrayIndexOf(a, x Value, base int) (Value, error) {
	arr, t, ok := asArray(a)
	if !ok {
		return NullOf(TypeLong), nil
	}
	if x.Type().IsArray() {
		return Value{}, evalErrorf("second argument must be a scalar type but got %s instead", x.Type())
	}
	i := indexOfScalar(arr, t, x)
	if i < 0 {
		return NullOf(TypeLong), nil
	}
	return Long(int64(i + base)), nil
}

func arrayAdd(a, x Value, prepend, set bool) (Value, error) {
	arr, t, ok := asArray(a)
	if !ok {
		return NullOf(t), nil
	}
	c := castScalarElem(x, t.Elem())
	out := make([]Value, 0, len(arr)+1)
	if prepend {
		out = append(out, c)
	}
	out = append(out, arr...)
	if !prepend {
		out = append(out, c)
	}
	if set {
		out = sortedSet(out)
	}
	return Value{typ: t, arr: &out}, nil
}

func arrayMerge(a, b Value, set bool) (Value, error) {
	arr, t, ok := asArray(a)
	if !ok {
		return NullOf(t), nil
	}
	if b.IsNull() {
		return NullOf(t), nil
	}
	bc, err := b.Cast(t)
	if err != nil {
		return Value{}, err
	}
	out := make([]Value, 0, len(arr)+len(bc.elems()))
	out = append(append(out, arr...), bc.elems()...)
	if set {
		out = sortedSet(out)
	}
	return Value{typ: t, arr: &out}, nil
}

// sortedSet sorts (nulls first) and removes duplicates, like Druid's TreeSet.
func sortedSet(vs []Value) []Value {
	sort.SliceStable(vs, func(i, j int) bool { return compareValues(vs[i], vs[j]) < 0 })
	out := vs[:0]
	for i, v := range vs {
		if i > 0 && compareValues(v, out[len(out)-1]) == 0 {
			continue
		}
		out = append(out, v)
	}
	return out
}

// evalArraySlice is array_slice(arr, start[, end]); an end past the array
// pads with nulls (Arrays.copyOfRange).
func evalArraySlice(vals []Value) (Value, error) {
	arr, t, ok := asArray(vals[0])
	if !ok {
		return NullOf(t), nil
	}
	start := vals[1].asInt()
	end := len(arr)
	if len(vals) > 2 {
		end = vals[2].asInt()
	}
	if start < 0 || start > len(arr) || start > end {
		return NullOf(t), nil
	}
	if end-start > maxArrayResult {
		return Value{}, evalErrorf("array_slice: result too large")
	}
	out := make([]Value, end-start)
	for i := range out {
		if start+i < len(arr) {
			out[i] = arr[start+i]
		} else {
			out[i] = NullOf(t.Elem())
		}
	}
	return Value{typ: t, arr: &out}, nil
}

func evalArrayToString(a, sep Value) (Value, error) {
	arr, _, ok := asArray(a)
	if !ok || (len(arr) == 1 && arr[0].IsNull()) {
		return Null, nil
	}
	join, _ := sep.AsString()
	var sb strings.Builder
	for i, e := range arr {
		if i > 0 {
			sb.WriteString(join)
		}
		sb.WriteString(javaToString(e))
	}
	return String(sb.String()), nil
}

func buildStringToArray(_ *buildCtx, args []node) (evalFunc, error) {
	cache := &regexCache{}
	if s, isNull, ok := literalString(args[1]); ok && !isNull {
		if _, err := cache.get(s); err != nil {
			return nil, err
		}
	}
	return binaryFn(func(v, d Value) (Value, error) {
		s, ok := v.AsString()
		if !ok {
			return NullOf(TypeStringArray), nil
		}
		delim, _ := d.AsString()
		re, err := cache.get(delim)
		if err != nil {
			return Value{}, evalErrorf("string_to_array: %v", err)
		}
		return StringArray(javaSplit(re, s)...), nil
	})(nil, args)
}

// --- apply functions (lambdas) ------------------------------------------------

type applyDef struct {
	build func(l *lambdaNode, args []node) (evalFunc, error)
}

var applyFuncs = map[string]*applyDef{}

func init() {
	applyFuncs["map"] = &applyDef{build: buildMap}
	applyFuncs["cartesian_map"] = &applyDef{build: buildCartesianMap}
	applyFuncs["filter"] = &applyDef{build: buildFilter}
	applyFuncs["fold"] = &applyDef{build: buildFold}
	applyFuncs["cartesian_fold"] = &applyDef{build: buildCartesianFold}
	applyFuncs["any"] = &applyDef{build: buildMatch(true)}
	applyFuncs["all"] = &applyDef{build: buildMatch(false)}
}

func checkLambda(l *lambdaNode, args []node, nparams, nargs int) error {
	if len(args) != nargs {
		return fmt.Errorf("needs %d argument(s) after the lambda, got %d", nargs, len(args))
	}
	if len(l.params) != nparams {
		return fmt.Errorf("lambda needs %d argument(s), got %d", nparams, len(l.params))
	}
	return nil
}

// mapResults builds the output array of map/cartesian_map: the element type
// is the least restrictive type of the non-null results (LONG if none).
func mapResults(results []Value) Value {
	et := TypeUnknown
	for _, r := range results {
		if r.IsNull() {
			continue
		}
		t := r.Type()
		if t.IsArray() {
			t = TypeString
		}
		if et == TypeUnknown {
			et = t
		} else {
			et = leastRestrictive(et, t)
		}
	}
	if et == TypeUnknown {
		et = TypeLong
	}
	for i, r := range results {
		results[i] = castScalarElem(r, et)
	}
	return Value{typ: et.ArrayOf(), arr: &results}
}

func buildMap(l *lambdaNode, args []node) (evalFunc, error) {
	if err := checkLambda(l, args, 1, 1); err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		a, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		arr, _, ok := asArray(a)
		if !ok {
			return Null, nil
		}
		if len(arr) == 0 {
			return a, nil
		}
		out := make([]Value, len(arr))
		for i, x := range arr {
			if out[i], err = l.call(e, x); err != nil {
				return Value{}, err
			}
		}
		return mapResults(out), nil
	}, nil
}

// cartesian evaluates the array arguments; null if any is null, empty if
// any is empty.
func cartesian(e env, args []node) (lists [][]Value, isNull, isEmpty bool, err error) {
	for _, a := range args {
		v, err := a.eval(e)
		if err != nil {
			return nil, false, false, err
		}
		arr, _, ok := asArray(v)
		if !ok {
			isNull = true
			continue
		}
		if len(arr) == 0 {
			isEmpty = true
		}
		lists = append(lists, arr)
	}
	return lists, isNull, isEmpty, nil
}

// forEachProduct calls f with every combination, the first list varying slowest.
func forEachProduct(lists [][]Value, f func([]Value) error) error {
	total := 1
	for _, l := range lists {
		total *= len(l)
		if total > maxArrayResult {
			return evalErrorf("cartesian product too large")
		}
	}
	combo := make([]Value, len(lists))
	for n := 0; n < total; n++ {
		rem := n
		for i := len(lists) - 1; i >= 0; i-- {
			combo[i] = lists[i][rem%len(lists[i])]
			rem /= len(lists[i])
		}
		if err := f(combo); err != nil {
			return err
		}
	}
	return nil
}

func buildCartesianMap(l *lambdaNode, args []node) (evalFunc, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("needs at least one array")
	}
	if err := checkLambda(l, args, len(args), len(args)); err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		lists, isNull, isEmpty, err := cartesian(e, args)
		switch {
		case err != nil:
			return Value{}, err
		case isNull:
			return Null, nil
		case isEmpty:
			return StringArray(), nil
		}
		var out []Value
		err = forEachProduct(lists, func(combo []Value) error {
			v, err := l.call(e, combo...)
			out = append(out, v)
			return err
		})
		if err != nil {
			return Value{}, err
		}
		return mapResults(out), nil
	}, nil
}

func buildFilter(l *lambdaNode, args []node) (evalFunc, error) {
	if err := checkLambda(l, args, 1, 1); err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		a, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		arr, t, ok := asArray(a)
		if !ok {
			return NullOf(t), nil
		}
		var out []Value
		for _, x := range arr {
			keep, err := l.call(e, x)
			if err != nil {
				return Value{}, err
			}
			if keep.AsBool() {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			return NullOf(t), nil
		}
		return Value{typ: t, arr: &out}, nil
	}, nil
}

// foldWith runs the accumulator through the lambda; the accumulator keeps
// the type of its initial value, as in Druid.
func foldWith(e env, l *lambdaNode, acc Value, each func(func(elems []Value) error) error) (Value, error) {
	accType := acc.Type()
	args := make([]Value, len(l.params))
	err := each(func(elems []Value) error {
		copy(args, elems)
		a, err := acc.Cast(accType)
		if err != nil {
			return err
		}
		args[len(args)-1] = a
		acc, err = l.call(e, args...)
		return err
	})
	if err != nil {
		return Value{}, err
	}
	return acc.Cast(accType)
}

func buildFold(l *lambdaNode, args []node) (evalFunc, error) {
	if err := checkLambda(l, args, 2, 2); err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		a, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		acc, err := args[1].eval(e)
		if err != nil {
			return Value{}, err
		}
		arr, _, ok := asArray(a)
		if !ok {
			return Null, nil
		}
		return foldWith(e, l, acc, func(f func([]Value) error) error {
			for _, x := range arr {
				if err := f([]Value{x}); err != nil {
					return err
				}
			}
			return nil
		})
	}, nil
}

func buildCartesianFold(l *lambdaNode, args []node) (evalFunc, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("needs at least one array and an accumulator")
	}
	if err := checkLambda(l, args, len(args), len(args)); err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		lists, isNull, isEmpty, err := cartesian(e, args[:len(args)-1])
		switch {
		case err != nil:
			return Value{}, err
		case isNull:
			return Null, nil
		case isEmpty:
			return StringArray(), nil
		}
		acc, err := args[len(args)-1].eval(e)
		if err != nil {
			return Value{}, err
		}
		return foldWith(e, l, acc, func(f func([]Value) error) error { return forEachProduct(lists, f) })
	}, nil
}

// buildMatch is any (true) or all (false); a null array gives 0.
func buildMatch(anyMatch bool) func(l *lambdaNode, args []node) (evalFunc, error) {
	return func(l *lambdaNode, args []node) (evalFunc, error) {
		if err := checkLambda(l, args, 1, 1); err != nil {
			return nil, err
		}
		return func(e env, args []node) (Value, error) {
			a, err := args[0].eval(e)
			if err != nil {
				return Value{}, err
			}
			arr, _, ok := asArray(a)
			if !ok {
				return Bool(false), nil
			}
			for _, x := range arr {
				r, err := l.call(e, x)
				if err != nil {
					return Value{}, err
				}
				if r.AsBool() == anyMatch {
					return Bool(anyMatch), nil
				}
			}
			return Bool(!anyMatch), nil
		}, nil
	}
}
