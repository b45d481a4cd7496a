package msq

import (
	"testing"

	"strata/expr"
)

// BenchmarkAppendRow encodes a row shaped like the benchmark data set.
func BenchmarkAppendRow(b *testing.B) {
	row := []expr.Value{expr.Long(1704067219000), expr.String("#ch02"), expr.String("Page_001197"), expr.String("user0088054"),
		expr.String("C003"), expr.String("City0003"), expr.String("ns0"), expr.String("false"), expr.String("true"),
		expr.Long(410), expr.Long(283), expr.Long(127), expr.Long(284), expr.Double(14.38)}
	var arrays []bool
	buf := make([]byte, 0, 1<<20)
	for range b.N {
		if len(buf) > 1<<20-256 {
			buf = buf[:0]
		}
		buf = appendRowMarking(buf, row, &arrays)
	}
}
