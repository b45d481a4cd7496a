package expr

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"sort"
	"testing"
)

func TestValueConversions(t *testing.T) {
	cases := []struct {
		v      Value
		str    string
		strOK  bool
		long   int64
		longOK bool
		dbl    float64
		truthy bool
	}{
		{Long(7), "7", true, 7, true, 7, true},
		{Long(-1), "-1", true, -1, true, -1, false},
		{Double(2.5), "2.5", true, 2, true, 2.5, true},
		{Double(-2.5), "-2.5", true, -2, true, -2.5, false},
		{Double(1e7), "1.0E7", true, 10000000, true, 1e7, true},
		{Double(math.NaN()), "NaN", true, 0, true, math.NaN(), false},
		{String("12"), "12", true, 12, true, 12, false},
		{String("1.5"), "1.5", true, 1, true, 1.5, false},
		{String("true"), "true", true, 1, true, 1, true},
		{String("False"), "False", true, 0, true, 0, false},
		{String("abc"), "abc", true, 0, false, 0, false},
		{String(""), "", true, 0, false, 0, false},
		{String("1e3"), "1e3", true, 1000, true, 1000, false},
		{String("-Infinity"), "-Infinity", true, math.MinInt64, true, math.Inf(-1), false},
		{String("2.5d"), "2.5d", true, 2, true, 2.5, false},
		{String(".5"), ".5", true, 0, true, 0.5, false},
		{String("+7"), "+7", true, 7, true, 7, false},
		{String("1e"), "1e", true, 0, false, 0, false},
		{Null, "", false, 0, false, 0, false},
		{Value{}, "", false, 0, false, 0, false},
		{NullOf(TypeLong), "", false, 0, false, 0, false},
		{LongArray(3), "3", true, 3, true, 3, true},
		{LongArray(1, 2), "[1, 2]", true, 0, false, 0, false},
		{DoubleArray(0.5), "0.5", true, 0, true, 0.5, false},
		{StringArray("true"), "true", true, 1, true, 1, true},
		{Array(TypeStringArray, []Value{String("a"), Null}), "[a, null]", true, 0, false, 0, false},
		{StringArray(), "[]", true, 0, false, 0, false},
	}
	for _, c := range cases {
		s, ok := c.v.AsString()
		if s != c.str || ok != c.strOK {
			t.Errorf("%v.AsString() = %q, %v; want %q, %v", c.v, s, ok, c.str, c.strOK)
		}
		l, ok := c.v.AsLong()
		if l != c.long || ok != c.longOK {
			t.Errorf("%v.AsLong() = %d, %v; want %d, %v", c.v, l, ok, c.long, c.longOK)
		}
		d, _ := c.v.AsDouble()
		if !(d == c.dbl || (d != d && c.dbl != c.dbl)) {
			t.Errorf("%v.AsDouble() = %v, want %v", c.v, d, c.dbl)
		}
		if b := c.v.AsBool(); b != c.truthy {
			t.Errorf("%v.AsBool() = %v, want %v", c.v, b, c.truthy)
		}
	}
}

func TestCast(t *testing.T) {
	cases := []struct {
		v    Value
		to   Type
		want Value
		err  bool
	}{
		{Long(3), TypeDouble, Double(3), false},
		{Double(3.9), TypeLong, Long(3), false},
		{Double(-3.9), TypeLong, Long(-3), false},
		{Double(1e19), TypeLong, Long(math.MaxInt64), false},
		{String("x"), TypeLong, NullOf(TypeLong), false},
		{String("4.5"), TypeDouble, Double(4.5), false},
		{Long(3), TypeString, String("3"), false},
		{Double(0.1), TypeString, String("0.1"), false},
		{Long(3), TypeStringArray, StringArray("3"), false},
		{Null, TypeLongArray, NullOf(TypeLongArray), false},
		{StringArray("1", "x"), TypeLongArray, Array(TypeLongArray, []Value{Long(1), NullOf(TypeLong)}), false},
		{DoubleArray(1.5, 2.5), TypeLongArray, LongArray(1, 2), false},
		{LongArray(1, 2), TypeString, Value{}, true},
		{LongArray(9), TypeDouble, Double(9), false},
		{StringArray(), TypeLong, Value{}, true},
	}
	for _, c := range cases {
		got, err := c.v.Cast(c.to)
		if (err != nil) != c.err {
			t.Errorf("%v.Cast(%s) error = %v", c.v, c.to, err)
			continue
		}
		if !c.err && !sameValue(got, c.want) {
			t.Errorf("%v.Cast(%s) = %v (%s), want %v", c.v, c.to, got, got.Type(), c.want)
		}
	}
}

func TestFromAnyAndAny(t *testing.T) {
	cases := []struct {
		in   any
		want Value
		out  any
	}{
		{nil, Null, nil},
		{"s", String("s"), "s"},
		{true, Long(1), int64(1)},
		{int(3), Long(3), int64(3)},
		{uint32(3), Long(3), int64(3)},
		{float32(1.5), Double(1.5), 1.5},
		{2.5, Double(2.5), 2.5},
		{[]string{"a", "b"}, StringArray("a", "b"), []any{"a", "b"}},
		{[]int64{1}, LongArray(1), []any{int64(1)}},
		{[]any{int64(1), 2.5}, DoubleArray(1, 2.5), []any{1.0, 2.5}},
		{[]any{int64(1), "a"}, StringArray("1", "a"), []any{"1", "a"}},
		{[]any{nil, int64(2)}, Array(TypeLongArray, []Value{NullOf(TypeLong), Long(2)}), []any{nil, int64(2)}},
		{[]any{}, StringArray(), []any{}},
		{Long(4), Long(4), int64(4)},
		{struct{}{}, Null, nil},
		{json.Number("12"), Long(12), int64(12)},
		{json.Number("1.5e3"), Double(1500), 1500.0},
	}
	for _, c := range cases {
		got := FromAny(c.in)
		if !sameValue(got, c.want) {
			t.Errorf("FromAny(%#v) = %v (%s), want %v (%s)", c.in, got, got.Type(), c.want, c.want.Type())
		}
		if out := got.Any(); !reflect.DeepEqual(out, c.out) {
			t.Errorf("FromAny(%#v).Any() = %#v, want %#v", c.in, out, c.out)
		}
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]Type{
		"LONG": TypeLong, "long": TypeLong, "DOUBLE": TypeDouble, "FLOAT": TypeDouble, "STRING": TypeString,
		"ARRAY<LONG>": TypeLongArray, "array<double>": TypeDoubleArray, "ARRAY<STRING>": TypeStringArray,
		"STRING_ARRAY": TypeStringArray,
	} {
		if got, ok := ParseType(in); !ok || got != want {
			t.Errorf("ParseType(%q) = %s, %v", in, got, ok)
		}
		if got, _ := ParseType(want.String()); got != want {
			t.Errorf("ParseType(%s.String()) = %s", want, got)
		}
	}
	if _, ok := ParseType("COMPLEX<json>"); ok {
		t.Error("COMPLEX accepted")
	}
}

func TestCompareJavaStrings(t *testing.T) {
	// Java orders by UTF-16 code units: U+FF61 (BMP, above the surrogates)
	// sorts after U+1F600 (encoded with a D83D high surrogate).
	words := []string{"b", "a", "", "ab", "é", "z", "\uff61", "😀", "A", "aa", "\u00e9x"}
	sort.Slice(words, func(i, j int) bool { return compareJavaStrings(words[i], words[j]) < 0 })
	want := []string{"", "A", "a", "aa", "ab", "b", "z", "é", "\u00e9x", "😀", "\uff61"}
	if !reflect.DeepEqual(words, want) {
		t.Errorf("Java order = %q, want %q", words, want)
	}
	if compareJavaStrings("x", "x") != 0 {
		t.Error("equal strings compare non-zero")
	}
}

func TestJavaDoubleCompare(t *testing.T) {
	order := []float64{math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1), math.NaN()}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := javaDoubleCompare(order[i], order[j]); got != want {
				t.Errorf("compare(%v, %v) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
}

func TestJavaSplit(t *testing.T) {
	cases := []struct {
		s, re string
		want  []string
	}{
		{"a,b,c", ",", []string{"a", "b", "c"}},
		{"a,,b,,", ",", []string{"a", "", "b"}},
		{",a", ",", []string{"", "a"}},
		{"", ",", []string{""}},
		{",,,", ",", []string{}},
		{"abc", "", []string{"a", "b", "c"}},
		{"a1b22c", "[0-9]+", []string{"a", "b", "c"}},
		{"abc", "x", []string{"abc"}},
	}
	for _, c := range cases {
		got := javaSplit(regexp.MustCompile(c.re), c.s)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("split(%q, %q) = %q, want %q", c.s, c.re, got, c.want)
		}
	}
}

func TestBindingsAreConsulted(t *testing.T) {
	e := MustCompile("a + b")
	var seen []string
	b := bindingsFunc(func(name string) Value {
		seen = append(seen, name)
		return Long(1)
	})
	v, err := e.Eval(b)
	if err != nil || v.Long() != 2 {
		t.Fatalf("a + b = %v, %v", v, err)
	}
	if !reflect.DeepEqual(seen, []string{"a", "b"}) {
		t.Errorf("bindings read %v", seen)
	}
	// a nil Bindings reads every column as null
	if v, err := e.Eval(nil); err != nil || !v.IsNull() {
		t.Errorf("Eval(nil) = %v, %v", v, err)
	}
}

type bindingsFunc func(string) Value

func (f bindingsFunc) Get(name string) Value { return f(name) }

func TestConcurrentEval(t *testing.T) {
	e := MustCompile("fold((x, acc) -> acc + x * k, [1, 2, 3], 0) + strlen(regexp_replace(s, concat('[', s, ']'), 'xy')) - 2")
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func(k int64) {
			defer func() { done <- true }()
			for i := 0; i < 200; i++ {
				v, err := e.Eval(MapBindings{"k": k, "s": "1"})
				if err != nil || v.Type() != TypeLong || v.Long() != 6*k {
					t.Errorf("k=%d: %v %v", k, v, err)
					return
				}
			}
		}(int64(g))
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
