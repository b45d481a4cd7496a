package query

// parseGrouping reads Druid's grouping aggregator: groupings, the
// dimensions (by output name or by the column a dimension reads) whose
// presence in each subtotal of a groupBy's subtotalsSpec the result
// reports, as a bit each (1 = not grouped by), the first one highest.
func parseGrouping(o obj, a *Aggregator) error {
	raw, ok, err := o.array("groupings")
	if err != nil {
		return err
	}
	if !ok || len(raw) == 0 {
		return Invalidf("grouping aggregator [%s]: Must have a non-empty grouping dimensions", a.Name)
	}
	if len(raw) >= 64 {
		return Invalidf("grouping aggregator [%s]: Number of dimensions %d is more than supported 63", a.Name, len(raw))
	}
	seen := map[string]bool{}
	for _, r := range raw {
		s, ok := scalarString(r)
		if !ok {
			return Invalidf("grouping aggregator [%s]: groupings must be dimension names, got %s", a.Name, snippet(r))
		}
		if seen[s] {
			return Invalidf("grouping aggregator [%s]: Encountered same dimension more than once in groupings", a.Name)
		}
		seen[s] = true
		a.Groupings = append(a.Groupings, s)
	}
	return nil
}

// GroupingID is the grouping aggregator's value for a subtotal grouping by
// the dimensions in grouped (nil: every dimension, a query without
// subtotals): bit i from the right is 1 when the i-th grouping from the
// end is not grouped by.
func GroupingID(groupings []string, grouped func(name string) bool) int64 {
	var id int64
	for _, g := range groupings {
		id <<= 1
		if grouped != nil && !grouped(g) {
			id |= 1
		}
	}
	return id
}
