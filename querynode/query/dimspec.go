package query

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"strata/granularity"
	"strata/interval"
	"strata/javacompat"
)

// DimensionSpec selects a dimension for grouping (or search) and names its
// output. Filtered specs (listFiltered, regexFiltered, prefixFiltered) are
// flattened: the delegate's members plus ValueFilter.
type DimensionSpec struct {
	Type       string
	Dimension  string
	OutputName string
	OutputType string // STRING (default), LONG, FLOAT, DOUBLE
	Extraction *ExtractionFn
	// ValueFilter, when set, keeps only the values it accepts (applied to
	// each value of a multi-value row, after extraction).
	ValueFilter func(v string, isNull bool) bool
}

// ParseDimensionSpec parses a dimension given as a string or a spec object.
func ParseDimensionSpec(raw json.RawMessage) (*DimensionSpec, error) {
	if s, ok := scalarString(raw); ok {
		if s == "" {
			return nil, Invalidf("dimension name must not be empty")
		}
		return &DimensionSpec{Type: "default", Dimension: s, OutputName: s, OutputType: "STRING"}, nil
	}
	o, err := parseObj(raw, "dimension spec")
	if err != nil {
		return nil, err
	}
	t, err := o.strDefault("type", "default")
	if err != nil {
		return nil, err
	}
	d := &DimensionSpec{Type: t}
	switch t {
	case "default", "extraction", "lookup":
		if d.Dimension, err = o.reqStr("dimension"); err != nil {
			return nil, err
		}
		if d.OutputName, err = o.strDefault("outputName", d.Dimension); err != nil {
			return nil, err
		}
		ot, err := o.strDefault("outputType", "STRING")
		if err != nil {
			return nil, err
		}
		if d.OutputType, err = parseValueType(ot, false); err != nil {
			return nil, err
		}
		switch t {
		case "extraction":
			raw := o.raw("extractionFn")
			if raw == nil {
				raw = o.raw("dimExtractionFn")
			}
			if raw == nil {
				return nil, Invalidf("extraction dimension spec needs an [extractionFn]")
			}
			if d.Extraction, err = ParseExtractionFn(raw); err != nil {
				return nil, err
			}
		case "lookup":
			if d.Extraction, err = parseLookupFn(o); err != nil {
				return nil, err
			}
		}
	case "listFiltered", "regexFiltered", "prefixFiltered":
		raw := o.raw("delegate")
		if raw == nil {
			return nil, Invalidf("%s dimension spec needs a [delegate]", t)
		}
		del, err := ParseDimensionSpec(raw)
		if err != nil {
			return nil, err
		}
		*d = *del
		inner := del.ValueFilter
		var accept func(string, bool) bool
		switch t {
		case "listFiltered":
			vals, ok, err := o.array("values")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, Invalidf("listFiltered dimension spec needs [values]")
			}
			set := map[string]bool{}
			hasNull := false
			for _, v := range vals {
				if isNull(v) {
					hasNull = true
					continue
				}
				s, _ := scalarString(v)
				set[s] = true
			}
			allow, err := o.boolean("isWhitelist", true)
			if err != nil {
				return nil, err
			}
			accept = func(v string, null bool) bool {
				in := hasNull && null || !null && set[v]
				return in == allow
			}
		case "regexFiltered":
			p, err := o.reqStr("pattern")
			if err != nil {
				return nil, err
			}
			re, err := compileJavaRegex(p)
			if err != nil {
				return nil, err
			}
			accept = func(v string, null bool) bool { return re.MatchString(v) }
		case "prefixFiltered":
			p, err := o.reqStr("prefix")
			if err != nil {
				return nil, err
			}
			accept = func(v string, null bool) bool { return !null && strings.HasPrefix(v, p) }
		}
		d.ValueFilter = accept
		if inner != nil {
			d.ValueFilter = func(v string, null bool) bool { return inner(v, null) && accept(v, null) }
		}
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [DimensionSpec]", t)
	}
	if d.OutputName == "" {
		return nil, Invalidf("dimension spec needs a non-empty outputName")
	}
	return d, nil
}

func compileJavaRegex(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, Invalidf("Invalid regular expression [%s]: %v", p, err)
	}
	return re, nil
}

// ExtractionFn transforms dimension values (QUERY-SEMANTICS §5.1).
type ExtractionFn struct {
	Type string

	pattern        *regexp.Regexp
	index          int
	replaceMissing bool
	replaceWith    *string
	search         *SearchQuery
	subIndex       int
	subLength      int // -1: to the end
	timeFmt        *interval.JodaFormat
	timeZone       *time.Location
	timeGran       granularity.Granularity
	asMillis       bool
	parseFmt       *interval.JodaFormat
	lookup         map[string]string
	retainMissing  bool
	injective      bool
	cascade        []*ExtractionFn
	format         string
	nullHandling   string
	upper          bool
	bucketSize     float64
	bucketOffset   float64
	// Injective reports that distinct inputs give distinct outputs.
}

// Injective reports whether the function maps distinct values to distinct
// values (so grouping on its output equals grouping on its input).
func (f *ExtractionFn) Injective() bool { return f.Type == "lookup" && f.injective }

// ParseExtractionFn parses an extraction function object.
func ParseExtractionFn(raw json.RawMessage) (*ExtractionFn, error) {
	o, err := parseObj(raw, "extractionFn")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, err
	}
	f := &ExtractionFn{Type: t}
	switch t {
	case "regex":
		p, err := o.reqStr("expr")
		if err != nil {
			return nil, err
		}
		if f.pattern, err = compileJavaRegex(p); err != nil {
			return nil, err
		}
		idx, err := o.integer("index", 1)
		if err != nil {
			return nil, err
		}
		if idx < 0 || int(idx) > f.pattern.NumSubexp() {
			return nil, Invalidf("regex extractionFn: index %d out of range for pattern [%s]", idx, p)
		}
		f.index = int(idx)
		if f.replaceMissing, err = o.boolean("replaceMissingValue", false); err != nil {
			return nil, err
		}
		if f.replaceWith, err = o.nullableStr("replaceMissingValueWith"); err != nil {
			return nil, err
		}
	case "partial":
		p, err := o.reqStr("expr")
		if err != nil {
			return nil, err
		}
		if f.pattern, err = compileJavaRegex(p); err != nil {
			return nil, err
		}
	case "searchQuery":
		raw := o.raw("query")
		if raw == nil {
			return nil, Invalidf("searchQuery extractionFn needs a [query]")
		}
		if f.search, err = ParseSearchQuery(raw); err != nil {
			return nil, err
		}
	case "substring":
		idx, err := o.integer("index", 0)
		if err != nil {
			return nil, err
		}
		if idx < 0 {
			return nil, Invalidf("substring extractionFn: index must be non-negative")
		}
		l, err := o.integer("length", -1)
		if err != nil {
			return nil, err
		}
		if o.has("length") && l < 0 {
			return nil, Invalidf("substring extractionFn: length must be non-negative")
		}
		f.subIndex, f.subLength = int(idx), int(l)
	case "strlen", "upper", "lower":
		f.upper = t == "upper"
	case "timeFormat":
		format, err := o.strDefault("format", "")
		if err != nil {
			return nil, err
		}
		if format != "" {
			if f.timeFmt, err = interval.CompileJoda(format); err != nil {
				return nil, Invalidf("timeFormat extractionFn: %v", err)
			}
		}
		f.timeZone = time.UTC
		if tz, ok, err := o.str("timeZone"); err != nil {
			return nil, err
		} else if ok {
			if f.timeZone, err = interval.LoadZone(tz); err != nil {
				return nil, Invalidf("timeFormat extractionFn: %v", err)
			}
		}
		f.timeGran = granularity.None
		if raw := o.raw("granularity"); raw != nil {
			if f.timeGran, err = granularity.Parse(raw); err != nil {
				return nil, Invalidf("timeFormat extractionFn: %v", err)
			}
		}
		if f.asMillis, err = o.boolean("asMillis", false); err != nil {
			return nil, err
		}
	case "time":
		in, err := o.reqStr("timeFormat")
		if err != nil {
			return nil, err
		}
		out, err := o.reqStr("resultFormat")
		if err != nil {
			return nil, err
		}
		if f.parseFmt, err = interval.CompileJoda(in); err != nil {
			return nil, Invalidf("time extractionFn: %v", err)
		}
		if f.timeFmt, err = interval.CompileJoda(out); err != nil {
			return nil, Invalidf("time extractionFn: %v", err)
		}
		f.timeZone = time.UTC
	case "lookup":
		lf, err := parseLookupFn(o)
		if err != nil {
			return nil, err
		}
		f = lf
	case "registeredLookup":
		if f, err = parseRegisteredLookupFn(o, "lookup"); err != nil {
			return nil, err
		}
	case "cascade":
		a, _, err := o.array("extractionFns")
		if err != nil {
			return nil, err
		}
		if len(a) == 0 {
			return nil, Invalidf("cascade extractionFn needs [extractionFns]")
		}
		for _, e := range a {
			sub, err := ParseExtractionFn(e)
			if err != nil {
				return nil, err
			}
			f.cascade = append(f.cascade, sub)
		}
	case "stringFormat":
		if f.format, err = o.reqStr("format"); err != nil {
			return nil, err
		}
		if f.nullHandling, err = o.strDefault("nullHandling", "nullString"); err != nil {
			return nil, err
		}
		switch f.nullHandling {
		case "nullString", "emptyString", "returnNull":
		default:
			return nil, Invalidf("stringFormat extractionFn: unknown nullHandling [%s]", f.nullHandling)
		}
	case "bucket":
		size, ok, err := o.number("size")
		if err != nil {
			return nil, err
		}
		if !ok {
			size = 1
		}
		if size <= 0 {
			return nil, Invalidf("bucket extractionFn: size must be positive")
		}
		off, _, err := o.number("offset")
		if err != nil {
			return nil, err
		}
		f.bucketSize, f.bucketOffset = size, off
	case "javascript":
		return nil, Errorf(Unsupported, "JavaScript is disabled")
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [ExtractionFn]", t)
	}
	return f, nil
}

func parseLookupFn(o obj) (*ExtractionFn, error) {
	f := &ExtractionFn{Type: "lookup"}
	raw := o.raw("lookup")
	if raw == nil {
		if o.has("name") {
			return parseRegisteredLookupFn(o, "name")
		}
		return nil, Invalidf("lookup needs a [lookup]")
	}
	if _, ok := scalarString(raw); ok {
		return nil, Errorf(Unsupported, "registered lookups are not supported by this engine")
	}
	lo, err := parseObj(raw, "lookup")
	if err != nil {
		return nil, err
	}
	if t, _ := lo.strDefault("type", "map"); t != "map" {
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [LookupExtractor]", t)
	}
	m := lo.raw("map")
	if m == nil {
		return nil, Invalidf("map lookup needs a [map]")
	}
	var mm map[string]*string
	if err := json.Unmarshal(m, &mm); err != nil {
		return nil, Invalidf("map lookup: [map] must map strings to strings")
	}
	f.lookup = make(map[string]string, len(mm))
	for k, v := range mm {
		if v != nil {
			f.lookup[k] = *v
		}
	}
	if err := f.parseLookupOptions(o, false); err != nil {
		return nil, err
	}
	return f, nil
}

// parseLookupOptions reads the missing-value options and injective flag
// that inline and registered lookups share.
func (f *ExtractionFn) parseLookupOptions(o obj, injective bool) error {
	var err error
	if f.retainMissing, err = o.boolean("retainMissingValue", false); err != nil {
		return err
	}
	if f.replaceWith, err = o.nullableStr("replaceMissingValueWith"); err != nil {
		return err
	}
	if f.retainMissing && f.replaceWith != nil && *f.replaceWith != "" {
		return Invalidf("Cannot specify a [replaceMissingValueWith] and set [retainMissingValue] to true")
	}
	f.injective, err = o.boolean("injective", injective)
	return err
}

// Apply transforms one string value; null in, null out unless the
// function says otherwise.
func (f *ExtractionFn) Apply(v string, isNull bool) (string, bool) {
	switch f.Type {
	case "regex":
		m := f.pattern.FindStringSubmatchIndex(v)
		if m == nil {
			if f.replaceMissing {
				return derefNull(f.replaceWith)
			}
			return v, isNull
		}
		if m[2*f.index] < 0 {
			return "", true
		}
		return v[m[2*f.index]:m[2*f.index+1]], false
	case "partial":
		if isNull || !f.pattern.MatchString(v) {
			return "", true
		}
		return v, false
	case "searchQuery":
		if isNull || !f.search.Matches(v) {
			return "", true
		}
		return v, false
	case "substring":
		if isNull {
			return "", true
		}
		return javaSubstring(v, f.subIndex, f.subLength)
	case "strlen":
		if isNull {
			return "0", false
		}
		return strconv.Itoa(javacompat.StringLength(v)), false
	case "upper", "lower":
		if isNull {
			return "", true
		}
		if f.upper {
			return strings.ToUpper(v), false
		}
		return strings.ToLower(v), false
	case "timeFormat":
		if isNull {
			return "", true
		}
		var ms int64
		if f.asMillis {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return v, false
			}
			ms = n
		} else {
			n, err := interval.ParseTime(v)
			if err != nil {
				return v, false
			}
			ms = n
		}
		return f.ApplyTime(ms), false
	case "time":
		if isNull {
			return "", true
		}
		t, err := f.parseFmt.ParseMillis(v, time.UTC)
		if err != nil {
			return v, false
		}
		return f.timeFmt.FormatMillis(t, f.timeZone), false
	case "lookup":
		if !isNull {
			if out, ok := f.lookup[v]; ok {
				return out, false
			}
		}
		if f.retainMissing {
			return v, isNull
		}
		return derefNull(f.replaceWith)
	case "cascade":
		for _, sub := range f.cascade {
			v, isNull = sub.Apply(v, isNull)
		}
		return v, isNull
	case "stringFormat":
		if isNull {
			switch f.nullHandling {
			case "returnNull":
				return "", true
			case "emptyString":
				v = ""
			default:
				v = "null"
			}
		}
		return javaFormat(f.format, v), false
	case "bucket":
		if isNull {
			return "", true
		}
		d, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", true
		}
		return f.applyBucket(d), false
	}
	return v, isNull
}

// ApplyLong transforms a numeric value (the __time column for timeFormat,
// numeric columns otherwise).
func (f *ExtractionFn) ApplyLong(n int64) (string, bool) {
	switch f.Type {
	case "timeFormat":
		return f.ApplyTime(n), false
	case "bucket":
		return f.applyBucket(float64(n)), false
	case "cascade":
		v, null := f.cascade[0].ApplyLong(n)
		for _, sub := range f.cascade[1:] {
			v, null = sub.Apply(v, null)
		}
		return v, null
	}
	return f.Apply(strconv.FormatInt(n, 10), false)
}

// ApplyTime formats a time with the timeFormat function.
func (f *ExtractionFn) ApplyTime(ms int64) string {
	if f.timeGran != nil {
		ms = f.timeGran.Bucket(ms)
	}
	if f.timeFmt == nil {
		return interval.FormatMillisIn(ms, f.timeZone)
	}
	return f.timeFmt.FormatMillis(ms, f.timeZone)
}

func (f *ExtractionFn) applyBucket(d float64) string {
	return strconv.FormatInt(int64(math.Floor((d-f.bucketOffset)/f.bucketSize)*f.bucketSize+f.bucketOffset), 10)
}

func derefNull(p *string) (string, bool) {
	if p == nil {
		return "", true
	}
	return *p, false
}

// javaSubstring cuts in UTF-16 code units, as Java does.
func javaSubstring(s string, index, length int) (string, bool) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		if index >= len(s) {
			return "", true
		}
		end := len(s)
		if length >= 0 {
			end = min(index+length, len(s))
		}
		return s[index:end], false
	}
	u := utf16.Encode([]rune(s))
	if index >= len(u) {
		return "", true
	}
	end := len(u)
	if length >= 0 {
		end = min(index+length, len(u))
	}
	return string(utf16.Decode(u[index:end])), false
}

// javaFormat implements the part of Java's String.format used with one
// string argument: %s (with optional width and '-' flag) and %%.
func javaFormat(format, v string) string {
	var sb strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			sb.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			sb.WriteString(format[i:])
			break
		}
		switch format[j] {
		case '%':
			sb.WriteByte('%')
		case 's', 'S':
			s := v
			if format[j] == 'S' {
				s = strings.ToUpper(s)
			}
			sb.WriteString(fmt.Sprintf("%"+format[i+1:j]+"s", s))
		case 'n':
			sb.WriteByte('\n')
		default:
			sb.WriteString(format[i : j+1])
		}
		i = j
	}
	return sb.String()
}
