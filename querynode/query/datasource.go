package query

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// InlineTable is a table of rows carried by a query: an inline data source,
// or, on a broker, the result rows of a subquery. Rows hold decoded JSON
// values: nil, string, json.Number, bool, []any or map[string]any, one per
// column name.
type InlineTable struct {
	ColumnNames []string
	// ColumnTypes, when not nil, holds one type per column in upper case:
	// "STRING", "LONG", "FLOAT", "DOUBLE" or "ARRAY<...>", or "" when the
	// type of that column is not known.
	ColumnTypes []string
	Rows        [][]any
}

// MaxSubqueryDepth bounds the nesting of query data sources, so that a
// hostile body cannot exhaust the stack.
const MaxSubqueryDepth = 32

// Query types whose results can be read as a table, and query types that
// can read one.
var (
	subqueryTypes     = []string{Timeseries, TopN, GroupBy, Scan}
	overSubqueryTypes = []string{Timeseries, TopN, GroupBy, Scan, Search, TimeBoundary}
)

// IsSubqueryBased reports whether q reads an inline or query data source
// rather than tables.
func (q *Query) IsSubqueryBased() bool { return q.Inline != nil || q.SubQuery != nil }

func (q *Query) checkOverSubquery(what string) error {
	if !slices.Contains(overSubqueryTypes, q.Type) {
		return Errorf(Unsupported, "%s queries over a dataSource of type [%s] are not supported by this engine", q.Type, what)
	}
	return nil
}

func (q *Query) parseInline(o obj) error {
	if err := q.checkOverSubquery("inline"); err != nil {
		return err
	}
	o.what = "inline dataSource"
	names, ok, err := o.strings("columnNames")
	if err != nil {
		return err
	}
	if !ok {
		return o.missing("columnNames")
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" {
			return Invalidf("inline dataSource: column names must not be empty")
		}
		if seen[n] {
			return Invalidf("inline dataSource: duplicate column name [%s]", n)
		}
		seen[n] = true
	}
	t := &InlineTable{ColumnNames: names}
	if raw := o.raw("columnTypes"); raw != nil {
		var types []*string
		if err := json.Unmarshal(raw, &types); err != nil {
			return Invalidf("inline dataSource: property [columnTypes] must be an array of type names, got %s", snippet(raw))
		}
		if len(types) != len(names) {
			return Invalidf("columnNames and columnTypes must be the same length")
		}
		t.ColumnTypes = make([]string, len(types))
		for i, p := range types {
			if p == nil {
				continue
			}
			if t.ColumnTypes[i], err = columnType(*p); err != nil {
				return err
			}
		}
	}
	raw := o.raw("rows")
	if raw == nil {
		return o.missing("rows")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rows []any
	if err := dec.Decode(&rows); err != nil {
		return Invalidf("inline dataSource: property [rows] must be an array of arrays, got %s", snippet(raw))
	}
	t.Rows = make([][]any, len(rows))
	for i, r := range rows {
		row, ok := r.([]any)
		if !ok {
			return Invalidf("inline dataSource: row %d must be an array, got %s", i, describe(r))
		}
		if len(row) != len(names) {
			return Invalidf("inline dataSource: row %d has %d values, but there are %d column names", i, len(row), len(names))
		}
		t.Rows[i] = row
	}
	q.Inline = t
	return nil
}

// columnType normalizes a Druid column type name.
func columnType(s string) (string, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	switch u {
	case "STRING", "LONG", "FLOAT", "DOUBLE", "ARRAY<STRING>", "ARRAY<LONG>", "ARRAY<FLOAT>", "ARRAY<DOUBLE>":
		return u, nil
	}
	if strings.HasPrefix(u, "COMPLEX<") || strings.HasPrefix(u, "ARRAY<") {
		return "", Errorf(Unsupported, "inline dataSource: column type [%s] is not supported by this engine", s)
	}
	return "", Invalidf("inline dataSource: unknown column type [%s]", s)
}

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "a value"
	}
	return snippet(b)
}

func (q *Query) parseQueryDataSource(o obj, depth int) error {
	if err := q.checkOverSubquery("query"); err != nil {
		return err
	}
	o.what = "query dataSource"
	raw := o.raw("query")
	if raw == nil {
		return o.missing("query")
	}
	if depth+1 > MaxSubqueryDepth {
		return Invalidf("query dataSource: subqueries are nested more than %d levels deep", MaxSubqueryDepth)
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] != '{' {
		return Invalidf("query dataSource: property [query] must be a query object, got %s", snippet(raw))
	}
	inner, err := parse(raw, depth+1)
	if err != nil {
		return err
	}
	if !slices.Contains(subqueryTypes, inner.Type) {
		return Errorf(Unsupported, "a %s query cannot be used as a subquery by this engine; the inner query of a query dataSource must be one of [%s]",
			inner.Type, strings.Join(subqueryTypes, ", "))
	}
	q.SubQuery, q.SubQueryJSON = inner, append(json.RawMessage(nil), raw...)
	return nil
}
