package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"strata/querynode/query"
)

func TestScan(t *testing.T) {
	rows := genRows(1000, 2, 21)
	segs := buildSegments(t, rows, 100)
	res := arr(runJSON(t, segs, `{"queryType":"scan","dataSource":"test","intervals":["2024-01-01/2024-01-03"],
		"columns":["__time","channel","added","tags","price"],"batchSize":7,"limit":20,"offset":3,
		"filter":{"type":"not","field":{"type":"null","column":"added"}}}`))
	var want []testRow
	for _, r := range rows {
		if r.added != nil {
			want = append(want, r)
		}
	}
	want = want[3:23]
	var got []map[string]any
	for _, b := range res {
		bo := obj(b)
		if !strings.HasPrefix(bo["segmentId"].(string), "test_2024-01-01") {
			t.Errorf("segmentId %v", bo["segmentId"])
		}
		if len(arr(bo["rowSignature"])) != 5 {
			t.Errorf("rowSignature %v", bo["rowSignature"])
		}
		for _, e := range arr(bo["events"]) {
			got = append(got, obj(e))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		checkNum(t, "__time", g["__time"], f64p(float64(w.t)))
		checkNum(t, "added", g["added"], f64p(float64(*w.added)))
		checkNum(t, "price", g["price"], f64p(w.price))
		if (w.channel == nil) != (g["channel"] == nil) || w.channel != nil && g["channel"] != *w.channel {
			t.Errorf("row %d channel %v", i, g["channel"])
		}
		switch len(w.tags) {
		case 0:
			if g["tags"] != nil {
				t.Errorf("row %d tags %v", i, g["tags"])
			}
		case 1:
			if g["tags"] != w.tags[0] {
				t.Errorf("row %d tags %v want %v", i, g["tags"], w.tags)
			}
		default:
			if fmt.Sprint(arr(g["tags"])) != fmt.Sprint(w.tags) {
				t.Errorf("row %d tags %v want %v", i, g["tags"], w.tags)
			}
		}
	}
	// compactedList, descending order across segments.
	res = arr(runJSON(t, segs, `{"queryType":"scan","dataSource":"test","intervals":["2024-01-01/2024-01-03"],
		"columns":["__time","page"],"resultFormat":"compactedList","order":"descending","limit":5}`))
	if len(res) != 1 || obj(res[0])["segmentId"] != nil {
		t.Fatalf("got %v", res)
	}
	ev := arr(obj(res[0])["events"])
	for i := range 5 {
		r := rows[len(rows)-1-i]
		e := arr(ev[i])
		checkNum(t, "time", e[0], f64p(float64(r.t)))
		if e[1] != r.page {
			t.Errorf("page %v want %s", e[1], r.page)
		}
	}
}

// jsonClose compares two JSON documents, numbers with a relative
// tolerance (float sums depend on the merge order).
func jsonClose(a, b []byte) bool {
	var x, y any
	da := json.NewDecoder(strings.NewReader(string(a)))
	da.UseNumber()
	db := json.NewDecoder(strings.NewReader(string(b)))
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return valuesClose(x, y)
}

func valuesClose(x, y any) bool {
	switch xv := x.(type) {
	case json.Number:
		f, ok1 := num(xv)
		g, ok2 := num(y)
		return ok1 && ok2 && closeEnough(f, g)
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !valuesClose(xv[i], yv[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for k := range xv {
			if !valuesClose(xv[k], yv[k]) {
				return false
			}
		}
		return true
	}
	return x == y
}

func TestTimeBoundaryAndMetadata(t *testing.T) {
	rows := genRows(1500, 3, 22)
	segs := buildSegments(t, rows, 100)
	res := arr(runJSON(t, segs, `{"queryType":"timeBoundary","dataSource":"test"}`))
	r := obj(obj(res[0])["result"])
	if r["minTime"] != formatMs(rows[0].t) || r["maxTime"] != formatMs(rows[len(rows)-1].t) {
		t.Errorf("got %v", res)
	}
	res = arr(runJSON(t, segs, `{"queryType":"timeBoundary","dataSource":"test","bound":"maxTime",
		"filter":{"type":"selector","dimension":"channel","value":"#ch4"}}`))
	var last int64
	for _, row := range rows {
		if chanIs(row, "#ch4") {
			last = row.t
		}
	}
	if obj(res[0])["timestamp"] != formatMs(last) || len(obj(obj(res[0])["result"])) != 1 {
		t.Errorf("got %v", res)
	}
	res = arr(runJSON(t, segs, `{"queryType":"timeBoundary","dataSource":"test","intervals":["2030-01-01/2030-01-02"]}`))
	if len(res) != 0 {
		t.Errorf("got %v", res)
	}
	res = arr(runJSON(t, segs, `{"queryType":"dataSourceMetadata","dataSource":"test"}`))
	if obj(obj(res[0])["result"])["maxIngestedEventTime"] != formatMs(rows[len(rows)-1].t) ||
		obj(res[0])["timestamp"] != "2024-01-03T00:00:00.000Z" {
		t.Errorf("got %v", res)
	}
	res = arr(runJSON(t, segs, `{"queryType":"segmentMetadata","dataSource":"test","intervals":["2024-01-01/2024-01-02"]}`))
	if len(res) != 1 {
		t.Fatalf("got %v", res)
	}
	a := obj(res[0])
	cols := obj(a["columns"])
	ch := obj(cols["channel"])
	if ch["typeSignature"] != "STRING" || ch["hasNulls"] != true || ch["minValue"] != "#ch0" || ch["maxValue"] != "#ch7" {
		t.Errorf("channel analysis %v", ch)
	}
	if card, _ := num(ch["cardinality"]); card != 9 {
		t.Errorf("cardinality %v", ch["cardinality"])
	}
	if obj(cols["users_hll"])["typeSignature"] != "COMPLEX<HLLSketch>" || obj(cols["tags"])["hasMultipleValues"] != true {
		t.Errorf("columns %v", cols)
	}
	if iv := arr(a["intervals"]); len(iv) != 1 || iv[0] != "2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z" {
		t.Errorf("intervals %v", a["intervals"])
	}
	res = arr(runJSON(t, segs, `{"queryType":"segmentMetadata","dataSource":"test","merge":true,
		"analysisTypes":["cardinality","rollup"],"toInclude":{"type":"list","columns":["page","added"]}}`))
	a = obj(res[0])
	n, _ := num(a["numRows"])
	if len(res) != 1 || a["id"] != "merged" || int(n) != len(rows) || a["intervals"] != nil || a["rollup"] != false || len(obj(a["columns"])) != 2 {
		t.Errorf("merged %v", res)
	}
}

func TestSearch(t *testing.T) {
	rows := genRows(2000, 1, 23)
	segs := buildSegments(t, rows, 100)
	res := arr(runJSON(t, segs, `{"queryType":"search","dataSource":"test","intervals":["2024-01-01/2024-01-02"],
		"searchDimensions":["page","channel"],"query":{"type":"insensitive_contains","value":"_1"},"limit":100}`))
	counts := map[string]int{}
	for _, r := range rows {
		if strings.Contains(r.page, "_1") {
			counts[r.page]++
		}
	}
	hits := arr(obj(res[0])["result"])
	if len(hits) != len(counts) {
		t.Fatalf("got %d hits, want %d", len(hits), len(counts))
	}
	prev := ""
	for _, h := range hits {
		ho := obj(h)
		v := ho["value"].(string)
		if ho["dimension"] != "page" || v < prev {
			t.Errorf("hit %v", ho)
		}
		prev = v
		checkNum(t, v, ho["count"], f64p(float64(counts[v])))
	}
}

func TestSketchAggregators(t *testing.T) {
	rows := genRows(4000, 2, 24)
	segs := buildSegments(t, rows, 256)
	users := map[string]bool{}
	pages := map[string]bool{}
	for _, r := range rows {
		users[r.user] = true
		pages[r.page+"|"+derefOr(r.channel)] = true
	}
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"aggregations":[
		{"type":"cardinality","name":"card","fields":["user"]},
		{"type":"cardinality","name":"rowcard","fields":["page","channel"],"byRow":true,"round":true},
		{"type":"HLLSketchMerge","name":"hllm","fieldName":"users_hll"},
		{"type":"HLLSketchBuild","name":"hllb","fieldName":"user","round":true},
		{"type":"thetaSketch","name":"th","fieldName":"users_theta"},
		{"type":"thetaSketch","name":"thb","fieldName":"user"},
		{"type":"hyperUnique","name":"hu","fieldName":"users_hll"}],
		"postAggregations":[{"type":"hyperUniqueCardinality","name":"huc","fieldName":"hu"},
		{"type":"thetaSketchEstimate","name":"the","field":{"type":"fieldAccess","fieldName":"th"}}]}`))
	r := obj(obj(res[0])["result"])
	n := float64(len(users))
	for _, k := range []string{"card", "hllm", "hllb", "th", "thb", "hu", "huc", "the"} {
		got, ok := num(r[k])
		if !ok || math.Abs(got-n) > 0.03*n {
			t.Errorf("%s: %v, want about %v", k, r[k], n)
		}
	}
	if got, _ := num(r["rowcard"]); math.Abs(got-float64(len(pages))) > 0.05*float64(len(pages)) {
		t.Errorf("rowcard %v want about %d", r["rowcard"], len(pages))
	}
	if _, isInt := r["hllb"].(json.Number); !isInt || strings.Contains(string(r["hllb"].(json.Number)), ".") {
		t.Errorf("rounded HLL should be a long: %v", r["hllb"])
	}
	// Unfinalized sketches render as base64.
	res = arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"aggregations":[{"type":"HLLSketchMerge","name":"h","fieldName":"users_hll"}],
		"context":{"finalize":false}}`))
	if s, ok := obj(obj(res[0])["result"])["h"].(string); !ok || len(s) < 8 {
		t.Errorf("unfinalized: %v", res)
	}
}

func derefOr(s *string) string {
	if s == nil {
		return "\x00"
	}
	return *s
}

func TestFirstLast(t *testing.T) {
	rows := genRows(3000, 2, 25)
	segs := buildSegments(t, rows, 200)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"dimensions":["channel"],"aggregations":[
		{"type":"longFirst","name":"lf","fieldName":"added"},{"type":"longLast","name":"ll","fieldName":"added"},
		{"type":"doubleFirst","name":"df","fieldName":"price"},{"type":"stringLast","name":"sl","fieldName":"page"},
		{"type":"stringFirst","name":"sf","fieldName":"first_page"},{"type":"floatLast","name":"fl","fieldName":"weight"}]}`))
	type fl struct{ first, last *testRow }
	m := map[string]*fl{}
	for i := range rows {
		r := &rows[i]
		k := derefOr(r.channel)
		e := m[k]
		if e == nil {
			e = &fl{}
			m[k] = e
		}
		if e.first == nil || r.t < e.first.t {
			e.first = r
		}
		if e.last == nil || r.t >= e.last.t {
			e.last = r
		}
	}
	for _, row := range res {
		ev := obj(obj(row)["event"])
		k := "\x00"
		if ev["channel"] != nil {
			k = ev["channel"].(string)
		}
		e := m[k]
		want := func(p *int64) *float64 {
			if p == nil {
				return nil
			}
			return f64p(float64(*p))
		}
		// Equal times may pick different rows; only check when unique.
		checkNum(t, "lf", ev["lf"], want(e.first.added))
		checkNum(t, "ll", ev["ll"], want(e.last.added))
		checkNum(t, "df", ev["df"], f64p(e.first.price))
		checkNum(t, "fl", ev["fl"], f64p(float64(e.last.weight)))
		if ev["sl"] != e.last.page || ev["sf"] != e.first.page {
			t.Errorf("%s: sl %v sf %v want %s %s", k, ev["sl"], ev["sf"], e.last.page, e.first.page)
		}
	}
}

// TestMergeAcrossServers runs each segment separately, ships partials
// through JSON, merges them, and compares with running all at once.
func TestMergeAcrossServers(t *testing.T) {
	for _, parallelFrom := range []int{1 << 16, 1} {
		old := parallelMergeRows
		parallelMergeRows = parallelFrom
		testMergeAcrossServers(t)
		parallelMergeRows = old
	}
}

func testMergeAcrossServers(t *testing.T) {
	rows := genRows(4000, 4, 26)
	segs := buildSegments(t, rows, 300)
	queries := []string{
		`{"queryType":"timeseries","dataSource":"test","granularity":"day","intervals":["2024-01-01/2024-01-05"],
		  "aggregations":[{"type":"count","name":"c"},{"type":"doubleMin","name":"m","fieldName":"price"},{"type":"thetaSketch","name":"t","fieldName":"user"},{"type":"longLast","name":"l","fieldName":"added"}]}`,
		`{"queryType":"topN","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimension":"page","metric":"c","threshold":4,
		  "aggregations":[{"type":"count","name":"c"},{"type":"cardinality","name":"u","fields":["user"]}]}`,
		`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel","tags"],
		  "aggregations":[{"type":"count","name":"c"},{"type":"doubleSum","name":"p","fieldName":"price"}]}`,
		`{"queryType":"groupBy","dataSource":"test","granularity":"day","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel"],
		  "aggregations":[{"type":"count","name":"c"},{"type":"stringFirst","name":"f","fieldName":"page"}]}`,
		`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["page"],
		  "aggregations":[{"type":"longSum","name":"s","fieldName":"added"}],"limitSpec":{"type":"default","limit":5,"columns":[{"dimension":"s","direction":"descending"}]}}`,
		`{"queryType":"scan","dataSource":"test","intervals":["2024-01-01/2024-01-05"],"columns":["__time","page"],"limit":10,"order":"descending"}`,
		`{"queryType":"search","dataSource":"test","intervals":["2024-01-01/2024-01-05"],"query":{"type":"contains","value":"a"}}`,
		`{"queryType":"timeBoundary","dataSource":"test"}`,
		// k large enough that every group's sketch stays exact, whatever the merge order.
		`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel"],
		  "aggregations":[{"type":"quantilesDoublesSketch","name":"q","fieldName":"price","k":1024}],
		  "postAggregations":[{"type":"quantilesDoublesSketchToQuantiles","name":"qs","field":{"type":"fieldAccess","fieldName":"q"},"fractions":[0,0.5,0.9,1]},
		  {"type":"quantilesDoublesSketchToHistogram","name":"h","field":{"type":"fieldAccess","fieldName":"q"},"numBins":4}]}`,
		`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel"],
		  "aggregations":[{"type":"variance","name":"v","fieldName":"price"}],"postAggregations":[{"type":"stddev","name":"sd","fieldName":"v","estimator":"population"}]}`,
		`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel"],
		  "aggregations":[{"type":"expression","name":"x","fields":["added"],"initialValue":"0","fold":"bitwiseXor(\"__acc\", \"added\")"}]}`,
		// ARRAY_AGG(DISTINCT page) and STRING_AGG(channel) as Druid SQL plans them.
		`{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-05"],"dimensions":["channel"],
		  "aggregations":[{"type":"expression","name":"a","fields":["page"],"initialValue":"ARRAY<STRING>[]","fold":"array_set_add(\"__acc\", \"page\")","combine":"array_set_add_all(\"__acc\", \"a\")"},
		  {"type":"filtered","filter":{"type":"not","field":{"type":"null","column":"user"}},"aggregator":{"type":"expression","name":"s","fields":["user"],
		   "fold":"array_set_add(\"__acc\", \"user\")","combine":"array_set_add_all(\"__acc\", \"s\")","maxSizeBytes":100000,"finalize":"if(array_length(o) == 0, null, array_to_string(o, '|'))"}}],
		  "postAggregations":[{"type":"expression","name":"n","expression":"array_length(\"a\")"},{"type":"expression","name":"has","expression":"array_contains(\"a\", 'Page_01')"}]}`,
	}
	e := New(Options{})
	for _, qs := range queries {
		q, err := query.Parse([]byte(qs))
		if err != nil {
			t.Fatal(err)
		}
		whole, err := e.Execute(context.Background(), q, segs)
		if err != nil {
			t.Fatal(err)
		}
		var parts []*Partial
		for _, s := range segs {
			p, err := e.RunSegment(context.Background(), q, s)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back Partial
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if err := back.Attach(q); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, &back)
		}
		// Merge in two levels, as broker over historicals.
		a, err := e.Merge(q, parts[:2])
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Merge(q, parts[2:])
		if err != nil {
			t.Fatal(err)
		}
		m, err := e.Merge(q, []*Partial{a, b})
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Finalize(q, m)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonClose(out, whole) {
			t.Errorf("%s:\nmerged %s\nwhole  %s", q.Type, out, whole)
		}
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	segs := buildSegments(t, genRows(2000, 2, 27), 64)
	q, err := query.Parse([]byte(`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-03"],
		"aggregations":[{"type":"count","name":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = New(Options{}).Execute(ctx, q, segs)
	if qe := query.AsError(err); qe == nil || qe.Kind != query.Cancelled || qe.HTTPStatus() != 500 {
		t.Errorf("cancel: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, err = New(Options{}).Execute(ctx, q, segs)
	if qe := query.AsError(err); qe == nil || qe.Kind != query.Timeout || qe.HTTPStatus() != 504 || qe.LegacyCode() != "Query timeout" {
		t.Errorf("timeout: %v", err)
	}
}
