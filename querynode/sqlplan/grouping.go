package sqlplan

import (
	"strings"

	"strata/sql"
)

func init() {
	aggBuilders["GROUPING"] = groupingAgg
}

// groupingSets adds the keys of GROUP BY GROUPING SETS (...) and returns
// its sets as key names: each becomes one subtotal of the native
// subtotalsSpec (with the GROUP BY's plain keys), in the order written.
func (a *aggPlan) groupingSets(gs *sql.GroupingSets, exprs []sql.Expr, names []string) ([][]string, error) {
	if len(gs.Sets) > 64 {
		return nil, unsupported("%s", sql.AtPos(gs, "At most 64 grouping sets are supported"))
	}
	sets := make([][]string, 0, len(gs.Sets))
	for _, set := range gs.Sets {
		if len(set) == 1 {
			if f := rollupOrCube(set[0]); f != nil {
				// A ROLLUP or CUBE element stands for the sets it
				// expands to, as Calcite expands it.
				if len(f.Args) == 0 || len(f.Args) > 8 {
					return nil, unsupported("%s", sql.AtPos(f, "ROLLUP or CUBE inside GROUPING SETS takes 1 to 8 keys"))
				}
				var keys []string
				for _, arg := range f.Args {
					name, err := a.groupKey(arg, exprs, names)
					if err != nil {
						return nil, err
					}
					keys = append(keys, name)
				}
				sets = append(sets, subtotalSets(strings.ToUpper(f.Name.Name), nil, keys)...)
				continue
			}
		}
		keys := []string{}
		for _, e := range set {
			if f := rollupOrCube(e); f != nil {
				return nil, unsupported("%s", sql.AtPos(f, "ROLLUP and CUBE inside a parenthesized grouping set are not supported"))
			}
			name, err := a.groupKey(e, exprs, names)
			if err != nil {
				return nil, err
			}
			keys = append(keys, name)
		}
		sets = append(sets, keys)
	}
	if len(sets) > 64 {
		return nil, unsupported("%s", sql.AtPos(gs, "At most 64 grouping sets are supported"))
	}
	return sets, nil
}

// rollupOrCube is e when it is ROLLUP(...) or CUBE(...), else nil.
func rollupOrCube(e sql.Expr) *sql.FuncCall {
	if f, ok := e.(*sql.FuncCall); ok && !f.Name.Quoted && (strings.EqualFold(f.Name.Name, "ROLLUP") || strings.EqualFold(f.Name.Name, "CUBE")) {
		return f
	}
	return nil
}

// withPlainKeys puts the plain GROUP BY keys in front of every set. The
// empty set alone with no other key (GROUP BY ()) groups the whole table
// as one group, as no GROUP BY does: nil, no subtotals, so it plans as a
// timeseries (or timeBoundary) like an aggregate without GROUP BY.
func withPlainKeys(plain []string, sets [][]string) [][]string {
	if len(plain) == 0 && len(sets) == 1 && len(sets[0]) == 0 {
		return nil
	}
	out := make([][]string, len(sets))
	for i, s := range sets {
		out[i] = append(append([]string{}, plain...), s...)
	}
	return out
}

// groupingAgg plans GROUPING(key, ...) onto Druid's grouping aggregator
// over the keys' output names: in each subtotal's rows, a bit per argument
// (the first highest), 1 when that subtotal does not group by it.
func groupingAgg(a *aggPlan, c *sql.FuncCall, name string) error {
	if len(c.Args) == 0 || len(c.Args) > 63 {
		return invalid("%s", sql.AtPos(c, "Invalid number of arguments to function 'GROUPING'"))
	}
	if c.Filter != nil {
		return invalid("%s", sql.AtPos(c, "FILTER is not allowed on GROUPING"))
	}
	exprs, names, err := a.items()
	if err != nil {
		return err
	}
	var groupings []string
	for _, arg := range c.Args {
		arg = resolveAlias(arg, exprs, names)
		if n, ok := arg.(*sql.NumberLit); ok {
			i, err := n.Int64()
			if err != nil || i < 1 || int(i) > len(exprs) {
				return invalid("%s", sql.AtPos(n, "Ordinal out of range"))
			}
			arg = exprs[i-1]
		}
		k, ok := a.post[arg.String()]
		if !ok || !a.isKey(k.native) {
			return invalid("%s", sql.AtPos(arg, "Argument to GROUPING operator must be a grouped expression"))
		}
		for _, g := range groupings {
			if g == k.native {
				return invalid("%s", sql.AtPos(arg, "GROUPING names the key "+arg.String()+" twice"))
			}
		}
		groupings = append(groupings, k.native)
	}
	a.aggs = append(a.aggs, map[string]any{"type": "grouping", "name": name, "groupings": groupings})
	a.post[c.String()] = scopeCol{name: c.String(), native: name, typ: tBigint}
	return nil
}

// isKey reports whether native is the output name of a GROUP BY key.
func (a *aggPlan) isKey(native string) bool {
	for _, k := range a.keys {
		if k.native == native {
			return true
		}
	}
	return false
}
