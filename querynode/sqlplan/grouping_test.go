package sqlplan

import "testing"

func init() {
	planSeeds = append(planSeeds,
		"SELECT page, channel, GROUPING(page, channel), VARIANCE(added), BIT_XOR(added) FROM wiki GROUP BY added, GROUPING SETS ((page, channel), (channel), ())",
		"SELECT STDDEV_POP(delta) FILTER (WHERE page = 'a'), BIT_AND(added + 1), BIT_OR(added) FROM wiki")
}

func TestPlanGroupingSets(t *testing.T) {
	p, _ := plan(t, `SELECT channel, page, COUNT(*), GROUPING(page, 1) FROM wiki GROUP BY 1, GROUPING SETS ((page), ())`, nil)
	has(t, p.Native, `"subtotalsSpec":[["d0","d1"],["d0"]]`, `{"groupings":["d1","d0"],"name":"a1","type":"grouping"}`, `"queryType":"groupBy"`)
}
