package rules

import (
	"reflect"
	"strings"
	"testing"

	"strata/interval"
)

func ms(t testing.TB, s string) int64 {
	t.Helper()
	v, err := interval.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func iv(t testing.TB, s string) interval.Interval {
	t.Helper()
	v, err := interval.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func one(t testing.TB, js string) Rule {
	t.Helper()
	rs, err := Parse([]byte("[" + js + "]"))
	if err != nil {
		t.Fatalf("Parse(%s): %v", js, err)
	}
	return rs[0]
}

func TestAppliesTo(t *testing.T) {
	// now − P1M from 31 March 2023 is 28 February (day clamped); from
	// 31 March 2024 it is 29 February.
	const now = "2023-03-31T12:00:00Z"
	const ago = "2023-02-28T12:00:00Z"
	cases := []struct {
		rule, seg, now string
		want           bool
	}{
		{`{"type":"loadForever"}`, "1000-01-01/1000-01-02", now, true},
		{`{"type":"dropForever"}`, "3000-01-01/3000-01-02", now, true},
		{`{"type":"broadcastForever"}`, "2023-01-01/2023-01-02", now, true},

		// Interval load and broadcast: overlap, half-open ends.
		{`{"type":"loadByInterval","interval":"2023-01-01/2023-02-01"}`, "2022-12-31/2023-01-01", now, false},
		{`{"type":"loadByInterval","interval":"2023-01-01/2023-02-01"}`, "2022-12-31/2023-01-01T00:00:00.001Z", now, true},
		{`{"type":"loadByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-01-31T23:00:00Z/2023-02-02", now, true},
		{`{"type":"loadByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-02-01/2023-02-02", now, false},
		{`{"type":"broadcastByInterval","interval":"2023-01-01/2023-02-01"}`, "2022-01-01/2024-01-01", now, true},
		{`{"type":"broadcastByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-02-01/2023-03-01", now, false},
		// Interval drop: containment.
		{`{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-01-01/2023-02-01", now, true},
		{`{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-01-10/2023-01-11", now, true},
		{`{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-01-31/2023-02-01T00:00:00.001Z", now, false},
		{`{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"}`, "2022-12-31T23:59:59.999Z/2023-01-02", now, false},
		{`{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"}`, "2023-02-01/2023-02-01", now, false},

		// Period load, includeFuture (default): window start < segment end.
		{`{"type":"loadByPeriod","period":"P1M"}`, "2023-02-27/" + ago, now, false},
		{`{"type":"loadByPeriod","period":"P1M"}`, "2023-02-27/2023-02-28T12:00:00.001Z", now, true},
		{`{"type":"loadByPeriod","period":"P1M"}`, "2030-01-01/2030-01-02", now, true},
		{`{"type":"loadByPeriod","period":"P1M"}`, "2024-02-28/2024-02-29", "2024-03-31T12:00:00Z", false},
		{`{"type":"loadByPeriod","period":"P1M"}`, "2024-02-29/2024-02-29T12:00:00.001Z", "2024-03-31T12:00:00Z", true},
		// Period load without future: overlap with [now − period, now].
		{`{"type":"loadByPeriod","period":"P1M","includeFuture":false}`, "2023-03-31T12:00:00Z/2023-04-01", now, false},
		{`{"type":"loadByPeriod","period":"P1M","includeFuture":false}`, "2023-03-31T11:59:59.999Z/2023-04-01", now, true},
		{`{"type":"loadByPeriod","period":"P1M","includeFuture":false}`, "2023-02-01/" + ago, now, false},
		{`{"type":"loadByPeriod","period":"P1M","includeFuture":"false"}`, "2023-02-01/2023-03-01", now, true},
		{`{"type":"broadcastByPeriod","period":"PT1H"}`, "2023-03-31T10:00:00Z/2023-03-31T11:00:00Z", now, false},
		{`{"type":"broadcastByPeriod","period":"PT1H"}`, "2023-03-31T10:00:00Z/2023-03-31T11:00:00.001Z", now, true},
		{`{"type":"broadcastByPeriod","period":"PT1H","includeFuture":false}`, "2023-04-01/2023-04-02", now, false},
		{`{"type":"broadcastByPeriod","period":"PT1H"}`, "2023-04-01/2023-04-02", now, true},

		// Period drop, includeFuture: window start <= segment start.
		{`{"type":"dropByPeriod","period":"P1M"}`, ago + "/2023-03-01", now, true},
		{`{"type":"dropByPeriod","period":"P1M"}`, "2023-02-28T11:59:59.999Z/2023-03-01", now, false},
		{`{"type":"dropByPeriod","period":"P1M"}`, "2099-01-01/2099-01-02", now, true},
		// Period drop without future: the window contains the segment.
		{`{"type":"dropByPeriod","period":"P1M","includeFuture":false}`, ago + "/" + now, now, true},
		{`{"type":"dropByPeriod","period":"P1M","includeFuture":false}`, ago + "/2023-03-31T12:00:00.001Z", now, false},
		{`{"type":"dropByPeriod","period":"P1M","includeFuture":false}`, now + "/" + now, now, false},
		{`{"type":"dropByPeriod","period":"P1M","includeFuture":false}`, "2023-02-28T11:00:00Z/2023-03-01", now, false},

		// Drop before: segment end <= now − period.
		{`{"type":"dropBeforeByPeriod","period":"P1M"}`, "2023-02-01/" + ago, now, true},
		{`{"type":"dropBeforeByPeriod","period":"P1M"}`, "2023-02-01/2023-02-28T12:00:00.001Z", now, false},
		{`{"type":"dropBeforeByPeriod","period":"P1Y"}`, "2022-01-01/2022-03-31T12:00:00Z", now, true},
		{`{"type":"dropBeforeByPeriod","period":"P1Y"}`, "2022-01-01/2022-04-01", now, false},
	}
	for _, c := range cases {
		r := one(t, c.rule)
		if got := r.AppliesTo(iv(t, c.seg), ms(t, c.now)); got != c.want {
			t.Errorf("%s on %s at %s: got %v, want %v", c.rule, c.seg, c.now, got, c.want)
		}
	}
	if (Rule{}).AppliesTo(iv(t, "2023/2024"), 0) {
		t.Error("zero Rule applies")
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ body, want string }{
		{``, "must be a JSON array"},
		{`null`, "got null"},
		{`{"type":"loadForever"}`, "got an object"},
		{`"x"`, "got a string"},
		{`[{"type":"loadForever"}`, "not valid JSON"},
		{`[] []`, "not valid JSON"},
		{`[null]`, "index 0: expected a rule object"},
		{`[{"type":"dropForever"},3]`, "index 1: expected a rule object with a \"type\", got a number"},
		{`[{}]`, `"type" is missing; it must be one of loadForever, loadByInterval`},
		{`[{"type":null}]`, `"type" is missing`},
		{`[{"type":1}]`, `"type" must be a string`},
		{`[{"type":"loadforever"}]`, `unknown type "loadforever"; it must be one of loadForever, loadByInterval, loadByPeriod, dropForever, dropByInterval, dropByPeriod, dropBeforeByPeriod, broadcastForever, broadcastByInterval, broadcastByPeriod`},
		{`[{"type":"loadByInterval"}]`, `index 0 (type "loadByInterval"): property "interval" is required`},
		{`[{"type":"dropByInterval","interval":null}]`, `property "interval" is required`},
		{`[{"type":"broadcastByInterval","interval":5}]`, `property "interval" must be a string`},
		{`[{"type":"dropByInterval","interval":"2023-02-01/2023-01-01"}]`, `property "interval" must be an ISO-8601 interval`},
		{`[{"type":"dropByInterval","interval":"2023-01-01"}]`, `property "interval" must be an ISO-8601 interval`},
		{`[{"type":"loadByPeriod"}]`, `property "period" is required`},
		{`[{"type":"dropBeforeByPeriod","period":"1M"}]`, `property "period" must be a positive ISO-8601 period`},
		{`[{"type":"dropByPeriod","period":"P0D"}]`, `property "period" must be a positive ISO-8601 period such as "P1M" or "PT6H", got "P0D"`},
		{`[{"type":"broadcastByPeriod","period":"P1M-1D"}]`, `got "P1M-1D"`},
		{`[{"type":"dropByPeriod","period":["P1M"]}]`, `property "period" must be a string`},
		{`[{"type":"dropByPeriod","period":"P1M","includeFuture":1}]`, `property "includeFuture" must be true or false, got 1`},
		{`[{"type":"loadByPeriod","period":"P1M","includeFuture":"yes"}]`, `"includeFuture" must be true or false`},
		{`[{"type":"loadForever","useDefaultTierForNull":"no"}]`, `"useDefaultTierForNull" must be true or false`},
		{`[{"type":"loadForever","tieredReplicants":[1]}]`, `"tieredReplicants" must be an object`},
		{`[{"type":"loadForever","tieredReplicants":"hot"}]`, `"tieredReplicants" must be an object`},
		{`[{"type":"loadForever","tieredReplicants":{"hot":-1}}]`, `invalid number of replicas for tier "hot": the value -1 must not be negative`},
		{`[{"type":"loadForever","tieredReplicants":{"hot":null}}]`, `tier "hot": the value must not be null`},
		{`[{"type":"loadForever","tieredReplicants":{"hot":1.5}}]`, `tier "hot": the value 1.5 must be a whole number`},
		{`[{"type":"loadForever","tieredReplicants":{"hot":2147483648}}]`, `must be a whole number from 0 to 2147483647`},
		{`[{"type":"loadForever","tieredReplicants":{"hot":true}}]`, `tier "hot"`},
		{`[{"type":"loadForever"},{"type":"loadForever","tieredReplicants":{"a":1,"b":{}}}]`, `index 1 (type "loadForever"): property "tieredReplicants": invalid number of replicas for tier "b"`},
	}
	for _, c := range cases {
		rs, err := Parse([]byte(c.body))
		if err == nil {
			t.Errorf("Parse(%s) = %v, want error containing %q", c.body, rs, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) error %q, want it to contain %q", c.body, err, c.want)
		}
	}
}

func TestParseLenient(t *testing.T) {
	rs, err := Parse([]byte(" [] "))
	if err != nil || rs == nil || len(rs) != 0 {
		t.Fatalf("Parse([]) = %#v, %v; want empty non-nil", rs, err)
	}
	// Unknown properties are ignored (and properties of other rule types
	// are not checked), as Druid's mapper does; Jackson's string coercions
	// for booleans and ints are accepted; a repeated key keeps its first
	// place and the last value.
	body := `[{"type":"broadcastForever","colocatedDataSources":["a"]},
	  {"type":"dropForever","period":"nonsense","interval":7},
	  {"type":"loadForever","tieredReplicants":{"hot":"3","cold":1,"hot":4},"useDefaultTierForNull":"false","x":{}},
	  {"type":"loadForever","tieredReplicants":{"":0}}]`
	rs, err = Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"broadcastForever"},{"type":"dropForever"},` +
		`{"tieredReplicants":{"hot":4,"cold":1},"useDefaultTierForNull":false,"type":"loadForever"},` +
		`{"tieredReplicants":{"":0},"useDefaultTierForNull":true,"type":"loadForever"}]`
	if got := string(AppendJSON(nil, rs)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := rs[2].Tiers(); !reflect.DeepEqual(got, []Tier{{"hot", 4}, {"cold", 1}}) {
		t.Errorf("Tiers = %v", got)
	}
}

func TestReplicants(t *testing.T) {
	cases := []struct {
		rule string
		want map[string]int
	}{
		{`{"type":"loadForever"}`, map[string]int{"_default_tier": 2}},
		{`{"type":"loadForever","tieredReplicants":null}`, map[string]int{"_default_tier": 2}},
		{`{"type":"loadForever","useDefaultTierForNull":true}`, map[string]int{"_default_tier": 2}},
		{`{"type":"loadByInterval","interval":"2023/2024","useDefaultTierForNull":false}`, map[string]int{}},
		{`{"type":"loadByPeriod","period":"P1D","tieredReplicants":null,"useDefaultTierForNull":false}`, map[string]int{}},
		{`{"type":"loadForever","tieredReplicants":{}}`, map[string]int{}},
		{`{"type":"loadForever","tieredReplicants":{"hot":1,"cold":0},"useDefaultTierForNull":false}`, map[string]int{"hot": 1, "cold": 0}},
		{`{"type":"dropForever"}`, nil},
		{`{"type":"broadcastByPeriod","period":"P1D"}`, nil},
	}
	for _, c := range cases {
		r := one(t, c.rule)
		got := r.Replicants()
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Replicants = %#v, want %#v", c.rule, got, c.want)
		}
		if got != nil {
			got["mutated"] = 9
			if _, ok := r.Replicants()["mutated"]; ok {
				t.Errorf("%s: Replicants returned shared map", c.rule)
			}
		}
	}
	d := Default()
	if len(d) != 1 || d[0].Type() != "loadForever" || d[0].Kind() != Load ||
		!reflect.DeepEqual(d[0].Replicants(), map[string]int{"_default_tier": 2}) {
		t.Errorf("Default() = %v", d)
	}
	if got := string(AppendJSON(nil, d)); got != `[{"tieredReplicants":{"_default_tier":2},"useDefaultTierForNull":true,"type":"loadForever"}]` {
		t.Errorf("Default JSON = %s", got)
	}
}

func TestKindsAndAccessors(t *testing.T) {
	kinds := map[string]Kind{}
	for _, ti := range types {
		kinds[ti.name] = ti.kind
	}
	bodies := map[string]string{
		"loadForever": `{"type":"loadForever"}`, "dropForever": `{"type":"dropForever"}`, "broadcastForever": `{"type":"broadcastForever"}`,
		"loadByInterval": `{"type":"loadByInterval","interval":"2023/2024"}`, "dropByInterval": `{"type":"dropByInterval","interval":"2023/2024"}`,
		"broadcastByInterval": `{"type":"broadcastByInterval","interval":"2023/2024"}`, "loadByPeriod": `{"type":"loadByPeriod","period":"P1D"}`,
		"dropByPeriod": `{"type":"dropByPeriod","period":"P1D"}`, "broadcastByPeriod": `{"type":"broadcastByPeriod","period":"P1D"}`,
		"dropBeforeByPeriod": `{"type":"dropBeforeByPeriod","period":"P1D"}`,
	}
	if len(bodies) != 10 || len(kinds) != 10 {
		t.Fatal("expected ten rule types")
	}
	for name, body := range bodies {
		r := one(t, body)
		if r.Type() != name || r.Kind() != kinds[name] {
			t.Errorf("%s: Type %q Kind %v", body, r.Type(), r.Kind())
		}
		_, hasIv := r.Interval()
		_, hasP := r.Period()
		if hasIv != strings.Contains(name, "Interval") || hasP != strings.Contains(name, "Period") {
			t.Errorf("%s: Interval ok %v, Period ok %v", name, hasIv, hasP)
		}
	}
	if p, ok := one(t, bodies["dropBeforeByPeriod"]).Period(); !ok || p.Days != 1 {
		t.Errorf("Period() = %v %v", p, ok)
	}
}

func TestMatch(t *testing.T) {
	now := ms(t, "2023-06-15T00:00:00Z")
	own, err := Parse([]byte(`[
	  {"type":"loadByPeriod","period":"P7D","tieredReplicants":{"hot":2}},
	  {"type":"dropByInterval","interval":"2020-01-01/2021-01-01"},
	  {"type":"loadByInterval","interval":"2019-01-01/2023-01-01","tieredReplicants":{"cold":1}}]`))
	if err != nil {
		t.Fatal(err)
	}
	defaults, _ := Parse([]byte(`[{"type":"loadByPeriod","period":"P1Y"},{"type":"dropForever"}]`))
	cases := []struct {
		seg, want string // want: type of the matching rule, "" for none
		tier      string
		defaults  []Rule
	}{
		{"2023-06-14/2023-06-15", "loadByPeriod", "hot", defaults},
		{"2020-03-01/2020-03-02", "dropByInterval", "", defaults},
		{"2020-12-31/2021-01-02", "loadByInterval", "cold", defaults},        // not inside the drop interval
		{"2023-03-01/2023-03-02", "loadByPeriod", "_default_tier", defaults}, // default P1Y
		{"2010-01-01/2010-01-02", "dropForever", "", defaults},
		{"2010-01-01/2010-01-02", "", "", nil},
		{"2010-01-01/2010-01-02", "loadForever", "_default_tier", Default()},
	}
	for _, c := range cases {
		r, ok := Match(own, c.defaults, iv(t, c.seg), now)
		if ok != (c.want != "") || r.Type() != c.want {
			t.Errorf("%s: matched %q (%v), want %q", c.seg, r.Type(), ok, c.want)
			continue
		}
		if c.tier != "" {
			if _, has := r.Replicants()[c.tier]; !has {
				t.Errorf("%s: matched %s, want tier %s", c.seg, r, c.tier)
			}
		}
	}
}

func TestAppendJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[]`, `[]`},
		{`[{"type":"dropByInterval","interval":"2023-01-01/2023-02-01"}]`,
			`[{"interval":"2023-01-01T00:00:00.000Z/2023-02-01T00:00:00.000Z","type":"dropByInterval"}]`},
		{`[{"type":"loadForever","tieredReplicants":{"_default_tier":2}}]`,
			`[{"tieredReplicants":{"_default_tier":2},"useDefaultTierForNull":true,"type":"loadForever"}]`},
		{`[{"interval":"2010-01-01/2020-01-01","type":"loadByInterval"},{"type":"dropForever"}]`,
			`[{"interval":"2010-01-01T00:00:00.000Z/2020-01-01T00:00:00.000Z","tieredReplicants":{"_default_tier":2},"useDefaultTierForNull":true,"type":"loadByInterval"},{"type":"dropForever"}]`},
		{`[{"type":"loadByPeriod","period":"p1m","tieredReplicants":{"hot":1,"_default_tier":1},"useDefaultTierForNull":false}]`,
			`[{"period":"P1M","includeFuture":true,"tieredReplicants":{"hot":1,"_default_tier":1},"useDefaultTierForNull":false,"type":"loadByPeriod"}]`},
		{`[{"type":"dropByPeriod","period":"P1M","includeFuture":false},{"type":"dropBeforeByPeriod","period":"PT36H"}]`,
			`[{"period":"P1M","includeFuture":false,"type":"dropByPeriod"},{"period":"PT36H","type":"dropBeforeByPeriod"}]`},
		{`[{"type":"broadcastForever"},{"type":"broadcastByInterval","interval":"2018-01-01T05:00:00+05:00/P1D"},{"type":"broadcastByPeriod","period":"PT1.5S"}]`,
			`[{"type":"broadcastForever"},{"interval":"2018-01-01T00:00:00.000Z/2018-01-02T00:00:00.000Z","type":"broadcastByInterval"},{"period":"PT1.500S","includeFuture":true,"type":"broadcastByPeriod"}]`},
		{`[{"type":"loadForever","tieredReplicants":{"a\"b\\c\n\u0001/é<":1}}]`,
			`[{"tieredReplicants":{"a\"b\\c\n\u0001/é<":1},"useDefaultTierForNull":true,"type":"loadForever"}]`},
	}
	for _, c := range cases {
		rs, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatalf("Parse(%s): %v", c.in, err)
		}
		got := AppendJSON([]byte("x"), rs)
		if string(got) != "x"+c.want {
			t.Errorf("AppendJSON(%s)\n got %s\nwant x%s", c.in, got, c.want)
		}
		again, err := Parse(got[1:])
		if err != nil || !equalRules(again, rs) || !reflect.DeepEqual(again, rs) {
			t.Errorf("round trip of %s: %v, %v", got[1:], again, err)
		}
	}
	if got := string(AppendJSON(nil, nil)); got != "[]" {
		t.Errorf("AppendJSON(nil) = %s", got)
	}
}

func equalRules(a, b []Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func TestEqual(t *testing.T) {
	a := one(t, `{"type":"loadForever","tieredReplicants":{"hot":1,"cold":2}}`)
	for _, other := range []string{
		`{"type":"loadForever","tieredReplicants":{"hot":1}}`,
		`{"type":"loadForever","tieredReplicants":{"hot":1,"cold":3}}`,
		`{"type":"loadForever","tieredReplicants":{"hot":1,"cold":2},"useDefaultTierForNull":false}`,
		`{"type":"dropForever"}`,
	} {
		if a.Equal(one(t, other)) {
			t.Errorf("%s equals %s", a, other)
		}
	}
	if !a.Equal(one(t, `{"tieredReplicants":{"hot":1,"cold":2},"type":"loadForever","useDefaultTierForNull":true}`)) {
		t.Error("equal rules differ")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, `[{"type":"loadForever"}]`,
		`[{"type":"loadByInterval","interval":"2012-01-01/2013-01-01","tieredReplicants":{"hot":1,"_default_tier":1}}]`,
		`[{"type":"loadByPeriod","period":"P1M","includeFuture":false,"tieredReplicants":{},"useDefaultTierForNull":false}]`,
		`[{"type":"dropByPeriod","period":"PT0.5S"},{"type":"dropBeforeByPeriod","period":"P1Y2M3W4DT5H6M7S"}]`,
		`[{"type":"broadcastByInterval","interval":"-0001-01-01/P1D"},{"type":"broadcastForever"}]`,
		`[{"type":"loadForever","tieredReplicants":{"a":"2","a":3,"\u0000":0}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rs, err := Parse(body)
		if err != nil {
			return
		}
		out := AppendJSON(nil, rs)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("reparse of %s: %v", out, err)
		}
		if !equalRules(rs, again) {
			t.Fatalf("round trip changed rules: %s", out)
		}
		if out2 := AppendJSON(nil, again); string(out2) != string(out) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
		for _, r := range rs {
			r.AppliesTo(interval.Interval{Start: 0, End: 1}, 1700000000000)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	own, err := Parse([]byte(`[{"type":"loadByPeriod","period":"P1M","tieredReplicants":{"hot":2}},
	  {"type":"dropByInterval","interval":"2020-01-01/2021-01-01"},
	  {"type":"loadByPeriod","period":"P1Y","tieredReplicants":{"cold":1}},{"type":"dropForever"}]`))
	if err != nil {
		b.Fatal(err)
	}
	now := ms(b, "2023-06-15T00:00:00Z")
	seg := iv(b, "2021-06-01/2021-06-02") // falls through to the last rule
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Match(own, nil, seg, now); !ok {
			b.Fatal("no match")
		}
	}
}
