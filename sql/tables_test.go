package sql

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// baseTables lists the references BaseTables reports as "name@line:column".
func baseTables(t *testing.T, src string) []string {
	t.Helper()
	script, err := ParseScript(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	var got []string
	BaseTables(script.Statement, func(r *TableRef) bool {
		parts := make([]string, len(r.Name))
		for i, id := range r.Name {
			parts[i] = id.Name
		}
		p := r.Position()
		got = append(got, fmt.Sprintf("%s@%d:%d", strings.Join(parts, "."), p.Line, p.Column))
		return true
	})
	return got
}

func TestBaseTables(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		want      []string
	}{
		{"plain", `SELECT * FROM wiki`, []string{"wiki@1:15"}},
		{"join order", `SELECT * FROM a JOIN b ON a.x = b.x, c`, []string{"a@1:15", "b@1:22", "c@1:38"}},
		{"join ON sub-query after both sides", `SELECT * FROM a JOIN b ON a.x IN (SELECT x FROM c)`,
			[]string{"a@1:15", "b@1:22", "c@1:49"}},
		{"nested derived tables", `SELECT * FROM (SELECT * FROM (SELECT * FROM deep) AS d1) AS d2`, []string{"deep@1:45"}},
		{"union branches left to right", `SELECT x FROM l UNION ALL SELECT x FROM m UNION ALL (SELECT x FROM n)`,
			[]string{"l@1:15", "m@1:41", "n@1:68"}},
		{"FROM, then WHERE, select list, GROUP BY, HAVING, ORDER BY",
			`SELECT (SELECT MAX(y) FROM s) FROM t WHERE x IN (SELECT y FROM w) GROUP BY (SELECT 1 FROM g)
HAVING EXISTS (SELECT 1 FROM h) ORDER BY (SELECT 1 FROM o)`,
			[]string{"t@1:36", "w@1:64", "s@1:28", "g@1:91", "h@2:30", "o@2:57"}},
		{"CTE shadows a datasource", `WITH a AS (SELECT * FROM b) SELECT * FROM a`, []string{"b@1:26"}},
		{"a CTE body does not see itself", `WITH a AS (SELECT * FROM a) SELECT * FROM a`, []string{"a@1:26"}},
		{"a CTE body does not see later CTEs", `WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a`,
			[]string{"b@1:26"}},
		{"a CTE body sees earlier CTEs", `WITH b AS (SELECT * FROM t), a AS (SELECT * FROM b) SELECT * FROM a`,
			[]string{"t@1:26"}},
		{"an unreferenced CTE is not planned", `WITH u AS (SELECT * FROM gone) SELECT * FROM t`, []string{"t@1:46"}},
		{"a CTE body is visited once", `WITH a AS (SELECT * FROM t) SELECT * FROM a UNION ALL SELECT * FROM a`,
			[]string{"t@1:26"}},
		{"a CTE is out of scope outside its query",
			`SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a) AS s JOIN a ON true`, []string{"a@1:64"}},
		{"an inner WITH shadows an outer CTE",
			`WITH a AS (SELECT * FROM x) SELECT * FROM (WITH a AS (SELECT * FROM y) SELECT * FROM a) AS s`,
			[]string{"y@1:69"}},
		{"an outer CTE is visible in a nested query", `WITH a AS (SELECT * FROM x) SELECT * FROM (SELECT * FROM a) AS s`,
			[]string{"x@1:26"}},
		{"a nested CTE body sees the outer CTEs",
			`WITH a AS (SELECT * FROM x) SELECT * FROM (WITH b AS (SELECT * FROM a) SELECT * FROM b) AS s`,
			[]string{"x@1:26"}},
		{"the same name in two WITH lists: innermost wins, its body sees the outer one",
			`WITH a AS (SELECT * FROM x) SELECT * FROM (WITH a AS (SELECT * FROM a) SELECT * FROM a) AS s`,
			[]string{"x@1:26"}},
		{"sub-queries in expressions see the CTEs in scope",
			`WITH c AS (SELECT 1 AS y) SELECT * FROM t WHERE x IN (SELECT y FROM c) AND EXISTS (SELECT 1 FROM e)`,
			[]string{"t@1:41", "e@1:98"}},
		{"a qualified name is never a CTE", `WITH a AS (SELECT 1) SELECT * FROM druid.a`, []string{"druid.a@1:36"}},
		{"other schemas are reported as written", `SELECT * FROM sys.segments, lookup.lk, INFORMATION_SCHEMA.TABLES`,
			[]string{"sys.segments@1:15", "lookup.lk@1:29", "INFORMATION_SCHEMA.TABLES@1:40"}},
		{"CTE names are case-sensitive, quoted or not", `WITH "A" AS (SELECT 1), b AS (SELECT 2) SELECT * FROM a, "A", "b"`,
			[]string{"a@1:55"}},
		{"quoted identifiers keep their text", `SELECT * FROM "my ds" JOIN "druid"."x y" ON true`,
			[]string{"my ds@1:15", "druid.x y@1:28"}},
		{"positions count lines and code points", "SELECT 'é'\nFROM\n\t  \"quoted\"", []string{"quoted@3:4"}},
		{"EXTERN is no table", `SELECT * FROM TABLE(EXTERN('{}', '{}')) EXTEND (x VARCHAR) AS e CROSS JOIN UNNEST(ARRAY[1]) AS u (v)`, nil},
		{"SELECT without FROM", `SELECT 1`, nil},
		{"INSERT target is no reference", `INSERT INTO tgt SELECT * FROM src PARTITIONED BY DAY`, []string{"src@1:31"}},
		{"INSERT reading its own target", `INSERT INTO tgt SELECT * FROM tgt PARTITIONED BY DAY`, []string{"tgt@1:31"}},
		{"REPLACE OVERWRITE ALL", `REPLACE INTO wiki OVERWRITE ALL SELECT __time, page FROM nosuchds PARTITIONED BY DAY`,
			[]string{"nosuchds@1:58"}},
		{"REPLACE OVERWRITE WHERE", `REPLACE INTO tgt OVERWRITE WHERE __time >= TIMESTAMP '2020-01-01' SELECT * FROM src PARTITIONED BY DAY`,
			[]string{"src@1:81"}},
		{"INSERT with WITH", `INSERT INTO tgt WITH s AS (SELECT * FROM src) SELECT * FROM s PARTITIONED BY ALL`,
			[]string{"src@1:42"}},
		{"SET statements before", "SET sqlTimeZone = 'UTC';\nSELECT * FROM t", []string{"t@2:15"}},
		{"EXPLAIN", `EXPLAIN PLAN FOR SELECT * FROM t`, []string{"t@1:32"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := baseTables(t, c.sql); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s:\n got %v\nwant %v", c.sql, got, c.want)
			}
		})
	}
}

func TestBaseTablesStops(t *testing.T) {
	st, err := Parse(`WITH a AS (SELECT * FROM x JOIN y ON true) SELECT * FROM a, z WHERE k IN (SELECT 1 FROM w)`)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	BaseTables(st, func(r *TableRef) bool {
		seen = append(seen, r.Name[0].Name)
		return r.Name[0].Name != "y"
	})
	if !reflect.DeepEqual(seen, []string{"x", "y"}) {
		t.Errorf("visited after stop: %v", seen)
	}
	BaseTables(nil, func(*TableRef) bool { t.Fatal("called on nil"); return true })
}

// A chain of CTEs each reading the previous one twice is visited in linear time.
func TestBaseTablesCTEChainIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT * FROM base)")
	const n = 200
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", c%d AS (SELECT * FROM c%d UNION ALL SELECT * FROM c%d)", i, i-1, i-1)
	}
	fmt.Fprintf(&b, " SELECT * FROM c%d", n-1)
	if got := baseTables(t, b.String()); !reflect.DeepEqual(got, []string{"base@1:27"}) {
		t.Errorf("got %v", got)
	}
}
