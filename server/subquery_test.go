package server

import (
	"strings"
	"sync/atomic"
	"testing"
)

// Query data sources over tables served by two historicals: the broker
// scatters the inner query as usual and evaluates the outer one itself.
func TestBrokerSubqueries(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	var n1, n2 atomic.Int64
	h1 := f.startHistorical(t.TempDir(), subQueryCounter(&n1))
	h2 := f.startHistorical(t.TempDir(), subQueryCounter(&n2))
	h1.node.Start()
	h2.node.Start()
	b := startBroker(t, []string{h1.url, h2.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 2)

	const iv = `"intervals":["2013-08-31/2013-09-04"]`
	// Per page and day: rows and added (Apple 2 rows a day, the others 1).
	daily := `{"queryType":"groupBy","dataSource":"wiki",` + iv + `,"granularity":"day","dimensions":["page"],
		"aggregations":[{"type":"count","name":"rows"},{"type":"longSum","name":"added","fieldName":"added"}]}`
	over := func(inner string) string { return `{"type":"query","query":` + inner + `}` }
	cases := []struct{ name, q, want string }{
		{"groupBy over groupBy: daily average per page", `{"queryType":"groupBy","dataSource":` + over(daily) + `,` + iv + `,"granularity":"all",
			"dimensions":["page"],"aggregations":[{"type":"count","name":"days"},{"type":"longSum","name":"added","fieldName":"added"},{"type":"longMax","name":"maxRows","fieldName":"rows"}],
			"postAggregations":[{"type":"arithmetic","name":"avg","fn":"/","fields":[{"type":"fieldAccess","fieldName":"added"},{"type":"fieldAccess","fieldName":"days"}]}]}`,
			`[{"version":"v1","timestamp":"2013-08-31T00:00:00.000Z","event":{"page":"Apple","days":4,"added":136,"maxRows":2,"avg":34.0}},` +
				`{"version":"v1","timestamp":"2013-08-31T00:00:00.000Z","event":{"page":"Banana","days":4,"added":68,"maxRows":1,"avg":17.0}},` +
				`{"version":"v1","timestamp":"2013-08-31T00:00:00.000Z","event":{"page":"Cherry","days":4,"added":76,"maxRows":1,"avg":19.0}}]`},
		{"timeseries over groupBy", `{"queryType":"timeseries","dataSource":` + over(daily) + `,` + iv + `,"granularity":"day",
			"aggregations":[{"type":"count","name":"pages"},{"type":"longSum","name":"added","fieldName":"added"}]}`,
			`[{"timestamp":"2013-08-31T00:00:00.000Z","result":{"pages":3,"added":10}},{"timestamp":"2013-09-01T00:00:00.000Z","result":{"pages":3,"added":50}},` +
				`{"timestamp":"2013-09-02T00:00:00.000Z","result":{"pages":3,"added":90}},{"timestamp":"2013-09-03T00:00:00.000Z","result":{"pages":3,"added":130}}]`},
		{"outer intervals filter the inner rows", `{"queryType":"timeseries","dataSource":` + over(daily) + `,"intervals":["2013-09-01/2013-09-03"],"granularity":"day",
			"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`,
			`[{"timestamp":"2013-09-01T00:00:00.000Z","result":{"added":50}},{"timestamp":"2013-09-02T00:00:00.000Z","result":{"added":90}}]`},
		{"query of query of table", `{"queryType":"timeseries",` + iv + `,"granularity":"all","aggregations":[{"type":"longMax","name":"top","fieldName":"added"},{"type":"count","name":"pages"}],
			"dataSource":` + over(`{"queryType":"groupBy",`+iv+`,"granularity":"all","dimensions":["page"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],
				"dataSource":`+over(daily)+`}`) + `}`,
			`[{"timestamp":"2013-08-31T00:00:00.000Z","result":{"top":136,"pages":3}}]`},
		{"topN subquery", `{"queryType":"timeseries",` + iv + `,"granularity":"all","aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"n"}],
			"dataSource":` + over(`{"queryType":"topN","dataSource":"wiki",`+iv+`,"granularity":"all","dimension":"page","metric":"added","threshold":2,
				"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`) + `}`,
			`[{"timestamp":"2013-08-31T00:00:00.000Z","result":{"added":212,"n":2}}]`},
		{"scan subquery keeps the row times", `{"queryType":"timeseries",` + iv + `,"granularity":"day","aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],
			"dataSource":` + over(`{"queryType":"scan","dataSource":"wiki",`+iv+`,"columns":["__time","added"],"filter":{"type":"selector","dimension":"page","value":"Apple"}}`) + `}`,
			`[{"timestamp":"2013-08-31T00:00:00.000Z","result":{"added":4}},{"timestamp":"2013-09-01T00:00:00.000Z","result":{"added":24}},` +
				`{"timestamp":"2013-09-02T00:00:00.000Z","result":{"added":44}},{"timestamp":"2013-09-03T00:00:00.000Z","result":{"added":64}}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n1.Store(0)
			n2.Store(0)
			code, got, _ := b.query(t, c.q)
			if code != 200 || got != c.want {
				t.Errorf("%s: %d\n got %s\nwant %s", c.name, code, got, c.want)
			}
			if n1.Load() != 1 || n2.Load() != 1 {
				t.Errorf("%s: sub-queries per historical %d and %d, want one each", c.name, n1.Load(), n2.Load())
			}
		})
	}

	// Re-aggregating a groupBy's rows gives what the table query gives.
	direct := `{"queryType":"groupBy","dataSource":"wiki",` + iv + `,"granularity":"all","dimensions":["page"],
		"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"longSum","name":"rows","fieldName":"rows"}]}`
	code, want, _ := b.query(t, strings.Replace(direct, `{"type":"longSum","name":"rows","fieldName":"rows"}`, `{"type":"count","name":"rows"}`, 1))
	code2, got, _ := b.query(t, strings.Replace(direct, `"dataSource":"wiki"`, `"dataSource":`+over(daily), 1))
	if code != 200 || code2 != 200 || got != want {
		t.Errorf("groupBy of groupBy %d %s\ndirect groupBy %d %s", code2, got, code, want)
	}

	// The rows of subqueries are bounded: 12 daily rows.
	ts := `{"queryType":"timeseries","dataSource":` + over(daily) + `,` + iv + `,"granularity":"all","aggregations":[{"type":"count","name":"n"}]`
	if code, body, _ := b.query(t, ts+`,"context":{"maxSubqueryRows":12}}`); code != 200 || !strings.Contains(body, `"n":12`) {
		t.Errorf("at the limit: %d %s", code, body)
	}
	code, body, _ := b.query(t, ts+`,"context":{"maxSubqueryRows":11}}`)
	e := errorBody(t, body)
	if code != 400 || e["error"] != "Resource limit exceeded" ||
		!strings.HasPrefix(e["errorMessage"].(string), "Cannot issue the query, subqueries generated results beyond maximum[11] rows.") {
		t.Errorf("over the limit: %d %s", code, body)
	}
}
