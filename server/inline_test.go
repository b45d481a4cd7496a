package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// An inline data source answers exactly as a real segment of the same rows:
// the wiki fixture's rows sent inline give the broker's answers over the
// published segments, query type by query type.
func TestInlineAnswersLikeASegment(t *testing.T) {
	f := newDPFixture(t)
	publishWiki(f, "wiki")
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b := startBroker(t, []string{h.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 1)

	// The same rows as the four segments: their times, page, added, and the
	// segments' count metric (1 per row, no two rows roll up).
	var rows [][]any
	for i, d := range wikiDays {
		for _, r := range wikiRows(d, int64(10*i)) {
			rows = append(rows, []any{r.time, r.page, r.added, 1})
		}
	}
	inline, _ := json.Marshal(map[string]any{"type": "inline", "columnNames": []string{"__time", "page", "added", "count"},
		"columnTypes": []string{"LONG", "STRING", "LONG", "LONG"}, "rows": rows})

	const iv = `"intervals":["2013-08-31/2013-09-04"]`
	for name, q := range map[string]string{
		"timeseries by day": `{"queryType":"timeseries","dataSource":DS,` + iv + `,"granularity":"day",
			"aggregations":[{"type":"longSum","name":"rows","fieldName":"count"},{"type":"longSum","name":"added","fieldName":"added"},{"type":"doubleMax","name":"max","fieldName":"added"}]}`,
		"groupBy with filter and having": `{"queryType":"groupBy","dataSource":DS,` + iv + `,"granularity":"all","dimensions":["page"],
			"filter":{"type":"bound","dimension":"added","lower":"3","ordering":"numeric"},
			"aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"added","fieldName":"added"}],
			"having":{"type":"greaterThan","aggregation":"n","value":3}}`,
		"groupBy by hour bucket": `{"queryType":"groupBy","dataSource":DS,` + iv + `,"granularity":"day","dimensions":["page"],
			"aggregations":[{"type":"longMin","name":"min","fieldName":"added"}],"limitSpec":{"type":"default","limit":5,"columns":[{"dimension":"min","direction":"descending","dimensionOrder":"numeric"}]}}`,
		"topN by day": `{"queryType":"topN","dataSource":DS,` + iv + `,"granularity":"day","dimension":"page","metric":"added","threshold":2,
			"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`,
		"timeBoundary": `{"queryType":"timeBoundary","dataSource":DS}`,
		"search":       `{"queryType":"search","dataSource":DS,` + iv + `,"granularity":"all","query":{"type":"insensitive_contains","value":"an"}}`,
	} {
		code, want, _ := b.query(t, strings.Replace(q, "DS", `"wiki"`, 1))
		code2, got, _ := b.query(t, strings.Replace(q, "DS", string(inline), 1))
		if code != 200 || code2 != 200 || got != want {
			t.Errorf("%s:\n inline  %d %s\n segment %d %s", name, code2, got, code, want)
		}
	}

	// One difference is Druid's own: with granularity all, a segment's result
	// is stamped with its first row's time (the cursor covers the data's
	// interval) and a table's with the query interval's start (Druid's
	// row-based tables span all time).
	topN := `{"queryType":"topN","dataSource":DS,` + iv + `,"granularity":"all","dimension":"page","metric":"added","threshold":2,
		"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`
	_, seg, _ := b.query(t, strings.Replace(topN, "DS", `"wiki"`, 1))
	_, in, _ := b.query(t, strings.Replace(topN, "DS", string(inline), 1))
	const result = `"result":[{"page":"Apple","added":136},{"page":"Cherry","added":76}]}]`
	if seg != `[{"timestamp":"2013-08-31T01:00:00.000Z",`+result || in != `[{"timestamp":"2013-08-31T00:00:00.000Z",`+result {
		t.Errorf("topN over all time:\n segment %s\n inline  %s", seg, in)
	}
}
