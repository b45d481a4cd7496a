package sqlplan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPlanJoin(t *testing.T) {
	for _, c := range []struct {
		sql   string
		parts []string
	}{
		{`SELECT a.page, SUM(b.added) FROM wiki a JOIN wiki b ON a.page = b.page GROUP BY 1`, []string{
			`"dataSource":{"condition":"(\"page\" == \"j0.page\")","joinType":"INNER","left":{"type":"table","name":"wiki"},"right":{"type":"table","name":"wiki"},"rightPrefix":"j0.","type":"join"}`,
			`"fieldName":"j0.added"`, `"dimension":"page"`}},
		{`SELECT a.page FROM wiki a LEFT JOIN (SELECT channel, COUNT(*) AS n FROM wiki GROUP BY channel) s ON a.channel = s.channel WHERE s.n > 1`, []string{
			`"joinType":"LEFT"`, `"right":{"query":{`, `"condition":"(\"channel\" == \"j0.d0\")"`, `"column":"j0.a0"`}},
		{`SELECT a.page, c.page FROM wiki a JOIN wiki b ON a.page = b.page JOIN wiki c ON b.channel = c.channel AND a.added = c.added`, []string{
			`"rightPrefix":"j1."`, `"condition":"(\"j0.channel\" == \"j1.channel\") \u0026\u0026 (\"added\" == \"j1.added\")"`,
			`"left":{"condition":"(\"page\" == \"j0.page\")"`, `"columns":["page","j1.page"]`}},
		{`SELECT a.page FROM wiki a, wiki b WHERE a.page = b.page AND a.added > 3`, []string{
			`"condition":"(\"page\" == \"j0.page\")"`, `"joinType":"INNER"`}},
		{`SELECT COUNT(*) FROM wiki CROSS JOIN wiki w2`, []string{`"condition":"1"`}},
		{`SELECT a.page, b.page FROM wiki a RIGHT JOIN wiki b ON a.page = b.page FULL JOIN wiki c ON b.page = c.page`, []string{
			`"joinType":"FULL"`, `"joinType":"RIGHT"`}},
		// An expression of the right side is a column of a scan of it; a
		// condition on the right side alone filters that scan; one on the
		// left side alone of an INNER join filters the joined rows.
		{`SELECT a.page FROM wiki a JOIN wiki b ON UPPER(a.page) = UPPER(b.page) AND b.added > 3 AND a.channel = 'en'`, []string{
			`"right":{"query":{"columns":["__time","page","channel","added","delta","jv0"]`,
			`"virtualColumns":[{"expression":"upper(\"page\")","name":"jv0","outputType":"STRING","type":"expression"}]`,
			`"filter":{"expression":"(\"added\" \u003e 3)","type":"expression"}`,
			`"condition":"(upper(\"page\") == \"j0.jv0\")"`, `"filter":{"dimension":"channel","type":"selector","value":"en"}`}},
		// USING: one condition per name; the column once in SELECT *, first,
		// and unqualified it is the left side's.
		{`SELECT * FROM wiki a JOIN wiki b USING (page)`, []string{`"condition":"(\"page\" == \"j0.page\")"`,
			`"columns":["page","__time","channel","added","delta","j0.__time","j0.channel","j0.added","j0.delta"]`}},
		{`SELECT page, b.page AS bp FROM wiki a LEFT JOIN wiki b USING (page, channel)`, []string{
			`"condition":"(\"page\" == \"j0.page\") \u0026\u0026 (\"channel\" == \"j0.channel\")"`, `"columns":["page","j0.page"]`}},
		{`SELECT COUNT(*) FROM wiki a NATURAL JOIN wiki b`, []string{`(\"__time\" == \"j0.__time\")`, `(\"delta\" == \"j0.delta\")`}},
		{`SELECT * FROM wiki a JOIN wiki b ON a.page = b.page`, []string{
			`"columns":["__time","page","channel","added","delta","j0.__time","j0.page","j0.channel","j0.added","j0.delta"]`}},
	} {
		p, _ := plan(t, c.sql, nil)
		has(t, p.Native, c.parts...)
	}
	for _, c := range []struct{ sql, msg string }{
		{`SELECT a.page FROM wiki a RIGHT JOIN wiki b ON a.page = b.page AND b.added > 1`, "equality"},
		{`SELECT a.page FROM wiki a FULL JOIN wiki b ON a.page = b.page AND a.added > 1`, "equality"},
		{`SELECT a.page FROM wiki a JOIN wiki b ON a.page <> b.page`, "equality"},
		{`SELECT a.page FROM wiki a JOIN wiki b ON a.page = b.page OR a.added = b.added`, "equality"},
		{`SELECT a.page FROM wiki a LEFT JOIN wiki b ON a.page = b.page AND a.added > 3`, "equality"},
		{`SELECT a.page FROM wiki a JOIN wiki b ON a.page = 'x' OR b.page = 'y'`, "equality"},
		{`SELECT a.page FROM wiki a FULL JOIN wiki b USING (page)`, "NATURAL and USING are supported for INNER and LEFT joins"},
	} {
		_, err := Plan(context.Background(), c.sql, Request{}, testCatalog{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Category != CategoryUnsupported || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want UNSUPPORTED naming %q", c.sql, err, c.msg)
		}
	}
	for _, c := range []struct{ sql, msg string }{
		{`SELECT page FROM wiki a JOIN wiki b ON a.page = b.page`, "ambiguous"},
		{`SELECT x.page FROM wiki a JOIN wiki b ON a.page = b.page`, "Table 'x' not found"},
		{`SELECT a.page FROM wiki a JOIN wiki b USING (nope)`, "USING must name one column of each side"},
	} {
		_, err := Plan(context.Background(), c.sql, Request{}, testCatalog{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Category != CategoryInvalidInput || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want INVALID_INPUT naming %q", c.sql, err, c.msg)
		}
	}
}

// lookupCatalog is testCatalog plus the lookup table lookup.fruit, as the
// server's catalog serves lookups.
type lookupCatalog struct{ testCatalog }

func (c lookupCatalog) Table(ctx context.Context, schema, name string) (*Table, error) {
	if schema == "lookup" && name == "fruit" {
		return &Table{Columns: []Column{{"k", "VARCHAR"}, {"v", "VARCHAR"}}, DataSource: json.RawMessage(`{"type":"lookup","lookup":"fruit"}`)}, nil
	}
	return c.testCatalog.Table(ctx, schema, name)
}

func TestPlanJoinLookup(t *testing.T) {
	p, err := Plan(context.Background(), `SELECT l.v, SUM(w.added) FROM wiki w LEFT JOIN lookup.fruit l ON w.page = l.k GROUP BY 1`, Request{}, lookupCatalog{})
	if err != nil {
		t.Fatal(err)
	}
	has(t, p.Native, `"right":{"type":"lookup","lookup":"fruit"}`, `"condition":"(\"page\" == \"j0.k\")"`, `"joinType":"LEFT"`, `"dimension":"j0.v"`)
}
