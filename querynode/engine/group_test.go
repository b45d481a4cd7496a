package engine

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

type kv struct {
	key string
	sum int64
	n   int64
}

func TestTopN(t *testing.T) {
	rows := genRows(6000, 3, 11)
	segs := buildSegments(t, rows, 500)
	for _, gran := range []string{"all", "day"} {
		res := arr(runJSON(t, segs, `{"queryType":"topN","dataSource":"test","granularity":"`+gran+`",
			"intervals":["2024-01-01/2024-01-04"],"dimension":{"type":"default","dimension":"page","outputName":"pg"},
			"metric":"s","threshold":5,
			"aggregations":[{"type":"longSum","name":"s","fieldName":"added"},{"type":"count","name":"c"}],
			"postAggregations":[{"type":"arithmetic","name":"half","fn":"/","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"constant","value":2}]}]}`))
		buckets := map[int64]map[string]*kv{}
		var bucketList []int64
		for _, r := range rows {
			b := t0 + (r.t-t0)/day*day
			if gran == "all" {
				b = rows[0].t
			}
			m := buckets[b]
			if m == nil {
				m = map[string]*kv{}
				buckets[b] = m
				bucketList = append(bucketList, b)
			}
			e := m[r.page]
			if e == nil {
				e = &kv{key: r.page}
				m[r.page] = e
			}
			if r.added != nil {
				e.sum += *r.added
			}
			e.n++
		}
		if len(res) != len(bucketList) {
			t.Fatalf("%s: %d buckets, want %d", gran, len(res), len(bucketList))
		}
		for i, b := range bucketList {
			var list []*kv
			for _, e := range buckets[b] {
				list = append(list, e)
			}
			sort.Slice(list, func(a, c int) bool { return list[a].sum > list[c].sum })
			row := obj(res[i])
			if row["timestamp"] != formatMs(b) {
				t.Errorf("%s: timestamp %v want %s", gran, row["timestamp"], formatMs(b))
			}
			got := arr(row["result"])
			if len(got) != 5 {
				t.Fatalf("%s: %d results", gran, len(got))
			}
			for k, g := range got {
				e := obj(g)
				// Ties in sum may order either way; compare the sums.
				checkNum(t, gran+" s", e["s"], f64p(float64(list[k].sum)))
				pg := e["pg"].(string)
				w := buckets[b][pg]
				checkNum(t, gran+" c", e["c"], f64p(float64(w.n)))
				checkNum(t, gran+" half", e["half"], f64p(float64(w.sum)/2))
			}
		}
	}
}

func TestTopNDimensionMetric(t *testing.T) {
	rows := genRows(2000, 1, 12)
	segs := buildSegments(t, rows, 128)
	res := arr(runJSON(t, segs, `{"queryType":"topN","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimension":"channel",
		"metric":{"type":"inverted","metric":{"type":"dimension","ordering":"lexicographic","previousStop":"#ch2"}},"threshold":3,
		"aggregations":[{"type":"count","name":"c"}]}`))
	got := arr(obj(res[0])["result"])
	var names []string
	for _, g := range got {
		names = append(names, fmt.Sprint(obj(g)["channel"]))
	}
	// Values after "#ch2", in descending order.
	if strings.Join(names, ",") != "#ch7,#ch6,#ch5" {
		t.Errorf("got %v", names)
	}
}

func TestGroupBy(t *testing.T) {
	rows := genRows(5000, 2, 13)
	segs := buildSegments(t, rows, 333)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"day",
		"intervals":["2024-01-01/2024-01-03"],"dimensions":["channel",{"type":"default","dimension":"tags","outputName":"tag"}],
		"aggregations":[{"type":"count","name":"c"},{"type":"longSum","name":"s","fieldName":"added"}],
		"having":{"type":"greaterThan","aggregation":"c","value":10}}`))
	type key struct {
		day       int64
		ch, tag   string
		chN, tagN bool
	}
	want := map[key]*kv{}
	for _, r := range rows {
		d := t0 + (r.t-t0)/day*day
		tags := r.tags
		if len(tags) == 0 {
			tags = []string{"\x00"}
		}
		for _, tg := range tags {
			k := key{day: d, tag: tg, tagN: tg == "\x00"}
			if k.tagN {
				k.tag = ""
			}
			if r.channel == nil {
				k.chN = true
			} else {
				k.ch = *r.channel
			}
			e := want[k]
			if e == nil {
				e = &kv{}
				want[k] = e
			}
			e.n++
			if r.added != nil {
				e.sum += *r.added
			}
		}
	}
	var keys []key
	for k, e := range want {
		if e.n > 10 {
			keys = append(keys, k)
		}
	}
	less := func(a, b key) bool {
		if a.day != b.day {
			return a.day < b.day
		}
		if a.chN != b.chN {
			return a.chN
		}
		if a.ch != b.ch {
			return a.ch < b.ch
		}
		if a.tagN != b.tagN {
			return a.tagN
		}
		return a.tag < b.tag
	}
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	if len(res) != len(keys) {
		t.Fatalf("got %d rows, want %d", len(res), len(keys))
	}
	for i, k := range keys {
		row := obj(res[i])
		if row["version"] != "v1" || row["timestamp"] != formatMs(k.day) {
			t.Fatalf("row %d: %v", i, row)
		}
		ev := obj(row["event"])
		if (ev["channel"] == nil) != k.chN || (!k.chN && ev["channel"] != k.ch) {
			t.Fatalf("row %d channel %v want %v", i, ev["channel"], k)
		}
		if (ev["tag"] == nil) != k.tagN || (!k.tagN && ev["tag"] != k.tag) {
			t.Fatalf("row %d tag %v want %v", i, ev["tag"], k)
		}
		checkNum(t, "c", ev["c"], f64p(float64(want[k].n)))
		checkNum(t, "s", ev["s"], f64p(float64(want[k].sum)))
	}
}

func TestGroupByLimitSpec(t *testing.T) {
	rows := genRows(5000, 2, 14)
	segs := buildSegments(t, rows, 333)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-03"],"dimensions":["page","channel"],
		"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}],
		"postAggregations":[{"type":"expression","name":"neg","expression":"-s"}],
		"limitSpec":{"type":"default","limit":7,"offset":2,"columns":[{"dimension":"neg","direction":"ascending","dimensionOrder":"numeric"},"page","channel"]}}`))
	type g struct {
		page, ch string
		chN      bool
		s        int64
	}
	m := map[[2]string]*g{}
	for _, r := range rows {
		k := [2]string{r.page, "\x00"}
		if r.channel != nil {
			k[1] = *r.channel
		}
		e := m[k]
		if e == nil {
			e = &g{page: r.page, ch: k[1], chN: r.channel == nil}
			m[k] = e
		}
		if r.added != nil {
			e.s += *r.added
		}
	}
	var list []*g
	for _, e := range m {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.s != b.s {
			return a.s > b.s
		}
		if a.page != b.page {
			return a.page < b.page
		}
		if a.chN != b.chN {
			return a.chN
		}
		return a.ch < b.ch
	})
	list = list[2:9]
	if len(res) != 7 {
		t.Fatalf("got %d rows", len(res))
	}
	for i, e := range list {
		row := obj(res[i])
		if row["timestamp"] != "2024-01-01T00:00:00.000Z" {
			t.Errorf("timestamp %v", row["timestamp"])
		}
		ev := obj(row["event"])
		if ev["page"] != e.page {
			t.Errorf("row %d page %v want %s", i, ev["page"], e.page)
		}
		checkNum(t, "s", ev["s"], f64p(float64(e.s)))
		checkNum(t, "neg", ev["neg"], f64p(float64(-e.s)))
	}
}

func TestGroupByNoDimsEmpty(t *testing.T) {
	segs := buildSegments(t, genRows(100, 1, 15), 64)
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2030-01-01/2030-01-02"],"dimensions":[],"aggregations":[{"type":"count","name":"c"},{"type":"longSum","name":"s","fieldName":"added"}]}`))
	if len(res) != 1 {
		t.Fatalf("got %v", res)
	}
	ev := obj(obj(res[0])["event"])
	checkNum(t, "c", ev["c"], f64p(0))
	checkNum(t, "s", ev["s"], nil)
}

func TestGroupByResourceLimit(t *testing.T) {
	segs := buildSegments(t, genRows(3000, 1, 16), 256)
	_, err := runRaw(segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-02"],"dimensions":["user","page"],"aggregations":[{"type":"count","name":"c"}],
		"context":{"maxMergingDictionarySize":10000}}`)
	if err == nil || !strings.Contains(err.Error(), "merge buffer") {
		t.Fatalf("got %v", err)
	}
}

// TestGroupBySingleDimSorted covers the sorted k-way merge of
// single-dimension groupBy partials (multi-value, nulls, several days).
func TestGroupBySingleDimSorted(t *testing.T) {
	rows := genRows(4000, 3, 17)
	segs := buildSegments(t, rows, 300)
	for _, gran := range []string{"all", "day"} {
		res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"`+gran+`",
			"intervals":["2024-01-01/2024-01-04"],"dimensions":["tags"],"aggregations":[{"type":"count","name":"c"}]}`))
		want := map[[2]string]int{}
		for _, r := range rows {
			d := formatMs(t0 + (r.t-t0)/day*day)
			if gran == "all" {
				d = formatMs(t0)
			}
			if len(r.tags) == 0 {
				want[[2]string{d, "\x00"}]++
			}
			for _, tg := range r.tags {
				want[[2]string{d, tg}]++
			}
		}
		if len(res) != len(want) {
			t.Fatalf("%s: got %d rows, want %d", gran, len(res), len(want))
		}
		prev := [2]string{}
		for i, row := range res {
			ev := obj(obj(row)["event"])
			k := [2]string{obj(row)["timestamp"].(string), "\x00"}
			if ev["tags"] != nil {
				k[1] = ev["tags"].(string)
			}
			if i > 0 && (k[0] < prev[0] || k[0] == prev[0] && k[1] <= prev[1]) {
				t.Errorf("%s: row %d out of order: %v after %v", gran, i, k, prev)
			}
			prev = k
			checkNum(t, gran+" "+k[1], ev["c"], f64p(float64(want[k])))
		}
	}
}
