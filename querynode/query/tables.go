package query

// Tables returns every table q reads, each once in order of first
// appearance: its table, the tables of its union, the right sides of its
// joins, and through query data sources those of its subqueries at any
// depth. An inline data source reads none; a lookup is not a table. The
// broker authorizes READ on each (issue 18), so a table a subquery, union
// or join hides is never read without the permission.
func (q *Query) Tables() []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	var walk func(q *Query)
	walk = func(q *Query) {
		for ; q != nil; q = q.SubQuery {
			if q.Inline == nil && q.SubQuery == nil {
				names := q.DataSources
				if len(names) == 0 && q.DataSource != "" {
					names = []string{q.DataSource}
				}
				for _, n := range names {
					add(n)
				}
			}
			for _, j := range q.Joins {
				if j.Right.Table != "" {
					add(j.Right.Table)
				}
				walk(j.Right.Query)
			}
		}
	}
	walk(q)
	return out
}
