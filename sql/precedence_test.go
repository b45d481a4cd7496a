package sql

import (
	"fmt"
	"strings"
	"testing"
)

// paren prints an expression with every operator application in parentheses, independently of
// the formatter, so the tests below pin down how the parser grouped the input.
func paren(e Expr) string {
	switch x := e.(type) {
	case *BinaryExpr:
		return "(" + paren(x.Left) + " " + x.Op.String() + " " + paren(x.Right) + ")"
	case *UnaryExpr:
		op := map[UnaryOp]string{OpNot: "NOT ", OpNeg: "-", OpPlus: "+"}[x.Op]
		return "(" + op + paren(x.X) + ")"
	case *IsExpr:
		not := ""
		if x.Not {
			not = "NOT "
		}
		return "(" + paren(x.X) + " IS " + not + x.What.String() + ")"
	case *BetweenExpr:
		return "(" + paren(x.X) + notWord(x.Not) + " BETWEEN " + paren(x.Low) + " AND " + paren(x.High) + ")"
	case *InExpr:
		items := make([]string, len(x.List))
		for i, it := range x.List {
			items[i] = paren(it)
		}
		return "(" + paren(x.X) + notWord(x.Not) + " IN [" + strings.Join(items, ", ") + "])"
	case *LikeExpr:
		s := "(" + paren(x.X) + notWord(x.Not) + " LIKE " + paren(x.Pattern)
		if x.Escape != nil {
			s += " ESCAPE " + paren(x.Escape)
		}
		return s + ")"
	case *IndexExpr:
		return "(" + paren(x.X) + "[" + paren(x.Index) + "])"
	case *FuncCall:
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = paren(a)
		}
		return x.Name.Name + "(" + strings.Join(args, ", ") + ")"
	case *PositionExpr:
		return "POSITION(" + paren(x.Sub) + " IN " + paren(x.Str) + ")"
	case *ColumnRef, *NumberLit, *StringLit, *BoolLit, *NullLit, *Param:
		return Format(x)
	}
	return fmt.Sprintf("<%T>", e)
}

func notWord(not bool) string {
	if not {
		return " NOT"
	}
	return ""
}

func TestPrecedence(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a OR b AND c", "(a OR (b AND c))"},
		{"a AND b OR c AND d", "((a AND b) OR (c AND d))"},
		{"a OR b OR c", "((a OR b) OR c)"},
		{"NOT a AND b", "((NOT a) AND b)"},
		{"NOT a = b", "(NOT (a = b))"},
		{"NOT a IS NULL", "(NOT (a IS NULL))"},
		{"a = b IS NULL", "((a = b) IS NULL)"},
		{"a IS NOT NULL AND b IS TRUE", "((a IS NOT NULL) AND (b IS TRUE))"},
		{"a = 1 AND b <> 2 OR c >= 3", "(((a = 1) AND (b <> 2)) OR (c >= 3))"},
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a / b / c", "((a / b) / c)"},
		{"a - (b - c)", "(a - (b - c))"},
		{"a % b * c", "((a % b) * c)"},
		{"a || b || c", "((a || b) || c)"},
		{"a || b + c", "((a || b) + c)"},
		{"a + b || c", "(a + (b || c))"},
		{"-a * b", "((-a) * b)"},
		{"-a[1]", "(-(a[1]))"},
		{"- - a", "(-(-a))"},
		{"a - -b", "(a - (-b))"},
		{"a + b = c * d", "((a + b) = (c * d))"},
		{"a < b = c", "((a < b) = c)"},
		{"a BETWEEN 1 AND 2 AND b", "((a BETWEEN 1 AND 2) AND b)"},
		{"a BETWEEN b + 1 AND c * 2", "(a BETWEEN (b + 1) AND (c * 2))"},
		{"a NOT BETWEEN 1 AND 2 OR c", "((a NOT BETWEEN 1 AND 2) OR c)"},
		{"x = a BETWEEN 1 AND 2", "(x = (a BETWEEN 1 AND 2))"},
		{"a IN (1, 2) AND b NOT IN (3)", "((a IN [1, 2]) AND (b NOT IN [3]))"},
		{"a + 1 IN (b, c + 1)", "((a + 1) IN [b, (c + 1)])"},
		{"a LIKE 'x' || 'y'", "(a LIKE ('x' || 'y'))"},
		{"a NOT LIKE b ESCAPE c AND d", "((a NOT LIKE b ESCAPE c) AND d)"},
		{"a = b AND c LIKE 'x%'", "((a = b) AND (c LIKE 'x%'))"},
		{"a IS DISTINCT FROM b AND c", "((a IS DISTINCT FROM b) AND c)"},
		{"a + b IS NULL", "((a + b) IS NULL)"},
		{"(a OR b) AND c", "((a OR b) AND c)"},
		{"f(a, b + c) * 2", "(f(a, (b + c)) * 2)"},
		{"POSITION(a IN b) > 0", "(POSITION(a IN b) > 0)"},
		{"a[1][2] + 1", "(((a[1])[2]) + 1)"},
		{"? + ? * ?", "(? + (? * ?))"},
	}
	for _, c := range cases {
		e := mustExpr(t, c.in)
		if got := paren(e); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.in, got, c.want)
		}
		// The formatter must preserve the grouping it printed.
		back := mustExpr(t, Format(e))
		if d := treeDiff(e, back); d != "" {
			t.Errorf("%s: formatted as %s, which regroups (%s)", c.in, Format(e), d)
		}
	}
}

func TestFormatParentheses(t *testing.T) {
	cases := map[string]string{
		"(a + b) * c":               "(a + b) * c",
		"a - (b + c)":               "a - (b + c)",
		"(a - b) - c":               "a - b - c",
		"((a))":                     "a",
		"NOT (a AND b)":             "NOT (a AND b)",
		"(NOT a) = b":               "(NOT a) = b",
		"(a OR b) IS NULL":          "(a OR b) IS NULL",
		"-(-1)":                     "- -1",
		"+(-1)":                     "+ -1",
		"-(a + b)":                  "-(a + b)",
		"(a = b) BETWEEN c AND d":   "(a = b) BETWEEN c AND d",
		"a BETWEEN (b AND c) AND d": "a BETWEEN (b AND c) AND d",
		"POSITION((a = b) IN c)":    "POSITION((a = b) IN c)",
		"(-a)[1]":                   "(-a)[1]",
		"x != 1":                    "x <> 1",
	}
	for in, want := range cases {
		if got := Format(mustExpr(t, in)); got != want {
			t.Errorf("%s: formatted %s, want %s", in, got, want)
		}
	}
}
