package engine

import (
	"slices"

	"strata/querynode/query"
)

// groupingAgg is the grouping aggregator on data servers: it reads nothing
// (its state stays empty); the broker's finalization gives each row the
// value of the subtotal it belongs to (rowSchema.setSubtotal), as Druid's
// does.
type groupingAgg struct{ st *AggState }

func (g *groupingAgg) state() *AggState                                     { return g.st }
func (g *groupingAgg) grow(n int)                                           { g.st.Grow(n) }
func (g *groupingAgg) finish() error                                        { return nil }
func (g *groupingAgg) add(_, _, _ int, _ []int32, _ int32, _ []int32) error { return nil }

// setSubtotal fixes the value of the schema's grouping aggregators for the
// rows of the subtotal grouping by the dimensions (output names) of
// subset; a nil subset is a query without subtotals, every dimension
// grouped. A grouping names a dimension by its output name or by the
// column it reads.
func (s *rowSchema) setSubtotal(subset []string) {
	s.fixed = nil
	for k, a := range s.aggs {
		b := a.Base()
		if b.Type != "grouping" {
			continue
		}
		var grouped func(string) bool
		if subset != nil {
			grouped = func(name string) bool {
				for _, d := range s.dims {
					if slices.Contains(subset, d.OutputName) && (d.OutputName == name || d.Dimension == name) {
						return true
					}
				}
				return false
			}
		}
		if s.fixed == nil {
			s.fixed = map[int]Value{}
		}
		s.fixed[k] = Long(query.GroupingID(b.Groupings, grouped))
	}
}

// limitRows applies a groupBy's limitSpec to rows already computed (the
// concatenated subtotals): a stable sort by its columns, if any, then its
// offset and limit.
func limitRows(q *query.Query, s *rowSchema, rows []*resultRow) []*resultRow {
	ls := q.GroupBy.LimitSpec
	if ls == nil {
		return rows
	}
	if len(ls.Columns) > 0 {
		cmp := groupByOrder(q, s, func(i int) int64 { return rows[i].time },
			func(name string) func(int) Value { return func(i int) Value { return s.get(rows[i], name) } })
		idx := make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, cmp)
		sorted := make([]*resultRow, len(rows))
		for k, i := range idx {
			sorted[k] = rows[i]
		}
		rows = sorted
	}
	lo := min(int64(len(rows)), ls.Offset)
	hi := int64(len(rows))
	if ls.Limit < hi-lo { // Unlimited is the largest int64
		hi = lo + ls.Limit
	}
	return rows[lo:hi]
}
