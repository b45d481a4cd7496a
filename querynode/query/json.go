package query

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// obj is one JSON object of a query, with typed accessors that produce
// validation errors naming the object. Unknown properties are ignored, as
// Druid's Jackson configuration does.
type obj struct {
	m    map[string]json.RawMessage
	what string
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func parseObj(raw json.RawMessage, what string) (obj, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return obj{}, Invalidf("%s must be a JSON object, got %s", what, snippet(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return obj{}, Invalidf("%s: %v", what, err)
	}
	return obj{m: m, what: what}, nil
}

func snippet(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	if len(raw) > 80 {
		return string(raw[:80]) + "..."
	}
	return string(raw)
}

func (o obj) has(k string) bool { return !isNull(o.m[k]) }

func (o obj) raw(k string) json.RawMessage {
	if isNull(o.m[k]) {
		return nil
	}
	return o.m[k]
}

func (o obj) missing(k string) error {
	return Invalidf("%s: missing required property [%s]", o.what, k)
}

// str returns a string property; numbers and booleans are accepted and
// converted, as Jackson coerces scalars.
func (o obj) str(k string) (string, bool, error) {
	raw := o.raw(k)
	if raw == nil {
		return "", false, nil
	}
	s, ok := scalarString(raw)
	if !ok {
		return "", false, Invalidf("%s: property [%s] must be a string, got %s", o.what, k, snippet(raw))
	}
	return s, true, nil
}

func (o obj) reqStr(k string) (string, error) {
	s, ok, err := o.str(k)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", o.missing(k)
	}
	return s, nil
}

func (o obj) strDefault(k, def string) (string, error) {
	s, ok, err := o.str(k)
	if !ok || err != nil {
		return def, err
	}
	return s, nil
}

// nullableStr returns nil for a missing or null property.
func (o obj) nullableStr(k string) (*string, error) {
	s, ok, err := o.str(k)
	if !ok || err != nil {
		return nil, err
	}
	return &s, nil
}

func scalarString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case 't', 'f':
		return string(raw), string(raw) == "true" || string(raw) == "false"
	case '{', '[', 'n':
		return "", false
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	return n.String(), true
}

func (o obj) boolean(k string, def bool) (bool, error) {
	raw := o.raw(k)
	if raw == nil {
		return def, nil
	}
	b, ok := parseBool(raw)
	if !ok {
		return def, Invalidf("%s: property [%s] must be a boolean, got %s", o.what, k, snippet(raw))
	}
	return b, nil
}

func parseBool(raw json.RawMessage) (bool, bool) {
	s, ok := scalarString(raw)
	if !ok {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func (o obj) integer(k string, def int64) (int64, error) {
	raw := o.raw(k)
	if raw == nil {
		return def, nil
	}
	n, ok := parseInt(raw)
	if !ok {
		return def, Invalidf("%s: property [%s] must be an integer, got %s", o.what, k, snippet(raw))
	}
	return n, nil
}

func parseInt(raw json.RawMessage) (int64, bool) {
	s, ok := scalarString(raw)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
}

func (o obj) number(k string) (float64, bool, error) {
	raw := o.raw(k)
	if raw == nil {
		return 0, false, nil
	}
	s, ok := scalarString(raw)
	if ok {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true, nil
		}
	}
	return 0, false, Invalidf("%s: property [%s] must be a number, got %s", o.what, k, snippet(raw))
}

func (o obj) array(k string) ([]json.RawMessage, bool, error) {
	raw := o.raw(k)
	if raw == nil {
		return nil, false, nil
	}
	var a []json.RawMessage
	if bytes.TrimSpace(raw)[0] != '[' || json.Unmarshal(raw, &a) != nil {
		return nil, false, Invalidf("%s: property [%s] must be an array, got %s", o.what, k, snippet(raw))
	}
	return a, true, nil
}

// strings returns an array of strings; null elements are rejected.
func (o obj) strings(k string) ([]string, bool, error) {
	a, ok, err := o.array(k)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := scalarString(e)
		if !ok {
			return nil, true, Invalidf("%s: property [%s] must hold strings, got %s", o.what, k, snippet(e))
		}
		out[i] = s
	}
	return out, true, nil
}

// typeOf returns the "type" property of an object, or "" when absent.
func typeOf(raw json.RawMessage) string {
	var t struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	s, _ := t.Type.(string)
	return s
}
