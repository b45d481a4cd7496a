package expr

import (
	"math"
	"strings"
	"testing"
)

// sameValue compares type, nullness and payload (doubles by bits, NaN equal).
func sameValue(a, b Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull() && a.Type() == b.Type()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.typ {
	case TypeLong:
		return a.Long() == b.Long()
	case TypeDouble:
		x, y := a.Double(), b.Double()
		return math.Float64bits(x) == math.Float64bits(y) || (x != x && y != y)
	case TypeString:
		return a.str == b.str
	}
	if len(a.elems()) != len(b.elems()) {
		return false
	}
	for i := range a.elems() {
		if !sameValue(a.elems()[i], b.elems()[i]) {
			return false
		}
	}
	return true
}

// anyNull matches a null of any type.
var anyNull = Value{typ: 200}

func checkEval(t *testing.T, src string, b Bindings, want Value) {
	t.Helper()
	e, err := Compile(src)
	if err != nil {
		t.Errorf("Compile(%q): %v", src, err)
		return
	}
	got, err := e.Eval(b)
	if err != nil {
		t.Errorf("Eval(%q): unexpected error %v", src, err)
		return
	}
	if want.typ == anyNull.typ {
		if !got.IsNull() {
			t.Errorf("Eval(%q) = %v, want null", src, got)
		}
		return
	}
	if !sameValue(got, want) {
		t.Errorf("Eval(%q) = %v (%s), want %v (%s)", src, got, got.Type(), want, want.Type())
	}
}

func checkEvalError(t *testing.T, src string, b Bindings, contains string) {
	t.Helper()
	e, err := Compile(src)
	if err != nil {
		t.Errorf("Compile(%q): %v", src, err)
		return
	}
	got, err := e.Eval(b)
	if err == nil {
		t.Errorf("Eval(%q) = %v, want an error containing %q", src, got, contains)
		return
	}
	if _, ok := err.(*EvalError); !ok {
		t.Errorf("Eval(%q) error %T is not an *EvalError", src, err)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Errorf("Eval(%q) error %q does not contain %q", src, err, contains)
	}
}

var testRow = MapBindings{
	"l": int64(7), "l0": int64(0), "neg": int64(-3), "d": 2.5, "dz": 0.0,
	"s": "hello", "sn": "12", "sd": "2.5", "st": "TRUE", "e": "",
	"n": nil, "ln": NullOf(TypeLong), "dn": NullOf(TypeDouble),
	"arr": []any{"a", "b", "c"}, "larr": []int64{1, 2, 3}, "darr": []float64{1.5, 2.5}, "one": []string{"x"},
	"t": int64(1377993600000), // 2013-09-01T00:00:00Z, a Sunday
}

type evalCase struct {
	src  string
	want Value
	err  string // non-empty: evaluation must fail with this text
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		if c.err != "" {
			checkEvalError(t, c.src, testRow, c.err)
			continue
		}
		checkEval(t, c.src, testRow, c.want)
	}
}

var (
	L  = Long
	D  = Double
	S  = String
	NL = NullOf(TypeLong)
	ND = NullOf(TypeDouble)
	NS = NullOf(TypeString)
)

func TestArithmetic(t *testing.T) {
	runCases(t, []evalCase{
		{src: "l + 1", want: L(8)},
		{src: "l + d", want: D(9.5)},
		{src: "l - d", want: D(4.5)},
		{src: "l * d", want: D(17.5)},
		{src: "l / 2", want: L(3)},
		{src: "-l / 2", want: L(-3)},
		{src: "l / 2.0", want: D(3.5)},
		{src: "l % 3", want: L(1)},
		{src: "neg % 2", want: L(-1)},
		{src: "d % 1", want: D(0.5)},
		{src: "-d % 1", want: D(-0.5)},
		{src: "l / 0", err: "/ by zero"},
		{src: "l % l0", err: "/ by zero"},
		{src: "d / 0", want: D(math.Inf(1))},
		{src: "-d / 0", want: D(math.Inf(-1))},
		{src: "dz / dz", want: D(math.NaN())},
		{src: "d % 0", want: D(math.NaN())},
		{src: "l ^ 2", want: L(49)},
		{src: "2 ^ 62", want: L(1 << 62)},
		{src: "2 ^ 63", want: L(math.MinInt64)},
		{src: "2 ^ 64", want: L(0)},
		{src: "3 ^ 41", want: L(-420491770248316829)}, // wraps like Guava LongMath.pow
		{src: "-1 ^ 3", want: L(-1)},
		{src: "0 ^ 0", want: L(1)},
		{src: "2 ^ -1", err: "must be >= 0"},
		{src: "2.0 ^ -1", want: D(0.5)},
		{src: "2 ^ 0.5", want: D(math.Sqrt2)},
		{src: "l * 9223372036854775807", want: L(9223372036854775807 * 7 % (1 << 63))},
		{src: "9223372036854775807 + 1", want: L(math.MinInt64)},
		{src: "-9223372036854775808 / -1", want: L(math.MinInt64)},
		{src: "-(-9223372036854775808)", want: L(math.MinInt64)},
		// strings
		{src: "s + 'x'", want: S("hellox")},
		{src: "s + 1", want: ND},
		{src: "sn + 1", want: D(13)},
		{src: "sn - 1", want: D(11)},
		{src: "sn * 2", want: D(24)},
		{src: "sn + sd", want: S("122.5")},
		{src: "sn * sd", err: "not supported on type STRING"},
		{src: "s - s", err: "not supported on type STRING"},
		{src: "st + 1", want: D(2)},
		{src: "e + 1", want: ND},
		{src: "'1e2' + 1", want: D(101)},
		{src: "'0x10' + 1", want: ND},
		{src: "' 1' + 1", want: ND},
		// nulls
		{src: "n + 1", want: NL},
		{src: "ln * 2", want: NL},
		{src: "dn - 1", want: NL}, // a null side takes the other side's type, as in Druid
		{src: "n + 'a'", want: NS},
		{src: "n + 1.5", want: ND},
		{src: "null + null", want: NS},
		{src: "ln / 0", want: NL},
		{src: "l / ln", want: NL},
		// arrays read as numbers only with one element
		{src: "larr + 1", want: ND},
		{src: "[5] + 1", want: D(6)},
		// unary
		{src: "-l", want: L(-7)},
		{src: "-d", want: D(-2.5)},
		{src: "-n", want: anyNull},
		{src: "-ln", want: NL},
		{src: "-s", err: "not supported on type STRING"},
		{src: "--l", want: L(7)},
	})
}

func TestComparisonsAndLogic(t *testing.T) {
	runCases(t, []evalCase{
		{src: "l > d", want: L(1)},
		{src: "l == 7.0", want: L(1)},
		{src: "l != 7", want: L(0)},
		{src: "l >= 7", want: L(1)},
		{src: "l <= 6", want: L(0)},
		{src: "s < 'help'", want: L(1)},
		{src: "s == 'hello'", want: L(1)},
		{src: "s != 'hello'", want: L(0)},
		{src: "'b' > 'a'", want: L(1)},
		{src: "'' < 'a'", want: L(1)},
		{src: "sn < 9", want: L(0)},
		{src: "sn < '9'", want: L(1)},
		{src: "sn == 12", want: L(1)},
		{src: "s < 1", want: NL},
		{src: "n == n", want: NL},
		{src: "n == 1", want: NL},
		{src: "ln < 1", want: NL},
		{src: "NaN == NaN", want: L(0)},
		{src: "NaN != NaN", want: L(1)},
		{src: "NaN > 1", want: L(1)},
		{src: "NaN >= NaN", want: L(1)},
		{src: "-0.0 < 0.0", want: L(1)},
		{src: "-0.0 == 0.0", want: L(1)},
		{src: "[1, 2] == [1, 2]", want: L(1)},
		{src: "[1, 2] < [1, 3]", want: L(1)},
		{src: "[1, 2] < [1, 2, 0]", want: L(1)},
		{src: "larr == [1.0, 2.0, 3.0]", want: L(1)},
		{src: "['a', null] < ['a', 'b']", want: L(1)},
		{src: "arr == ['a', 'b', 'c']", want: L(1)},
		{src: "[1] == 1", want: L(1)},
		// logic: booleans are LONG 1/0, truthiness > 0 or 'true'
		{src: "100 && 11", want: L(1)},
		{src: "0.7 || 0.3", want: L(1)},
		{src: "100 && 0", want: L(0)},
		{src: "'troo' && 'true'", want: L(0)},
		{src: "'troo' || 'true'", want: L(1)},
		{src: "1 && 'TRUE'", want: L(1)},
		{src: "-1 || 0", want: L(0)},
		{src: "0.5 && 1", want: L(1)},
		{src: "n || 1", want: L(1)},
		{src: "1 || n", want: L(1)},
		{src: "n || 0", want: NL},
		{src: "0 || n", want: NL},
		{src: "n || n", want: NL},
		{src: "n && 0", want: L(0)},
		{src: "0 && n", want: L(0)},
		{src: "n && 1", want: NL},
		{src: "1 && n", want: NL},
		{src: "n && n", want: NL},
		{src: "0 && (1 / 0)", want: L(0)}, // short circuit: no division
		{src: "1 || (1 / 0)", want: L(1)},
		{src: "!n", want: NL},
		{src: "!s", want: L(1)},
		{src: "!st", want: L(0)},
		{src: "!-1", want: L(1)},
		{src: "!0.5", want: L(0)},
		{src: "!l", want: L(0)},
		{src: "!larr", want: L(1)},
		{src: "![2]", want: L(0)},
	})
}

func TestGeneralFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "cast(sd, 'DOUBLE')", want: D(2.5)},
		{src: "cast(sd, 'LONG')", want: L(2)},
		{src: "cast(s, 'LONG')", want: NL},
		{src: "cast(d, 'LONG')", want: L(2)},
		{src: "cast(-d, 'LONG')", want: L(-2)},
		{src: "cast(l, 'STRING')", want: S("7")},
		{src: "cast(d, 'STRING')", want: S("2.5")},
		{src: "cast(1e7, 'STRING')", want: S("1.0E7")},
		{src: "cast(l, 'double')", want: D(7)},
		{src: "cast(l, 'FLOAT')", want: D(7)},
		{src: "cast(n, 'LONG')", want: NL},
		{src: "cast(l, 'ARRAY<LONG>')", want: LongArray(7)},
		{src: "cast(s, 'ARRAY<STRING>')", want: StringArray("hello")},
		{src: "cast(larr, 'ARRAY<STRING>')", want: StringArray("1", "2", "3")},
		{src: "cast(larr, 'ARRAY<DOUBLE>')", want: DoubleArray(1, 2, 3)},
		{src: "cast(arr, 'ARRAY<LONG>')", want: Array(TypeLongArray, []Value{NL, NL, NL})},
		{src: "cast(one, 'STRING')", want: S("x")},
		{src: "cast(larr, 'LONG')", err: "cannot cast"},
		{src: "cast(st, 'LONG')", want: L(1)},
		{src: "cast('false', 'DOUBLE')", want: D(0)},
		{src: "cast(1e20, 'LONG')", want: L(math.MaxInt64)},
		{src: "cast(NaN, 'LONG')", want: L(0)},
		{src: "cast('99999999999999999999', 'LONG')", want: L(math.MaxInt64)},
		{src: "cast(l, s)", err: "invalid type"},
		{src: "if(l > 5, 'a', 'b')", want: S("a")},
		{src: "if(n, 'a', 'b')", want: S("b")},
		{src: "if('true', 1, 2)", want: L(1)},
		{src: "if(0, 1 / 0, 2)", want: L(2)},
		{src: "nvl(n, 'x')", want: S("x")},
		{src: "nvl(l, 0)", want: L(7)},
		{src: "nvl(n, n)", want: anyNull},
		{src: "nvl(e, 'x')", want: S("")},
		{src: "coalesce(n, ln, 3)", want: L(3)},
		{src: "coalesce(n)", want: anyNull},
		{src: "coalesce(s, 1)", want: S("hello")},
		{src: "coalesce(n, 1, 1 / 0)", want: L(1)},
		{src: "case_searched(l > 10, 'a', l > 5, 'b', 'c')", want: S("b")},
		{src: "case_searched(0, 'a')", want: anyNull},
		{src: "case_searched(n, 'a', 'z')", want: S("z")},
		{src: "case_simple(l, 1, 'a', 7, 'b', 'c')", want: S("b")},
		{src: "case_simple(l, 7.0, 'x')", want: S("x")},
		{src: "case_simple(n, n, 'a', 'b')", want: S("b")},
		{src: "case_simple(s, 'hello', 1)", want: L(1)},
		{src: "case_simple(l, 1, 'a')", want: anyNull},
		{src: "case_simple(sn, 12, 'num')", want: S("num")},
		{src: "isnull(n)", want: L(1)},
		{src: "isnull(ln)", want: L(1)},
		{src: "isnull(l)", want: L(0)},
		{src: "isnull(e)", want: L(0)},
		{src: "notnull(n)", want: L(0)},
		{src: "notnull(arr)", want: L(1)},
		{src: "IsNull(n)", want: L(1)},
	})
}

func TestStringFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "like(s, 'he%')", want: L(1)},
		{src: "like(s, 'h_llo')", want: L(1)},
		{src: "like(s, 'H%')", want: L(0)},
		{src: "like(s, '%ll%')", want: L(1)},
		{src: "like(n, '%')", want: L(0)},
		{src: "like('a%b', 'a!%b', '!')", want: L(1)},
		{src: "like('axb', 'a!%b', '!')", want: L(0)},
		{src: "like('a\\nb', 'a%b')", want: L(1)},
		{src: "like('.*', '.*')", want: L(1)},
		{src: "like('abc', '.*')", want: L(0)},
		{src: "like(l, '7')", want: L(1)},
		{src: "concat(s, ' ', l)", want: S("hello 7")},
		{src: "concat(s, n)", want: anyNull},
		{src: "concat()", want: anyNull},
		{src: "concat(d)", want: S("2.5")},
		{src: "concat(larr)", want: S("[1, 2, 3]")},
		{src: "concat(one, 'y')", want: S("xy")},
		{src: "concat(e, e)", want: S("")},
		{src: "format('%s-%d', s, l)", want: S("hello-7")},
		{src: "format('%.2f', d)", want: S("2.50")},
		{src: "format('%5s|', 'ab')", want: S("   ab|")},
		{src: "format('%-5s|', 'ab')", want: S("ab   |")},
		{src: "format('%05d', 42)", want: S("00042")},
		{src: "format('%05d', -42)", want: S("-0042")},
		{src: "format('%,d', 1234567)", want: S("1,234,567")},
		{src: "format('%x', 255)", want: S("ff")},
		{src: "format('%X', 255)", want: S("FF")},
		{src: "format('%x', -1)", want: S("ffffffffffffffff")},
		{src: "format('%e', 12345.678)", want: S("1.234568e+04")},
		{src: "format('%.0f', 2.5)", want: S("3")},
		{src: "format('%.1f', 0.15)", want: S("0.2")},
		{src: "format('%.2f', 1.005)", want: S("1.01")},
		{src: "format('%.3f', -0.0005)", want: S("-0.001")},
		{src: "format('%f', 1e20)", want: S("100000000000000000000.000000")},
		{src: "format('%d', 2.5)", want: S("%d; 2.5")},
		{src: "format('%f', 2)", want: S("%f; 2")},
		{src: "format('%s', n)", want: S("null")},
		{src: "format(n, 1)", want: anyNull},
		{src: "format('%%')", want: S("%")},
		{src: "format('a%nb')", want: S("a\nb")},
		{src: "format('%s %s', 'a')", want: S("%s %s; a")},
		{src: "format('%2$s %1$s', 'a', 'b')", want: S("b a")},
		{src: "format('%s %<s', 'a')", want: S("a a")},
		{src: "format('%b %b', n, 'x')", want: S("false true")},
		{src: "format('%10.3f|', 3.14159)", want: S("     3.142|")},
		{src: "format('%+d %+d', 5, -5)", want: S("+5 -5")},
		{src: "format('%(d', -5)", want: S("(5)")},
		{src: "format('%g', 0.0001234)", want: S("0.000123400")},
		{src: "format('%g', 123456789.0)", want: S("1.23457e+08")},
		{src: "format('%.3s', 'abcdef')", want: S("abc")},
		{src: "format('%S', 'abc')", want: S("ABC")},
		{src: "format('%s', NaN)", want: S("NaN")},
		{src: "format('%q', 1)", want: S("%q; 1")},
		{src: "strlen(s)", want: L(5)},
		{src: "strlen('😀')", want: L(2)},
		{src: "strlen('héllo')", want: L(5)},
		{src: "strlen(n)", want: NL},
		{src: "strlen(e)", want: L(0)},
		{src: "strlen(l)", want: L(1)},
		{src: "strpos(s, 'l')", want: L(2)},
		{src: "strpos(s, 'l', 3)", want: L(3)},
		{src: "strpos(s, 'z')", want: L(-1)},
		{src: "strpos(n, 'a')", want: NL},
		{src: "strpos(s, n)", want: NL},
		{src: "strpos(s, '')", want: L(0)},
		{src: "strpos(s, 'h', -5)", want: L(0)},
		{src: "strpos(s, '', 10)", want: L(5)},
		{src: "strpos('😀a', 'a')", want: L(2)},
		{src: "substring(s, 1, 3)", want: S("ell")},
		{src: "substring(s, 1, -1)", want: S("ello")},
		{src: "substring(s, 0, 100)", want: S("hello")},
		{src: "substring(s, 5, 1)", want: anyNull},
		{src: "substring(s, 10, 1)", want: anyNull},
		{src: "substring(n, 0, 1)", want: anyNull},
		{src: "substring(s, -1, 2)", err: "negative"},
		{src: "substring('😀ab', 2, 1)", want: S("a")},
		{src: "substring('héllo', 1, 2)", want: S("él")},
		{src: "left(s, 2)", want: S("he")},
		{src: "left(s, 10)", want: S("hello")},
		{src: "right(s, 3)", want: S("llo")},
		{src: "right(s, 0)", want: S("")},
		{src: "left(n, 2)", want: anyNull},
		{src: "left(s, -1)", err: "positive"},
		{src: "left(l, 1)", err: "STRING as first argument"},
		{src: "left(s, '2')", err: "LONG as second argument"},
		{src: "replace(s, 'l', 'L')", want: S("heLLo")},
		{src: "replace(s, '', '-')", want: S("-h-e-l-l-o-")},
		{src: "replace(n, 'a', 'b')", want: anyNull},
		{src: "replace(s, 'x', 'y')", want: S("hello")},
		{src: "lower('ABC')", want: S("abc")},
		{src: "upper(s)", want: S("HELLO")},
		{src: "lower(n)", want: anyNull},
		{src: "upper(l)", want: S("7")},
		{src: "reverse(s)", want: S("olleh")},
		{src: "reverse(n)", want: anyNull},
		{src: "reverse('a😀b')", want: S("b😀a")},
		{src: "reverse(l)", err: "needs a STRING"},
		{src: "repeat('ab', 3)", want: S("ababab")},
		{src: "repeat('ab', 0)", want: anyNull},
		{src: "repeat(n, 2)", want: anyNull},
		{src: "repeat(s, -1)", want: anyNull},
		{src: "repeat(l, 2)", err: "STRING as first argument"},
		{src: "repeat('ab', 99999999)", err: "too large"},
		{src: "lpad(s, 8, 'xy')", want: S("xyxhello")},
		{src: "lpad(s, 3, 'x')", want: S("hel")},
		{src: "rpad(s, 8, 'xy')", want: S("helloxyx")},
		{src: "rpad(s, 3, 'x')", want: S("hel")},
		{src: "lpad(s, 0, 'x')", want: anyNull},
		{src: "lpad(s, -1, 'x')", want: anyNull},
		{src: "lpad(n, 5, 'x')", want: anyNull},
		{src: "lpad(s, 5, n)", want: anyNull},
		{src: "lpad(s, 8, '')", want: S("hello")},
		{src: "rpad(s, 2, '')", want: S("he")},
		{src: "parse_long('123')", want: L(123)},
		{src: "parse_long('ff', 16)", want: L(255)},
		{src: "parse_long('0xff', 16)", want: L(255)},
		{src: "parse_long('-101', 2)", want: L(-5)},
		{src: "parse_long('+5')", want: L(5)},
		{src: "parse_long('12.5')", want: NL},
		{src: "parse_long(n)", want: NL},
		{src: "parse_long('')", want: NL},
		{src: "parse_long(' 1')", want: NL},
		{src: "parse_long('99999999999999999999')", want: NL},
		{src: "parse_long(12)", want: L(12)},
		{src: "parse_long('z', 99)", want: NL},
		{src: "trim('  ab  ')", want: S("ab")},
		{src: "ltrim('  ab  ')", want: S("ab  ")},
		{src: "rtrim('  ab  ')", want: S("  ab")},
		{src: "trim('xxabxx', 'x')", want: S("ab")},
		{src: "trim('abcba', 'ab')", want: S("c")},
		{src: "trim(n)", want: anyNull},
		{src: "trim('ab', n)", want: S("ab")},
		{src: "trim(' ab ', s)", want: S(" ab ")},
		{src: "trim(l)", want: L(7)},
		{src: "trim(s, e)", want: S("hello")},
		{src: "trim('\\tab ')", want: S("\tab")},
		{src: "contains_string(s, 'ell')", want: L(1)},
		{src: "contains_string(s, 'ELL')", want: L(0)},
		{src: "icontains_string(s, 'ELL')", want: L(1)},
		// A null input is null (Druid's SQL-compatible contains_string,
		// icontains_string and regexp_like), not false.
		{src: "contains_string(n, 'a')", want: anyNull},
		{src: "icontains_string(n, '')", want: anyNull},
		{src: "contains_string(s, '')", want: L(1)},
		{src: "regexp_extract(s, 'l+')", want: S("ll")},
		{src: "regexp_extract(s, '(h)(e)', 2)", want: S("e")},
		{src: "regexp_extract(s, 'z')", want: anyNull},
		{src: "regexp_extract(n, '.')", want: anyNull},
		{src: "regexp_extract('a1b22', '[0-9]+')", want: S("1")},
		{src: "regexp_extract(s, '(z)?h', 1)", want: anyNull},
		{src: "regexp_extract(s, '^(.)', 0)", want: S("h")},
		{src: "regexp_like(s, '^h.*o$')", want: L(1)},
		{src: "regexp_like(s, 'x')", want: L(0)},
		{src: "regexp_like(n, '.*')", want: anyNull},
		{src: "regexp_like(s, 'LL')", want: L(0)},
		{src: "regexp_like(s, '(?i)LL')", want: L(1)},
		{src: "regexp_replace(s, 'l', 'L')", want: S("heLLo")},
		{src: "regexp_replace(s, '(l+)', '[$1]')", want: S("he[ll]o")},
		{src: "regexp_replace(s, 'l', '\\\\$')", want: S("he$$o")},
		{src: "regexp_replace(s, '(?P<x>e)', '${x}${x}')", want: S("heello")},
		{src: "regexp_replace('abc', 'x*', '-')", want: S("-a-b-c-")},
		{src: "regexp_replace(n, 'a', 'b')", want: anyNull},
		{src: "regexp_replace(s, s, 'x')", want: S("x")},
		{src: "regexp_replace(s, n, 'x')", want: anyNull},
		{src: "regexp_replace(s, 'l', '$2')", err: "no group 2"},
		{src: "regexp_replace(s, concat('(', s), 'x')", err: "regular expression"},
	})
}

func TestArrayFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "array(1, 2)", want: LongArray(1, 2)},
		{src: "array(1, 2.7)", want: LongArray(1, 2)},
		{src: "array('a', 1)", want: StringArray("a", "1")},
		{src: "array(1.5, 2)", want: DoubleArray(1.5, 2)},
		{src: "array(n, 1)", want: Array(TypeStringArray, []Value{NS, S("1")})},
		{src: "array(1, 'x')", want: Array(TypeLongArray, []Value{L(1), NL})},
		{src: "array(l, d, sn)", want: LongArray(7, 2, 12)},
		{src: "array(larr)", err: "nested"},
		{src: "array_length(larr)", want: L(3)},
		{src: "array_length(n)", want: NL},
		{src: "array_length(l)", want: L(1)},
		{src: "array_length([])", want: L(0)},
		{src: "array_offset(larr, 1)", want: L(2)},
		{src: "array_offset(larr, 3)", want: NL},
		{src: "array_offset(larr, -1)", want: NL},
		{src: "array_offset(n, 0)", want: anyNull},
		{src: "array_ordinal(larr, 1)", want: L(1)},
		{src: "array_ordinal(larr, 0)", want: NL},
		{src: "array_ordinal(arr, 3)", want: S("c")},
		{src: "array_contains(larr, 2)", want: L(1)},
		{src: "array_contains(larr, [1, 3])", want: L(1)},
		{src: "array_contains(larr, [1, 4])", want: L(0)},
		{src: "array_contains(larr, 2.0)", want: L(1)},
		{src: "array_contains(larr, 2.5)", want: L(0)},
		{src: "array_contains(larr, '2')", want: L(1)},
		{src: "array_contains(larr, n)", want: NL},
		{src: "array_contains(n, 1)", want: NL},
		{src: "array_contains(arr, 'b')", want: L(1)},
		{src: "array_contains(arr, [])", want: L(1)},
		{src: "array_overlap(larr, [3, 4])", want: L(1)},
		{src: "array_overlap(larr, [5])", want: L(0)},
		{src: "array_overlap(larr, n)", want: NL},
		{src: "scalar_in_array(2, larr)", want: L(1)},
		{src: "scalar_in_array(2.5, larr)", want: L(0)},
		{src: "scalar_in_array(n, larr)", want: NL},
		{src: "scalar_in_array(2, n)", want: NL},
		{src: "scalar_in_array('b', arr)", want: L(1)},
		{src: "scalar_in_array(larr, larr)", err: "scalar"},
		{src: "array_offset_of(larr, 3)", want: L(2)},
		{src: "array_offset_of(larr, 9)", want: NL},
		{src: "array_ordinal_of(arr, 'a')", want: L(1)},
		{src: "array_offset_of(n, 1)", want: NL},
		{src: "array_offset_of(larr, larr)", err: "scalar"},
		{src: "array_append(larr, 4)", want: LongArray(1, 2, 3, 4)},
		{src: "array_append(larr, 4.7)", want: LongArray(1, 2, 3, 4)},
		{src: "array_append(larr, n)", want: Array(TypeLongArray, []Value{L(1), L(2), L(3), NL})},
		{src: "array_append(n, 1)", want: anyNull},
		{src: "array_prepend(0, larr)", want: LongArray(0, 1, 2, 3)},
		{src: "array_append(arr, 1)", want: StringArray("a", "b", "c", "1")},
		{src: "array_append(s, 'x')", want: StringArray("hello", "x")},
		{src: "array_concat(larr, [4, 5])", want: LongArray(1, 2, 3, 4, 5)},
		{src: "array_concat(larr, n)", want: anyNull},
		{src: "array_concat(n, larr)", want: anyNull},
		{src: "array_concat(larr, ['6'])", want: LongArray(1, 2, 3, 6)},
		{src: "array_set_add([3, 1, 3], 2)", want: LongArray(1, 2, 3)},
		{src: "array_set_add(arr, n)", want: Array(TypeStringArray, []Value{NS, S("a"), S("b"), S("c")})},
		{src: "array_set_add_all([2, 1], [3, 1])", want: LongArray(1, 2, 3)},
		{src: "array_slice(larr, 1)", want: LongArray(2, 3)},
		{src: "array_slice(larr, 1, 2)", want: LongArray(2)},
		{src: "array_slice(larr, 3)", want: LongArray()},
		{src: "array_slice(larr, 4)", want: anyNull},
		{src: "array_slice(larr, -1)", want: anyNull},
		{src: "array_slice(larr, 2, 1)", want: anyNull},
		{src: "array_slice(larr, 1, 5)", want: Array(TypeLongArray, []Value{L(2), L(3), NL, NL})},
		{src: "array_slice(n, 0)", want: anyNull},
		{src: "array_to_string(larr, '-')", want: S("1-2-3")},
		{src: "array_to_string(darr, ',')", want: S("1.5,2.5")},
		{src: "array_to_string(n, ',')", want: anyNull},
		{src: "array_to_string([null], ',')", want: anyNull},
		{src: "array_to_string(['a', null], ',')", want: S("a,null")},
		{src: "array_to_string(arr, n)", want: S("abc")},
		{src: "array_to_string(s, ',')", want: S("hello")},
		{src: "string_to_array('a,b,c', ',')", want: StringArray("a", "b", "c")},
		{src: "string_to_array('a,b,,', ',')", want: StringArray("a", "b")},
		{src: "string_to_array('', ',')", want: StringArray("")},
		{src: "string_to_array(n, ',')", want: anyNull},
		{src: "string_to_array('a1b2c', '[0-9]')", want: StringArray("a", "b", "c")},
		{src: "string_to_array('abc', '')", want: StringArray("a", "b", "c")},
		{src: "string_to_array(',a', ',')", want: StringArray("", "a")},
		{src: "string_to_array('a.b', '.')", want: StringArray()},
		{src: "mv_to_array(arr)", want: StringArray("a", "b", "c")},
		{src: "mv_to_array(s)", want: StringArray("hello")},
		{src: "mv_to_array(n)", want: anyNull},
		{src: "array_to_mv(larr)", want: StringArray("1", "2", "3")},
	})
}

func TestApplyFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "map(x -> x * 2, larr)", want: LongArray(2, 4, 6)},
		{src: "map(x -> concat(x, '!'), arr)", want: StringArray("a!", "b!", "c!")},
		{src: "map(x -> x, n)", want: anyNull},
		{src: "map(x -> x + 1, [])", want: StringArray()},
		{src: "map(x -> x / 2.0, larr)", want: DoubleArray(0.5, 1, 1.5)},
		{src: "map(x -> if(x > 1, x, 0.5), larr)", want: DoubleArray(0.5, 2, 3)},
		{src: "map(x -> n, larr)", want: Array(TypeLongArray, []Value{NL, NL, NL})},
		{src: "map(x -> x + l, larr)", want: LongArray(8, 9, 10)},
		{src: "filter(x -> x > 1, larr)", want: LongArray(2, 3)},
		{src: "filter(x -> x > 5, larr)", want: NullOf(TypeLongArray)},
		{src: "filter(x -> x, n)", want: anyNull},
		{src: "filter(x -> x == 'b', arr)", want: StringArray("b")},
		{src: "fold((x, acc) -> x + acc, larr, 0)", want: L(6)},
		{src: "fold((x, acc) -> x + acc, darr, 0)", want: L(3)},
		{src: "fold((x, acc) -> x + acc, darr, 0.0)", want: D(4)},
		{src: "fold((x, acc) -> concat(acc, x), arr, '')", want: S("abc")},
		{src: "fold((x, acc) -> x + acc, n, 0)", want: anyNull},
		{src: "fold((x, acc) -> acc + 1, [], 0)", want: L(0)},
		{src: "fold((x, acc) -> array_append(acc, x * 2), larr, <LONG>[])", want: LongArray(2, 4, 6)},
		{src: "cartesian_fold((x, y, acc) -> x * y + acc, [1, 2], [3, 4], 0)", want: L(21)},
		{src: "cartesian_fold((x, y, acc) -> acc, [1], n, 0)", want: anyNull},
		{src: "cartesian_map((x, y) -> concat(x, y), ['a', 'b'], ['c'])", want: StringArray("ac", "bc")},
		{src: "cartesian_map((x, y) -> x, [1], n)", want: anyNull},
		{src: "cartesian_map((x, y) -> x, [1], [])", want: StringArray()},
		{src: "any(x -> x > 2, larr)", want: L(1)},
		{src: "any(x -> x > 5, larr)", want: L(0)},
		{src: "all(x -> x > 0, larr)", want: L(1)},
		{src: "all(x -> x > 1, larr)", want: L(0)},
		{src: "any(x -> x, n)", want: L(0)},
		{src: "all(x -> x, n)", want: L(0)},
		{src: "all(x -> x > 5, [])", want: L(1)},
		{src: "any(x -> 1, [])", want: L(0)},
		{src: "any(x -> x / 0, larr)", err: "/ by zero"},
		{src: "MAP(x -> x, larr)", want: LongArray(1, 2, 3)},
	})
}

func TestMathFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "abs(neg)", want: L(3)},
		{src: "abs(-2.5)", want: D(2.5)},
		{src: "abs(n)", want: anyNull},
		{src: "abs(ln)", want: NL},
		{src: "abs('5')", want: anyNull},
		{src: "abs(-9223372036854775808)", want: L(math.MinInt64)},
		{src: "ceil(2.1)", want: D(3)},
		{src: "ceil(l)", want: D(7)},
		{src: "floor(-2.5)", want: D(-3)},
		{src: "floor(n)", want: anyNull},
		{src: "sqrt(16)", want: D(4)},
		{src: "sqrt(-1)", want: D(math.NaN())},
		{src: "cbrt(27)", want: D(3)},
		{src: "exp(0)", want: D(1)},
		{src: "log(1)", want: D(0)},
		{src: "log(0)", want: D(math.Inf(-1))},
		{src: "log10(1000)", want: D(3)},
		{src: "pow(2, 10)", want: D(1024)},
		{src: "pow(2, 0.5)", want: D(math.Sqrt2)},
		{src: "pow(1, NaN)", want: D(math.NaN())},
		{src: "pow(-1, Infinity)", want: D(math.NaN())},
		{src: "pow(n, 2)", want: anyNull},
		{src: "round(2.5)", want: D(3)},
		{src: "round(-2.5)", want: D(-3)},
		{src: "round(2.675, 2)", want: D(2.68)},
		{src: "round(1.005, 2)", want: D(1.01)},
		{src: "round(1234.5678, -2)", want: D(1200)},
		{src: "round(15, -1)", want: L(20)},
		{src: "round(-15, -1)", want: L(-20)},
		{src: "round(14, -1)", want: L(10)},
		{src: "round(9223372036854775807, -1)", want: L(-9223372036854775806)},
		{src: "round(7)", want: L(7)},
		{src: "round(7, 3)", want: L(7)},
		{src: "round(n)", want: anyNull},
		{src: "round(NaN)", want: D(0)},
		{src: "round(Infinity)", want: D(math.MaxFloat64)},
		{src: "round(-Infinity, 2)", want: D(-math.MaxFloat64)},
		{src: "round('1.5')", err: "LONG or DOUBLE"},
		{src: "round(1.5, 1.0)", err: "second argument"},
		{src: "round(0.3, 1)", want: D(0.3)},
		{src: "round(1e300, 2)", want: D(1e300)},
		{src: "round(-0.4)", want: D(0)},
		{src: "round(5.5E-5, 5)", want: D(6e-5)},
		{src: "round(0.000001, 2)", want: D(0)},
		{src: "round(99.95, 1)", want: D(100)},
		{src: "div(7, 2)", want: L(3)},
		{src: "div(7.5, 2)", want: L(3)},
		{src: "div(-7, 2)", want: L(-3)},
		{src: "div(7, 0)", err: "/ by zero"},
		{src: "div(7.0, 0)", want: L(math.MaxInt64)},
		{src: "div(n, 1)", want: anyNull},
		{src: "safe_divide(7, 2)", want: L(3)},
		{src: "safe_divide(7, 0)", want: NL},
		{src: "safe_divide(0, 0)", want: L(0)},
		{src: "safe_divide(7.0, 2)", want: D(3.5)},
		{src: "safe_divide(1.0, 0)", want: ND},
		{src: "safe_divide(n, 1)", want: anyNull},
		{src: "max(1, 2)", want: L(2)},
		{src: "max(1, 2.5)", want: D(2.5)},
		{src: "max('a', 1)", want: D(1)},
		{src: "max('a', 'b')", want: anyNull},
		{src: "max(n, 1)", want: anyNull},
		{src: "min(-0.0, 0.0)", want: D(math.Copysign(0, -1))},
		{src: "max(NaN, 1)", want: D(math.NaN())},
		{src: "min(l, neg)", want: L(-3)},
		{src: "greatest(1, 2, 3)", want: L(3)},
		{src: "greatest(1, 2.5)", want: D(2.5)},
		{src: "greatest('a', 'b')", want: S("b")},
		{src: "greatest(1, 'b')", want: S("b")},
		{src: "greatest(n, n)", want: anyNull},
		{src: "greatest()", want: anyNull},
		{src: "least(3, 1, 2)", want: L(1)},
		{src: "least(n, 5)", want: S("5")},
		{src: "least(ln, 5)", want: L(5)},
		{src: "least(10, '9')", want: S("10")},
		{src: "greatest(larr)", err: "does not accept"},
		{src: "bitwiseAnd(12, 10)", want: L(8)},
		{src: "bitwiseOr(12, 10)", want: L(14)},
		{src: "bitwiseXor(12, 10)", want: L(6)},
		{src: "bitwiseComplement(0)", want: L(-1)},
		{src: "bitwiseComplement(2.5)", want: L(-3)},
		{src: "bitwiseComplement(1e30)", err: "out of LONG value range"},
		{src: "bitwiseShiftLeft(1, 65)", want: L(2)},
		{src: "bitwiseShiftRight(-8, 1)", want: L(-4)},
		{src: "bitwiseAnd(n, 1)", want: NL},
		{src: "bitwiseAnd('a', 'b')", want: NL},
		{src: "bitwiseAnd(12.7, 10)", want: L(8)},
		{src: "bitwiseConvertDoubleToLongBits(1.0)", want: L(4607182418800017408)},
		{src: "bitwiseConvertDoubleToLongBits(NaN)", want: L(0x7ff8000000000000)},
		{src: "bitwiseConvertLongBitsToDouble(4607182418800017408)", want: D(1)},
		{src: "pi()", want: D(math.Pi)},
		{src: "signum(-2.5)", want: D(-1)},
		{src: "signum(0)", want: D(0)},
		{src: "toDegrees(pi())", want: D(180)},
		{src: "toRadians(180)", want: D(math.Pi)},
		{src: "atan2(1, 1)", want: D(math.Pi / 4)},
		{src: "hypot(3, 4)", want: D(5)},
		{src: "copySign(2, -1)", want: D(-2)},
		{src: "remainder(5, 3)", want: D(-1)},
		{src: "nextAfter(1.0, 2.0)", want: D(1.0000000000000002)},
		{src: "nextAfter(0.0, -0.0)", want: D(math.Copysign(0, -1))},
		{src: "nextUp(1.0)", want: D(1.0000000000000002)},
		{src: "nextUp(0)", want: D(math.SmallestNonzeroFloat64)},
		{src: "ulp(1.0)", want: D(2.220446049250313e-16)},
		{src: "ulp(1.7976931348623157E308)", want: D(0x1p971)},
		{src: "getExponent(8.0)", want: L(3)},
		{src: "getExponent(8)", want: L(3)},
		{src: "getExponent(0)", want: L(-1023)},
		{src: "rint(2.5)", want: D(2)},
		{src: "scalb(1.5, 2)", want: D(6)},
		{src: "expm1(0)", want: D(0)},
		{src: "log1p(0)", want: D(0)},
		{src: "cot(1)", want: D(math.Cos(1) / math.Sin(1))},
		{src: "sin(0) + cos(0) + tan(0)", want: D(1)},
		{src: "sinh(0) + cosh(0) + tanh(0)", want: D(1)},
		{src: "asin(1)", want: D(math.Pi / 2)},
		{src: "acos(1) + atan(0)", want: D(0)},
		{src: "ABS(neg)", want: L(3)},
		{src: "bitwiseand(12, 10)", want: L(8)},
	})
}

func TestTimeFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "timestamp_floor(t + 1, 'PT1H')", want: L(1377993600000)},
		{src: "timestamp_floor(t + 3599999, 'PT1H')", want: L(1377993600000)},
		{src: "timestamp_floor(t - 1, 'PT1H')", want: L(1377990000000)},
		{src: "timestamp_floor(t + 1, 'PT1H', 1800000)", want: L(1377991800000)},
		{src: "timestamp_floor(t, 'P1W')", want: L(1377475200000)},
		{src: "timestamp_floor(t, 'P1M')", want: L(1377993600000)},
		{src: "timestamp_floor(t, 'P3M')", want: L(1372636800000)},
		{src: "timestamp_floor(t, 'P1Y')", want: L(1356998400000)},
		{src: "timestamp_floor(t, 'P1D', null, 'America/Los_Angeles')", want: L(1377932400000)},
		{src: "timestamp_floor(t, 'P1D', '2013-08-31T12:00:00Z')", want: L(1377950400000)},
		{src: "timestamp_floor(t, 'P1D', '')", want: L(1377993600000)},
		{src: "timestamp_floor(t, 'PT1H', null, '+05:30')", want: L(1377991800000)},
		{src: "timestamp_floor(n, 'PT1H')", want: NL},
		{src: "timestamp_floor(cast(t, 'DOUBLE') + 0.5, 'PT1S')", want: L(1377993600000)},
		{src: "timestamp_floor(t, concat('PT', '1H'))", want: L(1377993600000)},
		{src: "timestamp_floor(t, s)", err: "invalid period"},
		{src: "timestamp_ceil(t + 1, 'PT1H')", want: L(1377997200000)},
		{src: "timestamp_ceil(t, 'PT1H')", want: L(1377993600000)},
		{src: "timestamp_ceil(t + 1, 'P1M')", want: L(1380585600000)},
		{src: "timestamp_ceil(n, 'P1D')", want: NL},
		{src: "timestamp_shift(t, 'P1M', 2)", want: L(1383264000000)},
		{src: "timestamp_shift(t, 'P1M', -1)", want: L(1375315200000)},
		{src: "timestamp_shift(t, 'PT1H', 3, 'UTC')", want: L(1378004400000)},
		{src: "timestamp_shift(1359590400000, 'P1M', 1)", want: L(1362009600000)}, // Jan 31 -> Feb 28
		{src: "timestamp_shift(n, 'P1D', 1)", want: NL},
		{src: "timestamp_shift(t, s, 1)", err: "invalid period"},
		{src: "timestamp_extract(t, 'YEAR')", want: L(2013)},
		{src: "timestamp_extract(t, 'year')", want: L(2013)},
		{src: "timestamp_extract(t, 'MONTH')", want: L(9)},
		{src: "timestamp_extract(t, 'DAY')", want: L(1)},
		{src: "timestamp_extract(t, 'DOW')", want: L(7)},
		{src: "timestamp_extract(t, 'ISODOW')", want: L(7)},
		{src: "timestamp_extract(t, 'DOY')", want: L(244)},
		{src: "timestamp_extract(t, 'WEEK')", want: L(35)},
		{src: "timestamp_extract(t, 'QUARTER')", want: L(3)},
		{src: "timestamp_extract(t, 'EPOCH')", want: L(1377993600)},
		{src: "timestamp_extract(t, 'ISOYEAR')", want: L(2013)},
		{src: "timestamp_extract(1356912000000, 'ISOYEAR')", want: L(2013)}, // 2012-12-31 is in ISO week 1 of 2013
		{src: "timestamp_extract(1356912000000, 'WEEK')", want: L(1)},
		{src: "timestamp_extract(t, 'DECADE')", want: L(201)},
		{src: "timestamp_extract(t, 'CENTURY')", want: D(21)},
		{src: "timestamp_extract(t, 'MILLENNIUM')", want: D(3)},
		{src: "timestamp_extract(t + 61001, 'SECOND')", want: L(1)},
		{src: "timestamp_extract(t + 61001, 'MINUTE')", want: L(1)},
		{src: "timestamp_extract(t + 61001, 'MILLISECOND')", want: L(1)},
		{src: "timestamp_extract(t, 'HOUR', 'America/Los_Angeles')", want: L(17)},
		{src: "timestamp_extract(t, 'DAY', 'America/Los_Angeles')", want: L(31)},
		{src: "timestamp_extract(-1, 'YEAR')", want: L(1969)},
		{src: "timestamp_extract('2013-09-01T00:00:00Z', 'YEAR')", want: L(2013)},
		{src: "timestamp_extract(n, 'YEAR')", want: anyNull},
		{src: "timestamp_format(t)", want: S("2013-09-01T00:00:00.000Z")},
		{src: "timestamp_format(t, 'yyyy-MM-dd')", want: S("2013-09-01")},
		{src: "timestamp_format(t, null, 'America/Los_Angeles')", want: S("2013-08-31T17:00:00.000-07:00")},
		{src: "timestamp_format(t, 'yyyy-MM-dd HH:mm', 'Asia/Kolkata')", want: S("2013-09-01 05:30")},
		{src: "timestamp_format(n)", want: anyNull},
		{src: "timestamp_format(s)", want: anyNull},
		{src: "timestamp_parse('2013-09-01 00:00:00')", want: L(1377993600000)},
		{src: "timestamp_parse('2013-09-01T00:00:00Z')", want: L(1377993600000)},
		{src: "timestamp_parse('2013-09-01')", want: L(1377993600000)},
		{src: "timestamp_parse('2013-09-01', 'yyyy-MM-dd', 'America/Los_Angeles')", want: L(1378018800000)},
		{src: "timestamp_parse('2013-09-01T00:00:00', null, 'America/Los_Angeles')", want: L(1378018800000)},
		{src: "timestamp_parse('bad')", want: NL},
		{src: "timestamp_parse(n)", want: NL},
		{src: "timestamp('2013-09-01T00:00:00Z')", want: L(1377993600000)},
		{src: "timestamp('2013-09-01')", want: L(1377993600000)},
		{src: "timestamp('09/01/2013', 'MM/dd/yyyy')", want: L(1377993600000)},
		{src: "timestamp(n)", want: NL},
		{src: "timestamp(l)", err: "should be a STRING"},
		{src: "timestamp('bad')", err: "invalid value"},
		{src: "unix_timestamp('2013-09-01T00:00:00Z')", want: L(1377993600)},
		{src: "unix_timestamp('1969-12-31T23:59:59.5Z')", want: L(0)},
	})
}

func TestLookupOption(t *testing.T) {
	opts := Options{Lookup: func(name string) (func(string) (string, bool), error) {
		if name != "country" {
			return nil, &EvalError{Msg: "unknown lookup " + name}
		}
		m := map[string]string{"fr": "France", "de": "Germany"}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }, nil
	}}
	cases := []struct {
		src  string
		want Value
	}{
		{"lookup(c, 'country')", S("France")},
		{"lookup('xx', 'country')", anyNull},
		{"lookup('xx', 'country', 'other')", S("other")},
		{"lookup(n, 'country', 'other')", S("other")},
	}
	b := MapBindings{"c": "fr"}
	for _, c := range cases {
		e, err := CompileWith(c.src, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, err := e.Eval(b)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if c.want.typ == anyNull.typ {
			if !got.IsNull() {
				t.Errorf("%s = %v, want null", c.src, got)
			}
		} else if !sameValue(got, c.want) {
			t.Errorf("%s = %v, want %v", c.src, got, c.want)
		}
	}
	if _, err := CompileWith("lookup(c, 'nope')", opts); err == nil {
		t.Error("unknown lookup compiled")
	}
}

func TestOutputType(t *testing.T) {
	types := func(name string) (Type, bool) {
		switch name {
		case "l":
			return TypeLong, true
		case "d":
			return TypeDouble, true
		case "s":
			return TypeString, true
		case "arr":
			return TypeStringArray, true
		}
		return TypeUnknown, false
	}
	cases := []struct {
		src  string
		want Type
	}{
		{"l + 1", TypeLong},
		{"l + d", TypeDouble},
		{"l / 2", TypeLong},
		{"s + s", TypeString},
		{"s + l", TypeDouble},
		{"l > d", TypeLong},
		{"!s", TypeLong},
		{"-d", TypeDouble},
		{"concat(s, l)", TypeString},
		{"strlen(s)", TypeLong},
		{"cast(s, 'DOUBLE')", TypeDouble},
		{"cast(s, 'ARRAY<LONG>')", TypeLongArray},
		{"if(l, l, d)", TypeDouble},
		{"if(l, s, d)", TypeString},
		{"nvl(l, 0)", TypeLong},
		{"abs(l)", TypeLong},
		{"ceil(l)", TypeDouble},
		{"max(l, l)", TypeLong},
		{"timestamp_floor(l, 'P1D')", TypeLong},
		{"timestamp_format(l)", TypeString},
		{"timestamp_extract(l, 'CENTURY')", TypeDouble},
		{"array_length(arr)", TypeLong},
		{"array_offset(arr, 0)", TypeString},
		{"array_append(arr, 'x')", TypeStringArray},
		{"array(l, d)", TypeLongArray},
		{"greatest(l, d)", TypeDouble},
		{"any(x -> x == 'a', arr)", TypeLong},
		{"unknown_col + 1", TypeLong},
		{"unknown_col", TypeUnknown},
		{"cast(l, s)", TypeUnknown},
		{"[1.5]", TypeDoubleArray},
	}
	for _, c := range cases {
		if got := MustCompile(c.src).OutputType(types); got != c.want {
			t.Errorf("OutputType(%q) = %s, want %s", c.src, got, c.want)
		}
	}
}

func TestOtherFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{src: "human_readable_binary_byte_format(1048576)", want: S("1.00 MiB")},
		{src: "human_readable_binary_byte_format(1048576, 3)", want: S("1.000 MiB")},
		{src: "human_readable_binary_byte_format(1023)", want: S("1023 B")},
		{src: "human_readable_binary_byte_format(-1536, 1)", want: S("-1.5 KiB")},
		{src: "human_readable_binary_byte_format(-9223372036854775808)", want: S("-8.00 EiB")},
		{src: "human_readable_decimal_byte_format(1000000)", want: S("1.00 MB")},
		{src: "human_readable_decimal_byte_format(1000000, 3)", want: S("1.000 MB")},
		{src: "human_readable_decimal_byte_format(999)", want: S("999 B")},
		{src: "human_readable_decimal_byte_format(123456789, 0)", want: S("123 MB")},
		{src: "human_readable_decimal_format(1000000)", want: S("1.00 M")},
		{src: "human_readable_decimal_format(999)", want: S("999")},
		{src: "human_readable_decimal_format(2500.7)", want: S("2.50 K")},
		{src: "human_readable_decimal_format(n)", want: anyNull},
		{src: "human_readable_decimal_format(1000, 4)", err: "range of [0,3]"},
		{src: "human_readable_decimal_format(1000, 1.5)", err: "LONG"},
		{src: "human_readable_decimal_format('1000')", err: "needs a number"},
		{src: "ipv4_parse('192.168.0.1')", want: L(3232235521)},
		{src: "ipv4_parse(3232235521)", want: L(3232235521)},
		{src: "ipv4_parse('192.168.0')", want: NL},
		{src: "ipv4_parse('::1')", want: NL},
		{src: "ipv4_parse(-1)", want: NL},
		{src: "ipv4_parse(n)", want: NL},
		{src: "ipv4_stringify(3232235521)", want: S("192.168.0.1")},
		{src: "ipv4_stringify('10.0.0.1')", want: S("10.0.0.1")},
		{src: "ipv4_stringify(4294967296)", want: anyNull},
		{src: "ipv4_match('192.168.1.7', '192.168.0.0/16')", want: L(1)},
		{src: "ipv4_match(3232235521, '192.168.0.0/16')", want: L(1)},
		{src: "ipv4_match('10.0.0.1', '192.168.0.0/16')", want: L(0)},
		{src: "ipv4_match('junk', '192.168.0.0/16')", want: L(0)},
		{src: "ipv4_match(n, '192.168.0.0/16')", want: L(0)},
		{src: "ipv6_match('75e9:efa4:29c6:85f6::232c', '75e9:efa4:29c6:85f6::/64')", want: L(1)},
		{src: "ipv6_match('75e9:efa4:29c6:85f7::1', '75e9:efa4:29c6:85f6::/64')", want: L(0)},
		{src: "ipv6_match('1.2.3.4', '75e9:efa4:29c6:85f6::/64')", want: L(0)},
	})
	if _, err := Compile("ipv4_match(x, '1.2.3.4/40')"); err == nil {
		t.Error("bad subnet accepted")
	}
	if _, err := Compile("ipv4_match(x, y)"); err == nil {
		t.Error("non-literal subnet accepted")
	}
}
