package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }

// decodeFields decodes a JSON object into the struct pointed to by dst one field
// at a time, so that a type error names the offending field. Unknown fields are
// ignored, as Druid's object mapper does for these resources.
func decodeFields(body []byte, dst any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return describeJSONError(err)
	}
	v := reflect.ValueOf(dst).Elem()
	for i, name := range jsonFieldNames(v.Type()) {
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
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fmt.Errorf("invalid value for field %q: expected %s, got JSON %s", name, jsonKind(te.Type), te.Value)
			}
			return fmt.Errorf("invalid value for field %q: %v", name, err)
		}
	}
	return nil
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
