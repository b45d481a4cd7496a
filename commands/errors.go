package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }

// decodeFields decodes a JSON object into the struct pointed to by dst one field
// at a time, so that a type error names the offending field. Unknown fields are
// ignored, as Druid's object mapper does for these resources, and returned
// (sorted, nested ones as a dotted path) for the caller to log.
func decodeFields(body []byte, dst any) (unknown []string, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, describeJSONError(err)
	}
	v := reflect.ValueOf(dst).Elem()
	names := jsonFieldNames(v.Type())
	for i, name := range names {
		raw, ok := fields[name]
		if !ok || name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && string(raw) == "null" && f.Type().Elem().Kind() != reflect.Slice {
			// An explicit null for a scalar means "leave as is", as an absent field.
			continue
		}
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			if c, ok := coerceScalar(raw, f.Type()); ok {
				err = json.Unmarshal(c, f.Addr().Interface())
			}
			if err == nil {
				continue
			}
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				path := name
				if te.Field != "" {
					path += "." + te.Field // the nested field, as encoding/json names it
				}
				return nil, fmt.Errorf("invalid value for field %q: expected %s, got JSON %s", path, jsonKind(te.Type), te.Value)
			}
			return nil, fmt.Errorf("invalid value for field %q: %v", name, err)
		}
		unknown = appendUnknown(unknown, raw, f.Type(), name+".")
	}
	for k := range fields {
		if k == "" || k == "-" || !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return unknown, nil
}

// appendUnknown appends the keys of the JSON object raw that the struct type t
// (or, for a map, its struct values) does not declare, prefixed by their path.
// raw has already been decoded into t, so it is well-formed.
func appendUnknown(out []string, raw json.RawMessage, t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return out
		}
		names := jsonFieldNames(t)
		for k, v := range fields {
			if i := slices.Index(names, k); k == "" || k == "-" || i < 0 {
				out = append(out, prefix+k)
			} else {
				out = appendUnknown(out, v, t.Field(i).Type, prefix+k+".")
			}
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		elem := t.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		if elem.Kind() != reflect.Struct {
			return out
		}
		var entries map[string]json.RawMessage
		if json.Unmarshal(raw, &entries) != nil {
			return out
		}
		for k, v := range entries {
			out = appendUnknown(out, v, elem, prefix+k+".")
		}
	}
	return out
}

// fieldNames caches, per struct type, the JSON name of each field (by index):
// parsing the tags on every request showed up in the write path's profile.
var fieldNames sync.Map // reflect.Type -> []string

func jsonFieldNames(t reflect.Type) []string {
	if names, ok := fieldNames.Load(t); ok {
		return names.([]string)
	}
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	fieldNames.Store(t, names)
	return names
}

// coerceScalar converts a scalar the way Druid's JSON reader (Jackson, default
// settings) does when it does not have the declared type: a fraction or an
// exponent for an integer (truncated toward zero), a number or boolean held in
// a string, and 0/1 for a boolean. It returns the value as JSON of the right
// type, or false when there is nothing to convert.
func coerceScalar(raw json.RawMessage, t reflect.Type) (json.RawMessage, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case string:
			p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, false
			}
			f = p
		default:
			return nil, false
		}
		f = math.Trunc(f)
		if math.IsNaN(f) || math.IsInf(f, 0) || f < math.MinInt64 || f >= math.MaxInt64 {
			return nil, false
		}
		return json.RawMessage(strconv.FormatInt(int64(f), 10)), true
	case reflect.Float32, reflect.Float64:
		if x, ok := v.(string); ok {
			if p, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsNaN(p) && !math.IsInf(p, 0) {
				return json.RawMessage(strconv.FormatFloat(p, 'g', -1, 64)), true
			}
		}
	case reflect.Bool:
		switch x := v.(type) {
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true":
				return json.RawMessage("true"), true
			case "false":
				return json.RawMessage("false"), true
			}
		case float64:
			if x == math.Trunc(x) {
				return json.RawMessage(strconv.FormatBool(x != 0)), true
			}
		}
	}
	return nil, false
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int32:
		return "an integer in [-2147483648, 2147483647]"
	case reflect.Int64, reflect.Int:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
