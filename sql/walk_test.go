package sql

import (
	"reflect"
	"testing"
)

func TestWalk(t *testing.T) {
	st := mustParse(t, `INSERT INTO t
		WITH s AS (SELECT * FROM TABLE(EXTERN('a', 'b')) EXTEND (x VARCHAR, n BIGINT))
		SELECT TIME_PARSE(x) AS __time, CASE WHEN n > 0 THEN n END AS pos, COUNT(*) FILTER (WHERE n IN (1, 2))
		FROM s JOIN u ON s.x = u.x
		WHERE x LIKE 'a%'
		GROUP BY 1, 2
		PARTITIONED BY DAY CLUSTERED BY x`)
	var cols []string
	var funcs []string
	kinds := map[string]int{}
	Walk(st, func(n Node) bool {
		kinds[reflect.TypeOf(n).Elem().Name()]++
		switch x := n.(type) {
		case *ColumnRef:
			cols = append(cols, Format(x))
		case *FuncCall:
			funcs = append(funcs, x.Name.Name)
		}
		return true
	})
	wantCols := []string{"x", "n", "n", "n", "s.x", "u.x", "x", "x"}
	if !reflect.DeepEqual(cols, wantCols) {
		t.Errorf("columns in order: %v, want %v", cols, wantCols)
	}
	if !reflect.DeepEqual(funcs, []string{"EXTERN", "TIME_PARSE", "COUNT"}) {
		t.Errorf("functions: %v", funcs)
	}
	for kind, n := range map[string]int{"Insert": 1, "Query": 2, "CTE": 1, "Select": 2, "TableFunc": 1,
		"ColumnDef": 2, "DataType": 2, "Join": 1, "TableRef": 2, "When": 1, "InExpr": 1, "Granularity": 1,
		"StarExpr": 2, "SelectItem": 4, "NumberLit": 5, "StringLit": 3} {
		if kinds[kind] != n {
			t.Errorf("%s visited %d times, want %d", kind, kinds[kind], n)
		}
	}

	// Returning false prunes the subtree.
	var seen int
	Walk(st, func(n Node) bool {
		seen++
		_, isQuery := n.(*Query)
		return !isQuery
	})
	if seen != 4 { // the Insert, its (pruned) source query, the granularity and the CLUSTERED BY column
		t.Errorf("pruned walk visited %d nodes", seen)
	}
	Walk(nil, func(Node) bool { t.Fatal("called on nil"); return true })
}
