package sql

import (
	"strings"
	"testing"
)

func init() {
	fuzzSeeds = append(fuzzSeeds, "SELECT a, GROUPING(a, b) FROM t GROUP BY x, GROUPING SETS ((a, b), a, ()), ROLLUP(c)")
}

func TestGroupingSets(t *testing.T) {
	st, err := Parse("SELECT a, b, GROUPING(a) FROM t GROUP BY GROUPING SETS ( (a, b), a, (), (b + 1) ), c")
	if err != nil {
		t.Fatal(err)
	}
	sel := st.(*Query).Body.(*Select)
	gs, ok := sel.GroupBy[0].(*GroupingSets)
	if !ok || len(gs.Sets) != 4 || len(gs.Sets[0]) != 2 || len(gs.Sets[1]) != 1 || len(gs.Sets[2]) != 0 || len(sel.GroupBy) != 2 {
		t.Fatalf("group by %#v", sel.GroupBy)
	}
	const want = "GROUP BY GROUPING SETS ((a, b), (a), (), (b + 1)), c"
	if f := Format(st); !strings.Contains(f, want) {
		t.Errorf("format %s, want %s", f, want)
	}
	n := 0
	Walk(st, func(x Node) bool {
		if c, ok := x.(*ColumnRef); ok && c.Column().Name == "b" {
			n++
		}
		return true
	})
	if n != 3 {
		t.Errorf("walk saw b %d times, want 3 (select, two sets)", n)
	}
	// GROUPING alone is a column or the function; SETS must be followed by
	// a parenthesized list.
	for _, ok := range []string{"SELECT grouping FROM t GROUP BY grouping", "SELECT GROUPING(a) FROM t GROUP BY a"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"SELECT a FROM t GROUP BY GROUPING SETS", "SELECT a FROM t GROUP BY GROUPING SETS ()",
		"SELECT a FROM t GROUP BY GROUPING SETS ((a), ", "SELECT a FROM t GROUP BY GROUPING SETS (a b)"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}
