package expr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"strata/javacompat"
)

// maxStringResult bounds strings built by repeat/lpad/rpad, and
// maxArrayResult arrays built by array_slice and cartesian products, so that
// one call cannot exhaust memory.
const (
	maxStringResult = 64 << 20
	maxArrayResult  = 1 << 22
)

func init() {
	str := fixedType(TypeString)
	long := fixedType(TypeLong)
	register([]string{"concat"}, &funcDef{minArgs: 0, maxArgs: -1, outType: str, build: simple(evalConcat)})
	register([]string{"format"}, &funcDef{minArgs: 1, maxArgs: -1, outType: str, build: variadicFn(evalFormat)})
	register([]string{"strlen"}, &funcDef{minArgs: 1, maxArgs: 1, outType: long, build: unaryFn(func(v Value) (Value, error) {
		s, ok := v.AsString()
		if !ok {
			return NullOf(TypeLong), nil
		}
		return Long(int64(javacompat.StringLength(s))), nil
	})})
	register([]string{"strpos"}, &funcDef{minArgs: 2, maxArgs: 3, outType: long, build: optArgsFn(func(vals []Value) (Value, error) {
		h, ok1 := vals[0].AsString()
		n, ok2 := vals[1].AsString()
		if !ok1 || !ok2 {
			return NullOf(TypeLong), nil
		}
		from := 0
		if len(vals) > 2 {
			from = vals[2].asInt()
		}
		return Long(int64(javaIndexOf(h, n, from))), nil
	})})
	register([]string{"substring"}, &funcDef{minArgs: 3, maxArgs: 3, outType: str, build: optArgsFn(evalSubstring)})
	register([]string{"left"}, &funcDef{minArgs: 2, maxArgs: 2, outType: str, build: binaryFn(func(x, y Value) (Value, error) {
		s, ok, n, err := stringLongArgs(x, y)
		if err != nil || !ok {
			return Null, err
		}
		if n < 0 {
			return Value{}, evalErrorf("left: needs a positive integer as second argument")
		}
		if l := javacompat.StringLength(s); n < l {
			return String(javaSubstring(s, 0, n)), nil
		}
		return String(s), nil
	})})
	register([]string{"right"}, &funcDef{minArgs: 2, maxArgs: 2, outType: str, build: binaryFn(func(x, y Value) (Value, error) {
		s, ok, n, err := stringLongArgs(x, y)
		if err != nil || !ok {
			return Null, err
		}
		if n < 0 {
			return Value{}, evalErrorf("right: needs a positive integer as second argument")
		}
		if l := javacompat.StringLength(s); n < l {
			return String(javaSubstring(s, l-n, l)), nil
		}
		return String(s), nil
	})})
	register([]string{"replace"}, &funcDef{minArgs: 3, maxArgs: 3, outType: str, build: optArgsFn(func(vals []Value) (Value, error) {
		s, ok := vals[0].AsString()
		pat, ok2 := vals[1].AsString()
		rep, ok3 := vals[2].AsString()
		if !ok || !ok2 || !ok3 {
			return Null, nil
		}
		return String(strings.ReplaceAll(s, pat, rep)), nil
	})})
	register([]string{"lower"}, &funcDef{minArgs: 1, maxArgs: 1, outType: str, build: unaryFn(func(v Value) (Value, error) {
		s, ok := v.AsString()
		if !ok {
			return Null, nil
		}
		return String(strings.ToLower(s)), nil
	})})
	register([]string{"upper"}, &funcDef{minArgs: 1, maxArgs: 1, outType: str, build: unaryFn(func(v Value) (Value, error) {
		s, ok := v.AsString()
		if !ok {
			return Null, nil
		}
		return String(strings.ToUpper(s)), nil
	})})
	register([]string{"reverse"}, &funcDef{minArgs: 1, maxArgs: 1, outType: str, build: unaryFn(func(v Value) (Value, error) {
		if v.Type() != TypeString {
			return Value{}, evalErrorf("reverse: needs a STRING argument but got %s instead", v.Type())
		}
		if v.IsNull() {
			return Null, nil
		}
		r := []rune(v.str)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return String(string(r)), nil
	})})
	register([]string{"repeat"}, &funcDef{minArgs: 2, maxArgs: 2, outType: str, build: binaryFn(func(x, y Value) (Value, error) {
		s, ok, n, err := stringLongArgs(x, y)
		if err != nil || !ok {
			return Null, err
		}
		if n < 1 {
			return Null, nil
		}
		if len(s)*n > maxStringResult || (len(s) > 0 && len(s)*n/len(s) != n) {
			return Value{}, evalErrorf("repeat: result too large")
		}
		return String(strings.Repeat(s, n)), nil
	})})
	register([]string{"lpad"}, &funcDef{minArgs: 3, maxArgs: 3, outType: str, build: optArgsFn(func(v []Value) (Value, error) { return evalPad(v, true) })})
	register([]string{"rpad"}, &funcDef{minArgs: 3, maxArgs: 3, outType: str, build: optArgsFn(func(v []Value) (Value, error) { return evalPad(v, false) })})
	register([]string{"parse_long"}, &funcDef{minArgs: 1, maxArgs: 2, outType: long, build: optArgsFn(evalParseLong)})
	register([]string{"trim"}, &funcDef{minArgs: 1, maxArgs: 2, outType: str, build: trimBuilder(true, true)})
	register([]string{"ltrim"}, &funcDef{minArgs: 1, maxArgs: 2, outType: str, build: trimBuilder(true, false)})
	register([]string{"rtrim"}, &funcDef{minArgs: 1, maxArgs: 2, outType: str, build: trimBuilder(false, true)})
	register([]string{"contains_string"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: containsBuilder(false)})
	register([]string{"icontains_string"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: containsBuilder(true)})
	register([]string{"like"}, &funcDef{minArgs: 2, maxArgs: 3, outType: long, build: buildLike})
	register([]string{"regexp_extract"}, &funcDef{minArgs: 2, maxArgs: 3, outType: str, build: buildRegexpExtract})
	register([]string{"regexp_like"}, &funcDef{minArgs: 2, maxArgs: 2, outType: long, build: buildRegexpLike})
	register([]string{"regexp_replace"}, &funcDef{minArgs: 3, maxArgs: 3, outType: str, build: buildRegexpReplace})
	register([]string{"lookup"}, &funcDef{minArgs: 2, maxArgs: 3, outType: str, build: buildLookup, volatile: true})
}

func evalConcat(e env, args []node) (Value, error) {
	if len(args) == 0 {
		return Null, nil
	}
	var sb strings.Builder
	for _, a := range args {
		v, err := a.eval(e)
		if err != nil {
			return Value{}, err
		}
		s, ok := v.AsString()
		if !ok {
			return Null, nil
		}
		if len(args) == 1 {
			return String(s), nil
		}
		sb.WriteString(s)
	}
	return String(sb.String()), nil
}

func evalFormat(vals []Value) (Value, error) {
	pattern, ok := vals[0].AsString()
	if !ok {
		return Null, nil
	}
	return String(javaFormat(pattern, vals[1:])), nil
}

// evalSubstring behaves like Druid's substring (SubstringDimExtractionFn):
// 0-based index, negative length means "to the end", an index past the end
// gives null.
func evalSubstring(vals []Value) (Value, error) {
	s, ok := vals[0].AsString()
	if !ok {
		return Null, nil
	}
	index, length := vals[1].asInt(), vals[2].asInt()
	n := javacompat.StringLength(s)
	if index < 0 {
		return Value{}, evalErrorf("substring: begin %d is negative", index)
	}
	if index >= n {
		return Null, nil
	}
	end := n
	if length >= 0 && index+length < n {
		end = index + length
	}
	return String(javaSubstring(s, index, end)), nil
}

// stringLongArgs checks the (STRING, LONG) signature of left/right/repeat.
func stringLongArgs(x, y Value) (s string, ok bool, n int, err error) {
	if x.Type() != TypeString || y.Type() != TypeLong {
		return "", false, 0, evalErrorf("needs a STRING as first argument and a LONG as second argument")
	}
	s, ok = x.AsString()
	return s, ok, y.asInt(), nil
}

// evalPad is lpad/rpad: null string or pad gives null, length 0 or negative
// gives null, an empty pad only truncates.
func evalPad(vals []Value, left bool) (Value, error) {
	base, ok1 := vals[0].AsString()
	n := vals[1].asInt()
	padStr, ok2 := vals[2].AsString()
	if !ok1 || !ok2 || n <= 0 {
		return Null, nil
	}
	if n > maxStringResult {
		return Value{}, evalErrorf("pad: result too large")
	}
	b, p := toUTF16(base), toUTF16(padStr)
	if len(b) >= n || len(p) == 0 {
		if len(b) > n {
			b = b[:n]
		}
		return String(fromUTF16(b)), nil
	}
	out := make([]uint16, 0, n)
	fill := n - len(b)
	if !left {
		out = append(out, b...)
	}
	for i := 0; i < fill; i++ {
		out = append(out, p[i%len(p)])
	}
	if left {
		out = append(out, b...)
	}
	return String(fromUTF16(out)), nil
}

// evalParseLong is Long.parseLong(s, radix) with a 0x prefix allowed for
// radix 16; unparsable input gives null.
func evalParseLong(vals []Value) (Value, error) {
	radix := 10
	if len(vals) > 1 {
		radix = vals[1].asInt()
	}
	s, ok := vals[0].AsString()
	if !ok {
		return NullOf(TypeLong), nil
	}
	if radix == 16 && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		s = s[2:]
	}
	if radix < 2 || radix > 36 || s == "" || strings.ContainsRune(s, '_') {
		return NullOf(TypeLong), nil
	}
	v, err := strconv.ParseInt(s, radix, 64)
	if err != nil {
		return NullOf(TypeLong), nil
	}
	return Long(v), nil
}

func trimBuilder(left, right bool) func(*buildCtx, []node) (evalFunc, error) {
	trim := func(v Value, chars string) Value {
		if v.IsNull() || chars == "" {
			return v
		}
		s, _ := v.AsString()
		in := func(r rune) bool { return strings.ContainsRune(chars, r) }
		t := s
		if left {
			t = strings.TrimLeftFunc(t, in)
		}
		if right {
			t = strings.TrimRightFunc(t, in)
		}
		if len(t) == len(s) {
			return v
		}
		return String(t)
	}
	return func(_ *buildCtx, args []node) (evalFunc, error) {
		if len(args) == 1 {
			return func(e env, args []node) (Value, error) {
				v, err := args[0].eval(e)
				if err != nil {
					return Value{}, err
				}
				return trim(v, " "), nil
			}, nil
		}
		if s, isNull, ok := literalString(args[1]); ok {
			return func(e env, args []node) (Value, error) {
				v, err := args[0].eval(e)
				if err != nil || isNull {
					return v, err
				}
				return trim(v, s), nil
			}, nil
		}
		return func(e env, args []node) (Value, error) {
			v, err := args[0].eval(e)
			if err != nil || v.IsNull() {
				return v, err
			}
			c, err := args[1].eval(e)
			if err != nil {
				return Value{}, err
			}
			chars, ok := c.AsString()
			if !ok {
				return v, nil
			}
			return trim(v, chars), nil
		}, nil
	}
}

func containsBuilder(ignoreCase bool) func(*buildCtx, []node) (evalFunc, error) {
	return func(_ *buildCtx, args []node) (evalFunc, error) {
		needle, err := requireStringLiteral(args[1], "substring")
		if err != nil {
			return nil, err
		}
		if ignoreCase {
			needle = strings.ToLower(needle)
		}
		return func(e env, args []node) (Value, error) {
			v, err := args[0].eval(e)
			if err != nil {
				return Value{}, err
			}
			s, ok := v.AsString()
			if !ok {
				return NullOf(TypeLong), nil // a null string contains nothing, nor lacks anything
			}
			if ignoreCase {
				s = strings.ToLower(s)
			}
			return Bool(strings.Contains(s, needle)), nil
		}, nil
	}
}

func buildLike(_ *buildCtx, args []node) (evalFunc, error) {
	pattern, isNull, ok := literalString(args[0+1])
	if !ok {
		return nil, fmt.Errorf("pattern must be a literal")
	}
	var escape rune
	hasEscape := false
	if len(args) > 2 {
		esc, escNull, ok := literalString(args[2])
		if !ok {
			return nil, fmt.Errorf("escape must be a literal")
		}
		if !escNull {
			if utf8.RuneCountInString(esc) != 1 {
				return nil, fmt.Errorf("escape must be null or a single character")
			}
			escape, _ = utf8.DecodeRuneInString(esc)
			hasEscape = true
		}
	}
	if isNull {
		return func(env, []node) (Value, error) { return Bool(false), nil }, nil
	}
	re, err := likeToRegexp(pattern, escape, hasEscape)
	if err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		s, ok := v.AsString()
		if !ok {
			return Bool(false), nil
		}
		return Bool(re.MatchString(s)), nil
	}, nil
}

// literalPattern compiles a literal pattern argument (null means "").
func literalPattern(n node) (*regexp.Regexp, error) {
	s, _, ok := literalString(n)
	if !ok {
		return nil, fmt.Errorf("pattern must be a STRING literal")
	}
	if v, _ := constValue(n); !v.IsNull() && v.Type() != TypeString {
		return nil, fmt.Errorf("pattern must be a STRING literal")
	}
	return compileJavaRegex(s)
}

func buildRegexpExtract(_ *buildCtx, args []node) (evalFunc, error) {
	re, err := literalPattern(args[1])
	if err != nil {
		return nil, err
	}
	index := 0
	if len(args) > 2 {
		v, ok := constValue(args[2])
		if !ok || !v.Type().IsNumeric() || v.IsNull() {
			return nil, fmt.Errorf("index must be a numeric literal")
		}
		index = v.asInt()
		if index < 0 || index > re.NumSubexp() {
			return nil, fmt.Errorf("no group %d in pattern", index)
		}
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		s, ok := v.AsString()
		if !ok {
			return Null, nil
		}
		m := re.FindStringSubmatchIndex(s)
		if m == nil || m[2*index] < 0 {
			return Null, nil
		}
		return String(s[m[2*index]:m[2*index+1]]), nil
	}, nil
}

func buildRegexpLike(_ *buildCtx, args []node) (evalFunc, error) {
	if _, err := requireStringLiteral(args[1], "pattern"); err != nil {
		return nil, err
	}
	re, err := literalPattern(args[1])
	if err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		s, ok := v.AsString()
		if !ok {
			return NullOf(TypeLong), nil
		}
		return Bool(re.MatchString(s)), nil
	}, nil
}

func buildRegexpReplace(_ *buildCtx, args []node) (evalFunc, error) {
	if isConst(args[1]) && isConst(args[2]) {
		if _, err := requireStringLiteral(args[1], "pattern"); err != nil {
			return nil, err
		}
		repl, err := requireStringLiteral(args[2], "replacement")
		if err != nil {
			return nil, err
		}
		re, err := literalPattern(args[1])
		if err != nil {
			return nil, err
		}
		return func(e env, args []node) (Value, error) {
			v, err := args[0].eval(e)
			if err != nil {
				return Value{}, err
			}
			s, ok := v.AsString()
			if !ok {
				return Null, nil
			}
			out, err := javaReplaceAll(re, s, repl)
			if err != nil {
				return Value{}, evalErrorf("regexp_replace: %v", err)
			}
			return String(out), nil
		}, nil
	}
	cache := &regexCache{}
	return optArgsFn(func(vals []Value) (Value, error) {
		s, ok1 := vals[0].AsString()
		pat, ok2 := vals[1].AsString()
		repl, ok3 := vals[2].AsString()
		if !ok1 || !ok2 || !ok3 {
			return Null, nil
		}
		re, err := cache.get(pat)
		if err != nil {
			return Value{}, evalErrorf("regexp_replace: %v", err)
		}
		out, err := javaReplaceAll(re, s, repl)
		if err != nil {
			return Value{}, evalErrorf("regexp_replace: %v", err)
		}
		return String(out), nil
	})(nil, args)
}

// regexCache remembers the last compiled pattern of a dynamic-pattern call;
// patterns usually repeat from row to row.
type regexCache struct {
	mu  sync.Mutex
	pat string
	re  *regexp.Regexp
}

func (c *regexCache) get(pat string) (*regexp.Regexp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.re != nil && c.pat == pat {
		return c.re, nil
	}
	re, err := compileJavaRegex(pat)
	if err != nil {
		return nil, err
	}
	c.pat, c.re = pat, re
	return re, nil
}

func buildLookup(c *buildCtx, args []node) (evalFunc, error) {
	name, err := requireStringLiteral(args[1], "lookup name")
	if err != nil {
		return nil, err
	}
	if c.opts == nil || c.opts.Lookup == nil {
		return nil, fmt.Errorf("lookup [%s] is not available", name)
	}
	fn, err := c.opts.Lookup(name)
	if err != nil {
		return nil, err
	}
	missing := Null
	if len(args) > 2 {
		s, isNull, ok := literalString(args[2])
		if !ok {
			return nil, fmt.Errorf("replaceMissingValueWith must be a literal")
		}
		if !isNull {
			missing = String(s)
		}
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		key, ok := v.AsString()
		if !ok {
			return missing, nil
		}
		if out, found := fn(key); found {
			return String(out), nil
		}
		return missing, nil
	}, nil
}
