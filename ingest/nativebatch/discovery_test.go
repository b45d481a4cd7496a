package nativebatch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"strata/ingest"
	"strata/storage/deep"
)

// Rows whose fields are scalars of every JSON kind, with a mixed column.
const scalars = `{"timestamp":"2020-01-01T00:00:00Z","s":"a","l":1,"d":1.5,"mixnum":1,"mixstr":1,"b":true,"n":null}
{"timestamp":"2020-01-01T01:00:00Z","s":"b","l":2,"d":2.5,"mixnum":2.5,"mixstr":"x","b":false,"n":null}
`

// kinds reads the column types of the first segment: "string", "long"...
func kinds(t *testing.T, b built) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range b.rows(t) {
		for k, v := range r {
			var kind string
			switch v.(type) {
			case int64:
				kind = "long"
			case float64, float32:
				kind = "double"
			case string, []string:
				kind = "string"
			default:
				continue // a null says nothing
			}
			if old, ok := out[k]; ok && old != kind {
				t.Fatalf("column %s holds both %s and %s values", k, old, kind)
			}
			out[k] = kind
		}
	}
	return out
}

// useSchemaDiscovery with declared dimensions keeps them, in their order and
// with their types, and adds every other input field after them, typed.
func TestSchemaDiscoveryBesideDeclaredDimensions(t *testing.T) {
	b := build(t, inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"useSchemaDiscovery":true,"dimensions":["number"]},"granularitySpec":{"rollup":false}}`, ""))
	if got := strings.Join(b.segs[0].Dimensions, ","); got != "number,animal,location" {
		t.Fatalf("dimensions %s, want number,animal,location (declared first, then discovered)", got)
	}
	k := kinds(t, b)
	if k["number"] != "string" || k["location"] != "long" || k["animal"] != "string" {
		t.Errorf("kinds %v: declared number stays a string, discovered location is a long", k)
	}
}

// The auto dimension type takes its type from the values: whole numbers are
// LONG, any fraction DOUBLE, any string STRING, booleans LONG 1/0 and a
// column of nulls STRING.
func TestAutoDimensionTypes(t *testing.T) {
	var dims []string
	for _, n := range []string{"s", "l", "d", "mixnum", "mixstr", "b", "n"} {
		dims = append(dims, `{"type":"auto","name":"`+n+`"}`)
	}
	b := build(t, inlineTask(scalars, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":[`+strings.Join(dims, ",")+`]},"granularitySpec":{"rollup":false}}`, ""))
	if got := strings.Join(b.segs[0].Dimensions, ","); got != "s,l,d,mixnum,mixstr,b,n" {
		t.Fatalf("dimensions %s", got)
	}
	k := kinds(t, b)
	want := map[string]string{"s": "string", "l": "long", "d": "double", "mixnum": "double", "mixstr": "string", "b": "long"}
	for c, w := range want {
		if k[c] != w {
			t.Errorf("column %s is %q, want %q (all: %v)", c, k[c], w, k)
		}
	}
	rows := b.rows(t)
	if rows[0]["b"] != int64(1) || rows[1]["b"] != int64(0) {
		t.Errorf("booleans stored as %v, %v; want 1 and 0", rows[0]["b"], rows[1]["b"])
	}
	if rows[1]["mixstr"] != "x" || rows[0]["mixstr"] != "1" {
		t.Errorf("mixed column stored as %v, %v; want strings", rows[0]["mixstr"], rows[1]["mixstr"])
	}
}

// An auto column whose values are a transform's takes the type the
// expression gives over the discovered input types.
func TestAutoDimensionOfATransform(t *testing.T) {
	b := build(t, inlineTask(scalars, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":[{"type":"auto","name":"l2"},{"type":"auto","name":"s2"}]},
		"transformSpec":{"transforms":[{"type":"expression","name":"l2","expression":"l * 2"},
			{"type":"expression","name":"s2","expression":"concat(s, 'z')"}]},
		"granularitySpec":{"rollup":false}}`, ""))
	k := kinds(t, b)
	if k["l2"] != "long" || k["s2"] != "string" {
		t.Errorf("kinds %v, want l2 long and s2 string", k)
	}
}

// Arrays and nested objects in typed columns are the next step (ARRAY and
// COMPLEX<json> columns): the task fails saying so rather than storing them
// as something else.
func TestTypedColumnsRefuseArraysAndNestedData(t *testing.T) {
	for _, c := range []struct{ data, dims, want string }{
		{`{"timestamp":"2020-01-01","a":[1,2]}`, `[{"type":"auto","name":"a"}]`, "ARRAY"},
		{`{"timestamp":"2020-01-01","o":{"x":1}}`, `[{"type":"auto","name":"o"}]`, "COMPLEX<json>"},
		{`{"timestamp":"2020-01-01","s":"a","o":{"x":1}}`, `[],"useSchemaDiscovery":true`, "COMPLEX<json>"},
	} {
		s, err := ParseSpec(inlineTask(c.data+"\n", `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
			"dimensionsSpec":{"dimensions":`+c.dims+`}}`, ""))
		if err != nil {
			t.Fatal(err)
		}
		store, err := deep.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Build(context.Background(), s, BuildOptions{Version: "v1", Uploader: ingest.DeepUploader{Storage: store},
			TempDir: filepath.Join(t.TempDir(), "b")})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s with %s: err %v, want a not-supported error naming %s", c.data, c.dims, err, c.want)
		}
	}
}

// Classic (string) discovery ingests primitives and lists of primitives as
// strings and multi-value strings, and leaves nested objects out, as Druid does.
func TestClassicDiscoveryLeavesNestedDataOut(t *testing.T) {
	data := `{"timestamp":"2020-01-01T00:00:00Z","s":"a","tags":["t1","t2"],"o":{"x":1},"os":[{"x":1}],"n":5}
`
	b := build(t, inlineTask(data, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":[]},"granularitySpec":{"rollup":false}}`, ""))
	if got := strings.Join(b.segs[0].Dimensions, ","); got != "s,tags,n" {
		t.Fatalf("dimensions %s, want s,tags,n (the object and the list of objects left out)", got)
	}
	r := b.rows(t)[0]
	if r["n"] != "5" {
		t.Errorf("n stored as %#v, want the string 5", r["n"])
	}
	if tags, ok := r["tags"].([]string); !ok || strings.Join(tags, ",") != "t1,t2" {
		t.Errorf("tags stored as %#v, want a multi-value string", r["tags"])
	}
}

// includeAllDimensions keeps the declared dimensions and adds the other
// fields as strings (classic discovery).
func TestIncludeAllDimensions(t *testing.T) {
	b := build(t, inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"includeAllDimensions":true,"dimensions":[{"type":"long","name":"number"}]},
		"granularitySpec":{"rollup":false}}`, ""))
	if got := strings.Join(b.segs[0].Dimensions, ","); got != "number,animal,location" {
		t.Fatalf("dimensions %s, want number,animal,location", got)
	}
	if k := kinds(t, b); k["number"] != "long" || k["location"] != "string" {
		t.Errorf("kinds %v", k)
	}
}

// Discovered fields keep the order of the input document, as Druid's
// schemaless ingestion does (Jackson keeps key order): first record's keys
// as written, then new keys of later records; a malformed line is skipped.
func TestDiscoveryKeepsDocumentOrder(t *testing.T) {
	data := `{"timestamp":"2020-01-01T00:00:00Z","zeta":"a","alpha":1,"mid":2.5}
{"timestamp":"2020-01-01T00:00:00Z","zeta":"a",
{"timestamp":"2020-01-01T01:00:00Z","beta":"b","zeta":"c"}
`
	for _, typed := range []string{"false", "true"} {
		s, err := ParseSpec(inlineTask(data, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
			"dimensionsSpec":{"useSchemaDiscovery":`+typed+`},"granularitySpec":{"rollup":false}}`, `{"type":"index","maxParseExceptions":5}`))
		if err != nil {
			t.Fatal(err)
		}
		splits, err := s.Source.Splits(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		dims, _, err := discover(context.Background(), s, splits)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(dimNames(dims), ","); got != "zeta,alpha,mid,beta" {
			t.Errorf("useSchemaDiscovery %s: dimensions %s, want zeta,alpha,mid,beta", typed, got)
		}
	}
}

// A flattenSpec field is a field string discovery keeps even when it holds
// an object (Druid stores it as a string), unlike an undeclared nested key.
func TestClassicDiscoveryKeepsFlattenedNestedFields(t *testing.T) {
	d, _ := json.Marshal(`{"timestamp":"2020-01-01T00:00:00Z","s":"a","o":{},"p":{"x":1}}` + "\n")
	b := build(t, []byte(`{"type":"index","spec":{"dataSchema":{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":null},"granularitySpec":{"rollup":false}},
		"ioConfig":{"type":"index","inputSource":{"type":"inline","data":`+string(d)+`},
			"inputFormat":{"type":"json","flattenSpec":{"useFieldDiscovery":true,"fields":[{"type":"path","name":"o","expr":"$.o"}]}}}}}`))
	if got := strings.Join(b.segs[0].Dimensions, ","); got != "s,o" {
		t.Fatalf("dimensions %s, want s,o (the flattenSpec field kept, the other object left out)", got)
	}
}

// A transform is not a discovered dimension unless it shadows an input field
// (Druid: "fields generated by a transformSpec are not considered candidates
// for schemaless dimension interpretation"); a declared one is kept.
func TestDiscoveryLeavesNewTransformsOut(t *testing.T) {
	for _, c := range []struct{ dims, want string }{
		{`[]`, "animal,location,number"},
		{`[],"useSchemaDiscovery":true`, "animal,location,number"},
		{`["big"],"useSchemaDiscovery":true`, "big,animal,location,number"},
	} {
		b := build(t, inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
			"dimensionsSpec":{"dimensions":`+c.dims+`},"granularitySpec":{"rollup":false},
			"transformSpec":{"transforms":[{"type":"expression","name":"big","expression":"number * 10"},
				{"type":"expression","name":"animal","expression":"upper(animal)"}]}}`, ""))
		if got := strings.Join(b.segs[0].Dimensions, ","); got != c.want {
			t.Errorf("dimensions %s: %s, want %s", c.dims, got, c.want)
		}
		for _, r := range b.rows(t) {
			if a, _ := r["animal"].(string); a != strings.ToUpper(a) {
				t.Errorf("dimensions %s: animal %q, want the shadowing transform's upper case", c.dims, a)
			}
		}
	}
}
