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
	MaxJoinRows = 1000
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
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"FULL"}`, query.Unsupported, "FULL"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k < \"r.k\"","joinType":"INNER"}`, query.Unsupported, "equality"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\" ||","joinType":"INNER"}`, query.InvalidInput, "condition"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"\"r.k\" == \"r.k\"","joinType":"INNER"}`, query.Unsupported, "equality"},
		{`{"type":"join","left":"t","right":{"type":"union","dataSources":["a"]},"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER"}`, query.Unsupported, "union"},
		{`{"type":"join","left":"t","right":` + inl + `,"rightPrefix":"r.","condition":"k == \"r.k\"","joinType":"INNER","leftFilter":{"type":"true"}}`, query.Unsupported, "leftFilter"},
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
