package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"strata/coordinator"
	"strata/internal/eventually"
	"strata/protocol"
)

// setRulesOver posts a datasource's retention rules to the coordinator.
func (f *dpFixture) setRules(ds, body string) {
	f.t.Helper()
	if code, got, _ := call(f.t, "POST", f.coord+"/svc/coordinator/v1/rules/"+ds, "application/json", body); code != 200 {
		f.t.Fatalf("POST rules: %d %s", code, got)
	}
}

// holders counts, per segment id, the historicals that serve it.
func holdersOf(hs ...*dpHistorical) map[string]int {
	out := map[string]int{}
	for _, h := range hs {
		for _, id := range h.served() {
			out[id]++
		}
	}
	return out
}

// exactlyOnce reports whether every id is served by exactly one of hs and
// nothing else is served.
func exactlyOnce(ids []string, hs ...*dpHistorical) bool {
	got := holdersOf(hs...)
	if len(got) != len(ids) {
		return false
	}
	for _, id := range ids {
		if got[id] != 1 {
			return false
		}
	}
	return true
}

// TestRetentionRulesPlaceSegments runs load rules, failover of a historical,
// drop rules and tiers through real historicals and a broker.
func TestRetentionRulesPlaceSegments(t *testing.T) {
	f := newDPFixture(t)
	var ids []string
	var want int64
	for d := 1; d <= 12; d++ {
		day := fmt.Sprintf("2013-09-%02d", d)
		next := fmt.Sprintf("2013-09-%02d", d+1)
		seg := f.segment("wiki", day+"/"+next, "v1", 0, 1, wikiRows(day, int64(d*10)))
		f.publish(seg)
		ids = append(ids, seg.ID().String())
		want += 4*int64(d*10) + 10
	}
	f.setRules("wiki", `[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`)
	h1, h2, h3 := f.startHistorical(t.TempDir(), nil), f.startHistorical(t.TempDir(), nil), f.startHistorical(t.TempDir(), nil)
	for _, h := range []*dpHistorical{h1, h2, h3} {
		h.node.Start()
	}
	b := startBroker(t, []string{h1.url, h2.url, h3.url}, nil)
	b.b.Start()

	// One replica each, spread over the three.
	eventually.True(t, "each segment on exactly one historical", func() bool { return exactlyOnce(ids, h1, h2, h3) })
	spread := 0
	for _, h := range []*dpHistorical{h1, h2, h3} {
		if len(h.served()) > 0 {
			spread++
		}
	}
	if spread < 2 {
		t.Fatalf("12 segments all placed on one of three historicals: %v %v %v", h1.served(), h2.served(), h3.served())
	}
	sum := func() string {
		code, got, _ := b.query(t, `{"queryType":"timeseries","dataSource":"wiki","intervals":["2013-01-01/2014-01-01"],"granularity":"all","aggregations":[{"type":"longSum","name":"added","fieldName":"added"}]}`)
		if code != 200 {
			t.Fatalf("query: %d %s", code, got)
		}
		return got
	}
	wantSum := fmt.Sprintf(`"added":%d`, want)
	b.waitSegments(t, "wiki", 12)
	if got := sum(); !strings.Contains(got, wantSum) {
		t.Fatalf("sum over the placed segments: %s, want %s", got, wantSum)
	}
	cp := f.coord + "/svc/coordinator/v1"
	eventually.True(t, "load status 100%", func() bool {
		_, got, _ := call(t, "GET", cp+"/loadstatus", "", "")
		return got == `{"wiki":100.0}`
	})
	expect(t, "GET", cp+"/loadstatus?full", "", "", 200, `{"_default_tier":{"wiki":0}}`)
	handoff := cp + "/datasources/wiki/handoffComplete?interval=2013-09-05/2013-09-06&partitionNumber=0&version="
	expect(t, "GET", handoff+"v1", "", "", 200, `true`)
	expect(t, "GET", handoff+"v0", "", "", 200, `true`) // a newer version of the partition is served
	expect(t, "GET", handoff+"v2", "", "", 200, `false`)
	expect(t, "GET", strings.Replace(handoff, "partitionNumber=0", "partitionNumber=1", 1)+"v1", "", "", 200, `false`)
	for _, bad := range []string{"interval=x&partitionNumber=0&version=v", "interval=2013-09-05/2013-09-06&partitionNumber=a&version=v",
		"interval=2013-09-05/2013-09-06&partitionNumber=0"} {
		if code, got, _ := call(t, "GET", cp+"/datasources/wiki/handoffComplete?"+bad, "", ""); code != 400 || !strings.Contains(got, `"error"`) {
			t.Errorf("handoffComplete?%s: %d %s", bad, code, got)
		}
	}
	eventually.True(t, "empty load queues", func() bool {
		_, got, _ := call(t, "GET", cp+"/loadqueue?simple", "", "")
		return strings.Count(got, `"segmentsToLoad":0,"segmentsToDrop":0`) == 3
	})

	// A historical dies: its segments move to the two left, and queries see
	// every row again.
	victim := h1
	if len(victim.served()) == 0 {
		victim = h2
	}
	victim.stop()
	left := []*dpHistorical{h1, h2, h3}
	left = slices.DeleteFunc(left, func(h *dpHistorical) bool { return h == victim })
	eventually.True(t, "segments of the dead historical reassigned", func() bool { return exactlyOnce(ids, left...) })
	b.waitSegments(t, "wiki", 12)
	if got := sum(); !strings.Contains(got, wantSum) {
		t.Fatalf("sum after losing a historical: %s, want %s", got, wantSum)
	}

	// A drop rule: the segments it matches leave the historicals at once and
	// the retention duty marks them unused.
	f.setRules("wiki", `[{"type":"dropByInterval","interval":"2013-09-01/2013-09-04"},{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`)
	eventually.True(t, "dropped days unserved", func() bool { return exactlyOnce(ids[3:], left...) })
	// A segment no load rule matches is never loaded: its handoff is complete.
	expect(t, "GET", cp+"/datasources/wiki/handoffComplete?interval=2013-09-01/2013-09-02&partitionNumber=0&version=v9", "", "", 200, `true`)
	ret := &coordinator.Retention{Node: f.node}
	if n, err := ret.RunOnce(time.Now()); err != nil || n != 3 {
		t.Fatalf("retention marked %d segments unused (%v), want 3", n, err)
	}
	if n, err := ret.RunOnce(time.Now()); err != nil || n != 0 {
		t.Fatalf("second retention run marked %d (%v), want 0", n, err)
	}
	expect(t, "GET", cp+"/metadata/datasources/wiki/segments", "", "", 200, jsonList(ids[3:]...))
	var hist []auditEntryJSON
	getJSON(t, "GET", cp+"/rules/wiki/history?count=5", "", "", &hist)
	if len(hist) != 2 {
		t.Fatalf("rules history: %+v", hist)
	}

	// Tiers: a hot historical takes the last three days, the default tier keeps
	// one replica of everything.
	hot := f.startHistoricalIn("hot", t.TempDir(), nil)
	hot.node.Start()
	f.setRules("wiki", `[{"type":"loadByInterval","interval":"2013-09-10/2013-09-13","tieredReplicants":{"hot":1,"_default_tier":1}},{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`)
	eventually.True(t, "hot tier holds the last three days", func() bool { return slices.Equal(hot.served(), ids[9:]) })
	eventually.True(t, "default tier keeps one replica", func() bool { return exactlyOnce(ids[3:], left...) })
	eventually.True(t, "tiers of the datasource", func() bool {
		_, got, _ := call(t, "GET", cp+"/datasources/wiki/tiers", "", "")
		return got == `["_default_tier","hot"]`
	})
	expect(t, "GET", cp+"/loadstatus?full", "", "", 200, `{"_default_tier":{"wiki":0},"hot":{"wiki":0}}`)

	// Decommissioning a historical moves its segments to the other one of its
	// tier, which holds them before it lets go.
	leaving := strings.TrimPrefix(left[0].url, "http://")
	if code, got, _ := call(t, "POST", cp+"/config", "application/json", `{"decommissioningNodes":["`+leaving+`"]}`); code != 200 {
		t.Fatalf("decommission: %d %s", code, got)
	}
	eventually.True(t, "the decommissioned historical empties", func() bool { return len(left[0].served()) == 0 })
	if !exactlyOnce(ids[3:], left[1]) {
		t.Fatalf("the remaining default-tier historical serves %v", left[1].served())
	}

	// Paused coordination: nothing new is loaded until it resumes.
	pause := func(on bool) {
		t.Helper()
		if code, got, _ := call(t, "POST", cp+"/config", "application/json", fmt.Sprintf(`{"pauseCoordination":%v}`, on)); code != 200 {
			t.Fatalf("pause %v: %d %s", on, code, got)
		}
	}
	pause(true)
	late := f.segment("wiki", "2013-09-20/2013-09-21", "v1", 0, 1, wikiRows("2013-09-20", 0))
	f.publish(late)
	// Instead of sleeping through a few polls: what the historicals poll
	// assigns the late segment to none of them (while paused each is told
	// to hold what it holds), so none can load it.
	assignedLate := func() (n int) {
		t.Helper()
		for _, h := range append(left, hot) {
			code, listing, _ := call(t, "GET", f.coord+protocol.AssignedPath+strings.TrimPrefix(h.url, "http://"), "", "")
			if code != 200 {
				t.Fatalf("listing of %s: %d %s", h.url, code, listing)
			}
			if strings.Contains(listing, `"2013-09-20T00:00:00.000Z/2013-09-21T00:00:00.000Z"`) {
				n++
			}
		}
		return n
	}
	if n := assignedLate(); n != 0 {
		t.Fatalf("a segment published while coordination is paused is assigned to %d historicals", n)
	}
	if n := holdersOf(append(left, hot)...)[late.ID().String()]; n != 0 {
		t.Fatalf("a segment published while coordination is paused was loaded %d times", n)
	}
	pause(false)
	eventually.True(t, "the late segment loads after resuming", func() bool {
		return holdersOf(append(left, hot)...)[late.ID().String()] == 1
	})
	if n := assignedLate(); n != 1 { // the check while paused can see an assignment
		t.Fatalf("after resuming the late segment is assigned to %d historicals, want 1", n)
	}
}

// With a load queue of one segment per historical (smart loading off), the
// coordinator hands each historical one segment at a time, and the loading
// still runs to the end: every finished load lets the next one out.
func TestThrottledLoadingConverges(t *testing.T) {
	f := newDPFixture(t)
	if code, got, _ := call(t, "POST", f.coord+"/svc/coordinator/v1/config", "application/json",
		`{"smartSegmentLoading":false,"maxSegmentsInNodeLoadingQueue":1}`); code != 200 {
		t.Fatalf("config: %d %s", code, got)
	}
	f.setRules("wiki", `[{"type":"loadForever","tieredReplicants":{"_default_tier":2}}]`)
	var ids []string
	for d := 1; d <= 6; d++ {
		day, next := fmt.Sprintf("2013-09-%02d", d), fmt.Sprintf("2013-09-%02d", d+1)
		seg := f.segment("wiki", day+"/"+next, "v1", 0, 1, wikiRows(day, int64(d)))
		f.publish(seg)
		ids = append(ids, seg.ID().String())
	}
	h1, h2 := f.startHistorical(t.TempDir(), nil), f.startHistorical(t.TempDir(), nil)
	h1.node.Start()
	h2.node.Start()
	maxQueued := 0
	eventually.True(t, "both historicals hold all six segments", func() bool {
		_, got, _ := call(t, "GET", f.coord+"/svc/coordinator/v1/loadqueue?simple", "", "")
		var q map[string]struct {
			SegmentsToLoad int `json:"segmentsToLoad"`
		}
		if json.Unmarshal([]byte(got), &q) == nil {
			for _, s := range q {
				maxQueued = max(maxQueued, s.SegmentsToLoad)
			}
		}
		h := holdersOf(h1, h2)
		for _, id := range ids {
			if h[id] != 2 {
				return false
			}
		}
		return true
	})
	if maxQueued > 1 {
		t.Fatalf("a historical had %d segments queued, limit 1", maxQueued)
	}
	// The metadata listing reports the replicas the rule asks for.
	_, got, _ := call(t, "GET", f.coord+"/svc/coordinator/v1/metadata/segments?includeOvershadowedStatus", "", "")
	if strings.Count(got, `"replicationFactor":2`) != 6 {
		t.Fatalf("replication factors: %s", got)
	}
}

// Segments a newer version overshadows entirely are marked unused by the
// retention duty, once the leader has led for millisToWaitBeforeDeleting.
func TestOvershadowedSegmentsMarkedUnused(t *testing.T) {
	f := newDPFixture(t)
	old := f.segment("wiki", "2013-09-01/2013-09-02", "v1", 0, 1, wikiRows("2013-09-01", 1))
	other := f.segment("wiki", "2013-09-02/2013-09-03", "v1", 0, 1, wikiRows("2013-09-02", 1))
	f.publish(old, other)
	f.publish(f.segment("wiki", "2013-09-01/2013-09-02", "v2", 0, 1, wikiRows("2013-09-01", 2)))
	ret := &coordinator.Retention{Node: f.node}
	// The default wait (15 minutes of leadership) has not passed.
	if n, err := ret.RunOnce(time.Now()); err != nil || n != 0 {
		t.Fatalf("before millisToWaitBeforeDeleting: marked %d, %v", n, err)
	}
	if code, got, _ := call(t, "POST", f.coord+"/svc/coordinator/v1/config", "application/json", `{"millisToWaitBeforeDeleting":0}`); code != 200 {
		t.Fatalf("config: %d %s", code, got)
	}
	if n, err := ret.RunOnce(time.Now()); err != nil || n != 1 {
		t.Fatalf("marked %d overshadowed segments, want 1 (%v)", n, err)
	}
	_, got, _ := call(t, "GET", f.coord+"/svc/coordinator/v1/metadata/datasources/wiki/segments", "", "")
	if strings.Contains(got, old.ID().String()) || !strings.Contains(got, other.ID().String()) || !strings.Contains(got, "_v2") {
		t.Fatalf("used segments after the duty: %s", got)
	}
	if n, err := ret.RunOnce(time.Now()); err != nil || n != 0 {
		t.Fatalf("second run marked %d", n)
	}
}
