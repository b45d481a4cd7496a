package query

// Tables returns every table q reads, each once in order of first
// appearance: its table, the tables of its union, and through query data
// sources those of its subqueries at any depth. An inline data source reads
// none. The broker authorizes READ on each (issue 18), so a table a
// subquery or union hides is never read without the permission.
func (q *Query) Tables() []string {
	var out []string
	seen := map[string]bool{}
	for ; q != nil; q = q.SubQuery {
		if q.Inline != nil || q.SubQuery != nil {
			continue
		}
		names := q.DataSources
		if len(names) == 0 && q.DataSource != "" {
			names = []string{q.DataSource}
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
