package query

import (
	"slices"
	"testing"
)

func TestTables(t *testing.T) {
	for _, c := range []struct {
		body string
		want []string
	}{
		{`{"queryType":"timeseries","dataSource":"wiki","intervals":["2020/2021"],"granularity":"all"}`, []string{"wiki"}},
		{`{"queryType":"timeseries","dataSource":{"type":"union","dataSources":["a","b",{"type":"table","name":"a"}]},"intervals":["2020/2021"],"granularity":"all"}`, []string{"a", "b"}},
		{`{"queryType":"timeseries","dataSource":{"type":"query","query":{"queryType":"groupBy","dataSource":{"type":"query","query":
			{"queryType":"scan","dataSource":{"type":"union","dataSources":["secret","wiki"]},"intervals":["2020/2021"]}},
			"intervals":["2020/2021"],"granularity":"all","dimensions":["page"]}},"intervals":["2020/2021"],"granularity":"all"}`, []string{"secret", "wiki"}},
		{`{"queryType":"scan","dataSource":{"type":"inline","columnNames":["x"],"rows":[[1]]},"intervals":["2020/2021"]}`, nil},
		// Every side of a join: the left, a table right side, the tables of a
		// query right side (a lookup is no table), at any depth.
		{`{"queryType":"scan","intervals":["2020/2021"],"dataSource":{"type":"join","joinType":"INNER","rightPrefix":"r.","condition":"x == \"r.x\"",
			"left":{"type":"join","left":"wiki","right":"secret","rightPrefix":"s.","condition":"x == \"s.x\"","joinType":"LEFT"},
			"right":{"type":"query","query":{"queryType":"scan","intervals":["2020/2021"],"dataSource":{"type":"join","left":"other","right":{"type":"lookup","lookup":"l"},
				"rightPrefix":"l.","condition":"x == \"l.k\"","joinType":"INNER"}}}}}`, []string{"wiki", "secret", "other"}},
	} {
		q, err := Parse([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if got := q.Tables(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Tables() = %v, want %v", c.body, got, c.want)
		}
	}
}
