package server

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJacksonIndent(t *testing.T) {
	cases := map[string]string{
		`[]`: `[ ]`,
		`{}`: `{ }`,
		`[{"a":1,"b":[1,2,{}],"c":{"d":"x,y:z"}},{"e":[]}]`: "[ {\n  \"a\" : 1,\n  \"b\" : [ 1, 2, { } ],\n  \"c\" : {\n    \"d\" : \"x,y:z\"\n  }\n}, {\n  \"e\" : [ ]\n} ]",
		`{"s":"q\"uo{te}[]"}`:                               "{\n  \"s\" : \"q\\\"uo{te}[]\"\n}",
		`[[1,[2]],3]`:                                       `[ [ 1, [ 2 ] ], 3 ]`,
		` { "a" : [ ] , "b":{ } }`:                          "{\n  \"a\" : [ ],\n  \"b\" : { }\n}",
	}
	for in, want := range cases {
		if got := string(jacksonIndent([]byte(in))); got != want {
			t.Errorf("jacksonIndent(%s) =\n%s\nwant\n%s", in, got, want)
		}
	}
}

func FuzzJacksonIndent(f *testing.F) {
	for _, s := range []string{`[{"a":1,"b":[1,2,{}]}]`, `{"x":"\\\"","y":[[],{}]}`, `"s"`, `[1.5e3,null,true]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := jacksonIndent(in) // must not panic on any input
		if !json.Valid(in) {
			return
		}
		var a, b bytes.Buffer
		if err := json.Compact(&a, in); err != nil {
			return
		}
		if err := json.Compact(&b, out); err != nil || a.String() != b.String() {
			t.Fatalf("indenting changed the value:\n%s\n%s (%v)", in, out, err)
		}
	})
}
