package sqlplan

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestPlanLookup(t *testing.T) {
	for _, c := range []struct {
		sql   string
		parts []string
	}{
		{`SELECT LOOKUP(page, 'names') AS name, COUNT(*) FROM wiki GROUP BY 1`,
			[]string{`"expression":"lookup(\"page\", 'names')"`, `"outputType":"STRING"`}},
		{`SELECT LOOKUP(page, 'names', 'n/a') FROM wiki`,
			[]string{`lookup(\"page\", 'names', 'n/a')`}},
		{`SELECT page FROM wiki WHERE LOOKUP(channel, 'lang', NULL) = 'English'`,
			[]string{`lookup(\"channel\", 'lang')`}},
	} {
		p, _ := plan(t, c.sql, nil)
		has(t, p.Native, c.parts...)
	}
	for _, c := range []struct{ sql, msg string }{
		{`SELECT LOOKUP(page) FROM wiki`, "Invalid number of arguments to function 'LOOKUP'"},
		{`SELECT LOOKUP(page, 'a', 'b', 'c') FROM wiki`, "Invalid number of arguments to function 'LOOKUP'"},
		{`SELECT LOOKUP(page, channel) FROM wiki`, "lookup name must be a string literal"},
		{`SELECT LOOKUP(page, 'names', channel) FROM wiki`, "replaceMissingValueWith must be a string literal"},
		{`SELECT LOOKUP(page, '') FROM wiki`, "must not be empty"},
	} {
		_, err := Plan(context.Background(), c.sql, Request{}, testCatalog{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Category != CategoryInvalidInput || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want invalid input containing %q", c.sql, err, c.msg)
		}
	}
}
