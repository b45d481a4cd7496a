package server

import (
	"strings"
	"testing"
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
		{`{"type":"join","left":"wiki","right":` + cats + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"INNER","leftFilter":{"type":"true"}}`, 501, "UNSUPPORTED", "leftFilter"},
		{`{"type":"join","left":"wiki","right":` + cats + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"RIGHT"}`, 501, "UNSUPPORTED", "RIGHT"},
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
