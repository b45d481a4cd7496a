package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
	"strata/protocol"
	"strata/querynode/broker"
	"strata/segmeta"
)

var wikiDays = []string{"2013-08-31", "2013-09-01", "2013-09-02", "2013-09-03"}

// publishWiki publishes four day segments of "wiki" (added sums 10, 50, 90, 130).
func publishWiki(f *dpFixture, ds string) []*segmeta.DataSegment {
	var segs []*segmeta.DataSegment
	for i, d := range wikiDays {
		end := "2013-09-0" + string(rune('1'+i))
		segs = append(segs, f.segment(ds, d+"/"+end, "v1", 0, 1, wikiRows(d, int64(10*i))))
	}
	f.publish(segs...)
	return segs
}

// waitReplicas waits until every visible segment of ds has n locations.
func (b *dpBroker) waitReplicas(t *testing.T, ds string, segs, n int) {
	t.Helper()
	eventually.True(t, "replicas", func() bool {
		c := b.b.Candidates([]string{ds}, []interval.Interval{interval.Eternity}, -1)
		if len(c) != segs {
			return false
		}
		for _, r := range c {
			if len(r.Locations) != n {
				return false
			}
		}
		return true
	})
}

// subQueryCounter counts the sub-queries a historical receives.
func subQueryCounter(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == protocol.QueryPath {
				n.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// finalCounter counts the sub-query responses a historical finalized.
func finalCounter(n *atomic.Int64, next func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		h = next(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			if w.Header().Get(protocol.FinalHeader) == "true" {
				n.Add(1)
			}
		})
	}
}

var mergeQueries = []string{
	`{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"granularity":"day",
	  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"rows"}]}`,
	`{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-08-31T02:00/2013-09-03T02:00"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"longMax","name":"top","fieldName":"added"}]}`,
	`{"queryType":"groupBy","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"granularity":"all","dimensions":["page"],
	  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],
	  "limitSpec":{"type":"default","limit":2,"columns":[{"dimension":"added","direction":"descending"}]}}`,
	`{"queryType":"topN","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"granularity":"all","dimension":"page",
	  "metric":"added","threshold":2,"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`,
	`{"queryType":"timeBoundary","dataSource":"wiki"}`,
	`{"queryType":"search","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"granularity":"all",
	  "query":{"type":"insensitive_contains","value":"an"}}`,
	`{"queryType":"scan","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"columns":["__time","page","added"],"limit":5,"order":"ascending"}`,
	`{"queryType":"groupBy","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"granularity":"day","dimensions":["page"],
	  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"rows"},
	                  {"type":"cardinality","name":"u","fields":["page"]}],
	  "postAggregations":[{"type":"arithmetic","name":"avg","fn":"/","fields":[{"type":"fieldAccess","fieldName":"added"},{"type":"fieldAccess","fieldName":"rows"}]}],
	  "having":{"type":"greaterThan","aggregation":"added","value":5}}`,
	`{"queryType":"segmentMetadata","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"merge":true}`,
	`{"queryType":"dataSourceMetadata","dataSource":"wiki"}`,
}

func TestBrokerMergesAcrossHistoricalsAsOnOne(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	var n1, n2, finals atomic.Int64
	h1 := f.startHistorical(t.TempDir(), finalCounter(&finals, subQueryCounter(&n1)))
	h2 := f.startHistorical(t.TempDir(), subQueryCounter(&n2))
	h1.node.Start()
	h2.node.Start()
	both := startBroker(t, []string{h1.url, h2.url}, nil)
	one := startBroker(t, []string{h1.url}, nil)
	if code, body, _ := call(t, "GET", both.url+"/svc/broker/v1/loadstatus", "", ""); code != 200 || body != `{"inventoryInitialized":false}` {
		t.Fatalf("loadstatus before start: %d %s", code, body)
	}
	if code, _, _ := call(t, "GET", both.url+"/svc/broker/v1/readiness", "", ""); code != 503 {
		t.Fatalf("readiness before start: %d", code)
	}
	both.b.Start()
	one.b.Start()
	both.waitReplicas(t, "wiki", 4, 2)
	one.waitReplicas(t, "wiki", 4, 1)
	if code, body, _ := call(t, "GET", both.url+"/svc/broker/v1/loadstatus", "", ""); code != 200 || body != `{"inventoryInitialized":true}` {
		t.Fatalf("loadstatus: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", both.url+"/svc/broker/v1/readiness", "", ""); code != 200 || body != "" {
		t.Fatalf("readiness: %d %q", code, body)
	}
	for _, q := range mergeQueries {
		n1.Store(0)
		n2.Store(0)
		code, got, hdr := both.query(t, q)
		if code != 200 {
			t.Fatalf("%s: %d %s", q, code, got)
		}
		if n1.Load() != 1 || n2.Load() != 1 {
			t.Errorf("sub-queries per historical: %d and %d, want one each", n1.Load(), n2.Load())
		}
		if id := hdr.Get("X-Druid-Query-Id"); len(id) != 36 {
			t.Errorf("query id header %q is not a UUID", id)
		}
		if finals.Load() != 0 {
			t.Errorf("a historical finalized a query whose segments two servers share")
		}
		// One historical holds everything: it finalizes, and the result
		// must be byte for byte the broker's merge of partials.
		code, want, _ := one.query(t, q)
		if code != 200 || got != want {
			t.Errorf("query %s\n two historicals: %s\n one historical:  %s", q, got, want)
		}
		if finals.Load() != 1 {
			t.Errorf("query %s: the only historical did not finalize (%d)", q, finals.Load())
		}
		finals.Store(0)
	}
	// Values, independently of the comparison.
	_, body, _ := both.query(t, mergeQueries[0])
	var ts []struct {
		Timestamp string
		Result    map[string]int64
	}
	if err := json.Unmarshal([]byte(body), &ts); err != nil || len(ts) != 4 {
		t.Fatalf("timeseries: %v %s", err, body)
	}
	for i, want := range []int64{10, 50, 90, 130} {
		if ts[i].Result["added"] != want || ts[i].Result["rows"] != 4 || ts[i].Timestamp != wikiDays[i]+"T00:00:00.000Z" {
			t.Errorf("day %d: %+v", i, ts[i])
		}
	}
	// The query id of the context is echoed, and ?pretty indents as Jackson does.
	code, body, hdr := call(t, "POST", both.url+"/svc/v2?pretty", "application/json",
		`{"queryType":"timeBoundary","dataSource":"wiki","context":{"queryId":"tb-1"}}`)
	want := "[ {\n  \"timestamp\" : \"2013-08-31T01:00:00.000Z\",\n  \"result\" : {\n    \"minTime\" : \"2013-08-31T01:00:00.000Z\",\n    \"maxTime\" : \"2013-09-03T23:00:00.000Z\"\n  }\n} ]"
	if code != 200 || hdr.Get("X-Druid-Query-Id") != "tb-1" || body != want || hdr.Get("X-Druid-Response-Context") != "{}" {
		t.Fatalf("pretty timeBoundary: %d %q %q", code, hdr.Get("X-Druid-Query-Id"), body)
	}
	// maxScatterGatherBytes bounds what the broker reads from the historicals.
	scan := `{"queryType":"scan","dataSource":"wiki","intervals":["2013/2014"],"context":{"maxScatterGatherBytes":%s}}`
	code, body, _ = both.query(t, fmt.Sprintf(scan, "10"))
	if e := errorBody(t, body); code != 400 || e["error"] != "Resource limit exceeded" || !strings.Contains(e["errorMessage"].(string), "max scatter-gather bytes limit reached") {
		t.Fatalf("scatter-gather limit: %d %s", code, body)
	}
	if code, body, _ = both.query(t, fmt.Sprintf(scan, `"abc"`)); code != 400 || errorBody(t, body)["error"] != "Query context parse failed" {
		t.Fatalf("bad scatter-gather limit: %d %s", code, body)
	}
	if code, body, _ = both.query(t, fmt.Sprintf(scan, "100000000")); code != 200 {
		t.Fatalf("within the scatter-gather limit: %d %s", code, body)
	}
	// Errors are indented too.
	code, body, _ = call(t, "POST", both.url+"/svc/v2?pretty", "application/json", `{"queryType":"nope","dataSource":"wiki"}`)
	if code != 400 || !strings.HasPrefix(body, "{\n  \"") {
		t.Fatalf("pretty error: %d %q", code, body)
	}
}

// killOnQuery makes a historical die when it receives a sub-query: the
// connection is cut mid-request and the server shut down.
func killOnQuery(h **dpHistorical, killed *atomic.Bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == protocol.QueryPath && !killed.Swap(true) {
				go (*h).stop()
				panic(http.ErrAbortHandler)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestBrokerRetriesOnReplicaWhenAHistoricalDies(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	var victim *dpHistorical
	var killed atomic.Bool
	victim = f.startHistorical(t.TempDir(), killOnQuery(&victim, &killed))
	healthy := f.startHistorical(t.TempDir(), nil)
	victim.node.Start()
	healthy.node.Start()
	b := startBroker(t, []string{victim.url, healthy.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 2)
	code, body, _ := b.query(t, mergeQueries[0])
	if !killed.Load() {
		t.Fatal("the victim received no sub-query")
	}
	if code != 200 || !strings.Contains(body, `"added":130`) || strings.Count(body, "timestamp") != 4 {
		t.Fatalf("query with a replica: %d %s", code, body)
	}
	// The broker notices the death and routes everything to the survivor.
	b.waitReplicas(t, "wiki", 4, 1)

	// Without a replica the query fails with a clear error.
	var lone *dpHistorical
	var killed2 atomic.Bool
	lone = f.startHistorical(t.TempDir(), killOnQuery(&lone, &killed2))
	lone.node.Start()
	b2 := startBroker(t, []string{lone.url}, nil)
	b2.b.Start()
	b2.waitReplicas(t, "wiki", 4, 1)
	code, body, _ = b2.query(t, mergeQueries[0])
	var e map[string]any
	if code != 500 || json.Unmarshal([]byte(body), &e) != nil || e["error"] != "Unknown exception" ||
		!strings.Contains(e["errorMessage"].(string), "no other replica") || e["category"] != "RUNTIME_FAILURE" {
		t.Fatalf("query without a replica: %d %s", code, body)
	}
}

// gate holds sub-queries until released or cancelled, reporting both.
type gate struct {
	entered   chan struct{}
	release   chan struct{}
	cancelled atomic.Int64
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 16), release: make(chan struct{})} }

func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == protocol.QueryPath {
			// Read the body first, as the real handler does: only then does
			// the server watch the connection and cancel the request's
			// context when the broker hangs up.
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			g.entered <- struct{}{}
			select {
			case <-r.Context().Done():
				g.cancelled.Add(1)
				return
			case <-g.release:
			}
		}
		next.ServeHTTP(w, r)
	})
}

func errorBody(t *testing.T, body string) map[string]any {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	return e
}

func TestBrokerCancelTimeoutAndCapacity(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	g := newGate()
	h := f.startHistorical(t.TempDir(), g.wrap)
	h.node.Start()
	b := startBroker(t, []string{h.url}, func(c *broker.Config) { c.MaxConcurrent = 1 })
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 1)
	slow := `{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-08-31/2013-09-04"],"granularity":"all",
	  "aggregations":[{"type":"count","name":"rows"}],"context":{"queryId":"q-slow"}}`

	// DELETE cancels the running query and its sub-query.
	type result struct {
		code int
		body string
		hdr  http.Header
	}
	done := make(chan result, 1)
	go func() {
		code, body, hdr := b.query(t, slow)
		done <- result{code, body, hdr}
	}()
	<-g.entered
	// Meanwhile the broker is at capacity.
	code, body, _ := b.query(t, strings.Replace(slow, "q-slow", "q-other", 1))
	if e := errorBody(t, body); code != 429 || e["error"] != "Query capacity exceeded" || e["category"] != "CAPACITY_EXCEEDED" {
		t.Fatalf("over capacity: %d %s", code, body)
	}
	if code, body, _ := call(t, "DELETE", b.url+"/svc/v2/q-slow", "", ""); code != 202 || body != "" {
		t.Fatalf("DELETE: %d %q", code, body)
	}
	r := <-done
	if e := errorBody(t, r.body); r.code != 500 || e["error"] != "Query cancelled" || e["category"] != "CANCELED" ||
		e["errorCode"] != "legacyQueryException" || r.hdr.Get("X-Druid-Query-Id") != "q-slow" {
		t.Fatalf("cancelled query: %d %s %v", r.code, r.body, r.hdr)
	}
	eventually.True(t, "the sub-query cancelled on the historical", func() bool { return g.cancelled.Load() == 1 })
	if code, body, _ := call(t, "DELETE", b.url+"/svc/v2/no-such-query", "", ""); code != 202 || body != "" {
		t.Fatalf("DELETE of an unknown id: %d %q", code, body)
	}

	// The context timeout ends the query with 504.
	start := time.Now()
	code, body, _ = b.query(t, strings.Replace(slow, `"queryId":"q-slow"`, `"timeout":150`, 1))
	e := errorBody(t, body)
	if code != 504 || e["error"] != "Query timeout" || e["category"] != "TIMEOUT" || e["persona"] != "OPERATOR" ||
		e["errorClass"] != "org.apache.druid.query.QueryTimeoutException" || !strings.Contains(e["errorMessage"].(string), "timed out") {
		t.Fatalf("timeout: %d %s", code, body)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("timeout took %v", el)
	}
	<-g.entered
	eventually.True(t, "the timed-out sub-query cancelled", func() bool { return g.cancelled.Load() == 2 })

	// Released, the same query succeeds.
	close(g.release)
	if code, body, _ := b.query(t, slow); code != 200 || body != `[{"timestamp":"2013-08-31T01:00:00.000Z","result":{"rows":16}}]` {
		t.Fatalf("after release: %d %s", code, body)
	}
}

func TestBrokerBadQueries(t *testing.T) {
	b := startBroker(t, nil, nil)
	b.b.Start()
	cases := []struct {
		body, ctype string
		status      int
		code        string
		msg         string
	}{
		{`{"queryType":"timeseries",`, "application/json", 400, "Json parse failed", ""},
		{`{"queryType":"nope","dataSource":"x"}`, "application/json", 400, "druidException", "nope"},
		{`{"queryType":"timeseries","dataSource":"x"}`, "application/json", 400, "druidException", "intervals"},
		{`{"queryType":"timeseries","dataSource":"x","intervals":["2013/2014"],"context":{"timeout":"soon"}}`, "application/json", 400, "Query context parse failed", "timeout"},
		{`{"queryType":"timeseries","dataSource":{"type":"lookup","lookup":"x"},"intervals":["2013/2014"]}`, "application/json", 400, "druidException", "Lookup [x] not found"},
		{`{"queryType":"timeseries","dataSource":{"type":"unnest","base":"x"},"intervals":["2013/2014"]}`, "application/json", 501, "Unsupported query", "unnest"},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			code, body, hdr := call(t, "POST", b.url+"/svc/v2/", c.ctype, c.body)
			e := errorBody(t, body)
			if code != c.status || e["error"] != c.code || !strings.Contains(e["errorMessage"].(string), c.msg) || hdr.Get("X-Druid-Query-Id") == "" {
				t.Errorf("%s: %d %s", c.body, code, body)
			}
			if c.code == "druidException" && (e["errorCode"] != "invalidInput" || e["persona"] != "USER" || e["category"] != "INVALID_INPUT") {
				t.Errorf("%s: structured fields: %s", c.body, body)
			}
		})
	}
	if code, _, _ := call(t, "POST", b.url+"/svc/v2/", "text/plain", `{}`); code != 415 {
		t.Errorf("text/plain body: %d, want 415", code)
	}
	// A query of a datasource nobody serves is empty, not an error; a
	// timeseries over all time still has its one row (QUERY-SEMANTICS §3.1).
	if code, body, _ := b.query(t, `{"queryType":"timeseries","dataSource":"ghost","intervals":["2013/2014"],"granularity":"all","aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"s","fieldName":"s"}]}`); code != 200 || body != `[{"timestamp":"2013-01-01T00:00:00.000Z","result":{"n":0,"s":null}}]` {
		t.Errorf("unknown datasource, timeseries: %d %s", code, body)
	}
	if code, body, _ := b.query(t, `{"queryType":"topN","dataSource":"ghost","intervals":["2013/2014"],"granularity":"all","dimension":"d","metric":"n","threshold":2,"aggregations":[{"type":"count","name":"n"}]}`); code != 200 || body != "[]" {
		t.Errorf("unknown datasource, topN: %d %s", code, body)
	}
	if code, body, _ := b.query(t, `{"queryType":"groupBy","dataSource":"ghost","intervals":["2013/2014"],"granularity":"all","dimensions":[],"aggregations":[{"type":"count","name":"n"}]}`); code != 200 || body != `[{"version":"v1","timestamp":"2013-01-01T00:00:00.000Z","event":{"n":0}}]` {
		t.Errorf("unknown datasource, ungrouped groupBy: %d %s", code, body)
	}
	// A server limit on the timeout rejects larger ones.
	lim := startBroker(t, nil, func(c *broker.Config) { c.MaxTimeout, c.DefaultTimeout = time.Second, 300*time.Second })
	code, body, _ := lim.query(t, `{"queryType":"timeBoundary","dataSource":"x","context":{"timeout":5000}}`)
	if e := errorBody(t, body); code != 400 || e["error"] != "Query context parse failed" {
		t.Errorf("timeout above the limit: %d %s", code, body)
	}
	// The server default (300 s) yields to the smaller limit instead of
	// failing every query that names no timeout.
	if code, body, _ := lim.query(t, `{"queryType":"timeBoundary","dataSource":"x"}`); code != 200 {
		t.Errorf("default timeout above the limit: %d %s", code, body)
	}
}

func TestBrokerUnionOvershadowAndMetadata(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	// wiki2: a day segment, partly overshadowed by a newer hour segment.
	day := f.segment("wiki2", "2013-08-31/2013-09-01", "v1", 0, 1, wikiRows("2013-08-31", 0)) // 1,2,3,4 at 01,02,03,23h
	hour := f.segment("wiki2", "2013-08-31T02:00/2013-08-31T03:00", "v2", 0, 1, []dpRow{{"2013-08-31T02:30:00Z", "Date", 1000}})
	f.publish(day)
	f.publish(hour)
	h1 := f.startHistorical(t.TempDir(), nil)
	h2 := f.startHistorical(t.TempDir(), nil)
	h1.node.Start()
	h2.node.Start()
	b := startBroker(t, []string{h1.url, h2.url}, func(c *broker.Config) {
		c.Now = func() time.Time { return time.Date(2013, 9, 2, 12, 0, 0, 0, time.UTC) }
	})
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 2)
	b.waitReplicas(t, "wiki2", 3, 2)

	sum := func(ds string, ivs string) string {
		code, body, _ := b.query(t, `{"queryType":"timeseries","dataSource":`+ds+`,"intervals":`+ivs+`,"granularity":"all",
		  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`)
		if code != 200 {
			t.Fatalf("%s: %d %s", ds, code, body)
		}
		var r []struct{ Result map[string]int64 }
		json.Unmarshal([]byte(body), &r)
		if len(r) != 1 {
			return body
		}
		return jsonNum(r[0].Result["added"])
	}
	// Overshadowing: the hour piece reads v2 only (the v1 row at 02:00 is hidden).
	if got := sum(`"wiki2"`, `["2013-08-31/2013-09-01"]`); got != jsonNum(1+3+4+1000) {
		t.Errorf("wiki2 over the day: %s", got)
	}
	// Union: members add up, a missing member is skipped, a table object works.
	if got := sum(`{"type":"union","dataSources":["wiki","wiki2","missing"]}`, `["2013-08-31/2013-09-04"]`); got != jsonNum(280+1008) {
		t.Errorf("union: %s", got)
	}
	if got := sum(`{"type":"table","name":"wiki"}`, `["2013-08-31/2013-09-01"]`); got != jsonNum(10) {
		t.Errorf("table object: %s", got)
	}

	// Explicit segment descriptors read just those segments.
	if got := sum(`"wiki"`, `{"type":"segments","segments":[{"itvl":"2013-09-01/2013-09-02","ver":"v1","part":0},{"itvl":"2013-09-03/2013-09-04","ver":"v0","part":0}]}`); got != jsonNum(50) {
		t.Errorf("segments spec: %s", got)
	}

	// Datasources and their columns.
	expect(t, "GET", b.url+"/svc/v2/datasources", "", "", 200, `["wiki","wiki2"]`)
	// The default window is one week before "now" (2013-09-02T12:00).
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki", "", "", 200, `{"dimensions":["page"],"metrics":["added","count"]}`)
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki?interval=2014-01-01/2014-02-01", "", "", 200, `{"dimensions":[],"metrics":[]}`)
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki/dimensions?interval=2013-09-01_2013-09-02", "", "", 200, `["page"]`)
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki/metrics", "", "", 200, `["added","count"]`)
	expect(t, "GET", b.url+"/svc/v2/datasources/nope", "", "", 200, `{"dimensions":[],"metrics":[]}`)
	expect(t, "GET", b.url+"/svc/v2/datasources/nope?full", "", "", 200, `{}`)
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki?full&interval=2013-08-31/2013-09-02", "", "", 200,
		`{"2013-08-31T00:00:00.000Z/2013-09-02T00:00:00.000Z":{"dimensions":["page"],"metrics":["added","count"]}}`)
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki?interval=bad", "", "", 400, `{"error":"interval: invalid interval \"bad\": needs a '_' or '/' separator"}`)

	// Candidates: the visible pieces with their servers.
	var cands []broker.Candidate
	getJSON(t, "GET", b.url+"/svc/v2/datasources/wiki2/candidates?intervals=2013-08-31/2013-09-01&numCandidates=1", "", "", &cands)
	if len(cands) != 3 || cands[0].Interval != "2013-08-31T00:00:00.000Z/2013-08-31T02:00:00.000Z" || cands[1].Version != "v2" ||
		cands[2].Interval != "2013-08-31T03:00:00.000Z/2013-09-01T00:00:00.000Z" || len(cands[0].Locations) != 1 || cands[0].Size != day.Size {
		t.Fatalf("candidates: %+v", cands)
	}
	code, body, _ := call(t, "POST", b.url+"/svc/v2/candidates/", "application/json",
		`{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-09-01T12:00/2013-09-02T12:00"],"granularity":"all","aggregations":[]}`)
	if err := json.Unmarshal([]byte(body), &cands); code != 200 || err != nil || len(cands) != 2 {
		t.Fatalf("POST candidates: %d %s", code, body)
	}
	loc := cands[0].Locations[0]
	if cands[0].Interval != "2013-09-01T12:00:00.000Z/2013-09-02T00:00:00.000Z" || cands[0].PartitionNumber != 0 || len(cands[0].Locations) != 2 ||
		loc.Type != "historical" || loc.Tier != "_default_tier" || loc.MaxSize != 1<<30 || loc.HostAndTLSPort != nil {
		t.Fatalf("POST candidates: %s", body)
	}
	if !strings.Contains(body, `"hostAndTlsPort":null`) {
		t.Fatalf("candidates lack hostAndTlsPort: %s", body)
	}
	expect(t, "GET", b.url+"/svc/v2/datasources/wiki/candidates", "", "", 400, `{"error":"query parameter intervals is required: comma-separated ISO-8601 intervals"}`)
}

func jsonNum(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The broker serves queries from many goroutines at once.
func TestBrokerConcurrentQueries(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	h1 := f.startHistorical(t.TempDir(), nil)
	h2 := f.startHistorical(t.TempDir(), nil)
	h1.node.Start()
	h2.node.Start()
	b := startBroker(t, []string{h1.url, h2.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 2)
	_, want, _ := b.query(t, mergeQueries[2])
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if code, got, _ := b.query(t, mergeQueries[2]); code != 200 || got != want {
					t.Errorf("concurrent query: %d %s", code, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}
