package query

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"strata/expr"
)

// testLookups is a fixed set of lookups: country (not one-to-one) and code
// (one-to-one).
type testLookups map[string]map[string]string

func (l testLookups) Lookup(name string) (map[string]string, bool, bool) {
	m, ok := l[name]
	return m, name == "code", ok
}

func withLookups(t *testing.T, src LookupSource) {
	t.Helper()
	SetLookups(src)
	t.Cleanup(func() { SetLookups(nil) })
}

func TestRegisteredLookups(t *testing.T) {
	withLookups(t, testLookups{"country": {"US": "United States", "FR": "France"}, "code": {"1": "one"}})
	for _, c := range []struct {
		fn        string
		in        string
		out       string
		null      bool
		injective bool
	}{
		{`{"type":"registeredLookup","lookup":"country"}`, "US", "United States", false, false},
		{`{"type":"registeredLookup","lookup":"country"}`, "DE", "", true, false},
		{`{"type":"registeredLookup","lookup":"country","retainMissingValue":true}`, "DE", "DE", false, false},
		{`{"type":"registeredLookup","lookup":"country","replaceMissingValueWith":"?"}`, "DE", "?", false, false},
		{`{"type":"registeredLookup","lookup":"country","injective":true}`, "FR", "France", false, true},
		// injective defaults to the lookup's isOneToOne.
		{`{"type":"registeredLookup","lookup":"code"}`, "1", "one", false, true},
		{`{"type":"registeredLookup","lookup":"code","injective":false}`, "1", "one", false, false},
	} {
		f, err := ParseExtractionFn([]byte(c.fn))
		if err != nil {
			t.Errorf("%s: %v", c.fn, err)
			continue
		}
		out, null := f.Apply(c.in, false)
		if out != c.out || null != c.null || f.Injective() != c.injective {
			t.Errorf("%s(%q) = %q,%v injective %v; want %q,%v,%v", c.fn, c.in, out, null, f.Injective(), c.out, c.null, c.injective)
		}
	}

	// A lookup dimension spec names a registered lookup with "name".
	d, err := ParseDimensionSpec([]byte(`{"type":"lookup","dimension":"cc","outputName":"country","name":"country","replaceMissingValueWith":"unknown"}`))
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := d.Extraction.Apply("FR", false); out != "France" || d.OutputName != "country" {
		t.Fatalf("lookup dimension spec: %q %q", out, d.OutputName)
	}
	if out, _ := d.Extraction.Apply("XX", false); out != "unknown" {
		t.Fatalf("lookup dimension spec, missing key: %q", out)
	}

	// The lookup() expression function.
	e, err := CompileExpression(`lookup(cc, 'country')`)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := e.Expr.Eval(expr.MapBindings{"cc": "US"}); v != expr.String("United States") {
		t.Fatalf("lookup(cc, 'country') = %v", v)
	}
	e, err = CompileExpression(`lookup(cc, 'country', 'none')`)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := e.Expr.Eval(expr.MapBindings{"cc": "XX"}); v != expr.String("none") {
		t.Fatalf("lookup(cc, 'country', 'none') on a missing key = %v", v)
	}

	// The lookup data source: the rows k, v sorted by key.
	q, err := Parse([]byte(`{"queryType":"scan","dataSource":{"type":"lookup","lookup":"country"},"intervals":["1000/3000"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &InlineTable{ColumnNames: []string{"k", "v"}, ColumnTypes: []string{"STRING", "STRING"}, Rows: [][]any{{"FR", "France"}, {"US", "United States"}}}
	if !reflect.DeepEqual(q.Inline, want) {
		t.Fatalf("lookup data source: %+v", q.Inline)
	}
}

// Every way of naming a lookup that is not loaded is a 400 naming it.
func TestUnknownLookup(t *testing.T) {
	withLookups(t, testLookups{"country": {"US": "United States"}})
	check := func(what string, err error) {
		t.Helper()
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != InvalidInput || !strings.Contains(qe.Message, "Lookup [nope] not found") {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err := ParseExtractionFn([]byte(`{"type":"registeredLookup","lookup":"nope"}`))
	check("registeredLookup", err)
	_, err = ParseDimensionSpec([]byte(`{"type":"lookup","dimension":"cc","name":"nope"}`))
	check("lookup dimension spec", err)
	_, err = CompileExpression(`lookup(cc, 'nope')`)
	check("lookup()", err)
	_, err = Parse([]byte(`{"queryType":"scan","dataSource":{"type":"lookup","lookup":"nope"},"intervals":["1000/3000"]}`))
	check("lookup data source", err)
	_, err = LookupTable("nope")
	check("LookupTable", err)

	// A process without lookups knows none.
	SetLookups(nil)
	_, err = ParseExtractionFn([]byte(`{"type":"registeredLookup","lookup":"nope"}`))
	check("no lookups", err)
}
