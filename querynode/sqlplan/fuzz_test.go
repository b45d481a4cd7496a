package sqlplan

import (
	"context"
	"errors"
	"testing"

	"strata/bench/benchsql"
)

// The statement forms of sql's fuzz corpus (sql/fuzz_test.go), over the
// test catalog's wiki, and the bench queries.
var planSeeds = []string{
	"SELECT page, added AS c FROM wiki WHERE added = 1 GROUP BY 1 ORDER BY 2 DESC LIMIT 5 OFFSET 1",
	"INSERT INTO t SELECT TIME_PARSE(\"ts\") AS __time, * FROM TABLE(EXTERN('{}', '{}', '[]')) PARTITIONED BY DAY CLUSTERED BY a",
	"EXPLAIN PLAN FOR WITH x AS (SELECT page FROM wiki) SELECT * FROM x UNION ALL (SELECT 2)",
	"SELECT COUNT(*) FILTER (WHERE added > 1), COUNT(DISTINCT page), SUM(delta) OVER (PARTITION BY page ORDER BY __time ROWS 1 PRECEDING) FROM wiki",
	"SELECT CASE WHEN page IS NULL THEN -1 ELSE added END, CAST(page AS DOUBLE), added NOT BETWEEN 1 AND 2, page NOT IN ('a', 'b'), page LIKE 'a%' ESCAPE '!' FROM wiki",
	"SELECT TRIM(LEADING 'x' FROM page), POSITION('a' IN page), SUBSTRING(page FROM 1 FOR 2), EXTRACT(DAY FROM __time), TIMESTAMPDIFF(HOUR, __time, __time) FROM wiki",
	"SELECT INTERVAL '1' DAY, ARRAY[1, 2], page[1], 'it''s', \"q\"\"x\" FROM wiki",
	"SELECT * FROM wiki LEFT JOIN b ON a.x = b.x CROSS JOIN c, UNNEST(d) AS u (v)",
	"SET x = 1; SELECT page FROM wiki;",
	"SELECT a.page, SUM(b.added) FROM wiki a JOIN wiki b ON UPPER(a.page) = b.page AND b.added > 1 AND a.channel = 'x' LEFT JOIN (SELECT page, COUNT(*) AS n FROM wiki GROUP BY 1) c ON a.page = c.page GROUP BY 1",
	"SELECT * FROM wiki a, wiki b CROSS JOIN wiki c WHERE a.page = b.page AND a.added = b.added AND c.page = b.page",
	"SELECT *, c.page FROM wiki a NATURAL JOIN wiki b LEFT JOIN wiki c USING (page, channel) RIGHT JOIN wiki d ON c.page = d.page FULL JOIN wiki e ON e.page = d.page",
	"SELECT COUNT(DISTINCT page) FROM wiki GROUP BY FLOOR(__time TO DAY)",
	"SELECT channel, MAX(__time), __time + INTERVAL '1' DAY FROM (SELECT channel, __time FROM wiki) GROUP BY channel, __time HAVING SUM(1) > 0",
	"SELECT COUNT(*) FROM (SELECT ARRAY_AGG(DISTINCT added, 4096) AS a, STRING_AGG(page, '|') FILTER (WHERE added > 1) AS s FROM wiki GROUP BY channel) WHERE NOT ARRAY_CONTAINS(a, 1) OR a IS NULL",
	"SELECT ARRAY_LENGTH(ARRAY_CONCAT(ARRAY_AGG(page), ARRAY['x'])), ARRAY_SLICE(ARRAY_AGG(__time), 0, 1), LISTAGG(page), POSITION('a' IN STRING_AGG(page, ',') FROM 2)",
	"SELECT page, added * 2 AS d FROM wiki WHERE page <> 'x' ORDER BY d DESC NULLS FIRST, 1, __time LIMIT 3 OFFSET 1",
	"SELECT BITWISE_SHIFT_LEFT(added, 2), HUMAN_READABLE_DECIMAL_FORMAT(SUM(added), 1), IPV4_MATCH(page, '10.0.0.0/8'), PI, LOCALTIMESTAMP, TIMESTAMPDIFF(QUARTER, MIN(__time), MAX(__time)) FROM wiki GROUP BY 1, 3",
}

// FuzzPlan checks that no statement makes the planner panic, and that every
// failure is a client error (*Error) — never an internal one.
func FuzzPlan(f *testing.F) {
	for _, s := range planSeeds {
		f.Add(s, false)
	}
	for _, q := range benchsql.Queries {
		f.Add(q.SQL, true)
	}
	f.Fuzz(func(t *testing.T, src string, exact bool) {
		ctx := map[string]any{"useApproximateCountDistinct": !exact, "useApproximateTopN": !exact}
		p, err := Plan(context.Background(), src, Request{Context: ctx, Parameters: []Param{{Type: "VARCHAR", Value: "x"}}}, testCatalog{})
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: not a client error: %v", src, err)
			}
			return
		}
		if _, err := p.Rows([]byte(`[]`)); err != nil {
			t.Fatalf("%q: reading an empty answer: %v", src, err)
		}
	})
}
