package query

import (
	"math/big"
	"strings"
	"unicode/utf8"

	"strata/javacompat"
)

// Ordering is one of Druid's string comparators (QUERY-SEMANTICS §7.3).
type Ordering string

// The string orderings.
const (
	Lexicographic Ordering = "lexicographic"
	Alphanumeric  Ordering = "alphanumeric"
	Numeric       Ordering = "numeric"
	Strlen        Ordering = "strlen"
	Version       Ordering = "version"
)

// ParseOrdering accepts an ordering name (case-insensitive).
func ParseOrdering(s string) (Ordering, error) {
	switch o := Ordering(strings.ToLower(s)); o {
	case Lexicographic, Alphanumeric, Numeric, Strlen, Version:
		return o, nil
	case "":
		return Lexicographic, nil
	}
	return "", Invalidf("Unknown string comparator [%s]", s)
}

// Compare compares two nullable strings (null sorts first).
func (o Ordering) Compare(a string, aNull bool, b string, bNull bool) int {
	if aNull || bNull {
		switch {
		case aNull && bNull:
			return 0
		case aNull:
			return -1
		}
		return 1
	}
	switch o {
	case Numeric:
		return compareNumeric(a, b)
	case Strlen:
		if la, lb := javacompat.StringLength(a), javacompat.StringLength(b); la != lb {
			return cmpInt(la, lb)
		}
		return strings.Compare(a, b)
	case Alphanumeric:
		return compareAlphanumeric(a, b)
	case Version:
		return compareVersion(a, b)
	}
	return strings.Compare(a, b)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareNumeric parses both as decimals; unparsable values sort as null
// (first), and two unparsables compare as strings.
func compareNumeric(a, b string) int {
	ra, okA := parseDecimal(a)
	rb, okB := parseDecimal(b)
	switch {
	case okA && okB:
		return ra.Cmp(rb)
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	}
	return 1
}

func parseDecimal(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/_") {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// compareAlphanumeric compares runs of digits numerically and other runs
// character by character, like Druid's AlphanumericComparator.
func compareAlphanumeric(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		da, db := isDigit(a[i]), isDigit(b[j])
		switch {
		case da && db:
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
		default:
			ra, sa := utf8.DecodeRuneInString(a[i:])
			rb, sb := utf8.DecodeRuneInString(b[j:])
			if ra != rb {
				return cmpInt(int(ra), int(rb))
			}
			i += sa
			j += sb
		}
	}
	return cmpInt(len(a)-i, len(b)-j)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// compareVersion orders like Maven's ComparableVersion for the common
// forms: numeric segments numerically, qualifiers as strings, with a
// missing segment equal to 0.
func compareVersion(a, b string) int {
	sa := strings.FieldsFunc(a, func(r rune) bool { return r == '.' || r == '-' })
	sb := strings.FieldsFunc(b, func(r rune) bool { return r == '.' || r == '-' })
	for k := 0; k < max(len(sa), len(sb)); k++ {
		x, y := "0", "0"
		if k < len(sa) {
			x = sa[k]
		}
		if k < len(sb) {
			y = sb[k]
		}
		xn, yn := allDigits(x), allDigits(y)
		var c int
		switch {
		case xn && yn:
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if c = cmpInt(len(x), len(y)); c == 0 {
				c = strings.Compare(x, y)
			}
		case xn:
			c = 1 // a number is newer than a qualifier
		case yn:
			c = -1
		default:
			c = strings.Compare(strings.ToLower(x), strings.ToLower(y))
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}
