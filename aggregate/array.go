package aggregate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"strata/expr"
	"strata/javacompat"
)

// KindArray is the value kind of the array aggregators Druid SQL plans
// ARRAY_AGG and STRING_AGG onto (the native "expression" aggregator with an
// array_append or array_set_add fold): each group's state is an array.
const KindArray = "ARRAY"

// Operations of KindArray: every input value appended (nulls included), or
// the distinct values kept sorted (nulls first), as Druid's array_append and
// array_set_add folds do.
const (
	OpArrayAppend = "arrayAppend"
	OpArraySet    = "arraySet"
)

// Element types of an array state, as Druid's expression types name them.
const (
	ElemLong   = "LONG"
	ElemDouble = "DOUBLE"
	ElemString = "STRING"
)

// DefaultMaxSizeBytes is Druid's default maxSizeBytes of the expression
// aggregator (and of ARRAY_AGG and STRING_AGG).
const DefaultMaxSizeBytes = 1024

// SizeError is an array state grown past its maxSizeBytes: Druid fails the
// query rather than cut the array.
type SizeError struct {
	Type      string
	Size, Max int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("Unable to serialize [%s], size [%d] is larger than max [%d]", e.Type, e.Size, e.Max)
}

// maxSize is the largest serialized size an array state may reach.
func (s *Spec) maxSize() int {
	if s != nil && s.MaxSizeBytes > 0 {
		return s.MaxSizeBytes
	}
	return DefaultMaxSizeBytes
}

// arrayType is the Druid type name of the state's arrays.
func (s *State) arrayType() string {
	t := s.Elem
	if t == "" {
		t = ElemString
	}
	return "ARRAY<" + t + ">"
}

// elemSize is an element's share of the serialized array, as Druid's
// ExprEval serialization counts it: a null byte and 8 bytes for numbers, a
// length and the UTF-8 bytes for strings.
func elemSize(v any) int {
	switch v := v.(type) {
	case string:
		return 4 + len(v)
	case nil:
		return 4
	}
	return 9
}

// arraySize is the serialized size of an array: a type byte, a length,
// then the elements.
func arraySize(a []any) int {
	n := 5
	for _, v := range a {
		n += elemSize(v)
	}
	return n
}

// elem converts an input value to the state's element type; the first
// value fixes the type of a state created without one.
func (s *State) elem(v any) any {
	if v == nil {
		return nil
	}
	if s.Elem == "" {
		switch v.(type) {
		case int64:
			s.Elem = ElemLong
		case float64:
			s.Elem = ElemDouble
		default:
			s.Elem = ElemString
		}
	}
	switch s.Elem {
	case ElemLong:
		switch x := v.(type) {
		case int64:
			return x
		case float64:
			return int64(x)
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n
			}
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return int64(f)
			}
			return nil
		}
	case ElemDouble:
		switch x := v.(type) {
		case int64:
			return float64(x)
		case float64:
			return x
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f
			}
			return nil
		}
	}
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return javacompat.FormatDouble(x)
	case string:
		return x
	}
	return nil
}

// compareElems orders elements as Druid's array_set_add keeps them: nulls
// first, then numbers numerically or strings lexicographically.
func compareElems(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// AddValue folds one input value (nil, int64, float64 or string) into
// group g of an array state.
func (s *State) AddValue(g int32, v any) error {
	v = s.elem(v)
	a := s.Arrs[g]
	if s.Op == OpArraySet {
		i, found := slices.BinarySearchFunc(a, v, compareElems)
		if found {
			s.Null[g] = false
			return nil
		}
		a = slices.Insert(a, i, v)
	} else {
		a = append(a, v)
	}
	s.Arrs[g] = a
	s.Null[g] = false
	s.Sizes[g] += elemSize(v)
	return s.checkSize(g)
}

func (s *State) checkSize(g int32) error {
	if n := 5 + s.Sizes[g]; n > s.spec.maxSize() {
		return &SizeError{Type: s.arrayType(), Size: n, Max: s.spec.maxSize()}
	}
	return nil
}

// combineArray folds group si of src into group di of s.
func (s *State) combineArray(di int, src *State, si int) error {
	if src.Null[si] {
		return nil
	}
	for _, v := range src.Arrs[si] {
		if err := s.AddValue(int32(di), v); err != nil {
			return err
		}
	}
	s.Null[di] = false
	return nil
}

// arrayResult is group i's finalized value: the array (nil when no input
// arrived), or what the spec's finalize expression makes of it.
func (s *State) arrayResult(i int) (Result, error) {
	var arr []any
	if !s.Null[i] {
		arr = s.Arrs[i]
		if arr == nil {
			arr = []any{}
		}
	}
	if s.spec == nil || s.spec.Finalize == nil {
		if arr == nil {
			return Result{}, nil
		}
		return Result{Kind: ResultArray, Arr: arr, ArrType: s.arrayType()}, nil
	}
	bind := expr.ValueBindings{s.spec.FinalizeIdentifier: s.exprArray(arr)}
	v, err := s.spec.Finalize.Eval(bind)
	if err != nil {
		return Result{}, err
	}
	return exprResult(v), nil
}

// exprArray is an array as an expression value (null when nil).
func (s *State) exprArray(arr []any) expr.Value {
	var et expr.Type
	switch s.Elem {
	case ElemLong:
		et = expr.TypeLongArray
	case ElemDouble:
		et = expr.TypeDoubleArray
	default:
		et = expr.TypeStringArray
	}
	if arr == nil {
		return expr.NullOf(et)
	}
	elems := make([]expr.Value, len(arr))
	for k, v := range arr {
		switch x := v.(type) {
		case int64:
			elems[k] = expr.Long(x)
		case float64:
			elems[k] = expr.Double(x)
		case string:
			elems[k] = expr.String(x)
		default:
			elems[k] = expr.NullOf(et.Elem())
		}
	}
	return expr.Array(et, elems)
}

// exprResult turns an expression value into a Result.
func exprResult(v expr.Value) Result {
	if v.IsNull() {
		return Result{}
	}
	switch v.Type() {
	case expr.TypeLong:
		return Result{Kind: ResultLong, Long: v.Long()}
	case expr.TypeDouble:
		return Result{Kind: ResultDouble, Double: v.Double()}
	case expr.TypeString:
		return Result{Kind: ResultString, Str: v.Str()}
	}
	elems := v.Elems()
	arr := make([]any, len(elems))
	for k, e := range elems {
		switch {
		case e.IsNull():
		case e.Type() == expr.TypeLong:
			arr[k] = e.Long()
		case e.Type() == expr.TypeDouble:
			arr[k] = e.Double()
		default:
			arr[k] = e.Str()
		}
	}
	return Result{Kind: ResultArray, Arr: arr, ArrType: v.Type().String()}
}

// AppendArrayJSON appends an array value as Druid's JSON writes it: longs
// as integers, doubles as Java prints them (non-finite ones as strings),
// strings quoted, nulls as null.
func AppendArrayJSON(b []byte, arr []any) []byte {
	b = append(b, '[')
	for k, v := range arr {
		if k > 0 {
			b = append(b, ',')
		}
		switch x := v.(type) {
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				b = append(b, '"')
				b = javacompat.AppendDouble(b, x)
				b = append(b, '"')
			} else {
				b = javacompat.AppendDouble(b, x)
			}
		case string:
			b = javacompat.AppendJSONString(b, x)
		default:
			b = append(b, "null"...)
		}
	}
	return append(b, ']')
}

// wireArrays is the wire form of an array state's arrays: one JSON array
// per group, elements typed by the state's element type.
type wireArrays [][]any

// MarshalJSON implements json.Marshaler.
func (w wireArrays) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, a := range w {
		if i > 0 {
			b = append(b, ',')
		}
		if a == nil {
			b = append(b, "null"...) // a group without input
			continue
		}
		b = AppendArrayJSON(b, a)
	}
	return append(b, ']'), nil
}

// decodeArrays reads the wire form back, checking each element against the
// element type.
func decodeArrays(raw json.RawMessage, elem string) ([][]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var in [][]any
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("aggregator state: bad arrays: %w", err)
	}
	out := make([][]any, len(in))
	for i, a := range in {
		if a == nil {
			continue
		}
		arr := make([]any, len(a))
		for k, v := range a {
			if v == nil {
				continue
			}
			var ok bool
			switch elem {
			case ElemLong:
				var n json.Number
				if n, ok = v.(json.Number); ok {
					var err error
					if arr[k], err = n.Int64(); err != nil {
						ok = false
					}
				}
			case ElemDouble:
				var s string
				switch x := v.(type) {
				case json.Number:
					s, ok = string(x), true
				case string:
					s, ok = x, x == "NaN" || x == "Infinity" || x == "-Infinity"
				}
				if ok {
					f, err := strconv.ParseFloat(s, 64)
					ok = err == nil || math.IsInf(f, 0)
					arr[k] = f
				}
			case ElemString, "":
				var str string
				str, ok = v.(string)
				arr[k] = str
			}
			if !ok {
				return nil, fmt.Errorf("aggregator state: array element %v is not of type %s", v, elem)
			}
		}
		out[i] = arr
	}
	return out, nil
}
