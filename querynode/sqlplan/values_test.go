package sqlplan

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A VALUES list is valid SQL the planner does not plan: it must be refused
// as unsupported, naming VALUES, not reported as a syntax error (Druid's
// corpus uses it in IN subqueries: `c IN (SELECT col FROM (VALUES(0),(1)) AS t(col))`).
func TestValuesListUnsupported(t *testing.T) {
	for _, q := range []string{
		`SELECT col FROM (VALUES(0),(1),(999)) AS t(col)`,
		`SELECT page FROM wiki WHERE added IN (SELECT col FROM (VALUES(0),(1)) AS t(col))`,
		`SELECT page FROM wiki WHERE added IN (VALUES (1), (2))`,
		`VALUES (1), (2)`,
		`SELECT page FROM wiki UNION ALL VALUES ('x')`,
	} {
		_, err := Plan(context.Background(), q, Request{}, testCatalog{})
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want *Error", q, err)
			continue
		}
		if pe.Category != CategoryUnsupported || !strings.Contains(pe.Msg, "VALUES lists are not supported") || !strings.Contains(pe.Msg, "(line [") {
			t.Errorf("%s: %s %q, want UNSUPPORTED naming VALUES with its position", q, pe.Category, pe.Msg)
		}
	}
}
