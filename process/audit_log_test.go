package process

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"strata/internal/eventually"
	"strata/interval"
	"strata/segmeta"
)

// auditRecord is what the audit listing shows of a command.
type auditRecord struct {
	Index       uint64          `json:"index"`
	Time        string          `json:"time"`
	Type        string          `json:"type"`
	Author      string          `json:"author"`
	Comment     string          `json:"comment"`
	IP          string          `json:"ip"`
	DataSources []string        `json:"dataSources"`
	Supervisor  string          `json:"supervisor"`
	Task        string          `json:"task"`
	Summary     string          `json:"summary"`
	Command     json.RawMessage `json:"command"`
}

type auditPage struct {
	Records []auditRecord `json:"records"`
	Next    uint64        `json:"next"`
}

// auditList reads one page of GET /svc/coordinator/v1/audit from node i.
func auditList(t *testing.T, c *testCluster, i int, q url.Values) auditPage {
	t.Helper()
	code, hdr, body := do(t, "GET", c.url(i)+"/svc/coordinator/v1/audit?"+q.Encode(), "", "", nil)
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("audit %s on node %d: %d %s", q.Encode(), i, code, body)
	}
	var p auditPage
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("audit %s: %v in %s", q.Encode(), err, body)
	}
	return p
}

// auditAll pages through the listing with small pages and checks the pages
// join up newest first, with no record twice.
func auditAll(t *testing.T, c *testCluster, i int, q url.Values) []auditRecord {
	t.Helper()
	q.Set("limit", "3")
	var all []auditRecord
	for {
		p := auditList(t, c, i, q)
		for _, r := range p.Records {
			if len(all) > 0 && r.Index >= all[len(all)-1].Index {
				t.Fatalf("%s: record %d after %d", q.Encode(), r.Index, all[len(all)-1].Index)
			}
			all = append(all, r)
		}
		if p.Next == 0 {
			return all
		}
		q.Set("before", fmt.Sprint(p.Next))
	}
}

const auditKafkaSpec = `{"type":"kafka","spec":{
  "dataSchema":{"dataSource":"wiki","timestampSpec":{"column":"ts","format":"iso"},"dimensionsSpec":{"dimensions":["page"]},
    "granularitySpec":{"segmentGranularity":"hour","queryGranularity":"none","rollup":false}},
  "ioConfig":{"topic":"events","consumerProperties":{"bootstrap.servers":"127.0.0.1:1","security.protocol":"SASL_SSL",
    "sasl.jaas.config":"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter2\";",
    "ssl.truststore.password":"trustpass1"},
    "taskCount":1,"taskDuration":"PT1H","startDelay":"PT0S","period":"PT0.2S","inputFormat":{"type":"json"}},
  "tuningConfig":{"type":"kafka"}}}`

// The audit listing on a 3-node cluster: commands of several types by
// several authors, listed by every node, with every filter, paging, secrets
// redacted and bad filters refused.
func TestAuditListing(t *testing.T) {
	deepDir := t.TempDir()
	c := startCluster(t, 3, map[string]string{"svc.storage.storageDirectory": deepDir})
	leader := c.leader()
	// write posts to the leader until acknowledged: an election under load
	// may move leadership between finding the leader and writing (307, 503).
	write := func(path, body, author, comment string) {
		t.Helper()
		hdr := map[string]string{"X-Svc-Author": author, "X-Svc-Comment": comment}
		var code int
		var resp string
		eventually.True(t, "POST "+path, func() bool {
			code, _, resp = do(t, "POST", c.url(c.leader())+path, "application/json", body, hdr)
			switch code {
			case 200, 204: // 204: marking changed nothing, yet the command is in the log
				return true
			case 307, 503:
				return false
			}
			t.Fatalf("POST %s: %d %s", path, code, resp)
			return false
		}, slow, eventually.Showing(func() string { return fmt.Sprintf("%d %s", code, resp) }))
	}
	write("/svc/coordinator/v1/config", `{"maxSegmentsToMove":7}`, "alice", "fewer moves")
	write("/svc/coordinator/v1/rules/wiki", `[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`, "bob", "keep wiki")
	write("/svc/indexer/v1/supervisor", auditKafkaSpec, "carol", "ingest wiki")
	write("/svc/indexer/v1/task", `{"type":"noop","id":"noop_audit_1","dataSource":"wiki"}`, "dave", "")
	iv, _ := interval.Parse("2024-01-01/2024-01-02")
	seg := &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: "v1", Dimensions: []string{"page"}, Metrics: []string{"count"},
		ShardSpec: segmeta.NumberedShard(0, 1), Size: 30,
		LoadSpec: segmeta.RawJSON(fmt.Sprintf(`{"type":"local","path":%q}`, filepath.Join(deepDir, "wiki", "2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z", "v1", "0", "index.seg")))}
	write("/svc-internal/v1/segments/publish", `{"dataSource":"wiki","segments":[`+string(seg.AppendJSON(nil))+`]}`, "erin", "")
	write("/svc/coordinator/v1/datasources/wiki/markUnused", `{"interval":"2024-01-01/2024-01-02"}`, "bob", "clean up")
	// The supervisor cannot reach Kafka: its runtime records its states.
	eventually.True(t, "a supervisor state recorded", func() bool {
		return len(auditList(t, c, leader, url.Values{"type": {"supervisor.state"}}).Records) > 0
	}, slow)
	c.waitConverged()

	follower := (leader + 1) % 3
	all := auditAll(t, c, follower, url.Values{})
	byType := map[string][]auditRecord{}
	for _, r := range all {
		byType[r.Type] = append(byType[r.Type], r)
	}
	for _, typ := range []string{"coordinator.config.set", "rules.set", "supervisor.set", "task.submit", "segments.publish", "segments.mark", "supervisor.state"} {
		if len(byType[typ]) == 0 {
			t.Fatalf("no %s command listed in %d records", typ, len(all))
		}
	}
	// The supervisor's states name it only: they are listed under its datasource.
	for _, r := range byType["supervisor.state"] {
		if r.Supervisor != "wiki" || !slices.Equal(r.DataSources, []string{"wiki"}) || r.Author != "supervisor" {
			t.Fatalf("supervisor state record %+v", r)
		}
	}
	cfg := byType["coordinator.config.set"][0]
	if cfg.Author != "alice" || cfg.Comment != "fewer moves" || cfg.IP == "" || cfg.Summary != "set the coordinator dynamic config: maxSegmentsToMove" ||
		!strings.Contains(string(cfg.Command), `"maxSegmentsToMove":7`) || !strings.HasSuffix(cfg.Time, "Z") {
		t.Fatalf("config record %+v", cfg)
	}
	// Every node lists the same commands (once it has applied them).
	for i := range 3 {
		var got []auditRecord
		eventually.True(t, fmt.Sprintf("node %d lists what node %d does", i, follower), func() bool {
			got = auditAll(t, c, i, url.Values{"toIndex": {fmt.Sprint(all[0].Index)}})
			return len(got) == len(all)
		}, slow, eventually.Showing(func() string { return fmt.Sprintf("%d records, want %d", len(got), len(all)) }))
		for j := range got {
			if got[j].Index != all[j].Index || got[j].Summary != all[j].Summary || string(got[j].Command) != string(all[j].Command) {
				t.Fatalf("node %d lists %+v where node %d lists %+v", i, got[j], follower, all[j])
			}
		}
	}

	// Secrets never show.
	sup := byType["supervisor.set"][0]
	code, _, body := do(t, "GET", c.url(follower)+"/svc/coordinator/v1/audit?type=supervisor.set", "", "", nil)
	if code != 200 || strings.Contains(body, "hunter2") || strings.Contains(body, "trustpass1") || !strings.Contains(body, `"sasl.jaas.config":"<redacted>"`) ||
		!strings.Contains(string(sup.Command), "127.0.0.1:1") {
		t.Fatalf("supervisor record: %d %s", code, body)
	}

	// Each filter selects exactly the records of the full listing it names.
	check := func(q url.Values, want func(auditRecord) bool) {
		t.Helper()
		var wantIdx, gotIdx []uint64
		for _, r := range all {
			if want(r) {
				wantIdx = append(wantIdx, r.Index)
			}
		}
		if !q.Has("toIndex") { // the supervisor's states go on being recorded
			q.Set("toIndex", fmt.Sprint(all[0].Index))
		}
		for _, r := range auditAll(t, c, follower, q) {
			gotIdx = append(gotIdx, r.Index)
		}
		if len(wantIdx) == 0 || !slices.Equal(gotIdx, wantIdx) {
			t.Fatalf("%s: got %v, want %v", q.Encode(), gotIdx, wantIdx)
		}
	}
	check(url.Values{"author": {"bob"}}, func(r auditRecord) bool { return r.Author == "bob" })
	check(url.Values{"type": {"rules.set,segments.mark"}}, func(r auditRecord) bool { return r.Type == "rules.set" || r.Type == "segments.mark" })
	check(url.Values{"type": {"task.*"}}, func(r auditRecord) bool { return strings.HasPrefix(r.Type, "task.") })
	check(url.Values{"dataSource": {"wiki"}}, func(r auditRecord) bool { return slices.Contains(r.DataSources, "wiki") })
	check(url.Values{"supervisor": {"wiki"}}, func(r auditRecord) bool { return r.Supervisor == "wiki" })
	check(url.Values{"task": {"noop_audit_1"}}, func(r auditRecord) bool { return r.Task == "noop_audit_1" })
	rules := byType["rules.set"][0]
	check(url.Values{"since": {rules.Time}}, func(r auditRecord) bool { return r.Time >= rules.Time })
	check(url.Values{"until": {cfg.Time}}, func(r auditRecord) bool { return r.Time <= cfg.Time })
	check(url.Values{"fromIndex": {fmt.Sprint(cfg.Index)}, "toIndex": {fmt.Sprint(sup.Index)}},
		func(r auditRecord) bool { return r.Index >= cfg.Index && r.Index <= sup.Index })
	check(url.Values{"author": {"bob"}, "dataSource": {"wiki"}, "type": {"segments.mark"}},
		func(r auditRecord) bool { return r.Author == "bob" && r.Type == "segments.mark" })
	if n := len(auditList(t, c, follower, url.Values{"author": {"nobody"}}).Records); n != 0 {
		t.Fatalf("%d records by nobody", n)
	}

	// Bad filters: 400 with a JSON error.
	for _, q := range []string{"since=yesterday", "until=2026-13-40", "fromIndex=0", "toIndex=x", "fromIndex=9&toIndex=3",
		"type=nope.set", "limit=0", "limit=100000", "before=-1", "author=", "colour=red"} {
		code, hdr, body := do(t, "GET", c.url(follower)+"/svc/coordinator/v1/audit?"+q, "", "", nil)
		var e struct {
			Error string `json:"error"`
		}
		if code != 400 || hdr.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
			t.Errorf("%s: %d %s", q, code, body)
		}
	}

	// Druid's history endpoints keep their shape.
	_, _, hist := do(t, "GET", c.url(c.leader())+"/svc/coordinator/v1/config/history?count=1", "", "", nil)
	var h []map[string]any
	if json.Unmarshal([]byte(hist), &h) != nil || len(h) != 1 || h[0]["auditInfo"].(map[string]any)["author"] != "alice" {
		t.Fatalf("config history: %s", hist)
	}
}

type supervisorStateView struct {
	Time, State, DetailedState string
	Healthy                    bool
	Index, SpecIndex           uint64
}

// A supervisor's runtime states are commands: its history with ?states=true
// shows RUNNING, SUSPENDED, RUNNING again and unhealthy once Kafka is gone,
// each change once; without the flag the history is Druid's list of specs.
func TestSupervisorHistoryShowsStates(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	c := startCluster(t, 3, nil)
	sup := func() string { return c.url(c.leader()) + "/svc/indexer/v1/supervisor" }
	spec := strings.Replace(auditKafkaSpec, "127.0.0.1:1", kc.ListenAddrs()[0], 1)
	spec = strings.Replace(spec, `"security.protocol":"SASL_SSL",`, "", 1)
	spec = strings.Replace(spec, `"sasl.jaas.config"`, `"x.unused"`, 1)
	if code, _, body := do(t, "POST", sup(), "application/json", spec, nil); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	states := func() (out []supervisorStateView) {
		code, _, body := do(t, "GET", sup()+"/wiki/history?states=true", "", "", nil)
		var h struct {
			ID       string            `json:"id"`
			Versions []json.RawMessage `json:"versions"`
			States   []supervisorStateView
		}
		if code != 200 || json.Unmarshal([]byte(body), &h) != nil || h.ID != "wiki" || len(h.Versions) == 0 {
			t.Fatalf("history with states: %d %s", code, body)
		}
		return h.States
	}
	latest := func(want string) {
		t.Helper()
		eventually.True(t, "state "+want, func() bool {
			s := states()
			return len(s) > 0 && s[0].State+"/"+s[0].DetailedState == want
		}, slow)
	}
	latest("RUNNING/RUNNING")
	for _, step := range []struct{ action, want string }{
		{"suspend", "SUSPENDED/SUSPENDED"}, {"resume", "RUNNING/RUNNING"},
	} {
		if code, _, body := do(t, "POST", sup()+"/wiki/"+step.action, "", "", nil); code != 200 {
			t.Fatalf("%s: %d %s", step.action, code, body)
		}
		latest(step.want)
	}
	kc.Close()
	latest("UNHEALTHY_SUPERVISOR/LOST_CONTACT_WITH_STREAM")

	s := states()
	var basic []string
	for i, st := range s {
		if i+1 < len(s) {
			prev := s[i+1]
			if st.State == prev.State && st.DetailedState == prev.DetailedState {
				t.Fatalf("state %d repeats the one before it: %+v", i, st)
			}
			if st.Index <= prev.Index || st.Time < prev.Time {
				t.Fatalf("states not newest first: %+v then %+v", st, prev)
			}
		}
		if st.Healthy != !strings.HasPrefix(st.State, "UNHEALTHY_") {
			t.Fatalf("healthy flag of %+v", st)
		}
		if len(basic) == 0 || basic[len(basic)-1] != st.State {
			basic = append(basic, st.State)
		}
	}
	slices.Reverse(basic)
	// Oldest first, the basic states the supervisor went through. A leader
	// change restarts the runtime (PENDING, RUNNING again), so on a loaded
	// machine more may come between; the streaming package's test checks
	// the exact detailed sequence without elections.
	want := []string{"PENDING", "RUNNING", "STOPPING", "PENDING", "RUNNING", "SUSPENDED", "STOPPING", "PENDING", "RUNNING", "UNHEALTHY_SUPERVISOR"}
	rest := want
	for _, b := range basic {
		if len(rest) > 0 && b == rest[0] {
			rest = rest[1:]
		}
	}
	if len(rest) > 0 || basic[len(basic)-1] != "UNHEALTHY_SUPERVISOR" {
		t.Fatalf("basic states %v do not go through %v", basic, want)
	}

	// Druid's shape without the flag (and with states=false); a bad flag is a 400.
	for _, q := range []string{"", "?states=false"} {
		code, _, body := do(t, "GET", sup()+"/wiki/history"+q, "", "", nil)
		var versions []struct {
			Spec    json.RawMessage `json:"spec"`
			Version string          `json:"version"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &versions) != nil || len(versions) != 3 || versions[0].Version == "" {
			t.Fatalf("history%s: %d %s", q, code, body)
		}
	}
	for _, path := range []string{"/wiki/history?states=maybe", "/history?states=2"} {
		if code, _, body := do(t, "GET", sup()+path, "", "", nil); code != 400 || !strings.Contains(body, `"error"`) {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	// The history of every supervisor: Druid's map of version lists, or
	// with the flag each supervisor's versions and states.
	code, _, body := do(t, "GET", sup()+"/history", "", "", nil)
	var plain map[string][]struct{ Version string }
	if code != 200 || json.Unmarshal([]byte(body), &plain) != nil || len(plain["wiki"]) != 3 {
		t.Fatalf("all history: %d %s", code, body)
	}
	code, _, body = do(t, "GET", sup()+"/history?states=true", "", "", nil)
	var all map[string]struct {
		Versions []json.RawMessage
		States   []supervisorStateView
	}
	if code != 200 || json.Unmarshal([]byte(body), &all) != nil || len(all["wiki"].Versions) != 3 || len(all["wiki"].States) != len(s) {
		t.Fatalf("all history with states: %d %s", code, body)
	}
}
