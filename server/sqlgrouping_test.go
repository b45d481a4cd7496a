package server

import "testing"

// GROUP BY () groups the whole table as one group; ROLLUP and CUBE inside
// GROUPING SETS add the sets they expand to (both were refused: a syntax
// error and 400 unsupported).
func TestSQLEmptyGroupingSetAndNestedRollup(t *testing.T) {
	b := sqlCluster(t, nil)
	for q, want := range map[string]string{
		`SELECT COUNT(*) AS n, SUM(added) AS s FROM wiki GROUP BY ()`:   `[[5,11111]]`,
		`SELECT COUNT(*) AS n FROM wiki WHERE page = 'zzz' GROUP BY ()`: `[[0]]`,
		`SELECT 'x' AS k FROM wiki GROUP BY ()`:                         `[["x"]]`,
		`SELECT page, GROUPING(page) AS g, SUM(added) AS s FROM wiki ` +
			`GROUP BY GROUPING SETS (ROLLUP(page), ()) ORDER BY g, page`: `[["a",0,10101],["b",0,10],["c",0,1000],[null,1,11111],[null,1,11111]]`,
		`SELECT page, GROUPING(page) AS g, COUNT(*) AS n FROM wiki ` +
			`GROUP BY GROUPING SETS (CUBE(page)) ORDER BY g, page`: `[["a",0,3],["b",0,1],["c",0,1],[null,1,5]]`,
	} {
		code, body, _ := sqlCall(t, b, `{"query":"`+q+`","resultFormat":"array"}`)
		if code != 200 || body != want {
			t.Errorf("%s:\n got %d %s\nwant 200 %s", q, code, body, want)
		}
	}
	if code, body, _ := sqlCall(t, b, `{"query":"SELECT page, COUNT(*) FROM wiki GROUP BY ()"}`); code != 400 {
		t.Errorf("a column not grouped by GROUP BY (): %d %s, want 400", code, body)
	}
}
