package msq

import (
	"fmt"
	"strings"

	"strata/expr"
	"strata/interval"
	"strata/sql"
)

// fnRule translates one SQL function given its translated arguments.
type fnRule struct {
	min, max int // argument count bounds (-1 max: unbounded)
	build    func(t *translator, call *sql.FuncCall, args []tx) (string, Type, error)
}

// simple maps a SQL function to a native one with the same arguments.
func simple(native string, min, max int, out Type) fnRule {
	return fnRule{min: min, max: max, build: func(_ *translator, _ *sql.FuncCall, args []tx) (string, Type, error) {
		return native + "(" + joinSrc(args) + ")", out, nil
	}}
}

// inferred maps to a native function whose result type the native planner infers.
func inferred(native string, min, max int) fnRule {
	return fnRule{min: min, max: max, build: func(t *translator, _ *sql.FuncCall, args []tx) (string, Type, error) {
		src := native + "(" + joinSrc(args) + ")"
		return src, t.inferType(src, args), nil
	}}
}

func joinSrc(args []tx) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.src
	}
	return strings.Join(parts, ", ")
}

var typeFloat = Type{Kind: KindFloat}

var scalarFns map[string]fnRule

func init() {
	ts := typeTimestamp
	str := typeString
	long := typeLong
	dbl := typeDouble
	scalarFns = map[string]fnRule{
		"TIME_PARSE":  simple("timestamp_parse", 1, 3, ts),
		"TIME_FORMAT": simple("timestamp_format", 1, 3, str),
		"TIME_FLOOR":  simple("timestamp_floor", 2, 4, ts),
		"TIME_CEIL":   simple("timestamp_ceil", 2, 4, ts),
		"TIME_SHIFT":  simple("timestamp_shift", 3, 4, ts),
		"TIME_EXTRACT": {min: 1, max: 3, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			if len(a) == 1 {
				a = append(a, tx{src: "'MILLISECOND'"})
			}
			return "timestamp_extract(" + joinSrc(a) + ")", long, nil
		}},
		"TIME_IN_INTERVAL": {min: 2, max: 2, build: func(t *translator, call *sql.FuncCall, a []tx) (string, Type, error) {
			lit, ok := call.Args[1].(*sql.StringLit)
			if !ok {
				return "", Type{}, t.errAt(call, "TIME_IN_INTERVAL needs a literal interval")
			}
			iv, err := interval.Parse(lit.Value)
			if err != nil {
				return "", Type{}, t.errAt(call, "TIME_IN_INTERVAL: %v", err)
			}
			return "((" + a[0].src + " >= " + longLit(iv.Start) + ") && (" + a[0].src + " < " + longLit(iv.End) + "))", long, nil
		}},
		"MILLIS_TO_TIMESTAMP": {min: 1, max: 1, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return "cast(" + a[0].src + ", 'LONG')", ts, nil
		}},
		"TIMESTAMP_TO_MILLIS": {min: 1, max: 1, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return a[0].src, long, nil
		}},
		"CURRENT_TIMESTAMP": {min: 0, max: 0, build: func(t *translator, _ *sql.FuncCall, _ []tx) (string, Type, error) {
			return longLit(t.q.now), ts, nil
		}},
		"CURRENT_DATE": {min: 0, max: 0, build: func(t *translator, _ *sql.FuncCall, _ []tx) (string, Type, error) {
			return longLit(t.q.now - t.q.now%86400000), ts, nil
		}},
		"DATE_TRUNC": {min: 2, max: 2, build: func(t *translator, call *sql.FuncCall, a []tx) (string, Type, error) {
			lit, ok := call.Args[0].(*sql.StringLit)
			if !ok {
				return "", Type{}, t.errAt(call, "DATE_TRUNC needs a literal unit")
			}
			p := unitPeriod(lit.Value)
			if p == "" {
				return "", Type{}, t.errAt(call, "DATE_TRUNC: unknown unit '%s'", lit.Value)
			}
			return "timestamp_floor(" + a[1].src + ", '" + p + "')", ts, nil
		}},
		"CONCAT":           simple("concat", 1, -1, str),
		"TEXTCAT":          simple("concat", 2, 2, str),
		"LOWER":            simple("lower", 1, 1, str),
		"UPPER":            simple("upper", 1, 1, str),
		"LENGTH":           simple("strlen", 1, 1, long),
		"CHAR_LENGTH":      simple("strlen", 1, 1, long),
		"CHARACTER_LENGTH": simple("strlen", 1, 1, long),
		"STRLEN":           simple("strlen", 1, 1, long),
		"SUBSTRING":        {min: 2, max: 3, build: substringRule},
		"SUBSTR":           {min: 2, max: 3, build: substringRule},
		"LEFT":             simple("left", 2, 2, str),
		"RIGHT":            simple("right", 2, 2, str),
		"REPLACE":          simple("replace", 3, 3, str),
		"TRIM":             simple("trim", 1, 2, str),
		"BTRIM":            simple("trim", 1, 2, str),
		"LTRIM":            simple("ltrim", 1, 2, str),
		"RTRIM":            simple("rtrim", 1, 2, str),
		"LPAD":             simple("lpad", 2, 3, str),
		"RPAD":             simple("rpad", 2, 3, str),
		"REVERSE":          simple("reverse", 1, 1, str),
		"REPEAT":           simple("repeat", 2, 2, str),
		"STRPOS": {min: 2, max: 2, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return "(strpos(" + joinSrc(a) + ") + 1)", long, nil
		}},
		"CONTAINS_STRING":  simple("contains_string", 2, 2, long),
		"ICONTAINS_STRING": simple("icontains_string", 2, 2, long),
		"REGEXP_EXTRACT":   simple("regexp_extract", 2, 3, str),
		"REGEXP_LIKE":      simple("regexp_like", 2, 2, long),
		"REGEXP_REPLACE":   simple("regexp_replace", 3, 3, str),
		"STRING_FORMAT":    simple("format", 1, -1, str),
		"PARSE_LONG":       simple("parse_long", 1, 2, long),
		"NVL":              {min: 2, max: 2, build: coalesceRule},
		"IFNULL":           {min: 2, max: 2, build: coalesceRule},
		"COALESCE":         {min: 1, max: -1, build: coalesceRule},
		"NULLIF": {min: 2, max: 2, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return "case_searched((" + a[0].src + " == " + a[1].src + "), null, " + a[0].src + ")", a[0].typ, nil
		}},
		"ABS":     inferred("abs", 1, 1),
		"CEIL":    inferred("ceil", 1, 1),
		"CEILING": inferred("ceil", 1, 1),
		"FLOOR":   inferred("floor", 1, 1),
		"EXP":     simple("exp", 1, 1, dbl),
		"LN":      simple("log", 1, 1, dbl),
		"LOG10":   simple("log10", 1, 1, dbl),
		"POWER":   simple("pow", 2, 2, dbl),
		"SQRT":    simple("sqrt", 1, 1, dbl),
		"MOD": {min: 2, max: 2, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return "(" + a[0].src + " % " + a[1].src + ")", arithType(a[0].typ, a[1].typ), nil
		}},
		"ROUND":       inferred("round", 1, 2),
		"GREATEST":    inferred("greatest", 1, -1),
		"LEAST":       inferred("least", 1, -1),
		"DIV":         simple("div", 2, 2, long),
		"SAFE_DIVIDE": inferred("safe_divide", 2, 2),
		"SIN":         simple("sin", 1, 1, dbl),
		"COS":         simple("cos", 1, 1, dbl),
		"TAN":         simple("tan", 1, 1, dbl),
		"COT":         simple("cot", 1, 1, dbl),
		"ASIN":        simple("asin", 1, 1, dbl),
		"ACOS":        simple("acos", 1, 1, dbl),
		"ATAN":        simple("atan", 1, 1, dbl),
		"ATAN2":       simple("atan2", 2, 2, dbl),
		"DEGREES":     simple("todegrees", 1, 1, dbl),
		"RADIANS":     simple("toradians", 1, 1, dbl),
		"TRUNCATE":    {min: 1, max: 2, build: truncateRule},
		"TRUNC":       {min: 1, max: 2, build: truncateRule},
		"MV_TO_ARRAY": {min: 1, max: 1, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return "mv_to_array(" + a[0].src + ")", Type{Kind: KindStringArray}, nil
		}},
		"ARRAY_TO_MV": {min: 1, max: 1, build: func(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
			return "array_to_mv(" + a[0].src + ")", Type{Kind: KindStringArray}, nil
		}},
	}
}

func unitPeriod(u string) string {
	switch strings.ToLower(u) {
	case "second":
		return "PT1S"
	case "minute":
		return "PT1M"
	case "hour":
		return "PT1H"
	case "day":
		return "P1D"
	case "week":
		return "P1W"
	case "month":
		return "P1M"
	case "quarter":
		return "P3M"
	case "year":
		return "P1Y"
	case "decade":
		return "P10Y"
	case "century":
		return "P100Y"
	}
	return ""
}

func substringRule(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
	length := "-1"
	if len(a) == 3 {
		length = a[2].src
	}
	return "substring(" + a[0].src + ", (" + a[1].src + " - 1), " + length + ")", typeString, nil
}

func truncateRule(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
	// TRUNCATE(x, n) = sign(x) * floor(|x| * 10^n) / 10^n
	scale := "1"
	if len(a) == 2 {
		scale = "pow(10, " + a[1].src + ")"
	}
	x := a[0].src
	if len(a) == 1 && a[0].typ.Kind == KindLong {
		return x, typeLong, nil
	}
	return "case_searched((" + x + " < 0), (-(floor(((-" + x + ") * " + scale + ")) / " + scale + ")), (floor((" + x + " * " + scale + ")) / " + scale + "))", typeDouble, nil
}

func coalesceRule(_ *translator, _ *sql.FuncCall, a []tx) (string, Type, error) {
	typ := Type{}
	first := true
	for _, x := range a {
		if x.isNullLit() {
			continue
		}
		if first {
			typ, first = x.typ, false
			continue
		}
		ts := typ.Timestamp && x.typ.Timestamp
		typ = mergeTypes(typ, x.typ)
		typ.Timestamp = ts
	}
	if first {
		typ = typeString
	}
	src := a[len(a)-1].src
	for i := len(a) - 2; i >= 0; i-- {
		src = "nvl(" + a[i].src + ", " + src + ")"
	}
	return src, typ, nil
}

// inferType asks the native planner for the result type of src.
func (t *translator) inferType(src string, args []tx) Type {
	x, err := expr.Compile(src)
	if err != nil {
		return typeDouble
	}
	types := func(name string) (expr.Type, bool) {
		for _, a := range args {
			if a.src == name {
				return a.typ.exprType(), true
			}
		}
		if len(name) > 1 && name[0] == 'c' {
			var n int
			if _, err := fmt.Sscanf(name[1:], "%d", &n); err == nil && t.sc != nil && n < len(t.sc.cols) && t.post == nil {
				return t.sc.cols[n].typ.exprType(), true
			}
		}
		return expr.TypeUnknown, false
	}
	switch out := x.OutputType(types); out {
	case expr.TypeUnknown:
		return typeDouble
	default:
		return fromExprType(out)
	}
}

// call translates a function call: aggregates go to the aggregation context,
// scalar functions through the table above, and any other name that is a
// native function is passed through.
func (t *translator) call(x *sql.FuncCall) (tx, error) {
	if x.Over != nil {
		return tx{}, t.notSupported(x, "window functions are not supported")
	}
	name := strings.ToUpper(x.Name.Name)
	if isAggregate(name) {
		if t.post == nil {
			return tx{}, t.errAt(x, "aggregate %s is not allowed here", name)
		}
		if t.inAgg {
			return tx{}, t.errAt(x, "aggregate %s cannot be nested in another aggregate", name)
		}
		return t.post.aggregate(t, x, name)
	}
	if x.Distinct || x.Filter != nil {
		return tx{}, t.errAt(x, "DISTINCT and FILTER apply to aggregate functions only")
	}
	var args []tx
	for _, a := range x.Args {
		if na, ok := a.(*sql.NamedArg); ok {
			return tx{}, t.errAt(na, "named arguments are not supported for %s", name)
		}
		v, err := t.expr(a)
		if err != nil {
			return tx{}, err
		}
		args = append(args, v)
	}
	if rule, ok := scalarFns[name]; ok {
		if len(args) < rule.min || (rule.max >= 0 && len(args) > rule.max) {
			return tx{}, t.errAt(x, "%s takes %s arguments, got %d", name, argCount(rule.min, rule.max), len(args))
		}
		src, typ, err := rule.build(t, x, args)
		if err != nil {
			return tx{}, err
		}
		return tx{src: src, typ: typ, node: x}, nil
	}
	// Fall back to a native function of the same name (ARRAY_LENGTH → array_length, ...).
	lower := strings.ToLower(name)
	src := lower + "(" + joinSrc(args) + ")"
	if _, err := expr.Compile(src); err != nil {
		if strings.Contains(err.Error(), "function") || strings.Contains(err.Error(), "unknown") {
			return tx{}, t.errAt(x, "No match found for function signature %s", name)
		}
		return tx{}, t.errAt(x, "%s: %v", name, err)
	}
	return tx{src: src, typ: t.inferType(src, args), node: x}, nil
}

func argCount(min, max int) string {
	switch {
	case max < 0:
		return fmt.Sprintf("at least %d", min)
	case min == max:
		return fmt.Sprint(min)
	}
	return fmt.Sprintf("%d to %d", min, max)
}
