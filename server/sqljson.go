package server

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// SQL result rows are written value by value with the appenders below, the
// bytes json.Marshal writes for them: json.Marshal of a row ([]any, or an
// orderedObject for the object formats) went through reflection for every
// value, 0.9 ms for bench Q10's 350 rows in the default object format,
// beside an 11 ms query.

// appendJSONRow appends row as json.Marshal writes a []any; ok is false
// when json.Marshal would fail on one of its values.
func appendJSONRow(b []byte, row []any) ([]byte, bool) {
	b = append(b, '[')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendJSONValue(b, v); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendJSONObjectRow appends row as the object {keys[i]: row[i], ...},
// each key already written as a JSON string.
func appendJSONObjectRow(b []byte, keys [][]byte, row []any) ([]byte, bool) {
	b = append(b, '{')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, keys[i]...)
		b = append(b, ':')
		var ok bool
		if b, ok = appendJSONValue(b, v); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// jsonKeys writes each name as a JSON string.
func jsonKeys(names []string) [][]byte {
	keys := make([][]byte, len(names))
	for i, n := range names {
		keys[i] = appendJSONString(nil, n)
	}
	return keys
}

// appendJSONValue appends v as json.Marshal writes it; the kinds SQL rows
// hold are written here, any other through json.Marshal itself.
func appendJSONValue(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return appendJSONFloat(b, x)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, out...), true
}

// appendJSONFloat is encoding/json's float64 encoding: the shortest
// representation, with an exponent below 1e-6 and from 1e21 on, written
// without a leading zero in the exponent (1e-07 as 1e-7).
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendJSONString appends s quoted as json.Marshal quotes it: strings of
// printable ASCII without the characters it escapes are copied; any other
// (escapes, HTML characters, non-ASCII with U+2028/U+2029 and invalid UTF-8
// replaced) is left to json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			out, _ := json.Marshal(s) // a string always marshals
			return append(b, out...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
