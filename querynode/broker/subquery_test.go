package broker

import (
	"context"
	"strings"
	"testing"
)

func newTestBroker(t *testing.T, maxRows int64) *Broker {
	t.Helper()
	b, err := New(Config{Name: "b:8082", MaxSubqueryRows: maxRows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

const fruit = `{"type":"inline","columnNames":["__time","page","user","added"],"rows":[
	["2024-01-01T01:00:00Z","Apple","u1",1],["2024-01-01T02:00:00Z","Apple","u2",3],["2024-01-01T03:00:00Z","Banana","u1",2],
	["2024-01-02T01:00:00Z","Apple","u1",5],["2024-01-02T05:00:00Z","Cherry","u3",4],["2024-01-03T00:00:00Z","Cherry","u3",6]]}`

// pagesPerUser counts the rows per user and day.
const pagesPerUser = `{"queryType":"groupBy","dataSource":` + fruit + `,"intervals":["2024-01-01/2024-01-04"],"granularity":"day",
	"dimensions":["user"],"aggregations":[{"type":"count","name":"pages"},{"type":"longSum","name":"added","fieldName":"added"}]}`

func TestInlineAndQueryDataSources(t *testing.T) {
	b := newTestBroker(t, 0)
	cases := []struct{ name, q, want string }{
		{"inline without columnTypes", `{"queryType":"groupBy","dataSource":` + fruit + `,"intervals":["2024/2025"],"granularity":"all",
			"dimensions":["page"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"n"}]}`,
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"Apple","added":9,"n":3}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"Banana","added":2,"n":1}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"Cherry","added":10,"n":2}}]`},
		{"inline with columnTypes, rows at the epoch", `{"queryType":"scan","intervals":["1970/1971"],"dataSource":{"type":"inline",
			"columnNames":["k","v"],"columnTypes":["STRING","DOUBLE"],"rows":[["b",1],["a","2.5"],[3,null]]}}`,
			`[{"segmentId":"inline","columns":["__time","k","v"],"events":[{"__time":0,"k":"b","v":1.0},{"__time":0,"k":"a","v":2.5},{"__time":0,"k":"3","v":null}],` +
				`"rowSignature":[{"name":"__time","type":"LONG"},{"name":"k","type":"STRING"},{"name":"v","type":"DOUBLE"}]}]`},
		{"outer intervals filter inline rows", `{"queryType":"timeseries","dataSource":` + fruit + `,"intervals":["2024-01-02/2024-01-03"],
			"granularity":"all","aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`,
			`[{"timestamp":"2024-01-02T00:00:00.000Z","result":{"added":9}}]`},
		{"groupBy over groupBy: average pages per user", `{"queryType":"groupBy","dataSource":{"type":"query","query":` + pagesPerUser + `},
			"intervals":["2024-01-01/2024-01-04"],"granularity":"all","dimensions":["user"],
			"aggregations":[{"type":"longSum","name":"pages","fieldName":"pages"},{"type":"count","name":"days"}],
			"postAggregations":[{"type":"arithmetic","name":"avg","fn":"/","fields":[{"type":"fieldAccess","fieldName":"pages"},{"type":"fieldAccess","fieldName":"days"}]}]}`,
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"user":"u1","pages":3,"days":2,"avg":1.5}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"user":"u2","pages":1,"days":1,"avg":1.0}},` +
				`{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"user":"u3","pages":2,"days":2,"avg":1.0}}]`},
		{"timeseries over groupBy, day buckets from the inner timestamps", `{"queryType":"timeseries","dataSource":{"type":"query","query":` + pagesPerUser + `},
			"intervals":["2024-01-01/2024-01-04"],"granularity":"day","aggregations":[{"type":"count","name":"users"},{"type":"longMax","name":"most","fieldName":"pages"}]}`,
			`[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"users":2,"most":2}},{"timestamp":"2024-01-02T00:00:00.000Z","result":{"users":2,"most":1}},` +
				`{"timestamp":"2024-01-03T00:00:00.000Z","result":{"users":1,"most":1}}]`},
		{"query of query of inline", `{"queryType":"timeseries","intervals":["2024/2025"],"granularity":"all",
			"dataSource":{"type":"query","query":{"queryType":"topN","intervals":["2024/2025"],"granularity":"all","dimension":"user","metric":"pages","threshold":2,
				"aggregations":[{"type":"longSum","name":"pages","fieldName":"pages"}],"dataSource":{"type":"query","query":` + pagesPerUser + `}}},
			"aggregations":[{"type":"longSum","name":"top2","fieldName":"pages"},{"type":"count","name":"n"}]}`,
			`[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"top2":5,"n":2}}]`},
		{"scan subquery, compactedList", `{"queryType":"groupBy","intervals":["2024/2025"],"granularity":"all","dimensions":["page"],
			"aggregations":[{"type":"count","name":"n"}],"dataSource":{"type":"query","query":{"queryType":"scan","intervals":["2024/2025"],
			"resultFormat":"compactedList","columns":["page","__time"],"filter":{"type":"selector","dimension":"user","value":"u1"},"dataSource":` + fruit + `}}}`,
			`[{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"Apple","n":2}},{"version":"v1","timestamp":"2024-01-01T00:00:00.000Z","event":{"page":"Banana","n":1}}]`},
		{"timeBoundary over inline", `{"queryType":"timeBoundary","dataSource":` + fruit + `}`,
			`[{"timestamp":"2024-01-01T01:00:00.000Z","result":{"minTime":"2024-01-01T01:00:00.000Z","maxTime":"2024-01-03T00:00:00.000Z"}}]`},
		{"buckets without rows are zero-filled over the query intervals, as Druid does over inline rows",
			`{"queryType":"timeseries","intervals":["2024-01-01/2024-01-04"],"granularity":"day","aggregations":[{"type":"count","name":"n"}],
			"dataSource":{"type":"inline","columnNames":["__time"],"rows":[[1704153600000],[1704153600001]]}}`,
			`[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"n":0}},{"timestamp":"2024-01-02T00:00:00.000Z","result":{"n":2}},` +
				`{"timestamp":"2024-01-03T00:00:00.000Z","result":{"n":0}}]`},
		{"empty inline", `{"queryType":"timeseries","intervals":["2024/2025"],"granularity":"all","dataSource":{"type":"inline","columnNames":["a"],"rows":[]},
			"aggregations":[{"type":"count","name":"n"}]}`, `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"n":0}}]`},
	}
	for _, c := range cases {
		_, out, qerr := b.Query(context.Background(), []byte(c.q))
		if qerr != nil {
			t.Errorf("%s: %+v", c.name, qerr)
			continue
		}
		if string(out) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, out, c.want)
		}
	}
}

func TestSubqueryRowLimit(t *testing.T) {
	// pagesPerUser has 5 rows.
	ts := func(ctx string) string {
		return `{"queryType":"timeseries","intervals":["2024/2025"],"granularity":"all","dataSource":{"type":"query","query":` + pagesPerUser + `},
			"aggregations":[{"type":"count","name":"n"}]` + ctx + `}`
	}
	nested := func(ctx string) string { // 5 inner rows, then 3 middle rows
		return `{"queryType":"timeseries","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"n"}],
			"dataSource":{"type":"query","query":{"queryType":"scan","intervals":["2024/2025"],"dataSource":{"type":"query","query":` + pagesPerUser + `}}}` + ctx + `}`
	}
	gbgb := `{"queryType":"groupBy","intervals":["2024/2025"],"granularity":"all","dimensions":[],"aggregations":[{"type":"count","name":"n"}],
		"dataSource":{"type":"query","query":` + pagesPerUser + `},"context":{"maxSubqueryRows":1}}`
	server2 := newTestBroker(t, 2)
	unlimited := newTestBroker(t, -1)
	cases := []struct {
		b     *Broker
		q     string
		limit string // "" when the query succeeds
	}{
		{server2, ts(""), "2"},
		{server2, ts(`,"context":{"maxSubqueryRows":5}`), ""},
		{server2, ts(`,"context":{"maxSubqueryRows":4}`), "4"},
		{server2, ts(`,"context":{"maxSubqueryRows":-1}`), ""},
		{server2, ts(`,"context":{"maxSubqueryRows":0}`), "0"},
		{unlimited, ts(""), ""},
		{unlimited, nested(`,"context":{"maxSubqueryRows":10}`), ""},
		{unlimited, nested(`,"context":{"maxSubqueryRows":9}`), "9"}, // the limit is on all subqueries together
		{unlimited, nested(`,"context":{"maxSubqueryRows":5}`), "5"}, // the scan cannot even be issued
		{server2, gbgb, ""},                                          // a groupBy reads a groupBy itself, as Druid does
	}
	for _, c := range cases {
		_, out, qerr := c.b.Query(context.Background(), []byte(c.q))
		switch {
		case c.limit == "" && qerr != nil:
			t.Errorf("%s: %+v", c.q, qerr)
		case c.limit == "":
		case qerr == nil:
			t.Errorf("%s: no error but %s", c.q, out)
		case qerr.Status != 400 || qerr.Code != CodeResourceLimit ||
			!strings.HasPrefix(qerr.Message, "Cannot issue the query, subqueries generated results beyond maximum["+c.limit+"] rows."):
			t.Errorf("%s: %+v", c.q, qerr)
		}
	}
}

func TestSubqueryErrors(t *testing.T) {
	b := newTestBroker(t, 0)
	cases := []struct {
		q      string
		status int
		msg    string
	}{
		{`{"queryType":"scan","intervals":["2024/2025"],"dataSource":{"type":"lookup","lookup":"x"}}`, 400, "Lookup [x] not found"},
		{`{"queryType":"scan","intervals":["2024/2025"],"dataSource":{"type":"inline","columnNames":["a"],"rows":[[1,2]]}}`, 400, "row 0 has 2 values"},
		{`{"queryType":"scan","intervals":["2024/2025"],"dataSource":{"type":"inline","columnNames":["__time"],"rows":[["soon"]]}}`, 400, "__time"},
		{`{"queryType":"scan","intervals":["2024/2025"],"dataSource":{"type":"query","query":{"queryType":"search","dataSource":"w","intervals":["2024/2025"],"query":{"type":"contains","value":"a"}}}}`, 501, "subquery"},
	}
	for _, c := range cases {
		_, _, qerr := b.Query(context.Background(), []byte(c.q))
		if qerr == nil || qerr.Status != c.status || !strings.Contains(qerr.Message, c.msg) {
			t.Errorf("%s: %+v, want %d with %q", c.q, qerr, c.status, c.msg)
		}
	}
}
