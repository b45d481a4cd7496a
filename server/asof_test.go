package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
	"strata/props"
	"strata/querynode/broker"
	"strata/querynode/segcache"
	"strata/segmeta"
	"strata/storage/deep"
)

// asOfBroker starts a broker that answers asOf queries: past timelines from
// the fixture's control node, old segments from its deep storage through a
// cache of maxSize bytes.
func (f *dpFixture) asOfBroker(urls []string, maxSize int64) (*dpBroker, *segcache.Cache) {
	b, cache, _ := f.asOfBrokerCounting(urls, maxSize)
	return b, cache
}

// asOfBrokerCounting is asOfBroker, also counting the broker's requests for
// past timelines.
func (f *dpFixture) asOfBrokerCounting(urls []string, maxSize int64) (*dpBroker, *segcache.Cache, *atomic.Int64) {
	t := f.t
	t.Helper()
	cache, err := segcache.New(segcache.Config{Dir: filepath.Join(t.TempDir(), "asof"), MaxSize: maxSize, Storage: f.store})
	if err != nil {
		t.Fatal(err)
	}
	asked := &atomic.Int64{}
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		asked.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	b := startBroker(t, urls, func(c *broker.Config) {
		c.PastTimelines = &broker.HTTPPastTimelines{URLs: []string{f.coord}, Client: client}
		c.PastSegments = cache
	})
	b.b.Start()
	return b, cache, asked
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// asOfQuery is a daily timeseries of rows and the sum of added over the
// first three days of 2024, as of a moment ("" for now).
func asOfQuery(asOf string) string {
	ctx := ""
	if asOf != "" {
		ctx = fmt.Sprintf(`,"context":{"asOf":%q}`, asOf)
	}
	return `{"queryType":"timeseries","dataSource":"wiki","intervals":["2024-01-01/2024-01-04"],"granularity":"day",` +
		`"aggregations":[{"type":"count","name":"rows"},{"type":"longSum","name":"added","fieldName":"added"}]` + ctx + `}`
}

// dayResults renders the expected timeseries: per day, rows and added.
func dayResults(days ...[2]int) string {
	var parts []string
	for i, d := range days {
		parts = append(parts, fmt.Sprintf(`{"timestamp":"2024-01-%02dT00:00:00.000Z","result":{"rows":%d,"added":%d}}`, i+1, d[0], d[1]))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// The done-when: a query as of a moment before a REPLACE answers
// the old data, one as of after it the new, on a real control node, a
// historical and a broker. The REPLACE (a new version of the first two days,
// as SQL REPLACE publishes it) makes the historical drop the old version,
// so the old answer reads those days from deep storage and the third day,
// unchanged, from the historical.
func TestAsOfAnswersFromTheTimelineOfThatMoment(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b, cache := f.asOfBroker([]string{h.url}, 1<<30)

	rows := func(day string, added int64) []dpRow {
		return []dpRow{{day + "T01:00:00Z", "a", added}, {day + "T02:00:00Z", "b", added}}
	}
	days := []string{"2024-01-01", "2024-01-02", "2024-01-03"}
	var v1 []*segmeta.DataSegment
	for i, day := range days {
		v1 = append(v1, f.segment("wiki", fmt.Sprintf("%s/2024-01-%02d", day, i+2), "2024-06-01T00:00:00.000Z", 0, 1, rows(day, 10)))
	}
	var v2 []*segmeta.DataSegment
	for i, day := range days[:2] {
		v2 = append(v2, f.segment("wiki", fmt.Sprintf("%s/2024-01-%02d", day, i+2), "2024-07-01T00:00:00.000Z", 0, 1, append(rows(day, 100), dpRow{day + "T03:00:00Z", "c", 100})))
	}
	before := f.node.FSM().LastIndex() // before the datasource existed
	f.publish(v1...)
	b.waitSegments(t, "wiki", 3)
	idx1 := f.node.FSM().LastIndex()
	oldAnswer := dayResults([2]int{2, 20}, [2]int{2, 20}, [2]int{2, 20})
	newAnswer := dayResults([2]int{3, 300}, [2]int{3, 300}, [2]int{2, 20})
	ask := func(what, asOf, want string) {
		t.Helper()
		code, body, _ := b.query(t, asOfQuery(asOf))
		if code != 200 || body != want {
			t.Fatalf("%s (asOf %q): %d %s\nwant %s", what, asOf, code, body, want)
		}
	}
	ask("before the REPLACE", "", oldAnswer)

	// A moment between the two publishes, by time: the leader's stamp of the
	// first is at most now, the second's after now.
	mid := time.Now().UnixMilli()
	eventually.True(t, "the clock to pass the middle moment", func() bool { return time.Now().UnixMilli() > mid })
	f.publish(v2...)
	idx2 := f.node.FSM().LastIndex()
	v1ids := []string{v1[0].ID().String(), v1[1].ID().String()}
	eventually.True(t, "the historical to serve the new version only", func() bool {
		served := h.served()
		return !slices.Contains(served, v1ids[0]) && !slices.Contains(served, v1ids[1]) &&
			slices.Contains(served, v2[0].ID().String()) && slices.Contains(served, v2[1].ID().String())
	})
	b.waitSegments(t, "wiki", 3)
	ask("after the REPLACE", "", newAnswer)
	if cache.Used() != 0 {
		t.Fatalf("a query without asOf used the asOf cache: %d bytes", cache.Used())
	}

	ask("as of the index after the first publish", fmt.Sprint(idx1), oldAnswer)
	if want := v1[0].Size + v1[1].Size; cache.Used() != want {
		t.Fatalf("asOf cache holds %d bytes; want the two replaced segments' %d", cache.Used(), want)
	}
	ask("as of the index after the REPLACE", fmt.Sprint(idx2), newAnswer)
	ask("as of a time between the publishes", interval.FormatMillis(mid), oldAnswer)
	ask("as of now, by time", interval.FormatMillis(time.Now().UnixMilli()+1000), newAnswer)
	ask("as of before the datasource existed", fmt.Sprint(before), "[]")
	// A groupBy over a subquery reads the same moment inside.
	inner := `{"queryType":"groupBy","dataSource":"wiki","intervals":["2024-01-01/2024-01-04"],"granularity":"all",` +
		`"dimensions":["page"],"aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`
	outer := `{"queryType":"timeseries","dataSource":{"type":"query","query":` + inner + `},"intervals":["2024-01-01/2024-01-04"],` +
		`"granularity":"all","aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],"context":{"asOf":"%d"}}`
	for _, c := range []struct {
		idx  uint64
		want string
	}{{idx1, "60"}, {idx2, "620"}} {
		code, body, _ := b.query(t, fmt.Sprintf(outer, c.idx))
		if code != 200 || !strings.Contains(body, `"added":`+c.want+`}`) {
			t.Fatalf("subquery as of %d: %d %s; want added %s", c.idx, code, body, c.want)
		}
	}
}

// Errors: a malformed moment or one after the last index is the query's
// fault (400); a segment of that moment killed since (its deep-storage file
// gone) fails the query naming it, never a partial answer; a cache too small
// for the segments a query must read from deep storage fails it (400).
func TestAsOfErrors(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b, _ := f.asOfBroker([]string{h.url}, 1<<30)
	old := []*segmeta.DataSegment{
		f.segment("wiki", "2024-01-01/2024-01-02", "2024-06-01T00:00:00.000Z", 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", 1}}),
		f.segment("wiki", "2024-01-02/2024-01-03", "2024-06-01T00:00:00.000Z", 0, 1, []dpRow{{"2024-01-02T01:00:00Z", "a", 1}}),
	}
	f.publish(old...)
	idx1 := f.node.FSM().LastIndex()
	f.publish(f.segment("wiki", "2024-01-01/2024-01-03", "2024-07-01T00:00:00.000Z", 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", 5}}))
	eventually.True(t, "the historical to drop the old version", func() bool {
		served := h.served()
		return len(served) == 1 && !slices.Contains(served, old[0].ID().String())
	})

	for _, c := range []struct{ name, asOf string }{
		{"not a moment", `"yesterday"`},
		{"an object", `{"index":3}`},
		{"a fraction", `1.5`},
		{"after the last index", `999999`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := b.query(t, strings.Replace(asOfQuery(""), `}]}`, `}],"context":{"asOf":`+c.asOf+`}}`, 1))
			if code != 400 || !strings.Contains(body, "asOf") {
				t.Fatalf("want 400 naming asOf, got %d %s", code, body)
			}
		})
	}

	// The control node's endpoint itself refuses what it cannot answer.
	for _, c := range []struct{ name, query string }{
		{"no datasource", "?asOf=1"},
		{"no moment", "?dataSource=wiki"},
		{"a malformed moment", "?asOf=soon&dataSource=wiki"},
		{"a future index", "?asOf=999999&dataSource=wiki"},
	} {
		if code, body, _ := call(t, "GET", f.coord+"/svc-internal/v1/timeline"+c.query, "", ""); code != 400 {
			t.Fatalf("timeline endpoint, %s: want 400, got %d %s", c.name, code, body)
		}
	}
	code, body, _ := call(t, "GET", fmt.Sprintf("%s/svc-internal/v1/timeline?asOf=%d&dataSource=wiki&dataSource=none", f.coord, idx1), "", "")
	var pt struct {
		Index    uint64                 `json:"index"`
		Stable   bool                   `json:"stable"`
		Segments []*segmeta.DataSegment `json:"segments"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &pt) != nil || pt.Index != idx1 || !pt.Stable || len(pt.Segments) != 2 {
		t.Fatalf("timeline as of %d: %d %s; want the two segments used then", idx1, code, body)
	}

	// Killed since: the sweeper deletes a killed segment's file.
	var spec deep.LoadSpec
	if err := json.Unmarshal([]byte(old[1].LoadSpec), &spec); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Delete(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	code, body, _ = b.query(t, asOfQuery(fmt.Sprint(idx1)))
	if code != 404 || !strings.Contains(body, old[1].ID().String()) || !strings.Contains(body, "segmentKilled") {
		t.Fatalf("a killed segment: want 404 segmentKilled naming %s, got %d %s", old[1].ID(), code, body)
	}

	// A cache smaller than the one remaining old segment.
	small, cache := f.asOfBroker([]string{h.url}, old[0].Size-1)
	q := strings.Replace(asOfQuery(fmt.Sprint(idx1)), "2024-01-01/2024-01-04", "2024-01-01/2024-01-02", 1)
	code, body, _ = small.query(t, q)
	if code != 400 || !strings.Contains(body, "svc.broker.asOfCache.maxSize") {
		t.Fatalf("over the cache budget: want 400 naming svc.broker.asOfCache.maxSize, got %d %s", code, body)
	}
	if cache.Used() != 0 {
		t.Fatalf("a refused read left %d bytes in the cache", cache.Used())
	}
}

// An asOf query reads a segment from deep storage when the historical that
// serves it fails to answer, where a query of now, with no other replica,
// fails: the moment's data is in deep storage all the same.
func TestAsOfReadsDeepStorageWhenTheHistoricalFails(t *testing.T) {
	f := newDPFixture(t)
	var failing atomic.Bool
	h := f.startHistorical(t.TempDir(), func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if failing.Load() && r.URL.Path == "/svc-internal/v1/query" {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	h.node.Start()
	b, cache := f.asOfBroker([]string{h.url}, 1<<30)
	seg := f.segment("wiki", "2024-01-01/2024-01-02", "2024-06-01T00:00:00.000Z", 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", 7}})
	f.publish(seg)
	idx := f.node.FSM().LastIndex()
	b.waitSegments(t, "wiki", 1)
	want := `[{"timestamp":"2024-01-01T00:00:00.000Z","result":{"rows":1,"added":7}}]`
	q := strings.Replace(asOfQuery(fmt.Sprint(idx)), "2024-01-01/2024-01-04", "2024-01-01/2024-01-02", 1)
	if code, body, _ := b.query(t, q); code != 200 || body != want || cache.Used() != 0 {
		t.Fatalf("served by the historical: %d %s (cache %d bytes)", code, body, cache.Used())
	}
	failing.Store(true)
	if code, body, _ := b.query(t, strings.Replace(asOfQuery(""), "2024-01-01/2024-01-04", "2024-01-01/2024-01-02", 1)); code != 500 {
		t.Fatalf("a query of now with its only server failing: want 500, got %d %s", code, body)
	}
	if code, body, _ := b.query(t, q); code != 200 || body != want || cache.Used() != seg.Size {
		t.Fatalf("asOf with the historical failing: %d %s (cache %d bytes); want %s from deep storage", code, body, cache.Used(), want)
	}
}

// A union reads every member as of the same moment: each datasource's
// timeline at one index, including one that did not exist yet.
func TestAsOfUnionReadsOneMoment(t *testing.T) {
	f := newDPFixture(t)
	h := f.startHistorical(t.TempDir(), nil)
	h.node.Start()
	b, _, asked := f.asOfBrokerCounting([]string{h.url}, 1<<30)
	day := func(ds, version string, added int64) *segmeta.DataSegment {
		return f.segment(ds, "2024-01-01/2024-01-02", version, 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", added}})
	}
	f.publish(day("wiki", "2024-06-01T00:00:00.000Z", 1))
	idx1 := f.node.FSM().LastIndex()
	f.publish(day("edits", "2024-06-01T00:00:00.000Z", 10))
	idx2 := f.node.FSM().LastIndex()
	f.publish(day("wiki", "2024-07-01T00:00:00.000Z", 100))
	idx3 := f.node.FSM().LastIndex()
	const q = `{"queryType":"timeseries","dataSource":{"type":"union","dataSources":["wiki","edits"]},` +
		`"intervals":["2024-01-01/2024-01-02"],"granularity":"all","aggregations":[{"type":"longSum","name":"added","fieldName":"added"}],` +
		`"context":{"asOf":%d}}`
	for _, c := range []struct {
		idx   uint64
		added int
		asked int64 // timeline requests so far: one per new index, none for one seen
	}{{idx1, 1, 1}, {idx2, 11, 2}, {idx3, 110, 3}, {idx1, 1, 3}, {idx3, 110, 3}} {
		want := fmt.Sprintf(`[{"timestamp":"2024-01-01T01:00:00.000Z","result":{"added":%d}}]`, c.added)
		if code, body, _ := b.query(t, fmt.Sprintf(q, c.idx)); code != 200 || body != want {
			t.Fatalf("union as of %d: %d %s; want %s", c.idx, code, body, want)
		}
		if got := asked.Load(); got != c.asked {
			t.Fatalf("union as of %d: %d timeline requests so far, want %d (the broker caches per datasource and index)", c.idx, got, c.asked)
		}
	}
}

// The control node rebuilds a past state once per log index and datasource:
// brokers asking again for a moment already rebuilt cost no replay, and the
// state now is read live.
func TestTimelineEndpointReplaysOncePerMoment(t *testing.T) {
	p := props.Defaults()
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p.Set("svc.storage.storageDirectory", store.Root())
	ts, node, srv := singleServer(t, p, RoleCoordinator, RoleOverlord)
	f := &dpFixture{t: t, coord: ts.URL, node: node, store: &countingStorage{Local: store}}
	f.publish(f.segment("wiki", "2024-01-01/2024-01-02", "2024-06-01T00:00:00.000Z", 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", 1}}))
	idx1 := node.FSM().LastIndex()
	f.publish(f.segment("wiki", "2024-01-01/2024-01-02", "2024-07-01T00:00:00.000Z", 0, 1, []dpRow{{"2024-01-01T01:00:00Z", "a", 2}}))
	ask := func(query string, segments int, replays int64) {
		t.Helper()
		code, body, _ := call(t, "GET", ts.URL+"/svc-internal/v1/timeline?"+query, "", "")
		var pt struct {
			Segments []json.RawMessage `json:"segments"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &pt) != nil || len(pt.Segments) != segments {
			t.Fatalf("%s: %d %s; want %d segments", query, code, body, segments)
		}
		if got := srv.pastReplays.Load(); got != replays {
			t.Fatalf("%s: %d replays so far, want %d", query, got, replays)
		}
	}
	ask(fmt.Sprintf("asOf=%d&dataSource=wiki", idx1), 1, 1)
	ask(fmt.Sprintf("asOf=%d&dataSource=wiki", idx1), 1, 1)
	ask(fmt.Sprintf("asOf=%d&dataSource=wiki&dataSource=edits", idx1), 1, 2) // edits was not asked for yet
	ask(fmt.Sprintf("asOf=%d&dataSource=edits&dataSource=wiki", idx1), 1, 2)
	// A time ahead of every stamp is the state now: read live, not replayed.
	ask("asOf="+interval.FormatMillis(time.Now().Add(time.Hour).UnixMilli())+"&dataSource=wiki", 1, 2)
}
