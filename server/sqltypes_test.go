package server

import (
	"encoding/json"
	"fmt"
	"testing"
)

// sqlTypesHeader names a column's type as Druid's header does, by Calcite's
// type name alone: ARRAY for every array (not "VARCHAR ARRAY"), OTHER for a
// complex value such as a sketch (Druid's SqlResourceTest expects OTHER for
// a hyperUnique column); typesHeader keeps the native types.
func TestSQLTypesHeaderNames(t *testing.T) {
	b := sqlCluster(t, nil)
	code, body, _ := sqlCall(t, b, `{"resultFormat":"array","header":true,"typesHeader":true,"sqlTypesHeader":true,
		"query":"SELECT ARRAY_AGG(page) AS pages, ARRAY_AGG(__time) AS times, DS_HLL(page) AS h, COUNT(*) AS n FROM wiki WHERE page = 'zzz'"}`)
	var rows [][]any
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || len(rows) != 4 {
		t.Fatalf("got %d %s", code, body)
	}
	if got := fmt.Sprint(rows[1]); got != "[ARRAY<STRING> ARRAY<LONG> COMPLEX<HLLSketch> LONG]" {
		t.Errorf("typesHeader %s", got)
	}
	if got := fmt.Sprint(rows[2]); got != "[ARRAY ARRAY OTHER BIGINT]" {
		t.Errorf("sqlTypesHeader %s, want [ARRAY ARRAY OTHER BIGINT]", got)
	}
}
