package nativebatch

import (
	"fmt"
	"math"
	"strconv"

	"strata/expr"
	"strata/querynode/query"
)

// rowFilter decides whether an input row (after transforms) is ingested.
// Column names are resolved to row slots once, when the filter is compiled.
type rowFilter func(row []expr.Value) bool

// checkFilter rejects filter types that cannot run on single input rows.
func checkFilter(f *query.Filter) error {
	switch f.Type {
	case "selector", "in", "bound", "null", "equals", "range", "like", "regex", "search", "true", "false", "expression":
		if f.Extraction != nil {
			return fmt.Errorf("%s filter: extractionFn is not supported in a transformSpec filter", f.Type)
		}
		return nil
	case "and", "or":
		for _, sub := range f.Fields {
			if err := checkFilter(sub); err != nil {
				return err
			}
		}
		return nil
	case "not":
		return checkFilter(f.Field)
	}
	return fmt.Errorf("filter type %q is not supported in a transformSpec", f.Type)
}

// filterColumns lists the columns a filter reads.
func filterColumns(f *query.Filter, out []string) []string {
	switch f.Type {
	case "and", "or":
		for _, sub := range f.Fields {
			out = filterColumns(sub, out)
		}
	case "not":
		out = filterColumns(f.Field, out)
	case "expression":
		out = append(out, f.Expression.Expr.RequiredColumns()...)
	case "true", "false":
	default:
		out = append(out, f.Column)
	}
	return out
}

// compileFilter turns f into a matcher over rows whose slots slot names.
func compileFilter(f *query.Filter, slot func(name string) int) (rowFilter, error) {
	col := func() int { return slot(f.Column) }
	switch f.Type {
	case "true":
		return func([]expr.Value) bool { return true }, nil
	case "false":
		return func([]expr.Value) bool { return false }, nil
	case "and", "or":
		subs := make([]rowFilter, len(f.Fields))
		for i, sf := range f.Fields {
			m, err := compileFilter(sf, slot)
			if err != nil {
				return nil, err
			}
			subs[i] = m
		}
		if f.Type == "and" {
			return func(r []expr.Value) bool {
				for _, m := range subs {
					if !m(r) {
						return false
					}
				}
				return true
			}, nil
		}
		return func(r []expr.Value) bool {
			for _, m := range subs {
				if m(r) {
					return true
				}
			}
			return false
		}, nil
	case "not":
		m, err := compileFilter(f.Field, slot)
		if err != nil {
			return nil, err
		}
		return func(r []expr.Value) bool { return !m(r) }, nil
	case "null":
		i := col()
		return func(r []expr.Value) bool { return anyString(r[i], func(_ string, null bool) bool { return null }) }, nil
	case "selector":
		i := col()
		want := f.Value
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool {
				if want == nil {
					return null
				}
				return !null && s == *want
			})
		}, nil
	case "in":
		i := col()
		set := map[string]bool{}
		matchNull := false
		for _, v := range f.Values {
			if v == nil {
				matchNull = true
			} else {
				set[*v] = true
			}
		}
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool {
				if null {
					return matchNull
				}
				return set[s]
			})
		}, nil
	case "bound":
		i := col()
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool {
				if null {
					return false
				}
				if f.Lower != nil {
					c := f.Ordering.Compare(s, false, *f.Lower, false)
					if c < 0 || (c == 0 && f.LowerStrict) {
						return false
					}
				}
				if f.Upper != nil {
					c := f.Ordering.Compare(s, false, *f.Upper, false)
					if c > 0 || (c == 0 && f.UpperStrict) {
						return false
					}
				}
				return true
			})
		}, nil
	case "equals":
		i := col()
		m := f.Match
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool {
				if null {
					return false
				}
				if m.Type == "STRING" {
					return s == m.S
				}
				d, err := strconv.ParseFloat(s, 64)
				return err == nil && m.IsNum && d == m.D
			})
		}, nil
	case "range":
		i := col()
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool {
				if null {
					return false
				}
				return inRange(f, s)
			})
		}, nil
	case "like", "regex":
		i := col()
		re := f.Regex
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool { return !null && re.MatchString(s) })
		}, nil
	case "search":
		i := col()
		return func(r []expr.Value) bool {
			return anyString(r[i], func(s string, null bool) bool { return !null && f.Search.Matches(s) })
		}, nil
	case "expression":
		x := f.Expression.Expr
		cols := x.RequiredColumns()
		idx := make([]int, len(cols))
		for k, c := range cols {
			idx[k] = slot(c)
		}
		return func(r []expr.Value) bool {
			v, err := x.Eval(slotBindings{names: cols, idx: idx, row: r})
			return err == nil && !v.IsNull() && v.AsBool()
		}, nil
	}
	return nil, fmt.Errorf("filter type %q is not supported in a transformSpec", f.Type)
}

// inRange applies a range filter: numerically for numeric match types,
// lexicographically for strings.
func inRange(f *query.Filter, s string) bool {
	if f.MatchType != "STRING" {
		d, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(d) {
			return false
		}
		if lo := f.LowerS; lo != nil && (d < lo.D || (d == lo.D && f.LowerStrict)) {
			return false
		}
		if hi := f.UpperS; hi != nil && (d > hi.D || (d == hi.D && f.UpperStrict)) {
			return false
		}
		return true
	}
	if lo := f.LowerS; lo != nil {
		if c := query.Lexicographic.Compare(s, false, lo.S, false); c < 0 || (c == 0 && f.LowerStrict) {
			return false
		}
	}
	if hi := f.UpperS; hi != nil {
		if c := query.Lexicographic.Compare(s, false, hi.S, false); c > 0 || (c == 0 && f.UpperStrict) {
			return false
		}
	}
	return true
}

// anyString applies pred to each string of a value: a multi-value matches
// when any element does, and an empty or null value is seen as one null.
func anyString(v expr.Value, pred func(s string, null bool) bool) bool {
	if v.Type().IsArray() && !v.IsNull() {
		elems := v.Elems()
		if len(elems) == 0 {
			return pred("", true)
		}
		for _, e := range elems {
			s, ok := e.AsString()
			if pred(s, !ok || e.IsNull()) {
				return true
			}
		}
		return false
	}
	if v.IsNull() {
		return pred("", true)
	}
	s, ok := v.AsString()
	return pred(s, !ok)
}

// slotBindings binds expression identifiers to row slots (-1: absent, null).
type slotBindings struct {
	names []string
	idx   []int
	row   []expr.Value
}

func (b slotBindings) Get(name string) expr.Value {
	for k, n := range b.names {
		if n == name {
			if i := b.idx[k]; i >= 0 {
				return b.row[i]
			}
			break
		}
	}
	return expr.Value{}
}
