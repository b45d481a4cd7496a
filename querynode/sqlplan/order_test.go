package sqlplan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A non-aggregating query ordered by a column other than __time is a scan
// that reads the ordering column too, limited to maxRowsQueuedForOrdering+1
// rows and no offset; Rows sorts (NULL first ascending, last descending),
// then applies OFFSET and LIMIT, and drops the ordering column.
func TestScanOrderedOnTheBroker(t *testing.T) {
	p, native := plan(t, `SELECT page FROM wiki ORDER BY added DESC, page LIMIT 2 OFFSET 1`, map[string]any{"maxRowsQueuedForOrdering": 10})
	if native["queryType"] != "scan" || native["offset"] != nil || native["limit"] != float64(11) || native["order"] != nil {
		t.Fatalf("native %v", native)
	}
	if cols := fmt.Sprint(native["columns"]); cols != "[page added]" {
		t.Fatalf("columns %s, want [page added]", cols)
	}
	answer := func(rows ...string) []byte {
		return []byte(`[{"segmentId":"s","columns":["page","added"],"events":[` + strings.Join(rows, ",") + `]}]`)
	}
	got, err := p.Rows(answer(`["a",1]`, `["b",null]`, `["c",7]`, `["d",7]`, `["e",3]`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got); string(b) != `[["d"],["e"]]` {
		t.Errorf("rows %s, want [[\"d\"],[\"e\"]] (c, d at 7, e at 3, a at 1, NULL last)", b)
	}
	// NULL sorts first ascending unless NULLS LAST says otherwise.
	for sql, want := range map[string]string{
		`SELECT page FROM wiki ORDER BY added`:            `[["b"],["a"],["c"]]`,
		`SELECT page FROM wiki ORDER BY added NULLS LAST`: `[["a"],["c"],["b"]]`,
		`SELECT page FROM wiki ORDER BY 1 DESC`:           `[["c"],["b"],["a"]]`,
	} {
		p, _ := plan(t, sql, nil)
		got, err := p.Rows(answer(`["a",1]`, `["b",null]`, `["c",7]`))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(got); string(b) != want {
			t.Errorf("%s: rows %s, want %s", sql, b, want)
		}
	}
	// More rows than it may sort: a client error, not a partial answer.
	_, err = p.Rows(answer(strings.Split(strings.Repeat(`["x",1];`, 11), ";")[:11]...))
	if pe, ok := err.(*Error); !ok || pe.Category != CategoryCapacityExceeded {
		t.Errorf("11 rows with room for 10: %v, want a %s error", err, CategoryCapacityExceeded)
	}
}

// The broker sort compares scalars: ordering by an array or by a
// multi-value string (a list in a row) is refused, never sorted by its text.
func TestScanOrderRefusesLists(t *testing.T) {
	_, err := Plan(context.Background(), `SELECT page FROM wiki ORDER BY ARRAY[added]`, Request{}, testCatalog{})
	if pe, ok := err.(*Error); !ok || pe.Category != CategoryUnsupported {
		t.Errorf("ORDER BY an array: %v, want unsupported", err)
	}
	p, _ := plan(t, `SELECT page FROM wiki ORDER BY channel`, nil)
	_, err = p.Rows([]byte(`[{"columns":["page","channel"],"events":[["a","x"],["b",["y","z"]]]}]`))
	if pe, ok := err.(*Error); !ok || pe.Category != CategoryUnsupported {
		t.Errorf("ORDER BY a multi-value string: %v, want unsupported", err)
	}
}
