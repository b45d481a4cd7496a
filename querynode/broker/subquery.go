package broker

import (
	"context"
	"math"
)

// DefaultMaxSubqueryRows is Druid's default druid.server.http.maxSubqueryRows.
const DefaultMaxSubqueryRows = 100_000

// subqueryRows counts the rows the subqueries of one query have produced
// on the broker, against the query's limit (negative: none).
type subqueryRows struct {
	limit int64
	used  int64
}

// maxSubqueryRows is the row limit of q's subqueries: the query context's
// maxSubqueryRows, else the server's.
func (b *Broker) maxSubqueryRows(q *nativeQuery) int64 {
	if n, ok := contextMaxSubqueryRows(q); ok {
		return n
	}
	return b.cfg.MaxSubqueryRows
}

// exceeded is Druid's error for a query whose subqueries produced more rows
// than allowed, in Druid's words.
func (r *subqueryRows) exceeded() error {
	return resourceLimit("Cannot issue the query, subqueries generated results beyond maximum[%d] rows. Try setting the "+
		"'maxSubqueryBytes' in the query context to 'auto' for enabling byte based limit, which chooses an optimal limit based on "+
		"memory size and result's heap usage or manually configure the values of either 'maxSubqueryBytes' or 'maxSubqueryRows' in the query "+
		"context. Manually alter the value carefully as it can cause the broker to go out of memory.", r.limit)
}

func (r *subqueryRows) max() int64 {
	if r.limit < 0 {
		return math.MaxInt64
	}
	return r.limit
}

// executeOverTable evaluates a query on an inline or query data source, on
// the broker as Druid does: the inner query runs through execute (so an
// inner query on tables is scattered to the historicals as usual, and
// nested query data sources recurse), its result rows become a table, the
// table a temporary in-memory segment, and the outer query runs over that
// segment with the engine. The outer intervals filter the rows on __time.
func (b *Broker) executeOverTable(ctx context.Context, q *nativeQuery, rows *subqueryRows, c *completeness) ([]byte, error) {
	t := inlineTable(q)
	if t == nil {
		inner, body := innerQuery(q)
		// A groupBy reads a groupBy subquery itself in Druid, without
		// inlining its results: those rows do not count against the limit.
		counted := !(isGroupBy(q) && isGroupBy(inner))
		if counted && rows.used >= rows.max() {
			return nil, rows.exceeded()
		}
		out, err := b.execute(ctx, inner, body, rows, c)
		if err != nil {
			return nil, err
		}
		if t, err = resultTable(inner, out); err != nil {
			return nil, err
		}
		if counted {
			if int64(len(t.Rows)) > rows.max()-rows.used {
				return nil, rows.exceeded()
			}
			rows.used += int64(len(t.Rows))
		}
	}
	return b.merger.runOnTable(ctx, q, t)
}
