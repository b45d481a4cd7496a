package sqlplan

import (
	"strings"

	"strata/sql"
)

func init() {
	for _, n := range []string{"VARIANCE", "VAR_SAMP", "VAR_POP", "STDDEV", "STDDEV_SAMP", "STDDEV_POP"} {
		aggBuilders[n] = variance
	}
}

// variance plans VARIANCE/VAR_SAMP/VAR_POP onto Druid's variance aggregator
// (druid-stats) and STDDEV/STDDEV_SAMP/STDDEV_POP onto it and the stddev
// post-aggregator, as Druid does: VARIANCE and STDDEV are the sample forms.
// No values give NULL, one value 0.
func variance(a *aggPlan, c *sql.FuncCall, name string) error {
	if err := argCount(c, 1, 1); err != nil {
		return err
	}
	fname := strings.ToUpper(c.Name.Name)
	v, err := a.base.expr(c.Args[0])
	if err != nil {
		return err
	}
	input := map[string]string{tBigint: "long", tBoolean: "long", tFloat: "float", tDouble: "double"}[v.typ]
	if input == "" {
		return invalid("%s", sql.AtPos(c, "Cannot apply '"+fname+"' to arguments of type '"+fname+"(<"+v.typ+">)'"))
	}
	col := v.col
	if col == "" {
		col = a.virtual(v)
	}
	estimator := "sample"
	if strings.HasSuffix(fname, "_POP") {
		estimator = "population"
	}
	agg := map[string]any{"type": "variance", "name": name, "fieldName": col, "inputType": input, "estimator": estimator}
	if !strings.HasPrefix(fname, "STDDEV") {
		return a.addAgg(c, agg, name, tDouble)
	}
	agg["name"] = name + ":agg"
	if err := a.addAgg(c, agg, name, tDouble); err != nil {
		return err
	}
	a.postAggs = append(a.postAggs, map[string]any{"type": "stddev", "name": name, "fieldName": name + ":agg", "estimator": estimator})
	return nil
}
