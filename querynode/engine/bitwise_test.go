package engine

import "testing"

// BIT_AND/OR/XOR's expression aggregators per group agree with folding
// the generated rows; a group without values is null; folds other than
// the bitwise ones of one field are refused.
func TestBitwiseExpressionAggregators(t *testing.T) {
	rows := genRows(3000, 2, 17)
	segs := buildSegments(t, rows, 256)
	agg := func(name, fn, init string) string {
		return `{"type":"expression","name":"` + name + `","fields":["added"],"initialValue":"` + init + `","fold":"` + fn + `(\"__acc\", \"added\")","combine":"` + fn + `(\"__acc\", \"` + name + `\")"}`
	}
	res := arr(runJSON(t, segs, `{"queryType":"groupBy","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-03"],"dimensions":["channel"],
		"aggregations":[`+agg("and", "bitwiseAnd", "-1")+`,`+agg("or", "bitwiseOr", "0")+`,`+agg("xor", "bitwiseXor", "0")+`,`+agg("and0", "bitwiseAnd", "0")+`,
		{"type":"filtered","filter":{"type":"selector","dimension":"page","value":"nope"},"aggregator":`+agg("none", "bitwiseOr", "0")+`}]}`))
	type acc struct {
		and, or, xor int64
		n            int
	}
	by := map[string]*acc{}
	for _, r := range rows {
		k := derefOr(r.channel)
		if by[k] == nil {
			by[k] = &acc{and: -1}
		}
		if r.added != nil {
			a := by[k]
			a.and &= *r.added
			a.or |= *r.added
			a.xor ^= *r.added
			a.n++
		}
	}
	for _, row := range res {
		ev := obj(obj(row)["event"])
		key := "\x00"
		if c, ok := ev["channel"].(string); ok {
			key = c
		}
		a := by[key]
		for name, want := range map[string]int64{"and": a.and, "or": a.or, "xor": a.xor, "and0": 0} {
			if got, ok := num(ev[name]); !ok || int64(got) != want {
				t.Errorf("%s %s = %v, want %d", key, name, ev[name], want)
			}
		}
		if ev["none"] != nil {
			t.Errorf("%s: fold of no values = %v, want null", key, ev["none"])
		}
	}
	for _, bad := range []string{
		`{"type":"expression","name":"x","fields":["added"],"initialValue":"0","fold":"bitwiseAnd(\"__acc\", \"page\")"}`,
		`{"type":"expression","name":"x","fields":["added","page"],"initialValue":"0","fold":"bitwiseOr(\"__acc\", \"added\")"}`,
		`{"type":"expression","name":"x","fields":["added"],"initialValue":"0","fold":"bitwiseOr(\"__acc\", \"added\")","combine":"bitwiseAnd(\"__acc\", \"x\")"}`,
		`{"type":"expression","name":"x","fields":["added"],"initialValue":"0.5","fold":"bitwiseXor(\"__acc\", \"added\")"}`,
	} {
		if _, err := runRaw(segs, `{"queryType":"timeseries","dataSource":"test","granularity":"all","intervals":["2024-01-01/2024-01-03"],"aggregations":[`+bad+`]}`); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
