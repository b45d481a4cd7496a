package engine

import (
	"math"
	"strings"

	"strata/expr"
	"strata/querynode/query"
)

// rowEnv gives access by name to the values of one result row:
// dimensions, aggregators (finalized) and the post-aggregators computed
// so far.
type rowEnv struct {
	schema *rowSchema
	row    *resultRow
}

func (r *rowEnv) get(name string) Value { return r.schema.get(r.row, name) }

// Get implements expr.Bindings for expression post-aggregators.
func (r *rowEnv) Get(name string) expr.Value { return valueToExpr(r.get(name)) }

// evalPostAgg computes one post-aggregator (QUERY-SEMANTICS §6.2).
func evalPostAgg(p *query.PostAggregator, env *rowEnv) (Value, error) {
	switch p.Type {
	case "arithmetic":
		var acc float64
		for i, f := range p.Fields {
			v, err := evalPostAgg(f, env)
			if err != nil {
				return Null, err
			}
			x, ok := v.Float64()
			if !ok {
				return Null, nil
			}
			if i == 0 {
				acc = x
				continue
			}
			switch p.Fn {
			case "+":
				acc += x
			case "-":
				acc -= x
			case "*":
				acc *= x
			case "/":
				if x == 0 {
					acc = 0
				} else {
					acc /= x
				}
			case "quotient":
				acc /= x
			case "pow":
				acc = math.Pow(acc, x)
			}
		}
		return Double(acc), nil
	case "fieldAccess", "finalizingFieldAccess":
		return env.get(p.FieldName), nil
	case "hyperUniqueCardinality":
		v := env.get(p.FieldName)
		return v, nil
	case "HLLSketchEstimate", "thetaSketchEstimate":
		if isSketchEstimateOfSketch(p, env) {
			return evalSketchPostAgg(p, env)
		}
		v, err := evalPostAgg(p.Fields[0], env)
		if err != nil {
			return Null, err
		}
		f, ok := v.Float64()
		if !ok {
			return Null, nil
		}
		if p.Round {
			return Long(int64(math.Round(f))), nil
		}
		return Double(f), nil
	case "quantilesDoublesSketchToQuantile", "quantilesDoublesSketchToQuantiles", "quantilesDoublesSketchToRank",
		"quantilesDoublesSketchToCDF", "quantilesDoublesSketchToHistogram", "quantilesDoublesSketchToString":
		return evalQuantilesPostAgg(p, env)
	case "stddev":
		return evalStddev(p, env)
	case "HLLSketchEstimateWithBounds", "HLLSketchUnion", "HLLSketchToString", "thetaSketchSetOp":
		return evalSketchPostAgg(p, env)
	case "constant":
		if p.ValueIsLong {
			return Long(p.LongValue), nil
		}
		return Double(p.Value), nil
	case "doubleGreatest", "doubleLeast", "longGreatest", "longLeast":
		greatest := strings.HasSuffix(p.Type, "Greatest")
		long := strings.HasPrefix(p.Type, "long")
		var best float64
		var bestL int64
		found := false
		for _, f := range p.Fields {
			v, err := evalPostAgg(f, env)
			if err != nil {
				return Null, err
			}
			x, ok := v.Float64()
			if !ok {
				continue
			}
			xl := int64(x)
			if v.K == KLong {
				xl = v.L
			}
			if !found {
				best, bestL, found = x, xl, true
				continue
			}
			if long {
				if (greatest && xl > bestL) || (!greatest && xl < bestL) {
					bestL = xl
				}
			} else if (greatest && x > best) || (!greatest && x < best) {
				best = x
			}
		}
		switch {
		case !found:
			return Null, nil
		case long:
			return Long(bestL), nil
		}
		return Double(best), nil
	case "expression":
		v, err := p.Expression.Expr.Eval(env)
		if err != nil {
			return Null, query.Invalidf("post-aggregator [%s]: %v", p.Name, err)
		}
		out := exprToValue(v)
		switch p.OutputType {
		case "LONG", "DOUBLE", "FLOAT", "STRING":
			out = convertValue(out, p.OutputType)
		}
		return out, nil
	}
	return Null, query.Errorf(query.Unsupported, "post-aggregator type [%s] is not supported", p.Type)
}

// matchRow evaluates a filter against one result row (having specs).
func matchRow(f *query.Filter, get func(string) Value) (tri, error) {
	switch f.Type {
	case "true":
		return tTrue, nil
	case "false":
		return tFalse, nil
	case "and", "or":
		res := tTrue
		if f.Type == "or" {
			res = tFalse
		}
		for _, s := range f.Fields {
			r, err := matchRow(s, get)
			if err != nil {
				return 0, err
			}
			if f.Type == "and" {
				if r == tFalse {
					return tFalse, nil
				}
				if r == tUnknown {
					res = tUnknown
				}
			} else {
				if r == tTrue {
					return tTrue, nil
				}
				if r == tUnknown {
					res = tUnknown
				}
			}
		}
		return res, nil
	case "not":
		r, err := matchRow(f.Field, get)
		if err != nil {
			return 0, err
		}
		switch r {
		case tTrue:
			return tFalse, nil
		case tFalse:
			return tTrue, nil
		}
		return tUnknown, nil
	case "expression":
		v, err := f.Expression.Expr.Eval(bindingsFunc(func(n string) expr.Value { return valueToExpr(get(n)) }))
		if err != nil {
			return 0, query.Invalidf("expression [%s]: %v", f.Expression.Source, err)
		}
		if v.IsNull() {
			return tUnknown, nil
		}
		return triOf(v.AsBool()), nil
	case "columnComparison":
		var first string
		var firstOK bool
		for i, d := range f.Dimensions {
			s, ok := get(d.Dimension).String()
			if d.Extraction != nil {
				var null bool
				s, null = d.Extraction.Apply(s, !ok)
				ok = !null
			}
			if i == 0 {
				first, firstOK = s, ok
			} else if ok != firstOK || s != first {
				return tFalse, nil
			}
		}
		return tTrue, nil
	case "null":
		return triOf(get(f.Column).IsNull()), nil
	}
	v := get(f.Column)
	if f.Extraction == nil && v.IsNumeric() {
		if np, ok := numericPred(f, false); ok {
			if v.IsNull() {
				return np.null, nil
			}
			d, _ := v.Float64()
			return triOf(np.matchDouble(d)), nil
		}
	}
	pred, err := stringPred(f)
	if err != nil {
		return 0, err
	}
	s, ok := v.String()
	if f.Extraction != nil {
		var null bool
		s, null = f.Extraction.Apply(s, !ok)
		ok = !null
	}
	return pred(s, !ok), nil
}

type bindingsFunc func(string) expr.Value

func (f bindingsFunc) Get(name string) expr.Value { return f(name) }

// matchHaving evaluates a having spec on a result row.
func matchHaving(h *query.Having, get func(string) Value) (bool, error) {
	switch h.Type {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "filter":
		r, err := matchRow(h.Filter, get)
		return r == tTrue, err
	case "greaterThan", "lessThan", "equalTo":
		v := get(h.Aggregation)
		x, ok := v.Float64()
		if !ok {
			return false, nil
		}
		switch h.Type {
		case "greaterThan":
			return x > h.Value, nil
		case "lessThan":
			return x < h.Value, nil
		}
		if v.K == KLong && h.Value == math.Trunc(h.Value) {
			return v.L == int64(h.Value), nil
		}
		return x == h.Value, nil
	case "dimSelector":
		s, ok := get(h.Dimension).String()
		if h.Extraction != nil {
			var null bool
			s, null = h.Extraction.Apply(s, !ok)
			ok = !null
		}
		if h.DimValue == nil {
			return !ok, nil
		}
		return ok && s == *h.DimValue, nil
	case "and":
		for _, s := range h.Specs {
			if m, err := matchHaving(s, get); err != nil || !m {
				return false, err
			}
		}
		return true, nil
	case "or":
		for _, s := range h.Specs {
			if m, err := matchHaving(s, get); err != nil || m {
				return m, err
			}
		}
		return false, nil
	case "not":
		m, err := matchHaving(h.Specs[0], get)
		return !m, err
	}
	return false, query.Invalidf("unknown having type [%s]", h.Type)
}

// compareValues orders two values numerically when both are numbers,
// otherwise as strings with the ordering; nulls first.
func compareValues(a, b Value, ord query.Ordering, numeric bool) int {
	if a.IsNull() || b.IsNull() {
		switch {
		case a.IsNull() && b.IsNull():
			return 0
		case a.IsNull():
			return -1
		}
		return 1
	}
	if numeric || (a.IsNumeric() && b.IsNumeric() && ord == query.Lexicographic) {
		x, okA := a.Float64()
		y, okB := b.Float64()
		if okA && okB {
			if a.K == KLong && b.K == KLong {
				return cmpOrdered(a.L, b.L)
			}
			return cmpFloat(x, y)
		}
	}
	sa, _ := a.String()
	sb, _ := b.String()
	return ord.Compare(sa, false, sb, false)
}

func cmpOrdered[T int64 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders like Java's Double.compare (NaN greatest).
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	}
	return -1
}
