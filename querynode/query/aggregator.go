package query

import (
	"encoding/json"
	"math/bits"
	"strings"
)

// Aggregator is one aggregator spec (QUERY-SEMANTICS §6.1).
type Aggregator struct {
	Type string
	Name string
	// FieldName is the input column; Expression replaces it for the
	// numeric aggregators.
	FieldName  string
	Expression *Expression
	// first/last
	TimeColumn     string
	MaxStringBytes int
	// cardinality
	Fields []*DimensionSpec
	ByRow  bool
	// cardinality, hyperUnique, HLL: round the estimate to a long
	Round bool
	// hyperUnique
	IsInputHyperUnique bool
	// HLL
	LgK        int
	TgtHllType string
	// theta
	Size               int
	IsInputThetaSketch bool
	ShouldFinalize     bool
	// quantilesDoublesSketch
	K int
	// variance: the population estimator (else the sample one)
	Population bool
	// grouping: the dimensions whose absence from a subtotal it reports
	Groupings []string
	// expression with a bitwise fold (bitwise.go): the operation
	// (aggregate.OpBit*) and the initial value
	Bitwise string
	BitInit int64
	// filtered
	Filter *Filter
	Inner  *Aggregator
	// expression (the ARRAY_AGG and STRING_AGG forms)
	Array *ArrayAgg
}

// Value kinds of aggregator results before finalization.
const (
	KindLong   = "LONG"
	KindDouble = "DOUBLE"
	KindFloat  = "FLOAT"
	KindString = "STRING"
	KindHLL    = "HLL"   // cardinality, hyperUnique, HLLSketch*
	KindTheta  = "THETA" // thetaSketch
	// KindQuantiles is quantilesDoublesSketch (DataSketches DoublesSketch).
	KindQuantiles = "QUANTILES"
	// KindVariance is the variance aggregator (druid-stats).
	KindVariance = "VARIANCE"
)

// Base returns the innermost aggregator of a filtered chain.
func (a *Aggregator) Base() *Aggregator {
	for a.Type == "filtered" {
		a = a.Inner
	}
	return a
}

// ValueKind is the kind of the (intermediate) value the aggregator makes.
func (a *Aggregator) ValueKind() string {
	b := a.Base()
	switch b.Type {
	case "count":
		return KindLong
	case "cardinality", "hyperUnique", "HLLSketchBuild", "HLLSketchMerge":
		return KindHLL
	case "thetaSketch":
		return KindTheta
	case "variance":
		return KindVariance
	case "grouping":
		return KindLong
	case "quantilesDoublesSketch", "quantilesDoublesSketchMerge":
		return KindQuantiles
	case "expression":
		if b.Bitwise != "" {
			return KindLong
		}
		return KindArray
	}
	switch {
	case strings.HasPrefix(b.Type, "long"):
		return KindLong
	case strings.HasPrefix(b.Type, "double"):
		return KindDouble
	case strings.HasPrefix(b.Type, "float"):
		return KindFloat
	case strings.HasPrefix(b.Type, "string"):
		return KindString
	}
	return KindDouble
}

// Op is the operation of a simple aggregator: sum, min, max, first, last,
// any; "" for the others.
func (a *Aggregator) Op() string {
	t := a.Base().Type
	if t == "expression" {
		if a.Base().Bitwise != "" {
			return a.Base().Bitwise
		}
		if a.Base().Array.Distinct {
			return "arraySet"
		}
		return "arrayAppend"
	}
	for _, p := range []string{"long", "double", "float", "string"} {
		if strings.HasPrefix(t, p) {
			return strings.ToLower(t[len(p):])
		}
	}
	return ""
}

var simpleAggs = map[string]bool{
	"longSum": true, "longMin": true, "longMax": true,
	"doubleSum": true, "doubleMin": true, "doubleMax": true,
	"floatSum": true, "floatMin": true, "floatMax": true,
}

var pairAggs = map[string]bool{
	"longFirst": true, "longLast": true, "doubleFirst": true, "doubleLast": true,
	"floatFirst": true, "floatLast": true, "stringFirst": true, "stringLast": true,
	"longAny": true, "doubleAny": true, "floatAny": true, "stringAny": true,
}

// ParseAggregator parses an aggregator spec.
func ParseAggregator(raw json.RawMessage) (*Aggregator, error) {
	o, err := parseObj(raw, "aggregator")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, Invalidf("aggregator: missing type id property 'type'")
	}
	o.what = t + " aggregator"
	a := &Aggregator{Type: t}
	if t != "filtered" {
		if a.Name, err = o.reqStr("name"); err != nil {
			return nil, err
		}
		if a.Name == "" {
			return nil, Invalidf("%s: name must not be empty", o.what)
		}
	}
	switch {
	case t == "count":
	case simpleAggs[t]:
		a.FieldName, _, err = o.str("fieldName")
		if err != nil {
			return nil, err
		}
		src, hasExpr, err := o.str("expression")
		if err != nil {
			return nil, err
		}
		if hasExpr {
			if a.FieldName != "" {
				return nil, Invalidf("%s [%s]: only one of fieldName and expression may be set", o.what, a.Name)
			}
			if a.Expression, err = CompileExpression(src); err != nil {
				return nil, err
			}
		} else if a.FieldName == "" {
			return nil, Invalidf("%s [%s]: Must have a valid, non-null fieldName or expression", o.what, a.Name)
		}
	case pairAggs[t]:
		if a.FieldName, err = o.reqStr("fieldName"); err != nil {
			return nil, err
		}
		if a.TimeColumn, err = o.strDefault("timeColumn", "__time"); err != nil {
			return nil, err
		}
		n, err := o.integer("maxStringBytes", 1024)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 1<<24 {
			return nil, Invalidf("%s [%s]: maxStringBytes out of range", o.what, a.Name)
		}
		a.MaxStringBytes = int(n)
	case t == "cardinality":
		arr, ok, err := o.array("fields")
		if err != nil {
			return nil, err
		}
		if !ok || len(arr) == 0 {
			return nil, Invalidf("cardinality aggregator [%s]: fields must not be empty", a.Name)
		}
		for _, e := range arr {
			d, err := ParseDimensionSpec(e)
			if err != nil {
				return nil, err
			}
			a.Fields = append(a.Fields, d)
		}
		if a.ByRow, err = o.boolean("byRow", false); err != nil {
			return nil, err
		}
		if a.Round, err = o.boolean("round", false); err != nil {
			return nil, err
		}
	case t == "hyperUnique":
		if a.FieldName, err = o.reqStr("fieldName"); err != nil {
			return nil, err
		}
		if a.IsInputHyperUnique, err = o.boolean("isInputHyperUnique", false); err != nil {
			return nil, err
		}
		if a.Round, err = o.boolean("round", false); err != nil {
			return nil, err
		}
	case t == "HLLSketchBuild" || t == "HLLSketchMerge":
		if a.FieldName, err = o.reqStr("fieldName"); err != nil {
			return nil, err
		}
		lgk, err := o.integer("lgK", 12)
		if err != nil {
			return nil, err
		}
		if lgk < 4 || lgk > 21 {
			return nil, Invalidf("%s [%s]: lgK must be in [4, 21], got %d", o.what, a.Name, lgk)
		}
		a.LgK = int(lgk)
		if a.TgtHllType, err = o.strDefault("tgtHllType", "HLL_4"); err != nil {
			return nil, err
		}
		switch a.TgtHllType {
		case "HLL_4", "HLL_6", "HLL_8":
		default:
			return nil, Invalidf("%s [%s]: unknown tgtHllType [%s]", o.what, a.Name, a.TgtHllType)
		}
		if a.Round, err = o.boolean("round", false); err != nil {
			return nil, err
		}
		if a.ShouldFinalize, err = o.boolean("shouldFinalize", true); err != nil {
			return nil, err
		}
	case t == "thetaSketch":
		if a.FieldName, err = o.reqStr("fieldName"); err != nil {
			return nil, err
		}
		size, err := o.integer("size", 16384)
		if err != nil {
			return nil, err
		}
		if size < 16 || size > 1<<26 || bits.OnesCount64(uint64(size)) != 1 {
			return nil, Invalidf("%s [%s]: size must be a power of 2 in [16, 67108864], got %d", o.what, a.Name, size)
		}
		a.Size = int(size)
		if a.IsInputThetaSketch, err = o.boolean("isInputThetaSketch", false); err != nil {
			return nil, err
		}
		if a.ShouldFinalize, err = o.boolean("shouldFinalize", true); err != nil {
			return nil, err
		}
	case t == "quantilesDoublesSketch" || t == "quantilesDoublesSketchMerge":
		if a.FieldName, err = o.reqStr("fieldName"); err != nil {
			return nil, err
		}
		k, err := o.integer("k", 128)
		if err != nil {
			return nil, err
		}
		if k < 2 || k > 32768 || bits.OnesCount64(uint64(k)) != 1 {
			return nil, Invalidf("%s [%s]: k must be a power of 2 in [2, 32768], got %d", o.what, a.Name, k)
		}
		a.K = int(k)
		// maxStreamLength only sizes Druid's buffers; it is read to be checked.
		if _, err := o.integer("maxStreamLength", 1_000_000_000); err != nil {
			return nil, err
		}
		if a.ShouldFinalize, err = o.boolean("shouldFinalize", true); err != nil {
			return nil, err
		}
	case t == "variance":
		if err := parseVariance(o, a); err != nil {
			return nil, err
		}
	case t == "grouping":
		if err := parseGrouping(o, a); err != nil {
			return nil, err
		}
	case t == "filtered":
		fr := o.raw("filter")
		if fr == nil {
			return nil, o.missing("filter")
		}
		if a.Filter, err = ParseFilter(fr); err != nil {
			return nil, err
		}
		ar := o.raw("aggregator")
		if ar == nil {
			return nil, o.missing("aggregator")
		}
		if a.Inner, err = ParseAggregator(ar); err != nil {
			return nil, err
		}
		if a.Name, err = o.strDefault("name", a.Inner.Name); err != nil {
			return nil, err
		}
	case t == "expression":
		if bit, err := parseBitwiseAgg(o, a); bit || err != nil {
			if err != nil {
				return nil, err
			}
			break
		}
		if err := parseArrayAgg(o, a); err != nil {
			return nil, err
		}
	case t == "javascript":
		return nil, Errorf(Unsupported, "JavaScript is disabled")
	case t == "doubleMean" || strings.HasPrefix(t, "quantiles") ||
		t == "approxHistogram" || t == "approxHistogramFold" || strings.HasPrefix(t, "KllDoublesSketch"):
		return nil, Errorf(Unsupported, "aggregator type [%s] is not supported by this engine", t)
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [AggregatorFactory]", t)
	}
	return a, nil
}

// PostAggregator is one post-aggregator spec (QUERY-SEMANTICS §6.2).
type PostAggregator struct {
	Type      string
	Name      string
	Fn        string // arithmetic: + - * / pow quotient
	Fields    []*PostAggregator
	Ordering  string
	FieldName string // fieldAccess, finalizingFieldAccess, hyperUniqueCardinality, *Estimate
	// constant
	Value       float64
	ValueIsLong bool
	LongValue   int64
	// expression
	Expression *Expression
	OutputType string
	Round      bool // HLLSketchEstimate
	// quantilesDoublesSketchTo*: the fraction(s), split points, bin count or
	// value asked about.
	Fractions   []float64
	SplitPoints []float64
	NumBins     int
	// stddev: the population estimator (else the sample one)
	Population bool
	// Sketch post-aggregators (sketchpost.go): standard deviations of
	// bounds (0: none asked), a union's lgK, HLL type or theta size, and
	// a theta set operation.
	NumStdDev  int
	LgK        int
	TgtHllType string
	Size       int
	Func       string
}

// ParsePostAggregator parses a post-aggregator; top-level ones need a name.
func ParsePostAggregator(raw json.RawMessage, top bool) (*PostAggregator, error) {
	o, err := parseObj(raw, "post-aggregator")
	if err != nil {
		return nil, err
	}
	t, err := o.reqStr("type")
	if err != nil {
		return nil, Invalidf("post-aggregator: missing type id property 'type'")
	}
	o.what = t + " post-aggregator"
	p := &PostAggregator{Type: t}
	if p.Name, err = o.strDefault("name", ""); err != nil {
		return nil, err
	}
	fields := func(min int) error {
		a, _, err := o.array("fields")
		if err != nil {
			return err
		}
		if len(a) < min {
			return Invalidf("%s [%s]: needs at least %d fields", o.what, p.Name, min)
		}
		for _, e := range a {
			f, err := ParsePostAggregator(e, false)
			if err != nil {
				return err
			}
			p.Fields = append(p.Fields, f)
		}
		return nil
	}
	switch t {
	case "arithmetic":
		if p.Fn, err = o.reqStr("fn"); err != nil {
			return nil, err
		}
		switch p.Fn {
		case "+", "-", "*", "/", "pow", "quotient":
		default:
			return nil, Invalidf("Unknown arithmetic operation [%s]", p.Fn)
		}
		if err := fields(2); err != nil {
			return nil, err
		}
		if p.Ordering, err = o.strDefault("ordering", ""); err != nil {
			return nil, err
		}
		if p.Ordering != "" && p.Ordering != "numericFirst" {
			return nil, Invalidf("arithmetic post-aggregator: unknown ordering [%s]", p.Ordering)
		}
	case "fieldAccess", "finalizingFieldAccess", "hyperUniqueCardinality":
		if p.FieldName, err = o.reqStr("fieldName"); err != nil {
			return nil, err
		}
	case "HLLSketchEstimate", "thetaSketchEstimate":
		fr := o.raw("field")
		if fr == nil {
			return nil, o.missing("field")
		}
		f, err := ParsePostAggregator(fr, false)
		if err != nil {
			return nil, err
		}
		p.Fields = []*PostAggregator{f}
		if p.Round, err = o.boolean("round", false); err != nil {
			return nil, err
		}
		if err := parseSketchPostAgg(o, p); err != nil {
			return nil, err
		}
	case "quantilesDoublesSketchToQuantile", "quantilesDoublesSketchToQuantiles", "quantilesDoublesSketchToRank",
		"quantilesDoublesSketchToCDF", "quantilesDoublesSketchToHistogram", "quantilesDoublesSketchToString":
		if err := parseQuantilesPostAgg(o, p); err != nil {
			return nil, err
		}
	case "stddev":
		if err := parseStddev(o, p); err != nil {
			return nil, err
		}
	case "HLLSketchEstimateWithBounds", "HLLSketchUnion", "HLLSketchToString", "thetaSketchSetOp":
		if err := parseSketchPostAgg(o, p); err != nil {
			return nil, err
		}
	case "constant":
		raw := o.raw("value")
		if raw == nil {
			return nil, Invalidf("Constant value must not be null")
		}
		s, ok := scalarString(raw)
		if !ok {
			return nil, Invalidf("constant post-aggregator: value must be a number")
		}
		if n, ok := parseInt(raw); ok && !strings.ContainsAny(s, ".eE") {
			p.ValueIsLong, p.LongValue, p.Value = true, n, float64(n)
		} else if f, _, err := o.number("value"); err != nil {
			return nil, err
		} else {
			p.Value = f
		}
	case "expression":
		src, err := o.reqStr("expression")
		if err != nil {
			return nil, err
		}
		if p.Expression, err = CompileExpression(src); err != nil {
			return nil, err
		}
		if p.Ordering, err = o.strDefault("ordering", ""); err != nil {
			return nil, err
		}
		ot, err := o.strDefault("outputType", "")
		if err != nil {
			return nil, err
		}
		if p.OutputType, err = parseValueType(ot, true); err != nil {
			return nil, err
		}
	case "doubleGreatest", "longGreatest", "doubleLeast", "longLeast":
		if err := fields(1); err != nil {
			return nil, err
		}
	case "javascript":
		return nil, Errorf(Unsupported, "JavaScript is disabled")
	default:
		return nil, Invalidf("Could not resolve type id '%s' as a subtype of [PostAggregator]", t)
	}
	if top && p.Name == "" {
		return nil, Invalidf("%s: name must not be empty", o.what)
	}
	return p, nil
}

// Dependencies lists the aggregator / post-aggregator names p reads.
func (p *PostAggregator) Dependencies() []string {
	var out []string
	var walk func(*PostAggregator)
	walk = func(x *PostAggregator) {
		if x.FieldName != "" {
			out = append(out, x.FieldName)
		}
		if x.Expression != nil {
			out = append(out, x.Expression.Expr.RequiredColumns()...)
		}
		for _, f := range x.Fields {
			walk(f)
		}
	}
	walk(p)
	return out
}
