package engine

import (
	"math"
	"strconv"

	"strata/javacompat"
)

// Kind is the type of a result value.
type Kind uint8

// Value kinds.
const (
	KNull Kind = iota
	KLong
	KDouble
	KFloat
	KString
	// KObject is an unfinalized complex value (a sketch) rendered as its
	// base64 serialization in S.
	KObject
	// KArray is an array of numbers (quantiles, histograms) held as its
	// JSON text in S.
	KArray
)

// Value is one result value: a dimension value, an aggregate, a
// post-aggregate. It is small and passed by value.
type Value struct {
	K Kind
	L int64
	D float64
	S string
}

// Null is the null value.
var Null = Value{}

// Long returns a long value.
func Long(v int64) Value { return Value{K: KLong, L: v} }

// Double returns a double value.
func Double(v float64) Value { return Value{K: KDouble, D: v} }

// Float returns a float value (printed like Java's Float.toString).
func Float(v float32) Value { return Value{K: KFloat, D: float64(v)} }

// Str returns a string value.
func Str(s string) Value { return Value{K: KString, S: s} }

// doubles returns an array value of v, printed as Jackson prints a double[].
func doubles(v []float64) Value {
	b := []byte{'['}
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = Double(x).AppendJSON(b)
	}
	return Value{K: KArray, S: string(append(b, ']'))}
}

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.K == KNull }

// IsNumeric reports whether v is a long, double or float.
func (v Value) IsNumeric() bool { return v.K == KLong || v.K == KDouble || v.K == KFloat }

// Float64 returns the numeric reading of v (strings are parsed); ok is
// false for nulls and unparsable strings.
func (v Value) Float64() (float64, bool) {
	switch v.K {
	case KLong:
		return float64(v.L), true
	case KDouble, KFloat:
		return v.D, true
	case KString:
		f, err := strconv.ParseFloat(v.S, 64)
		return f, err == nil
	}
	return 0, false
}

// String returns the string form Druid uses when a value is compared or
// grouped as a string; ok is false for null.
func (v Value) String() (string, bool) {
	switch v.K {
	case KString, KObject, KArray:
		return v.S, true
	case KLong:
		return strconv.FormatInt(v.L, 10), true
	case KDouble:
		return javacompat.FormatDouble(v.D), true
	case KFloat:
		return javacompat.FormatFloat(float32(v.D)), true
	}
	return "", false
}

// AppendJSON appends v as Druid's Jackson writes it: longs as integers,
// doubles and floats as Java prints them, non-finite numbers as strings.
func (v Value) AppendJSON(b []byte) []byte {
	switch v.K {
	case KLong:
		return strconv.AppendInt(b, v.L, 10)
	case KDouble, KFloat:
		if math.IsNaN(v.D) || math.IsInf(v.D, 0) {
			b = append(b, '"')
			b = javacompat.AppendDouble(b, v.D)
			return append(b, '"')
		}
		if v.K == KFloat {
			return javacompat.AppendFloat(b, float32(v.D))
		}
		return javacompat.AppendDouble(b, v.D)
	case KString, KObject:
		return javacompat.AppendJSONString(b, v.S)
	case KArray:
		return append(b, v.S...)
	}
	return append(b, "null"...)
}

func parseInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
