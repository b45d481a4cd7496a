package aggregate

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"strata/expr"
)

// TestArrayFold checks the array kinds against an independent computation:
// every value appended (nulls included) or the distinct values sorted with
// nulls first, a partial per half merged equal to one state over all
// values, the wire form round-tripped, and a group without input null.
func TestArrayFold(t *testing.T) {
	vals := []any{int64(3), nil, int64(1), int64(3), int64(2), nil, int64(1)}
	for _, c := range []struct {
		op   string
		want []any
	}{
		{OpArrayAppend, vals},
		{OpArraySet, []any{nil, int64(1), int64(2), int64(3)}},
	} {
		spec := &Spec{Kind: KindArray, Op: c.op, Elem: ElemLong}
		whole := New(spec, 2)
		a, b := New(spec, 1), New(spec, 1)
		for i, v := range vals {
			if err := whole.AddValue(0, v); err != nil {
				t.Fatal(err)
			}
			half := a
			if i >= len(vals)/2 {
				half = b
			}
			if err := half.AddValue(0, v); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var wire State
		if err := json.Unmarshal(raw, &wire); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		wire.Bind(spec)
		if err := a.Combine(0, &wire, 0); err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string]*State{"whole": whole, "merged": a} {
			r, err := s.Result(0, true)
			if err != nil || r.Kind != ResultArray || !reflect.DeepEqual(r.Arr, c.want) || r.ArrType != "ARRAY<LONG>" {
				t.Errorf("%s %s: got %+v %v, want %v", c.op, name, r, err, c.want)
			}
		}
		if r, err := whole.Result(1, true); err != nil || r.Kind != ResultNull {
			t.Errorf("%s: a group without input is %+v %v, want null", c.op, r, err)
		}
	}
}

// TestArrayMaxSize checks that an array grown past maxSizeBytes fails (as
// Druid fails the query) when folded and when merged.
func TestArrayMaxSize(t *testing.T) {
	spec := &Spec{Kind: KindArray, Op: OpArrayAppend, Elem: ElemString, MaxSizeBytes: 40}
	s := New(spec, 1)
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = s.AddValue(0, "abcd")
	}
	var se *SizeError
	if !errors.As(err, &se) || se.Max != 40 || se.Type != "ARRAY<STRING>" {
		t.Fatalf("got %v, want a SizeError", err)
	}
	small := New(spec, 1)
	_ = small.AddValue(0, "abcd")
	big := New(&Spec{Kind: KindArray, Op: OpArrayAppend, Elem: ElemString, MaxSizeBytes: 1000}, 1)
	for range 10 {
		_ = big.AddValue(0, "abcd")
	}
	if err := small.Combine(0, big, 0); !errors.As(err, &se) {
		t.Fatalf("merge: got %v, want a SizeError", err)
	}
	if New(&Spec{Kind: KindArray, Op: OpArrayAppend}, 1).spec.maxSize() != DefaultMaxSizeBytes {
		t.Errorf("default maxSizeBytes")
	}
}

// TestArrayFinalize checks STRING_AGG's finalize: the array joined, and
// null for no input.
func TestArrayFinalize(t *testing.T) {
	fin, err := expr.Compile("if(array_length(o) == 0, null, array_to_string(o, '|'))")
	if err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Kind: KindArray, Op: OpArraySet, Finalize: fin, FinalizeIdentifier: "o"}
	s := New(spec, 2)
	for _, v := range []any{"b", "a", "b"} {
		if err := s.AddValue(0, v); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := s.Result(0, true); err != nil || r.Kind != ResultString || r.Str != "a|b" {
		t.Errorf("got %+v %v, want a|b", r, err)
	}
	if r, err := s.Result(1, true); err != nil || r.Kind != ResultNull {
		t.Errorf("no input: got %+v %v, want null", r, err)
	}
}

// TestArrayWireRejects checks that decoding refuses arrays that do not
// match the state (a data server's partial is not trusted blindly).
func TestArrayWireRejects(t *testing.T) {
	for _, raw := range []string{
		`{"kind":"ARRAY","op":"arrayAppend","null":[false],"elem":"LONG","arrs":[["x"]]}`,
		`{"kind":"ARRAY","op":"arrayAppend","null":[false,false],"elem":"LONG","arrs":[[1]]}`,
		`{"kind":"ARRAY","op":"arrayAppend","null":[true],"elem":"LONG","arrs":[[1]]}`,
		`{"kind":"ARRAY","op":"sum","null":[false],"elem":"LONG","arrs":[[1]]}`,
		`{"kind":"ARRAY","op":"arraySet","null":[false],"elem":"BYTES","arrs":[[1]]}`,
		`{"kind":"ARRAY","op":"arraySet","null":[false],"elem":"DOUBLE","arrs":[["one"]]}`,
	} {
		var s State
		if err := json.Unmarshal([]byte(raw), &s); err == nil {
			t.Errorf("%s: decoded", raw)
		}
	}
}
