package sqlplan

import (
	"context"
	"encoding/json"
	"testing"
)

// sqlOuterLimit (Grafana's Druid plugin sends 2000 with every SQL query)
// caps the rows of the top-level query as Druid's planner does, with an
// outer LIMIT: the smaller of it and the query's own LIMIT reaches the
// native query, subqueries are left whole, and a value that is not a
// non-negative integer is refused.
func TestSQLOuterLimit(t *testing.T) {
	for _, c := range []struct {
		sql   string
		outer any
		want  float64
	}{
		{`SELECT page FROM wiki`, float64(3), 3},
		{`SELECT page FROM wiki LIMIT 2`, float64(3), 2},
		{`SELECT page FROM wiki LIMIT 10`, float64(3), 3},
		{`SELECT page FROM wiki`, "4", 4},      // a string, as a JDBC client's property is
		{`SELECT page FROM wiki`, int64(5), 5}, // SET sqlOuterLimit = 5
		{`(SELECT page FROM wiki)`, float64(3), 3},
	} {
		_, native := plan(t, c.sql, map[string]any{"sqlOuterLimit": c.outer})
		if native["queryType"] != "scan" || native["limit"] != c.want {
			t.Errorf("%s with sqlOuterLimit %v: native %v, want a scan with limit %v", c.sql, c.outer, native, c.want)
		}
	}
	// An aggregate: the limit reaches the groupBy's limitSpec.
	_, native := plan(t, `SELECT channel, COUNT(*) AS n FROM wiki GROUP BY channel`, map[string]any{"sqlOuterLimit": float64(2)})
	spec, _ := native["limitSpec"].(map[string]any)
	if native["queryType"] != "groupBy" || spec["limit"] != float64(2) {
		t.Errorf("groupBy with sqlOuterLimit 2: %v", native)
	}
	// A subquery is not the top-level query: it keeps all its rows.
	_, native = plan(t, `SELECT COUNT(*) FROM (SELECT page FROM wiki)`, map[string]any{"sqlOuterLimit": float64(1)})
	if b, _ := json.Marshal(native); native["queryType"] != "timeseries" || json.Valid(b) && containsKey(native["dataSource"], "limit") {
		t.Errorf("the subquery was limited: %s", b)
	}
	for _, bad := range []any{"x", float64(-1), 1.5, true} {
		_, err := Plan(context.Background(), `SELECT page FROM wiki`, Request{Context: map[string]any{"sqlOuterLimit": bad}}, testCatalog{})
		if pe, ok := err.(*Error); !ok || pe.Category != CategoryInvalidInput {
			t.Errorf("sqlOuterLimit %v: %v, want invalid input", bad, err)
		}
	}
	// UNION ALL: every part may be whole; OuterLimit tells the caller the cap
	// of their concatenation.
	p, err := Plan(context.Background(), `SELECT page FROM wiki UNION ALL SELECT channel FROM wiki`, Request{Context: map[string]any{"sqlOuterLimit": float64(3)}}, testCatalog{})
	if err != nil || p.OuterLimit != 3 {
		t.Fatalf("UNION ALL with sqlOuterLimit 3: %v, OuterLimit %d", err, p.OuterLimit)
	}
	if p, _ := plan(t, `SELECT page FROM wiki`, nil); p.OuterLimit != -1 {
		t.Errorf("no sqlOuterLimit: OuterLimit %d, want -1", p.OuterLimit)
	}
}

// containsKey reports whether v, a decoded JSON value, has key anywhere.
func containsKey(v any, key string) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == key || containsKey(e, key) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if containsKey(e, key) {
				return true
			}
		}
	}
	return false
}
