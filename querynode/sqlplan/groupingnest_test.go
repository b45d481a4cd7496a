package sqlplan

import (
	"context"
	"testing"
)

func init() {
	planSeeds = append(planSeeds,
		"SELECT COUNT(*) FROM wiki GROUP BY ()",
		"SELECT page, channel, GROUPING(page) FROM wiki GROUP BY GROUPING SETS (ROLLUP(page, channel), CUBE(channel), ())",
		"SELECT page FROM wiki ORDER BY __time DESC LIMIT 3",
		"EXPLAIN PLAN FOR SELECT page FROM wiki ORDER BY added DESC NULLS FIRST, page LIMIT 2 OFFSET 1")
}

// GROUP BY () is one empty grouping set: the whole table is one group, as
// with no GROUP BY at all (a timeseries); alone in GROUPING SETS likewise.
func TestPlanEmptyGroupBy(t *testing.T) {
	for _, sql := range []string{
		`SELECT COUNT(*), SUM(added) FROM wiki GROUP BY ()`,
		`SELECT COUNT(*), SUM(added) FROM wiki GROUP BY GROUPING SETS (())`,
	} {
		p, native := plan(t, sql, nil)
		if native["queryType"] != "timeseries" {
			t.Errorf("%s: %s, want a timeseries", sql, p.Native)
		}
	}
	if _, err := Plan(context.Background(), `SELECT page, COUNT(*) FROM wiki GROUP BY ()`, Request{}, testCatalog{}); err == nil {
		t.Errorf("a column not grouped by GROUP BY (): no error")
	}
}

// ROLLUP and CUBE inside GROUPING SETS stand for the sets they expand to,
// as Calcite expands them.
func TestPlanRollupInsideGroupingSets(t *testing.T) {
	p, _ := plan(t, `SELECT page, channel, added, COUNT(*) FROM wiki GROUP BY GROUPING SETS (ROLLUP(page, channel), (added), CUBE(channel))`, nil)
	has(t, p.Native, `"subtotalsSpec":[["d0","d1"],["d0"],[],["d2"],["d1"],[]]`)
}
