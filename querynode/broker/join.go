package broker

import (
	"bytes"
	"context"
	"encoding/json"

	"strata/interval"
	"strata/querynode/query"
)

// Joins run broadcast, as Druid runs them: the broker turns the right side
// of every join clause into rows (a query or table side is run first,
// counting against the subquery row limit; an inline side is already rows;
// a lookup side is the broker's copy of the lookup), puts them into the query as
// inline data sources, and then runs the query as usual: a left side of
// tables is scattered to the data servers, which join each segment's rows
// with the rows shipped (the engine's join stage); an inline or query left
// side is joined on the broker.

// joinToPrepare reports whether q's joins need executeJoin: a right side
// not yet rows, or a RIGHT or FULL join whose left side is tables.
func joinToPrepare(q *nativeQuery) bool {
	return q.HasJoins() && (!q.JoinsMaterialized() || q.JoinsKeepRight() && !q.IsSubqueryBased())
}

// executeJoin materializes the right sides of q's joins and runs q with
// them inline.
func (b *Broker) executeJoin(ctx context.Context, q *nativeQuery, body []byte, rows *subqueryRows, c *completeness) ([]byte, error) {
	mq := *q
	mq.Joins = make([]*query.Join, len(q.Joins))
	for i, j := range q.Joins {
		if j.Right.Inline != nil {
			mq.Joins[i] = j
			continue
		}
		t, err := b.joinRight(ctx, q, j, rows, c)
		if err != nil {
			return nil, err
		}
		mq.Joins[i] = j.WithRight(t)
	}
	if mq.JoinsKeepRight() && !mq.IsSubqueryBased() {
		// RIGHT and FULL joins keep the right rows no left row matched:
		// the join must see the whole left side, so the broker reads the
		// left tables into rows (counted as subquery rows) and joins them
		// itself.
		if err := readLeftSide(&mq); err != nil {
			return nil, err
		}
		return b.execute(ctx, &mq, body, rows, c)
	}
	nb, err := withInlineRights(body, mq.Joins)
	if err != nil {
		return nil, err
	}
	return b.execute(ctx, &mq, nb, rows, c)
}

// readLeftSide makes the left tables of q a scan subquery of their rows
// within q's intervals.
func readLeftSide(q *nativeQuery) error {
	ivs := []string{interval.Eternity.String()}
	if len(q.Intervals) > 0 {
		ivs = ivs[:0]
		for _, iv := range q.Intervals {
			ivs = append(ivs, iv.String())
		}
	}
	var ds any = q.DataSource
	if len(q.DataSources) > 1 {
		ds = map[string]any{"type": "union", "dataSources": q.DataSources}
	}
	scan := map[string]any{"queryType": "scan", "dataSource": ds, "intervals": ivs, "resultFormat": "compactedList", "context": scanContext(q)}
	if f := q.Joins[0].LeftFilterJSON; f != nil {
		scan["filter"] = f
	}
	body, err := json.Marshal(scan)
	if err != nil {
		return err
	}
	inner, err := query.Parse(body)
	if err != nil {
		return err
	}
	q.SubQuery, q.SubQueryJSON = inner, body
	q.DataSource, q.DataSources = "", nil
	return nil
}

// joinRight returns the rows of a join's right side.
func (b *Broker) joinRight(ctx context.Context, q *nativeQuery, j *query.Join, rows *subqueryRows, c *completeness) (*table, error) {
	inner, body := j.Right.Query, []byte(j.Right.QueryJSON)
	switch {
	case j.Right.Lookup != "":
		// The broker's own copy of the lookup (every querying process
		// holds its tier's lookups); like Druid, its rows are not
		// subquery rows.
		return query.LookupTable(j.Right.Lookup)
	case j.Right.Table != "":
		// A table side is read whole by a scan (on the data servers that
		// hold it: every one, for a broadcast table), as Druid reads a
		// globally available table.
		scan := map[string]any{"queryType": "scan", "dataSource": j.Right.Table, "intervals": []string{interval.Eternity.String()},
			"resultFormat": "compactedList", "context": scanContext(q)}
		var err error
		if body, err = json.Marshal(scan); err != nil {
			return nil, err
		}
		if inner, err = query.Parse(body); err != nil {
			return nil, err
		}
	}
	if rows.used >= rows.max() {
		return nil, rows.exceeded()
	}
	out, err := b.execute(ctx, inner, body, rows, c)
	if err != nil {
		return nil, err
	}
	t, err := resultTable(inner, out)
	if err != nil {
		return nil, err
	}
	if int64(len(t.Rows)) > rows.max()-rows.used {
		return nil, rows.exceeded()
	}
	rows.used += int64(len(t.Rows))
	return t, nil
}

// scanContext is the context of the scan reading a table side: the outer
// query's timeout and identity, nothing that changes the rows.
func scanContext(q *nativeQuery) map[string]any {
	ctx := map[string]any{}
	if q.Context.QueryID != "" {
		ctx["queryId"] = q.Context.QueryID
	}
	return ctx
}

// withInlineRights rewrites a query body so that the right side of each
// join clause (joins[i] is the i-th clause from the innermost) is its rows
// as an inline data source.
func withInlineRights(body []byte, joins []*query.Join) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, query.Invalidf("cannot read the query: %v", err)
	}
	// The outermost join is the query's dataSource; its left side the next.
	ds := top["dataSource"]
	for i := len(joins) - 1; i >= 0; i-- {
		m, ok := ds.(map[string]any)
		if !ok || m["type"] != "join" {
			return nil, query.Errorf(query.Internal, "join clause %d not found in the query body", i)
		}
		raw, err := query.InlineJSON(joins[i].Right.Inline)
		if err != nil {
			return nil, err
		}
		m["right"] = raw
		ds = m["left"]
	}
	return json.Marshal(top)
}
