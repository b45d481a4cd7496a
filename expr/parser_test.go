package expr

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestPrecedence(t *testing.T) {
	cases := []struct{ src, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a / b / c", "((a / b) / c)"},
		{"a ^ b ^ c", "(a ^ (b ^ c))"},
		{"a * b ^ c", "(a * (b ^ c))"},
		{"-a ^ b", "(-a ^ b)"},
		{"!a && b", "(!a && b)"},
		{"a < b == c", "((a < b) == c)"},
		{"a + b < c * d", "((a + b) < (c * d))"},
		{"a || b && c", "((a || b) && c)"},
		{"a && b || c", "((a && b) || c)"},
		{"a == b && c != d", "((a == b) && (c != d))"},
		{"a % b * c", "((a % b) * c)"},
		{"(a + b) * c", "((a + b) * c)"},
		{"- - a", "--a"},
		{"!!a", "!!a"},
		{"a <= b >= c", "((a <= b) >= c)"},
	}
	for _, c := range cases {
		e, err := Compile(c.src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		if got := e.String(); got != c.want {
			t.Errorf("Compile(%q).String() = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestPrecedenceValues(t *testing.T) {
	cases := []struct {
		src  string
		want Value
	}{
		{"1 + 2 * 3", Long(7)},
		{"(1 + 2) * 3", Long(9)},
		{"-2 ^ 2", Long(4)},
		{"2 ^ 3 ^ 2", Long(512)},
		{"10 - 4 - 3", Long(3)},
		{"100 / 10 / 5", Long(2)},
		{"7 % 4 * 2", Long(6)},
		{"1 < 2 == 1", Long(1)},
		{"1 || 0 && 0", Long(0)},
		{"0 && 0 || 1", Long(1)},
		{"!0 + 1", Long(2)},
		{"-3 % 2", Long(-1)},
		{"2 * -3", Long(-6)},
	}
	for _, c := range cases {
		checkEval(t, c.src, nil, c.want)
	}
}

func TestLiterals(t *testing.T) {
	cases := []struct {
		src  string
		want Value
	}{
		{"0", Long(0)},
		{"123", Long(123)},
		{"9223372036854775807", Long(math.MaxInt64)},
		{"-9223372036854775808", Long(math.MinInt64)},
		{"1.5", Double(1.5)},
		{"1.", Double(1)},
		{"1e3", Double(1000)},
		{"1E3", Double(1000)},
		{"2.5e-3", Double(0.0025)},
		{"1.e2", Double(100)},
		{"NaN", Double(math.NaN())},
		{"Infinity", Double(math.Inf(1))},
		{"-Infinity", Double(math.Inf(-1))},
		{"-1.5", Double(-1.5)},
		{"'abc'", String("abc")},
		{"''", String("")},
		{`'it\'s'`, String("it's")},
		{`'a\\b'`, String(`a\b`)},
		{`'tab\there'`, String("tab\there")},
		{`'\u00e9\n'`, String("é\n")},
		{`'\ud83d\ude00'`, String("😀")},
		{`'\/'`, String("/")},
		{`'caf\u00E9'`, String("café")},
		{"'héllo wörld'", String("héllo wörld")},
		{"null", Null},
		{"[1, 2, 3]", LongArray(1, 2, 3)},
		{"[1.0, 2]", DoubleArray(1, 2)},
		{"[1, 2.5]", DoubleArray(1, 2.5)},
		{"['a', 'b']", StringArray("a", "b")},
		{"[]", StringArray()},
		{"['a', null]", Array(TypeStringArray, []Value{String("a"), Null})},
		{"[1, null]", Array(TypeLongArray, []Value{Long(1), NullOf(TypeLong)})},
		{"[null]", Array(TypeStringArray, []Value{Null})},
		{"[-1, 2]", LongArray(-1, 2)},
		{"<LONG>[]", LongArray()},
		{"<LONG>[1, 2.7]", LongArray(1, 2)},
		{"<DOUBLE>[1, 2]", DoubleArray(1, 2)},
		{"<DOUBLE>[]", DoubleArray()},
		{"<STRING>[1, 'a', 2.5]", StringArray("1", "a", "2.5")},
		{"<STRING>[]", StringArray()},
		{"ARRAY<LONG>[1, '2']", LongArray(1, 2)},
		{"ARRAY<DOUBLE>[1, 2.5]", DoubleArray(1, 2.5)},
		{"ARRAY<STRING>['x', 1]", StringArray("x", "1")},
	}
	for _, c := range cases {
		checkEval(t, c.src, nil, c.want)
	}
}

func TestIdentifiers(t *testing.T) {
	b := MapBindings{"x": int64(1), "my col": int64(2), `we"ird`: int64(3), "$a_1": int64(4), "null_x": int64(5), "tab\tcol": int64(6)}
	checkEval(t, "x", b, Long(1))
	checkEval(t, `"my col"`, b, Long(2))
	checkEval(t, `"we\"ird"`, b, Long(3))
	checkEval(t, "$a_1", b, Long(4))
	checkEval(t, "null_x", b, Long(5))
	checkEval(t, `"tab\tcol"`, b, Long(6))
	checkEval(t, `"x" + x`, b, Long(2))
	checkEval(t, "missing", b, Null)

	e := MustCompile(`x + "my col" * x - missing + map(x -> x + y, [1])`)
	want := []string{"x", "my col", "missing", "y"}
	if got := e.RequiredColumns(); !reflect.DeepEqual(got, want) {
		t.Errorf("RequiredColumns = %v, want %v", got, want)
	}
	if got := MustCompile("1 + 2").RequiredColumns(); len(got) != 0 {
		t.Errorf("constant expression requires %v", got)
	}
}

func TestLambdaScoping(t *testing.T) {
	b := MapBindings{"x": []any{int64(1), int64(2)}, "y": int64(10)}
	// the lambda argument x shadows the column x inside the body only
	checkEval(t, "map(x -> x + y, x)", b, LongArray(11, 12))
	checkEval(t, "map((x) -> x * 2, [1, 2])", b, LongArray(2, 4))
	checkEval(t, "fold((x, acc) -> x + acc, x, y)", b, Long(13))
	checkEval(t, "map(a -> map(b -> a * b, [1, 2]), [3])", b, StringArray("[3, 6]"))
	checkEval(t, "cartesian_map((a, b) -> a * 10 + b, [1, 2], [3, 4])", b, LongArray(13, 14, 23, 24))
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		src string
		pos int
		msg string
	}{
		{"1 +", 3, "unexpected end of input"},
		{"(1 + 2", 6, `expected ")"`},
		{"1 + 2)", 5, `unexpected ")"`},
		{"'abc", 0, "unterminated string literal"},
		{`"abc`, 0, "unterminated quoted identifier"},
		{"foo(1)", 0, "function 'foo' is not defined"},
		{"x + foo(1)", 4, "function 'foo' is not defined"},
		{"1 # 2", 2, "unexpected character"},
		{"9223372036854775808", 0, "out of LONG range"},
		{"[1, 'a']", 0, "mixes strings and numbers"},
		{"[1, x]", 4, "array elements must be literals"},
		{"[1 2]", 3, `expected ","`},
		{`'bad \q escape'`, 5, "invalid escape"},
		{"abs()", 0, "needs 1 argument"},
		{"abs(1, 2)", 0, "needs 1 argument"},
		{"substring('a')", 0, "needs 3 argument"},
		{"map(1, [1])", 0, "needs a lambda"},
		{"map(x -> x, [1], [2])", 0, "argument"},
		{"map((x, y) -> x, [1])", 0, "lambda needs 1"},
		{"fold(x -> x, [1], 0)", 0, "lambda needs 2"},
		{"regexp_extract(x, y)", 0, "pattern must be a STRING literal"},
		{"regexp_extract(x, '(a')", 0, "regular expression"},
		{"regexp_extract(x, '(a)', 2)", 0, "no group 2"},
		{"like(x, y)", 0, "pattern must be a literal"},
		{"like(x, 'a', 'ab')", 0, "escape"},
		{"timestamp_floor(x, 'P1X')", 0, "invalid period"},
		{"timestamp_extract(x, 'FORTNIGHT')", 0, "unknown unit"},
		{"timestamp_format(x, 'yyyy', 'Mars/Olympus')", 0, "time zone"},
		{"cast(x, 'BLOB')", 0, "invalid type"},
		{"contains_string(x, y)", 0, "STRING literal"},
		{"mv_to_array('a')", 0, "identifier"},
		{"lookup(x, 'lkp')", 0, "not available"},
		{"x y", 2, `unexpected identifier "y"`},
		{"<LONG>['a']", 7, "cannot parse"},
		{"ARRAY<COMPLEX<json>>[]", 0, "unsupported array type"},
		{"", 0, "unexpected end of input"},
		{"-", 1, "unexpected end of input"},
		{"1 ->", 2, `unexpected "->"`},
	}
	for _, c := range cases {
		_, err := Compile(c.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) error = %v, want a SyntaxError", c.src, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("Compile(%q) = pos %d %q, want pos %d containing %q", c.src, se.Pos, se.Msg, c.pos, c.msg)
		}
		if !strings.Contains(se.Error(), "position") {
			t.Errorf("error text lacks the position: %v", se)
		}
	}
}

// TestStringRoundTrip checks that String() compiles back to an expression
// with the same rendering and the same value.
func TestStringRoundTrip(t *testing.T) {
	b := MapBindings{"x": int64(3), "y": 2.5, "s": "a'b\"c", "weird col": int64(1)}
	srcs := []string{
		"x + y * 2", "-x ^ 2", "!x || y < 1", `concat(s, 'q\'t', "weird col")`,
		"[1, 2, null]", "<DOUBLE>[1, 2]", "['a\\n', null]", "map(z -> z * x, [1, 2])",
		"cast(null, 'LONG')", "'a' + 1", "nvl(s, 'x')", "1.0E20 + x", "-1.5E-7 * x",
		"case_searched(x > 1, 'big', 'small')", "fold((a, acc) -> acc + a, [1, 2], 0.5)",
		"timestamp_floor(x, 'PT1H', null, 'UTC')", "NaN + x", "-Infinity", "Infinity * x",
	}
	for _, src := range srcs {
		e := MustCompile(src)
		again, err := Compile(e.String())
		if err != nil {
			t.Errorf("String() of %q = %q does not compile: %v", src, e.String(), err)
			continue
		}
		if again.String() != e.String() {
			t.Errorf("round trip of %q: %q then %q", src, e.String(), again.String())
		}
		v1, err1 := e.Eval(b)
		v2, err2 := again.Eval(b)
		if (err1 == nil) != (err2 == nil) || !sameValue(v1, v2) {
			t.Errorf("round trip of %q changed the value: %v (%v) vs %v (%v)", src, v1, err1, v2, err2)
		}
	}
}

func TestConstantFolding(t *testing.T) {
	e := MustCompile("1 + 2 * 3")
	if !e.IsConstant() || e.String() != "7" {
		t.Errorf("1 + 2 * 3 folded to %q", e.String())
	}
	if MustCompile("x + 1").IsConstant() {
		t.Error("x + 1 reported constant")
	}
	// errors are not folded away: they surface at evaluation
	e = MustCompile("1 / 0")
	if e.IsConstant() {
		t.Error("1 / 0 folded")
	}
	if _, err := e.Eval(nil); err == nil || !strings.Contains(err.Error(), "/ by zero") {
		t.Errorf("1 / 0 = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"x + y * 2", "-2^2", "concat('a', \"b c\", 1.5e3)", "[1, 2, null]", "<LONG>[1, 2.5]",
		"map(x -> x + 1, [1, 2])", "fold((x, acc) -> x + acc, a, 0)", "if(x > 1, 'a', 'b')",
		"timestamp_floor(__time, 'PT1H')", "'\\u00e9'", "ARRAY<STRING>['a']", "case_searched(a, 1, 2)",
		"regexp_extract(s, '(\\\\d+)', 1)", "!!-x", "1.", "\"unterminated", "(((", "array_slice(a, 1, 2)",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) returned a non-syntax error %T: %v", src, err, err)
			}
			if se.Pos < 0 || se.Pos > len(src) {
				t.Fatalf("Compile(%q): position %d out of range", src, se.Pos)
			}
			return
		}
		// evaluation must not panic whatever the bindings
		b := MapBindings{"x": int64(3), "y": 1.5, "s": "str", "a": []any{int64(1), int64(2)}}
		_, _ = e.Eval(b)
		_, _ = e.Eval(nil)
		again, err := Compile(e.String())
		if err != nil {
			t.Fatalf("String() of %q = %q does not compile: %v", src, e.String(), err)
		}
		if again.String() != e.String() {
			t.Fatalf("unstable rendering: %q -> %q -> %q", src, e.String(), again.String())
		}
	})
}

func TestNestingLimit(t *testing.T) {
	deep := strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000)
	if _, err := Compile(deep); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("deep nesting: %v", err)
	}
	if _, err := Compile(strings.Repeat("-", 10000) + "1"); err == nil {
		t.Error("deep unary chain accepted")
	}
	ok := strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100)
	if _, err := Compile(ok); err != nil {
		t.Errorf("moderate nesting rejected: %v", err)
	}
	long := strings.Repeat("1 + ", 5000) + "1"
	if v, err := MustCompile(long).Eval(nil); err != nil || v.Long() != 5001 {
		t.Errorf("long flat expression = %v, %v", v, err)
	}
}

func TestSizeLimits(t *testing.T) {
	if _, err := Compile(strings.Repeat("2 ^ ", 5000) + "1"); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("long right-associative chain: %v", err)
	}
	if _, err := Compile(strings.Repeat("x + ", 200000) + "1"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("huge expression: %v", err)
	}
}
