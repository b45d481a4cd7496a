package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"strata/cluster"
	"strata/fsm"
	"strata/ingest"
	"strata/interval"
	"strata/props"
	"strata/segmeta"
	"strata/storage/deep"
)

const (
	v1  = "2021-01-01T00:00:00.000Z"
	v2  = "2021-02-01T00:00:00.000Z"
	d01 = "2020-01-01T00:00:00.000Z"
	d02 = "2020-01-02T00:00:00.000Z"
	d03 = "2020-01-03T00:00:00.000Z"
	d04 = "2020-01-04T00:00:00.000Z"
	wds = "wiki_edits" // a datasource name with '_' exercises id parsing
	cp  = "/svc/coordinator/v1"
)

func segID(ds, start, end, version string, part int) string {
	id := ds + "_" + start + "_" + end + "_" + version
	if part > 0 {
		id += fmt.Sprintf("_%d", part)
	}
	return id
}

// testDeepStorage is the deep storage of a test server without storage
// settings (the default under svc.data.dir): the publish endpoint accepts
// only load specs naming a segment's own file there.
var testDeepStorage = func() deep.Config {
	cfg, err := ingest.DeepStorageConfig(props.Defaults())
	if err != nil {
		panic(err)
	}
	return cfg
}()

// loadSpecOf is the load spec of a segment's file in testDeepStorage.
func loadSpecOf(ds, start, end, version string, part int) string {
	iv, err := interval.Parse(start + "/" + end)
	if err != nil {
		panic(err)
	}
	key := deep.SegmentKey(ds, interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), version, part)
	b, _ := json.Marshal(deep.LoadSpec{Type: "local", Path: filepath.Join(testDeepStorage.StorageDirectory, key, deep.SegmentFile)})
	return string(b)
}

func segDoc(ds, start, end, version string, part, parts int, size int64, dims, mets string) string {
	return fmt.Sprintf(`{"dataSource":%q,"interval":"%s/%s","version":%q,"loadSpec":%s,"dimensions":%q,"metrics":%q,`+
		`"shardSpec":{"type":"numbered","partitionNum":%d,"partitions":%d},"binaryVersion":9,"size":%d}`,
		ds, start, end, version, loadSpecOf(ds, start, end, version, part), dims, mets, part, parts, size)
}

// The fixture: wiki_edits has a two-partition chunk (A, B) on day 1, C on day 2
// overshadowed by D (newer version), and E on day 3; "other" has O on day 1.
var (
	idA = segID(wds, d01, d02, v1, 0)
	idB = segID(wds, d01, d02, v1, 1)
	idC = segID(wds, d02, d03, v1, 0)
	idD = segID(wds, d02, d03, v2, 0)
	idE = segID(wds, d03, d04, v1, 0)
	idO = segID("other", d01, d02, v1, 0)
)

func publishFixture(t *testing.T, url string) {
	t.Helper()
	docs := []string{
		segDoc(wds, d01, d02, v1, 0, 2, 10, "page,user", "count"),
		segDoc(wds, d01, d02, v1, 1, 2, 20, "page,user", "count"),
		segDoc(wds, d02, d03, v1, 0, 1, 30, "ghost", "count"),
		segDoc(wds, d02, d03, v2, 0, 1, 40, "page,country", "count,added"),
		segDoc(wds, d03, d04, v1, 0, 1, 50, "page,user", "count,added"),
	}
	expect(t, "POST", url+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"wiki_edits","segments":[`+strings.Join(docs, ",")+`]}`, 200, `{"published":5}`)
	expect(t, "POST", url+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"other","segments":[`+segDoc("other", d01, d02, v1, 0, 1, 5, "a", "count")+`]}`, 200, `{"published":1}`)
}

// expect calls an endpoint and checks the status and the exact body.
func expect(t *testing.T, method, url, ctype, body string, code int, want string) {
	t.Helper()
	gotCode, got, _ := call(t, method, url, ctype, body)
	if gotCode != code || got != want {
		t.Errorf("%s %s %s: got %d %q, want %d %q", method, url, body, gotCode, got, code, want)
	}
}

// getJSON calls an endpoint expecting 200 and decodes the body.
func getJSON(t *testing.T, method, url, ctype, body string, into any) {
	t.Helper()
	code, got, h := call(t, method, url, ctype, body)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("%s %s: %d %s (%s)", method, url, code, got, h.Get("Content-Type"))
	}
	if err := json.Unmarshal([]byte(got), into); err != nil {
		t.Fatalf("%s %s: %v in %s", method, url, err, got)
	}
}

func jsonList(ids ...string) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

// identifiers extracts the ids of a list of DataSegment objects.
func identifiers(t *testing.T, method, url, ctype, body string) []string {
	t.Helper()
	var segs []map[string]any
	getJSON(t, method, url, ctype, body, &segs)
	out := []string{}
	for _, s := range segs {
		out = append(out, s["identifier"].(string))
	}
	return out
}

func hasRecord(n *cluster.Node, id string) (used, ok bool) {
	n.FSM().Read(func(st *fsm.State) {
		for _, pid := range segmeta.PossibleIDs(id) {
			if r, found := st.Segment(pid); found && r.Segment.ID().String() == id {
				used, ok = r.Used, true
				return
			}
		}
	})
	return
}

func TestMarkPayloadErrors(t *testing.T) {
	ts, n := single(t, nil)
	publishFixture(t, ts.URL)
	for _, path := range []string{"/markUnused", "/markUsed"} {
		u := ts.URL + cp + "/datasources/" + wds + path
		for _, body := range []string{``, `null`, `{}`, `{"segmentIds":[]}`, `{"interval":null,"segmentIds":null}`,
			`{"interval":"2020-01-01/2020-01-02","segmentIds":["x"]}`} {
			code, got, h := call(t, "POST", u, "application/json", body)
			if code != 400 || got != badMarkPayload || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
				t.Errorf("%s %q: %d %q %s", path, body, code, got, h.Get("Content-Type"))
			}
		}
		for _, c := range []struct{ ctype, body, msg string }{
			{"application/json", `{"interval":"yesterday"}`, "interval"},
			{"application/json", `{"interval":5}`, "payload"},
			{"application/json", `{"segmentIds":"abc"}`, "payload"},
			{"application/json", `[1,2]`, "payload"},
			{"application/json", `{"interval":`, "payload"},
		} {
			code, got, _ := call(t, "POST", u, c.ctype, c.body)
			var e ErrorBody
			if code != 400 || json.Unmarshal([]byte(got), &e) != nil || !strings.Contains(e.Error, c.msg) {
				t.Errorf("%s %q: %d %s", path, c.body, code, got)
			}
		}
		if code, _, _ := call(t, "POST", u, "text/plain", `{"interval":"2020-01-01/2020-01-02"}`); code != 415 {
			t.Errorf("%s text/plain: %d", path, code)
		}
		if code, _, _ := call(t, "POST", u, "", `{"interval":"2020-01-01/2020-01-02"}`); code != 415 {
			t.Errorf("%s no content type: %d", path, code)
		}
		// No used segment: 204, even for a well-formed request.
		expect(t, "POST", ts.URL+cp+"/datasources/nope"+path, "application/json", `{"interval":"2020-01-01/2020-01-02"}`, 204, "")
		// Invalid names.
		for _, ds := range []string{"%20%20", "%09"} {
			code, got, _ := call(t, "POST", ts.URL+cp+"/datasources/"+ds+path, "application/json", `{"interval":"2020-01-01/2020-01-02"}`)
			if code != 400 || !strings.Contains(got, "datasource name") {
				t.Errorf("ds %q: %d %s", ds, code, got)
			}
		}
	}
	// The other JSON-consuming POSTs.
	for _, p := range []string{cp + "/datasources/" + wds, cp + "/datasources/" + wds + "/segments/" + idA, cp + "/datasources/segments/" + idA,
		"/svc-internal/v1/segments/publish", cp + "/metadata/datasources/" + wds + "/segments"} {
		if code, _, _ := call(t, "POST", ts.URL+p, "text/plain", `[]`); code != 415 {
			t.Errorf("POST %s text/plain: %d", p, code)
		}
	}
	for _, u := range []string{"/svc-internal/v1/segments/publish"} {
		for _, body := range []string{`{"dataSource":"x/y","segments":[]}`, `{"dataSource":" ","segments":[]}`, `{"dataSource":"x","segments":[null]}`,
			`{"dataSource":"x","segments":[` + segDoc("y", d01, d02, v1, 0, 1, 1, "", "") + `]}`,
			`{"dataSource":"x","segments":[{"dataSource":"x"}]}`, `{"dataSource":"x","segments":`} {
			code, got, _ := call(t, "POST", ts.URL+u, "application/json", body)
			if code != 400 || !strings.HasPrefix(got, `{"error":`) {
				t.Errorf("publish %s: %d %s", body, code, got)
			}
		}
	}
	var nAudit int
	n.FSM().Read(func(s *fsm.State) { nAudit = s.AuditLen() })
	if nAudit != 0 {
		t.Fatalf("%d audit entries written by rejected requests", nAudit)
	}
	if _, ok := hasRecord(n, segID("x", d01, d02, v1, 0)); ok {
		t.Fatal("rejected publish stored a segment")
	}
}

func TestMarkUnusedUsedAndKill(t *testing.T) {
	ts, n := single(t, nil)
	publishFixture(t, ts.URL)
	ds := ts.URL + cp + "/datasources/" + wds
	expect(t, "POST", ts.URL+"/svc-internal/v1/segments/publish", "application/json",
		`{"dataSource":"wiki_edits","segments":[`+segDoc(wds, d01, d02, v1, 0, 2, 10, "page,user", "count")+`]}`, 200, `{"published":0}`)

	// Interval containment: start inclusive, end exclusive, partial overlaps untouched.
	expect(t, "POST", ds+"/markUnused", "application/json", `{"interval":"2020-01-03/2020-01-03T23:59:59"}`, 200, `{"numChangedSegments":0}`)
	expect(t, "POST", ds+"/markUnused", "application/json", `{"interval":"2020-01-02T12:00/2020-01-05"}`, 200, `{"numChangedSegments":1}`) // E only
	if used, _ := hasRecord(n, idE); used {
		t.Fatal("E still used")
	}
	body := `{"interval":"2020-01-01/2020-01-02"}`
	expect(t, "POST", ds+"/markUnused", "application/json; charset=utf-8", body, 200, `{"numChangedSegments":2}`) // A and B
	expect(t, "POST", ds+"/markUnused", "application/json", body, 200, `{"numChangedSegments":0}`)
	var audit []fsm.AuditEntry
	n.FSM().Read(func(st *fsm.State) { audit = st.Audit(fsm.AuditQuery{Type: fsm.AuditSegmentMarkUnused, Limit: 10}) })
	if len(audit) != 2 || audit[0].Payload != body || audit[0].Key != wds {
		t.Fatalf("markUnused audit: %+v", audit)
	}

	// markUsed by ids, with a partition number; unknown ids answer 404 {"message"}.
	expect(t, "POST", ds+"/markUsed", "application/json", `{"segmentIds":["`+idB+`"]}`, 200, `{"numChangedSegments":1}`)
	expect(t, "POST", ds+"/markUsed", "application/json", `{"segmentIds":["`+idB+`"]}`, 200, `{"numChangedSegments":0}`)
	for _, ids := range []string{`["` + idA + `","bogus"]`, `["` + idO + `"]`} {
		code, got, _ := call(t, "POST", ds+"/markUsed", "application/json", `{"segmentIds":`+ids+`}`)
		var m map[string]string
		if code != 404 || json.Unmarshal([]byte(got), &m) != nil || !strings.Contains(m["message"], "Could not find") || len(m) != 1 {
			t.Errorf("markUsed %s: %d %s", ids, code, got)
		}
	}
	if used, _ := hasRecord(n, idA); used {
		t.Fatal("a failed markUsed changed A")
	}
	// markUnused by ids skips ids of other datasources and garbage.
	expect(t, "POST", ds+"/markUnused", "application/json", `{"segmentIds":["`+idO+`","garbage","`+idB+`"]}`, 200, `{"numChangedSegments":1}`)
	expect(t, "POST", ds+"/markUsed", "application/json", `{"interval":"2020-01-01/2020-01-04"}`, 200, `{"numChangedSegments":3}`) // A, B, E back

	// Single-segment calls.
	expect(t, "DELETE", ds+"/segments/"+idC, "", "", 200, `{"segmentStateChanged":true}`)
	expect(t, "DELETE", ds+"/segments/"+idC, "", "", 200, `{"segmentStateChanged":false}`)
	expect(t, "DELETE", ds+"/segments/garbage", "", "", 200, `{"segmentStateChanged":false}`)
	expect(t, "DELETE", ds+"/segments/"+idO, "", "", 200, `{"segmentStateChanged":false}`)
	expect(t, "DELETE", ts.URL+cp+"/datasources/nope/segments/"+idA, "", "", 200, `{"segmentStateChanged":false}`)
	// C is overshadowed by D: no way to mark it used revives it.
	expect(t, "POST", ds+"/markUsed", "application/json", `{"segmentIds":["`+idC+`"]}`, 200, `{"numChangedSegments":0}`)
	expect(t, "POST", ds+"/markUsed", "application/json", `{"interval":"2020-01-02/2020-01-03"}`, 200, `{"numChangedSegments":0}`)
	expect(t, "POST", ds+"/segments/"+idC, "application/json", "", 200, `{"segmentStateChanged":false}`)
	expect(t, "POST", ts.URL+cp+"/datasources/segments/"+idC, "application/json", "", 200, `{"segmentStateChanged":false}`)
	if used, _ := hasRecord(n, idC); used {
		t.Fatal("overshadowed C was revived")
	}
	expect(t, "DELETE", ds+"/segments/"+idB, "", "", 200, `{"segmentStateChanged":true}`)
	expect(t, "POST", ds+"/segments/"+idB, "application/json", "", 200, `{"segmentStateChanged":true}`)
	expect(t, "POST", ds+"/segments/garbage", "application/json", "", 200, `{"segmentStateChanged":false}`)
	expect(t, "POST", ds+"/segments/"+idO, "application/json", "", 200, `{"segmentStateChanged":false}`)
	// The spec's path without the datasource finds it from the id.
	expect(t, "DELETE", ds+"/segments/"+idA, "", "", 200, `{"segmentStateChanged":true}`)
	expect(t, "POST", ts.URL+cp+"/datasources/segments/"+idA, "application/json", "", 200, `{"segmentStateChanged":true}`)
	expect(t, "POST", ts.URL+cp+"/datasources/segments/"+idA, "application/json", "", 200, `{"segmentStateChanged":false}`)
	expect(t, "POST", ts.URL+cp+"/datasources/segments/nothing_here", "application/json", "", 200, `{"segmentStateChanged":false}`)

	// Mark all used leaves C, overshadowed by the used D, unused.
	expect(t, "POST", ds, "application/json", "", 200, `{"numChangedSegments":0}`)
	if used, _ := hasRecord(n, idC); used {
		t.Fatal("mark-all revived overshadowed C")
	}
	expect(t, "POST", ts.URL+cp+"/datasources/nope", "application/json", "", 200, `{"numChangedSegments":0}`)
	// Mark all unused; with nothing used, markUsed finds no served datasource.
	expect(t, "DELETE", ds, "", "", 200, `{"numChangedSegments":4}`)
	expect(t, "DELETE", ds, "", "", 200, `{"numChangedSegments":0}`)
	expect(t, "DELETE", ts.URL+cp+"/datasources/nope", "", "", 200, `{"numChangedSegments":0}`)
	expect(t, "POST", ds+"/markUsed", "application/json", `{"interval":"2020-01-01/2020-01-05"}`, 204, "")
	// Overshadowing is judged against used segments only (as Druid does), so
	// with every segment unused, mark-all revives C along with D.
	expect(t, "POST", ds, "application/json", "", 200, `{"numChangedSegments":5}`)

	// Kill: only unused segments fully inside the interval go, with their files.
	expect(t, "DELETE", ds, "", "", 200, `{"numChangedSegments":5}`)
	expect(t, "DELETE", ts.URL+cp+"/datasources/other/intervals/2020-01-01_2020-01-02", "", "", 200, "") // O is used: stays
	expect(t, "DELETE", ds+"/intervals/2020-01-01_2020-01-02T12:00:00.000Z", "", "", 200, "")
	for id, want := range map[string]bool{idA: false, idB: false, idC: true, idD: true, idE: true, idO: true} {
		if _, ok := hasRecord(n, id); ok != want {
			t.Errorf("after kill, %s present=%v", id, ok)
		}
	}
	var pending []string
	var kills []fsm.AuditEntry
	n.FSM().Read(func(st *fsm.State) {
		pending = st.PendingFileDeletions()
		kills = st.Audit(fsm.AuditQuery{Type: fsm.AuditSegmentKill, Limit: 10})
	})
	if !reflect.DeepEqual(pending, []string{loadSpecOf(wds, d01, d02, v1, 0), loadSpecOf(wds, d01, d02, v1, 1)}) {
		t.Fatalf("pending deletions: %v", pending)
	}
	if len(kills) != 2 || kills[0].Key != wds {
		t.Fatalf("kill audit: %+v", kills)
	}
	var payload map[string]string
	json.Unmarshal([]byte(kills[0].Payload), &payload)
	taskRe := regexp.MustCompile(`^api-issued_kill_wiki_edits_[a-p]{8}_2020-01-01T00:00:00\.000Z_2020-01-02T12:00:00\.000Z_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	if !taskRe.MatchString(payload["killTaskId"]) || payload["interval"] != "2020-01-01T00:00:00.000Z/2020-01-02T12:00:00.000Z" {
		t.Fatalf("kill payload: %s", kills[0].Payload)
	}
	// The deprecated form, with '/' in the interval.
	expect(t, "DELETE", ds+"?kill=TRUE&interval=2020-01-02/2020-01-04", "", "", 200, "")
	for _, id := range []string{idC, idD, idE} {
		if _, ok := hasRecord(n, id); ok {
			t.Errorf("deprecated kill left %s", id)
		}
	}
	expect(t, "DELETE", ts.URL+cp+"/datasources/nope/intervals/2020-01-01_2020-01-02", "", "", 200, "")
	for _, u := range []string{ds + "/intervals/2020-01-01", ds + "/intervals/junk_junk", ds + "?kill=true", ds + "?kill=true&interval=x"} {
		code, got, _ := call(t, "DELETE", u, "", "")
		if code != 400 || !strings.HasPrefix(got, `{"error":`) {
			t.Errorf("DELETE %s: %d %s", u, code, got)
		}
	}
}

func TestPublishMetadataCompareAndSwap(t *testing.T) {
	ts, n := single(t, nil)
	u := ts.URL + "/svc-internal/v1/segments/publish"
	seg := func(day string) string {
		return segDoc("stream", day, "2020-02-02T00:00:00.000Z", v1, 0, 1, 1, "a", "count")
	}
	code, got, _ := call(t, "POST", u, "application/json", `{"dataSource":"stream","segments":[`+seg("2020-02-01")+`],"startMetadata":{"offset":1},"endMetadata":{"offset":2}}`)
	if code != 409 || !strings.Contains(got, "ingestion metadata") {
		t.Fatalf("mismatch: %d %s", code, got)
	}
	expect(t, "POST", u, "application/json", `{"dataSource":"stream","segments":[`+seg("2020-02-01")+`],"startMetadata":null,"endMetadata":{"offset":5}}`, 200, `{"published":1}`)
	expect(t, "POST", u, "application/json", `{"dataSource":"stream","segments":[],"startMetadata":{ "offset" : 5 },"endMetadata":{"offset":9}}`, 200, `{"published":0}`)
	if code, _, _ := call(t, "POST", u, "application/json", `{"dataSource":"stream","segments":[],"startMetadata":{"offset":5},"endMetadata":{"offset":10}}`); code != 409 {
		t.Fatalf("stale start: %d", code)
	}
	var md string
	n.FSM().Read(func(st *fsm.State) { md, _ = st.DataSourceMetadata("stream") })
	if md != `{"offset":9}` {
		t.Fatalf("metadata: %s", md)
	}
}

func TestServedView(t *testing.T) {
	ts, _ := single(t, nil)
	publishFixture(t, ts.URL)
	ds := ts.URL + cp + "/datasources/" + wds
	day1, day2, day3 := d01+"/"+d02, d02+"/"+d03, d03+"/"+d04

	expect(t, "GET", ts.URL+cp+"/datasources", "", "", 200, `["other","wiki_edits"]`)
	props := `{"tiers":{"_default_tier":{"segmentCount":4,"size":120,"replicatedSize":120}},` +
		`"segments":{"count":4,"size":120,"replicatedSize":120,"minTime":"` + d01 + `","maxTime":"` + d04 + `"}}`
	otherProps := `{"tiers":{"_default_tier":{"segmentCount":1,"size":5,"replicatedSize":5}},` +
		`"segments":{"count":1,"size":5,"replicatedSize":5,"minTime":"` + d01 + `","maxTime":"` + d02 + `"}}`
	expect(t, "GET", ts.URL+cp+"/datasources?simple", "", "", 200,
		`[{"name":"other","properties":`+otherProps+`},{"name":"wiki_edits","properties":`+props+`}]`)
	var full []struct {
		Name       string
		Properties map[string]string
		Segments   []map[string]any
	}
	getJSON(t, "GET", ts.URL+cp+"/datasources?full=false", "", "", &full) // presence-tested
	if len(full) != 2 || full[1].Name != wds || full[1].Properties["client"] != "side" || len(full[1].Segments) != 4 || full[1].Segments[2]["identifier"] != idD {
		t.Fatalf("datasources?full: %+v", full)
	}
	expect(t, "GET", ds, "", "", 200, props)
	expect(t, "GET", ts.URL+cp+"/datasources/nope", "", "", 204, "")
	var one struct {
		Name       string
		Properties map[string]string
		Segments   []map[string]any
	}
	getJSON(t, "GET", ds+"?full", "", "", &one)
	if one.Name != wds || len(one.Properties) != 0 || len(one.Segments) != 4 || one.Segments[0]["dimensions"] != "page,user" {
		t.Fatalf("ds?full: %+v", one)
	}

	// Intervals, latest first.
	expect(t, "GET", ds+"/intervals", "", "", 200, jsonList(day3, day2, day1))
	expect(t, "GET", ds+"/intervals?simple", "", "", 200,
		`{"`+day3+`":{"size":50,"count":1},"`+day2+`":{"size":40,"count":1},"`+day1+`":{"size":30,"count":2}}`)
	var byIv map[string]map[string]struct {
		Metadata map[string]any
		Servers  []string
	}
	getJSON(t, "GET", ds+"/intervals?full", "", "", &byIv)
	if len(byIv) != 3 || len(byIv[day1]) != 2 || byIv[day2][idD].Metadata["identifier"] != idD || byIv[day1][idB].Servers == nil {
		t.Fatalf("intervals?full: %+v", byIv)
	}
	expect(t, "GET", ts.URL+cp+"/datasources/nope/intervals", "", "", 204, "")
	expect(t, "GET", ts.URL+cp+"/datasources/nope/intervals?simple", "", "", 204, "")
	expect(t, "GET", ds+"/intervals/2020-01-01_2020-01-03", "", "", 200, jsonList(idA, idB, idD))
	expect(t, "GET", ds+"/intervals/2020-01-01T00:00:00.000Z_2020-01-02T23:00:00.000Z", "", "", 200, jsonList(idA, idB))
	expect(t, "GET", ds+"/intervals/2020-01-01_2020-01-03?simple", "", "", 200,
		`{"`+day2+`":{"size":40,"count":1},"`+day1+`":{"size":30,"count":2}}`)
	byIv = nil
	getJSON(t, "GET", ds+"/intervals/2020-01-02_2020-01-03?full", "", "", &byIv)
	if len(byIv) != 1 || len(byIv[day2]) != 1 || byIv[day2][idD].Metadata["size"] != 40.0 {
		t.Fatalf("intervals/i?full: %+v", byIv)
	}
	expect(t, "GET", ts.URL+cp+"/datasources/nope/intervals/2020-01-01_2020-01-03", "", "", 204, "")
	if code, _, _ := call(t, "GET", ds+"/intervals/bad", "", ""); code != 400 {
		t.Errorf("bad interval: %d", code)
	}
	var view []struct {
		Segment map[string]any
		Servers []any
	}
	getJSON(t, "GET", ds+"/intervals/2020-01-01_2020-01-03/serverview", "", "", &view)
	if len(view) != 3 || view[0].Segment["identifier"] != idA || view[2].Segment["identifier"] != idD || view[2].Servers == nil {
		t.Fatalf("serverview: %+v", view)
	}
	expect(t, "GET", ts.URL+cp+"/datasources/nope/intervals/2020-01-01_2020-01-03/serverview", "", "", 200, "[]")

	// Segments.
	expect(t, "GET", ds+"/segments", "", "", 200, jsonList(idA, idB, idD, idE))
	if got := identifiers(t, "GET", ds+"/segments?full", "", ""); !reflect.DeepEqual(got, []string{idA, idB, idD, idE}) {
		t.Fatalf("segments?full: %v", got)
	}
	expect(t, "GET", ts.URL+cp+"/datasources/nope/segments", "", "", 204, "")
	var seg struct {
		Metadata map[string]any
		Servers  []string
	}
	getJSON(t, "GET", ds+"/segments/"+idB, "", "", &seg)
	if seg.Metadata["identifier"] != idB || seg.Servers == nil || len(seg.Servers) != 0 {
		t.Fatalf("segment: %+v", seg)
	}
	expect(t, "GET", ds+"/segments/"+idC, "", "", 204, "") // overshadowed: not served
	expect(t, "GET", ds+"/segments/garbage", "", "", 204, "")
	expect(t, "GET", ds+"/tiers", "", "", 200, `[]`) // no historical serves it
	expect(t, "GET", ts.URL+cp+"/datasources/nope/tiers", "", "", 200, `[]`)

	// Intervals across datasources.
	expect(t, "GET", ts.URL+cp+"/intervals", "", "", 200, `{"`+day3+`":{"wiki_edits":{"size":50,"count":1}},"`+day2+
		`":{"wiki_edits":{"size":40,"count":1}},"`+day1+`":{"other":{"size":5,"count":1},"wiki_edits":{"size":30,"count":2}}}`)
	expect(t, "GET", ts.URL+cp+"/intervals/2020-01-01_2020-01-03", "", "", 200, `{"size":75,"count":4}`)
	expect(t, "GET", ts.URL+cp+"/intervals/2020-01-01_2020-01-03?simple", "", "", 200,
		`{"`+day2+`":{"size":40,"count":1},"`+day1+`":{"size":35,"count":3}}`)
	expect(t, "GET", ts.URL+cp+"/intervals/2020-01-01_2020-01-02?full", "", "", 200,
		`{"`+day1+`":{"other":{"size":5,"count":1},"wiki_edits":{"size":30,"count":2}}}`)
	expect(t, "GET", ts.URL+cp+"/intervals/2020-01-01T06:00:00Z_2020-01-04", "", "", 200, `{"size":90,"count":2}`)
	expect(t, "GET", ts.URL+cp+"/intervals/1999-01-01_1999-01-02", "", "", 200, `{}`)

	// Servers and load state: nothing is loaded anywhere yet.
	expect(t, "GET", ts.URL+cp+"/servers", "", "", 200, `[]`)
	expect(t, "GET", ts.URL+cp+"/servers?simple", "", "", 200, `[]`)
	expect(t, "GET", ts.URL+cp+"/loadstatus", "", "", 200, `{"other":0.0,"wiki_edits":0.0}`)
	expect(t, "GET", ts.URL+cp+"/loadstatus?simple", "", "", 200, `{"other":1,"wiki_edits":4}`)
	expect(t, "GET", ts.URL+cp+"/loadstatus?full", "", "", 200, `{"_default_tier":{"other":2,"wiki_edits":8}}`)
	expect(t, "GET", ts.URL+cp+"/loadstatus?full&computeUsingClusterView", "", "", 200, `{"_default_tier":{"other":0,"wiki_edits":0}}`)
	for _, q := range []string{"", "?simple", "?full"} {
		expect(t, "GET", ts.URL+cp+"/loadqueue"+q, "", "", 200, `{}`)
	}
	code, got, h := call(t, "GET", ds+"/loadstatus", "", "")
	if code != 400 || got != "Invalid request. forceMetadataRefresh must be specified" || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("loadstatus without forceMetadataRefresh: %d %q", code, got)
	}
	expect(t, "GET", ds+"/loadstatus?forceMetadataRefresh=false", "", "", 204, "") // data is older than two weeks
	expect(t, "GET", ds+"/loadstatus?forceMetadataRefresh=true&interval=2020-01-01/2020-01-05", "", "", 200, `{"wiki_edits":0.0}`)
	expect(t, "GET", ds+"/loadstatus?forceMetadataRefresh=true&interval=2020-01-02_2020-01-03&simple", "", "", 200, `{"wiki_edits":1}`)
	expect(t, "GET", ds+"/loadstatus?forceMetadataRefresh=true&interval=2020-01-01_2020-01-05&full", "", "", 200, `{"_default_tier":{"wiki_edits":8}}`)
	expect(t, "GET", ds+"/loadstatus?forceMetadataRefresh=true&interval=1999-01-01_1999-01-05", "", "", 204, "")
	expect(t, "GET", ts.URL+cp+"/datasources/nope/loadstatus?forceMetadataRefresh=true&interval=2020-01-01_2020-01-05", "", "", 204, "")
	if code, _, _ := call(t, "GET", ds+"/loadstatus?forceMetadataRefresh=true&interval=soon", "", ""); code != 400 {
		t.Errorf("loadstatus bad interval: %d", code)
	}
	// Centralized schema is off by default.
	expect(t, "POST", ts.URL+cp+"/metadata/dataSourceInformation", "application/json", `["wiki_edits"]`, 404, "")
}

func TestMetadataView(t *testing.T) {
	p := props.Defaults()
	p.Set("svc.centralizedDatasourceSchema.enabled", "true")
	ts, _ := single(t, p)
	publishFixture(t, ts.URL)
	m := ts.URL + cp + "/metadata"

	if got := identifiers(t, "GET", m+"/segments", "", ""); !reflect.DeepEqual(got, []string{idO, idA, idB, idC, idD, idE}) {
		t.Fatalf("metadata/segments: %v", got)
	}
	if got := identifiers(t, "GET", m+"/segments?datasources=other", "", ""); !reflect.DeepEqual(got, []string{idO}) {
		t.Fatalf("datasources=other: %v", got)
	}
	if got := identifiers(t, "GET", m+"/segments?datasources=nope&datasources=wiki_edits", "", ""); len(got) != 5 {
		t.Fatalf("datasources repeated: %v", got)
	}
	var status []map[string]any
	getJSON(t, "GET", m+"/segments?includeOvershadowedStatus&datasources=wiki_edits", "", "", &status)
	for _, s := range status {
		over := s["identifier"] == idC
		if s["overshadowed"] != over || s["realtime"] != false || s["numRows"] != nil || len(s) != 14 {
			t.Errorf("status entry: %v", s)
		}
		if (over && s["replicationFactor"] != 0.0) || (!over && s["replicationFactor"] != nil) {
			t.Errorf("replicationFactor: %v", s)
		}
	}
	if len(status) != 5 {
		t.Fatalf("status entries: %d", len(status))
	}
	getJSON(t, "GET", m+"/segments?includeOvershadowedStatus=false&includeRealtimeSegments", "", "", &status)
	if len(status) != 6 {
		t.Fatalf("with realtime: %d", len(status))
	}
	expect(t, "GET", m+"/segments?includeRealtimeSegments", "", "", 400, "")

	// Pollers revalidate with the ETag: 304 while nothing is applied, the
	// listing again after a change.
	listing := m + "/segments?includeOvershadowedStatus"
	etagGet := func(tag string) (int, string, string) {
		req, _ := http.NewRequest("GET", listing, nil)
		if tag != "" {
			req.Header.Set("If-None-Match", tag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag"), string(b)
	}
	code, tag, body := etagGet("")
	if code != 200 || tag == "" || !strings.HasPrefix(body, "[") {
		t.Fatalf("listing: %d %q %.40s", code, tag, body)
	}
	if code, tag2, body := etagGet(tag); code != 304 || tag2 != tag || body != "" {
		t.Fatalf("unchanged listing: %d %q %q", code, tag2, body)
	}
	if code, _, _ := etagGet(`"1"`); code != 200 {
		t.Fatalf("stale ETag: %d", code)
	}

	// Datasources: "other" loses its only used segment.
	expect(t, "DELETE", ts.URL+cp+"/datasources/other", "", "", 200, `{"numChangedSegments":1}`)
	if code, tag2, _ := etagGet(tag); code != 200 || tag2 == tag {
		t.Fatalf("listing after a change: %d %q (was %q)", code, tag2, tag)
	}
	expect(t, "GET", m+"/datasources", "", "", 200, `["wiki_edits"]`)
	// Its unused segment, with its dates (newer Druid's unusedSegments).
	code, got, _ := call(t, "GET", m+"/datasources/other/unusedSegments", "", "")
	var unused []struct {
		DataSegment map[string]any `json:"dataSegment"`
		Created     string         `json:"createdDate"`
		Updated     string         `json:"usedStatusLastUpdatedDate"`
		Used        *bool          `json:"used"`
	}
	if code != 200 || json.Unmarshal([]byte(got), &unused) != nil || len(unused) != 1 || unused[0].DataSegment["dataSource"] != "other" ||
		unused[0].Created == "" || unused[0].Updated < unused[0].Created || unused[0].Used == nil || *unused[0].Used {
		t.Fatalf("unusedSegments: %d %s", code, got)
	}
	id := unused[0].DataSegment["identifier"].(string)
	expect(t, "GET", m+"/datasources/other/unusedSegments?lastSegmentId="+id, "", "", 200, `[]`)
	expect(t, "GET", m+"/datasources/other/unusedSegments?interval=1990-01-01/1990-01-02", "", "", 200, `[]`)
	expect(t, "GET", m+"/datasources/nope/unusedSegments", "", "", 200, `[]`)
	for _, bad := range []string{"limit=0", "limit=x", "sortOrder=sideways", "lastSegmentId=junk", "interval=nope"} {
		if code, got, _ := call(t, "GET", m+"/datasources/other/unusedSegments?"+bad, "", ""); code != 400 || !strings.Contains(got, `"invalidInput"`) {
			t.Errorf("unusedSegments?%s: %d %s", bad, code, got)
		}
	}
	expect(t, "GET", m+"/datasources?includeUnused", "", "", 200, `["other","wiki_edits"]`)
	expect(t, "GET", m+"/datasources?includeDisabled&full", "", "", 200, `["other","wiki_edits"]`)
	var full []struct {
		Name       string
		Properties map[string]string
		Segments   []map[string]any
	}
	getJSON(t, "GET", m+"/datasources?full", "", "", &full)
	createdRe := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	if len(full) != 1 || full[0].Name != wds || !createdRe.MatchString(full[0].Properties["created"]) || len(full[0].Segments) != 5 {
		t.Fatalf("datasources?full: %+v", full)
	}
	var one struct {
		Name     string
		Segments []map[string]any
	}
	getJSON(t, "GET", m+"/datasources/"+wds, "", "", &one)
	if one.Name != wds || len(one.Segments) != 5 {
		t.Fatalf("datasource: %+v", one)
	}
	expect(t, "GET", m+"/datasources/other", "", "", 404, "")
	expect(t, "GET", m+"/datasources/nope", "", "", 404, "")

	// Segments of a datasource, overshadowed included.
	expect(t, "GET", m+"/datasources/"+wds+"/segments", "", "", 200, jsonList(idA, idB, idC, idD, idE))
	if got := identifiers(t, "GET", m+"/datasources/"+wds+"/segments?full", "", ""); len(got) != 5 || got[2] != idC {
		t.Fatalf("segments?full: %v", got)
	}
	expect(t, "GET", m+"/datasources/other/segments", "", "", 404, "")
	// By intervals: overlapping any of them.
	expect(t, "POST", m+"/datasources/"+wds+"/segments", "application/json", `["2020-01-02/2020-01-03"]`, 200, jsonList(idC, idD))
	expect(t, "POST", m+"/datasources/"+wds+"/segments", "application/json", `["2020-01-01T12:00/2020-01-02T12:00","2020-01-03T23:00/P1D"]`, 200, jsonList(idA, idB, idC, idD, idE))
	expect(t, "GET", m+"/datasources/"+wds+"/segments", "application/json", `["2020-01-03/2020-01-04"]`, 200, jsonList(idE))
	if got := identifiers(t, "POST", m+"/datasources/"+wds+"/segments?full", "application/json", `["2020-01-03/2020-01-04"]`); !reflect.DeepEqual(got, []string{idE}) {
		t.Fatalf("by interval full: %v", got)
	}
	expect(t, "POST", m+"/datasources/"+wds+"/segments", "application/json", `[]`, 200, `[]`)
	expect(t, "POST", m+"/datasources/other/segments", "application/json", `["2020-01-01/2020-01-02"]`, 200, `[]`) // unused only
	for _, body := range []string{`["x"]`, `{"a":1}`, `null`, ``} {
		code, got, _ := call(t, "POST", m+"/datasources/"+wds+"/segments", "application/json", body)
		if code != 400 || !strings.HasPrefix(got, `{"error":`) {
			t.Errorf("by interval %q: %d %s", body, code, got)
		}
	}

	// One segment: used, or unused with includeUnused=true.
	var s map[string]any
	getJSON(t, "GET", m+"/datasources/"+wds+"/segments/"+idB, "", "", &s)
	if s["identifier"] != idB {
		t.Fatalf("segment: %v", s)
	}
	expect(t, "DELETE", ts.URL+cp+"/datasources/"+wds+"/segments/"+idC, "", "", 200, `{"segmentStateChanged":true}`)
	expect(t, "GET", m+"/datasources/"+wds+"/segments/"+idC, "", "", 404, "")
	expect(t, "GET", m+"/datasources/"+wds+"/segments/"+idC+"?includeUnused", "", "", 404, "") // a Boolean, not a flag
	getJSON(t, "GET", m+"/datasources/"+wds+"/segments/"+idC+"?includeUnused=true", "", "", &s)
	if s["identifier"] != idC {
		t.Fatalf("unused segment: %v", s)
	}
	expect(t, "GET", m+"/datasources/other/segments/"+idO+"?includeUnused=true", "", "", 404, "") // no used segment at all
	expect(t, "GET", m+"/datasources/"+wds+"/segments/garbage?includeUnused=true", "", "", 404, "")

	// Schema from the served segments, newest first; C (overshadowed, unused) adds nothing.
	expect(t, "POST", m+"/dataSourceInformation", "application/json", `["wiki_edits","nope","other","wiki_edits"]`, 200,
		`[{"datasource":"wiki_edits","rowSignature":[{"name":"__time","type":"LONG"},{"name":"page","type":"STRING"},`+
			`{"name":"user","type":"STRING"},{"name":"count","type":"LONG"},{"name":"added","type":"DOUBLE"},{"name":"country","type":"STRING"}]}]`)
	expect(t, "POST", m+"/dataSourceInformation", "application/json", `[]`, 200, `[]`)
	if code, _, _ := call(t, "POST", m+"/dataSourceInformation", "application/json", `{"x":1}`); code != 400 {
		t.Errorf("dataSourceInformation bad body: %d", code)
	}
	if code, _, _ := call(t, "POST", m+"/dataSourceInformation", "text/plain", `[]`); code != 415 {
		t.Errorf("dataSourceInformation text/plain: %d", code)
	}
}

// Without a leader every segment endpoint answers 503 with a JSON error.
func TestSegmentEndpointsNeedLeader(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	raftAddr := l.Addr().String()
	l.Close()
	n, err := cluster.Start(cluster.Config{ID: "a", RaftAddr: raftAddr, HTTPURL: "http://127.0.0.1:1", DataDir: t.TempDir(),
		Peers: []cluster.Peer{{ID: "a", RaftAddr: raftAddr, HTTPURL: "http://127.0.0.1:1"}, {ID: "b", RaftAddr: "127.0.0.1:9", HTTPURL: "http://127.0.0.1:2"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	s, _ := New(control(Options{Roles: []string{RoleCoordinator}, Node: n}))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, c := range []struct{ method, path string }{
		{"GET", cp + "/datasources"}, {"GET", cp + "/metadata/segments"}, {"POST", cp + "/datasources/x/markUnused"},
		{"DELETE", cp + "/datasources/x/intervals/2020-01-01_2020-01-02"}, {"POST", "/svc-internal/v1/segments/publish"},
		{"GET", cp + "/loadstatus"}, {"GET", cp + "/intervals"}, {"GET", cp + "/rules"}, {"GET", cp + "/rules/x"},
		{"POST", cp + "/rules/x"}, {"GET", cp + "/rules/history"}, {"GET", "/svc-internal/v1/segments/assigned/h:1"},
		{"POST", "/svc-internal/v1/discovery/announce"}, {"POST", "/svc-internal/v1/discovery/leave"},
		{"GET", cp + "/lookups/config"}, {"POST", cp + "/lookups/config"}, {"GET", cp + "/lookups/nodeStatus"},
		{"POST", "/svc-internal/v1/lookups/sync"},
	} {
		code, got, _ := call(t, c.method, ts.URL+c.path, "application/json", `{}`)
		if code != 503 || !strings.Contains(got, `"error"`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, code, got)
		}
	}
}

func TestKillTaskID(t *testing.T) {
	id := killTaskID("a_b", mustInterval(t, "2020-01-01/2020-01-02"), 0)
	if !regexp.MustCompile(`^api-issued_kill_a_b_[a-p]{8}_2020-01-01T00:00:00\.000Z_2020-01-02T00:00:00\.000Z_1970-01-01T00:00:00\.000Z$`).MatchString(id) {
		t.Fatal(id)
	}
}

func mustInterval(t *testing.T, s string) interval.Interval {
	t.Helper()
	iv, err := interval.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

// BenchmarkMetadataSegments lists 10,000 used segments with overshadowed status,
// the call brokers poll to build their view.
func BenchmarkMetadataSegments(b *testing.B) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	raftAddr := l.Addr().String()
	l.Close()
	n, err := cluster.Start(cluster.Config{ID: "solo", RaftAddr: raftAddr, HTTPURL: "http://127.0.0.1:1", DataDir: b.TempDir(),
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Shutdown()
	for !n.IsLeader() {
		time.Sleep(10 * time.Millisecond)
	}
	s, err := New(control(Options{Roles: []string{RoleCoordinator}, Node: n}))
	if err != nil {
		b.Fatal(err)
	}
	const total = 10000
	for batch := 0; batch < total/1000; batch++ {
		docs := make([]string, 1000)
		for i := range docs {
			start := int64(batch*1000+i) * 3600 * 1000
			docs[i] = segDoc("bench", interval.FormatMillis(start), interval.FormatMillis(start+3600*1000), v1, 0, 1, 1000, "page,user,country", "count,added")
		}
		req := httptest.NewRequest("POST", "/svc-internal/v1/segments/publish", strings.NewReader(`{"dataSource":"bench","segments":[`+strings.Join(docs, ",")+`]}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("publish: %d %s", rec.Code, rec.Body)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		s.metadataSegments(rec, httptest.NewRequest("GET", cp+"/metadata/segments?includeOvershadowedStatus", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
	}
}
