package sqlplan

import (
	"encoding/json"
	"fmt"
	"testing"
)

// ORDER BY __time on a scan that does not select __time: the native scan
// reads __time for its order, and the SQL rows leave it out (the native
// scan refuses a time order without __time in its columns).
func TestScanOrderedByUnselectedTime(t *testing.T) {
	for sql, wantOrder := range map[string]string{
		`SELECT page FROM wiki ORDER BY __time LIMIT 2`:      "ascending",
		`SELECT page FROM wiki ORDER BY __time DESC LIMIT 2`: "descending",
	} {
		p, native := plan(t, sql, nil)
		if native["order"] != wantOrder || native["limit"] != float64(2) {
			t.Errorf("%s: native %v", sql, native)
		}
		if cols := fmt.Sprint(native["columns"]); cols != "[page __time]" {
			t.Errorf("%s: columns %s, want [page __time]", sql, cols)
		}
		if len(p.Columns) != 1 || p.Columns[0].Name != "page" {
			t.Errorf("%s: SQL columns %v, want page alone", sql, p.Columns)
		}
		got, err := p.Rows([]byte(`[{"columns":["page","__time"],"events":[["a",1],["b",2]]}]`))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(got); string(b) != `[["a"],["b"]]` {
			t.Errorf("%s: rows %s", sql, b)
		}
	}
}
