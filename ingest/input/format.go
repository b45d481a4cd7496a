package input

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"strata/expr"
	"strata/javacompat"
)

// Kind is the type of a signature column.
type Kind uint8

// Column kinds.
const (
	KindString Kind = iota
	KindLong
	KindDouble
	KindFloat
	KindStringArray
	KindLongArray
	KindDoubleArray
)

// ParseKind maps a signature type name ("string", "long", "double", "float",
// "ARRAY<STRING>", ...) to a Kind, ignoring case.
func ParseKind(s string) (Kind, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "STRING", "":
		return KindString, true
	case "LONG":
		return KindLong, true
	case "DOUBLE":
		return KindDouble, true
	case "FLOAT":
		return KindFloat, true
	case "ARRAY<STRING>":
		return KindStringArray, true
	case "ARRAY<LONG>":
		return KindLongArray, true
	case "ARRAY<DOUBLE>", "ARRAY<FLOAT>":
		return KindDoubleArray, true
	}
	return 0, false
}

// Column is one column of the rows a reader produces.
type Column struct {
	Name string
	Kind Kind
}

// Reader produces rows from one file.
type Reader interface {
	// Next fills row (one value per column) with the next record. It returns
	// io.EOF at the end, or a *ParseError for a record that could not be
	// parsed; reading may go on after a ParseError. Values may alias the
	// reader's buffers and are valid until the next call.
	Next(row []expr.Value) error
}

// Format is an input format.
type Format interface {
	// Type is the Druid type name ("json", "csv", "tsv").
	Type() string
	// NewReader returns a reader of cols over r; source names the file in errors.
	NewReader(r io.Reader, cols []Column, source string) (Reader, error)
	// Spec is the format as JSON for reports.
	Spec() map[string]any
}

// ParseError is a record that could not be parsed.
type ParseError struct {
	Source string
	Record int64 // 1-based record (line) number
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("Unable to parse row (Path: %s, Record: %d): %s", e.Source, e.Record, e.Msg)
}

// ParseFormat decodes an input format from its JSON form.
func ParseFormat(raw []byte) (Format, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, errorf("invalid inputFormat JSON: %v", err)
	}
	switch head.Type {
	case "json":
		return parseJSONFormat(raw)
	case "csv", "tsv":
		return parseDelimitedFormat(raw, head.Type)
	case "":
		return nil, errorf("inputFormat has no 'type'")
	}
	return nil, errorf("unsupported inputFormat type %q (supported: json, csv, tsv)", head.Type)
}

// convError is a value that does not fit its column type.
type convError struct{ msg string }

func (e *convError) Error() string { return e.msg }

func badValue(v, col string, k Kind) error {
	return &convError{msg: fmt.Sprintf("Unable to parse value[%s] for field[%s] as %s", v, col, kindName(k))}
}

func kindName(k Kind) string {
	switch k {
	case KindLong:
		return "LONG"
	case KindDouble:
		return "DOUBLE"
	case KindFloat:
		return "FLOAT"
	case KindStringArray:
		return "ARRAY<STRING>"
	case KindLongArray:
		return "ARRAY<LONG>"
	case KindDoubleArray:
		return "ARRAY<DOUBLE>"
	}
	return "STRING"
}

// stringValue converts the text of a string field to kind k. Empty text is
// null for numbers (Druid treats "" as missing there).
func stringValue(s string, col string, k Kind) (expr.Value, error) {
	switch k {
	case KindString:
		return expr.String(s), nil
	case KindLong:
		if s == "" {
			return expr.NullOf(expr.TypeLong), nil
		}
		if n, ok := parseLong(s); ok {
			return expr.Long(n), nil
		}
		return expr.Value{}, badValue(s, col, k)
	case KindDouble, KindFloat:
		if s == "" {
			return expr.NullOf(expr.TypeDouble), nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return expr.Value{}, badValue(s, col, k)
		}
		if k == KindFloat {
			f = float64(float32(f))
		}
		return expr.Double(f), nil
	case KindStringArray:
		return expr.StringArray(s), nil
	case KindLongArray, KindDoubleArray:
		v, err := stringValue(s, col, elemKind(k))
		if err != nil {
			return expr.Value{}, err
		}
		return expr.Array(arrayType(k), []expr.Value{v}), nil
	}
	return expr.Value{}, badValue(s, col, k)
}

// numberValue converts the text of a JSON number to kind k.
func numberValue(text string, col string, k Kind) (expr.Value, error) {
	switch k {
	case KindString:
		return expr.String(numberString(text)), nil
	case KindLong:
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return expr.Long(n), nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return expr.Value{}, badValue(text, col, k)
		}
		return expr.Long(javacompat.DoubleToLong(f)), nil
	case KindDouble, KindFloat:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return expr.Value{}, badValue(text, col, k)
		}
		if k == KindFloat {
			f = float64(float32(f))
		}
		return expr.Double(f), nil
	case KindStringArray, KindLongArray, KindDoubleArray:
		v, err := numberValue(text, col, elemKind(k))
		if err != nil {
			return expr.Value{}, err
		}
		return expr.Array(arrayType(k), []expr.Value{v}), nil
	}
	return expr.Value{}, badValue(text, col, k)
}

// numberString renders a JSON number as Java would after Jackson parsed it:
// integers as written, decimals through Double.toString.
func numberString(text string) string {
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return text
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil {
		return javacompat.FormatDouble(f)
	}
	return text
}

func boolValue(b bool, col string, k Kind) (expr.Value, error) {
	n := int64(0)
	if b {
		n = 1
	}
	switch k {
	case KindString, KindStringArray:
		return stringValue(strconv.FormatBool(b), col, k)
	case KindLong:
		return expr.Long(n), nil
	case KindDouble, KindFloat:
		return expr.Double(float64(n)), nil
	case KindLongArray:
		return expr.LongArray(n), nil
	case KindDoubleArray:
		return expr.DoubleArray(float64(n)), nil
	}
	return expr.Value{}, badValue(strconv.FormatBool(b), col, k)
}

func nullValue(k Kind) expr.Value {
	switch k {
	case KindLong:
		return expr.NullOf(expr.TypeLong)
	case KindDouble, KindFloat:
		return expr.NullOf(expr.TypeDouble)
	case KindStringArray, KindLongArray, KindDoubleArray:
		return expr.NullOf(arrayType(k))
	}
	return expr.Null
}

func elemKind(k Kind) Kind {
	switch k {
	case KindLongArray:
		return KindLong
	case KindDoubleArray:
		return KindDouble
	case KindStringArray:
		return KindString
	}
	return k
}

func arrayType(k Kind) expr.Type {
	switch k {
	case KindLongArray:
		return expr.TypeLongArray
	case KindDoubleArray:
		return expr.TypeDoubleArray
	}
	return expr.TypeStringArray
}

func isArrayKind(k Kind) bool { return k >= KindStringArray }

// listValue converts the elements of a list to kind k: array kinds keep every
// element, a string column becomes a multi-value string, and a scalar numeric
// column takes the only element of a one-element list.
func listValue(elems []expr.Value, col string, k Kind) (expr.Value, error) {
	switch {
	case isArrayKind(k):
		return expr.Array(arrayType(k), elems), nil
	case k == KindString:
		return expr.Array(expr.TypeStringArray, elems), nil
	case len(elems) == 1:
		return elems[0], nil
	case len(elems) == 0:
		return nullValue(k), nil
	}
	return expr.Value{}, &convError{msg: fmt.Sprintf("Unable to parse a list of %d values for field[%s] as %s", len(elems), col, kindName(k))}
}

func parseLong(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return javacompat.DoubleToLong(f), true
	}
	return 0, false
}
