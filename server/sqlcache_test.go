package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/eventually"
)

// sqlPlanned posts a SQL request and returns the code, body and query id.
func sqlPlanned(t *testing.T, b *dpBroker, body string) (int, string, string) {
	t.Helper()
	code, got, hdr := sqlCall(t, b, body)
	return code, got, hdr.Get(sqlQueryIDHeader)
}

// A statement's plan is reused by the same statement, each run under its
// own sqlQueryId, and concurrent runs of one plan answer alike.
func TestSQLPlanReused(t *testing.T) {
	var mu sync.Mutex
	var seen []string // sub-query bodies the historical received
	b := sqlCluster(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			mu.Lock()
			seen = append(seen, string(body))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	})
	stmt := `{"query":"SELECT page, SUM(added) AS s FROM wiki WHERE page <> 'c' GROUP BY page ORDER BY page"}`
	want := `[{"page":"a","s":10101},{"page":"b","s":10}]`
	var ids []string
	for range 2 {
		code, got, id := sqlPlanned(t, b, stmt)
		if code != 200 || got != want {
			t.Fatalf("got %d %s, want %s", code, got, want)
		}
		ids = append(ids, id)
	}
	if n := b.srv.sqlPlans.hits.Load(); n != 1 {
		t.Fatalf("plans reused: %d, want 1", n)
	}
	if ids[0] == ids[1] {
		t.Fatalf("both runs answered as %s", ids[0])
	}
	// Each run's sub-queries carry its own id (the reused plan's natives
	// hold the new one, not the one it was planned with).
	mu.Lock()
	for _, id := range ids {
		n := 0
		for _, s := range seen {
			if strings.Contains(s, id) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no sub-query carried sqlQueryId %s", id)
		}
	}
	mu.Unlock()

	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				code, got, _ := sqlCall(t, b, stmt)
				if code != 200 || got != want {
					errs <- fmt.Sprintf("%d %s", code, got)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent run: %s, want %s", e, want)
	}
}

// A different context, parameter or statement text is a different plan.
func TestSQLPlanKey(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, c := range []struct{ body, want string }{
		{`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page = ?","parameters":[{"type":"VARCHAR","value":"a"}]}`, `[{"n":3}]`},
		{`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page = ?","parameters":[{"type":"VARCHAR","value":"b"}]}`, `[{"n":1}]`},
		{`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page = ?","parameters":[{"type":"VARCHAR","value":"a"}]}`, `[{"n":3}]`},
		{`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page = 'a'"}`, `[{"n":3}]`},
		{`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page = 'b'"}`, `[{"n":1}]`},
		{`{"query":"SELECT TIME_FLOOR(__time, 'P1D') AS d, COUNT(*) AS n FROM wiki GROUP BY 1"}`,
			`[{"d":"2024-01-01T00:00:00.000Z","n":3},{"d":"2024-01-02T00:00:00.000Z","n":2}]`},
		{`{"query":"SELECT TIME_FLOOR(__time, 'P1D') AS d, COUNT(*) AS n FROM wiki GROUP BY 1","context":{"sqlTimeZone":"America/Los_Angeles"}}`,
			`[{"d":"2023-12-31T00:00:00.000-08:00","n":3},{"d":"2024-01-01T00:00:00.000-08:00","n":2}]`},
		{`{"query":"SELECT TIME_FLOOR(__time, 'P1D') AS d, COUNT(*) AS n FROM wiki GROUP BY 1"}`,
			`[{"d":"2024-01-01T00:00:00.000Z","n":3},{"d":"2024-01-02T00:00:00.000Z","n":2}]`},
	} {
		if code, got, _ := sqlPlanned(t, b, c.body); code != 200 || got != c.want {
			t.Errorf("%s: %d %s, want %s", c.body, code, got, c.want)
		}
	}
	if n := b.srv.sqlPlans.hits.Load(); n != 2 {
		t.Errorf("plans reused: %d, want 2 (the repeated parameter and the repeated UTC statement)", n)
	}
}

// What planning read live is never kept: the clock, IN (subquery) results,
// INFORMATION_SCHEMA tables (as sys and lookup ones, any schema but druid);
// nor EXPLAIN, nor a statement whose
// request names its own sqlQueryId.
func TestSQLPlanNotKeptWhenLive(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, q := range []string{
		`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE __time < CURRENT_TIMESTAMP"}`,
		`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE __time < CURRENT_DATE"}`,
		`{"query":"SELECT COUNT(*) AS n FROM wiki WHERE page IN (SELECT page FROM wiki WHERE added > 500)"}`,
		`{"query":"SELECT COUNT(*) AS n FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = 'wiki'"}`,
		`{"query":"EXPLAIN PLAN FOR SELECT COUNT(*) AS n FROM wiki"}`,
		`{"query":"SELECT COUNT(*) AS n FROM wiki","context":{"sqlQueryId":"mine"}}`,
	} {
		if code, got, _ := sqlPlanned(t, b, q); code != 200 {
			t.Fatalf("%s: %d %s", q, code, got)
		}
		if n := b.srv.sqlPlans.len(); n != 0 {
			t.Fatalf("%s: kept (%d plans)", q, n)
		}
	}
}

// A plan is not reused once the broker's view changed: the datasource gone,
// the statement is planned again and refused as a fresh one is.
func TestSQLPlanDroppedWhenTheViewChanges(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	seg := f.segment("wiki", "2024-01-01/2024-01-02", "v1", 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", 1}})
	f.publish(seg)
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 1)
	stmt := `{"query":"SELECT COUNT(*) AS n FROM wiki"}`
	for range 2 {
		if code, got, _ := sqlPlanned(t, b, stmt); code != 200 || got != `[{"n":1}]` {
			t.Fatalf("%d %s", code, got)
		}
	}
	if b.srv.sqlPlans.hits.Load() != 1 {
		t.Fatal("the plan was not reused")
	}
	f.markUnused("wiki", seg.ID().String())
	eventually.True(t, "the broker to drop wiki", func() bool {
		for _, ds := range b.b.DataSources() {
			if ds == "wiki" {
				return false
			}
		}
		return true
	})
	code, got, _ := sqlPlanned(t, b, stmt)
	fcode, fresh, _ := sqlPlanned(t, b, `{"query":"SELECT COUNT(*) AS n FROM wiki","context":{"sqlQueryId":"fresh"}}`)
	if code != 400 || code != fcode || got != fresh {
		t.Fatalf("after the view changed: %d %s, want as planned afresh: %d %s", code, got, fcode, fresh)
	}
}

// A reused plan checks the caller's permissions again: one revoked after
// the plan was made is refused as a fresh plan refuses it.
func TestSQLPlanRechecksPermissions(t *testing.T) {
	users := newTestUsers()
	c := startSecureCluster(t, users)
	post := func(body string) (int, string) {
		code, got, _ := callWith(t, "POST", c.broker+"/svc/v2/sql", "application/json", body, as("wikireader"))
		return code, got
	}
	stmt := `{"query":"SELECT COUNT(*) AS n FROM wiki"}`
	for range 2 {
		if code, got := post(stmt); code != 200 || got != `[{"n":1}]` {
			t.Fatalf("%d %s", code, got)
		}
	}
	users.mu.Lock()
	users.perms["wikireader"] = nil
	users.mu.Unlock()
	code, got := post(stmt)
	fcode, fresh := post(`{"query":"SELECT COUNT(*) AS n FROM wiki","context":{"sqlQueryId":"fresh"}}`)
	if code != 403 || code != fcode || got != fresh {
		t.Fatalf("after the revoke: %d %s, want as planned afresh: %d %s", code, got, fcode, fresh)
	}
}

// TestSQLStatementCost measures, in process, what one statement costs over
// loopback: the native query, its SQL form planned afresh (the request
// names its sqlQueryId, so no plan is reused) and its SQL form reusing the
// plan, run in turns (each round in a rotated order, so a burst of load
// falls on all three alike) and reported as medians. A measurement, not a
// check: STRATA_BENCH_SQL=1 runs it (go test -run SQLStatementCost -v ./server).
func TestSQLStatementCost(t *testing.T) {
	if os.Getenv("STRATA_BENCH_SQL") == "" {
		t.Skip("a measurement: set STRATA_BENCH_SQL=1")
	}
	b := sqlCluster(t, nil)
	const native = `{"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024-01-01/2024-01-08"],"filter":{"type":"selector","dimension":"page","value":"a"},"aggregations":[{"type":"count","name":"c"}]}`
	const stmt = `SELECT COUNT(*) AS c FROM wiki WHERE __time >= TIMESTAMP '2024-01-01 00:00:00' AND __time < TIMESTAMP '2024-01-08 00:00:00' AND page = 'a'`
	kinds := []struct{ name, path, body string }{
		{"native", "/svc/v2/", native},
		{"sql planned", "/svc/v2/sql", `{"query":"` + stmt + `","resultFormat":"array","context":{"sqlQueryId":"cost"}}`},
		{"sql reused", "/svc/v2/sql", `{"query":"` + stmt + `","resultFormat":"array"}`},
	}
	const rounds = 2000
	took := make([][]time.Duration, len(kinds))
	for r := range rounds {
		for j := range kinds {
			k := (r + j) % len(kinds)
			start := time.Now()
			resp, err := http.Post(b.url+kinds[k].path, "application/json", strings.NewReader(kinds[k].body))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d %s", kinds[k].name, resp.StatusCode, got)
			}
			took[k] = append(took[k], time.Since(start))
		}
	}
	for k, c := range kinds {
		slices.Sort(took[k])
		t.Logf("%-12s median %6.1f µs (client and server, %d rounds)", c.name, float64(took[k][rounds/2].Nanoseconds())/1000, rounds)
	}
}

// A reused plan hands the broker its natives parsed, each run's copy
// carrying the run's own id, and concurrent runs of statements of every
// shape (nested queries, a join, UNION ALL, a scan) answer alike under the
// race detector: the broker shares the parsed query's parts among them.
func TestSQLPlanReusedParsed(t *testing.T) {
	b := sqlCluster(t, nil)
	stmts := []struct{ sql, want string }{
		{`SELECT COUNT(*) AS n FROM wiki WHERE page = 'a'`, `[{"n":3}]`},
		{`SELECT MAX(s) AS m FROM (SELECT page, SUM(added) AS s FROM wiki GROUP BY page)`, `[{"m":10101}]`},
		{`SELECT w.page, COUNT(*) AS n FROM wiki w JOIN (SELECT page FROM wiki WHERE added > 500 GROUP BY page) t ON w.page = t.page GROUP BY 1`, `[{"page":"a","n":3},{"page":"c","n":1}]`},
		{`SELECT page FROM wiki WHERE added = 1 UNION ALL SELECT page FROM wiki WHERE added = 10`, `[{"page":"a"},{"page":"b"}]`},
		{`SELECT __time, page FROM wiki WHERE added > 5000 ORDER BY __time DESC LIMIT 1`, `[{"__time":"2024-01-02T05:00:00.000Z","page":"a"}]`},
	}
	body := func(sql string) string { return `{"query":` + strconv.Quote(sql) + `}` }
	for _, s := range stmts {
		for range 2 {
			if code, got, _ := sqlPlanned(t, b, body(s.sql)); code != 200 || got != s.want {
				t.Fatalf("%s: %d %s, want %s", s.sql, code, got, s.want)
			}
		}
	}
	b.srv.sqlPlans.mu.Lock()
	withParsed := 0
	for _, e := range b.srv.sqlPlans.entries {
		if e.parsed != nil {
			withParsed++
		}
	}
	b.srv.sqlPlans.mu.Unlock()
	if withParsed != len(stmts) {
		t.Errorf("%d of %d plans kept their natives parsed", withParsed, len(stmts))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(stmts))
	for range 8 {
		wg.Go(func() {
			for _, s := range stmts {
				if code, got, _ := sqlCall(t, b, body(s.sql)); code != 200 || got != s.want {
					errs <- fmt.Sprintf("%s: %d %s, want %s", s.sql, code, got, s.want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The copy of a parsed native a run gets carries the run's id where the
// plan's was (so the broker registers and cancels it by that id) and
// leaves the cached one as it was; a native whose id occurs outside its
// top-level context is not kept parsed.
func TestSQLParsedNativeWithID(t *testing.T) {
	const old, id = "0d3f6c3e-6a53-4a43-9d67-3c1f1d1b4e01", "5b9e0f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b"
	native := json.RawMessage(`{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"count","name":"n"}],"context":{"queryId":"` + old + `","sqlQueryId":"` + old + `","other":"x"}}`)
	parsed := parseNatives([]json.RawMessage{native}, old)
	if parsed == nil {
		t.Fatal("not kept parsed")
	}
	q := queryWithID(parsed[0], old, id)
	if q.Context.QueryID != id || q.Context.Raw["sqlQueryId"] != id || q.Context.Raw["queryId"] != id || q.Context.Raw["other"] != "x" {
		t.Errorf("copy's context: %s %v", q.Context.QueryID, q.Context.Raw)
	}
	if parsed[0].Context.QueryID != old || parsed[0].Context.Raw["sqlQueryId"] != old {
		t.Errorf("cached query changed: %s %v", parsed[0].Context.QueryID, parsed[0].Context.Raw)
	}
	elsewhere := json.RawMessage(`{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-02"],"granularity":"all","filter":{"type":"selector","dimension":"page","value":"` + old + `"},"aggregations":[{"type":"count","name":"n"}],"context":{"sqlQueryId":"` + old + `"}}`)
	if parseNatives([]json.RawMessage{native, elsewhere}, old) != nil {
		t.Error("a native with the id outside its context was kept parsed")
	}
	if parseNatives([]json.RawMessage{json.RawMessage(`{"queryType":"nosuch"}`)}, old) != nil {
		t.Error("a native the broker refuses was kept parsed")
	}
}
