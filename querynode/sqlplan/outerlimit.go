package sqlplan

import (
	"encoding/json"
	"math"
	"strconv"

	"strata/sql"
)

// sqlOuterLimit, Druid's context key: the most rows the top-level query
// answers. Druid's planner puts an outer LIMIT around the statement, which
// merges with the statement's own ORDER BY and LIMIT; here the top-level
// query block plans with the smaller of the two limits, so the native
// query stops early as it would for a LIMIT in the text. Grafana's Druid
// plugin sends 2000 with every SQL query.

// outerLimit reads sqlOuterLimit from the context: -1 when it is not set.
// Druid reads it as an integer, from a number or a numeric string.
func outerLimit(qctx map[string]any) (int64, error) {
	v, ok := qctx["sqlOuterLimit"]
	if !ok || v == nil {
		return -1, nil
	}
	n, ok := int64(0), false
	switch x := v.(type) {
	case float64:
		n, ok = int64(x), x == math.Trunc(x) && math.Abs(x) < 1<<53
	case int64:
		n, ok = x, true
	case int:
		n, ok = int64(x), true
	case json.Number:
		i, err := x.Int64()
		n, ok = i, err == nil
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		n, ok = i, err == nil
	}
	if !ok || n < 0 {
		b, _ := json.Marshal(v)
		return 0, invalid("sqlOuterLimit must be a non-negative integer, got %s", b)
	}
	return n, nil
}

// capOuter is the limit of query block q: its own (-1 for none), or the
// outer limit when q is the statement's top-level block and that is smaller.
func (p *planner) capOuter(q *sql.Query, limit int64) int64 {
	if q != p.outerQ || p.outer < 0 {
		return limit
	}
	if limit < 0 || p.outer < limit {
		return p.outer
	}
	return limit
}

// descendOuter moves the outer limit to the body of a parenthesized
// top-level query, which is planned in its place.
func (p *planner) descendOuter(q, body *sql.Query) {
	if q == p.outerQ {
		p.outerQ = body
	}
}

// CapRows cuts rows to the outer limit: the concatenated parts of a UNION
// ALL, which no single native query can limit.
func (p *Planned) CapRows(rows [][]any) [][]any {
	if p.OuterLimit >= 0 && int64(len(rows)) > p.OuterLimit {
		return rows[:p.OuterLimit]
	}
	return rows
}
