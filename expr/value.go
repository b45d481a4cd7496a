package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"strata/javacompat"
)

// Type is the type of an expression value, following Druid's ExpressionType.
type Type uint8

// Expression types. TypeUnknown is only used by type inference; every Value
// has one of the concrete types.
const (
	TypeUnknown Type = iota
	TypeLong
	TypeDouble
	TypeString
	TypeLongArray
	TypeDoubleArray
	TypeStringArray
)

func (t Type) String() string {
	switch t {
	case TypeLong:
		return "LONG"
	case TypeDouble:
		return "DOUBLE"
	case TypeString:
		return "STRING"
	case TypeLongArray:
		return "ARRAY<LONG>"
	case TypeDoubleArray:
		return "ARRAY<DOUBLE>"
	case TypeStringArray:
		return "ARRAY<STRING>"
	}
	return "UNKNOWN"
}

// IsArray reports whether t is one of the array types.
func (t Type) IsArray() bool { return t >= TypeLongArray && t <= TypeStringArray }

// IsNumeric reports whether t is LONG or DOUBLE.
func (t Type) IsNumeric() bool { return t == TypeLong || t == TypeDouble }

// Elem returns the element type of an array type, or t itself for scalars.
func (t Type) Elem() Type {
	switch t {
	case TypeLongArray:
		return TypeLong
	case TypeDoubleArray:
		return TypeDouble
	case TypeStringArray:
		return TypeString
	}
	return t
}

// ArrayOf returns the array type whose elements have type t (t itself if it
// is already an array type).
func (t Type) ArrayOf() Type {
	switch t {
	case TypeLong:
		return TypeLongArray
	case TypeDouble:
		return TypeDoubleArray
	case TypeString:
		return TypeStringArray
	}
	return t
}

// ParseType parses a Druid type name as accepted by cast(): LONG, DOUBLE,
// FLOAT (treated as DOUBLE), STRING, ARRAY<LONG|DOUBLE|STRING> and the legacy
// LONG_ARRAY, DOUBLE_ARRAY, STRING_ARRAY. Matching is case-insensitive.
func ParseType(s string) (Type, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	switch u {
	case "LONG":
		return TypeLong, true
	case "DOUBLE", "FLOAT":
		return TypeDouble, true
	case "STRING":
		return TypeString, true
	case "ARRAY<LONG>", "LONG_ARRAY":
		return TypeLongArray, true
	case "ARRAY<DOUBLE>", "ARRAY<FLOAT>", "DOUBLE_ARRAY":
		return TypeDoubleArray, true
	case "ARRAY<STRING>", "STRING_ARRAY":
		return TypeStringArray, true
	}
	return TypeUnknown, false
}

// Value is one typed expression value. The zero Value is a STRING-typed null,
// like Druid's ExprEval.of(null). Scalars are stored inline, so passing values
// around does not allocate.
type Value struct {
	typ  Type
	null bool
	bits uint64   // int64 or float64 bits
	str  string   // STRING payload
	arr  *[]Value // array elements (scalars of the element type); a pointer keeps Value small
}

// elems returns the array elements (nil for scalars and null arrays).
func (v Value) elems() []Value {
	if v.arr == nil {
		return nil
	}
	return *v.arr
}

// Null is the untyped (STRING) null.
var Null = Value{typ: TypeString, null: true}

// Long returns a LONG value.
func Long(v int64) Value { return Value{typ: TypeLong, bits: uint64(v)} }

// Double returns a DOUBLE value.
func Double(v float64) Value { return Value{typ: TypeDouble, bits: math.Float64bits(v)} }

// String returns a STRING value.
func String(s string) Value { return Value{typ: TypeString, str: s} }

// Bool returns the LONG 1 or 0 Druid uses for booleans.
func Bool(b bool) Value {
	if b {
		return Long(1)
	}
	return Long(0)
}

// NullOf returns a null of type t.
func NullOf(t Type) Value {
	if t == TypeUnknown {
		t = TypeString
	}
	return Value{typ: t, null: true}
}

// Array returns an array value of array type t holding elems, which must be
// scalars of t's element type or nulls (they are converted if not).
func Array(t Type, elems []Value) Value {
	if !t.IsArray() {
		t = t.ArrayOf()
	}
	et := t.Elem()
	for i, e := range elems {
		if e.typ != et || e.elems() != nil {
			elems[i] = castScalarElem(e, et)
		}
	}
	return Value{typ: t, arr: &elems}
}

// LongArray, DoubleArray and StringArray build arrays without nulls.
func LongArray(vs ...int64) Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = Long(v)
	}
	return Value{typ: TypeLongArray, arr: &out}
}

// DoubleArray builds an ARRAY<DOUBLE>.
func DoubleArray(vs ...float64) Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = Double(v)
	}
	return Value{typ: TypeDoubleArray, arr: &out}
}

// StringArray builds an ARRAY<STRING>.
func StringArray(vs ...string) Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = String(v)
	}
	return Value{typ: TypeStringArray, arr: &out}
}

// Type returns the value's type; a zero Value reports STRING.
func (v Value) Type() Type {
	if v.typ == TypeUnknown {
		return TypeString
	}
	return v.typ
}

// IsNull reports whether the value is null (for arrays: the array itself).
func (v Value) IsNull() bool { return v.null || v.typ == TypeUnknown }

// Elems returns the elements of an array value (nil for null arrays and
// scalars). The slice must not be modified.
func (v Value) Elems() []Value { return v.elems() }

// Long returns the raw LONG payload (0 for other types).
func (v Value) Long() int64 {
	if v.typ == TypeLong && !v.null {
		return int64(v.bits)
	}
	return 0
}

// Double returns the raw DOUBLE payload (0 for other types).
func (v Value) Double() float64 {
	if v.typ == TypeDouble && !v.null {
		return math.Float64frombits(v.bits)
	}
	return 0
}

// Str returns the raw STRING payload ("" for other types).
func (v Value) Str() string { return v.str }

// norm turns the zero Value into the STRING null.
func (v Value) norm() Value {
	if v.typ == TypeUnknown {
		return Null
	}
	return v
}

// --- conversions with Druid (ExprEval) semantics -------------------------

// number is the numeric reading of a value: a long, a double, or nothing.
type number struct {
	l      int64
	d      float64
	isLong bool
	ok     bool
}

func (n number) asLong() int64 {
	if n.isLong {
		return n.l
	}
	return javacompat.DoubleToLong(n.d)
}

func (n number) asDouble() float64 {
	if n.isLong {
		return float64(n.l)
	}
	return n.d
}

// numeric reads v as a number. ok is false when Druid's isNumericNull would be
// true: nulls, strings that are not numbers, arrays that are not one number.
func (v Value) numeric() number {
	if v.null {
		return number{}
	}
	switch v.typ {
	case TypeLong:
		return number{l: int64(v.bits), isLong: true, ok: true}
	case TypeDouble:
		return number{d: math.Float64frombits(v.bits), ok: true}
	case TypeString:
		return computeNumber(v.str)
	case TypeLongArray, TypeDoubleArray, TypeStringArray:
		if len(v.elems()) == 1 {
			return v.elems()[0].numeric()
		}
	}
	return number{}
}

// AsLong converts v to a long the way Druid does (strings are parsed,
// doubles truncated). ok is false when v has no numeric reading.
func (v Value) AsLong() (int64, bool) {
	n := v.numeric()
	if !n.ok {
		return 0, false
	}
	return n.asLong(), true
}

// AsDouble converts v to a double. ok is false when v has no numeric reading.
func (v Value) AsDouble() (float64, bool) {
	n := v.numeric()
	if !n.ok {
		return 0, false
	}
	return n.asDouble(), true
}

// asInt is Java's Number.intValue applied to the numeric reading (0 if none).
func (v Value) asInt() int {
	n := v.numeric()
	if !n.ok {
		return 0
	}
	if n.isLong {
		return int(int32(n.l))
	}
	return javaD2I(n.d)
}

// AsBool is Druid's truthiness: numbers are true when > 0, strings when they
// equal "true" ignoring case, single-element arrays by their element.
func (v Value) AsBool() bool {
	if v.null {
		return false
	}
	switch v.typ {
	case TypeLong:
		return int64(v.bits) > 0
	case TypeDouble:
		return math.Float64frombits(v.bits) > 0
	case TypeString:
		return strings.EqualFold(v.str, "true")
	case TypeLongArray, TypeDoubleArray:
		if len(v.elems()) == 1 {
			n := v.elems()[0].numeric()
			return n.ok && n.asLong() > 0
		}
	case TypeStringArray:
		if len(v.elems()) == 1 {
			return v.elems()[0].AsBool()
		}
	}
	return false
}

// AsString is the string form Druid uses (Java's toString of the value):
// doubles print like Double.toString, arrays of one element print that
// element, longer arrays print as "[a, b]". ok is false for nulls.
func (v Value) AsString() (string, bool) {
	if v.null || v.typ == TypeUnknown {
		return "", false
	}
	switch v.typ {
	case TypeString:
		return v.str, true
	case TypeLong:
		return strconv.FormatInt(int64(v.bits), 10), true
	case TypeDouble:
		return javacompat.FormatDouble(math.Float64frombits(v.bits)), true
	}
	if len(v.elems()) == 1 {
		return v.elems()[0].AsString()
	}
	var sb strings.Builder
	sb.WriteByte('[')
	for i, e := range v.elems() {
		if i > 0 {
			sb.WriteString(", ")
		}
		s, ok := e.AsString()
		if !ok {
			s = "null"
		}
		sb.WriteString(s)
	}
	sb.WriteByte(']')
	return sb.String(), true
}

// String implements fmt.Stringer for debugging and test output.
func (v Value) String() string {
	if v.IsNull() {
		return "null<" + v.Type().String() + ">"
	}
	s, _ := v.AsString()
	if v.typ.IsArray() && len(v.elems()) == 1 {
		s = "[" + s + "]"
	}
	if v.typ == TypeString {
		return strconv.Quote(s)
	}
	return s
}

// Any converts v to a plain Go value for JSON encoding: nil, int64, float64,
// string, or []any for arrays.
func (v Value) Any() any {
	if v.IsNull() {
		return nil
	}
	switch v.typ {
	case TypeLong:
		return int64(v.bits)
	case TypeDouble:
		return math.Float64frombits(v.bits)
	case TypeString:
		return v.str
	}
	out := make([]any, len(v.elems()))
	for i, e := range v.elems() {
		out[i] = e.Any()
	}
	return out
}

// FromAny converts a Go value (as produced by encoding/json or a column
// reader) to a Value: nil, bool, integers, floats, json.Number, string,
// []string, []int64, []float64, []any and Value itself are understood.
// Mixed []any follow Druid's best-effort rules (any string makes a string
// array, any float a double array). Other kinds (maps, nested arrays) are
// not expression values and become null.
func FromAny(x any) Value {
	switch t := x.(type) {
	case nil:
		return Null
	case Value:
		return t.norm()
	case string:
		return String(t)
	case json.Number:
		if l, err := t.Int64(); err == nil {
			return Long(l)
		}
		if d, err := t.Float64(); err == nil {
			return Double(d)
		}
		return String(string(t))
	case bool:
		return Bool(t)
	case int:
		return Long(int64(t))
	case int8:
		return Long(int64(t))
	case int16:
		return Long(int64(t))
	case int32:
		return Long(int64(t))
	case int64:
		return Long(t)
	case uint8:
		return Long(int64(t))
	case uint16:
		return Long(int64(t))
	case uint32:
		return Long(int64(t))
	case uint64:
		return Long(int64(t))
	case float32:
		return Double(float64(t))
	case float64:
		return Double(t)
	case []string:
		return StringArray(t...)
	case []int64:
		return LongArray(t...)
	case []float64:
		return DoubleArray(t...)
	case []any:
		elems := make([]Value, len(t))
		et := TypeUnknown
		for i, e := range t {
			elems[i] = FromAny(e)
			if elems[i].IsNull() {
				continue
			}
			switch ty := elems[i].typ; {
			case ty.IsArray():
				et = TypeString // nested arrays are not supported; stringify
			case et == TypeUnknown:
				et = ty
			case et == TypeString || ty == TypeString:
				et = TypeString
			case et != ty:
				et = TypeDouble
			}
		}
		if et == TypeUnknown {
			et = TypeString
		}
		return Array(et.ArrayOf(), elems)
	}
	return Null
}

// --- parsing helpers -------------------------------------------------------

// computeNumber is Druid's ExprEval.computeNumber: "true"/"false" are 1.0 and
// 0.0, then a long is tried, then a Java double literal.
func computeNumber(s string) number {
	if strings.EqualFold(s, "true") {
		return number{d: 1, ok: true}
	}
	if strings.EqualFold(s, "false") {
		return number{d: 0, ok: true}
	}
	if l, ok := tryParseLong(s); ok {
		return number{l: l, isLong: true, ok: true}
	}
	if d, ok := tryParseDouble(s); ok {
		return number{d: d, ok: true}
	}
	return number{}
}

// tryParseLong accepts an optional sign and decimal digits, failing on
// overflow (Guava Longs.tryParse after Druid strips a leading '+').
func tryParseLong(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	if s[0] == '+' {
		s = s[1:]
		if s == "" || s[0] == '-' {
			return 0, false
		}
	}
	body := s
	if body[0] == '-' {
		body = body[1:]
	}
	if body == "" {
		return 0, false
	}
	for i := 0; i < len(body); i++ {
		if body[i] < '0' || body[i] > '9' {
			return 0, false
		}
	}
	l, err := strconv.ParseInt(s, 10, 64)
	return l, err == nil
}

// tryParseDouble accepts Java/Guava double syntax: optional sign, NaN,
// Infinity, decimal digits with optional point and exponent, an optional
// f/F/d/D suffix. No surrounding whitespace, no hex floats.
func tryParseDouble(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 0 {
		switch body[n-1] {
		case 'f', 'F', 'd', 'D':
			body = body[:n-1]
		}
	}
	i, digits := 0, 0
	for i < len(body) && body[i] >= '0' && body[i] <= '9' {
		i++
		digits++
	}
	if i < len(body) && body[i] == '.' {
		i++
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		exp := 0
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return 0, false
		}
	}
	if i != len(body) {
		return 0, false
	}
	d, err := strconv.ParseFloat(body, 64)
	if err != nil {
		// ParseFloat reports range errors but still returns ±Inf or 0, as Java does.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if neg {
		d = -d
	}
	return d, true
}

// javaD2I is Java's (int) cast of a double.
func javaD2I(d float64) int {
	switch {
	case d != d:
		return 0
	case d >= math.MaxInt32:
		return math.MaxInt32
	case d <= math.MinInt32:
		return math.MinInt32
	}
	return int(int32(d))
}

// --- casting ---------------------------------------------------------------

// Cast converts v to type t following Druid's castTo rules: numbers and
// strings convert to each other (unparsable strings become null), scalars
// become one-element arrays, one-element arrays become scalars. Casting a
// longer array to a scalar is an error.
func (v Value) Cast(t Type) (Value, error) {
	v = v.norm()
	if t == TypeUnknown || v.typ == t {
		return v, nil
	}
	if v.null {
		return NullOf(t), nil
	}
	if v.typ.IsArray() {
		if t.IsArray() {
			out := make([]Value, len(v.elems()))
			for i, e := range v.elems() {
				out[i] = castScalarElem(e, t.Elem())
			}
			return Value{typ: t, arr: &out}, nil
		}
		if len(v.elems()) != 1 {
			return Value{}, evalErrorf("cannot cast %s to %s", v.typ, t)
		}
		return castScalarElem(v.elems()[0], t), nil
	}
	if t.IsArray() {
		return Value{typ: t, arr: &[]Value{castScalarElem(v, t.Elem())}}, nil
	}
	return castScalarElem(v, t), nil
}

// castScalarElem casts a scalar to scalar type t; it never fails (values
// without a numeric reading become null).
func castScalarElem(v Value, t Type) Value {
	if v.typ == TypeUnknown || v.null {
		return NullOf(t)
	}
	if v.typ == t {
		return v
	}
	if v.typ.IsArray() {
		if len(v.elems()) == 1 {
			return castScalarElem(v.elems()[0], t)
		}
		if t == TypeString {
			s, _ := v.AsString()
			return String(s)
		}
		return NullOf(t)
	}
	switch t {
	case TypeString:
		s, _ := v.AsString()
		return String(s)
	case TypeLong:
		n := v.numeric()
		if !n.ok {
			return NullOf(TypeLong)
		}
		return Long(n.asLong())
	case TypeDouble:
		n := v.numeric()
		if !n.ok {
			return NullOf(TypeDouble)
		}
		return Double(n.asDouble())
	}
	return NullOf(t)
}
