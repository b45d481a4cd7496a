package query

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"

	"strata/interval"
)

// Filter is one node of a filter tree (QUERY-SEMANTICS §4). Members that do
// not apply to Type are zero. Column is the column or dimension filtered.
type Filter struct {
	Type   string
	Column string

	// selector / extraction: Value (nil = IS NULL)
	Value *string
	// in: Values, nil elements match nulls
	Values []*string
	// equals: Match; range: Lower/Upper (nil = unbounded) of MatchType.
	MatchType string
	Match     Scalar
	// bound: string bounds; range: typed bounds in LowerS/UpperS.
	Lower, Upper             *string
	LowerStrict, UpperStrict bool
	Ordering                 Ordering
	LowerS, UpperS           *Scalar
	// like / regex: Regex (like is translated to an anchored regex)
	Regex *regexp.Regexp
	// LikePrefix is the literal prefix of a like pattern (used to narrow
	// dictionary ranges).
	LikePrefix string
	// search
	Search *SearchQuery
	// interval
	Intervals []interval.Interval
	// and / or / not
	Fields []*Filter
	Field  *Filter
	// expression
	Expression *Expression
	// columnComparison
	Dimensions []*DimensionSpec

	Extraction *ExtractionFn
}

// Scalar is a typed literal of an equals or range filter.
type Scalar struct {
	Type  string // STRING, LONG, DOUBLE, FLOAT
	S     string
	L     int64
	D     float64
	IsNum bool // S parses as a number (D, and L when integral)
}

func parseScalar(raw json.RawMessage, typ string) (Scalar, error) {
	s, ok := scalarString(raw)
	if !ok {
		return Scalar{}, Invalidf("filter value must be a scalar of type %s, got %s", typ, snippet(raw))
	}
	sc := Scalar{Type: typ, S: s}
	if d, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		sc.IsNum, sc.D = true, d
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			sc.L = n
		} else {
			sc.L = int64(math.Trunc(d))
		}
	}
	if (typ == "LONG" || typ == "DOUBLE" || typ == "FLOAT") && !sc.IsNum {
		return Scalar{}, Invalidf("filter value [%s] cannot be converted to %s", s, typ)
	}
	if typ == "LONG" && sc.D != math.Trunc(sc.D) {
		// Druid casts the match value to the match type.
		sc.L = int64(math.Trunc(sc.D))
		sc.D = float64(sc.L)
	}
	return sc, nil
}

// ParseFilter parses a filter object.
func ParseFilter(raw json.RawMessage) (*Filter, error) {
	o, err := parseObj(raw, "filter")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, Invalidf("filter: missing type id property 'type'")
	}
	o.what = t + " filter"
	f := &Filter{Type: t}
	extraction := func() error {
		if raw := o.raw("extractionFn"); raw != nil {
			var err error
			f.Extraction, err = ParseExtractionFn(raw)
			return err
		}
		return nil
	}
	dim := func() error {
		var err error
		f.Column, err = o.reqStr("dimension")
		if err != nil {
			return err
		}
		return extraction()
	}
	col := func() error {
		var err error
		f.Column, err = o.reqStr("column")
		return err
	}
	switch t {
	case "selector", "extraction":
		if err := dim(); err != nil {
			return nil, err
		}
		if f.Value, err = o.nullableStr("value"); err != nil {
			return nil, err
		}
		f.Type = "selector"
	case "equals":
		if err := col(); err != nil {
			return nil, err
		}
		mt, err := o.reqStr("matchValueType")
		if err != nil {
			return nil, err
		}
		if f.MatchType, err = parseValueType(mt, false); err != nil {
			return nil, err
		}
		raw := o.raw("matchValue")
		if raw == nil {
			return nil, Invalidf("Invalid equality filter on column [%s], matchValue cannot be null", f.Column)
		}
		if f.Match, err = parseScalar(raw, f.MatchType); err != nil {
			return nil, err
		}
	case "null":
		if err := col(); err != nil {
			return nil, err
		}
	case "in":
		if o.has("column") && !o.has("dimension") {
			if err := col(); err != nil {
				return nil, err
			}
			if _, err := o.strDefault("matchValueType", "STRING"); err != nil {
				return nil, err
			}
			a, ok, err := o.array("sortedValues")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, o.missing("sortedValues")
			}
			if f.Values, err = nullableStrings(a); err != nil {
				return nil, err
			}
		} else {
			if err := dim(); err != nil {
				return nil, err
			}
			a, ok, err := o.array("values")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, Invalidf("in filter on [%s]: values cannot be null", f.Column)
			}
			if f.Values, err = nullableStrings(a); err != nil {
				return nil, err
			}
		}
	case "bound":
		if err := dim(); err != nil {
			return nil, err
		}
		if f.Lower, err = o.nullableStr("lower"); err != nil {
			return nil, err
		}
		if f.Upper, err = o.nullableStr("upper"); err != nil {
			return nil, err
		}
		if f.Lower == nil && f.Upper == nil {
			return nil, Invalidf("bound filter on [%s]: lower and upper can not be null at the same time", f.Column)
		}
		if f.LowerStrict, err = o.boolean("lowerStrict", false); err != nil {
			return nil, err
		}
		if f.UpperStrict, err = o.boolean("upperStrict", false); err != nil {
			return nil, err
		}
		ord, err := o.strDefault("ordering", "")
		if err != nil {
			return nil, err
		}
		if raw := o.raw("ordering"); raw != nil && ord == "" {
			if oo, err := parseObj(raw, "ordering"); err == nil {
				ord, _ = oo.strDefault("type", "")
			}
		}
		if alpha, err := o.boolean("alphaNumeric", false); err != nil {
			return nil, err
		} else if alpha && ord == "" {
			ord = "alphanumeric"
		}
		if f.Ordering, err = ParseOrdering(ord); err != nil {
			return nil, err
		}
	case "range":
		if err := col(); err != nil {
			return nil, err
		}
		mt, err := o.reqStr("matchValueType")
		if err != nil {
			return nil, err
		}
		if f.MatchType, err = parseValueType(mt, false); err != nil {
			return nil, err
		}
		for _, b := range []struct {
			k string
			p **Scalar
		}{{"lower", &f.LowerS}, {"upper", &f.UpperS}} {
			if raw := o.raw(b.k); raw != nil {
				sc, err := parseScalar(raw, f.MatchType)
				if err != nil {
					return nil, err
				}
				*b.p = &sc
			}
		}
		if f.LowerS == nil && f.UpperS == nil {
			return nil, Invalidf("Invalid range filter on column [%s], lower and upper cannot be null at the same time", f.Column)
		}
		if f.LowerStrict, err = o.boolean("lowerOpen", false); err != nil {
			return nil, err
		}
		if f.UpperStrict, err = o.boolean("upperOpen", false); err != nil {
			return nil, err
		}
	case "like":
		if err := dim(); err != nil {
			return nil, err
		}
		p, err := o.reqStr("pattern")
		if err != nil {
			return nil, err
		}
		esc, err := o.strDefault("escape", "")
		if err != nil {
			return nil, err
		}
		if len([]rune(esc)) > 1 {
			return nil, Invalidf("like filter: escape must be a single character")
		}
		if f.Regex, f.LikePrefix, err = likeToRegex(p, esc); err != nil {
			return nil, err
		}
	case "regex":
		if err := dim(); err != nil {
			return nil, err
		}
		p, err := o.reqStr("pattern")
		if err != nil {
			return nil, err
		}
		if f.Regex, err = compileJavaRegex(p); err != nil {
			return nil, err
		}
	case "search":
		if err := dim(); err != nil {
			return nil, err
		}
		raw := o.raw("query")
		if raw == nil {
			return nil, o.missing("query")
		}
		if f.Search, err = ParseSearchQuery(raw); err != nil {
			return nil, err
		}
	case "interval":
		if err := dim(); err != nil {
			return nil, err
		}
		strs, ok, err := o.strings("intervals")
		if err != nil {
			return nil, err
		}
		if !ok || len(strs) == 0 {
			return nil, Invalidf("interval filter on [%s]: intervals cannot be empty", f.Column)
		}
		var ivs []interval.Interval
		for _, s := range strs {
			iv, err := interval.Parse(s)
			if err != nil {
				return nil, Invalidf("Invalid interval [%s]: %v", s, err)
			}
			ivs = append(ivs, iv)
		}
		f.Intervals = Condense(ivs)
	case "and", "or":
		a, ok, err := o.array("fields")
		if err != nil {
			return nil, err
		}
		if !ok || len(a) == 0 {
			return nil, Invalidf("%s filter must have at least one field", t)
		}
		for _, e := range a {
			sub, err := ParseFilter(e)
			if err != nil {
				return nil, err
			}
			f.Fields = append(f.Fields, sub)
		}
	case "not":
		raw := o.raw("field")
		if raw == nil {
			return nil, o.missing("field")
		}
		if f.Field, err = ParseFilter(raw); err != nil {
			return nil, err
		}
	case "true", "false":
	case "expression":
		src, err := o.reqStr("expression")
		if err != nil {
			return nil, err
		}
		if f.Expression, err = CompileExpression(src); err != nil {
			return nil, err
		}
	case "columnComparison":
		a, _, err := o.array("dimensions")
		if err != nil {
			return nil, err
		}
		if len(a) < 2 {
			return nil, Invalidf("columnComparison filter needs at least two dimensions")
		}
		for _, e := range a {
			d, err := ParseDimensionSpec(e)
			if err != nil {
				return nil, err
			}
			f.Dimensions = append(f.Dimensions, d)
		}
	case "javascript":
		return nil, Errorf(Unsupported, "JavaScript is disabled")
	case "spatial", "arrayContainsElement":
		return nil, Errorf(Unsupported, "filter type [%s] is not supported by this engine", t)
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [DimFilter]", t)
	}
	return f, nil
}

func nullableStrings(a []json.RawMessage) ([]*string, error) {
	out := make([]*string, len(a))
	for i, e := range a {
		if isNull(e) {
			continue
		}
		s, ok := scalarString(e)
		if !ok {
			return nil, Invalidf("filter values must be scalars, got %s", snippet(e))
		}
		out[i] = &s
	}
	return out, nil
}

// likeToRegex translates a SQL LIKE pattern: % any run, _ one character,
// esc escapes the next character. It also returns the literal prefix.
func likeToRegex(p, esc string) (*regexp.Regexp, string, error) {
	var sb, prefix strings.Builder
	sb.WriteString(`(?s)^`)
	escR := rune(-1)
	if esc != "" {
		escR = []rune(esc)[0]
	}
	rs := []rune(p)
	literal := true
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == escR:
			if i+1 >= len(rs) {
				return nil, "", Invalidf("like pattern [%s] ends with the escape character", p)
			}
			i++
			sb.WriteString(regexp.QuoteMeta(string(rs[i])))
			if literal {
				prefix.WriteRune(rs[i])
			}
		case r == '%':
			sb.WriteString(`.*`)
			literal = false
		case r == '_':
			sb.WriteString(`.`)
			literal = false
		default:
			sb.WriteString(regexp.QuoteMeta(string(r)))
			if literal {
				prefix.WriteRune(r)
			}
		}
	}
	sb.WriteString(`$`)
	re, err := regexp.Compile(sb.String())
	if err != nil {
		return nil, "", Invalidf("like pattern [%s]: %v", p, err)
	}
	return re, prefix.String(), nil
}

// SearchQuery is a search query spec: contains, insensitive_contains,
// fragment or regex.
type SearchQuery struct {
	Type          string
	Value         string
	Values        []string
	CaseSensitive bool
	Regex         *regexp.Regexp
	lower         []string
}

// ParseSearchQuery parses a search query spec.
func ParseSearchQuery(raw json.RawMessage) (*SearchQuery, error) {
	o, err := parseObj(raw, "search query spec")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, err
	}
	s := &SearchQuery{Type: t}
	switch t {
	case "contains", "insensitive_contains":
		if s.Value, err = o.reqStr("value"); err != nil {
			return nil, err
		}
		if t == "contains" {
			// Druid reads "caseSensitive"; "case_sensitive" is ignored.
			if s.CaseSensitive, err = o.boolean("caseSensitive", false); err != nil {
				return nil, err
			}
		}
		s.Values = []string{s.Value}
	case "fragment":
		vals, ok, err := o.strings("values")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, o.missing("values")
		}
		s.Values = vals
		if s.CaseSensitive, err = o.boolean("caseSensitive", false); err != nil {
			return nil, err
		}
	case "regex":
		p, err := o.reqStr("pattern")
		if err != nil {
			return nil, err
		}
		if s.Regex, err = compileJavaRegex(p); err != nil {
			return nil, err
		}
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [SearchQuerySpec]", t)
	}
	for _, v := range s.Values {
		s.lower = append(s.lower, strings.ToLower(v))
	}
	return s, nil
}

// Matches reports whether v satisfies the spec (null never matches).
func (s *SearchQuery) Matches(v string) bool {
	if s.Regex != nil {
		return s.Regex.MatchString(v)
	}
	if !s.CaseSensitive {
		v = strings.ToLower(v)
	}
	for i := range s.Values {
		frag := s.Values[i]
		if !s.CaseSensitive {
			frag = s.lower[i]
		}
		if !strings.Contains(v, frag) {
			return false
		}
	}
	return true
}
