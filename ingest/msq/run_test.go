package msq

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestInsertInlineAndSelect(t *testing.T) {
	env := newEnv(t)
	run(t, env, `INSERT INTO t
SELECT TIME_PARSE("ts") AS __time, page, added, added * 2 AS twice
FROM TABLE(EXTERN('{"type":"inline","data":"ts,page,added\n2024-01-01T01:00:00Z,a,3\n2024-01-01T02:00:00Z,b,4\n2024-01-02T00:00:00Z,a,5"}',
  '{"type":"csv","findColumnsFromHeader":true}',
  '[{"name":"ts","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"}]'))
PARTITIONED BY DAY`, nil)
	segs := env.Segments("t")
	if len(segs) != 2 {
		t.Fatalf("%d segments, want 2", len(segs))
	}
	got := sortRows(storedRows(t, env, "t"))
	want := []string{
		`{"__time":1704070800000,"added":3,"page":"a","twice":6}`,
		`{"__time":1704074400000,"added":4,"page":"b","twice":8}`,
		`{"__time":1704153600000,"added":5,"page":"a","twice":10}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stored rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rows := selectRows(t, env, `SELECT page, SUM(added) AS s, COUNT(*) AS c FROM t GROUP BY page ORDER BY page`)
	b, _ := json.Marshal(rows)
	if string(b) != `[{"c":2,"page":"a","s":8},{"c":1,"page":"b","s":4}]` {
		t.Fatalf("select: %s", b)
	}
}
