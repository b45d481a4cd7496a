package engine

import (
	"regexp"
	"strings"
	"testing"
)

func anyTag(r testRow, f func(string) bool) bool {
	for _, t := range r.tags {
		if f(t) {
			return true
		}
	}
	return false
}

func chanIs(r testRow, v string) bool { return r.channel != nil && *r.channel == v }

var filterCases = []struct {
	name   string
	filter string
	match  func(testRow) bool
}{
	{"selector", `{"type":"selector","dimension":"channel","value":"#ch3"}`, func(r testRow) bool { return chanIs(r, "#ch3") }},
	{"selector null", `{"type":"selector","dimension":"channel","value":null}`, func(r testRow) bool { return r.channel == nil }},
	{"selector missing column", `{"type":"selector","dimension":"nope","value":null}`, func(testRow) bool { return true }},
	{"selector missing value", `{"type":"selector","dimension":"channel","value":"zzz"}`, func(testRow) bool { return false }},
	{"selector on long metric", `{"type":"selector","dimension":"added","value":"42"}`, func(r testRow) bool { return r.added != nil && *r.added == 42 }},
	{"equals", `{"type":"equals","column":"page","matchValueType":"STRING","matchValue":"Page_01"}`, func(r testRow) bool { return r.page == "Page_01" }},
	{"equals long", `{"type":"equals","column":"added","matchValueType":"LONG","matchValue":7}`, func(r testRow) bool { return r.added != nil && *r.added == 7 }},
	{"null", `{"type":"null","column":"added"}`, func(r testRow) bool { return r.added == nil }},
	{"in with null", `{"type":"in","dimension":"channel","values":["#ch1","#ch2",null]}`, func(r testRow) bool { return r.channel == nil || chanIs(r, "#ch1") || chanIs(r, "#ch2") }},
	{"in empty", `{"type":"in","dimension":"channel","values":[]}`, func(testRow) bool { return false }},
	{"in multi-value", `{"type":"in","dimension":"tags","values":["a","f"]}`, func(r testRow) bool { return anyTag(r, func(s string) bool { return s == "a" || s == "f" }) }},
	{"bound lexicographic", `{"type":"bound","dimension":"page","lower":"Page_10","upper":"Page_2","upperStrict":true}`, func(r testRow) bool { return r.page >= "Page_10" && r.page < "Page_2" }},
	{"bound upper only matches nulls", `{"type":"bound","dimension":"channel","upper":"#ch2"}`, func(r testRow) bool { return r.channel == nil || *r.channel <= "#ch2" }},
	{"bound numeric", `{"type":"bound","dimension":"added","lower":"100","lowerStrict":true,"upper":"500","ordering":"numeric"}`, func(r testRow) bool { return r.added != nil && *r.added > 100 && *r.added <= 500 }},
	{"bound numeric double", `{"type":"bound","dimension":"price","lower":"10.5","upper":"20.25","upperStrict":true,"ordering":"numeric"}`, func(r testRow) bool { return r.price >= 10.5 && r.price < 20.25 }},
	{"bound numeric on strings", `{"type":"bound","dimension":"channel","lower":"#ch3","ordering":"numeric"}`, nil},
	{"range long", `{"type":"range","column":"added","matchValueType":"LONG","lower":0,"upper":10,"upperOpen":true}`, func(r testRow) bool { return r.added != nil && *r.added >= 0 && *r.added < 10 }},
	{"range double", `{"type":"range","column":"price","matchValueType":"DOUBLE","lower":500.5}`, func(r testRow) bool { return r.price >= 500.5 }},
	{"range string", `{"type":"range","column":"page","matchValueType":"STRING","lower":"Page_3","lowerOpen":true}`, func(r testRow) bool { return r.page > "Page_3" }},
	{"like", `{"type":"like","dimension":"page","pattern":"Page\\_1%","escape":"\\"}`, func(r testRow) bool { return strings.HasPrefix(r.page, "Page_1") }},
	{"like underscore", `{"type":"like","dimension":"page","pattern":"%_3"}`, func(r testRow) bool { return strings.HasSuffix(r.page, "3") && len(r.page) >= 2 }},
	{"regex", `{"type":"regex","dimension":"page","pattern":"[27]$"}`, func(r testRow) bool { return regexp.MustCompile("[27]$").MatchString(r.page) }},
	{"search contains", `{"type":"search","dimension":"page","query":{"type":"insensitive_contains","value":"GE_0"}}`, func(r testRow) bool { return strings.Contains(r.page, "ge_0") }},
	{"search case sensitive", `{"type":"search","dimension":"page","query":{"type":"contains","value":"GE_0","caseSensitive":true}}`, func(testRow) bool { return false }},
	{"interval on time", `{"type":"interval","dimension":"__time","intervals":["2024-01-01T05:00:00Z/2024-01-01T09:00:00Z"]}`, func(r testRow) bool {
		return r.t >= mustTime("2024-01-01T05:00:00Z") && r.t < mustTime("2024-01-01T09:00:00Z")
	}},
	{"and", `{"type":"and","fields":[{"type":"selector","dimension":"channel","value":"#ch1"},{"type":"bound","dimension":"added","lower":"300","ordering":"numeric"}]}`, func(r testRow) bool {
		return chanIs(r, "#ch1") && r.added != nil && *r.added >= 300
	}},
	{"or", `{"type":"or","fields":[{"type":"selector","dimension":"channel","value":"#ch1"},{"type":"selector","dimension":"page","value":"Page_00"}]}`, func(r testRow) bool {
		return chanIs(r, "#ch1") || r.page == "Page_00"
	}},
	{"not excludes nulls", `{"type":"not","field":{"type":"selector","dimension":"channel","value":"#ch1"}}`, func(r testRow) bool { return r.channel != nil && *r.channel != "#ch1" }},
	{"not not", `{"type":"not","field":{"type":"not","field":{"type":"selector","dimension":"channel","value":"#ch1"}}}`, func(r testRow) bool { return chanIs(r, "#ch1") }},
	{"not of numeric", `{"type":"not","field":{"type":"bound","dimension":"added","upper":"0","ordering":"numeric","upperStrict":true}}`, func(r testRow) bool { return r.added != nil && *r.added >= 0 }},
	{"not of in with null", `{"type":"not","field":{"type":"in","dimension":"channel","values":["#ch1",null]}}`, func(r testRow) bool { return r.channel != nil && *r.channel != "#ch1" }},
	{"true", `{"type":"true"}`, func(testRow) bool { return true }},
	{"false", `{"type":"false"}`, func(testRow) bool { return false }},
	{"expression numeric", `{"type":"expression","expression":"added * 2 > 1000"}`, func(r testRow) bool { return r.added != nil && *r.added*2 > 1000 }},
	{"expression string", `{"type":"expression","expression":"concat(page, 'x') == 'Page_05x'"}`, func(r testRow) bool { return r.page == "Page_05" }},
	{"columnComparison", `{"type":"columnComparison","dimensions":["page",{"type":"extraction","dimension":"page","outputName":"p2","extractionFn":{"type":"upper"}}]}`, func(r testRow) bool { return false }},
	{"selector with extraction", `{"type":"selector","dimension":"page","value":"PAGE_07","extractionFn":{"type":"upper"}}`, func(r testRow) bool { return r.page == "Page_07" }},
	{"regex extraction on tags", `{"type":"selector","dimension":"tags","value":"x","extractionFn":{"type":"lookup","lookup":{"type":"map","map":{"a":"x","b":"x"}}}}`, func(r testRow) bool {
		return anyTag(r, func(s string) bool { return s == "a" || s == "b" })
	}},
	{"not on multi-value", `{"type":"not","field":{"type":"selector","dimension":"tags","value":"a"}}`, func(r testRow) bool {
		return len(r.tags) > 0 && !anyTag(r, func(s string) bool { return s == "a" })
	}},
	{"tags null", `{"type":"selector","dimension":"tags","value":null}`, func(r testRow) bool { return len(r.tags) == 0 }},
}

func TestFilters(t *testing.T) {
	rows := genRows(4000, 2, 7)
	segs := buildSegments(t, rows, 256)
	for _, c := range filterCases {
		if c.match == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
				"intervals":["2024-01-01/2024-01-03"],"filter":`+c.filter+`,"aggregations":[{"type":"count","name":"c"}],
				"context":{"skipEmptyBuckets":false}}`))
			want := 0
			for _, r := range rows {
				if c.match(r) {
					want++
				}
			}
			got, _ := num(obj(obj(res[0])["result"])["c"])
			if int(got) != want {
				t.Errorf("count %v, want %d", got, want)
			}
		})
	}
}

// TestFilteredAggregator checks the filtered aggregator against the same
// filters.
func TestFilteredAggregator(t *testing.T) {
	rows := genRows(3000, 2, 8)
	segs := buildSegments(t, rows, 200)
	for _, c := range filterCases[:12] {
		if c.match == nil {
			continue
		}
		res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
			"intervals":["2024-01-01/2024-01-03"],"aggregations":[{"type":"filtered","filter":`+c.filter+`,
			"aggregator":{"type":"longSum","name":"s","fieldName":"added"}},{"type":"count","name":"all"}]}`))
		var in []testRow
		for _, r := range rows {
			if c.match(r) {
				in = append(in, r)
			}
		}
		r := obj(obj(res[0])["result"])
		checkNum(t, c.name, r["s"], oracle(in, "longSum", "added"))
		checkNum(t, c.name+" all", r["all"], f64p(float64(len(rows))))
	}
}
