package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"strata/auth"
	"strata/internal/eventually"
)

// sqlCluster is a broker and a historical serving "wiki": two days, five
// rows (page, added; count and added are metrics).
func sqlCluster(t *testing.T, wrap func(http.Handler) http.Handler) *dpBroker {
	t.Helper()
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), wrap)
	h.node.Start()
	f.publish(
		f.segment("wiki", "2024-01-01/2024-01-02", "v1", 0, 1, []dpRow{
			{"2024-01-01T01:00:00Z", "a", 1}, {"2024-01-01T02:00:00Z", "b", 10}, {"2024-01-01T03:00:00Z", "a", 100}}),
		f.segment("wiki", "2024-01-02/2024-01-03", "v1", 0, 1, []dpRow{
			{"2024-01-02T01:00:00Z", "c", 1000}, {"2024-01-02T05:00:00Z", "a", 10000}}),
	)
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 2)
	return b
}

func sqlCall(t *testing.T, b *dpBroker, body string) (int, string, http.Header) {
	t.Helper()
	return call(t, "POST", b.url+"/svc/v2/sql", "application/json", body)
}

func TestSQLResultFormats(t *testing.T) {
	b := sqlCluster(t, nil)
	q := `"query":"SELECT page, SUM(added) AS s, MIN(__time) AS t FROM wiki WHERE page <> 'c' GROUP BY page ORDER BY page"`
	for _, c := range []struct {
		req, ctype, want string
	}{
		{`{` + q + `}`, "application/json",
			`[{"page":"a","s":10101,"t":"2024-01-01T01:00:00.000Z"},{"page":"b","s":10,"t":"2024-01-01T02:00:00.000Z"}]`},
		{`{` + q + `,"resultFormat":"array"}`, "application/json",
			`[["a",10101,"2024-01-01T01:00:00.000Z"],["b",10,"2024-01-01T02:00:00.000Z"]]`},
		{`{` + q + `,"resultFormat":"objectLines"}`, "text/plain",
			"{\"page\":\"a\",\"s\":10101,\"t\":\"2024-01-01T01:00:00.000Z\"}\n{\"page\":\"b\",\"s\":10,\"t\":\"2024-01-01T02:00:00.000Z\"}\n\n"},
		{`{` + q + `,"resultFormat":"arrayLines","header":true}`, "text/plain",
			"[\"page\",\"s\",\"t\"]\n[\"a\",10101,\"2024-01-01T01:00:00.000Z\"]\n[\"b\",10,\"2024-01-01T02:00:00.000Z\"]\n\n"},
		{`{` + q + `,"resultFormat":"csv","header":true,"typesHeader":true,"sqlTypesHeader":true}`, "text/csv",
			"page,s,t\nSTRING,LONG,LONG\nVARCHAR,BIGINT,TIMESTAMP\na,10101,2024-01-01T01:00:00.000Z\nb,10,2024-01-01T02:00:00.000Z\n\n"},
		{`{` + q + `,"resultFormat":"object","header":true,"typesHeader":true,"sqlTypesHeader":true}`, "application/json",
			`[{"page":{"type":"STRING","sqlType":"VARCHAR"},"s":{"type":"LONG","sqlType":"BIGINT"},"t":{"type":"LONG","sqlType":"TIMESTAMP"}},{"page":"a","s":10101,"t":"2024-01-01T01:00:00.000Z"},{"page":"b","s":10,"t":"2024-01-01T02:00:00.000Z"}]`},
		{`{` + q + `,"resultFormat":"array","header":true}`, "application/json",
			`[["page","s","t"],["a",10101,"2024-01-01T01:00:00.000Z"],["b",10,"2024-01-01T02:00:00.000Z"]]`},
	} {
		code, body, hdr := sqlCall(t, b, c.req)
		if code != 200 || body != c.want || hdr.Get("Content-Type") != c.ctype {
			t.Errorf("%s:\n got %d %s %q\nwant 200 %s %q", c.req, code, hdr.Get("Content-Type"), body, c.ctype, c.want)
		}
		if hdr.Get(sqlQueryIDHeader) == "" {
			t.Errorf("%s: no %s", c.req, sqlQueryIDHeader)
		}
		// Clients (Cube's Druid driver) strip the first row only when this says it is a header.
		if want := map[bool]string{true: "yes"}[strings.Contains(c.req, `"header":true`)]; hdr.Get(sqlHeaderIncludedHeader) != want {
			t.Errorf("%s: %s is %q, want %q", c.req, sqlHeaderIncludedHeader, hdr.Get(sqlHeaderIncludedHeader), want)
		}
	}
	// A text/plain body is the SQL; the id given in the context is the one answered.
	code, body, _ := call(t, "POST", b.url+"/svc/v2/sql/", "text/plain", "SELECT COUNT(*) AS n FROM wiki")
	if code != 200 || body != `[{"n":5}]` {
		t.Fatalf("text/plain: %d %s", code, body)
	}
	_, _, hdr := sqlCall(t, b, `{"query":"SELECT 1 + 1 AS x, page FROM wiki LIMIT 1","context":{"sqlQueryId":"my-id"}}`)
	if hdr.Get(sqlQueryIDHeader) != "my-id" {
		t.Fatalf("sqlQueryId: %q", hdr.Get(sqlQueryIDHeader))
	}
}

// Each statement's answer equals the native query's run directly.
func TestSQLAgreesWithNative(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, c := range []struct{ sql, native, want string }{
		{`SELECT COUNT(*) AS n, SUM(added) AS s FROM wiki`,
			`{"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"s","fieldName":"added"}]}`,
			`[[5,11111]]`},
		{`SELECT FLOOR(__time TO DAY) AS d, SUM(added) AS s FROM wiki GROUP BY 1`,
			`{"queryType":"timeseries","dataSource":"wiki","granularity":"day","intervals":["2024/2025"],"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}]}`,
			`[["2024-01-01T00:00:00.000Z",111],["2024-01-02T00:00:00.000Z",11000]]`},
		{`SELECT page, SUM(added) AS s FROM wiki GROUP BY page ORDER BY s DESC LIMIT 2`,
			`{"queryType":"topN","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimension":"page","metric":"s","threshold":2,"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}]}`,
			`[["a",10101],["c",1000]]`},
		{`SELECT page, COUNT(*) AS n FROM wiki WHERE __time >= '2024-01-01' AND __time < '2024-01-02' GROUP BY page HAVING COUNT(*) > 1`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024-01-01/2024-01-02"],"dimensions":["page"],"aggregations":[{"type":"count","name":"n"}],"having":{"type":"greaterThan","aggregation":"n","value":1}}`,
			`[["a",2]]`},
		{`SELECT __time, page, added FROM wiki WHERE added > 50 ORDER BY __time DESC LIMIT 2`,
			`{"queryType":"scan","dataSource":"wiki","intervals":["2024/2025"],"columns":["__time","page","added"],"resultFormat":"compactedList","order":"descending","limit":2,"filter":{"type":"bound","dimension":"added","lower":"50","lowerStrict":true,"ordering":"numeric"}}`,
			`[["2024-01-02T05:00:00.000Z","a",10000],["2024-01-02T01:00:00.000Z","c",1000]]`},
		{`SELECT FLOOR(__time TO DAY) AS d, page, COUNT(*) AS n FROM wiki GROUP BY 1, 2 ORDER BY 1, 2`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"day","intervals":["2024/2025"],"dimensions":["page"],"aggregations":[{"type":"count","name":"n"}]}`,
			`[["2024-01-01T00:00:00.000Z","a",2],["2024-01-01T00:00:00.000Z","b",1],["2024-01-02T00:00:00.000Z","a",1],["2024-01-02T00:00:00.000Z","c",1]]`},
		{`SELECT page, FLOOR(__time TO DAY) AS d, COUNT(*) AS n FROM wiki GROUP BY 1, 2 ORDER BY n DESC, page LIMIT 2`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"day","intervals":["2024/2025"],"dimensions":["page"],"aggregations":[{"type":"count","name":"n"}],"limitSpec":{"type":"default","limit":2,"columns":[{"dimension":"n","direction":"descending","dimensionOrder":"numeric"},"page"]},"context":{"sortByDimsFirst":true}}`,
			`[["a","2024-01-01T00:00:00.000Z",2],["a","2024-01-02T00:00:00.000Z",1]]`},
		{`SELECT page, AVG(added) AS a FROM wiki GROUP BY page ORDER BY a DESC LIMIT 2`,
			`{"queryType":"topN","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimension":"page","metric":"a","threshold":2,"aggregations":[{"type":"longSum","name":"s","fieldName":"added"},{"type":"count","name":"c"}],"postAggregations":[{"type":"arithmetic","name":"a","fn":"quotient","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"fieldAccess","fieldName":"c"}]}]}`,
			`[["a",3367],["c",1000]]`},
		{`WITH big AS (SELECT __time, page, added FROM wiki WHERE added >= 100) SELECT page, COUNT(*) AS n FROM big GROUP BY page`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimensions":["page"],"filter":{"type":"bound","dimension":"added","lower":"100","ordering":"numeric"},"aggregations":[{"type":"count","name":"n"}]}`,
			`[["a",2],["c",1]]`},
		{`SELECT page, COUNT(*) AS n, SUM(added) AS s FROM wiki GROUP BY ROLLUP(page)`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimensions":["page"],"aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"s","fieldName":"added"}],"subtotalsSpec":[["page"],[]]}`,
			`[["a",3,10101],["b",1,10],["c",1,1000],[null,5,11111]]`},
		{`SELECT AVG(added) FILTER (WHERE page = 'a') AS a, COUNT(*) FILTER (WHERE page <> 'a') AS n FROM wiki`,
			`{"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"aggregations":[{"type":"filtered","filter":{"type":"selector","dimension":"page","value":"a"},"aggregator":{"type":"longSum","name":"s","fieldName":"added"}},{"type":"filtered","filter":{"type":"selector","dimension":"page","value":"a"},"aggregator":{"type":"count","name":"c"}},{"type":"filtered","filter":{"type":"not","field":{"type":"selector","dimension":"page","value":"a"}},"aggregator":{"type":"count","name":"n"}}],"postAggregations":[{"type":"arithmetic","name":"a","fn":"quotient","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"fieldAccess","fieldName":"c"}]}]}`,
			`[[3367,2]]`},
		{`SELECT MIN(__time) AS lo, MAX(__time) AS hi FROM wiki`,
			`{"queryType":"timeBoundary","dataSource":"wiki"}`,
			`[["2024-01-01T01:00:00.000Z","2024-01-02T05:00:00.000Z"]]`},
		{`SELECT AVG(added) AS a, COUNT(DISTINCT page) AS d FROM wiki`,
			`{"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"aggregations":[{"type":"longSum","name":"s","fieldName":"added"},{"type":"count","name":"c"},{"type":"cardinality","name":"d","fields":["page"],"round":true}],"postAggregations":[{"type":"arithmetic","name":"a","fn":"quotient","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"fieldAccess","fieldName":"c"}]}]}`,
			`[[2222.2,3]]`},
		{`SELECT c, COUNT(*) AS n FROM (SELECT page AS c, SUM(added) AS s FROM wiki GROUP BY page) WHERE s > 5 GROUP BY c`,
			`{"queryType":"groupBy","dataSource":{"type":"query","query":{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimensions":["page"],"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}]}},"granularity":"all","intervals":["2024/2025"],"dimensions":["page"],"filter":{"type":"bound","dimension":"s","lower":"5","lowerStrict":true,"ordering":"numeric"},"aggregations":[{"type":"count","name":"n"}]}`,
			`[["a",1],["b",1],["c",1]]`},
		{`SELECT UPPER(page) AS p, CASE WHEN added > 100 THEN 'big' ELSE 'small' END AS size, COALESCE(NULLIF(page, 'a'), 'none') AS q FROM wiki WHERE page IN ('a', 'b') AND __time < TIMESTAMP '2024-01-02 00:00:00'`,
			`{"queryType":"scan","dataSource":"wiki","intervals":["2024/2025"],"resultFormat":"compactedList","columns":["__time","page","added"]}`,
			`[["A","small","none"],["B","small","b"],["A","small","none"]]`},
	} {
		code, body, _ := sqlCall(t, b, `{"resultFormat":"array","query":`+strings.TrimSpace(string(mustJSON(c.sql)))+`}`)
		if code != 200 || body != c.want {
			t.Errorf("%s:\n got %d %s\nwant %s", c.sql, code, body, c.want)
		}
		// The native query (written by hand) answers the same numbers.
		ncode, nbody, _ := b.query(t, c.native)
		if ncode != 200 || !sameNumbers(t, nbody, c.want) {
			t.Errorf("native %s: %d %s, want the numbers of %s", c.native, ncode, nbody, c.want)
		}
	}
}

// sameNumbers reports whether every number and string of want appears in the
// native answer (its shape differs from SQL's rows).
func sameNumbers(t *testing.T, native, want string) bool {
	t.Helper()
	var rows [][]any
	if err := json.Unmarshal([]byte(want), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for _, v := range r {
			s := strings.TrimSuffix(string(mustJSON(v)), ".0")
			if str, ok := v.(string); ok && strings.HasSuffix(str, ".000Z") {
				continue // native timestamps are millis or ISO by query type
			}
			if str, ok := v.(string); ok && (str == "big" || str == "small" || str == "none" || str == "A" || str == "B") {
				continue // computed by the SQL expression
			}
			if !strings.Contains(native, s) {
				return false
			}
		}
	}
	return true
}

func TestSQLErrors(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, c := range []struct {
		req      string
		code     int
		category string
		msg      string
	}{
		{`{"query":"SELECT FROM wiki"}`, 400, "INVALID_INPUT", "(line [1], column [8])"},
		{`{"query":"SELECT page\nFROM nowhere"}`, 400, "INVALID_INPUT", "Object 'nowhere' not found (line [2], column [6])"},
		{`{"query":"SELECT nope FROM wiki"}`, 400, "INVALID_INPUT", "Column 'nope' not found in any table (line [1], column [8])"},
		{`{"query":"SELECT a.page FROM wiki a JOIN wiki b ON a.page < b.page"}`, 400, "UNSUPPORTED", "join condition is not supported"},
		{`{"query":"SELECT COUNT(*) FROM (SELECT page FROM wiki ORDER BY page LIMIT 2)"}`, 400, "UNSUPPORTED", "non-time column"},
		{`{"query":"SELECT page FROM wiki","resultFormat":"xml"}`, 400, "INVALID_INPUT", "Unsupported resultFormat"},
		{`{"query":""}`, 400, "INVALID_INPUT", "must not be empty"},
		{`{"query":`, 400, "INVALID_INPUT", "Malformed SQL request"},
		{`{"query":"SELECT page FROM wiki WHERE page = ?","parameters":[]}`, 400, "INVALID_INPUT", "No value bound for parameter"},
		{`{"query":"INSERT INTO x SELECT * FROM wiki PARTITIONED BY DAY"}`, 400, "INVALID_INPUT", "sql/task"},
	} {
		code, body, _ := sqlCall(t, b, c.req)
		var e map[string]any
		json.Unmarshal([]byte(body), &e)
		if code != c.code || e["category"] != c.category || e["persona"] != "USER" || e["error"] != "druidException" ||
			!strings.Contains(body, c.msg) || e["context"] == nil {
			t.Errorf("%s: got %d %s, want %d %s containing %q", c.req, code, body, c.code, c.category, c.msg)
		}
	}
	code, body, _ := call(t, "POST", b.url+"/svc/v2/sql", "application/xml", "<q/>")
	if code != 415 {
		t.Errorf("xml body: %d %s", code, body)
	}
	// Parameters bind "?" values.
	code, body, _ = sqlCall(t, b, `{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page = ? AND added >= ?","parameters":[{"type":"VARCHAR","value":"a"},{"type":"BIGINT","value":100}],"resultFormat":"array"}`)
	if code != 200 || body != `[[2]]` {
		t.Errorf("parameters: %d %s", code, body)
	}
	// Exact COUNT(DISTINCT): a group-by over a group-by.
	for q, want := range map[string]string{
		`SELECT COUNT(DISTINCT page) AS n FROM wiki`:                                                          `[[3]]`,
		`SELECT FLOOR(__time TO DAY) AS d, COUNT(DISTINCT page) AS n FROM wiki WHERE added < 5000 GROUP BY 1`: `[["2024-01-01T00:00:00.000Z",2],["2024-01-02T00:00:00.000Z",1]]`,
	} {
		code, body, _ = sqlCall(t, b, `{"query":`+string(mustJSON(q))+`,"context":{"useApproximateCountDistinct":false},"resultFormat":"array"}`)
		if code != 200 || body != want {
			t.Errorf("%s: %d %s, want %s", q, code, body, want)
		}
	}
	// A top-level UNION ALL runs one native query per branch, rows in order.
	code, body, _ = sqlCall(t, b, `{"query":"SELECT 'x' AS k, COUNT(*) AS n FROM wiki UNION ALL SELECT page, SUM(added) FROM wiki WHERE page = 'b' GROUP BY page UNION ALL (SELECT 'z', 1)","resultFormat":"array"}`)
	if code != 200 || body != `[["x",5],["b",10],["z",1]]` {
		t.Errorf("UNION ALL: %d %s", code, body)
	}
	code, body, _ = sqlCall(t, b, `{"query":"EXPLAIN PLAN FOR SELECT page FROM wiki UNION ALL SELECT page FROM wiki","resultFormat":"array"}`)
	if code != 200 || strings.Count(body, `queryType\":\"scan`) != 2 {
		t.Errorf("EXPLAIN of UNION ALL: %d %s", code, body)
	}
	// IN (subquery) runs the subquery first and filters on its values.
	for q, want := range map[string]string{
		`SELECT page, COUNT(*) AS n FROM wiki WHERE page IN (SELECT page FROM wiki WHERE added >= 1000) GROUP BY page`: `[["a",3],["c",1]]`,
		`SELECT COUNT(*) AS n FROM wiki WHERE page NOT IN (SELECT page FROM wiki GROUP BY page HAVING COUNT(*) > 1)`:   `[[2]]`,
		`SELECT COUNT(*) AS n FROM wiki WHERE added IN (SELECT MAX(added) FROM wiki)`:                                  `[[1]]`,
		`SELECT page, added FROM wiki WHERE added = (SELECT MAX(added) FROM wiki)`:                                     `[["a",10000]]`,
		`SELECT COUNT(*) AS n FROM wiki WHERE added > (SELECT AVG(added) FROM wiki WHERE page = 'none')`:               `[[0]]`,
		`SELECT COUNT(*) AS n FROM wiki WHERE page IN (SELECT page FROM wiki WHERE page = 'none')`:                     `[[0]]`,
	} {
		code, body, _ = sqlCall(t, b, `{"query":`+string(mustJSON(q))+`,"resultFormat":"array"}`)
		if code != 200 || body != want {
			t.Errorf("%s: %d %s, want %s", q, code, body, want)
		}
	}
	// A correlated subquery is refused, never answered as if uncorrelated.
	code, body, _ = sqlCall(t, b, `{"query":"SELECT page FROM wiki w WHERE added = (SELECT MAX(added) FROM wiki w2 WHERE w2.page = w.page)"}`)
	if code != 400 || !strings.Contains(body, "correlated subqueries are not supported") {
		t.Errorf("correlated subquery: %d %s", code, body)
	}
	code, body, _ = sqlCall(t, b, `{"query":"SELECT COUNT(*) FROM wiki WHERE page IN (SELECT page FROM wiki)","context":{"maxSubqueryRows":2}}`)
	if code != 400 || !strings.Contains(body, "maxSubqueryRows") {
		t.Errorf("IN (subquery) over maxSubqueryRows: %d %s", code, body)
	}
	// SELECT without FROM (clients' connection checks) reads one inline row.
	for q, want := range map[string]string{
		`SELECT 1`:                             `[{"EXPR$0":1}]`,
		`SELECT 1 + 1 AS two, UPPER('x') AS x`: `[{"two":2,"x":"X"}]`,
		`SELECT COUNT(*) AS n`:                 `[{"n":1}]`,
	} {
		if code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`); code != 200 || body != want {
			t.Errorf("%s: %d %s, want %s", q, code, body, want)
		}
	}
	// SET statements set context keys: a 1 ms timeout over a slow historical is 504 (see TestSQLTimeoutAndCancel).
	code, body, _ = sqlCall(t, b, `{"query":"SET sqlTimeZone = 'America/New_York'; SELECT FLOOR(__time TO DAY) AS d, COUNT(*) AS n FROM wiki GROUP BY 1","resultFormat":"array"}`)
	if code != 200 || body != `[["2023-12-31T00:00:00.000-05:00",3],["2024-01-01T00:00:00.000-05:00",1],["2024-01-02T00:00:00.000-05:00",1]]` {
		t.Errorf("SET sqlTimeZone: %d %s", code, body)
	}
}

func TestSQLTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	var holding atomic.Bool
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	hold := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "POST" && holding.Load() {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	b := sqlCluster(t, hold)
	// The catalog's column types are cached once the historical answers;
	// from then on the historical holds every query.
	if code, body, _ := sqlCall(t, b, `{"query":"SELECT COUNT(*) FROM wiki"}`); code != 200 {
		t.Fatalf("warm-up: %d %s", code, body)
	}
	holding.Store(true)
	if code, _, _ := call(t, "DELETE", b.url+"/svc/v2/sql/unknown-id", "", ""); code != 404 {
		t.Fatalf("DELETE of an unknown id: %d, want 404", code)
	}
	code, body, _ := sqlCall(t, b, `{"query":"SELECT COUNT(*) FROM wiki","context":{"timeout":50}}`)
	if code != 504 || !strings.Contains(body, "timeout") {
		t.Fatalf("timeout: %d %s, want 504", code, body)
	}
	type answer struct {
		code int
		body string
	}
	done := make(chan answer, 1)
	go func() {
		code, body, _ := call(t, "POST", b.url+"/svc/v2/sql", "application/json", `{"query":"SELECT COUNT(*) FROM wiki","context":{"sqlQueryId":"to-cancel"}}`)
		done <- answer{code, body}
	}()
	eventually.True(t, "the running SQL query to be cancelled", func() bool {
		code, _, _ := call(t, "DELETE", b.url+"/svc/v2/sql/to-cancel", "", "")
		return code == 202
	})
	a := <-done
	if a.code == 200 || !strings.Contains(strings.ToLower(a.body), "cancel") {
		t.Fatalf("cancelled query answered %d %s", a.code, a.body)
	}
	once.Do(func() { close(release) })
}

func TestSQLExplain(t *testing.T) {
	b := sqlCluster(t, nil)
	code, body, _ := sqlCall(t, b, `{"query":"EXPLAIN PLAN FOR SELECT page, COUNT(*) AS n FROM wiki GROUP BY page","resultFormat":"object"}`)
	var rows []map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || len(rows) != 1 {
		t.Fatalf("EXPLAIN: %d %s", code, body)
	}
	var plan []struct {
		Query     map[string]any      `json:"query"`
		Signature []map[string]string `json:"signature"`
	}
	if err := json.Unmarshal([]byte(rows[0]["PLAN"]), &plan); err != nil || len(plan) != 1 || plan[0].Query["queryType"] != "groupBy" {
		t.Fatalf("PLAN: %v %s", err, rows[0]["PLAN"])
	}
	if rows[0]["RESOURCES"] != `[{"name":"wiki","type":"DATASOURCE"}]` || rows[0]["ATTRIBUTES"] != `{"statementType":"SELECT"}` {
		t.Fatalf("RESOURCES/ATTRIBUTES: %v", rows[0])
	}
	// The plan's native query runs as is.
	q, _ := json.Marshal(plan[0].Query)
	if code, body, _ := b.query(t, string(q)); code != 200 || !strings.Contains(body, `"d0":"a"`) {
		t.Fatalf("running the plan: %d %s", code, body)
	}
}

// denyAll allows nothing.
type denyAll struct{}

func (denyAll) Authorize(*auth.Identity, auth.Resource, auth.Action) bool { return false }

// EXPLAIN runs no native query, and the catalog may answer a datasource's
// columns from its cache: the catalog itself checks DATASOURCE READ.
func TestSQLChecksDatasourceReadBeforePlanning(t *testing.T) {
	b := sqlCluster(t, nil)
	if code, body, _ := sqlCall(t, b, `{"query":"SELECT COUNT(*) FROM wiki"}`); code != 200 { // caches wiki's columns
		t.Fatalf("warm-up: %d %s", code, body)
	}
	s, err := New(Options{Roles: []string{RoleBroker}, Broker: b.b})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"EXPLAIN PLAN FOR SELECT page FROM wiki", "SELECT page FROM wiki"} {
		req := httptest.NewRequest("POST", "/svc/v2/sql", strings.NewReader(`{"query":`+string(mustJSON(q))+`}`))
		req.Header.Set("Content-Type", "application/json")
		ctx := auth.WithIdentity(auth.WithAuthorizer(req.Context(), denyAll{}), &auth.Identity{Name: "mallory"})
		rec := httptest.NewRecorder()
		s.sqlQuery(rec, req.WithContext(ctx))
		if rec.Code != 403 || !strings.Contains(rec.Body.String(), `"resource":"DATASOURCE:wiki"`) {
			t.Errorf("%s as a user without READ on wiki: %d %s", q, rec.Code, rec.Body.String())
		}
	}
}
