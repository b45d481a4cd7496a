package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/ingest/input"
	"strata/internal/eventually"
	"strata/props"
	"strata/querynode/broker"
	"strata/querynode/lookupcache"
	"strata/querynode/query"
)

const lookupsPath = "/svc/coordinator/v1/lookups"

func lookupJSON(version, m string) string {
	return `{"version":"` + version + `","lookupExtractorFactory":{"type":"map","map":` + m + `}}`
}

func TestLookupEndpoints(t *testing.T) {
	ts, _ := single(t, nil)
	u := ts.URL + lookupsPath
	js := "application/json"
	notInit := `{"error":"Lookups are not initialized: POST {} to /svc/coordinator/v1/lookups/config first"}`
	expect(t, "GET", u+"/config", "", "", 404, notInit)
	expect(t, "GET", u+"/config/all", "", "", 404, notInit)
	expect(t, "POST", u+"/config", js, `{"__default":{"country":`+lookupJSON("v1", `{"US":"United States"}`)+`}}`, 400,
		`{"error":"Not initialized. If this is the first lookup, post an empty map to initialize"}`)
	expect(t, "POST", u+"/config", js, `{}`, 202, `{}`)
	expect(t, "GET", u+"/config", "", "", 200, `[]`)
	expect(t, "POST", u+"/config", js, `{}`, 202, `{}`) // initialising again changes nothing

	bulk := `{"__default":{"country":` + lookupJSON("v1", `{"US":"United States","FR":"France"}`) + `,"site":` + lookupJSON("a", `{}`) + `},` +
		`"hot":{"code":{"version":"1","lookupExtractorFactory":{"type":"map","map":{"1":"one"},"isOneToOne":true}}}}`
	code, body, _ := callWith(t, "POST", u+"/config", js, bulk, map[string]string{"X-Svc-Author": "ops", "X-Svc-Comment": "first lookups"})
	if code != 202 || body != bulk {
		t.Fatalf("bulk update: %d %s", code, body)
	}
	country := `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"FR":"France","US":"United States"},"isOneToOne":false}}`
	site := `{"version":"a","lookupExtractorFactory":{"type":"map","map":{},"isOneToOne":false}}`
	code1 := `{"version":"1","lookupExtractorFactory":{"type":"map","map":{"1":"one"},"isOneToOne":true}}`
	expect(t, "GET", u+"/config", "", "", 200, `["__default","hot"]`)
	expect(t, "GET", u+"/config/all", "", "", 200, `{"__default":{"country":`+country+`,"site":`+site+`},"hot":{"code":`+code1+`}}`)
	expect(t, "GET", u+"/config/__default", "", "", 200, `["country","site"]`)
	expect(t, "GET", u+"/config/__default?detailed=true", "", "", 200, `{"country":`+country+`,"site":`+site+`}`)
	expect(t, "GET", u+"/config/__default/country", "", "", 200, country)

	// One lookup: a higher version replaces it.
	expect(t, "POST", u+"/config/__default/country", js, lookupJSON("v2", `{"US":"USA"}`), 202, "")
	expect(t, "GET", u+"/config/__default/country", "", "", 200,
		`{"version":"v2","lookupExtractorFactory":{"type":"map","map":{"US":"USA"},"isOneToOne":false}}`)

	// With no querying process reporting, every lookup counts as loaded.
	expect(t, "GET", u+"/status", "", "", 200, `{"__default":{"country":{"loaded":true},"site":{"loaded":true}},"hot":{"code":{"loaded":true}}}`)
	expect(t, "GET", u+"/status/hot?detailed=true", "", "", 200, `{"code":{"loaded":true,"pendingNodes":[]}}`)
	expect(t, "GET", u+"/status/hot/code", "", "", 200, `{"loaded":true}`)
	expect(t, "GET", u+"/nodeStatus", "", "", 200, `{}`)

	// The audit names who changed what.
	var hist []struct {
		Key       string `json:"key"`
		Type      string `json:"type"`
		AuditInfo struct {
			Author, Comment string
		} `json:"auditInfo"`
		Payload string `json:"payload"`
	}
	getJSON(t, "GET", u+"/history?count=10", "", "", &hist)
	if len(hist) != 3 || hist[1].AuditInfo.Author != "ops" || hist[1].AuditInfo.Comment != "first lookups" ||
		hist[1].Type != "lookupsConfig" || !strings.Contains(hist[1].Payload, `"hot":{"code":`) || !strings.Contains(hist[0].Payload, `"USA"`) {
		t.Fatalf("history: %+v", hist)
	}

	expect(t, "DELETE", u+"/config/__default/site", "", "", 202, "")
	expect(t, "GET", u+"/config/__default/site", "", "", 404, `{"error":"lookup [site] not found in tier [__default]"}`)
	expect(t, "DELETE", u+"/config/hot", "", "", 202, "")
	expect(t, "GET", u+"/config/hot", "", "", 404, `{"error":"Tier [hot] not found"}`)
	expect(t, "GET", u+"/config", "", "", 200, `["__default"]`)
}

// Bad input is a JSON 4xx and changes nothing.
func TestLookupBadInput(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.server.http.maxRequestBytes", "2000")
	ts, _ := single(t, p)
	u := ts.URL + lookupsPath
	js := "application/json"
	expect(t, "POST", u+"/config", js, `{}`, 202, `{}`)
	expect(t, "POST", u+"/config/__default/country", js, lookupJSON("v1", `{"US":"United States"}`), 202, "")
	state := func() string {
		_, b, _ := call(t, "GET", u+"/config/all", "", "")
		return b
	}
	before := state()
	for _, c := range []struct {
		method, path, ctype, body string
		status                    int
		msg                       string
	}{
		{"POST", "/config", "text/plain", `{}`, 415, "unsupported content type"},
		{"POST", "/config", js, `not json`, 400, "JSON object of tiers"},
		{"POST", "/config", js, `[]`, 400, "JSON object of tiers"},
		{"POST", "/config", js, `null`, 400, "JSON object of tiers"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"jdbc","connectorConfig":{}}}}}}`, 400, "extractionNamespace type [jdbc] is not supported: only [uri] is"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uriPrefix":"s3://b/p","namespaceParseSpec":{"format":"csv","columns":["k","v"]}}}}}}`, 400, "[uriPrefix] is not supported"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"s3://b/k","namespaceParseSpec":{"format":"csv","columns":["k","v"]}}}}}}`, 400, "must be a file:, http: or https: URI"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"file:/x.csv","namespaceParseSpec":{"format":"xml"}}}}}}`, 400, "format [xml] is not supported"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"file:/x.csv","pollPeriod":"P1M","namespaceParseSpec":{"format":"csv","columns":["k","v"]}}}}}}`, 400, "fixed ISO period"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"registeredLookup"}}}}`, 400, "type [registeredLookup] is not supported"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1"}}}`, 400, "[lookupExtractorFactory] is required"},
		{"POST", "/config", js, `{"t":{"x":{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"a":1}}}}}`, 400, "strings to strings"},
		{"POST", "/config", js, `{"a/b":{"x":` + lookupJSON("v1", `{}`) + `}}`, 400, "cannot contain '/'"},
		{"POST", "/config", js, `{"t":{"":` + lookupJSON("v1", `{}`) + `}}`, 400, "must not be empty"},
		{"POST", "/config", js, `{"t":{"x":` + lookupJSON("v1", `{}`) + `,"y":{"version":3}}}`, 400, "[version] must be a string"},
		{"POST", "/config/__default/country", js, lookupJSON("v1", `{"US":"USA"}`), 400, "version [v1] is not higher than the current version [v1]"},
		{"POST", "/config/__default/country", js, lookupJSON("v0", `{"US":"USA"}`), 400, "is not higher"},
		{"POST", "/config/__default/country", js, `{"version":"v9","lookupExtractorFactory":{"type":"map","map":{"US":"` + strings.Repeat("x", 3000) + `"}}}`, 413, "maxRequestBytes"},
		{"DELETE", "/config/__default/nope", "", "", 404, "lookup [nope] in tier [__default] not found"},
		{"DELETE", "/config/nope", "", "", 404, "tier [nope] not found"},
		{"GET", "/config/nope", "", "", 404, "Tier [nope] not found"},
		{"GET", "/config/__default/nope", "", "", 404, "not found"},
		{"GET", "/status/nope", "", "", 404, "Tier [nope] not found"},
		{"GET", "/status/__default/nope", "", "", 404, "not found"},
		{"GET", "/nodeStatus/__default", "", "", 404, "no process of tier [__default] has reported"},
		{"PUT", "/config", js, `{}`, 405, ""},
	} {
		code, body, h := call(t, c.method, u+c.path, c.ctype, c.body)
		var e ErrorBody
		if code != c.status || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s %s %.80s: %d %s, want %d with %q", c.method, c.path, c.body, code, body, c.status, c.msg)
		}
		if got := state(); got != before {
			t.Fatalf("%s %s changed the lookups:\n%s\nwant\n%s", c.method, c.path, got, before)
		}
	}
}

// A lookup created on the coordinator reaches the querying processes
// within seconds and is used by SQL (LOOKUP(), the lookup schema,
// INFORMATION_SCHEMA) and by native queries (registeredLookup, the lookup
// dimension spec, lookup()); the coordinator's status shows who loaded it.
func TestLookupsReachQueryingProcesses(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	f.publish(
		f.segment("wiki", "2024-01-01/2024-01-02", "v1", 0, 1, []dpRow{
			{"2024-01-01T01:00:00Z", "a", 1}, {"2024-01-01T02:00:00Z", "b", 10}, {"2024-01-01T03:00:00Z", "a", 100}}),
		f.segment("wiki", "2024-01-02/2024-01-03", "v1", 0, 1, []dpRow{
			{"2024-01-02T01:00:00Z", "c", 1000}, {"2024-01-02T05:00:00Z", "a", 10000}}),
	)
	// The broker and historical share this test process, so they share its
	// lookups, as the quickstart's do.
	reg := lookupcache.New("")
	query.SetLookups(reg)
	t.Cleanup(func() { query.SetLookups(nil) })
	bts := httptest.NewUnstartedServer(nil)
	bname := bts.Listener.Addr().String()
	b, err := broker.New(broker.Config{Name: bname, Historicals: []string{h.url}, PollPeriod: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Roles: []string{RoleBroker}, Broker: b, Lookups: reg})
	if err != nil {
		t.Fatal(err)
	}
	bts.Config.Handler = s.Handler()
	bts.Start()
	t.Cleanup(func() { b.Close(); bts.CloseClientConnections(); bts.Close() })
	b.Start()
	db := &dpBroker{b: b, url: bts.URL}
	db.waitSegments(t, "wiki", 2)
	sync := lookupcache.NewSyncer(reg, lookupcache.SyncerConfig{Coordinators: []string{f.coord}, Node: bname, Period: 20 * time.Millisecond})
	sync.Start()
	t.Cleanup(sync.Close)

	sqlArray := func(q string) (int, string) {
		code, body, _ := sqlCall(t, db, `{"query":`+strconvQuote(q)+`,"resultFormat":"array"}`)
		return code, body
	}
	byName := `SELECT LOOKUP(page, 'names') AS name, SUM(added) AS s FROM wiki GROUP BY 1 ORDER BY 2`
	if code, body := sqlArray(byName); code != 400 || !strings.Contains(body, "Lookup [names] not found") {
		t.Fatalf("before the lookup exists: %d %s", code, body)
	}

	u := f.coord + lookupsPath
	expect(t, "POST", u+"/config", "application/json", `{}`, 202, `{}`)
	created := time.Now()
	expect(t, "POST", u+"/config/__default/names", "application/json", lookupJSON("v1", `{"a":"Apple","b":"Banana"}`), 202, "")
	want := `[["Banana",10],[null,1000],["Apple",10101]]`
	eventually.True(t, "SQL on the broker to use the new lookup", func() bool {
		_, body := sqlArray(byName)
		return body == want
	}, eventually.Within(5*time.Second))
	t.Logf("the lookup was used by SQL %v after it was created", time.Since(created).Round(time.Millisecond))

	for q, want := range map[string]string{
		`SELECT k, v FROM lookup.names ORDER BY k`:                                                                             `[["a","Apple"],["b","Banana"]]`,
		`SELECT LOOKUP(page, 'names', 'other') AS name, COUNT(*) AS n FROM wiki GROUP BY 1 ORDER BY 1`:                         `[["Apple",3],["Banana",1],["other",1]]`,
		`SELECT TABLE_NAME, TABLE_TYPE, IS_JOINABLE FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'lookup'`:              `[["names","LOOKUP","YES"]]`,
		`SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'lookup' AND TABLE_NAME = 'names'`: `[["k","VARCHAR"],["v","VARCHAR"]]`,
	} {
		if code, body := sqlArray(q); code != 200 || body != want {
			t.Errorf("%s: %d %s, want %s", q, code, body, want)
		}
	}
	if code, body := sqlArray(`SELECT k FROM lookup.nope`); code != 400 || !strings.Contains(body, "nope") {
		t.Errorf("an unknown lookup table: %d %s", code, body)
	}

	// Native: a registeredLookup extraction dimension and a lookup
	// dimension spec, run on the historical.
	for _, dim := range []string{
		`{"type":"extraction","dimension":"page","outputName":"name","extractionFn":{"type":"registeredLookup","lookup":"names","replaceMissingValueWith":"?"}}`,
		`{"type":"lookup","dimension":"page","outputName":"name","name":"names","replaceMissingValueWith":"?"}`,
	} {
		q := `{"queryType":"groupBy","dataSource":"wiki","intervals":["2024-01-01/2024-01-03"],"granularity":"all",` +
			`"dimensions":[` + dim + `],"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}]}`
		code, body, _ := db.query(t, q)
		var rows []struct{ Event map[string]any }
		if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || len(rows) != 3 ||
			fmt.Sprintf("%v %v %v %v", rows[0].Event["name"], rows[0].Event["s"], rows[1].Event["name"], rows[2].Event["name"]) != "? 1000 Apple Banana" {
			t.Errorf("%s: %d %s", dim, code, body)
		}
	}
	// A filter through the lookup, a topN on it and lookup() in a virtual
	// column, each run on the historical.
	for q, want := range map[string]string{
		`{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-03"],"granularity":"all",` +
			`"filter":{"type":"selector","dimension":"page","value":"Apple","extractionFn":{"type":"registeredLookup","lookup":"names"}},` +
			`"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}]}`: `"result":{"s":10101}`,
		`{"queryType":"topN","dataSource":"wiki","intervals":["2024-01-01/2024-01-03"],"granularity":"all","threshold":1,"metric":"s",` +
			`"dimension":{"type":"lookup","dimension":"page","outputName":"name","name":"names","retainMissingValue":true},` +
			`"aggregations":[{"type":"longSum","name":"s","fieldName":"added"}]}`: `[{"name":"Apple","s":10101}]`,
		`{"queryType":"scan","dataSource":"wiki","intervals":["2024-01-01/2024-01-02"],"columns":["page","name"],"resultFormat":"compactedList",` +
			`"virtualColumns":[{"type":"expression","name":"name","expression":"lookup(page, 'names', 'none')","outputType":"STRING"}]}`: `"events":[["a","Apple"],["b","Banana"],["a","Apple"]]`,
	} {
		if code, body, _ := db.query(t, q); code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s, want %s", q, code, body, want)
		}
	}

	// A lookup data source, natively.
	code, body, _ := db.query(t, `{"queryType":"scan","dataSource":{"type":"lookup","lookup":"names"},"intervals":["-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z"],"columns":["k","v"],"resultFormat":"compactedList"}`)
	if code != 200 || !strings.Contains(body, `"events":[["a","Apple"],["b","Banana"]]`) {
		t.Errorf("lookup data source: %d %s", code, body)
	}

	// The coordinator knows who loaded what.
	eventually.True(t, "the status to show the broker loaded names", func() bool {
		_, body, _ := call(t, "GET", u+"/status?detailed=true", "", "")
		return body == `{"__default":{"names":{"loaded":true,"pendingNodes":[]}}}`
	})
	names := `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"a":"Apple","b":"Banana"},"isOneToOne":false}}`
	expect(t, "GET", u+"/nodeStatus", "", "", 200, `{"__default":{"`+bname+`":{"current":{"names":`+names+`},"toLoad":{},"toDrop":[]}}}`)
	expect(t, "GET", u+"/nodeStatus/__default/"+bname+"?detailed=false", "", "", 200, `{"current":["names"],"toLoad":[],"toDrop":[]}`)
	expect(t, "GET", u+"/config?discover=true", "", "", 200, `["__default"]`)
	expect(t, "GET", db.url+"/svc/listen/v1/lookups", "", "", 200, `{"current":{"names":`+names+`},"toLoad":{},"toDrop":[]}`)

	expect(t, "GET", db.url+"/svc/v1/lookups/introspect/names", "", "", 200, `{"a":"Apple","b":"Banana"}`)
	expect(t, "GET", db.url+"/svc/v1/lookups/introspect/names/keys", "", "", 200, `["a","b"]`)
	expect(t, "GET", db.url+"/svc/v1/lookups/introspect/names/values", "", "", 200, `["Apple","Banana"]`)
	expect(t, "GET", db.url+"/svc/v1/lookups/introspect/names/version", "", "", 200, `"v1"`)
	expect(t, "GET", db.url+"/svc/v1/lookups/introspect/nope/keys", "", "", 404, `{"error":"lookup [nope] is not loaded on this process"}`)

	// A cachedNamespace lookup read from a file: loaded once read.
	file := filepath.Join(t.TempDir(), "pages.tsv")
	if err := os.WriteFile(file, []byte("page\ttitle\na\tMain Page\nc\tTalk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, "POST", u+"/config/__default/titles", "application/json", `{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace",`+
		`"extractionNamespace":{"type":"uri","uri":"file://`+file+`","namespaceParseSpec":{"format":"tsv","hasHeaderRow":true,"keyColumn":"page","valueColumn":"title"}}}}`, 202, "")
	var last string
	eventually.True(t, "SQL to use the file lookup", func() bool {
		_, last = sqlArray(`SELECT LOOKUP(page, 'titles', '-') AS t, COUNT(*) AS n FROM wiki GROUP BY 1 ORDER BY 1`)
		return last == `[["-",1],["Main Page",3],["Talk",1]]`
	}, eventually.Within(5*time.Second), eventually.Showing(func() string { return last }))
	eventually.True(t, "the file lookup to show loaded", func() bool {
		_, body, _ := call(t, "GET", u+"/status/__default/titles", "", "")
		return body == `{"loaded":true}`
	})
	expect(t, "DELETE", u+"/config/__default/titles", "", "", 202, "")

	// A new version replaces the old one on the querying processes.
	expect(t, "POST", u+"/config/__default/names", "application/json", lookupJSON("v2", `{"a":"Avocado"}`), 202, "")
	eventually.True(t, "SQL to use the new version", func() bool {
		_, body := sqlArray(byName)
		return body == `[[null,1010],["Avocado",10101]]`
	}, eventually.Within(5*time.Second))
	// Deleted: gone from the broker too.
	expect(t, "DELETE", u+"/config/__default/names", "", "", 202, "")
	eventually.True(t, "the deleted lookup to be dropped", func() bool {
		code, _ := sqlArray(`SELECT k FROM lookup.names`)
		return code == 400
	}, eventually.Within(5*time.Second))
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The syncer keeps what it holds when the coordinator is unreachable, and
// asks with its ETag so an unchanged configuration costs a 304.
func TestLookupSyncerKeepsLookupsAndUsesETag(t *testing.T) {
	ts, _ := single(t, nil)
	u := ts.URL + lookupsPath
	expect(t, "POST", u+"/config", "application/json", `{}`, 202, `{}`)
	expect(t, "POST", u+"/config/hot/x", "application/json", lookupJSON("1", `{"k":"v"}`), 202, "")
	reg := lookupcache.New("hot")
	s := lookupcache.NewSyncer(reg, lookupcache.SyncerConfig{Coordinators: []string{ts.URL}, Node: "n1:1"})
	if err := s.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m, _, ok := reg.Lookup("x"); !ok || m["k"] != "v" {
		t.Fatalf("after a sync: %v %v", m, ok)
	}
	// The same ETag: 304.
	code, _, _ := call(t, "POST", ts.URL+lookupcache.SyncPath, "application/json", `{"node":"n2:1","tier":"hot","etag":"`+etagOf(t, ts.URL)+`"}`)
	if code != 304 {
		t.Fatalf("a current ETag: %d, want 304", code)
	}
	for _, bad := range []string{`{"tier":"hot"}`, `{"node":"n","tier":""}`, `[]`} {
		if code, body, _ := call(t, "POST", ts.URL+lookupcache.SyncPath, "application/json", bad); code != 400 {
			t.Errorf("sync %s: %d %s", bad, code, body)
		}
	}
	// Unreachable: an error, and the lookups stay.
	down := lookupcache.NewSyncer(reg, lookupcache.SyncerConfig{Coordinators: []string{"http://127.0.0.1:1"}, Node: "n1:1"})
	if err := down.SyncOnce(context.Background()); err == nil {
		t.Fatal("a sync with no coordinator succeeded")
	}
	if _, _, ok := reg.Lookup("x"); !ok {
		t.Fatal("an unreachable coordinator dropped the lookups")
	}
}

func etagOf(t *testing.T, coord string) string {
	t.Helper()
	var r lookupcache.SyncResponse
	getJSON(t, "POST", coord+lookupcache.SyncPath, "application/json", `{"node":"probe:1","tier":"hot"}`, &r)
	return r.ETag
}

// A URI lookup must name what ingestion's input policy lets the process
// read: the coordinator refuses the others with 400 before storing them.
func TestLookupURIPolicy(t *testing.T) {
	allowed := t.TempDir()
	input.SetPolicy(&input.Policy{LocalBaseDirs: []string{allowed}, HTTPProtocols: []string{"http", "https"}})
	t.Cleanup(func() { input.SetPolicy(nil) })
	ts, _ := single(t, nil)
	u := ts.URL + lookupsPath
	expect(t, "POST", u+"/config", "application/json", `{}`, 202, `{}`)
	def := func(uri string) string {
		return `{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"` + uri +
			`","namespaceParseSpec":{"format":"csv","columns":["k","v"]}}}}`
	}
	for uri, msg := range map[string]string{
		"file:///etc/passwd":          "not under an allowed directory",
		"http://127.0.0.1:1/x.csv":    "loopback",
		"http://169.254.169.254/x":    "link-local",
		"file://" + allowed + "/../x": "not under an allowed directory",
	} {
		code, body, _ := call(t, "POST", u+"/config/__default/x", "application/json", def(uri))
		if code != 400 || !strings.Contains(body, msg) {
			t.Errorf("%s: %d %s, want 400 with %q", uri, code, body, msg)
		}
	}
	expect(t, "GET", u+"/config/__default/x", "", "", 404, `{"error":"lookup [x] not found in tier [__default]"}`)
	if err := os.WriteFile(filepath.Join(allowed, "x.csv"), []byte("a,A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, "POST", u+"/config/__default/x", "application/json", def("file://"+allowed+"/x.csv"), 202, "")
}

// A process's report lasts 30 s, or three of its poll periods if longer.
func TestLookupNodeReportsExpire(t *testing.T) {
	var n lookupNodes
	t0 := time.Unix(1000, 0)
	n.record(lookupcache.SyncRequest{Node: "fast:1", Tier: "a", PeriodMs: 1000}, t0)
	n.record(lookupcache.SyncRequest{Node: "slow:1", Tier: "a", PeriodMs: 60000}, t0)
	if got := n.live(t0.Add(30 * time.Second)); len(got["a"]) != 2 {
		t.Fatalf("at 30 s: %v", got)
	}
	if got := n.live(t0.Add(31 * time.Second)); len(got["a"]) != 1 || got["a"]["slow:1"].tier != "a" {
		t.Fatalf("at 31 s: %v", got)
	}
	if got := n.live(t0.Add(181 * time.Second)); len(got) != 0 {
		t.Fatalf("at 181 s: %v", got)
	}
}
