package segment

import (
	"math"
	"slices"
	"strconv"
	"unsafe"

	"strata/javacompat"
)

// Field is one input field of the rows given to a Writer or Builder. A row's
// Values are parallel to Spec.Fields.
type Field struct {
	Name string
	Kind Kind // the natural type of the field; values of other types are coerced
}

// Row is one input row: its timestamp in epoch milliseconds and one Value
// per Spec.Fields entry. Writers copy what they keep, so a caller may reuse
// a Row and its slices for the next row.
type Row struct {
	Time   int64
	Values []Value
}

type valueKind uint8

const (
	vNull valueKind = iota
	vLong
	vDouble
	vString
	vStrings
	vStringsNull // a multi-value with null elements: p points to a nullableStrings
	vBytes
)

// Value is one typed input value. The zero Value is null. Values are small
// and passed by value; constructing one does not allocate.
//
// A Value is 24 bytes: a row holds one per field and every Add copies and
// reads them, so the text, []string and []byte forms share one data
// pointer and length instead of each having its own header (80 bytes).
type Value struct {
	p    unsafe.Pointer // data of the string, []string or []byte
	n    uint64         // their length, or the int64 / float64 bits
	kind valueKind
}

// Null returns the null value.
func Null() Value { return Value{} }

// Long returns a long value.
func Long(v int64) Value { return Value{n: uint64(v), kind: vLong} }

// Double returns a double value (also used for floats).
func Double(v float64) Value { return Value{n: math.Float64bits(v), kind: vDouble} }

// String returns a string value. The empty string is a value, distinct
// from null.
func String(v string) Value {
	return Value{p: unsafe.Pointer(unsafe.StringData(v)), n: uint64(len(v)), kind: vString}
}

// Strings returns a multi-value string. An empty (or nil) slice is a row
// with no values, distinct from null.
func Strings(v []string) Value {
	return Value{p: unsafe.Pointer(unsafe.SliceData(v)), n: uint64(len(v)), kind: vStrings}
}

// nullableStrings is the data of a vStringsNull value.
type nullableStrings struct {
	vals []string
	null []bool
}

// StringsWithNulls returns a multi-value string whose element i is null
// where null[i] (vals[i] is then ignored), as Druid keeps the null elements
// of a multi-value row. Without a null element it is Strings(vals); with
// one it allocates, a row with null elements being the rare case.
func StringsWithNulls(vals []string, null []bool) Value {
	if !slices.Contains(null, true) {
		return Strings(vals)
	}
	return Value{p: unsafe.Pointer(&nullableStrings{vals: vals, null: null}), n: uint64(len(vals)), kind: vStringsNull}
}

// elems calls f with each element of a multi-value (vStrings or
// vStringsNull), ok=false for a null element.
func (v Value) elems(f func(s string, ok bool) error) error {
	if v.kind == vStrings {
		for _, s := range v.strs() {
			if err := f(s, true); err != nil {
				return err
			}
		}
		return nil
	}
	ns := (*nullableStrings)(v.p)
	for i, s := range ns.vals {
		if err := f(s, !ns.null[i]); err != nil {
			return err
		}
	}
	return nil
}

// only returns the one element of a one-element multi-value; ok=false when
// v is not one or its element is null.
func (v Value) only() (string, bool) {
	switch {
	case v.n != 1:
		return "", false
	case v.kind == vStrings:
		return v.strs()[0], true
	case v.kind == vStringsNull:
		ns := (*nullableStrings)(v.p)
		return ns.vals[0], !ns.null[0]
	}
	return "", false
}

// Bytes returns a binary value: a serialized sketch for the sketch-merging
// aggregators.
func Bytes(v []byte) Value {
	if v == nil {
		return Value{}
	}
	return Value{p: unsafe.Pointer(unsafe.SliceData(v)), n: uint64(len(v)), kind: vBytes}
}

// str, strs and bin return the text, the multi-value and the bytes of a
// value of kind vString, vStrings and vBytes respectively.
func (v Value) str() string    { return unsafe.String((*byte)(v.p), int(v.n)) }
func (v Value) strs() []string { return unsafe.Slice((*string)(v.p), int(v.n)) }
func (v Value) bin() []byte    { return unsafe.Slice((*byte)(v.p), int(v.n)) }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.kind == vNull }

// AsLong coerces v to a long: doubles are truncated toward zero (saturating,
// NaN is 0), strings are parsed as integers or decimals; unparsable strings,
// byte values and multi-values of other than one element are null.
func (v Value) AsLong() (int64, bool) {
	switch v.kind {
	case vLong:
		return int64(v.n), true
	case vDouble:
		return javacompat.DoubleToLong(math.Float64frombits(v.n)), true
	case vString:
		return parseLong(v.str())
	case vStrings, vStringsNull:
		if s, ok := v.only(); ok {
			return parseLong(s)
		}
	}
	return 0, false
}

// AsDouble coerces v to a double, like AsLong.
func (v Value) AsDouble() (float64, bool) {
	switch v.kind {
	case vLong:
		return float64(int64(v.n)), true
	case vDouble:
		return math.Float64frombits(v.n), true
	case vString:
		return parseDouble(v.str())
	case vStrings, vStringsNull:
		if s, ok := v.only(); ok {
			return parseDouble(s)
		}
	}
	return 0, false
}

// AsString coerces v to a single string: numbers are formatted, a
// one-element multi-value gives its element; null, bytes and other
// multi-values are null.
func (v Value) AsString() (string, bool) {
	switch v.kind {
	case vString:
		return v.str(), true
	case vLong:
		return strconv.FormatInt(int64(v.n), 10), true
	case vDouble:
		return strconv.FormatFloat(math.Float64frombits(v.n), 'g', -1, 64), true
	case vStrings, vStringsNull:
		return v.only()
	}
	return "", false
}

// AsBytes returns the bytes of a binary value.
func (v Value) AsBytes() ([]byte, bool) {
	if v.kind == vBytes {
		return v.bin(), true
	}
	return nil, false
}

func parseLong(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return javacompat.DoubleToLong(f), true
	}
	return 0, false
}

func parseDouble(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
