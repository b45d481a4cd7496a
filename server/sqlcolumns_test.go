package server

import "testing"

// SELECT * and INFORMATION_SCHEMA.COLUMNS list a table's columns in Druid's
// order: __time, the dimensions as ingested, then the metrics by name (the
// wiki segments have dimension page and metrics count, added).
func TestSQLColumnOrder(t *testing.T) {
	b := sqlCluster(t, nil)
	for q, want := range map[string]string{
		`SELECT * FROM wiki ORDER BY __time LIMIT 1`: `[["__time","page","added","count"],["2024-01-01T01:00:00.000Z","a",1,1]]`,
		`SELECT COLUMN_NAME, ORDINAL_POSITION FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'wiki'`: `[["COLUMN_NAME","ORDINAL_POSITION"],` +
			`["__time",1],["page",2],["added",3],["count",4]]`,
	} {
		code, body, _ := sqlCall(t, b, `{"query":"`+q+`","resultFormat":"array","header":true}`)
		if code != 200 || body != want {
			t.Errorf("%s:\n got %d %s\nwant 200 %s", q, code, body, want)
		}
	}
}
