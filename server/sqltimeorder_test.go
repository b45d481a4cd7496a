package server

import "testing"

// ORDER BY __time without selecting __time: the scan reads __time for its
// order and the SQL answer leaves it out, as Druid's does (it was a 400:
// "ordering by time requires [__time] in columns").
func TestSQLScanOrderedByUnselectedTime(t *testing.T) {
	b := sqlCluster(t, nil)
	for q, want := range map[string]string{
		`SELECT page FROM wiki ORDER BY __time LIMIT 3`:                      `[["a"],["b"],["a"]]`,
		`SELECT page, added FROM wiki ORDER BY __time DESC LIMIT 2`:          `[["a",10000],["c",1000]]`,
		`SELECT page FROM wiki WHERE added > 5 ORDER BY __time DESC LIMIT 2`: `[["a"],["c"]]`,
	} {
		code, body, _ := sqlCall(t, b, `{"query":"`+q+`","resultFormat":"array"}`)
		if code != 200 || body != want {
			t.Errorf("%s:\n got %d %s\nwant 200 %s", q, code, body, want)
		}
	}
}
