package msq

import (
	"fmt"
	"strings"

	"strata/expr"
	"strata/sql"
	"strata/sqlexpr"
)

// Call plans the functions SQL ingestion has beyond the shared table:
// MV_TO_ARRAY and ARRAY_TO_MV, and any other name that is a native function
// (ARRAY_LENGTH → array_length, ...), typed as the native language infers.
func (t *translator) Call(name string, x *sql.FuncCall, args []sqlexpr.Expr) (sqlexpr.Expr, bool, error) {
	if sqlexpr.HasFunction(name) {
		return sqlexpr.Expr{}, false, nil
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Src
	}
	src := strings.ToLower(name) + "(" + strings.Join(parts, ", ") + ")"
	switch name {
	case "MV_TO_ARRAY", "ARRAY_TO_MV":
		if len(args) != 1 {
			return sqlexpr.Expr{}, true, t.errAt(x, "Invalid number of arguments to function '%s'", name)
		}
		return sqlexpr.Expr{Src: src, Type: Type{Kind: KindStringArray}.sqlType()}, true, nil
	}
	c, err := expr.Compile(src)
	if err != nil {
		if strings.Contains(err.Error(), "function") || strings.Contains(err.Error(), "unknown") {
			return sqlexpr.Expr{}, true, t.errAt(x, "No match found for function signature %s", name)
		}
		return sqlexpr.Expr{}, true, t.errAt(x, "%s: %v", name, err)
	}
	return sqlexpr.Expr{Src: src, Type: t.nativeType(c, args)}, true, nil
}

// nativeType is the type the native language infers for c, whose
// identifiers are row positions c<N> of this scope.
func (t *translator) nativeType(c *expr.Expr, args []sqlexpr.Expr) string {
	out := c.OutputType(func(name string) (expr.Type, bool) {
		if t.post == nil {
			if i := t.sc.index(name); i >= 0 {
				return t.sc.cols[i].typ.exprType(), true
			}
		}
		for _, a := range args {
			if a.Src == name {
				return sqlexpr.ExprType(a.Type), true
			}
		}
		return expr.TypeUnknown, false
	})
	if out == expr.TypeUnknown {
		return sqlexpr.Double
	}
	return sqlexpr.FromExprType(out)
}

func argCount(min, max int) string {
	switch {
	case max < 0:
		return fmt.Sprintf("at least %d", min)
	case min == max:
		return fmt.Sprint(min)
	}
	return fmt.Sprintf("%d to %d", min, max)
}
