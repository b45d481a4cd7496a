package query

import (
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	q, err := Parse([]byte(`{"queryType":"groupBy","dataSource":{"type":"table","name":"wiki"},"granularity":"day",
		"intervals":["2024-01-03/2024-01-05","2024-01-01/P2D"],"dimensions":["country",{"type":"extraction","dimension":"page","outputName":"p","extractionFn":{"type":"substring","index":1,"length":2}}],
		"filter":{"type":"and","fields":[{"type":"in","dimension":"country","values":["C001",null]},{"type":"bound","dimension":"added","lower":"100","lowerStrict":true,"ordering":"numeric"}]},
		"aggregations":[{"type":"count","name":"c"},{"type":"filtered","filter":{"type":"true"},"aggregator":{"type":"longSum","name":"s","fieldName":"added"}}],
		"postAggregations":[{"type":"arithmetic","name":"r","fn":"/","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"constant","value":3}]}],
		"limitSpec":{"type":"default","limit":5,"columns":[{"dimension":"c","direction":"descending","dimensionOrder":"numeric"},"country"]},
		"having":{"type":"and","havingSpecs":[{"type":"greaterThan","aggregation":"c","value":1},{"type":"dimSelector","dimension":"country","value":"C001"}]},
		"context":{"timeout":"1500","priority":5,"queryId":"abc","sortByDimsFirst":"true"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.Type != GroupBy || q.DataSource != "wiki" || len(q.GroupBy.Dimensions) != 2 || q.GroupBy.Dimensions[1].OutputName != "p" {
		t.Fatalf("parsed %+v", q)
	}
	// The two intervals abut after sorting: condensed into one.
	if len(q.Intervals) != 1 || q.Intervals[0].String() != "2024-01-01T00:00:00.000Z/2024-01-05T00:00:00.000Z" {
		t.Errorf("intervals %v", q.Intervals)
	}
	if q.Context.Timeout != 1500 || q.Context.Priority != 5 || q.Context.QueryID != "abc" || !q.Context.SortByDimsFirst {
		t.Errorf("context %+v", q.Context)
	}
	if q.Aggregations[1].Name != "s" || q.Aggregations[1].ValueKind() != KindLong || q.Aggregations[1].Op() != "sum" {
		t.Errorf("filtered aggregator %+v", q.Aggregations[1])
	}
	if f := q.Filter.Fields[0]; len(f.Values) != 2 || f.Values[1] != nil {
		t.Errorf("in values %v", f.Values)
	}
	if q.GroupBy.LimitSpec.Limit != 5 || !q.GroupBy.LimitSpec.Columns[0].Descending || q.GroupBy.LimitSpec.Columns[1].Ordering != Lexicographic {
		t.Errorf("limitSpec %+v", q.GroupBy.LimitSpec)
	}
	for _, s := range []string{
		`{"queryType":"timeBoundary","dataSource":"w","bound":"MAXTIME"}`,
		`{"queryType":"dataSourceMetadata","dataSource":"w"}`,
		`{"queryType":"segmentMetadata","dataSource":"w","analysisTypes":["Cardinality","size"],"merge":true}`,
		`{"queryType":"scan","dataSource":{"type":"union","dataSources":["a","b"]},"intervals":"2024/2025","resultFormat":"compactedList"}`,
		`{"queryType":"search","dataSource":"w","intervals":{"type":"intervals","intervals":["2024/2025"]},"query":{"type":"fragment","values":["a","b"]}}`,
		`{"queryType":"topN","dataSource":"w","intervals":["2024/2025"],"granularity":{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"},"dimension":"d","threshold":3,"metric":{"type":"inverted","metric":"c"},"aggregations":[{"type":"count","name":"c"}]}`,
	} {
		if _, err := Parse([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		body string
		kind ErrorKind
		msg  string
	}{
		{`not json`, InvalidInput, "Json parse failed"},
		{`[1]`, InvalidInput, "JSON object"},
		{`{"dataSource":"w"}`, InvalidInput, "queryType"},
		{`{"queryType":"timeBoundaries","dataSource":"w"}`, InvalidInput, "Could not resolve type id 'timeBoundaries'"},
		{`{"queryType":"timeseries","intervals":["2024/2025"],"granularity":"all"}`, InvalidInput, "dataSource"},
		{`{"queryType":"timeseries","dataSource":"w","granularity":"all"}`, InvalidInput, "intervals"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024-13-01/2025"],"granularity":"all"}`, InvalidInput, "Invalid interval"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2025/2024"],"granularity":"all"}`, InvalidInput, "Invalid interval"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"]}`, InvalidInput, "granularity"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"fortnight"}`, InvalidInput, "granularity"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","filter":{"type":"nope"}}`, InvalidInput, "Could not resolve type id 'nope'"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","filter":{"type":"selector","value":"x"}}`, InvalidInput, "dimension"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","filter":{"type":"bound","dimension":"x"}}`, InvalidInput, "lower and upper"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","filter":{"type":"regex","dimension":"x","pattern":"("}}`, InvalidInput, "regular expression"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","filter":{"type":"javascript","dimension":"x","function":"f"}}`, Unsupported, "JavaScript"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"longSum","name":"s"}]}`, InvalidInput, "fieldName"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"sum","name":"s","fieldName":"x"}]}`, InvalidInput, "AggregatorFactory"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"c"},{"type":"count","name":"c"}]}`, InvalidInput, "Duplicate output name"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","postAggregations":[{"type":"arithmetic","name":"x","fn":"%","fields":[{"type":"constant","value":1},{"type":"constant","value":1}]}]}`, InvalidInput, "arithmetic"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","virtualColumns":[{"type":"expression","name":"v","expression":"1 +"}]}`, InvalidInput, "expression"},
		{`{"queryType":"topN","dataSource":"w","intervals":["2024/2025"],"granularity":"all","dimension":"d","metric":"c","aggregations":[{"type":"count","name":"c"}]}`, InvalidInput, "threshold"},
		{`{"queryType":"topN","dataSource":"w","intervals":["2024/2025"],"granularity":"all","dimension":"d","threshold":5,"metric":"zz","aggregations":[{"type":"count","name":"c"}]}`, InvalidInput, "metric [zz]"},
		{`{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"all","dimensions":["d"],"limitSpec":{"type":"default","columns":["nope"]}}`, InvalidInput, "limitSpec column"},
		{`{"queryType":"scan","dataSource":"w","intervals":["2024/2025"],"resultFormat":"valueVector"}`, InvalidInput, "valueVector"},
		{`{"queryType":"scan","dataSource":"w","intervals":["2024/2025"],"order":"ascending","columns":["a"]}`, InvalidInput, "__time"},
		{`{"queryType":"search","dataSource":"w","intervals":["2024/2025"]}`, InvalidInput, "query"},
		{`{"queryType":"timeseries","dataSource":{"type":"lookup","lookup":"l"},"intervals":["2024/2025"],"granularity":"all"}`, InvalidInput, "Lookup [l] not found"},
		{`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","context":{"timeout":"soon"}}`, InvalidInput, "Query context parse failed"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.body))
		qe := AsError(err)
		if qe == nil || qe.Kind != c.kind || !strings.Contains(qe.Message, c.msg) {
			t.Errorf("%s\n  got %v (kind %v), want kind %v with %q", c.body, err, kindOf(qe), c.kind, c.msg)
		}
	}
	if (&Error{Kind: InvalidInput}).HTTPStatus() != 400 || (&Error{Kind: Timeout}).HTTPStatus() != 504 ||
		(&Error{Kind: ResourceLimit}).LegacyCode() != "Resource limit exceeded" || (&Error{Kind: Cancelled}).LegacyCode() != "Query cancelled" {
		t.Error("error mapping")
	}
}

func kindOf(e *Error) any {
	if e == nil {
		return nil
	}
	return e.Kind
}

func TestOrderings(t *testing.T) {
	cases := []struct {
		ord  Ordering
		a, b string
		want int
	}{
		{Lexicographic, "a10", "a9", -1},
		{Alphanumeric, "a10", "a9", 1},
		{Alphanumeric, "a01", "a1", 0},
		{Numeric, "10", "9", 1},
		{Numeric, "-1.5", "-1.25", -1},
		{Numeric, "abc", "1", -1},
		{Strlen, "zz", "aaa", -1},
		{Strlen, "ab", "aa", 1},
		{Version, "1.10.0", "1.9", 1},
		{Version, "1.0", "1", 0},
	}
	for _, c := range cases {
		if got := c.ord.Compare(c.a, false, c.b, false); got != c.want {
			t.Errorf("%s(%q, %q) = %d, want %d", c.ord, c.a, c.b, got, c.want)
		}
	}
	if Lexicographic.Compare("", true, "", false) != -1 {
		t.Error("null must sort first")
	}
}

func TestExtractionFns(t *testing.T) {
	cases := []struct {
		fn   string
		in   string
		null bool
		out  string
		outN bool
	}{
		{`{"type":"substring","index":1,"length":3}`, "abcdef", false, "bcd", false},
		{`{"type":"substring","index":10}`, "abc", false, "", true},
		{`{"type":"regex","expr":"(\\d+)"}`, "ab12cd", false, "12", false},
		{`{"type":"regex","expr":"(\\d+)","replaceMissingValue":true,"replaceMissingValueWith":"none"}`, "abc", false, "none", false},
		{`{"type":"regex","expr":"(\\d+)"}`, "abc", false, "abc", false},
		{`{"type":"partial","expr":"^a"}`, "bcd", false, "", true},
		{`{"type":"searchQuery","query":{"type":"contains","value":"B"}}`, "abc", false, "abc", false},
		{`{"type":"strlen"}`, "héllo", false, "5", false},
		{`{"type":"upper"}`, "abc", false, "ABC", false},
		{`{"type":"lookup","lookup":{"type":"map","map":{"a":"x"}},"retainMissingValue":true}`, "b", false, "b", false},
		{`{"type":"lookup","lookup":{"type":"map","map":{"a":"x"}},"replaceMissingValueWith":"?"}`, "b", false, "?", false},
		{`{"type":"lookup","lookup":{"type":"map","map":{"a":"x"}}}`, "a", false, "x", false},
		{`{"type":"cascade","extractionFns":[{"type":"upper"},{"type":"substring","index":0,"length":1}]}`, "xyz", false, "X", false},
		{`{"type":"stringFormat","format":"[%s]"}`, "v", false, "[v]", false},
		{`{"type":"stringFormat","format":"[%s]","nullHandling":"returnNull"}`, "", true, "", true},
		{`{"type":"stringFormat","format":"[%s]"}`, "", true, "[null]", false},
		{`{"type":"bucket","size":10,"offset":2}`, "37", false, "32", false},
		{`{"type":"timeFormat","format":"yyyy-MM-dd","timeZone":"America/New_York"}`, "2024-01-01T03:00:00Z", false, "2023-12-31", false},
		{`{"type":"timeFormat","granularity":"day","asMillis":true}`, "1704070800000", false, "2024-01-01T00:00:00.000Z", false},
	}
	for _, c := range cases {
		f, err := ParseExtractionFn([]byte(c.fn))
		if err != nil {
			t.Errorf("%s: %v", c.fn, err)
			continue
		}
		out, null := f.Apply(c.in, c.null)
		if out != c.out || null != c.outN {
			t.Errorf("%s(%q) = %q,%v want %q,%v", c.fn, c.in, out, null, c.out, c.outN)
		}
	}
	f, _ := ParseExtractionFn([]byte(`{"type":"timeFormat","format":"HH","granularity":"hour"}`))
	if s, _ := f.ApplyLong(1704070800000 + 1234); s != "01" {
		t.Errorf("timeFormat on millis: %s", s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"queryType":"timeseries","dataSource":"w","intervals":["2024/2025"],"granularity":"all","aggregations":[{"type":"count","name":"c"}]}`,
		`{"queryType":"topN","dataSource":"w","intervals":["2024/2025"],"granularity":"day","dimension":"d","threshold":3,"metric":"c","aggregations":[{"type":"count","name":"c"}]}`,
		`{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"all","dimensions":["a"],"filter":{"type":"not","field":{"type":"like","dimension":"a","pattern":"%x_"}},"having":{"type":"lessThan","aggregation":"c","value":3},"aggregations":[{"type":"count","name":"c"}]}`,
		`{"queryType":"scan","dataSource":"w","intervals":["2024/2025"],"limit":3}`,
		`{"queryType":"search","dataSource":"w","intervals":["2024/2025"],"query":{"type":"regex","pattern":"a+"}}`,
		`{"queryType":"segmentMetadata","dataSource":"w"}`,
		`{"queryType":"scan","dataSource":{"type":"inline","columnNames":["a","b"],"columnTypes":["STRING",null],"rows":[["x",1],[null,2.5]]},"intervals":["1970/2100"]}`,
		`{"queryType":"timeseries","dataSource":{"type":"query","query":{"queryType":"groupBy","dataSource":"w","intervals":["2024/2025"],"granularity":"day","dimensions":["a"],"aggregations":[{"type":"count","name":"c"}]}},"intervals":["2024/2025"],"aggregations":[{"type":"longSum","name":"s","fieldName":"c"}]}`,
		`{"queryType":"groupBy","dataSource":{"type":"join","left":{"type":"join","left":"w","right":{"type":"lookup","lookup":"l"},"rightPrefix":"l.","condition":"a == \"l.k\"","joinType":"LEFT"},` +
			`"right":{"type":"query","query":{"queryType":"scan","dataSource":"v","intervals":["2024/2025"]}},"rightPrefix":"r.","condition":"(lower(a) == \"r.b\") && (\"l.v\" == \"r.c\")","joinType":"INNER"},` +
			`"intervals":["2024/2025"],"granularity":"all","dimensions":["r.b"],"aggregations":[{"type":"count","name":"c"}]}`,
		`{}`, `[]`, `{"queryType":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := Parse(b)
		if err == nil && q == nil {
			t.Fatal("nil query without error")
		}
		if err != nil && AsError(err) == nil {
			t.Fatal("error lost")
		}
	})
}
