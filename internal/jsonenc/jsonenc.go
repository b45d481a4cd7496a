// Package jsonenc appends values to a JSON text exactly as encoding/json's
// Marshal writes them, without reflection for the kinds SQL plans and
// results are made of (maps with string keys, slices, strings, numbers,
// booleans, raw JSON); any other value goes through json.Marshal itself.
//
// Interactive SQL writes a native query per statement and a JSON value per
// result cell: through json.Marshal that was a fifth of planning a short
// statement and most of writing a result's rows.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Append appends v as json.Marshal(v) writes it, or returns its error.
func Append(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		return AppendFloat(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendMap(b, x)
	case map[string]string:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendMap(b, x)
	case []any:
		return appendSlice(b, x)
	case []string:
		return appendSlice(b, x)
	case [][]any:
		return appendSlice(b, x)
	case []map[string]any:
		return appendSlice(b, x)
	case json.RawMessage:
		return appendRaw(b, x)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}

func appendMap[V any](b []byte, m map[string]V) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // encoding/json's order
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = Append(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendSlice[V any](b []byte, s []V) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = Append(b, v); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendRaw writes raw JSON as encoding/json does: compacted, with the
// characters it escapes for HTML escaped (left to json.Marshal, rare).
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	if bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		out, err := json.Marshal(raw)
		if err != nil {
			return b, err
		}
		return append(b, out...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		_, err = json.Marshal(raw) // its error, as json.Marshal words it
		return b, err
	}
	return buf.Bytes(), nil
}

// AppendFloat is encoding/json's float64 encoding: the shortest
// representation, with an exponent below 1e-6 and from 1e21 on, written
// without a leading zero in the exponent (1e-07 as 1e-7). NaN and the
// infinities are json.Marshal's error.
func AppendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		_, err := json.Marshal(f)
		return b, err
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
	return b, nil
}

// AppendString appends s quoted as json.Marshal quotes it: a string of
// printable ASCII without the characters it escapes is copied; any other
// (escapes, HTML characters, non-ASCII with U+2028/U+2029 and invalid UTF-8
// replaced) is left to json.Marshal.
func AppendString(b []byte, s string) []byte {
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
