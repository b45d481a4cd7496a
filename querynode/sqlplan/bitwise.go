package sqlplan

import (
	"strings"

	"strata/sql"
)

func init() {
	for _, n := range []string{"BIT_AND", "BIT_OR", "BIT_XOR"} {
		aggBuilders[n] = bitwise
	}
}

// bitwise plans BIT_AND, BIT_OR and BIT_XOR as Druid does: an "expression"
// aggregator folding the non-null values with bitwiseAnd/Or/Xor, under a
// not-null filter; no value gives NULL. BIT_AND starts from -1 (all bits
// set), so it is the AND of the values; Druid's plan writes 0, whose AND
// is always 0.
func bitwise(a *aggPlan, c *sql.FuncCall, name string) error {
	if err := argCount(c, 1, 1); err != nil {
		return err
	}
	fname := strings.ToUpper(c.Name.Name)
	v, err := a.base.expr(c.Args[0])
	if err != nil {
		return err
	}
	if v.typ != tBigint {
		return invalid("%s", sql.AtPos(c, "Cannot apply '"+fname+"' to arguments of type '"+fname+"(<"+v.typ+">)'"))
	}
	col := v.col
	if col == "" {
		col = a.virtual(v)
	}
	fn := map[string]string{"BIT_AND": "bitwiseAnd", "BIT_OR": "bitwiseOr", "BIT_XOR": "bitwiseXor"}[fname]
	init := "0"
	if fname == "BIT_AND" {
		init = "-1"
	}
	fold := map[string]any{"type": "expression", "name": name, "fields": []string{col}, "accumulatorIdentifier": "__acc",
		"initialValue": init, "initialCombineValue": init, "isNullUnlessAggregated": true,
		"shouldAggregateNullInputs": false, "shouldCombineAggregateNullInputs": false,
		"fold": fn + `("__acc", ` + quoteIdent(col) + `)`, "combine": fn + `("__acc", ` + quoteIdent(name) + `)`}
	agg := map[string]any{"type": "filtered", "name": name, "aggregator": fold,
		"filter": map[string]any{"type": "not", "field": map[string]any{"type": "null", "column": col}}}
	return a.addAgg(c, agg, name, tBigint)
}
