package sqltask

import (
	"context"
	"errors"
	"testing"

	"strata/ingest/msq"
	"strata/ingest/msq/msqtest"
	"strata/sql"
)

// MissingTable gives the planner's own message, for the same table, wherever
// the planner gets as far as looking the table up; msq.Validate is the check.
func TestMissingTableMatchesPlanner(t *testing.T) {
	env := msqtest.New(t.TempDir())
	req := msq.Request{SQL: inlineInsert, TaskID: "query-seed", Version: "2030-01-01T00:00:00.000Z", TempDir: t.TempDir()}
	if _, err := msq.Run(context.Background(), req, env, nil); err != nil {
		t.Fatalf("seeding t: %v", err)
	}
	exists := func(ds string) bool { return len(env.Segments(ds)) > 0 }
	for _, c := range []struct {
		sql  string
		want string // "" when every table read exists
	}{
		{`REPLACE INTO wiki OVERWRITE ALL SELECT __time, page FROM nosuchds PARTITIONED BY DAY`,
			`Object 'nosuchds' not found (line [1], column [58])`},
		{`SELECT page FROM t UNION ALL SELECT page FROM gone`, `Object 'gone' not found (line [1], column [47])`},
		{`WITH a AS (SELECT * FROM t), b AS (SELECT page FROM a WHERE page = 'x')
SELECT page FROM b UNION ALL SELECT page FROM "Gone ds"`, `Object 'Gone ds' not found (line [2], column [47])`},
		{`INSERT INTO t SELECT __time, page FROM druid.gone PARTITIONED BY DAY`, `Object 'gone' not found (line [1], column [40])`},
		{"SELECT page\nFROM t\nUNION ALL\nSELECT page FROM\n  missing", `Object 'missing' not found (line [5], column [3])`},
		{`WITH a AS (SELECT * FROM a) SELECT * FROM a`, `Object 'a' not found (line [1], column [26])`},
		{`SELECT page FROM (SELECT * FROM (SELECT * FROM T))`, `Object 'T' not found (line [1], column [48])`},
		{`WITH gone AS (SELECT __time, page FROM t) SELECT * FROM gone`, ``},
		{`WITH u AS (SELECT * FROM gone) SELECT page FROM t`, ``},
		{`SELECT * FROM druid.t`, ``},
		{`INSERT INTO brand_new SELECT __time, page FROM t PARTITIONED BY DAY`, ``},
		{`REPLACE INTO t OVERWRITE ALL SELECT * FROM t PARTITIONED BY DAY`, ``},
	} {
		t.Run(c.sql, func(t *testing.T) {
			st, err := sql.Parse(c.sql)
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			got := ""
			if err := MissingTable(st, exists); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s:\n got %q\nwant %q", c.sql, got, c.want)
			}
			planned := ""
			if _, err := msq.Validate(context.Background(), msq.Request{SQL: c.sql, TempDir: t.TempDir()}, env); err != nil {
				var f *msq.Fault
				if !errors.As(err, &f) {
					t.Fatalf("%s: %v", c.sql, err)
				}
				planned = f.Message
			}
			if planned != c.want {
				t.Errorf("%s: the planner says %q, want %q", c.sql, planned, c.want)
			}
		})
	}
}

// Statements the planner refuses for another reason before it looks the
// table up still name the missing table (as Druid's validator would); names
// the planner refuses as unsupported schemas are left to it.
func TestMissingTable(t *testing.T) {
	have := map[string]bool{"t": true, "wiki": true}
	for _, c := range []struct{ sql, want string }{
		{`SELECT * FROM t JOIN gone ON true`, `Object 'gone' not found (line [1], column [22])`},
		{`SELECT * FROM t WHERE page IN (SELECT page FROM gone)`, `Object 'gone' not found (line [1], column [49])`},
		{`WITH c AS (SELECT page FROM t) SELECT * FROM t WHERE page IN (SELECT page FROM c)`, ``},
		{`SELECT (SELECT MAX(x) FROM gone) FROM t`, `Object 'gone' not found (line [1], column [28])`},
		{`SELECT * FROM t WHERE EXISTS (SELECT 1 FROM gone)`, `Object 'gone' not found (line [1], column [45])`},
		{`SELECT * FROM t CROSS JOIN UNNEST(ARRAY[1]) AS u (v)`, ``},
		{`SELECT * FROM TABLE(EXTERN('{}', '{}', '[]'))`, ``},
		{`SELECT * FROM TABLE(inline(data => 'a', format => 'csv')) EXTEND (a VARCHAR)`, ``},
		{`SELECT * FROM sys.segments`, ``},
		{`SELECT * FROM lookup.countries`, ``},
		{`SELECT * FROM INFORMATION_SCHEMA.TABLES`, ``},
		{`SELECT * FROM "Druid".gone`, ``},
		{`SELECT * FROM a.b.c`, ``},
		{`SELECT * FROM sys.segments, gone`, `Object 'gone' not found (line [1], column [29])`},
		{`SELECT * FROM "druid"."gone"`, `Object 'gone' not found (line [1], column [15])`},
		{`SELECT * FROM Wiki`, `Object 'Wiki' not found (line [1], column [15])`},
		{`SELECT * FROM "wiki"`, ``},
	} {
		t.Run(c.sql, func(t *testing.T) {
			st, err := sql.Parse(c.sql)
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			got := ""
			if err := MissingTable(st, func(ds string) bool { return have[ds] }); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s:\n got %q\nwant %q", c.sql, got, c.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	asked := map[string]int{}
	exists := func(ds string) bool { asked[ds]++; return ds == "src" }
	ds, err := Check(`INSERT INTO dst SELECT * FROM src UNION ALL SELECT * FROM src PARTITIONED BY DAY`, exists)
	if err != nil || ds != "dst" {
		t.Fatalf("Check: %q %v", ds, err)
	}
	if asked["src"] != 1 || asked["dst"] != 0 {
		t.Errorf("existence asked %v, want src once and never the target", asked)
	}
	if _, err := Check(`SELECT * FROM`, exists); err == nil {
		t.Error("a syntax error passed")
	}
	if _, err := Check(`EXPLAIN PLAN FOR SELECT * FROM src`, exists); err == nil {
		t.Error("EXPLAIN passed")
	}
	if _, err := Check(`SELECT * FROM nope`, exists); err == nil || err.Error() != `Object 'nope' not found (line [1], column [15])` {
		t.Errorf("missing table: %v", err)
	}
}
