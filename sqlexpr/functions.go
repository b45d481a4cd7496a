package sqlexpr

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"strata/expr"
	"strata/interval"
	"strata/sql"
)

// fnDef plans one scalar function from its translated arguments.
type fnDef struct {
	min, max int // argument count bounds (-1 max: unbounded)
	build    func(t *Translator, call *sql.FuncCall, a []Expr) (Expr, error)
}

func srcs(a []Expr) string {
	s := make([]string, len(a))
	for i, x := range a {
		s[i] = x.Src
	}
	return strings.Join(s, ", ")
}

// simple maps a SQL function to the native one of the same arguments.
func simple(native string, min, max int, typ string) fnDef {
	return fnDef{min: min, max: max, build: func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
		return Expr{Src: native + "(" + srcs(a) + ")", Type: typ}, nil
	}}
}

// zoned maps a time function whose last argument is a time zone Druid's
// SQL defaults to the query's: the arguments before it are filled with
// null (the function's own defaults) up to full-1.
func zoned(native string, min, full int, typ string) fnDef {
	return fnDef{min: min, max: full, build: func(t *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
		s := srcs(a)
		if len(a) < full {
			s += strings.Repeat(", null", full-1-len(a)) + ", " + t.Env.tz()
		}
		return Expr{Src: native + "(" + s + ")", Type: typ}, nil
	}}
}

// inferred maps to a native function whose result type the native
// expression language infers from the argument types.
func inferred(native string, min, max int) fnDef {
	return fnDef{min: min, max: max, build: func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
		return Expr{Src: native + "(" + srcs(a) + ")", Type: inferType(native, a)}, nil
	}}
}

// inferType asks the native expression language the type of native over
// arguments of a's types. A FLOAT first argument keeps its type where the
// native answer is a double (Druid computes floats as doubles).
func inferType(native string, a []Expr) string {
	ph := make([]string, len(a))
	types := map[string]expr.Type{}
	for i, x := range a {
		ph[i] = "a" + strconv.Itoa(i)
		types[ph[i]] = ExprType(x.Type)
	}
	c, err := expr.Compile(native + "(" + strings.Join(ph, ", ") + ")")
	if err != nil {
		return Double
	}
	out := c.OutputType(func(name string) (expr.Type, bool) { t, ok := types[name]; return t, ok })
	if out == expr.TypeUnknown {
		return Double
	}
	typ := FromExprType(out)
	if typ == Double && len(a) > 0 && a[0].Type == Float {
		return Float
	}
	return typ
}

var scalarFns map[string]fnDef

func init() {
	scalarFns = map[string]fnDef{
		"TIME_PARSE":  zoned("timestamp_parse", 1, 3, Timestamp),
		"TIME_FORMAT": zoned("timestamp_format", 1, 3, Varchar),
		"TIME_FLOOR":  zoned("timestamp_floor", 2, 4, Timestamp),
		"TIME_CEIL":   zoned("timestamp_ceil", 2, 4, Timestamp),
		"TIME_SHIFT":  zoned("timestamp_shift", 3, 4, Timestamp),
		"TIME_EXTRACT": {min: 1, max: 3, build: func(t *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
			unit, tz := "'MILLISECOND'", t.Env.tz()
			if len(a) > 1 {
				unit = a[1].Src
			}
			if len(a) > 2 {
				tz = a[2].Src
			}
			return Expr{Src: "timestamp_extract(" + a[0].Src + ", " + unit + ", " + tz + ")", Type: Bigint}, nil
		}},
		"TIME_IN_INTERVAL": {min: 2, max: 2, build: func(_ *Translator, call *sql.FuncCall, a []Expr) (Expr, error) {
			lit, ok := call.Args[1].(*sql.StringLit)
			if !ok {
				return Expr{}, invalidAt(call, "TIME_IN_INTERVAL needs a literal interval")
			}
			iv, err := interval.Parse(lit.Value)
			if err != nil {
				return Expr{}, invalidAt(call, "TIME_IN_INTERVAL: %v", err)
			}
			return boolean("((" + a[0].Src + " >= " + LongLit(iv.Start) + ") && (" + a[0].Src + " < " + LongLit(iv.End) + "))"), nil
		}},
		"MILLIS_TO_TIMESTAMP": {min: 1, max: 1, build: func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
			if a[0].Type == Bigint || a[0].Type == Timestamp {
				return Expr{Src: a[0].Src, Type: Timestamp}, nil
			}
			return Expr{Src: "cast(" + a[0].Src + ", 'LONG')", Type: Timestamp}, nil
		}},
		"TIMESTAMP_TO_MILLIS": {min: 1, max: 1, build: func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
			return Expr{Src: a[0].Src, Type: Bigint}, nil
		}},
		"CURRENT_TIMESTAMP": {min: 0, max: 0, build: func(t *Translator, _ *sql.FuncCall, _ []Expr) (Expr, error) {
			now := t.Env.ReadNow()
			return Expr{Src: LongLit(now), Type: Timestamp, Lit: now, IsLit: true}, nil
		}},
		"CURRENT_DATE": {min: 0, max: 0, build: func(t *Translator, _ *sql.FuncCall, _ []Expr) (Expr, error) {
			now := time.UnixMilli(t.Env.ReadNow()).In(t.Env.loc())
			ms := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location()).UnixMilli()
			return Expr{Src: LongLit(ms), Type: Timestamp, Lit: ms, IsLit: true}, nil
		}},
		"DATE_TRUNC": {min: 2, max: 2, build: func(t *Translator, call *sql.FuncCall, a []Expr) (Expr, error) {
			p := ""
			if u, ok := call.Args[0].(*sql.StringLit); ok {
				p = UnitPeriods[strings.ToUpper(u.Value)]
			}
			if p == "" {
				return Expr{}, unsupportedAt(call, "DATE_TRUNC needs a literal unit (MILLISECONDS, SECOND … YEAR, DECADE, CENTURY, MILLENNIUM)")
			}
			return Expr{Src: "timestamp_floor(" + a[1].Src + ", '" + p + "', null, " + t.Env.tz() + ")", Type: Timestamp}, nil
		}},
		"CONCAT":           simple("concat", 1, -1, Varchar),
		"TEXTCAT":          simple("concat", 2, 2, Varchar),
		"LOWER":            simple("lower", 1, 1, Varchar),
		"UPPER":            simple("upper", 1, 1, Varchar),
		"LENGTH":           simple("strlen", 1, 1, Bigint),
		"CHAR_LENGTH":      simple("strlen", 1, 1, Bigint),
		"CHARACTER_LENGTH": simple("strlen", 1, 1, Bigint),
		"STRLEN":           simple("strlen", 1, 1, Bigint),
		"SUBSTRING":        {min: 2, max: 3, build: substring},
		"SUBSTR":           {min: 2, max: 3, build: substring},
		"LEFT":             simple("left", 2, 2, Varchar),
		"RIGHT":            simple("right", 2, 2, Varchar),
		"REPLACE":          simple("replace", 3, 3, Varchar),
		"TRIM":             simple("trim", 1, 2, Varchar),
		"BTRIM":            simple("trim", 1, 2, Varchar),
		"LTRIM":            simple("ltrim", 1, 2, Varchar),
		"RTRIM":            simple("rtrim", 1, 2, Varchar),
		"LPAD":             simple("lpad", 2, 3, Varchar),
		"RPAD":             simple("rpad", 2, 3, Varchar),
		"REVERSE":          simple("reverse", 1, 1, Varchar),
		"REPEAT":           simple("repeat", 2, 2, Varchar),
		"STRPOS":           {min: 2, max: 2, build: strpos},
		"POSITION":         {min: 2, max: 2, build: strpos},
		"CONTAINS_STRING":  simple("contains_string", 2, 2, Boolean),
		"ICONTAINS_STRING": simple("icontains_string", 2, 2, Boolean),
		"REGEXP_EXTRACT":   simple("regexp_extract", 2, 3, Varchar),
		"REGEXP_LIKE":      simple("regexp_like", 2, 2, Boolean),
		"REGEXP_REPLACE":   simple("regexp_replace", 3, 3, Varchar),
		"STRING_FORMAT":    simple("format", 1, -1, Varchar),
		"PARSE_LONG":       simple("parse_long", 1, 2, Bigint),
		"NVL":              {min: 2, max: 2, build: coalesce("nvl")},
		"IFNULL":           {min: 2, max: 2, build: coalesce("nvl")},
		"COALESCE":         {min: 1, max: -1, build: coalesce("coalesce")},
		"NULLIF": {min: 2, max: 2, build: func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
			return Expr{Src: "if((" + a[0].Src + " == " + a[1].Src + "), null, " + a[0].Src + ")", Type: a[0].Type}, nil
		}},
		"ABS":  inferred("abs", 1, 1),
		"CEIL": {min: 1, max: 1, build: floorCeil("ceil")}, "CEILING": {min: 1, max: 1, build: floorCeil("ceil")},
		"FLOOR": {min: 1, max: 1, build: floorCeil("floor")},
		"EXP":   simple("exp", 1, 1, Double),
		"LN":    simple("log", 1, 1, Double),
		"LOG10": simple("log10", 1, 1, Double),
		"POWER": simple("pow", 2, 2, Double),
		"SQRT":  simple("sqrt", 1, 1, Double),
		"MOD": {min: 2, max: 2, build: func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
			return Expr{Src: "(" + a[0].Src + " % " + a[1].Src + ")", Type: ArithType(a[0].Type, a[1].Type)}, nil
		}},
		"ROUND":       inferred("round", 1, 2),
		"GREATEST":    inferred("greatest", 1, -1),
		"LEAST":       inferred("least", 1, -1),
		"DIV":         simple("div", 2, 2, Bigint),
		"SAFE_DIVIDE": inferred("safe_divide", 2, 2),
		"SIN":         simple("sin", 1, 1, Double),
		"COS":         simple("cos", 1, 1, Double),
		"TAN":         simple("tan", 1, 1, Double),
		"COT":         simple("cot", 1, 1, Double),
		"ASIN":        simple("asin", 1, 1, Double),
		"ACOS":        simple("acos", 1, 1, Double),
		"ATAN":        simple("atan", 1, 1, Double),
		"ATAN2":       simple("atan2", 2, 2, Double),
		"DEGREES":     simple("todegrees", 1, 1, Double),
		"RADIANS":     simple("toradians", 1, 1, Double),
		"TRUNCATE":    {min: 1, max: 2, build: truncate},
		"TRUNC":       {min: 1, max: 2, build: truncate},
		// PI is also written without parentheses (see Translator.Expr).
		"PI":                                  simple("pi", 0, 0, Double),
		"BITWISE_AND":                         numbers(simple("bitwiseAnd", 2, 2, Bigint)),
		"BITWISE_OR":                          numbers(simple("bitwiseOr", 2, 2, Bigint)),
		"BITWISE_XOR":                         numbers(simple("bitwiseXor", 2, 2, Bigint)),
		"BITWISE_COMPLEMENT":                  numbers(simple("bitwiseComplement", 1, 1, Bigint)),
		"BITWISE_SHIFT_LEFT":                  numbers(simple("bitwiseShiftLeft", 2, 2, Bigint)),
		"BITWISE_SHIFT_RIGHT":                 numbers(simple("bitwiseShiftRight", 2, 2, Bigint)),
		"BITWISE_CONVERT_DOUBLE_TO_LONG_BITS": numbers(simple("bitwiseConvertDoubleToLongBits", 1, 1, Bigint)),
		"BITWISE_CONVERT_LONG_BITS_TO_DOUBLE": numbers(simple("bitwiseConvertLongBitsToDouble", 1, 1, Double)),
		"HUMAN_READABLE_BINARY_BYTE_FORMAT":   numbers(simple("human_readable_binary_byte_format", 1, 2, Varchar)),
		"HUMAN_READABLE_DECIMAL_BYTE_FORMAT":  numbers(simple("human_readable_decimal_byte_format", 1, 2, Varchar)),
		"HUMAN_READABLE_DECIMAL_FORMAT":       numbers(simple("human_readable_decimal_format", 1, 2, Varchar)),
		"DECODE_BASE64_UTF8":                  simple("decode_base64_utf8", 1, 1, Varchar),
		"IPV4_MATCH":                          typed(simple("ipv4_match", 2, 2, Boolean), ipAddress, isString),
		"IPV4_PARSE":                          typed(simple("ipv4_parse", 1, 1, Bigint), ipAddress),
		"IPV4_STRINGIFY":                      typed(simple("ipv4_stringify", 1, 1, Varchar), ipAddress),
		"IPV6_MATCH":                          simple("ipv6_match", 2, 2, Boolean),
	}
	scalarFns["LOCALTIMESTAMP"] = scalarFns["CURRENT_TIMESTAMP"]
}

// FunctionNames are the scalar functions of the shared table.
func FunctionNames() []string { return slices.Sorted(maps.Keys(scalarFns)) }

// HasFunction reports whether name (upper case) is in the shared table.
func HasFunction(name string) bool { _, ok := scalarFns[name]; return ok }

func substring(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
	n := "-1"
	if len(a) == 3 {
		n = a[2].Src
	}
	return Expr{Src: "substring(" + a[0].Src + ", (" + a[1].Src + " - 1), " + n + ")", Type: Varchar}, nil
}

func strpos(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
	return Expr{Src: "(strpos(" + srcs(a) + ") + 1)", Type: Bigint}, nil
}

// floorCeil rounds a number: an integer stays one, anything else is a
// double.
func floorCeil(native string) func(*Translator, *sql.FuncCall, []Expr) (Expr, error) {
	return func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
		typ := a[0].Type
		if typ != Bigint {
			typ = Double
		}
		return Expr{Src: native + "(" + a[0].Src + ")", Type: typ}, nil
	}
}

// coalesce's type is its non-NULL arguments' merged type.
func coalesce(native string) func(*Translator, *sql.FuncCall, []Expr) (Expr, error) {
	return func(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
		typ := ""
		for _, x := range a {
			if !x.IsNull() {
				typ = Merge(typ, x.Type)
			}
		}
		if typ == "" {
			typ = Varchar
		}
		return Expr{Src: native + "(" + srcs(a) + ")", Type: typ}, nil
	}
}

// truncate is TRUNCATE(x, n) = sign(x) * floor(|x| * 10^n) / 10^n.
func truncate(_ *Translator, _ *sql.FuncCall, a []Expr) (Expr, error) {
	if len(a) == 1 && a[0].Type == Bigint {
		return Expr{Src: a[0].Src, Type: Bigint}, nil
	}
	scale := "1"
	if len(a) == 2 {
		scale = "pow(10, " + a[1].Src + ")"
	}
	x := a[0].Src
	return Expr{Src: "case_searched((" + x + " < 0), (-(floor(((-" + x + ") * " + scale + ")) / " + scale + ")), (floor((" + x + " * " + scale + ")) / " + scale + "))", Type: Double}, nil
}

// call translates a function call: the Scope's own functions first, then
// the shared table.
func (t *Translator) call(x *sql.FuncCall) (Expr, error) { return t.callAt(x, x) }

func (t *Translator) callAt(x *sql.FuncCall, at sql.Node) (Expr, error) {
	name := strings.ToUpper(x.Name.Name)
	if x.Over != nil {
		return Expr{}, unsupportedAt(at, "Window functions are not supported")
	}
	if x.Distinct || x.Filter != nil {
		return Expr{}, invalidAt(at, "DISTINCT and FILTER apply to aggregate functions only")
	}
	args := make([]Expr, len(x.Args))
	for i, a := range x.Args {
		if na, ok := a.(*sql.NamedArg); ok {
			return Expr{}, invalidAt(na, "Named arguments are not supported for %s", name)
		}
		v, err := t.Expr(a)
		if err != nil {
			return Expr{}, err
		}
		args[i] = v
	}
	if fs, ok := t.Scope.(Functions); ok {
		if v, ok, err := fs.Call(name, x, args); ok || err != nil {
			return v, err
		}
	}
	f, ok := scalarFns[name]
	if !ok {
		return Expr{}, unsupportedAt(at, "Function '%s' is not supported", x.Name.Name)
	}
	if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
		return Expr{}, invalidAt(at, "Invalid number of arguments to function '%s'", name)
	}
	return f.build(t, x, args)
}

// numbers refuses arguments that are not numbers, as Calcite's operand
// type check does for Druid's numeric functions.
func numbers(f fnDef) fnDef { return typed(f, Numeric) }

// typed refuses, as Calcite's operand type check does, arguments of types
// the function does not take: want[i] checks argument i's SQL type, the
// last one the rest. A NULL literal is any type.
func typed(f fnDef, want ...func(typ string) bool) fnDef {
	build := f.build
	f.build = func(t *Translator, call *sql.FuncCall, a []Expr) (Expr, error) {
		for i, x := range a {
			if ok := want[min(i, len(want)-1)]; !ok(x.Type) && !x.IsNull() {
				return Expr{}, cannotApply(call, strings.ToUpper(call.Name.Name), a)
			}
		}
		return build(t, call, a)
	}
	return f
}

// ipAddress is the IPv4 functions' address: a string or an integer.
func ipAddress(typ string) bool { return typ == Varchar || typ == Bigint }

func isString(typ string) bool { return typ == Varchar }

// cannotApply is Calcite's error for arguments of the wrong types.
func cannotApply(at sql.Node, name string, a []Expr) *Error {
	types := make([]string, len(a))
	for i, x := range a {
		types[i] = "<" + x.Type + ">"
	}
	return invalidAt(at, "Cannot apply '%s' to arguments of type '%s(%s)'", name, name, strings.Join(types, ", "))
}

// isPI reports whether ref is the unquoted, unqualified name PI.
func isPI(ref *sql.ColumnRef) bool {
	return len(ref.Parts) == 1 && !ref.Parts[0].Quoted && strings.EqualFold(ref.Parts[0].Name, "PI")
}
