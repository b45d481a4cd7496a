package engine

import (
	"fmt"
	"testing"
)

// oracle computes an aggregate over rows the straightforward way; nil is
// SQL null.
func oracle(rows []testRow, typ, field string) *float64 {
	if typ == "count" {
		return f64p(float64(len(rows)))
	}
	var acc float64
	seen := false
	for _, r := range rows {
		var v float64
		switch field {
		case "added":
			if r.added == nil {
				continue
			}
			v = float64(*r.added)
		case "price":
			v = r.price
		case "weight":
			v = float64(r.weight)
		}
		switch {
		case !seen:
			acc = v
		case typ[len(typ)-3:] == "Sum":
			acc += v
		case typ[len(typ)-3:] == "Min":
			acc = min(acc, v)
		default:
			acc = max(acc, v)
		}
		seen = true
	}
	if !seen {
		return nil
	}
	return &acc
}

var tsAggs = [][2]string{{"count", ""}, {"longSum", "added"}, {"doubleSum", "price"}, {"longMin", "added"},
	{"longMax", "added"}, {"doubleMin", "price"}, {"doubleMax", "price"}, {"floatSum", "weight"}, {"floatMax", "weight"}}

func tsAggJSON() string {
	s := ""
	for i, a := range tsAggs {
		if i > 0 {
			s += ","
		}
		if a[0] == "count" {
			s += `{"type":"count","name":"a0"}`
			continue
		}
		s += fmt.Sprintf(`{"type":%q,"name":"a%d","fieldName":%q}`, a[0], i, a[1])
	}
	return "[" + s + "]"
}

func checkAggs(t *testing.T, what string, res map[string]any, rows []testRow) {
	t.Helper()
	for i, a := range tsAggs {
		want := oracle(rows, a[0], a[1])
		if a[0] == "floatSum" && want != nil {
			// Float sums are rounded to float precision.
			got, _ := num(res[fmt.Sprintf("a%d", i)])
			if d := got - *want; d > 1e-3**want || d < -1e-3**want {
				t.Errorf("%s a%d: got %v want %v", what, i, got, *want)
			}
			continue
		}
		checkNum(t, fmt.Sprintf("%s a%d (%s)", what, i, a[0]), res[fmt.Sprintf("a%d", i)], want)
	}
}

func TestTimeseriesAll(t *testing.T) {
	rows := genRows(5000, 3, 1)
	segs := buildSegments(t, rows, 512)
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2024-01-01/2024-01-08"],"aggregations":`+tsAggJSON()+`}`))
	if len(res) != 1 {
		t.Fatalf("got %d rows", len(res))
	}
	row := obj(res[0])
	// The timestamp is the clipped interval start: the first row's time.
	if want := formatMs(rows[0].t); row["timestamp"] != want {
		t.Errorf("timestamp %v, want %s", row["timestamp"], want)
	}
	checkAggs(t, "all", obj(row["result"]), rows)
}

func TestTimeseriesHourlyZeroFill(t *testing.T) {
	rows := genRows(3000, 2, 2)
	segs := buildSegments(t, rows, 256)
	// A filter that matches rows only in some hours: channel #ch1 and
	// times in the first 3 hours of each day, via an interval filter.
	q := `{"queryType":"timeseries","dataSource":"test","granularity":"hour",
		"intervals":["2024-01-01T01:30:00Z/2024-01-02T06:00:00Z"],
		"filter":{"type":"and","fields":[{"type":"selector","dimension":"channel","value":"#ch1"},
		  {"type":"interval","dimension":"__time","intervals":["2024-01-01/2024-01-01T03:00:00Z","2024-01-02/2024-01-02T03:00:00Z"]}]},
		"aggregations":` + tsAggJSON() + `%s}`
	lo, hi := mustTime("2024-01-01T01:30:00Z"), mustTime("2024-01-02T06:00:00Z")
	match := func(r testRow) bool {
		if r.t < lo || r.t >= hi || r.channel == nil || *r.channel != "#ch1" {
			return false
		}
		h := (r.t - t0) % day
		return h < 3*3600_000
	}
	for _, skip := range []bool{false, true} {
		ctx := ""
		if skip {
			ctx = `,"context":{"skipEmptyBuckets":"true"}`
		}
		res := arr(runJSON(t, segs, fmt.Sprintf(q, ctx)))
		// Expected buckets: every hour from 01:00 day 1 to 05:00 day 2
		// (the data covers both days fully).
		var want []int64
		for b := mustTime("2024-01-01T01:00:00Z"); b < hi; b += 3600_000 {
			var in []testRow
			for _, r := range rows {
				if r.t >= b && r.t < b+3600_000 && match(r) {
					in = append(in, r)
				}
			}
			if skip && len(in) == 0 {
				continue
			}
			want = append(want, b)
		}
		if len(res) != len(want) {
			t.Fatalf("skip=%v: got %d buckets, want %d", skip, len(res), len(want))
		}
		for i, b := range want {
			row := obj(res[i])
			if row["timestamp"] != formatMs(b) {
				t.Fatalf("bucket %d: timestamp %v want %s", i, row["timestamp"], formatMs(b))
			}
			var in []testRow
			for _, r := range rows {
				if r.t >= b && r.t < b+3600_000 && match(r) {
					in = append(in, r)
				}
			}
			checkAggs(t, formatMs(b), obj(row["result"]), in)
		}
	}
}

func TestTimeseriesDescendingLimitGrandTotal(t *testing.T) {
	rows := genRows(2000, 3, 3)
	segs := buildSegments(t, rows, 300)
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"day",
		"intervals":["2023-12-30/2024-01-10"],"descending":true,"limit":2,
		"aggregations":[{"type":"count","name":"c"},{"type":"longSum","name":"s","fieldName":"added"}],
		"postAggregations":[{"type":"arithmetic","name":"avg","fn":"/","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"fieldAccess","fieldName":"c"}]}],
		"context":{"grandTotal":true}}`))
	if len(res) != 3 {
		t.Fatalf("got %d rows: %v", len(res), res)
	}
	perDay := map[int64][]testRow{}
	for _, r := range rows {
		d := t0 + (r.t-t0)/day*day
		perDay[d] = append(perDay[d], r)
	}
	for i, d := range []int64{t0 + 2*day, t0 + day} {
		row := obj(res[i])
		if row["timestamp"] != formatMs(d) {
			t.Errorf("row %d timestamp %v", i, row["timestamp"])
		}
		r := obj(row["result"])
		c := oracle(perDay[d], "count", "")
		s := oracle(perDay[d], "longSum", "added")
		checkNum(t, "c", r["c"], c)
		checkNum(t, "s", r["s"], s)
		checkNum(t, "avg", r["avg"], f64p(*s / *c))
	}
	total := obj(res[2])
	if total["timestamp"] != nil {
		t.Errorf("grand total timestamp %v", total["timestamp"])
	}
	tr := obj(total["result"])
	c, s := oracle(rows, "count", ""), oracle(rows, "longSum", "added")
	checkNum(t, "total c", tr["c"], c)
	checkNum(t, "total s", tr["s"], s)
	checkNum(t, "total avg", tr["avg"], f64p(*s / *c))
}

func TestTimeseriesEmpty(t *testing.T) {
	rows := genRows(500, 1, 4)
	segs := buildSegments(t, rows, 128)
	// All granularity, nothing matches: one row at the interval start.
	res := arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all",
		"intervals":["2025-01-01/2025-01-02"],"aggregations":[{"type":"count","name":"c"},{"type":"longSum","name":"s","fieldName":"added"}]}`))
	if len(res) != 1 || obj(res[0])["timestamp"] != "2025-01-01T00:00:00.000Z" {
		t.Fatalf("got %v", res)
	}
	r := obj(obj(res[0])["result"])
	checkNum(t, "c", r["c"], f64p(0))
	checkNum(t, "s", r["s"], nil)
	// Day granularity outside the data: no rows.
	res = arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"day",
		"intervals":["2025-01-01/2025-01-03"],"aggregations":[{"type":"count","name":"c"}]}`))
	if len(res) != 0 {
		t.Fatalf("got %v", res)
	}
	// Filter matching nothing inside the data range still zero-fills.
	res = arr(runJSON(t, segs, `{"queryType":"timeseries","dataSource":"test","granularity":"day",
		"intervals":["2024-01-01/2024-01-03"],"filter":{"type":"selector","dimension":"channel","value":"nope"},
		"aggregations":[{"type":"count","name":"c"}]}`))
	if len(res) != 1 || obj(obj(res[0])["result"])["c"] != jsonNum("0") {
		t.Fatalf("got %v", res)
	}
}
