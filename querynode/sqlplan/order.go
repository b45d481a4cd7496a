package sqlplan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"strata/sql"
)

// The native scan query orders only by __time. ORDER BY anything else on a
// query that does not aggregate is a sort of the scan's rows on the broker:
// the scan reads every matching row, up to maxRowsQueuedForOrdering (the
// context key Druid's scan ordering uses, default 100000); more than that
// is a 400 saying so rather than a partial or unordered answer.
const defaultMaxRowsForOrdering = 100000

// CategoryCapacityExceeded is Druid's error category for a query over one
// of its resource limits.
const CategoryCapacityExceeded = "CAPACITY_EXCEEDED"

// brokerSort is a scan's ORDER BY done on the broker (see RowsOf).
type brokerSort struct {
	keys  []scanKey
	limit int64 // the most rows the broker sorts
}

// scanKey is one ORDER BY item over a scan column.
type scanKey struct {
	native, typ string
	desc        bool
	nullsFirst  bool
}

// scanOrder plans a non-aggregating query's ORDER BY: by __time alone as the
// native scan's order, anything else as a broker sort. It reports whether
// the rows are sorted on the broker; the caller then leaves LIMIT and
// OFFSET to b (applied after the sort) instead of the native query.
func (s *selectPlan) scanOrder(native map[string]any, b *built, t *translator, exprs []sql.Expr, names []string) (bool, error) {
	if len(s.q.OrderBy) == 0 {
		return false, nil
	}
	if o := s.q.OrderBy[0]; len(s.q.OrderBy) == 1 && o.Nulls == sql.NullsDefault {
		if v, err := t.expr(resolveAlias(o.Expr, exprs, names)); err == nil && v.col == "__time" {
			native["order"] = map[bool]string{false: "ascending", true: "descending"}[o.Desc]
			// The native scan orders by time only with __time among its
			// columns; a row's values are read by name, so the SQL
			// answer leaves it out when it is not selected.
			if columns, _ := native["columns"].([]string); !slices.Contains(columns, "__time") {
				native["columns"] = append(columns, "__time")
			}
			return false, nil
		}
	}
	if s.p.nested > 0 {
		// A query data source cannot sort: its rows go to the outer
		// query, not through the broker.
		o := s.q.OrderBy[0]
		return false, unsupported("%s", sql.AtPos(o, "SQL query requires ordering a table by non-time column ["+o.Expr.String()+"], which is not supported in a subquery"))
	}
	columns, _ := native["columns"].([]string)
	bs := &brokerSort{limit: defaultMaxRowsForOrdering}
	if n, ok := toInt64(s.p.qctx["maxRowsQueuedForOrdering"]); ok && n > 0 {
		bs.limit = n
	}
	for _, o := range s.q.OrderBy {
		e := resolveAlias(o.Expr, exprs, names)
		var k scanKey
		if n, ok := e.(*sql.NumberLit); ok {
			i, err := n.Int64()
			if err != nil || i < 1 || int(i) > len(b.out) {
				return false, invalid("%s", sql.AtPos(n, "Ordinal out of range"))
			}
			k = scanKey{native: b.out[i-1].native, typ: b.out[i-1].typ}
		} else {
			v, err := t.expr(e)
			if err != nil {
				return false, err
			}
			col := v.col
			if col == "" {
				col = s.virtual(v)
			}
			if !slices.Contains(columns, col) {
				columns = append(columns, col) // read for the sort only
			}
			k = scanKey{native: col, typ: v.typ}
		}
		if isArrayType(k.typ) || strings.HasPrefix(k.typ, "COMPLEX") {
			return false, unsupported("%s", sql.AtPos(o, "Ordering a query that does not aggregate by an "+k.typ+" value is not supported"))
		}
		k.desc = o.Desc
		// Druid sorts NULL as the smallest value unless told otherwise.
		k.nullsFirst = !o.Desc
		switch o.Nulls {
		case sql.NullsFirst:
			k.nullsFirst = true
		case sql.NullsLast:
			k.nullsFirst = false
		}
		bs.keys = append(bs.keys, k)
	}
	native["columns"] = columns
	// One row more than the broker sorts tells a table too big from one
	// that fits exactly.
	native["limit"] = bs.limit + 1
	b.sort = bs
	b.limit, b.offset = s.limit, s.offset
	return true, nil
}

// explain shows a broker-sorted scan in EXPLAIN as Druid plans it: a scan
// with orderBy and the statement's LIMIT and OFFSET, where the query sent
// has no order and reads up to the sort's row cap (Strata's native scan,
// like Druid's, orders a table by __time only, so this plan is not run as
// a native query: the broker sorts).
func (bs *brokerSort) explain(q any, b *built) {
	m, ok := q.(map[string]any)
	if !ok {
		return
	}
	order := make([]map[string]string, len(bs.keys))
	for i, k := range bs.keys {
		order[i] = map[string]string{"columnName": k.native, "order": map[bool]string{false: "ascending", true: "descending"}[k.desc]}
	}
	m["orderBy"] = order
	delete(m, "limit")
	if b.limit >= 0 {
		m["limit"] = b.limit
	}
	if b.offset > 0 {
		m["offset"] = b.offset
	}
}

// columns are the native columns the sort reads, after a row's own.
func (bs *brokerSort) columns() []string {
	out := make([]string, len(bs.keys))
	for i, k := range bs.keys {
		out[i] = k.native
	}
	return out
}

// apply sorts the scan's rows, each its width output values then the sort
// columns, and returns them without the sort columns; it fails when there
// are more rows than it may sort.
func (bs *brokerSort) apply(rows [][]any, width int) ([][]any, error) {
	if int64(len(rows)) > bs.limit {
		return nil, &Error{Category: CategoryCapacityExceeded, Msg: fmt.Sprintf(
			"ORDER BY on a column other than __time sorts the matching rows on the broker, at most %d (context maxRowsQueuedForOrdering); "+
				"this query matches more: narrow it with WHERE, or order by __time", bs.limit)}
	}
	for _, r := range rows {
		for i := range bs.keys {
			if _, list := r[width+i].([]any); list {
				return nil, &Error{Category: CategoryUnsupported, Msg: fmt.Sprintf(
					"Ordering a query that does not aggregate by a multi-value column [%s] is not supported", bs.keys[i].native)}
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		for i, k := range bs.keys {
			if c := k.compare(a[width+i], b[width+i]); c != 0 {
				return c
			}
		}
		return 0
	})
	for i, r := range rows {
		rows[i] = r[:width]
	}
	return rows, nil
}

func (k scanKey) compare(a, b any) int {
	switch an, bn := a == nil, b == nil; {
	case an && bn:
		return 0
	case an || bn:
		if an == k.nullsFirst {
			return -1
		}
		return 1
	}
	var c int
	switch k.typ {
	case tBigint, tTimestamp, tDouble, tFloat, tBoolean:
		c = compareNumbers(a, b)
	default:
		c = strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	}
	if k.desc {
		return -c
	}
	return c
}

// compareNumbers compares two JSON numbers exactly when both are integers.
func compareNumbers(a, b any) int {
	ai, aok := toInt64(a)
	bi, bok := toInt64(b)
	if aok && bok {
		return cmp.Compare(ai, bi)
	}
	return cmp.Compare(toFloat(a), toFloat(b))
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case float64:
		return x
	case int64:
		return float64(x)
	case string:
		var f float64
		fmt.Sscan(x, &f)
		return f
	}
	if n, ok := toInt64(v); ok {
		return float64(n)
	}
	return 0
}
