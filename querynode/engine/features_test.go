package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"strata/querynode/query"
)

func TestPostAggregators(t *testing.T) {
	rows := genRows(1000, 1, 31)
	segs := buildSegments(t, rows, 128)
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],
		"filter":{"type":"selector","dimension":"channel","value":"#ch1"},
		"aggregations":[{"type":"count","name":"c"},{"type":"longSum","name":"s","fieldName":"added"},
		  {"type":"filtered","name":"none","filter":{"type":"false"},"aggregator":{"type":"longSum","name":"x","fieldName":"added"}},
		  {"type":"doubleMax","name":"pm","fieldName":"price"}],
		"postAggregations":[
		  {"type":"arithmetic","name":"div0","fn":"/","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"constant","value":0}]},
		  {"type":"arithmetic","name":"quot0","fn":"quotient","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"constant","value":0}]},
		  {"type":"arithmetic","name":"chain","fn":"-","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"fieldAccess","fieldName":"c"},{"type":"constant","value":1.5}]},
		  {"type":"arithmetic","name":"nullin","fn":"+","fields":[{"type":"fieldAccess","fieldName":"none"},{"type":"constant","value":1}]},
		  {"type":"arithmetic","name":"pw","fn":"pow","fields":[{"type":"constant","value":2},{"type":"constant","value":10}]},
		  {"type":"constant","name":"k","value":7},
		  {"type":"finalizingFieldAccess","name":"fa","fieldName":"c"},
		  {"type":"expression","name":"ex","expression":"s * 2 + c"},
		  {"type":"expression","name":"exref","expression":"chain + 1.5"},
		  {"type":"longGreatest","name":"lg","fields":[{"type":"fieldAccess","fieldName":"c"},{"type":"fieldAccess","fieldName":"none"},{"type":"constant","value":3}]},
		  {"type":"doubleLeast","name":"dl","fields":[{"type":"fieldAccess","fieldName":"pm"},{"type":"constant","value":1000000}]}]}`))
	var c, s int64
	pm := 0.0
	for _, r := range rows {
		if chanIs(r, "#ch1") {
			c++
			if r.added != nil {
				s += *r.added
			}
			pm = max(pm, r.price)
		}
	}
	r := obj(obj(res[0])["result"])
	checkNum(t, "div0", r["div0"], f64p(0))
	if r["quot0"] != "Infinity" && r["quot0"] != "-Infinity" {
		t.Errorf("quotient by 0: %v", r["quot0"])
	}
	checkNum(t, "chain", r["chain"], f64p(float64(s-c)-1.5))
	checkNum(t, "nullin", r["nullin"], nil)
	checkNum(t, "pw", r["pw"], f64p(1024))
	if r["k"] != jsonNum("7") || r["pw"] != jsonNum("1024.0") {
		t.Errorf("constant %v pow %v", r["k"], r["pw"])
	}
	checkNum(t, "fa", r["fa"], f64p(float64(c)))
	checkNum(t, "ex", r["ex"], f64p(float64(2*s+c)))
	checkNum(t, "exref", r["exref"], f64p(float64(s-c)))
	checkNum(t, "lg", r["lg"], f64p(float64(max(c, 3))))
	checkNum(t, "dl", r["dl"], f64p(pm))
	if strings.Contains(string(r["lg"].(interface{ String() string }).String()), ".") {
		t.Errorf("longGreatest must print a long: %v", r["lg"])
	}
}

func TestPeriodGranularityTimeZone(t *testing.T) {
	rows := genRows(2000, 3, 32)
	segs := buildSegments(t, rows, 256)
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test",
		"granularity":{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"},
		"intervals":["2024-01-01/2024-01-04"],"aggregations":[{"type":"count","name":"c"}],"context":{"skipEmptyBuckets":true}}`))
	// Days start at 08:00 UTC (PST, UTC-8).
	counts := map[int64]int{}
	for _, r := range rows {
		b := r.t - ((r.t-8*3600_000)%day+day)%day
		counts[b]++
	}
	var keys []int64
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	if len(res) != len(keys) {
		t.Fatalf("got %d buckets, want %d", len(res), len(keys))
	}
	for i, k := range keys {
		row := obj(res[i])
		want := strings.Replace(formatMs(k-8*3600_000), "Z", "-08:00", 1)
		if row["timestamp"] != want {
			t.Errorf("bucket %d timestamp %v want %s", i, row["timestamp"], want)
		}
		checkNum(t, "c", obj(row["result"])["c"], f64p(float64(counts[k])))
	}
}

func TestVirtualColumnsAndDimensionSpecs(t *testing.T) {
	rows := genRows(3000, 2, 33)
	segs := buildSegments(t, rows, 256)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],
		"virtualColumns":[{"type":"expression","name":"bucket","expression":"added / 250","outputType":"LONG"},
		  {"type":"expression","name":"up","expression":"upper(substring(page, 5, 1))","outputType":"STRING"}],
		"dimensions":[{"type":"default","dimension":"bucket","outputName":"b","outputType":"LONG"},"up",
		  {"type":"extraction","dimension":"__time","outputName":"hour","extractionFn":{"type":"timeFormat","format":"HH"}}],
		"aggregations":[{"type":"count","name":"c"},{"type":"doubleSum","name":"v","expression":"price * 2"}],
		"limitSpec":{"type":"default","columns":[{"dimension":"b","direction":"descending","dimensionOrder":"numeric"},"up","hour"]},
		"context":{"resultAsArray":true}}`))
	type key struct {
		b      int64
		bNull  bool
		up, hr string
	}
	want := map[key][2]float64{}
	for _, r := range rows {
		k := key{bNull: r.added == nil}
		if r.added != nil {
			k.b = *r.added / 250
		}
		k.up = strings.ToUpper(r.page[5:6])
		k.hr = fmt.Sprintf("%02d", (r.t-t0)%day/3600_000)
		e := want[k]
		e[0]++
		e[1] += 2 * r.price
		want[k] = e
	}
	if len(res) != len(want) {
		t.Fatalf("got %d groups, want %d", len(res), len(want))
	}
	var prevB float64 = math.Inf(1)
	for _, row := range res {
		a := arr(row)
		if len(a) != 5 {
			t.Fatalf("row %v", a)
		}
		k := key{bNull: a[0] == nil, up: a[1].(string), hr: a[2].(string)}
		if a[0] != nil {
			f, _ := num(a[0])
			k.b = int64(f)
			if f > prevB {
				t.Errorf("order: %v after %v", f, prevB)
			}
			prevB = f
		}
		e, ok := want[k]
		if !ok {
			t.Fatalf("unexpected group %+v", k)
		}
		checkNum(t, "c", a[3], f64p(e[0]))
		checkNum(t, "v", a[4], f64p(e[1]))
	}
}

func TestHavingFilterAndTopNPostAggMetric(t *testing.T) {
	rows := genRows(3000, 1, 34)
	segs := buildSegments(t, rows, 256)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimensions":["channel"],
		"aggregations":[{"type":"count","name":"c"}],
		"having":{"type":"or","havingSpecs":[{"type":"filter","filter":{"type":"selector","dimension":"channel","value":"#ch1"}},
		  {"type":"not","havingSpec":{"type":"lessThan","aggregation":"c","value":400}}]}}`))
	counts := map[string]int{}
	for _, r := range rows {
		counts[derefOr(r.channel)]++
	}
	n := 0
	for k, c := range counts {
		if k == "#ch1" || c >= 400 {
			n++
		}
	}
	if len(res) != n {
		t.Errorf("having: got %d rows, want %d (%v)", len(res), n, counts)
	}
	res = arr(runJSON(t, segs, `{"queryType":"topN","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimension":"channel","threshold":2,"metric":"neg",
		"aggregations":[{"type":"count","name":"c"}],
		"postAggregations":[{"type":"arithmetic","name":"neg","fn":"*","fields":[{"type":"fieldAccess","fieldName":"c"},{"type":"constant","value":-1}]}]}`))
	var cs []int
	for _, c := range counts {
		cs = append(cs, c)
	}
	sort.Ints(cs)
	got := arr(obj(res[0])["result"])
	for i := range 2 {
		checkNum(t, "c", obj(got[i])["c"], f64p(float64(cs[i])))
	}
}

func TestEngineErrors(t *testing.T) {
	segs := buildSegments(t, genRows(100, 1, 35), 64)
	for _, q := range []string{
		`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024/2025"],"aggregations":[{"type":"HLLSketchMerge","name":"h","fieldName":"page"}]}`,
		`{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024/2025"],"aggregations":[{"type":"longFirst","name":"h","fieldName":"users_hll"}]}`,
		`{"queryType":"timeseries","dataSource":"test","granularity":"none","intervals":["2024/2025"],"aggregations":[{"type":"count","name":"c"}]}`,
	} {
		if _, err := runRaw(segs, q); err == nil {
			t.Errorf("expected an error: %s", q)
		}
	}
}

func TestGroupBySubtotals(t *testing.T) {
	rows := genRows(2000, 1, 36)
	segs := buildSegments(t, rows, 256)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimensions":["channel","page"],
		"aggregations":[{"type":"count","name":"c"}],"subtotalsSpec":[["channel"],[]]}`))
	counts := map[string]int{}
	for _, r := range rows {
		counts[derefOr(r.channel)]++
	}
	if len(res) != len(counts)+1 {
		t.Fatalf("got %d rows, want %d", len(res), len(counts)+1)
	}
	for i, row := range res {
		ev := obj(obj(row)["event"])
		if ev["page"] != nil {
			t.Errorf("page should be null: %v", ev)
		}
		if i == len(res)-1 {
			checkNum(t, "total", ev["c"], f64p(float64(len(rows))))
			continue
		}
		k := "\x00"
		if ev["channel"] != nil {
			k = ev["channel"].(string)
		}
		checkNum(t, k, ev["c"], f64p(float64(counts[k])))
	}
}

func TestHLLMergeLargeCardinality(t *testing.T) {
	a := &query.Aggregator{Type: "cardinality", Name: "u"}
	mk := func(off int) *AggState {
		s := newAggState(a, 1)
		for i := range 40000 {
			if err := s.AddString(0, fmt.Sprintf("user%07d", off+i)); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	out := newAggState(a, 1)
	for _, s := range []*AggState{mk(0), mk(1_000_000), mk(20_000)} {
		if err := out.Combine(0, s, 0); err != nil {
			t.Fatal(err)
		}
	}
	v, err := aggValue(out, 0, true)
	if err != nil || math.Abs(v.D-100000) > 3000 {
		t.Errorf("estimate %v (%v), want about 100000", v.D, err)
	}
}
