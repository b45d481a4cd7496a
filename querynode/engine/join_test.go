package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"strata/querynode/query"
)

// joinRight is an inline right side mapping some pages to a category and
// a weight; Page_00 maps twice, so its rows join two right rows.
const joinRight = `{"type":"inline","columnNames":["page","cat","w"],"columnTypes":["STRING","STRING","LONG"],
	"rows":[["Page_00","zero",1],["Page_00","nil",2],["Page_01","one",10],["Page_07","seven",70],["Page_99","none",0],[null,"nullkey",5]]}`

func joinQuery(joinType, cond string, agg string) string {
	return `{"queryType":"groupBy","granularity":"all","intervals":["2024-01-01/2024-02-01"],
		"dataSource":{"type":"join","left":"test","right":` + joinRight + `,"rightPrefix":"r.","condition":` + strconvQuote(cond) + `,"joinType":"` + joinType + `"},
		"dimensions":["r.cat"],"aggregations":[` + agg + `]}`
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// groupRows renders a groupBy result as "cat=value" lines, sorted.
func groupRows(t *testing.T, v any, metric string) []string {
	t.Helper()
	var out []string
	for _, r := range arr(v) {
		ev := obj(obj(r)["event"])
		out = append(out, fmt.Sprintf("%v=%v", ev["r.cat"], ev[metric]))
	}
	sort.Strings(out)
	return out
}

// TestJoinAgainstReference joins generated segments with an inline table
// and compares each answer with the join computed directly from the rows.
func TestJoinAgainstReference(t *testing.T) {
	rows := genRows(3000, 3, 7)
	segs := buildSegments(t, rows, 256)
	right := map[string][]struct {
		cat string
		w   int64
	}{"Page_00": {{"zero", 1}, {"nil", 2}}, "Page_01": {{"one", 10}}, "Page_07": {{"seven", 70}}}
	for _, tc := range []struct {
		joinType, cond string
	}{
		{"INNER", `page == "r.page"`},
		{"LEFT", `page == "r.page"`},
		{"INNER", `"r.page" == page`},                                   // the right column on the left of ==
		{"INNER", `concat('Page_', substring(page, 5, 2)) == "r.page"`}, // an expression of the left side
	} {
		t.Run(tc.joinType+" "+tc.cond, func(t *testing.T) {
			count := map[string]int64{}
			sumW := map[string]int64{}
			for _, r := range rows {
				m := right[r.page]
				if len(m) == 0 && tc.joinType == "LEFT" {
					count["<nil>"]++
					sumW["<nil>"] += 0
				}
				for _, x := range m {
					count[x.cat]++
					sumW[x.cat] += x.w
				}
			}
			var want []string
			for k, n := range count {
				want = append(want, fmt.Sprintf("%s=%d", k, n))
			}
			sort.Strings(want)
			got := groupRows(t, runJSON(t, segs, joinQuery(tc.joinType, tc.cond, `{"type":"count","name":"n"}`)), "n")
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("count by category:\n got %v\nwant %v", got, want)
			}
			var wantW []string
			for k, n := range sumW {
				if k == "<nil>" {
					wantW = append(wantW, "<nil>=<nil>") // longSum of nulls only
					continue
				}
				wantW = append(wantW, fmt.Sprintf("%s=%d", k, n))
			}
			sort.Strings(wantW)
			gotW := groupRows(t, runJSON(t, segs, joinQuery(tc.joinType, tc.cond, `{"type":"longSum","name":"w","fieldName":"r.w"}`)), "w")
			if strings.Join(gotW, " ") != strings.Join(wantW, " ") {
				t.Errorf("sum of r.w by category:\n got %v\nwant %v", gotW, wantW)
			}
		})
	}
}

// TestJoinFilterOnBothSides filters on a left and a right column after
// the join, and reads left columns unchanged (their names kept).
func TestJoinFilterOnBothSides(t *testing.T) {
	rows := genRows(2000, 2, 11)
	segs := buildSegments(t, rows, 128)
	var want int64
	for _, r := range rows {
		if (r.page == "Page_00" || r.page == "Page_01") && r.added != nil {
			want += *r.added
		}
	}
	q := `{"queryType":"timeseries","granularity":"all","intervals":["2024-01-01/2024-02-01"],
		"dataSource":{"type":"join","left":"test","right":` + joinRight + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"INNER"},
		"filter":{"type":"and","fields":[{"type":"range","column":"r.w","matchValueType":"LONG","lower":1,"upper":10},
			{"type":"not","field":{"type":"equals","column":"r.cat","matchValueType":"STRING","matchValue":"nil"}}]},
		"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`
	v := runJSON(t, segs, q)
	got := obj(obj(arr(v)[0])["result"])["added"]
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sum of added over Page_00 and Page_01: %v, want %d", got, want)
	}
}

// TestJoinChainAndScan stacks two joins (the left side of the outer join
// is a join) and scans the joined rows: the right columns carry each
// clause's prefix, and a multi-key condition matches on both keys.
func TestJoinChainAndScan(t *testing.T) {
	q := `{"queryType":"scan","intervals":["1970/2100"],"resultFormat":"compactedList",
		"columns":["k","v","a.name","b.score"],
		"dataSource":{"type":"join","joinType":"LEFT","rightPrefix":"b.","condition":"(k == \"b.k\") && (\"a.name\" == \"b.name\")",
			"right":{"type":"inline","columnNames":["k","name","score"],"rows":[["1","one",100],["2","two",200],["2","deux",201]]},
			"left":{"type":"join","joinType":"INNER","rightPrefix":"a.","condition":"k == \"a.k\"",
				"left":{"type":"inline","columnNames":["k","v"],"rows":[["1",10],["2",20],["3",30],["2",21]]},
				"right":{"type":"inline","columnNames":["k","name"],"rows":[["1","one"],["2","two"],["3","three"]]}}}}`
	pq := mustParse(t, q)
	if len(pq.Joins) != 2 || pq.Inline == nil {
		t.Fatalf("parsed %d joins over inline %v, want 2 over the inline base", len(pq.Joins), pq.Inline != nil)
	}
	s, err := TableSegment(pq.Inline)
	if err != nil {
		t.Fatal(err)
	}
	out, err := New(Options{}).Execute(t.Context(), OverTable(pq, pq.Inline), []*Segment{s})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, part := range []string{`["1",10,"one",100]`, `["2",20,"two",200]`, `["3",30,"three",null]`, `["2",21,"two",200]`} {
		if !strings.Contains(got, part) {
			t.Errorf("result lacks %s:\n%s", part, got)
		}
	}
	if strings.Contains(got, "deux") {
		t.Errorf("a row matched one key of two:\n%s", got)
	}
}

// TestJoinCrossGuard: a constant-true condition is a cross join; past
// MaxJoinRows on a segment it fails with a resource error, not a huge answer.
func TestJoinCrossGuard(t *testing.T) {
	rows := genRows(500, 1, 3)
	segs := buildSegments(t, rows, 128)
	q := `{"queryType":"timeseries","granularity":"all","intervals":["2024-01-01/2024-02-01"],
		"dataSource":{"type":"join","left":"test","right":` + joinRight + `,"rightPrefix":"r.","condition":"1","joinType":"INNER"},
		"aggregations":[{"type":"count","name":"n"}]}`
	v := runJSON(t, segs, q)
	if got := fmt.Sprint(obj(obj(arr(v)[0])["result"])["n"]); got != "3000" {
		t.Errorf("cross join count %s, want 500×6 = 3000", got)
	}
	old := MaxJoinRows
	MaxJoinRows = 2000 // beyond the left side's 500 rows: 2500 < 3000
	defer func() { MaxJoinRows = old }()
	_, err := runRaw(segs, q)
	if err == nil || query.AsError(err).Kind != query.ResourceLimit {
		t.Fatalf("cross join past the limit: %v, want a resource limit error", err)
	}
}

// TestJoinBadJSON: malformed or unsupported join data sources are client
// errors naming the problem.
func TestJoinBadJSON(t *testing.T) {
	ds := func(s string) string {
		return `{"queryType":"scan","intervals":["2000/2100"],"dataSource":` + s + `}`
	}
	inl := `{"type":"inline","columnNames":["k"],"rows":[["1"]]}`
	for _, tc := range []struct {
		ds   string
		kind query.ErrorKind
		msg  string
	}{
		{`{"type":"join","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER"}`, query.InvalidInput, "[left]"},
		{`{"type":"join","left":"t","rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER"}`, query.InvalidInput, "[right]"},
		{`{"type":"join","left":"t","right":` + inl + `,"condition":"k == \"r.k\"","joinType":"INNER"}`, query.InvalidInput, "rightPrefix"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"__","condition":"k == \"__k\"","joinType":"INNER"}`, query.InvalidInput, "__time"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"SIDEWAYS"}`, query.InvalidInput, "joinType"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k < \"r.k\"","joinType":"INNER"}`, query.Unsupported, "equality"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\" ||","joinType":"INNER"}`, query.InvalidInput, "condition"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"\"r.k\" == \"r.k\"","joinType":"INNER"}`, query.Unsupported, "equality"},
		{`{"type":"join","left":"t","right":{"type":"union","dataSources":["a"]},"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER"}`, query.Unsupported, "union"},
		{`{"type":"join","left":` + inl + `,"right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER","leftFilter":{"type":"true"}}`, query.InvalidInput, "leftFilter"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER","leftFilter":{"type":"nope"}}`, query.InvalidInput, "nope"},
		{`{"type":"join","left":"t","right":{"type":"inline","columnNames":["k"],"rows":[["1","2"]]},"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER"}`, query.InvalidInput, "row 0"},
		{`{"type":"join","left":{"type":"union","dataSources":["a","b"]},"right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER"}`, query.Unsupported, "union"},
	} {
		_, err := query.Parse([]byte(ds(tc.ds)))
		if err == nil {
			t.Errorf("%s: parsed", tc.ds)
			continue
		}
		e := query.AsError(err)
		if e.Kind != tc.kind || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %v (kind %v), want kind %v naming %q", tc.ds, e.Message, e.Kind, tc.kind, tc.msg)
		}
	}
}

// TestLeftJoinKeepsTheTable: a LEFT join with unique right keys keeps every
// left row once, so any query over it answers what the same query over the
// table answers. The queries read left columns through every route (an
// expression, filters, dimensions, aggregators, a scan's and a search's
// lists), so a column the join stage failed to read would show.
func TestLeftJoinKeepsTheTable(t *testing.T) {
	rows := genRows(3000, 3, 5)
	segs := buildSegments(t, rows, 256)
	right := `{"type":"inline","columnNames":["page","cat"],"rows":[["Page_00","zero"],["Page_01","one"],["Page_07","seven"]]}`
	joined := `{"type":"join","left":"test","right":` + right + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"LEFT"}`
	iv := `"intervals":["2024-01-01/2024-02-01"]`
	for _, rewrite := range []bool{true, false} {
		rewriteJoins = rewrite
		t.Cleanup(func() { rewriteJoins = true })
		leftJoinMatchesTable(t, segs, joined, iv)
	}
}

func leftJoinMatchesTable(t *testing.T, segs []*Segment, joined, iv string) {
	for _, q := range []string{
		`{"queryType":"timeseries","dataSource":"test",` + iv + `,"granularity":"day",
			"virtualColumns":[{"type":"expression","name":"v","expression":"price * 2 + weight","outputType":"DOUBLE"}],
			"filter":{"type":"or","fields":[{"type":"selector","dimension":"channel","value":"#ch1"},{"type":"bound","dimension":"added","lower":"100","ordering":"numeric"}]},
			"aggregations":[{"type":"doubleSum","name":"v","fieldName":"v"},{"type":"count","name":"n"},{"type":"longMax","name":"m","fieldName":"added"}]}`,
		`{"queryType":"topN","dataSource":"test",` + iv + `,"granularity":"all","dimension":"user","metric":"s","threshold":5,
			"filter":{"type":"expression","expression":"strlen(page) > 6"},
			"aggregations":[{"type":"doubleSum","name":"s","fieldName":"price"}]}`,
		`{"queryType":"groupBy","dataSource":"test",` + iv + `,"granularity":"all",
			"dimensions":[{"type":"extraction","dimension":"tags","outputName":"t","extractionFn":{"type":"substring","index":0,"length":1}}],
			"aggregations":[{"type":"floatSum","name":"w","fieldName":"weight"},{"type":"filtered","filter":{"type":"in","dimension":"user","values":["u001","u002"]},
				"aggregator":{"type":"count","name":"c"}}]}`,
		`{"queryType":"scan","dataSource":"test",` + iv + `,"columns":["__time","page","added","tags"],"limit":50,"order":"ascending"}`,
		`{"queryType":"search","dataSource":"test",` + iv + `,"granularity":"all","query":{"type":"contains","value":"ch3"}}`,
		`{"queryType":"timeBoundary","dataSource":"test"}`,
	} {
		want, err := runRaw(segs, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got, err := runRaw(segs, strings.Replace(q, `"dataSource":"test"`, `"dataSource":`+joined, 1))
		if err != nil {
			t.Fatalf("over the join: %s: %v", q, err)
		}
		// Sums of doubles may differ in their last bits: the joined rows
		// are in time order, the table's segments sorted by channel.
		if !sameJSON(t, got, want) {
			t.Errorf("%s:\nover the join %s\nover the table %s", q, got, want)
		}
	}
}

// sameJSON compares two JSON documents, numbers as closeEnough.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(s []byte) any {
		dec := json.NewDecoder(strings.NewReader(string(s)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("bad JSON %s: %v", s, err)
		}
		return v
	}
	var same func(x, y any) bool
	same = func(x, y any) bool {
		switch x := x.(type) {
		case json.Number:
			fx, _ := num(x)
			fy, ok := num(y)
			return ok && closeEnough(fx, fy)
		case []any:
			ya, ok := y.([]any)
			if !ok || len(ya) != len(x) {
				return false
			}
			for i := range x {
				if !same(x[i], ya[i]) {
					return false
				}
			}
			return true
		case map[string]any:
			ym, ok := y.(map[string]any)
			if !ok || len(ym) != len(x) {
				return false
			}
			for k, v := range x {
				if !same(v, ym[k]) {
					return false
				}
			}
			return true
		}
		return x == y
	}
	return same(decode(a), decode(b))
}

// TestJoinAsLookupsAgrees: a join on unique keys answers the same through
// the lookup rewrite and through the join stage, for INNER and LEFT, right
// columns of each type (with nulls) read by dimensions, filters,
// aggregators and expressions, and a numeric left key.
func TestJoinAsLookupsAgrees(t *testing.T) {
	rows := genRows(2000, 2, 9)
	segs := buildSegments(t, rows, 256)
	right := `{"type":"inline","columnNames":["page","cat","w","score","k"],"columnTypes":["STRING","STRING","LONG","DOUBLE","STRING"],
		"rows":[["Page_00","zero",1,0.5,"1"],["Page_01","one",null,1.5,"2"],["Page_07",null,70,null,"3"],["Page_09","nine",9,9.5,"100"],[null,"nokey",5,5.5,null]]}`
	iv := `"intervals":["2024-01-01/2024-02-01"]`
	ds := func(joinType, cond string) string {
		return `{"type":"join","left":"test","right":` + right + `,"rightPrefix":"r.","condition":` + strconvQuote(cond) + `,"joinType":"` + joinType + `"}`
	}
	queries := []string{
		`{"queryType":"groupBy","dataSource":%s,` + iv + `,"granularity":"all","dimensions":["r.cat","r.w"],
			"aggregations":[{"type":"count","name":"n"},{"type":"doubleSum","name":"s","fieldName":"r.score"},{"type":"longSum","name":"a","fieldName":"added"}]}`,
		`{"queryType":"timeseries","dataSource":%s,` + iv + `,"granularity":"day",
			"virtualColumns":[{"type":"expression","name":"x","expression":"\"r.w\" * 2 + added","outputType":"LONG"}],
			"filter":{"type":"or","fields":[{"type":"selector","dimension":"r.cat","value":"one"},{"type":"range","column":"r.score","matchValueType":"DOUBLE","lower":5}]},
			"aggregations":[{"type":"longSum","name":"x","fieldName":"x"},{"type":"count","name":"n"}]}`,
		// By day: over all time a topN is stamped with its segment's first
		// row time, which the join stage's joined segment does not keep.
		`{"queryType":"topN","dataSource":%s,` + iv + `,"granularity":"day","dimension":"r.page","metric":"n","threshold":3,
			"filter":{"type":"not","field":{"type":"selector","dimension":"r.cat","value":null}},"aggregations":[{"type":"count","name":"n"}]}`,
		`{"queryType":"scan","dataSource":%s,` + iv + `,"columns":["__time","page","r.cat","r.w","r.score"],"limit":40,"order":"ascending"}`,
	}
	for _, jt := range []string{"INNER", "LEFT"} {
		for _, cond := range []string{`page == "r.page"`, `"r.k" == added`} {
			for _, q := range queries {
				body := fmt.Sprintf(q, ds(jt, cond))
				rewriteJoins = true
				fast, err := runRaw(segs, body)
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				rewriteJoins = false
				slow, err := runRaw(segs, body)
				rewriteJoins = true
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				if !sameJSON(t, fast, slow) {
					t.Errorf("%s %s:\nas lookups %s\njoin stage %s", jt, cond, fast, slow)
				}
			}
		}
	}
	// The rewrite applies here (and not where the join stage is needed).
	pq := mustParse(t, fmt.Sprintf(queries[0], ds("INNER", `page == "r.page"`)))
	if _, ok, err := joinAsLookups(pq); !ok || err != nil {
		t.Errorf("unique string keys: rewritten %v, %v", ok, err)
	}
	pq = mustParse(t, `{"queryType":"timeseries","dataSource":{"type":"join","left":"test","right":`+joinRight+
		`,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"INNER"},`+iv+`,"granularity":"all","aggregations":[{"type":"count","name":"n"}]}`)
	if _, ok, _ := joinAsLookups(pq); ok {
		t.Errorf("duplicate keys (Page_00 twice) were rewritten as lookups")
	}
}

// TestJoinBoundCountsAddedRows: the bound is on the rows a join adds, so an
// equi-join keeping each row of a segment bigger than MaxJoinRows runs (the
// bound was on all joined rows, so such a join of a big segment failed).
func TestJoinBoundCountsAddedRows(t *testing.T) {
	rows := genRows(500, 1, 3)
	segs := buildSegments(t, rows, 128)
	old := MaxJoinRows
	MaxJoinRows = 100
	rewriteJoins = false // the join stage, whatever the keys
	t.Cleanup(func() { MaxJoinRows, rewriteJoins = old, true })
	q := `{"queryType":"timeseries","granularity":"all","intervals":["2024-01-01/2024-02-01"],
		"dataSource":{"type":"join","left":"test","right":` + joinRight + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"LEFT"},
		"aggregations":[{"type":"count","name":"n"}]}`
	var want int
	for _, r := range rows {
		if r.page == "Page_00" {
			want += 2 // two right rows
		} else {
			want++
		}
	}
	v := runJSON(t, segs, q)
	if got := fmt.Sprint(obj(obj(arr(v)[0])["result"])["n"]); got != fmt.Sprint(want) {
		t.Errorf("LEFT join of 500 rows: %s rows, want %d", got, want)
	}
}

// TestJoinScanAllColumns: a scan listing no columns over a join of an
// inline left side (run as the broker runs it: OverTable over the left
// table's segment) returns the left's columns and then the right's,
// prefixed. OverTable listed the left table's columns alone.
func TestJoinScanAllColumns(t *testing.T) {
	pq := mustParse(t, `{"queryType":"scan","intervals":["1970/2100"],"resultFormat":"compactedList",
		"dataSource":{"type":"join","joinType":"LEFT","rightPrefix":"r.","condition":"k == \"r.k\"",
			"left":{"type":"inline","columnNames":["k","v"],"rows":[["1",10],["2",20]]},
			"right":{"type":"inline","columnNames":["k","name"],"rows":[["1","one"]]}}}`)
	s, err := TableSegment(pq.Inline)
	if err != nil {
		t.Fatal(err)
	}
	out, err := New(Options{}).Execute(t.Context(), OverTable(pq, pq.Inline), []*Segment{s})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"columns":["__time","k","v","r.k","r.name"]`, `[0,"1",10,"1","one"]`, `[0,"2",20,null,null]`} {
		if !strings.Contains(string(out), part) {
			t.Errorf("result lacks %s:\n%s", part, out)
		}
	}
}

// TestRightAndFullJoins: over the whole left side as one table, RIGHT keeps
// the right rows no left row matched (the left columns null) and FULL also
// the left rows without a match; with no left rows, the right rows alone.
// Over several segments they are refused: each would keep the right rows
// it did not match.
func TestRightAndFullJoins(t *testing.T) {
	run := func(joinType string, leftRows string) string {
		t.Helper()
		pq := mustParse(t, `{"queryType":"scan","intervals":["1970/2100"],"resultFormat":"compactedList","columns":["k","v","r.k","r.name"],
			"dataSource":{"type":"join","joinType":"`+joinType+`","rightPrefix":"r.","condition":"k == \"r.k\"",
				"left":{"type":"inline","columnNames":["k","v"],"rows":`+leftRows+`},
				"right":{"type":"inline","columnNames":["k","name"],"rows":[["1","one"],["3","three"],[null,"nokey"]]}}}`)
		var segs []*Segment
		if s, err := TableSegment(pq.Inline); err != nil {
			t.Fatal(err)
		} else if s != nil {
			segs = append(segs, s)
		}
		out, err := New(Options{}).Execute(t.Context(), OverTable(pq, pq.Inline), segs)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for _, c := range []struct{ joinType, left, want string }{
		{"RIGHT", `[["1",10],["2",20],["1",11]]`, `[["1",10,"1","one"],["1",11,"1","one"],[null,null,"3","three"],[null,null,null,"nokey"]]`},
		{"FULL", `[["1",10],["2",20],["1",11]]`, `[["1",10,"1","one"],["2",20,null,null],["1",11,"1","one"],[null,null,"3","three"],[null,null,null,"nokey"]]`},
		{"RIGHT", `[]`, `[[null,null,"1","one"],[null,null,"3","three"],[null,null,null,"nokey"]]`},
	} {
		if got := run(c.joinType, c.left); !strings.Contains(got, `"events":`+c.want) {
			t.Errorf("%s over %s:\n got %s\nwant events %s", c.joinType, c.left, got, c.want)
		}
	}
	segs := buildSegments(t, genRows(100, 2, 1), 64)
	_, err := runRaw(segs, `{"queryType":"timeseries","granularity":"all","intervals":["2024-01-01/2024-02-01"],
		"dataSource":{"type":"join","left":"test","right":`+joinRight+`,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"RIGHT"},
		"aggregations":[{"type":"count","name":"n"}]}`)
	if len(segs) < 2 || err == nil || query.AsError(err).Kind != query.Unsupported {
		t.Errorf("a RIGHT join over %d segments: %v, want unsupported", len(segs), err)
	}
}

// TestJoinLeftFilter: a join's leftFilter filters the base table's rows
// before the join: for INNER and LEFT joins, what the same filter in the
// query gives, through the lookup rewrite and the join stage alike.
func TestJoinLeftFilter(t *testing.T) {
	rows := genRows(2000, 2, 13)
	segs := buildSegments(t, rows, 256)
	right := `{"type":"inline","columnNames":["page","cat"],"rows":[["Page_00","zero"],["Page_01","one"],["Page_07","seven"]]}`
	filter := `{"type":"and","fields":[{"type":"selector","dimension":"channel","value":"#ch1"},{"type":"bound","dimension":"added","lower":"50","ordering":"numeric"}]}`
	q := func(joinType, leftFilter, queryFilter string) string {
		lf := ""
		if leftFilter != "" {
			lf = `,"leftFilter":` + leftFilter
		}
		qf := ""
		if queryFilter != "" {
			qf = `"filter":` + queryFilter + `,`
		}
		return `{"queryType":"groupBy","intervals":["2024-01-01/2024-02-01"],"granularity":"all",` + qf + `
			"dataSource":{"type":"join","left":"test","right":` + right + `,"rightPrefix":"r.","condition":"page == \"r.page\"","joinType":"` + joinType + `"` + lf + `},
			"dimensions":["r.cat"],"aggregations":[{"type":"count","name":"n"},{"type":"longSum","name":"a","fieldName":"added"}]}`
	}
	for _, rewrite := range []bool{true, false} {
		rewriteJoins = rewrite
		for _, jt := range []string{"INNER", "LEFT"} {
			got, err := runRaw(segs, q(jt, filter, ""))
			if err != nil {
				t.Fatal(err)
			}
			want, err := runRaw(segs, q(jt, "", filter))
			if err != nil {
				t.Fatal(err)
			}
			all, _ := runRaw(segs, q(jt, "", ""))
			if string(got) != string(want) || string(got) == string(all) {
				t.Errorf("%s (rewrite %v) with leftFilter:\n got %s\nwant %s (unfiltered %s)", jt, rewrite, got, want, all)
			}
		}
	}
	rewriteJoins = true
}
