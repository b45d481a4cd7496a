package sqlplan

import (
	"context"
	"encoding/json"
	"testing"

	"strata/bench/benchsql"
)

// Native queries are written as json.Marshal writes them (Plan uses
// jsonenc.Append): EXPLAIN shows these bytes.
func TestNativesAsMarshal(t *testing.T) {
	stmts := append([]string{
		`SELECT __time, page FROM wiki WHERE channel = 'en<&>' ORDER BY __time DESC LIMIT 5 OFFSET 2`,
		`SELECT COUNT(*), SUM(added), AVG(delta) FROM wiki WHERE __time >= TIMESTAMP '2016-06-27 00:00:00' AND __time < '2016-06-28'`,
		`SELECT channel, COUNT(*) FROM wiki GROUP BY channel HAVING COUNT(*) > 10 ORDER BY 2 LIMIT 3 OFFSET 1`,
		`SELECT UPPER(page) AS p, COUNT(DISTINCT channel) FROM wiki GROUP BY 1`,
		`SELECT c, COUNT(*) FROM (SELECT channel AS c, COUNT(*) AS n FROM wiki GROUP BY channel) GROUP BY c`,
		`SELECT CASE WHEN added > 10.5 THEN 'bïg' ELSE 'small' END, COALESCE(page, 'x'), NULLIF(channel, ''), CAST(added AS DOUBLE) FROM wiki`,
		`SELECT page, COUNT(*) FROM wiki WHERE added BETWEEN 1e-7 AND 1e21 GROUP BY ROLLUP(page)`,
		`SELECT 1.5, 'x' UNION ALL SELECT 2.25, 'y'`,
	}, planSeeds...)
	for _, q := range benchsql.Queries {
		stmts = append(stmts, q.SQL)
	}
	planned := 0
	for _, src := range stmts {
		p, err := Plan(context.Background(), src, Request{Context: map[string]any{"sqlQueryId": "id-<1>"}}, testCatalog{})
		if err != nil {
			continue // not plannable here: nothing to write
		}
		planned++
		for i, b := range p.parts {
			want, err := json.Marshal(b.native)
			if err != nil || string(p.Natives[i]) != string(want) {
				t.Errorf("%s:\n got %s\nwant %s (%v)", src, p.Natives[i], want, err)
			}
		}
	}
	if planned < 15 {
		t.Fatalf("only %d statements planned", planned)
	}
}
