package expr

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"strata/javacompat"
)

// Helpers reproducing java.lang.String / java.util.regex / Formatter
// behaviour that Druid's functions expose. Java strings are UTF-16, so
// lengths and indexes count UTF-16 code units.

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func toUTF16(s string) []uint16 { return utf16.Encode([]rune(s)) }

// fromUTF16 converts back; an unpaired surrogate (a cut through a
// supplementary character) becomes U+FFFD.
func fromUTF16(u []uint16) string { return string(utf16.Decode(u)) }

// javaSubstring is s.substring(begin, end) in UTF-16 units; indexes must be
// valid (0 <= begin <= end <= length).
func javaSubstring(s string, begin, end int) string {
	if isASCII(s) {
		return s[begin:end]
	}
	return fromUTF16(toUTF16(s)[begin:end])
}

// javaIndexOf is haystack.indexOf(needle, from) in UTF-16 units.
func javaIndexOf(h, n string, from int) int {
	if from < 0 {
		from = 0
	}
	if isASCII(h) && isASCII(n) {
		if from > len(h) {
			if n == "" {
				return len(h)
			}
			return -1
		}
		i := strings.Index(h[from:], n)
		if i < 0 {
			return -1
		}
		return i + from
	}
	hu, nu := toUTF16(h), toUTF16(n)
	if from > len(hu) {
		from = len(hu)
	}
outer:
	for i := from; i+len(nu) <= len(hu); i++ {
		for j := range nu {
			if hu[i+j] != nu[j] {
				continue outer
			}
		}
		return i
	}
	return -1
}

// --- regular expressions ---------------------------------------------------

// compileJavaRegex compiles a java.util.regex pattern. Go's RE2 syntax covers
// the common subset; look-around and back-references are rejected.
func compileJavaRegex(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("unsupported or invalid regular expression %q: %v", pattern, err)
	}
	return re, nil
}

// javaReplaceAll is Matcher.replaceAll with Java replacement syntax: $n and
// ${name} refer to groups, a backslash quotes the next character.
func javaReplaceAll(re *regexp.Regexp, s, repl string) (string, error) {
	matches := re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s, nil
	}
	var sb strings.Builder
	last := 0
	for _, m := range matches {
		sb.WriteString(s[last:m[0]])
		if err := appendJavaReplacement(&sb, re, s, m, repl); err != nil {
			return "", err
		}
		last = m[1]
	}
	sb.WriteString(s[last:])
	return sb.String(), nil
}

var errBadGroupRef = errors.New("illegal group reference in replacement string")

func appendJavaReplacement(sb *strings.Builder, re *regexp.Regexp, s string, m []int, repl string) error {
	ngroups := re.NumSubexp()
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i >= len(repl) {
				return errors.New("character to be escaped is missing")
			}
			sb.WriteByte(repl[i])
		case '$':
			i++
			if i >= len(repl) {
				return errBadGroupRef
			}
			g := -1
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return errBadGroupRef
				}
				name := repl[i+1 : i+end]
				g = re.SubexpIndex(name)
				if g < 0 {
					return fmt.Errorf("no group with name {%s}", name)
				}
				i += end
			} else {
				if repl[i] < '0' || repl[i] > '9' {
					return errBadGroupRef
				}
				g = int(repl[i] - '0')
				if g > ngroups {
					return fmt.Errorf("no group %d", g)
				}
				// take more digits while they still name an existing group
				for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
					next := g*10 + int(repl[i+1]-'0')
					if next > ngroups {
						break
					}
					g = next
					i++
				}
			}
			if m[2*g] >= 0 {
				sb.WriteString(s[m[2*g]:m[2*g+1]])
			}
		default:
			sb.WriteByte(c)
		}
	}
	return nil
}

// javaSplit is String.split(regex): trailing empty strings are removed and a
// zero-width match at the start does not produce a leading empty string.
func javaSplit(re *regexp.Regexp, s string) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	last := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if m[1] == 0 { // zero-width match at the beginning
			continue
		}
		if m[0] == m[1] && m[0] == len(s) {
			break
		}
		out = append(out, s[last:m[0]])
		last = m[1]
	}
	if last == 0 && len(out) == 0 {
		return []string{s}
	}
	out = append(out, s[last:])
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// likeToRegexp translates a SQL LIKE pattern into an anchored regexp.
func likeToRegexp(pattern string, escape rune, hasEscape bool) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString(`(?s)^`)
	escaping := false
	for _, r := range pattern {
		switch {
		case escaping:
			sb.WriteString(regexp.QuoteMeta(string(r)))
			escaping = false
		case hasEscape && r == escape:
			escaping = true
		case r == '%':
			sb.WriteString(".*")
		case r == '_':
			sb.WriteString(".")
		default:
			sb.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if escaping {
		sb.WriteString(regexp.QuoteMeta(string(escape)))
	}
	sb.WriteString("$")
	return regexp.Compile(sb.String())
}

// --- String.format -----------------------------------------------------------

var errBadFormat = errors.New("illegal format")

// javaFormat is Druid's StringUtils.nonStrictFormat: String.format with the
// given arguments, or the pattern followed by "; arg" for each argument when
// the pattern does not fit the arguments.
func javaFormat(pattern string, args []Value) string {
	s, err := javaFormatStrict(pattern, args)
	if err == nil {
		return s
	}
	var sb strings.Builder
	sb.WriteString(pattern)
	for _, a := range args {
		sb.WriteString("; ")
		sb.WriteString(javaToString(a))
	}
	return sb.String()
}

// javaToString is String.valueOf(object) of an expression value.
func javaToString(v Value) string {
	s, ok := v.AsString()
	if !ok {
		return "null"
	}
	if v.typ.IsArray() && len(v.elems()) == 1 {
		return "[" + s + "]"
	}
	return s
}

func javaFormatStrict(pattern string, args []Value) (string, error) {
	var sb strings.Builder
	next := 0 // ordinary index
	lastArg := -1
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i >= len(pattern) {
			return "", errBadFormat
		}
		// %[argument_index$][flags][width][.precision]conversion
		start := i
		argIndex := -1
		j := i
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' {
			j++
		}
		if j < len(pattern) && pattern[j] == '$' && j > start {
			n, _ := strconv.Atoi(pattern[start:j])
			argIndex = n - 1
			i = j + 1
		}
		flags := ""
		for i < len(pattern) && strings.IndexByte("-#+ 0,(<", pattern[i]) >= 0 {
			flags += string(pattern[i])
			i++
		}
		width := -1
		ws := i
		for i < len(pattern) && pattern[i] >= '0' && pattern[i] <= '9' {
			i++
		}
		if i > ws {
			width, _ = strconv.Atoi(pattern[ws:i])
		}
		prec := -1
		if i < len(pattern) && pattern[i] == '.' {
			i++
			ps := i
			for i < len(pattern) && pattern[i] >= '0' && pattern[i] <= '9' {
				i++
			}
			if i == ps {
				return "", errBadFormat
			}
			prec, _ = strconv.Atoi(pattern[ps:i])
		}
		if i >= len(pattern) {
			return "", errBadFormat
		}
		conv := pattern[i]
		switch conv {
		case '%':
			sb.WriteString(pad("%", width, flags))
			continue
		case 'n':
			sb.WriteByte('\n')
			continue
		}
		var arg Value
		switch {
		case strings.Contains(flags, "<"):
			if lastArg < 0 {
				return "", errBadFormat
			}
			arg = args[lastArg]
		case argIndex >= 0:
			if argIndex >= len(args) {
				return "", errBadFormat
			}
			arg, lastArg = args[argIndex], argIndex
		default:
			if next >= len(args) {
				return "", errBadFormat
			}
			arg, lastArg = args[next], next
			next++
		}
		out, err := formatOne(conv, flags, prec, arg)
		if err != nil {
			return "", err
		}
		sb.WriteString(pad(out, width, flags))
	}
	return sb.String(), nil
}

func pad(s string, width int, flags string) string {
	n := javacompat.StringLength(s)
	if width <= n {
		return s
	}
	fill := strings.Repeat(" ", width-n)
	if strings.Contains(flags, "-") {
		return s + fill
	}
	if strings.Contains(flags, "0") && !strings.ContainsAny(s, "NaIn") {
		// zero padding goes after the sign
		sign := ""
		if s != "" && (s[0] == '-' || s[0] == '+' || s[0] == ' ') {
			sign, s = s[:1], s[1:]
		}
		return sign + strings.Repeat("0", width-n) + s
	}
	return fill + s
}

func formatOne(conv byte, flags string, prec int, arg Value) (string, error) {
	upper := conv >= 'A' && conv <= 'Z'
	lc := conv | 0x20
	var out string
	switch lc {
	case 's':
		out = javaToString(arg)
		if prec >= 0 && javacompat.StringLength(out) > prec {
			out = javaSubstring(out, 0, prec)
		}
	case 'b':
		switch {
		case arg.IsNull():
			out = "false"
		case arg.typ == TypeString:
			out = "true"
		default:
			out = "true"
		}
	case 'c':
		if arg.IsNull() {
			out = "null"
		} else if arg.typ == TypeLong {
			out = string(rune(arg.Long()))
		} else {
			return "", errBadFormat
		}
	case 'd', 'x', 'o':
		if arg.IsNull() {
			out = "null"
			break
		}
		if arg.typ != TypeLong || prec >= 0 {
			return "", errBadFormat
		}
		out = formatInteger(lc, flags, arg.Long())
	case 'f', 'e', 'g':
		if arg.IsNull() {
			out = "null"
			break
		}
		if arg.typ != TypeDouble {
			return "", errBadFormat
		}
		out = formatFloat(lc, flags, prec, arg.Double())
	case 'h':
		return "", errBadFormat
	default:
		return "", errBadFormat
	}
	if upper {
		out = strings.ToUpper(out)
	}
	return out, nil
}

func formatInteger(conv byte, flags string, v int64) string {
	switch conv {
	case 'x':
		s := strconv.FormatUint(uint64(v), 16)
		if strings.Contains(flags, "#") {
			s = "0x" + s
		}
		return s
	case 'o':
		s := strconv.FormatUint(uint64(v), 8)
		if strings.Contains(flags, "#") {
			s = "0" + s
		}
		return s
	}
	neg := v < 0
	digits := strconv.FormatUint(uint64(v), 10)
	if neg {
		digits = strconv.FormatUint(uint64(-v), 10)
	}
	if strings.Contains(flags, ",") {
		digits = groupThousands(digits)
	}
	return applySign(digits, neg, flags)
}

func applySign(digits string, neg bool, flags string) string {
	switch {
	case neg && strings.Contains(flags, "("):
		return "(" + digits + ")"
	case neg:
		return "-" + digits
	case strings.Contains(flags, "+"):
		return "+" + digits
	case strings.Contains(flags, " "):
		return " " + digits
	}
	return digits
}

func groupThousands(d string) string {
	if len(d) <= 3 {
		return d
	}
	var sb strings.Builder
	first := len(d) % 3
	if first > 0 {
		sb.WriteString(d[:first])
	}
	for i := first; i < len(d); i += 3 {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(d[i : i+3])
	}
	return sb.String()
}

// shortestDigits returns the Double.toString digits of |d| (no leading or
// trailing zeros) and the exponent e such that the value is 0.d1d2... * 10^e.
func shortestDigits(d float64) (string, int) {
	s := javacompat.FormatDouble(math.Abs(d))
	mant, exp := s, 0
	if i := strings.IndexByte(s, 'E'); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	all := intPart + frac
	pointPos := len(intPart) + exp
	trimmed := strings.TrimLeft(all, "0")
	pointPos -= len(all) - len(trimmed)
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return "0", 1
	}
	return trimmed, pointPos
}

// roundDigits rounds the digit string to keep n digits (HALF_UP), returning
// the new digits and the adjusted exponent.
func roundDigits(digits string, exp, n int) (string, int) {
	if n >= len(digits) {
		return digits, exp
	}
	if n < 0 {
		return "0", exp
	}
	up := digits[n] >= '5'
	b := []byte(digits[:n])
	if up {
		i := n - 1
		for ; i >= 0; i-- {
			if b[i] == '9' {
				b[i] = '0'
				continue
			}
			b[i]++
			break
		}
		if i < 0 {
			b = append([]byte{'1'}, b...)
			exp++
		}
	}
	return string(b), exp
}

// formatFloat implements %f, %e and %g like java.util.Formatter, which
// rounds the Double.toString decimal HALF_UP.
func formatFloat(conv byte, flags string, prec int, v float64) string {
	if v != v {
		return "NaN"
	}
	neg := math.Signbit(v)
	if math.IsInf(v, 0) {
		if neg {
			if strings.Contains(flags, "(") {
				return "(Infinity)"
			}
			return "-Infinity"
		}
		return applySign("Infinity", false, flags)
	}
	if prec < 0 {
		prec = 6
	}
	digits, exp := shortestDigits(v)
	if conv == 'g' {
		// %g: decimal notation when 1e-4 <= rounded magnitude < 10^precision
		if prec == 0 {
			prec = 1
		}
		if digits == "0" {
			conv, prec = 'f', prec-1
		} else if _, rexp := roundDigits(digits, exp, prec); rexp-1 >= -4 && rexp <= prec {
			conv, prec = 'f', prec-rexp
		} else {
			conv, prec = 'e', prec-1
		}
	}
	var body string
	switch conv {
	case 'f':
		d, e := digits, exp
		if d != "0" {
			d, e = roundDigits(d, e, e+prec)
			if d == "0" || d == "" {
				d, e = "0", 1
			}
		}
		intPart := "0"
		frac := ""
		if d != "0" {
			if e > 0 {
				if len(d) >= e {
					intPart, frac = d[:e], d[e:]
				} else {
					intPart = d + strings.Repeat("0", e-len(d))
				}
			} else {
				frac = strings.Repeat("0", -e) + d
			}
		}
		if len(frac) < prec {
			frac += strings.Repeat("0", prec-len(frac))
		}
		frac = frac[:prec]
		if strings.Contains(flags, ",") {
			intPart = groupThousands(intPart)
		}
		body = intPart
		if prec > 0 || strings.Contains(flags, "#") {
			body += "." + frac
		}
	case 'e':
		d, e := digits, exp
		if d == "0" {
			e = 1
		} else {
			d, e = roundDigits(d, e, prec+1)
		}
		if len(d) < prec+1 {
			d += strings.Repeat("0", prec+1-len(d))
		}
		body = d[:1]
		if prec > 0 || strings.Contains(flags, "#") {
			body += "." + d[1:prec+1]
		}
		x := e - 1
		if d == strings.Repeat("0", len(d)) {
			x = 0
		}
		sign := "+"
		if x < 0 {
			sign, x = "-", -x
		}
		xs := strconv.Itoa(x)
		if len(xs) < 2 {
			xs = "0" + xs
		}
		body += "e" + sign + xs
	}
	return applySign(body, neg, flags)
}
