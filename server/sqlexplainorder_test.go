package server

import (
	"encoding/json"
	"testing"
)

// EXPLAIN of a query the broker sorts shows the scan with its orderBy and
// the statement's LIMIT (it showed an unordered scan limited to
// maxRowsQueuedForOrdering+1 rows). The native scan orders by __time only,
// so that plan posted as a native query is Druid's 501 unsupported, never
// rows in another order.
func TestSQLExplainBrokerSort(t *testing.T) {
	b := sqlCluster(t, nil)
	code, body, _ := sqlCall(t, b, `{"query":"EXPLAIN PLAN FOR SELECT page FROM wiki ORDER BY added DESC LIMIT 2"}`)
	var rows []map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || len(rows) != 1 {
		t.Fatalf("EXPLAIN: %d %s", code, body)
	}
	var plan []struct {
		Query map[string]any `json:"query"`
	}
	if err := json.Unmarshal([]byte(rows[0]["PLAN"]), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("PLAN: %v %s", err, rows[0]["PLAN"])
	}
	q := plan[0].Query
	order, _ := json.Marshal(q["orderBy"])
	if q["queryType"] != "scan" || string(order) != `[{"columnName":"added","order":"descending"}]` || q["limit"] != float64(2) {
		t.Errorf("PLAN query %v", q)
	}
	native, _ := json.Marshal(q)
	if code, body, _ := b.query(t, string(native)); code != 501 {
		t.Errorf("the plan run as a native query: %d %s, want 501 unsupported", code, body)
	}
}
