package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"strata/protocol"
	"strata/querynode/broker"
	"strata/segmeta"
	"strata/storage/deep"
)

// Issue 19, finding 3: a query over data that no data server can serve must
// not answer 200 as if there were no data there. The response context says
// what the answer lacks (Druid's uncoveredIntervals and missingSegments),
// and failOnMissingSegments makes the query fail naming it.

const day3 = "2013-09-02T00:00:00.000Z/2013-09-03T00:00:00.000Z"

// timeseriesOver is a daily timeseries of wiki over ivs with the context.
func timeseriesOver(ivs, ctx string) string {
	return fmt.Sprintf(`{"queryType":"timeseries","dataSource":"wiki","intervals":[%q],"granularity":"day",
	  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],"context":%s}`, ivs, ctx)
}

func TestBrokerReportsDataNoServerHas(t *testing.T) {
	f := newDPFixture(t)
	// Day 3's file is gone from deep storage: no historical can load it,
	// so no historical announces it.
	var segs []*segmeta.DataSegment
	for i, d := range wikiDays {
		segs = append(segs, f.segment("wiki", d+"/2013-09-0"+string(rune('1'+i)), "v1", 0, 1, wikiRows(d, int64(10*i))))
	}
	var spec deep.LoadSpec
	if err := json.Unmarshal([]byte(segs[2].LoadSpec), &spec); err != nil || os.Remove(spec.Path) != nil {
		t.Fatalf("cannot remove day 3 from deep storage: %v %+v", err, spec)
	}
	f.publish(segs...)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b := startBroker(t, []string{h.url}, nil)
	strict := startBroker(t, []string{h.url}, func(c *broker.Config) { c.FailOnMissingSegments = true })
	b.b.Start()
	strict.b.Start()
	b.waitSegments(t, "wiki", 3)
	strict.waitSegments(t, "wiki", 3)

	// Druid's default (no uncoveredIntervalsLimit): the answer lacks day 3
	// and the response context is empty.
	code, body, hdr := b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{}`))
	if code != 200 || strings.Contains(body, `"added":90`) || !strings.Contains(body, `"added":130`) || hdr.Get("X-Druid-Response-Context") != "{}" {
		t.Fatalf("default: %d %s %q", code, body, hdr.Get("X-Druid-Response-Context"))
	}
	// With uncoveredIntervalsLimit the response context names day 3.
	code, body, hdr = b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"uncoveredIntervalsLimit":5}`))
	want := `{"uncoveredIntervals":["` + day3 + `"],"uncoveredIntervalsOverflowed":false}`
	if code != 200 || hdr.Get("X-Druid-Response-Context") != want {
		t.Fatalf("uncoveredIntervalsLimit 5: %d %s\nheader %s\nwant   %s", code, body, hdr.Get("X-Druid-Response-Context"), want)
	}
	// Three gaps (the day before, day 3, the day after), limit 1.
	_, _, hdr = b.query(t, timeseriesOver("2013-08-30/2013-09-05", `{"uncoveredIntervalsLimit":"1"}`))
	if got := hdr.Get("X-Druid-Response-Context"); got != `{"uncoveredIntervals":["2013-08-30T00:00:00.000Z/2013-08-31T00:00:00.000Z"],"uncoveredIntervalsOverflowed":true}` {
		t.Fatalf("limit 1: %s", got)
	}
	// failOnMissingSegments: the query fails naming day 3.
	code, body, _ = b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"failOnMissingSegments":true}`))
	e := errorBody(t, body)
	if code != 503 || e["error"] != "druidException" || e["errorCode"] != "unavailableSegments" || e["category"] != "SERVICE_UNAVAILABLE" ||
		!strings.Contains(e["errorMessage"].(string), day3) || e["context"].(map[string]any)["uncoveredIntervals"] != day3 {
		t.Fatalf("failOnMissingSegments: %d %s", code, body)
	}
	// ... but not over the days that are there, nor for a query over all
	// of time (never covered: only missing segments would fail it).
	if code, body, _ = b.query(t, timeseriesOver("2013-09-03/2013-09-04", `{"failOnMissingSegments":true}`)); code != 200 || !strings.Contains(body, `"added":130`) {
		t.Fatalf("failOnMissingSegments over available data: %d %s", code, body)
	}
	if code, body, _ = b.query(t, `{"queryType":"timeBoundary","dataSource":"wiki","context":{"failOnMissingSegments":true}}`); code != 200 {
		t.Fatalf("timeBoundary with failOnMissingSegments: %d %s", code, body)
	}
	// A bad flag is a context parse error.
	if code, body, _ = b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"failOnMissingSegments":"maybe"}`)); code != 400 || errorBody(t, body)["error"] != "Query context parse failed" {
		t.Fatalf("bad flag: %d %s", code, body)
	}
	// The server default (svc.query.failOnMissingSegments) applies when the
	// context does not say; the context overrides it.
	if code, body, _ = strict.query(t, timeseriesOver("2013-08-31/2013-09-04", `{}`)); code != 503 || !strings.Contains(body, day3) {
		t.Fatalf("server default: %d %s", code, body)
	}
	if code, body, _ = strict.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"failOnMissingSegments":false}`)); code != 200 || !strings.Contains(body, `"added":130`) {
		t.Fatalf("context over the server default: %d %s", code, body)
	}
	// A subquery's gaps fail the outer query too.
	inner := timeseriesOver("2013-08-31/2013-09-04", `{}`)
	outer := `{"queryType":"timeseries","dataSource":{"type":"query","query":` + inner + `},"intervals":["2013/2014"],"granularity":"all",
	  "aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],"context":{"failOnMissingSegments":true}}`
	if code, body, _ = b.query(t, outer); code != 503 || !strings.Contains(body, day3) {
		t.Fatalf("subquery: %d %s", code, body)
	}
}

// losesSegment makes a historical answer as if it no longer had the segment
// id (dropped, or found damaged) while still announcing it: the sub-query
// reaches the real historical with the id renamed, so the historical itself
// reports it missing, and the report is renamed back. asked counts the
// sub-queries that asked for it; losses (shared by historicals) is how many
// more times it is lost, after which it is served.
func losesSegment(id string, asked, losses *atomic.Int64) func(http.Handler) http.Handler {
	const gone = "-gone"
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != protocol.QueryPath {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			var sq protocol.SubQuery
			if err := json.Unmarshal(body, &sq); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			hit := false
			for i := range sq.Segments {
				if sq.Segments[i].ID == id {
					asked.Add(1)
					if losses.Add(-1) >= 0 {
						sq.Segments[i].ID += gone
						hit = true
					}
				}
			}
			if !hit {
				r.Body = io.NopCloser(bytes.NewReader(body))
				next.ServeHTTP(w, r)
				return
			}
			body, _ = json.Marshal(sq)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			out := rec.Body.Bytes()
			var res map[string]json.RawMessage
			if rec.Code == http.StatusOK && json.Unmarshal(out, &res) == nil && res["missing"] != nil {
				res["missing"] = json.RawMessage(strings.ReplaceAll(string(res["missing"]), gone, ""))
				out, _ = json.Marshal(res)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.Write(out)
		})
	}
}

func TestBrokerMissingSegmentsAfterRetries(t *testing.T) {
	f := newDPFixture(t)
	segs := publishWiki(f, "wiki")
	lostID := segs[2].ID().String()
	var asked1, asked2, losses atomic.Int64
	losses.Store(1 << 40) // every replica, every time
	h1 := f.startHistorical(t.TempDir(), losesSegment(lostID, &asked1, &losses))
	h2 := f.startHistorical(t.TempDir(), losesSegment(lostID, &asked2, &losses))
	h1.node.Start()
	h2.node.Start()
	b := startBroker(t, []string{h1.url, h2.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 4, 2)

	// Druid's default: no replica had day 3 after the retry, so the query
	// fails rather than answer without it.
	q := timeseriesOver("2013-08-31/2013-09-04", `{}`)
	code, body, _ := b.query(t, q)
	if e := errorBody(t, body); code != 500 || e["error"] != "Unknown exception" || !strings.Contains(e["errorMessage"].(string), lostID) {
		t.Fatalf("default: %d %s", code, body)
	}
	if asked1.Load() != 1 || asked2.Load() != 1 {
		t.Fatalf("day 3 asked of the historicals %d and %d times, want once each (a retry on the replica)", asked1.Load(), asked2.Load())
	}
	// returnPartialResults: the answer lacks day 3 and says so.
	code, body, hdr := b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"returnPartialResults":true}`))
	want := `{"missingSegments":[{"itvl":"` + day3 + `","ver":"v1","part":0}]}`
	if code != 200 || strings.Contains(body, `"added":90`) || !strings.Contains(body, `"added":130`) || hdr.Get("X-Druid-Response-Context") != want {
		t.Fatalf("returnPartialResults: %d %s\nheader %s\nwant   %s", code, body, hdr.Get("X-Druid-Response-Context"), want)
	}
	// failOnMissingSegments wins over returnPartialResults and names it.
	code, body, _ = b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"returnPartialResults":true,"failOnMissingSegments":true}`))
	if e := errorBody(t, body); code != 503 || e["errorCode"] != "unavailableSegments" || e["context"].(map[string]any)["missingSegments"] != lostID {
		t.Fatalf("failOnMissingSegments: %d %s", code, body)
	}

	// When only the first historical asked lacks it, the retry reads it on
	// the replica: a full answer and nothing missing.
	asked1.Store(0)
	asked2.Store(0)
	losses.Store(1)
	code, body, hdr = b.query(t, timeseriesOver("2013-08-31/2013-09-04", `{"failOnMissingSegments":true}`))
	if code != 200 || !strings.Contains(body, `"added":90`) || hdr.Get("X-Druid-Response-Context") != "{}" || asked1.Load()+asked2.Load() != 2 {
		t.Fatalf("with a good replica: %d %s %s (asked %d+%d)", code, body, hdr.Get("X-Druid-Response-Context"), asked1.Load(), asked2.Load())
	}
}
