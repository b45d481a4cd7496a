package sqlplan

import (
	"strings"

	"strata/sql"
)

// sketchAggOf is the SQL aggregate that merges a stored sketch column of
// each sketch type.
var sketchAggOf = map[string]string{
	tHLLSketch:       "DS_HLL",
	tThetaSketch:     "DS_THETA",
	tQuantilesSketch: "DS_QUANTILES_SKETCH",
}

// storedSketchRowByRow refuses a sketch function over a stored sketch
// column in a query that does not aggregate. Druid plans it as an
// expression virtual column (hll_sketch_estimate("col"), ...), but Strata's
// native expression layer has no complex value type and its bindings read
// no complex column, so there is no expression to plan it onto; the
// sketches read through their aggregate (which merges stored sketches)
// answer the same question over groups of rows.
func storedSketchRowByRow(x *sql.FuncCall, col, agg string) error {
	fn, more := strings.ToUpper(x.Name.Name), ""
	if len(x.Args) > 1 {
		more = ", ..."
	}
	return unsupported("%s", sql.AtPos(x, fn+" over the stored sketch column ["+col+"] in a query that does not aggregate is not supported: "+
		"native expressions cannot read complex columns; aggregate the column first, as in "+fn+"("+agg+"("+col+")"+more+") with GROUP BY"))
}
