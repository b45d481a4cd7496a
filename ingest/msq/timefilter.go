package msq

import (
	"slices"
	"strings"
	"time"

	"strata/interval"
	"strata/sql"
)

// timeRanges converts a condition on __time (comparisons with literals
// combined by AND, OR and NOT, BETWEEN, TIME_IN_INTERVAL) into the sorted,
// disjoint intervals it accepts. isTime tells which expressions are the
// time column. With partial, conjuncts that are not time conditions are
// ignored (the result then over-approximates, as needed for pruning);
// otherwise any such condition makes ok false.
func timeRanges(e sql.Expr, isTime func(sql.Expr) bool, partial bool) ([]interval.Interval, bool) {
	all := []interval.Interval{interval.Eternity}
	switch x := e.(type) {
	case *sql.BinaryExpr:
		switch x.Op {
		case sql.OpAnd:
			l, lok := timeRanges(x.Left, isTime, partial)
			r, rok := timeRanges(x.Right, isTime, partial)
			switch {
			case lok && rok:
				return intersectAll(l, r), true
			case partial && lok:
				return l, true
			case partial && rok:
				return r, true
			case partial:
				return all, true
			}
			return nil, false
		case sql.OpOr:
			l, lok := timeRanges(x.Left, isTime, partial)
			r, rok := timeRanges(x.Right, isTime, partial)
			if lok && rok {
				return unionAll2(l, r), true
			}
			if partial {
				return all, true
			}
			return nil, false
		case sql.OpEq, sql.OpLt, sql.OpLe, sql.OpGt, sql.OpGe:
			op := x.Op
			var lit sql.Expr
			switch {
			case isTime(x.Left):
				lit = x.Right
			case isTime(x.Right):
				lit = x.Left
				op = flip(op)
			default:
				return all, partial
			}
			ms, ok := literalMillis(lit)
			if !ok {
				return all, partial
			}
			var iv interval.Interval
			switch op {
			case sql.OpEq:
				iv = interval.Interval{Start: ms, End: ms + 1}
			case sql.OpLt:
				iv = interval.Interval{Start: interval.MinInstant, End: ms}
			case sql.OpLe:
				iv = interval.Interval{Start: interval.MinInstant, End: ms + 1}
			case sql.OpGt:
				iv = interval.Interval{Start: ms + 1, End: interval.MaxInstant}
			case sql.OpGe:
				iv = interval.Interval{Start: ms, End: interval.MaxInstant}
			}
			if iv.IsEmpty() {
				return nil, true
			}
			return []interval.Interval{iv}, true
		}
	case *sql.UnaryExpr:
		if x.Op == sql.OpNot {
			in, ok := timeRanges(x.X, isTime, false)
			if ok {
				return complement(in), true
			}
			return all, partial
		}
	case *sql.BetweenExpr:
		if isTime(x.X) && !x.Symmetric {
			lo, ok1 := literalMillis(x.Low)
			hi, ok2 := literalMillis(x.High)
			if ok1 && ok2 {
				var r []interval.Interval
				if hi >= lo {
					r = []interval.Interval{{Start: lo, End: hi + 1}}
				}
				if x.Not {
					r = complement(r)
				}
				return r, true
			}
		}
	case *sql.FuncCall:
		if strings.EqualFold(x.Name.Name, "TIME_IN_INTERVAL") && len(x.Args) == 2 && isTime(x.Args[0]) {
			if s, ok := x.Args[1].(*sql.StringLit); ok {
				if iv, err := interval.Parse(s.Value); err == nil {
					if iv.IsEmpty() {
						return nil, true
					}
					return []interval.Interval{iv}, true
				}
			}
		}
	}
	return all, partial
}

func flip(op sql.BinaryOp) sql.BinaryOp {
	switch op {
	case sql.OpLt:
		return sql.OpGt
	case sql.OpLe:
		return sql.OpGe
	case sql.OpGt:
		return sql.OpLt
	case sql.OpGe:
		return sql.OpLe
	}
	return op
}

// literalMillis reads a timestamp literal: TIMESTAMP '...', DATE '...', a
// string in ISO or SQL form, or a number of milliseconds.
func literalMillis(e sql.Expr) (int64, bool) {
	switch x := e.(type) {
	case *sql.TypedLit:
		ms, err := typedLitMillis(x)
		return ms, err == nil
	case *sql.StringLit:
		ms, err := interval.ParseTimeLenient(strings.TrimSpace(x.Value), time.UTC)
		return ms, err == nil
	case *sql.NumberLit:
		n, err := x.Int64()
		return n, err == nil
	case *sql.FuncCall:
		if strings.EqualFold(x.Name.Name, "TIME_PARSE") && len(x.Args) == 1 {
			return literalMillis(x.Args[0])
		}
		if strings.EqualFold(x.Name.Name, "MILLIS_TO_TIMESTAMP") && len(x.Args) == 1 {
			return literalMillis(x.Args[0])
		}
	}
	return 0, false
}

func normalize(ivs []interval.Interval) []interval.Interval {
	ivs = slices.DeleteFunc(slices.Clone(ivs), func(iv interval.Interval) bool { return iv.IsEmpty() })
	slices.SortFunc(ivs, func(a, b interval.Interval) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	var out []interval.Interval
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, iv.End)
			continue
		}
		out = append(out, iv)
	}
	return out
}

func unionAll2(a, b []interval.Interval) []interval.Interval {
	return normalize(append(slices.Clone(a), b...))
}

func intersectAll(a, b []interval.Interval) []interval.Interval {
	var out []interval.Interval
	for _, x := range a {
		for _, y := range b {
			if c, ok := x.Intersect(y); ok && !c.IsEmpty() {
				out = append(out, c)
			}
		}
	}
	return normalize(out)
}

func complement(ivs []interval.Interval) []interval.Interval {
	ivs = normalize(ivs)
	var out []interval.Interval
	start := int64(interval.MinInstant)
	for _, iv := range ivs {
		if iv.Start > start {
			out = append(out, interval.Interval{Start: start, End: iv.Start})
		}
		start = iv.End
	}
	if start < interval.MaxInstant {
		out = append(out, interval.Interval{Start: start, End: interval.MaxInstant})
	}
	return out
}
