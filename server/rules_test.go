package server

import (
	"encoding/json"
	"strings"
	"testing"

	"strata/rules"
)

func TestRulesEndpoints(t *testing.T) {
	ts, _ := single(t, nil)
	base := ts.URL + "/svc/coordinator/v1/rules"
	defaults := string(rules.AppendJSON(nil, rules.Default()))
	expect(t, "GET", base, "", "", 200, `{"_default":`+defaults+`}`)
	expect(t, "GET", base+"/wiki", "", "", 200, `[]`) // unknown datasource: 200, empty
	expect(t, "GET", base+"/wiki?full", "", "", 200, defaults)
	expect(t, "GET", base+"/history?count=5", "", "", 200, `[]`)

	body := `[{"type":"loadByInterval","interval":"2024-01-01/2024-02-01","tieredReplicants":{"hot":1}},{"type":"dropForever"}]`
	req := func(method, url, ctype, body string, hdr map[string]string) (int, string) {
		t.Helper()
		code, got, _ := callWith(t, method, url, ctype, body, hdr)
		return code, got
	}
	if code, got := req("POST", base+"/wiki", "application/json", body, map[string]string{"X-Svc-Author": "ops", "X-Svc-Comment": "keep january"}); code != 200 || got != "" {
		t.Fatalf("POST rules: %d %q", code, got)
	}
	parsed, err := rules.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	canonical := string(rules.AppendJSON(nil, parsed))
	if !strings.Contains(canonical, `"2024-01-01T00:00:00.000Z/2024-02-01T00:00:00.000Z"`) {
		t.Fatalf("interval rules are shown with full timestamps: %s", canonical)
	}
	expect(t, "GET", base+"/wiki", "", "", 200, canonical)
	expect(t, "GET", base+"/wiki?full", "", "", 200, canonical[:len(canonical)-1]+","+defaults[1:])
	expect(t, "GET", base, "", "", 200, `{"_default":`+defaults+`,"wiki":`+canonical+`}`)

	// The cluster defaults change through the same endpoint.
	newDefaults := `[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`
	if code, got := req("POST", base+"/_default", "application/json", newDefaults, nil); code != 200 {
		t.Fatalf("POST _default: %d %s", code, got)
	}
	d, _ := rules.Parse([]byte(newDefaults))
	expect(t, "GET", base+"/_default", "", "", 200, string(rules.AppendJSON(nil, d)))

	// History: per datasource and across all, with Druid's count/interval rules.
	var hist []auditEntryJSON
	getJSON(t, "GET", base+"/wiki/history?count=10", "", "", &hist)
	if len(hist) != 1 || hist[0].Key != "wiki" || hist[0].Type != "rules" || hist[0].Payload != canonical ||
		hist[0].AuditInfo.Author != "ops" || hist[0].AuditInfo.Comment != "keep january" || hist[0].AuditInfo.IP != "127.0.0.1" {
		t.Fatalf("wiki history: %+v", hist)
	}
	hist = nil
	getJSON(t, "GET", base+"/history?count=10", "", "", &hist)
	if len(hist) != 2 || hist[0].Key != "_default" || hist[1].Key != "wiki" {
		t.Fatalf("all history, newest first: %+v", hist)
	}
	hist = nil
	getJSON(t, "GET", base+"/history", "", "", &hist) // default window: the last week, oldest first
	if len(hist) != 2 || hist[0].Key != "wiki" {
		t.Fatalf("all history in the default window: %+v", hist)
	}
	for _, q := range []string{"?count=0", "?count=x", "?interval=yesterday"} {
		if code, got := req("GET", base+"/wiki/history"+q, "", "", nil); code != 400 || !strings.Contains(got, `"error"`) {
			t.Errorf("history%s: %d %s", q, code, got)
		}
	}

	// Bad input: right status, a JSON error, nothing applied.
	before := ""
	_, before, _ = call(t, "GET", base, "", "")
	for _, c := range []struct {
		ctype, body string
		code        int
	}{
		{"application/json", `[{"type":"loadEventually"}]`, 400},
		{"application/json", `[{"type":"dropByInterval"}]`, 400},
		{"application/json", `[{"type":"loadByPeriod","period":"monthly"}]`, 400},
		{"application/json", `[{"type":"loadForever","tieredReplicants":{"hot":-2}}]`, 400},
		{"application/json", `{"type":"loadForever"}`, 400},
		{"application/json", `[{"type":`, 400},
		{"text/plain", `[]`, 415},
		{"application/json", `[` + strings.Repeat(`{"type":"dropForever"},`, 600000) + `{"type":"dropForever"}]`, 413},
	} {
		t.Run(c.ctype+" "+c.body[:min(40, len(c.body))], func(t *testing.T) {
			code, got := req("POST", base+"/wiki", c.ctype, c.body, nil)
			var e ErrorBody
			if code != c.code || json.Unmarshal([]byte(got), &e) != nil || e.Error == "" {
				t.Errorf("POST %.40s: %d %s, want %d with a JSON error", c.body, code, got, c.code)
			}
		})
	}
	if _, after, _ := call(t, "GET", base, "", ""); after != before {
		t.Fatalf("rejected requests changed the rules:\n%s\n%s", before, after)
	}
}
