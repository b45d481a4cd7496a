package server

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// aggCase is a SQL statement, the native query written by hand that should
// answer it, and the SQL rows (array format) both must give.
type aggCase struct{ sql, native, want string }

// checkAgainstNative runs each case through SQL and its native query on a
// real broker and historical: the SQL rows must be want, and every scalar
// of want must be in the native answer.
func checkAgainstNative(t *testing.T, b *dpBroker, cases []aggCase) {
	t.Helper()
	for _, c := range cases {
		code, body, _ := sqlCall(t, b, `{"resultFormat":"array","query":`+strings.TrimSpace(string(mustJSON(c.sql)))+`}`)
		if code != 200 || body != c.want {
			t.Errorf("%s:\n got %d %s\nwant %s", c.sql, code, body, c.want)
		}
		ncode, nbody, _ := b.query(t, c.native)
		if ncode != 200 {
			t.Errorf("native %s: %d %s", c.native, ncode, nbody)
			continue
		}
		var rows, answer any
		if err := json.Unmarshal([]byte(c.want), &rows); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(nbody), &answer); err != nil {
			t.Fatal(err)
		}
		have := scalars(answer)
		for _, v := range scalars(rows) {
			if s, ok := v.(string); ok && strings.HasSuffix(s, ".000Z") {
				continue // native timestamps are millis or ISO by query type
			}
			if !slices.ContainsFunc(have, func(h any) bool { return sameScalar(h, v) }) {
				t.Errorf("native %s:\n answer %s lacks %v of the SQL rows %s", c.native, nbody, v, c.want)
			}
		}
	}
}

// scalars lists the scalars of a decoded JSON value (arrays and objects
// flattened), nulls left out.
func scalars(v any) []any {
	switch x := v.(type) {
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, scalars(e)...)
		}
		return out
	case map[string]any:
		var out []any
		for _, e := range x {
			out = append(out, scalars(e)...)
		}
		return out
	case nil:
		return nil
	}
	return []any{v}
}

// sameScalar compares numbers to within float64 rounding (native answers
// print doubles as Java does), anything else exactly.
func sameScalar(a, b any) bool {
	x, xok := a.(float64)
	y, yok := b.(float64)
	if xok && yok {
		return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y))
	}
	return a == b
}

// The quantiles sketch functions, planned onto quantilesDoublesSketch and
// its post-aggregators. wiki's added values are 1, 10, 100, 1000, 10000
// (pages a, b, a, c, a): few enough that the sketch holds them exactly. Ranks
// count the values at or below (DataSketches' inclusive default).
func TestSQLQuantilesSketches(t *testing.T) {
	b := sqlCluster(t, nil)
	const ts = `"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	checkAgainstNative(t, b, []aggCase{
		{`SELECT APPROX_QUANTILE_DS(added, 0.5) AS med, APPROX_QUANTILE_DS(added, 0.9, 256) AS p90 FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"quantilesDoublesSketch","name":"s","fieldName":"added"}],"postAggregations":[
				{"type":"quantilesDoublesSketchToQuantile","name":"med","field":{"type":"fieldAccess","fieldName":"s"},"fraction":0.5},
				{"type":"quantilesDoublesSketchToQuantile","name":"p90","field":{"type":"fieldAccess","fieldName":"s"},"fraction":0.9}]}`,
			`[[100,10000]]`},
		{`SELECT page, APPROX_QUANTILE_DS(added, 0) AS lo FROM wiki GROUP BY page ORDER BY page`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimensions":["page"],
				"aggregations":[{"type":"quantilesDoublesSketch","name":"s","fieldName":"added"}],"postAggregations":[
				{"type":"quantilesDoublesSketchToQuantile","name":"lo","field":{"type":"fieldAccess","fieldName":"s"},"fraction":0}]}`,
			`[["a",1],["b",10],["c",1000]]`},
		// APPROX_QUANTILE (Druid's approximate histogram) is planned onto the same sketch.
		{`SELECT APPROX_QUANTILE(added, 0.5) AS med FROM wiki WHERE page = 'a'`,
			`{` + ts + `,"filter":{"type":"selector","dimension":"page","value":"a"},"aggregations":[{"type":"quantilesDoublesSketch","name":"s","fieldName":"added"}],
				"postAggregations":[{"type":"quantilesDoublesSketchToQuantile","name":"med","field":{"type":"fieldAccess","fieldName":"s"},"fraction":0.5}]}`,
			`[[100]]`},
		{`SELECT DS_GET_QUANTILE(DS_QUANTILES_SKETCH(added), 0.25) AS q, DS_GET_QUANTILES(DS_QUANTILES_SKETCH(added), 0, 1) AS qs,
				DS_RANK(DS_QUANTILES_SKETCH(added), 100) AS r, DS_CDF(DS_QUANTILES_SKETCH(added), 50, 5000) AS cdf FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"quantilesDoublesSketch","name":"s","fieldName":"added"}],"postAggregations":[
				{"type":"quantilesDoublesSketchToQuantile","name":"q","field":{"type":"fieldAccess","fieldName":"s"},"fraction":0.25},
				{"type":"quantilesDoublesSketchToQuantiles","name":"qs","field":{"type":"fieldAccess","fieldName":"s"},"fractions":[0,1]},
				{"type":"quantilesDoublesSketchToRank","name":"r","field":{"type":"fieldAccess","fieldName":"s"},"value":100},
				{"type":"quantilesDoublesSketchToCDF","name":"cdf","field":{"type":"fieldAccess","fieldName":"s"},"splitPoints":[50,5000]}]}`,
			`[[10,[1.0,10000.0],0.6,[0.4,0.8,1.0]]]`},
		// A FILTER clause filters the sketch the quantile is read from.
		{`SELECT APPROX_QUANTILE_DS(added, 1) FILTER (WHERE page <> 'a') AS hi FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"filtered","filter":{"type":"not","field":{"type":"selector","dimension":"page","value":"a"}},
				"aggregator":{"type":"quantilesDoublesSketch","name":"s","fieldName":"added"}}],
				"postAggregations":[{"type":"quantilesDoublesSketchToQuantile","name":"hi","field":{"type":"fieldAccess","fieldName":"s"},"fraction":1}]}`,
			`[[1000]]`},
	})
	// The sketch itself and its summary come back as the native ones do.
	code, body, _ := sqlCall(t, b, `{"resultFormat":"array","header":true,"typesHeader":true,"sqlTypesHeader":true,
		"query":"SELECT DS_QUANTILES_SKETCH(added) AS s, DS_QUANTILE_SUMMARY(DS_QUANTILES_SKETCH(added)) AS summary FROM wiki"}`)
	_, nbody, _ := b.query(t, `{`+ts+`,"aggregations":[{"type":"quantilesDoublesSketch","name":"s","fieldName":"added","shouldFinalize":false}],
		"postAggregations":[{"type":"quantilesDoublesSketchToString","name":"summary","field":{"type":"fieldAccess","fieldName":"s"}}]}`)
	var rows [][]any
	var native []struct{ Result map[string]any }
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || json.Unmarshal([]byte(nbody), &native) != nil || len(rows) != 4 || len(native) != 1 {
		t.Fatalf("sketch: %d %s; native %s", code, body, nbody)
	}
	for i, want := range [][]any{{"COMPLEX<quantilesDoublesSketch>", "STRING"}, {"OTHER", "VARCHAR"}} {
		if rows[i+1][0] != want[0] || rows[i+1][1] != want[1] {
			t.Errorf("types header %d: %v, want %v", i+1, rows[i+1], want)
		}
	}
	if rows[3][0] != native[0].Result["s"] || rows[3][1] != native[0].Result["summary"] || !strings.Contains(rows[3][1].(string), "N") {
		t.Errorf("sketch row %v, native %v", rows[3], native[0].Result)
	}
}

// DS_HLL and DS_THETA answer sketches; the estimate functions read them.
func TestSQLHLLAndThetaSketches(t *testing.T) {
	b := sqlCluster(t, nil)
	const ts = `"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	checkAgainstNative(t, b, []aggCase{
		{`SELECT HLL_SKETCH_ESTIMATE(DS_HLL(page)) AS h, HLL_SKETCH_ESTIMATE(DS_HLL(page, 10, 'HLL_8'), TRUE) AS hr,
				THETA_SKETCH_ESTIMATE(DS_THETA(page)) AS th FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"HLLSketchBuild","name":"h0","fieldName":"page"},{"type":"HLLSketchBuild","name":"h1","fieldName":"page","lgK":10,"tgtHllType":"HLL_8"},
				{"type":"thetaSketch","name":"t0","fieldName":"page"}],"postAggregations":[
				{"type":"HLLSketchEstimate","name":"h","field":{"type":"fieldAccess","fieldName":"h0"}},
				{"type":"HLLSketchEstimate","name":"hr","field":{"type":"fieldAccess","fieldName":"h1"},"round":true},
				{"type":"thetaSketchEstimate","name":"th","field":{"type":"fieldAccess","fieldName":"t0"}}]}`,
			`[[3,3,3]]`},
		{`SELECT FLOOR(__time TO DAY) AS d, THETA_SKETCH_ESTIMATE(DS_THETA(page, 32)) AS n FROM wiki GROUP BY 1`,
			`{"queryType":"timeseries","dataSource":"wiki","granularity":"day","intervals":["2024/2025"],"aggregations":[{"type":"thetaSketch","name":"t0","fieldName":"page","size":32}],
				"postAggregations":[{"type":"thetaSketchEstimate","name":"n","field":{"type":"fieldAccess","fieldName":"t0"}}]}`,
			`[["2024-01-01T00:00:00.000Z",2],["2024-01-02T00:00:00.000Z",2]]`},
	})
	code, body, _ := sqlCall(t, b, `{"resultFormat":"array","query":"SELECT DS_HLL(page) AS h, DS_THETA(page) AS th FROM wiki"}`)
	_, nbody, _ := b.query(t, `{`+ts+`,"aggregations":[{"type":"HLLSketchBuild","name":"h","fieldName":"page","shouldFinalize":false},
		{"type":"thetaSketch","name":"th","fieldName":"page","shouldFinalize":false}]}`)
	var rows [][]any
	var native []struct{ Result map[string]any }
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || json.Unmarshal([]byte(nbody), &native) != nil || len(rows) != 1 || len(native) != 1 {
		t.Fatalf("sketches: %d %s; native %s", code, body, nbody)
	}
	if s, _ := rows[0][0].(string); s == "" || rows[0][0] != native[0].Result["h"] || rows[0][1] != native[0].Result["th"] {
		t.Errorf("sketch row %v, native %v", rows[0], native[0].Result)
	}
}

// Bad sketch arguments are the client's error (400), never a 5xx.
func TestSQLSketchErrors(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, q := range []string{
		`SELECT APPROX_QUANTILE_DS(added, 1.5) FROM wiki`,
		`SELECT APPROX_QUANTILE_DS(added, -0.1) FROM wiki`,
		`SELECT APPROX_QUANTILE_DS(added, page) FROM wiki GROUP BY page`,
		`SELECT APPROX_QUANTILE_DS(page, 0.5) FROM wiki`,
		`SELECT APPROX_QUANTILE_DS(added, 0.5, 100) FROM wiki`,
		`SELECT APPROX_QUANTILE_DS(added) FROM wiki`,
		`SELECT DS_QUANTILES_SKETCH(added, 3) FROM wiki`,
		`SELECT DS_GET_QUANTILE(SUM(added), 0.5) FROM wiki`,
		`SELECT DS_GET_QUANTILE(DS_QUANTILES_SKETCH(added), 2) FROM wiki`,
		`SELECT DS_CDF(DS_QUANTILES_SKETCH(added), 5, 1) FROM wiki`,
		`SELECT HLL_SKETCH_ESTIMATE(DS_THETA(page)) FROM wiki`,
		`SELECT DS_HLL(page, 30) FROM wiki`,
		`SELECT DS_HLL(page, 12, 'HLL_5') FROM wiki`,
		`SELECT DS_THETA(page, 1000) FROM wiki`,
		// FILTER belongs on the aggregate, not on the function reading it.
		`SELECT THETA_SKETCH_ESTIMATE(DS_THETA(page)) FILTER (WHERE added > 1) FROM wiki`,
	} {
		code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`)
		if code != 400 || !strings.Contains(body, `"errorMessage"`) {
			t.Errorf("%s: %d %s, want 400 with Druid's error JSON", q, code, body)
		}
	}
}

// VARIANCE and STDDEV and their forms, on Druid's variance aggregator and
// stddev post-aggregator. The numbers are those of Python's statistics
// module over wiki's added values (all: 1, 10, 100, 1000, 10000; page a:
// 1, 100, 10000), to the last digit's rounding.
func TestSQLVariance(t *testing.T) {
	b := sqlCluster(t, nil)
	const ts = `"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	checkAgainstNative(t, b, []aggCase{
		{`SELECT VARIANCE(added) AS v, VAR_SAMP(added) AS vs, VAR_POP(added) AS vp, STDDEV(added) AS sd, STDDEV_SAMP(added) AS sds, STDDEV_POP(added) AS sdp FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"variance","name":"v","fieldName":"added","inputType":"long"},
				{"type":"variance","name":"vp","fieldName":"added","inputType":"long","estimator":"population"}],
				"postAggregations":[{"type":"stddev","name":"sd","fieldName":"v"},{"type":"stddev","name":"sdp","fieldName":"v","estimator":"population"}]}`,
			`[[19079809.2,19079809.2,15263847.36,4368.044093184042,4368.044093184042,3906.8974084303773]]`},
		{`SELECT page, VAR_SAMP(added) AS v, STDDEV_POP(added) FILTER (WHERE added > 1) AS sd FROM wiki GROUP BY page ORDER BY page`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimensions":["page"],
				"aggregations":[{"type":"variance","name":"v","fieldName":"added"},{"type":"filtered","filter":{"type":"bound","dimension":"added","lower":"1","lowerStrict":true,"ordering":"numeric"},
				"aggregator":{"type":"variance","name":"f","fieldName":"added"}}],"postAggregations":[{"type":"stddev","name":"sd","fieldName":"f","estimator":"population"}]}`,
			`[["a",32999967,4950],["b",0,0],["c",0,0]]`},
		// No values: NULL.
		{`SELECT VARIANCE(added) AS v, STDDEV(added) AS sd FROM wiki WHERE page = 'zz'`,
			`{` + ts + `,"filter":{"type":"selector","dimension":"page","value":"zz"},"aggregations":[{"type":"variance","name":"v","fieldName":"added"}],
				"postAggregations":[{"type":"stddev","name":"sd","fieldName":"v"}]}`,
			`[[null,null]]`},
		// An expression goes through a virtual column.
		{`SELECT VAR_POP(added * 2) AS v FROM wiki WHERE page = 'b' OR page = 'c'`,
			`{` + ts + `,"filter":{"type":"or","fields":[{"type":"selector","dimension":"page","value":"b"},{"type":"selector","dimension":"page","value":"c"}]},
				"virtualColumns":[{"type":"expression","name":"x","expression":"added * 2","outputType":"LONG"}],
				"aggregations":[{"type":"variance","name":"v","fieldName":"x","estimator":"population"}]}`,
			`[[980100]]`},
	})
	for _, q := range []string{`SELECT VARIANCE(page) FROM wiki`, `SELECT STDDEV(added, 2) FROM wiki`} {
		if code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`); code != 400 {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
}

// GROUPING SETS plan to a groupBy's subtotalsSpec (with the plain keys in
// every set), GROUPING() to the grouping aggregator.
func TestSQLGroupingSets(t *testing.T) {
	b := sqlCluster(t, nil)
	const gb = `"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	checkAgainstNative(t, b, []aggCase{
		{`SELECT page, added, COUNT(*) AS n, GROUPING(page, added) AS g FROM wiki GROUP BY GROUPING SETS ((page), (added), ())`,
			`{` + gb + `,"dimensions":["page",{"type":"default","dimension":"added","outputName":"added","outputType":"LONG"}],
				"aggregations":[{"type":"count","name":"n"},{"type":"grouping","name":"g","groupings":["page","added"]}],"subtotalsSpec":[["page"],["added"],[]]}`,
			`[["a",null,3,1],["b",null,1,1],["c",null,1,1],[null,1,1,2],[null,10,1,2],[null,100,1,2],[null,1000,1,2],[null,10000,1,2],[null,null,5,3]]`},
		{`SELECT page, COUNT(*) AS n, GROUPING(page) AS g FROM wiki GROUP BY ROLLUP(page)`,
			`{` + gb + `,"dimensions":["page"],"aggregations":[{"type":"count","name":"n"},{"type":"grouping","name":"g","groupings":["page"]}],"subtotalsSpec":[["page"],[]]}`,
			`[["a",3,0],["b",1,0],["c",1,0],[null,5,1]]`},
		{`SELECT FLOOR(__time TO DAY) AS d, page, SUM(added) AS s, GROUPING(d, page) AS g FROM wiki GROUP BY FLOOR(__time TO DAY), GROUPING SETS ((page), ())`,
			`{` + gb + `,"virtualColumns":[{"type":"expression","name":"d","expression":"timestamp_floor(__time, 'P1D')","outputType":"LONG"}],
				"dimensions":[{"type":"default","dimension":"d","outputName":"d","outputType":"LONG"},"page"],
				"aggregations":[{"type":"longSum","name":"s","fieldName":"added"},{"type":"grouping","name":"g","groupings":["d","page"]}],"subtotalsSpec":[["d","page"],["d"]]}`,
			`[["2024-01-01T00:00:00.000Z","a",101,0],["2024-01-01T00:00:00.000Z","b",10,0],["2024-01-02T00:00:00.000Z","a",10000,0],["2024-01-02T00:00:00.000Z","c",1000,0],` +
				`["2024-01-01T00:00:00.000Z",null,111,1],["2024-01-02T00:00:00.000Z",null,11000,1]]`},
		// ORDER BY and LIMIT apply to the rows of every grouping set together.
		{`SELECT page, COUNT(*) AS n FROM wiki GROUP BY ROLLUP(page) ORDER BY n DESC LIMIT 2`,
			`{` + gb + `,"dimensions":["page"],"aggregations":[{"type":"count","name":"n"}],"subtotalsSpec":[["page"],[]],
				"limitSpec":{"type":"default","limit":2,"columns":[{"dimension":"n","direction":"descending","dimensionOrder":"numeric"}]}}`,
			`[[null,5],["a",3]]`},
		// No subtotals: every key grouped.
		{`SELECT page, GROUPING(page) AS g FROM wiki GROUP BY page`,
			`{` + gb + `,"dimensions":["page"],"aggregations":[{"type":"grouping","name":"g","groupings":["page"]}]}`,
			`[["a",0],["b",0],["c",0]]`},
	})
	for _, q := range []string{
		`SELECT page, GROUPING(added) FROM wiki GROUP BY page`,
		`SELECT page, GROUPING(page, page) FROM wiki GROUP BY GROUPING SETS ((page), ())`,
		`SELECT page, COUNT(*) FROM wiki GROUP BY GROUPING SETS ((page), ()), ROLLUP(page)`,
		`SELECT page, COUNT(*) FROM wiki GROUP BY GROUPING SETS ((page, ROLLUP(page)))`, // ROLLUP alone in a set expands; inside a parenthesized set it does not
		`SELECT page, COUNT(*) FROM wiki GROUP BY GROUPING SETS`,
	} {
		if code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`); code != 400 || !strings.Contains(body, `"errorMessage"`) {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
}

// The sketch functions over sketches: unions, set operations, bounds and
// summaries, planned onto the native sketch post-aggregators. Day one's
// pages are a, b; day two's c, a.
func TestSQLSketchSetOperations(t *testing.T) {
	b := sqlCluster(t, nil)
	const ts = `"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	day := func(name, typ, bound string) string {
		return `{"type":"filtered","filter":{"type":"bound","dimension":"__time",` + bound + `,"ordering":"numeric"},"aggregator":{"type":"` + typ + `","name":"` + name + `","fieldName":"page"}}`
	}
	fa := func(n string) string { return `{"type":"fieldAccess","fieldName":"` + n + `"}` }
	const d1, d2 = `"upper":"1704153600000","upperStrict":true`, `"lower":"1704153600000"`
	checkAgainstNative(t, b, []aggCase{
		{`SELECT HLL_SKETCH_ESTIMATE(HLL_SKETCH_UNION(DS_HLL(page) FILTER (WHERE __time < TIMESTAMP '2024-01-02 00:00:00'), DS_HLL(page) FILTER (WHERE __time >= TIMESTAMP '2024-01-02 00:00:00'))) AS u,
				HLL_SKETCH_ESTIMATE(HLL_SKETCH_UNION(10, 'HLL_8', DS_HLL(page))) AS u2,
				THETA_SKETCH_ESTIMATE(THETA_SKETCH_INTERSECT(DS_THETA(page) FILTER (WHERE __time < TIMESTAMP '2024-01-02 00:00:00'), DS_THETA(page) FILTER (WHERE __time >= TIMESTAMP '2024-01-02 00:00:00'))) AS i,
				THETA_SKETCH_ESTIMATE(THETA_SKETCH_NOT(DS_THETA(page) FILTER (WHERE __time < TIMESTAMP '2024-01-02 00:00:00'), DS_THETA(page) FILTER (WHERE __time >= TIMESTAMP '2024-01-02 00:00:00'))) AS n,
				THETA_SKETCH_ESTIMATE(THETA_SKETCH_UNION(64, DS_THETA(page))) AS tu FROM wiki`,
			`{` + ts + `,"aggregations":[` + day("h1", "HLLSketchBuild", d1) + `,` + day("h2", "HLLSketchBuild", d2) + `,` + day("t1", "thetaSketch", d1) + `,` + day("t2", "thetaSketch", d2) + `,{"type":"thetaSketch","name":"t0","fieldName":"page"}],
				"postAggregations":[
				{"type":"HLLSketchEstimate","name":"u","field":{"type":"HLLSketchUnion","fields":[` + fa("h1") + `,` + fa("h2") + `]}},
				{"type":"thetaSketchEstimate","name":"i","field":{"type":"thetaSketchSetOp","func":"INTERSECT","fields":[` + fa("t1") + `,` + fa("t2") + `]}},
				{"type":"thetaSketchEstimate","name":"n","field":{"type":"thetaSketchSetOp","func":"NOT","fields":[` + fa("t1") + `,` + fa("t2") + `]}},
				{"type":"thetaSketchEstimate","name":"tu","field":{"type":"thetaSketchSetOp","func":"UNION","size":64,"fields":[` + fa("t0") + `]}}]}`,
			`[[3.000000014901161,3.000000014901161,1,1,3]]`},
		{`SELECT HLL_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS(DS_HLL(page), 2) AS hb FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"HLLSketchBuild","name":"h","fieldName":"page"}],
				"postAggregations":[{"type":"HLLSketchEstimateWithBounds","name":"hb","field":` + fa("h") + `,"numStdDev":2}]}`,
			`[[[3.000000014901161,3.0,3.000299605364685]]]`},
	})
	code, body, _ := sqlCall(t, b, `{"resultFormat":"array","query":"SELECT THETA_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS(DS_THETA(page), 1) AS tb, HLL_SKETCH_TO_STRING(DS_HLL(page)) AS s FROM wiki"}`)
	if code != 200 || !strings.Contains(body, `[[{"estimate":3.0,"highBound":3.0,"lowBound":3.0,"numStdDev":1},"### HLL SKETCH SUMMARY`) {
		t.Errorf("bounds and summary: %d %s", code, body)
	}
	for _, q := range []string{
		`SELECT HLL_SKETCH_UNION(DS_THETA(page)) FROM wiki`,
		`SELECT THETA_SKETCH_UNION(100, DS_THETA(page)) FROM wiki`,
		`SELECT HLL_SKETCH_UNION(12, DS_HLL(page)) FROM wiki`,
		`SELECT THETA_SKETCH_ESTIMATE_WITH_ERROR_BOUNDS(DS_THETA(page), 4) FROM wiki`,
		`SELECT THETA_SKETCH_INTERSECT() FROM wiki`,
	} {
		if code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`); code != 400 {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
}

// BIT_AND, BIT_OR and BIT_XOR fold the non-null values (wiki's added: 1,
// 10, 100, 1000, 10000; page a: 1, 100, 10000).
func TestSQLBitwise(t *testing.T) {
	b := sqlCluster(t, nil)
	fold := func(name, fn, init string) string {
		return `{"type":"expression","name":"` + name + `","fields":["added"],"initialValue":"` + init + `","fold":"` + fn + `(\"__acc\", \"added\")"}`
	}
	checkAgainstNative(t, b, []aggCase{
		{`SELECT page, BIT_AND(added) AS a, BIT_OR(added) AS o, BIT_XOR(added) AS x FROM wiki GROUP BY page ORDER BY page`,
			`{"queryType":"groupBy","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],"dimensions":["page"],
				"aggregations":[` + fold("a", "bitwiseAnd", "-1") + `,` + fold("o", "bitwiseOr", "0") + `,` + fold("x", "bitwiseXor", "0") + `]}`,
			`[["a",0,10101,10101],["b",10,10,10],["c",1000,1000,1000]]`},
		{`SELECT BIT_OR(added * 2) FILTER (WHERE page = 'a') AS o, BIT_AND(added) FILTER (WHERE page = 'zz') AS none FROM wiki`,
			`{"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"],
				"virtualColumns":[{"type":"expression","name":"v","expression":"added * 2","outputType":"LONG"}],
				"aggregations":[{"type":"filtered","filter":{"type":"selector","dimension":"page","value":"a"},"aggregator":{"type":"expression","name":"o","fields":["v"],"initialValue":"0","fold":"bitwiseOr(\"__acc\", \"v\")"}}]}`,
			`[[20202,null]]`},
	})
	for _, q := range []string{`SELECT BIT_AND(page) FROM wiki`, `SELECT BIT_OR(added * 1.5) FROM wiki`, `SELECT BIT_XOR(added, 1) FROM wiki`} {
		if code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`); code != 400 {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
}

// A subquery's sketches (base64 in its rows) merge in the outer query:
// per page, added's values are a: 1, 100, 10000; b: 10; c: 1000.
func TestSQLSketchesOfASubquery(t *testing.T) {
	b := sqlCluster(t, nil)
	for _, c := range []struct{ sql, want string }{
		{`SELECT HLL_SKETCH_ESTIMATE(DS_HLL(s), TRUE) AS n FROM (SELECT page, DS_HLL(added) AS s FROM wiki GROUP BY page)`, `[[5]]`},
		{`SELECT THETA_SKETCH_ESTIMATE(DS_THETA(s)) AS n FROM (SELECT page, DS_THETA(added) AS s FROM wiki GROUP BY page)`, `[[5]]`},
		{`SELECT DS_GET_QUANTILE(DS_QUANTILES_SKETCH(s), 0.5) AS m FROM (SELECT page, DS_QUANTILES_SKETCH(added) AS s FROM wiki GROUP BY page)`, `[[100]]`},
	} {
		code, body, _ := sqlCall(t, b, `{"resultFormat":"array","query":`+string(mustJSON(c.sql))+`}`)
		if code != 200 || body != c.want {
			t.Errorf("%s:\n got %d %s\nwant %s", c.sql, code, body, c.want)
		}
	}
}

// APPROX_COUNT_DISTINCT_DS_HLL and _DS_THETA take the sketch's size.
func TestSQLDistinctSketchSizes(t *testing.T) {
	b := sqlCluster(t, nil)
	const ts = `"queryType":"timeseries","dataSource":"wiki","granularity":"all","intervals":["2024/2025"]`
	checkAgainstNative(t, b, []aggCase{
		{`SELECT APPROX_COUNT_DISTINCT_DS_HLL(added, 10, 'HLL_8') AS h, APPROX_COUNT_DISTINCT_DS_HLL(page, 5) AS h5, APPROX_COUNT_DISTINCT_DS_THETA(added, 32) AS t FROM wiki`,
			`{` + ts + `,"aggregations":[{"type":"HLLSketchBuild","name":"h","fieldName":"added","lgK":10,"tgtHllType":"HLL_8","round":true},
				{"type":"HLLSketchBuild","name":"h5","fieldName":"page","lgK":5,"round":true},{"type":"thetaSketch","name":"t","fieldName":"added","size":32}]}`,
			`[[5,3,5]]`},
	})
	for _, q := range []string{
		`SELECT APPROX_COUNT_DISTINCT_DS_HLL(page, 3) FROM wiki`,
		`SELECT APPROX_COUNT_DISTINCT_DS_HLL(page, 12, 'HLL_5') FROM wiki`,
		`SELECT APPROX_COUNT_DISTINCT_DS_THETA(page, 100) FROM wiki`,
		`SELECT APPROX_COUNT_DISTINCT_DS_THETA(page, 64, 1) FROM wiki`,
		`SELECT APPROX_COUNT_DISTINCT(page, 64) FROM wiki`,
	} {
		if code, body, _ := sqlCall(t, b, `{"query":`+string(mustJSON(q))+`}`); code != 400 || !strings.Contains(body, "INVALID_INPUT") {
			t.Errorf("%s: %d %s, want 400 INVALID_INPUT", q, code, body)
		}
	}
}
