package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"strata/expr"
	"strata/querynode/query"
	"strata/storage/segment"
)

// A join whose right side has unique keys adds at most one right row to
// each left row: the right columns are then functions of the key, and the
// join needs no joined rows at all. joinAsLookups rewrites such a query
// into one over its left side alone, as Druid rewrites joins on unique
// keys: each right column becomes a virtual column looking its value up by
// the key, and an INNER join a filter keeping the rows whose key is found.
// The ordinary pipeline then runs (vectorized, with bitmap indexes for
// the left side's filters) instead of the join stage's materialization.
//
// It applies when every clause has one equality, its right key column
// holds unique non-null strings (a left value compares by its string
// form, as lookups compare), no right column is multi-value, no key reads
// a column of another clause's right side, and the query names its
// columns (a scan or search of all columns lists the right ones too).
// rewriteJoins enables joinAsLookups; tests turn it off to run the join
// stage on the same queries.
var rewriteJoins = true

func joinAsLookups(q *query.Query) (*query.Query, bool, error) {
	if q.Type == query.Scan && len(q.Scan.Columns) == 0 || q.Type == query.Search && len(q.Search.Dimensions) == 0 {
		return nil, false, nil
	}
	prefixes := make([]string, len(q.Joins))
	for i, j := range q.Joins {
		prefixes[i] = j.RightPrefix
	}
	readsRight := func(col string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(col, p) })
	}
	maps := map[string]map[string]string{}
	opts := expr.Options{Lookup: func(name string) (func(string) (string, bool), error) {
		m, ok := maps[name]
		if !ok {
			return nil, fmt.Errorf("no join table %s", name)
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }, nil
	}}
	out := *q
	out.Joins = nil
	out.VirtualColumns = slices.Clone(q.VirtualColumns)
	var filters []*query.Filter
	if f := q.LeftFilter(); f != nil {
		filters = append(filters, f)
	}
	for n, j := range q.Joins {
		t := j.Right.Inline
		if j.KeepsRight() || len(j.Keys) != 1 || t == nil || slices.ContainsFunc(j.Keys[0].Left.RequiredColumns(), readsRight) {
			return nil, false, nil
		}
		keyCol := slices.Index(t.ColumnNames, j.Keys[0].Right)
		if keyCol < 0 {
			return nil, false, nil
		}
		found := map[string]string{}
		for _, row := range t.Rows {
			k, isStr := row[keyCol].(string)
			if row[keyCol] == nil {
				continue
			}
			if _, dup := found[k]; !isStr || dup {
				return nil, false, nil
			}
			found[k] = "1"
		}
		key := j.Keys[0].Left.String()
		compile := func(src string) (*query.Expression, error) {
			e, err := expr.CompileWith(src, opts)
			if err != nil {
				return nil, query.Errorf(query.Internal, "join as lookups: %v", err)
			}
			return &query.Expression{Source: src, Expr: e}, nil
		}
		for c, name := range t.ColumnNames {
			col := j.RightPrefix + name
			if !q.JoinReads(col) {
				continue
			}
			if slices.ContainsFunc(out.VirtualColumns, func(v *query.VirtualColumn) bool { return v.Name == col }) {
				return nil, false, nil
			}
			tc := columnOf(typeAt(t.ColumnTypes, c), t.Rows, c)
			if tc.multi {
				return nil, false, nil
			}
			id := fmt.Sprintf("j%d.c%d", n, c)
			vals := map[string]string{}
			for _, row := range t.Rows {
				if k, ok := row[keyCol].(string); ok && row[c] != nil {
					vals[k] = scalarText(row[c])
				}
			}
			maps[id] = vals
			src := "lookup(" + key + ", '" + id + "')"
			typ := "STRING"
			switch tc.kind {
			case segment.KindLong:
				src, typ = "cast("+src+", 'LONG')", "LONG"
			case segment.KindDouble, segment.KindFloat:
				src, typ = "cast("+src+", 'DOUBLE')", "DOUBLE"
			}
			e, err := compile(src)
			if err != nil {
				return nil, false, err
			}
			out.VirtualColumns = append(out.VirtualColumns, &query.VirtualColumn{Name: col, Expression: e, OutputType: typ})
		}
		if j.Type == query.JoinInner {
			// Rows whose key is found: a virtual column of the lookup of the
			// key's presence, not null. As a string column it is read
			// through its key ids (once per distinct key where the key is
			// a dictionary column), not evaluated row by row.
			id := fmt.Sprintf("j%d.found", n)
			maps[id] = found
			e, err := compile("lookup(" + key + ", '" + id + "')")
			if err != nil {
				return nil, false, err
			}
			name := "__join_found_" + strconv.Itoa(n)
			if slices.ContainsFunc(out.VirtualColumns, func(v *query.VirtualColumn) bool { return v.Name == name }) {
				return nil, false, nil
			}
			out.VirtualColumns = append(out.VirtualColumns, &query.VirtualColumn{Name: name, Expression: e, OutputType: "STRING"})
			filters = append(filters, &query.Filter{Type: "not", Field: &query.Filter{Type: "selector", Column: name}})
		}
	}
	if len(filters) > 0 {
		if q.Filter != nil {
			filters = append([]*query.Filter{q.Filter}, filters...)
		}
		out.Filter = filters[0]
		if len(filters) > 1 {
			out.Filter = &query.Filter{Type: "and", Fields: filters}
		}
	}
	return &out, true, nil
}
