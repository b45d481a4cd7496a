package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"strata/internal/eventually"
	"strata/querynode/query"
)

// joinCluster is sqlCluster's broker and historical serving "wiki" (page,
// added: a 1, b 10, a 100 on 2024-01-01; c 1000, a 10000 on 2024-01-02) and
// a small table "cats" (page, added: a 7, b 8) to join with.
func joinCluster(t *testing.T) *dpBroker {
	t.Helper()
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	f.publish(
		f.segment("wiki", "2024-01-01/2024-01-02", "v1", 0, 1, []dpRow{
			{"2024-01-01T01:00:00Z", "a", 1}, {"2024-01-01T02:00:00Z", "b", 10}, {"2024-01-01T03:00:00Z", "a", 100}}),
		f.segment("wiki", "2024-01-02/2024-01-03", "v1", 0, 1, []dpRow{
			{"2024-01-02T01:00:00Z", "c", 1000}, {"2024-01-02T05:00:00Z", "a", 10000}}),
	)
	f.publish(f.segment("cats", "2020-01-01/2020-01-02", "v1", 0, 1, []dpRow{
		{"2020-01-01T00:00:00Z", "a", 7}, {"2020-01-01T00:00:01Z", "b", 8}}))
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitSegments(t, "wiki", 2)
	b.waitSegments(t, "cats", 1)
	return b
}

// Native join data sources over a real broker and historical: every kind
// of right side, INNER and LEFT, and the errors.
func TestNativeJoin(t *testing.T) {
	b := joinCluster(t)
	join := func(right, joinType string) string {
		return `{"type":"join","left":"wiki","right":` + right + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"` + joinType + `"}`
	}
	byCat := func(ds string) string {
		return `{"queryType":"groupBy","dataSource":` + ds + `,"intervals":["2024/2025"],"granularity":"all","dimensions":["r.cat"],
			"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"n"}]}`
	}
	cats := `{"type":"inline","columnNames":["page","cat"],"rows":[["a","x"],["b","y"],["z","never"]]}`
	// Per page, its rows in wiki: a query right side run on the broker first.
	perPage := `{"type":"query","query":{"queryType":"groupBy","dataSource":"wiki","intervals":["2024/2025"],"granularity":"all",
		"dimensions":["page"],"aggregations":[{"type":"count","name":"rows"}]}}`
	for _, c := range []struct{ name, q, want string }{
		{"inline right, INNER", byCat(join(cats, "INNER")),
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"r.cat":"x","added":10101,"n":3}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"r.cat":"y","added":10,"n":1}}]`},
		{"inline right, LEFT keeps c with a null category", byCat(join(cats, "LEFT")),
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"r.cat":null,"added":1000,"n":1}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"r.cat":"x","added":10101,"n":3}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"r.cat":"y","added":10,"n":1}}]`},
		{"query right side", `{"queryType":"groupBy","dataSource":` + join(perPage, "INNER") + `,"intervals":["2024/2025"],"granularity":"all",
			"dimensions":[{"type":"default","dimension":"r.rows","outputName":"rows","outputType":"LONG"}],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`,
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"rows":1,"added":1010}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"rows":3,"added":10101}}]`},
		{"table right side, left columns keep their names", `{"queryType":"groupBy","dataSource":` + join(`{"type":"table","name":"cats"}`, "INNER") + `,
			"intervals":["2024/2025"],"granularity":"all","dimensions":["page"],
			"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"longSum","name":"rAdded","fieldName":"r.added"}]}`,
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"a","added":10101,"rAdded":21}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"b","added":10,"rAdded":8}}]`},
		{"scan of joined rows in time order", `{"queryType":"scan","dataSource":` + join(cats, "INNER") + `,"intervals":["2024-01-01/2024-01-02"],
			"columns":["__time","page","r.cat"],"resultFormat":"compactedList","order":"ascending"}`,
			`"events":[[1704070800000,"a","x"],[1704074400000,"b","y"],[1704078000000,"a","x"]]`},
		{"scan of all columns: the left's, then the right's prefixed", `{"queryType":"scan","dataSource":` + join(cats, "LEFT") + `,"intervals":["2024-01-02/2024-01-03"],
			"resultFormat":"compactedList","order":"ascending"}`,
			`"columns":["__time","page","count","added","r.page","r.cat"],"events":[[1704157200000,"c",1,1000,null,null],[1704171600000,"a",1,10000,"a","x"]]`},
		// A right row no left row matched has no time: it is at the epoch
		// (the query intervals must hold it), as Druid reads rows without
		// a __time.
		{"RIGHT: the broker reads the left side and keeps z, which no row matched", strings.Replace(byCat(join(cats, "RIGHT")), "2024/2025", "1970/2100", 1),
			`[{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"never","added":null,"n":1}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"x","added":10101,"n":3}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"y","added":10,"n":1}}]`},
		{"FULL keeps c and z", strings.Replace(byCat(join(cats, "FULL")), "2024/2025", "1970/2100", 1),
			`[{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":null,"added":1000,"n":1}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"never","added":null,"n":1}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"x","added":10101,"n":3}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"y","added":10,"n":1}}]`},
		{"leftFilter filters the left table before the join; RIGHT keeps z and the y no kept row matched", strings.Replace(byCat(
			`{"type":"join","left":"wiki","right":`+cats+`,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"RIGHT",
				"leftFilter":{"type":"bound","dimension":"added","lower":"50","ordering":"numeric"}}`), "2024/2025", "1970/2100", 1),
			`[{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"never","added":null,"n":1}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"x","added":10100,"n":2}},` +
				`{"version":"v1","timestamp":"1970-01-01T00:00:00.000Z","event":{"r.cat":"y","added":null,"n":1}}]`},
		{"timeseries by day over a join", `{"queryType":"timeseries","dataSource":` + join(cats, "INNER") + `,"intervals":["2024-01-01/2024-01-03"],"granularity":"day",
			"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`,
			`[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"added":111}},{"timestamp":"2024-01-02T00:00:00.000Z","result":{"added":10000}}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, got, _ := b.query(t, c.q)
			if code != 200 || !strings.Contains(got, c.want) {
				t.Errorf("%d\n got %s\nwant %s", code, got, c.want)
			}
		})
	}

	// The right side's rows count against the subquery row limit (3 rows
	// per page; 2 in cats).
	q := byCat(join(perPage, "INNER"))
	code, body, _ := b.query(t, strings.TrimSuffix(q, "}")+`,"context":{"maxSubqueryRows":2}}`)
	if e := errorBody(t, body); code != 400 || e["error"] != "Resource limit exceeded" {
		t.Errorf("a right side over maxSubqueryRows: %d %s", code, body)
	}
	code, body, _ = b.query(t, strings.TrimSuffix(byCat(join(`"cats"`, "INNER")), "}")+`,"context":{"maxSubqueryRows":1}}`)
	if e := errorBody(t, body); code != 400 || e["error"] != "Resource limit exceeded" {
		t.Errorf("a table right side over maxSubqueryRows: %d %s", code, body)
	}

	// Bad join JSON is a 400 naming the problem; what the engine does not
	// do is Druid's unsupported-query answer (501, category UNSUPPORTED).
	for _, c := range []struct {
		ds       string
		code     int
		category string
		msg      string
	}{
		{`{"type":"join","left":"wiki","right":` + cats + `,"condition":"page == \"r.page\"","joinType":"INNER"}`, 400, "INVALID_INPUT", "rightPrefix"},
		{`{"type":"join","left":"wiki","right":[1],"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"INNER"}`, 400, "INVALID_INPUT", "JSON object"},
		{`{"type":"join","left":"wiki","right":` + cats + `,"rightPrefix":"r.","condition":"page == ","joinType":"INNER"}`, 400, "INVALID_INPUT", "condition"},
		{`{"type":"join","left":` + cats + `,"right":` + cats + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"INNER","leftFilter":{"type":"true"}}`, 400, "INVALID_INPUT", "leftFilter"},
		{`{"type":"join","left":"wiki","right":` + cats + `,"rightPrefix":"r.","condition":"page != \"r.page\"","joinType":"INNER"}`, 501, "UNSUPPORTED", "equality"},
	} {
		code, body, _ := b.query(t, byCat(c.ds))
		e := errorBody(t, body)
		msg, _ := e["errorMessage"].(string)
		if code != c.code || e["category"] != c.category || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %s, want %d %s naming %q", c.ds, code, body, c.code, c.category, c.msg)
		}
	}
}

// SQL joins answer what the join means, over a real broker and historical.
func TestSQLJoin(t *testing.T) {
	b := joinCluster(t)
	for _, c := range []struct{ sql, want string }{
		{`SELECT w.page, SUM(w.added) AS s, SUM(c.added) AS cs FROM wiki w INNER JOIN cats c ON w.page = c.page GROUP BY w.page ORDER BY w.page`,
			`[["a",10101,21],["b",10,8]]`},
		{`SELECT w.page, COUNT(*) AS n, SUM(c.added) AS cs FROM wiki AS w LEFT JOIN cats AS c ON w.page = c.page GROUP BY 1 ORDER BY 1`,
			`[["a",3,21],["b",1,8],["c",1,null]]`},
		// Qualified by table name, the right side a subquery.
		{`SELECT wiki.__time, wiki.page, t.n FROM wiki JOIN (SELECT page, COUNT(*) AS n FROM wiki GROUP BY page) t ON wiki.page = t.page WHERE wiki.added > 50 ORDER BY wiki.__time`,
			`[["2024-01-01T03:00:00.000Z","a",3],["2024-01-02T01:00:00.000Z","c",1],["2024-01-02T05:00:00.000Z","a",3]]`},
		// A comma join keyed by the WHERE clause's equality.
		{`SELECT c.page, SUM(w.added) AS s FROM cats c, wiki w WHERE c.page = w.page AND w.added < 1000 GROUP BY c.page ORDER BY c.page`,
			`[["a",101],["b",10]]`},
		// The left side a subquery: the join runs on the broker.
		{`SELECT t.page, t.n, c.added FROM (SELECT page, COUNT(*) AS n FROM wiki GROUP BY page) t JOIN cats c ON t.page = c.page ORDER BY t.page`,
			`[["a",3,7],["b",1,8]]`},
		// RIGHT and FULL joins: the broker reads both sides and joins them.
		{`SELECT c.page, COUNT(w.page) AS n FROM cats c RIGHT JOIN wiki w ON c.page = w.page GROUP BY 1 ORDER BY 1`,
			`[[null,1],["a",3],["b",1]]`},
		{`SELECT w.page, c.added FROM (SELECT page FROM wiki WHERE added > 50) w FULL JOIN cats c ON w.page = c.page ORDER BY c.added, w.page`,
			`[["c",null],["a",7],["a",7],[null,8]]`},
		// USING: the column once, unqualified the left side's.
		{`SELECT page, COUNT(*) AS n, SUM(c.added) AS cs FROM wiki w JOIN cats c USING (page) GROUP BY page ORDER BY page`,
			`[["a",3,21],["b",1,8]]`},
		// CROSS JOIN: every pair (5 × 2).
		{`SELECT COUNT(*) AS n, SUM(c.added) AS cs FROM wiki CROSS JOIN cats c`, `[[10,75]]`},
		// Expressions of the right side, and a condition on it alone, in ON.
		{`SELECT w.page, c.added AS ca FROM wiki w JOIN cats c ON UPPER(w.page) = UPPER(c.page) AND c.added > 7 ORDER BY w.page`,
			`[["b",8]]`},
		// LEFT: a condition on the right side filters it before the join.
		{`SELECT w.page, SUM(c.added) AS cs FROM wiki w LEFT JOIN cats c ON w.page = c.page AND c.added < 8 GROUP BY 1 ORDER BY 1`,
			`[["a",21],["b",null],["c",null]]`},
		// INNER: a condition on the left side alone filters the joined rows.
		{`SELECT w.page, COUNT(*) AS n FROM wiki w JOIN cats c ON w.page = c.page AND w.added >= 100 GROUP BY 1`,
			`[["a",2]]`},
		// A chain of joins; an expression of the left side as the key.
		{`SELECT w.page, c.added AS ca, d.added AS da FROM wiki w JOIN cats c ON LOWER(w.page) = c.page LEFT JOIN cats d ON c.page = d.page WHERE w.page = 'b'`,
			`[["b",8,8]]`},
	} {
		code, body, _ := sqlCall(t, b, `{"query":`+sqlQuoteJSON(c.sql)+`,"resultFormat":"array"}`)
		if code != 200 || body != c.want {
			t.Errorf("%s:\n got %d %s\nwant %s", c.sql, code, body, c.want)
		}
	}

	// SELECT * over a join: both sides' columns, the right's renamed where
	// the names repeat, as Calcite names them.
	code, body, _ := sqlCall(t, b, `{"query":"SELECT * FROM cats c JOIN wiki w ON c.page = w.page WHERE w.added = 10","resultFormat":"array","header":true}`)
	if want := `[["__time","page","added","count","__time0","page0","added0","count0"],` +
		`["2020-01-01T00:00:01.000Z","b",8,1,"2024-01-01T02:00:00.000Z","b",10,1]]`; code != 200 || body != want {
		t.Errorf("SELECT * over a join:\n got %d %s\nwant %s", code, body, want)
	}

	// EXPLAIN shows the join data source.
	code, body, _ = sqlCall(t, b, `{"query":"EXPLAIN PLAN FOR SELECT w.page FROM wiki w JOIN cats c ON w.page = c.page","resultFormat":"array"}`)
	if code != 200 || !strings.Contains(body, `\"type\":\"join\"`) || !strings.Contains(body, `\"rightPrefix\":\"j0.\"`) ||
		!strings.Contains(body, `\"condition\":\"(\\\"page\\\" == \\\"j0.page\\\")\"`) {
		t.Errorf("EXPLAIN: %d %s", code, body)
	}

	// What a broadcast join cannot run is a 400 UNSUPPORTED.
	for _, c := range []struct{ sql, msg string }{
		{`SELECT w.page FROM wiki w RIGHT JOIN cats c ON w.page = c.page AND c.added > 7`, "equality"},
		{`SELECT w.page FROM wiki w JOIN cats c ON w.added < c.added`, "equality"},
		{`SELECT w.page FROM wiki w LEFT JOIN cats c ON w.page = c.page AND w.added > 1`, "equality"},
		{`SELECT page FROM wiki w FULL JOIN cats c USING (page)`, "USING"},
	} {
		code, body, _ := sqlCall(t, b, `{"query":`+sqlQuoteJSON(c.sql)+`}`)
		e := errorBody(t, body)
		msg, _ := e["errorMessage"].(string)
		if code != 400 || e["category"] != "UNSUPPORTED" || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %s, want 400 UNSUPPORTED naming %q", c.sql, code, body, c.msg)
		}
	}
	// An ambiguous column is the user's error.
	code, body, _ = sqlCall(t, b, `{"query":"SELECT page FROM wiki w JOIN cats c ON w.page = c.page"}`)
	if code != 400 || !strings.Contains(body, "ambiguous") {
		t.Errorf("ambiguous column: %d %s", code, body)
	}
}

func sqlQuoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type joinLookups map[string]map[string]string

func (l joinLookups) Lookup(name string) (map[string]string, bool, bool) {
	m, ok := l[name]
	return m, false, ok
}

// A lookup right side joins the broker's copy of the lookup: columns k, v.
func TestNativeJoinLookup(t *testing.T) {
	query.SetLookups(joinLookups{"fruit": {"a": "Apple", "c": "Cherry"}})
	t.Cleanup(func() { query.SetLookups(nil) })
	b := joinCluster(t)
	ds := func(name, joinType string) string {
		return `{"type":"join","left":"wiki","right":{"type":"lookup","lookup":"` + name + `"},"rightPrefix":"l.","condition":"page == \"l.k\"","joinType":"` + joinType + `"}`
	}
	q := func(ds string) string {
		return `{"queryType":"groupBy","dataSource":` + ds + `,"intervals":["2024/2025"],"granularity":"all","dimensions":["l.v"],
			"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],"context":{"maxSubqueryRows":1}}`
	}
	code, got, _ := b.query(t, q(ds("fruit", "LEFT")))
	want := `[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"l.v":null,"added":10}},` +
		`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"l.v":"Apple","added":10101}},` +
		`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"l.v":"Cherry","added":1000}}]`
	if code != 200 || got != want {
		t.Errorf("LEFT join with a lookup (its rows not counted as subquery rows):\n got %d %s\nwant %s", code, got, want)
	}
	code, body, _ := b.query(t, q(ds("nope", "INNER")))
	if e := errorBody(t, body); code != 400 || !strings.Contains(e["errorMessage"].(string), "Lookup [nope] not found") {
		t.Errorf("unknown lookup: %d %s", code, body)
	}
}

// TestBroadcastTableJoin: a broadcastForever rule loads a table on every
// historical (the coordinator places it like any segment), and it is the
// right side of a join whose left side is spread over the three.
func TestBroadcastTableJoin(t *testing.T) {
	f := newDPFixture(t)
	var wikiIDs []string
	for d := 1; d <= 6; d++ {
		day := fmt.Sprintf("2013-09-%02d", d)
		seg := f.segment("wiki", day+"/"+fmt.Sprintf("2013-09-%02d", d+1), "v1", 0, 1, wikiRows(day, int64(d*10)))
		f.publish(seg)
		wikiIDs = append(wikiIDs, seg.ID().String())
	}
	cats := f.segment("cats", "2020-01-01/2020-01-02", "v1", 0, 1, []dpRow{
		{"2020-01-01T00:00:00Z", "Apple", 1}, {"2020-01-01T00:00:01Z", "Cherry", 3}})
	f.publish(cats)
	f.setRules("wiki", `[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`)
	f.setRules("cats", `[{"type":"broadcastForever"}]`)
	hs := []*dpHistorical{f.startHistorical(t.TempDir(), nil), f.startHistorical(t.TempDir(), nil), f.startHistorical(t.TempDir(), nil)}
	for _, h := range hs {
		h.node.Start()
	}
	b := startBroker(t, []string{hs[0].url, hs[1].url, hs[2].url}, nil)
	b.b.Start()
	eventually.True(t, "cats on every historical, each wiki segment on one", func() bool {
		held := holdersOf(hs...)
		if held[cats.ID().String()] != 3 {
			return false
		}
		for _, id := range wikiIDs {
			if held[id] != 1 {
				return false
			}
		}
		return true
	})
	b.waitSegments(t, "wiki", 6)
	b.waitSegments(t, "cats", 1)
	// Per day, Apple rows (×1) and Cherry rows (×3); Banana has no category.
	q := `{"queryType":"groupBy","dataSource":{"type":"join","left":"wiki","right":"cats","rightPrefix":"c.","condition":"page == \"c.page\"","joinType":"INNER"},
		"intervals":["2013-09-01/2013-09-07"],"granularity":"all","dimensions":["page"],
		"aggregations":[{"type":"longSum","name":"w","fieldName":"c.added"},{"type":"count","name":"n"}]}`
	code, got, _ := b.query(t, q)
	want := `[{"version":"v1","timestamp":"2013-09-01T00:00:00.000Z","event":{"page":"Apple","w":12,"n":12}},` +
		`{"version":"v1","timestamp":"2013-09-01T00:00:00.000Z","event":{"page":"Cherry","w":18,"n":6}}]`
	if code != 200 || got != want {
		t.Errorf("join with the broadcast table:\n got %d %s\nwant %s", code, got, want)
	}
	// The same through SQL.
	code, got, _ = sqlCall(t, b, `{"query":"SELECT w.page, SUM(c.added) AS s FROM wiki w JOIN cats c ON w.page = c.page GROUP BY 1 ORDER BY 1","resultFormat":"array"}`)
	if code != 200 || got != `[["Apple",12],["Cherry",18]]` {
		t.Errorf("SQL join with the broadcast table: %d %s", code, got)
	}
}
