package server

import "testing"

// ORDER BY a column other than __time on a query that does not aggregate:
// the broker sorts the scan's rows (then OFFSET and LIMIT), up to
// maxRowsQueuedForOrdering rows; more is a 400, not a partial answer.
func TestSQLScanOrderedByAnyColumn(t *testing.T) {
	b := sqlCluster(t, nil)
	for q, want := range map[string]string{
		`SELECT page, added FROM wiki ORDER BY added DESC LIMIT 2`: `[["a",10000],["c",1000]]`,
		`SELECT __time, page FROM wiki ORDER BY page, __time DESC LIMIT 3 OFFSET 1`: `[["2024-01-01T03:00:00.000Z","a"],` +
			`["2024-01-01T01:00:00.000Z","a"],["2024-01-01T02:00:00.000Z","b"]]`,
		`SELECT page FROM wiki ORDER BY added LIMIT 2`:                  `[["a"],["b"]]`,
		`SELECT page, added * -1 AS neg FROM wiki ORDER BY neg LIMIT 1`: `[["a",-10000]]`,
		`SELECT page FROM wiki WHERE page <> 'a' ORDER BY 1 DESC`:       `[["c"],["b"]]`,
	} {
		code, body, _ := sqlCall(t, b, `{"query":"`+q+`","resultFormat":"array"}`)
		if code != 200 || body != want {
			t.Errorf("%s:\n got %d %s\nwant 200 %s", q, code, body, want)
		}
	}
	code, body, _ := sqlCall(t, b, `{"query":"SELECT page FROM wiki ORDER BY page LIMIT 1","context":{"maxRowsQueuedForOrdering":4}}`)
	if e := errorBody(t, body); code != 400 || e["category"] != "CAPACITY_EXCEEDED" {
		t.Errorf("five rows to sort with room for four: %d %s, want 400 CAPACITY_EXCEEDED", code, body)
	}
	if code, body, _ := sqlCall(t, b, `{"query":"SELECT page FROM wiki ORDER BY page LIMIT 1","context":{"maxRowsQueuedForOrdering":5}}`); code != 200 || body != `[{"page":"a"}]` {
		t.Errorf("five rows with room for five: %d %s", code, body)
	}
}
