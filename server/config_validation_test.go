package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/streaming"
)

// logBuffer collects a server's JSON log lines; the server writes from its
// own goroutines while the test reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// entries returns the logged lines whose message is msg, decoded.
func (l *logBuffer) entries(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	text := l.b.String()
	l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if e["@message"] == msg {
			out = append(out, e)
		}
	}
	return out
}

// configControl is a one-node control plane logging JSON into the returned buffer.
func configControl(t *testing.T) (*httptest.Server, *cluster.Node, *logBuffer) {
	t.Helper()
	buf := &logBuffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: buf, JSONFormat: true, Level: hclog.Info})
	ts, n, _ := singleServerLog(t, nil, log, RoleCoordinator, RoleOverlord)
	return ts, n, buf
}

// storedConfig is every dynamic config as the API shows it, with their
// histories and the length of the audit trail.
type storedConfig struct {
	Coordinator, CoordinatorHistory string
	Worker, WorkerHistory           string
	Rules, RulesHistory             string
	Supervisors, SupervisorHistory  string
	Audit                           int
}

func readStoredConfig(t *testing.T, base string, n *cluster.Node) storedConfig {
	t.Helper()
	get := func(path string) string {
		code, body, _ := call(t, "GET", base+path, "", "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		return body
	}
	c := storedConfig{
		Coordinator:        get("/svc/coordinator/v1/config"),
		CoordinatorHistory: get("/svc/coordinator/v1/config/history?count=1000"),
		Worker:             get("/svc/indexer/v1/worker"),
		WorkerHistory:      get("/svc/indexer/v1/worker/history?count=1000"),
		Rules:              get("/svc/coordinator/v1/rules"),
		RulesHistory:       get("/svc/coordinator/v1/rules/history?count=1000"),
		Supervisors:        get(supPath),
		SupervisorHistory:  get(supPath + "/history"),
	}
	n.FSM().Read(func(s *fsm.State) { c.Audit = s.AuditLen() })
	return c
}

// seedConfig stores non-default values of every dynamic config, so that a
// rejected request resetting one to its default would show.
func seedConfig(t *testing.T, base string) {
	t.Helper()
	for path, body := range map[string]string{
		"/svc/coordinator/v1/config":     `{"maxSegmentsToMove":42,"decommissioningNodes":["h1:8083"],"smartSegmentLoading":false}`,
		"/svc/indexer/v1/worker":         `{"selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":["h:8091"]}}}}`,
		"/svc/coordinator/v1/rules/wiki": `[{"type":"loadForever","tieredReplicants":{"hot":1}}]`,
		supPath:                          kafkaSpec("wiki", "t", 1, true), // suspended: it reads no stream
	} {
		if code, resp, _ := call(t, "POST", base+path, "application/json", body); code != 200 {
			t.Fatalf("seed %s: %d %s", path, code, resp)
		}
	}
}

// Values Druid bounds, values that cannot mean anything and JSON of the
// wrong type are refused with a 400 {"error": ...} naming the field, and
// nothing is stored: no config changes and no audit entry is written.
func TestConfigOutOfBoundsIsRefusedAndNothingStored(t *testing.T) {
	ts, n, _ := configControl(t)
	seedConfig(t, ts.URL)
	const coord, worker, rules = "/svc/coordinator/v1/config", "/svc/indexer/v1/worker", "/svc/coordinator/v1/rules/wiki"
	cases := []struct {
		name, path, body string
		field            string // the error message must name it
	}{
		// Coordinator dynamic config: bounds Druid has.
		{"decommissioning percent above 100", coord, `{"decommissioningMaxPercentOfMaxSegmentsToMove":101}`, "decommissioningMaxPercentOfMaxSegmentsToMove"},
		{"percent to consider zero", coord, `{"percentOfSegmentsToConsiderPerMove":0}`, "percentOfSegmentsToConsiderPerMove"},
		{"negative non-primary replicants", coord, `{"maxNonPrimaryReplicantsToLoad":-1}`, "maxNonPrimaryReplicantsToLoad"},
		// Coordinator dynamic config: counts and limits Druid leaves unbounded.
		{"negative maxSegmentsToMove", coord, `{"maxSegmentsToMove":-5}`, "maxSegmentsToMove"},
		{"negative maxSegmentsToMove in a string", coord, `{"maxSegmentsToMove":"-5"}`, "maxSegmentsToMove"},
		{"negative millisToWaitBeforeDeleting", coord, `{"millisToWaitBeforeDeleting":-1}`, "millisToWaitBeforeDeleting"},
		{"negative mergeBytesLimit", coord, `{"mergeBytesLimit":-1}`, "mergeBytesLimit"},
		{"negative mergeSegmentsLimit", coord, `{"mergeSegmentsLimit":-1}`, "mergeSegmentsLimit"},
		{"negative replicantLifetime", coord, `{"replicantLifetime":-1}`, "replicantLifetime"},
		{"negative replicationThrottleLimit", coord, `{"replicationThrottleLimit":-1}`, "replicationThrottleLimit"},
		{"negative maxSegmentsInNodeLoadingQueue", coord, `{"maxSegmentsInNodeLoadingQueue":-1}`, "maxSegmentsInNodeLoadingQueue"},
		{"a good field does not carry a bad one", coord, `{"maxSegmentsToMove":7,"replicationThrottleLimit":-1}`, "replicationThrottleLimit"},
		// Coordinator dynamic config: wrong JSON types.
		{"decommissioningNodes object", coord, `{"decommissioningNodes":{"a":1}}`, "decommissioningNodes"},
		{"decommissioningNodes number", coord, `{"decommissioningNodes":5}`, "decommissioningNodes"},
		{"killDataSourceWhitelist boolean", coord, `{"killDataSourceWhitelist":true}`, "killDataSourceWhitelist"},
		{"killPendingSegmentsSkipList object", coord, `{"killPendingSegmentsSkipList":{}}`, "killPendingSegmentsSkipList"},
		{"decommissioningNodes list of numbers", coord, `{"decommissioningNodes":[1]}`, "decommissioningNodes"},
		{"maxSegmentsToMove list", coord, `{"maxSegmentsToMove":[5]}`, "maxSegmentsToMove"},
		{"debugDimensions list", coord, `{"debugDimensions":["a"]}`, "debugDimensions"},
		// Overlord worker config.
		{"selectStrategy list", worker, `{"selectStrategy":[]}`, "selectStrategy"},
		{"affinity hosts a string", worker, `{"selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":"h:8091"}}}}`, "affinity"},
		{"affinity empty host", worker, `{"selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":[""]}}}}`, "affinity"},
		{"categoryMap list", worker, `{"selectStrategy":{"type":"fillCapacityWithCategorySpec","workerCategorySpec":{"categoryMap":[]}}}`, "categoryMap"},
		{"empty defaultCategory", worker, `{"selectStrategy":{"type":"fillCapacityWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":""}}}}}`, "defaultCategory"},
		{"autoScaler list", worker, `{"autoScaler":[1]}`, "autoScaler"},
		{"negative minNumWorkers", worker, `{"autoScaler":{"type":"ec2","minNumWorkers":-1,"maxNumWorkers":2}}`, "minNumWorkers"},
		{"type number", worker, `{"type":5}`, "type"},
		// Retention rules.
		{"rules object", rules, `{"type":"loadForever"}`, "JSON array"},
		{"negative replicas", rules, `[{"type":"loadForever","tieredReplicants":{"hot":-1}}]`, "tieredReplicants"},
		{"replicas object", rules, `[{"type":"loadForever","tieredReplicants":{"hot":{}}}]`, "tieredReplicants"},
		{"period number", rules, `[{"type":"loadByPeriod","period":30}]`, "period"},
		{"empty tier name", rules, `[{"type":"loadForever","tieredReplicants":{"":1}}]`, "tieredReplicants"},
		// Supervisor specs.
		{"taskCount zero", supPath, strings.Replace(kafkaSpec("wiki", "t", 0, false), `"suspended":false`, `"suspended":true`, 1), "taskCount"},
		{"negative maxRowsPerSegment", supPath, supervisorTuning(`"maxRowsPerSegment":-1`), "maxRowsPerSegment"},
		{"negative chatRetries", supPath, supervisorTuning(`"chatRetries":-1`), "chatRetries"},
		{"chatRetries a string", supPath, supervisorTuning(`"chatRetries":"many"`), "chatRetries"},
		{"negative maxPendingPersists", supPath, supervisorTuning(`"maxPendingPersists":-1`), "maxPendingPersists"},
		{"negative handoffConditionTimeout", supPath, supervisorTuning(`"handoffConditionTimeout":-5`), "handoffConditionTimeout"},
		{"maxBytesInMemory below -1", supPath, supervisorTuning(`"maxBytesInMemory":-2`), "maxBytesInMemory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := readStoredConfig(t, ts.URL, n)
			code, body, h := call(t, "POST", ts.URL+c.path, "application/json", c.body)
			var e ErrorBody
			if code != 400 || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, c.field) ||
				!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("POST %s %s: got %d %s, want 400 {\"error\": ...} naming %s", c.path, c.body, code, body, c.field)
			}
			if after := readStoredConfig(t, ts.URL, n); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused request changed the stored config:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// Unknown fields are ignored as Druid ignores them, and each accepted
// request that had some logs their names, so that a misspelt field does
// not go unnoticed.
func TestConfigUnknownFieldsAreStoredWithoutThemAndLogged(t *testing.T) {
	ts, _, logs := configControl(t)
	cases := []struct {
		name, path, body string
		stored           string // GET of path shows it
		fields           []string
	}{
		{"coordinator", "/svc/coordinator/v1/config", `{"maxSegmentsToMove":7,"maxSegmentToMove":3,"zeta":{"x":1}}`,
			`"maxSegmentsToMove":7,`, []string{"maxSegmentToMove", "zeta"}},
		{"worker", "/svc/indexer/v1/worker", `{"selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":["h:1"]},"strng":true}},"autoscaler":null}`,
			`"affinityConfig":{"affinity":{"wiki":["h:1"]},"strong":false}`, []string{"autoscaler", "selectStrategy.affinityConfig.strng"}},
		{"worker category", "/svc/indexer/v1/worker", `{"selectStrategy":{"type":"equalDistributionWithCategorySpec","workerCategorySpec":{"categoryMap":{"noop":{"defaultCategory":"c","categoryAfinity":{}}}}}}`,
			`"defaultCategory":"c"`, []string{"selectStrategy.workerCategorySpec.categoryMap.noop.categoryAfinity"}},
		{"rules", "/svc/coordinator/v1/rules/wiki", `[{"type":"dropForever"},{"type":"loadForever","tieredReplicant":{"hot":1},"useDefaultTierForNull":true}]`,
			`"_default_tier":2`, []string{"[1].tieredReplicant"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(logs.entries(t, unknownFieldsMsg))
			if code, body, _ := call(t, "POST", ts.URL+c.path, "application/json", c.body); code != 200 {
				t.Fatalf("POST: %d %s", code, body)
			}
			if _, body, _ := call(t, "GET", ts.URL+c.path, "", ""); !strings.Contains(body, c.stored) {
				t.Errorf("stored %s, want it to contain %s", body, c.stored)
			}
			got := logs.entries(t, unknownFieldsMsg)
			if len(got) != before+1 {
				t.Fatalf("%d log lines %q, want one more than %d", len(got), unknownFieldsMsg, before)
			}
			e := got[len(got)-1]
			var fields []string
			raw, _ := json.Marshal(e["fields"])
			json.Unmarshal(raw, &fields)
			if e["@level"] != "warn" || e["path"] != c.path || !reflect.DeepEqual(fields, c.fields) {
				t.Errorf("logged %v, want level warn, path %s and fields %v", e, c.path, c.fields)
			}
		})
	}
	// A body with only known fields logs nothing.
	before := len(logs.entries(t, unknownFieldsMsg))
	if code, _, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/config", "application/json", `{"maxSegmentsToMove":8}`); code != 200 {
		t.Fatal("POST known fields")
	}
	if got := len(logs.entries(t, unknownFieldsMsg)); got != before {
		t.Errorf("known fields logged as unknown: %d lines", got-before)
	}
}

// Shutting down a task the overlord never had is Druid's documented 404
// with an error body; nothing is stored.
func TestTaskShutdownOfUnknownTaskIs404(t *testing.T) {
	ts, n, _ := configControl(t)
	for _, id := range []string{"nope", "no%20such%20task"} {
		t.Run(id, func(t *testing.T) {
			before := readStoredConfig(t, ts.URL, n)
			code, body, h := call(t, "POST", ts.URL+"/svc/indexer/v1/task/"+id+"/shutdown", "", "")
			var e ErrorBody
			if code != 404 || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, "Cannot find task") ||
				!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("shutdown of unknown task %s: %d %s, want 404 {\"error\":\"Cannot find task ...\"}", id, code, body)
			}
			if code, _, _ := call(t, "GET", ts.URL+"/svc/indexer/v1/task/"+id, "", ""); code != 404 {
				t.Errorf("GET task after shutdown: %d, want 404", code)
			}
			if after := readStoredConfig(t, ts.URL, n); !reflect.DeepEqual(before, after) {
				t.Errorf("state changed:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// supervisorTuning is the seeded supervisor's spec with more tuningConfig fields.
func supervisorTuning(fields string) string {
	return strings.Replace(kafkaSpec("wiki", "t", 2, true), `"tuningConfig":{"type":"kafka"}`, `"tuningConfig":{"type":"kafka",`+fields+`}`, 1)
}

// The checks beyond Druid's look at requests only: values stored before they
// existed (here proposed without the HTTP layer, as an older version wrote
// them) are still read, and do not block changing other fields.
func TestValuesStoredBeforeTheChecksStayUsable(t *testing.T) {
	ts, n, _ := configControl(t)
	t.Run("coordinator", func(t *testing.T) {
		old := int32(-5)
		if _, err := n.Propose(commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: &old}}, commands.Audit{}, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if code, body, _ := call(t, "POST", ts.URL+"/svc/coordinator/v1/config", "application/json", `{"replicantLifetime":5}`); code != 200 {
			t.Fatalf("POST another field: %d %s", code, body)
		}
		if _, body, _ := call(t, "GET", ts.URL+"/svc/coordinator/v1/config", "", ""); !strings.Contains(body, `"maxSegmentsToMove":-5,`) || !strings.Contains(body, `"replicantLifetime":5,`) {
			t.Fatalf("config %s", body)
		}
	})
	t.Run("supervisor", func(t *testing.T) {
		spec, err := streaming.ParseSupervisorSpec([]byte(kafkaSpec("wiki", "t", 1, true)))
		if err != nil {
			t.Fatal(err)
		}
		stored := bytes.ReplaceAll(spec.Normalized, []byte(`"chatRetries":8`), []byte(`"chatRetries":-1`))
		if bytes.Equal(stored, spec.Normalized) {
			t.Fatalf("no chatRetries in %s", spec.Normalized)
		}
		if _, err := streaming.ParseStoredSupervisorSpec(stored); err != nil {
			t.Fatalf("a stored spec is refused: %v", err)
		}
		if _, err := streaming.ParseSupervisorSpec(stored); err == nil || !strings.Contains(err.Error(), "chatRetries") {
			t.Fatalf("submitted again: %v", err)
		}
	})
}
