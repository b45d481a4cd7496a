package sqlplan

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestPlanArrayAggregates(t *testing.T) {
	for _, c := range []struct {
		sql   string
		types []string
		parts []string
	}{
		{`SELECT ARRAY_AGG(added) AS a FROM wiki`, []string{"BIGINT ARRAY"}, []string{
			`"type":"expression"`, `"fold":"array_append(\"__acc\", \"added\")"`, `"combine":"array_concat(\"__acc\", \"a0\")"`,
			`"initialValue":"\u003cLONG\u003e[]"`, `"maxSizeBytes":1024`}},
		{`SELECT ARRAY_AGG(DISTINCT page, 4096) FROM wiki`, []string{"VARCHAR ARRAY"}, []string{
			`"fold":"array_set_add(\"__acc\", \"page\")"`, `"combine":"array_set_add_all(\"__acc\", \"a0\")"`, `"maxSizeBytes":4096`}},
		{`SELECT ARRAY_AGG(__time) FROM wiki`, []string{"TIMESTAMP ARRAY"}, nil},
		{`SELECT STRING_AGG(page, '|') FILTER (WHERE added > 1) FROM wiki`, []string{"VARCHAR"}, []string{
			`"finalize":"if(array_length(o) == 0, null, array_to_string(o, '|'))"`, `{"field":{"column":"page","type":"null"},"type":"not"}`, `"type":"and"`}},
		{`SELECT ARRAY_LENGTH(ARRAY_AGG(added)), ARRAY_CONTAINS(ARRAY_AGG(page), ARRAY['a', 'b']) FROM wiki`, []string{"BIGINT", "BOOLEAN"}, []string{
			`array_length(\"a0\")`, `array_contains(\"a1\", array('a', 'b'))`}},
		{`SELECT ARRAY_AGG(UPPER(page)) FROM wiki`, []string{"VARCHAR ARRAY"}, []string{`"fields":["v0"]`, `"expression":"upper(\"page\")"`}},
		{`SELECT ARRAY[1, 2] AS col`, []string{"BIGINT ARRAY"}, []string{`"expression":"array(1, 2)"`, `"queryType":"timeseries"`}},
		// A projection and a filter over an ARRAY_AGG subquery fold into it.
		{`SELECT STRLEN(ARRAY_TO_STRING(col, '|')) AS n FROM (SELECT ARRAY_AGG(added) AS col FROM wiki)`, []string{"BIGINT"}, []string{
			`strlen(array_to_string(\"a0\", '|'))`}},
		{`SELECT * FROM (SELECT page, ARRAY_AGG(added) AS col FROM wiki GROUP BY page) WHERE ARRAY_LENGTH(col) > 1`, []string{"VARCHAR", "BIGINT ARRAY"}, []string{
			`"having":{"filter":{"expression":"(array_length(\"a0\") \u003e 1)"`}},
		{`SELECT COUNT(*) c FROM (SELECT ARRAY_AGG(added) AS col FROM wiki) WHERE NOT ARRAY_CONTAINS(col, 99) OR col IS NULL`, []string{"BIGINT"}, []string{
			`"having":{"filter":{"expression":"((!array_contains(\"a0\", 99)) || 0)"`}},
		// ARRAY_AGG is never null to Calcite (nor ARRAY_ORDINAL_OF, ARRAY_LENGTH,
		// ARRAY_TO_STRING): IS NULL of it is false before anything runs;
		// ARRAY_OFFSET_OF and STRING_AGG may be null.
		{`SELECT ARRAY_ORDINAL_OF(ARRAY_AGG(added), 1) IS NULL, ARRAY_OFFSET_OF(ARRAY_AGG(added), 1) IS NULL, STRING_AGG(page, ',') IS NOT NULL, LENGTH(ARRAY_TO_STRING(ARRAY_AGG(page), '')) IS NOT NULL FROM wiki`,
			[]string{"BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"}, []string{`"expression":"0"`, `isnull(array_offset_of(`, `(!isnull(\"a1\"))`, `"expression":"1"`}},
	} {
		p, _ := plan(t, c.sql, nil)
		for i, typ := range c.types {
			if p.Columns[i].Type != typ {
				t.Errorf("%s: column %d is %s, want %s", c.sql, i, p.Columns[i].Type, typ)
			}
		}
		has(t, p.Native, c.parts...)
	}
}

func TestPlanArrayAggregateErrors(t *testing.T) {
	for _, c := range []struct{ sql, category, msg string }{
		{`SELECT STRING_AGG('x', '|')`, CategoryUnsupported, "STRING_AGG of a constant"},
		{`SELECT ARRAY_AGG(1, 100000)`, CategoryUnsupported, "with a size limit"},
		{`SELECT ARRAY_AGG(page, 'big') FROM wiki`, CategoryInvalidInput, "maxSizeBytes"},
		{`SELECT STRING_AGG(page) FROM wiki`, CategoryInvalidInput, "Invalid number of arguments"},
		{`SELECT STRING_AGG(page, channel) FROM wiki`, CategoryUnsupported, "literal separator"},
		{`SELECT ARRAY_AGG(page), added FROM wiki`, CategoryInvalidInput, "is not being grouped"},
	} {
		_, err := Plan(context.Background(), c.sql, Request{}, testCatalog{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Category != c.category || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: got %v, want %s containing %q", c.sql, err, c.category, c.msg)
		}
	}
}

// TestPlanSubqueryArrayRefused checks that an array column of a subquery
// that cannot fold into it is refused rather than read from the subquery's
// table, which would drop its nulls.
func TestPlanSubqueryArrayRefused(t *testing.T) {
	_, err := Plan(context.Background(), `SELECT a FROM (SELECT page, ARRAY_AGG(added) AS a FROM wiki GROUP BY page) ORDER BY page`, Request{}, testCatalog{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Category != CategoryUnsupported || !strings.Contains(pe.Msg, "ARRAY column 'a'") {
		t.Fatalf("got %v", err)
	}
	// Counting its rows reads no array.
	plan(t, `SELECT COUNT(*) FROM (SELECT page, ARRAY_AGG(added) AS a FROM wiki GROUP BY page)`, nil)
}

// TestPlanScanArrayRefused checks that an array expression in a query that
// does not aggregate is refused rather than returned as a string.
func TestPlanScanArrayRefused(t *testing.T) {
	_, err := Plan(context.Background(), `SELECT ARRAY[added, 1] FROM wiki`, Request{}, testCatalog{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Category != CategoryUnsupported || !strings.Contains(pe.Msg, "ARRAY-valued") {
		t.Fatalf("got %v", err)
	}
}
