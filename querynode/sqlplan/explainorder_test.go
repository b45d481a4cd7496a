package sqlplan

import (
	"encoding/json"
	"testing"
)

// EXPLAIN of a scan the broker sorts says so as Druid's plan does: the scan
// with orderBy (every key, in order) and the statement's own LIMIT and
// OFFSET, not the scan's internal row cap of maxRowsQueuedForOrdering+1.
func TestExplainBrokerSortedScan(t *testing.T) {
	p, _ := plan(t, `EXPLAIN PLAN FOR SELECT page FROM wiki ORDER BY added DESC, page LIMIT 2 OFFSET 1`, nil)
	row, err := p.ExplainRow()
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Query map[string]any `json:"query"`
	}
	if err := json.Unmarshal([]byte(row[0].(string)), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("PLAN %v: %v", row[0], err)
	}
	q := entries[0].Query
	order, _ := json.Marshal(q["orderBy"])
	if string(order) != `[{"columnName":"added","order":"descending"},{"columnName":"page","order":"ascending"}]` {
		t.Errorf("orderBy %s", order)
	}
	if q["limit"] != float64(2) || q["offset"] != float64(1) {
		t.Errorf("limit %v offset %v, want 2 and 1", q["limit"], q["offset"])
	}
	// The time order stays the scan's own.
	p, _ = plan(t, `EXPLAIN PLAN FOR SELECT page FROM wiki ORDER BY __time DESC LIMIT 2`, nil)
	if row, err = p.ExplainRow(); err != nil {
		t.Fatal(err)
	}
	var timed []struct {
		Query map[string]any `json:"query"`
	}
	if err := json.Unmarshal([]byte(row[0].(string)), &timed); err != nil || timed[0].Query["order"] != "descending" || timed[0].Query["orderBy"] != nil {
		t.Errorf("time-ordered PLAN %v", row[0])
	}
}
