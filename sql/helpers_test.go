package sql

import (
	"fmt"
	"reflect"
	"testing"
)

var posType = reflect.TypeOf(Pos{})

// diffNoPos compares two trees field by field, ignoring positions, and describes the first
// difference ("" if none). Nil and empty slices are equal.
func diffNoPos(a, b reflect.Value, path string) string {
	if a.IsValid() != b.IsValid() {
		return path + ": one side missing"
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %s vs %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil vs non-nil"
			}
			return ""
		}
		return diffNoPos(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		if a.Type() == posType {
			return ""
		}
		for i := 0; i < a.NumField(); i++ {
			if d := diffNoPos(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := diffNoPos(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %q vs %q", path, a.String(), b.String())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v vs %v", path, a.Bool(), b.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d vs %d", path, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d vs %d", path, a.Uint(), b.Uint())
		}
	default:
		return path + ": unexpected kind " + a.Kind().String()
	}
	return ""
}

func treeDiff(a, b Node) string {
	return diffNoPos(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem(), "")
}

// mustParse parses src, failing the test on error, and checks that it round-trips:
// Format(parse(src)) parses to the same tree and formats to the same text.
func mustParse(t testing.TB, src string) Statement {
	t.Helper()
	st, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	checkRoundTrip(t, st)
	return st
}

func checkRoundTrip(t testing.TB, st Statement) {
	t.Helper()
	out := Format(st)
	st2, err := Parse(out)
	if err != nil {
		t.Fatalf("reparse of formatted %q: %v", out, err)
	}
	if d := treeDiff(st, st2); d != "" {
		t.Fatalf("round trip changed the tree at %s\nformatted: %s", d, out)
	}
	if out2 := Format(st2); out2 != out {
		t.Fatalf("format not stable:\n%s\n%s", out, out2)
	}
}

func mustQuery(t testing.TB, src string) *Query {
	t.Helper()
	q, ok := mustParse(t, src).(*Query)
	if !ok {
		t.Fatalf("%q: not a query", src)
	}
	return q
}

func mustSelect(t testing.TB, src string) *Select {
	t.Helper()
	s, ok := mustQuery(t, src).Body.(*Select)
	if !ok {
		t.Fatalf("%q: body is not a SELECT", src)
	}
	return s
}

func mustExpr(t testing.TB, src string) Expr {
	t.Helper()
	e, err := ParseExpr(src)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", src, err)
	}
	return e
}

func col(e Expr) string {
	c, ok := e.(*ColumnRef)
	if !ok {
		return fmt.Sprintf("<%T>", e)
	}
	return Format(c)
}
