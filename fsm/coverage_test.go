package fsm

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"strata/auth"
	"strata/commands"
	"strata/segmeta"
)

// step is one entry of fullLog with what applying it must give, so that the
// log stays meaningful: a command silently refused would leave its table empty.
type step struct {
	cmd    commands.Command // nil: a Raft no-op entry
	reject bool             // the FSM must refuse it (rejected entries are part of the log too)
}

// fullLog is a log holding at least one of every registered command type, in
// the order a cluster issues them: configs and rules, workers, a streaming
// task that locks, publishes with Kafka offsets and completes, a batch
// publish that is marked unused, killed and partly swept, supervisors, and a
// task left running with its lock, so that every snapshot table has records.
func fullLog(t *testing.T) []*raft.Log {
	t.Helper()
	wl := commands.StringList{"logs"}
	wikiSegs := []*segmeta.DataSegment{seg("wiki", 0, "v1", 0, 0), seg("wiki", 1, "v1", 0, 0)}
	taskPublish := kafkaPublish(wikiSegs, kmeta("t", 0, 0), kmeta("t", 0, 42, 1, 7))
	taskPublish.TaskID = "index_kafka_wiki"
	logsSegs := []*segmeta.DataSegment{seg("logs", 0, "v1", 0, 1), seg("logs", 1, "v1", 0, 1), seg("logs", 2, "v1", 0, 1)}
	steps := []step{
		{cmd: commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxSegmentsToMove: i32(7), KillDataSourceWhitelist: &wl}}},
		{cmd: commands.SetWorkerConfig{Config: commands.WorkerBehaviorConfig{Type: "default", SelectStrategy: &commands.SelectStrategy{Type: "fillCapacity"}, AutoScaler: json.RawMessage("null")}}},
		{cmd: commands.SetCoordinatorConfig{Patch: commands.CoordinatorConfigPatch{MaxNonPrimaryReplicantsToLoad: i32(-1)}}, reject: true},
		{cmd: commands.SetRules{DataSource: "wiki", Rules: json.RawMessage(`[{"type":"loadForever","tieredReplicants":{"_default_tier":2}}]`)}},
		{cmd: commands.SetRules{DataSource: "_default", Rules: json.RawMessage(`[{"type":"loadForever","tieredReplicants":{"_default_tier":1}}]`)}},
		{cmd: commands.RegisterWorker{Host: "mm1:8091", Capacity: 2, Category: "hot", Version: "1", IP: "10.0.0.5"}},
		{cmd: commands.RegisterWorker{Host: "mm2:8091", Capacity: 1}},
		{cmd: commands.JoinServer{ID: "mm1", Roles: []string{"middleManager"}, URL: "http://mm1:8091", Capacity: 2, Version: "1", StartTimeMs: 5}},
		{cmd: commands.JoinServer{ID: "h1", Roles: []string{"historical"}, URL: "http://h1:8083", Tier: "hot", MaxSize: 1 << 30}},
		{cmd: commands.JoinServer{ID: "b1", Roles: []string{"broker"}, URL: "http://b1:8082"}},
		{cmd: commands.LeaveServer{ID: "b1", Reason: "lease expired"}},
		{cmd: commands.LeaveServer{ID: "b1"}, reject: true}, // not a member any more
		{cmd: commands.JoinServer{ID: "", Roles: []string{"broker"}, URL: "http://b2:8082"}, reject: true},
		{cmd: commands.SetWorkerEnabled{Host: "mm2:8091", Enabled: false}},
		{cmd: commands.SetSupervisor{ID: "wiki", DataSource: "wiki", Spec: supSpec("wiki", false)}},
		{cmd: commands.SetSupervisor{ID: "metrics", DataSource: "metrics", Spec: supSpec("metrics", true), Suspended: true}},
		// Index 9 is wiki's spec version, 10 metrics'.
		{cmd: commands.SetSupervisorState{ID: "wiki", SpecIndex: 9, State: "PENDING", DetailedState: "PENDING"}},
		{cmd: commands.SetSupervisorState{ID: "wiki", SpecIndex: 9, State: "RUNNING", DetailedState: "CONNECTING_TO_STREAM"}},
		{cmd: commands.SetSupervisorState{ID: "wiki", SpecIndex: 9, State: "RUNNING", DetailedState: "CONNECTING_TO_STREAM"}}, // no change: recorded as nothing
		{cmd: commands.SetSupervisorState{ID: "metrics", SpecIndex: 10, State: "SUSPENDED", DetailedState: "SUSPENDED"}},
		{cmd: commands.SetSupervisorState{ID: "nope", SpecIndex: 9, State: "RUNNING", DetailedState: "RUNNING"}, reject: true},
		{cmd: submitCmd("index_kafka_wiki", "wiki")},
		{cmd: commands.AssignTask{ID: "index_kafka_wiki", Worker: "mm1:8091"}},
		{cmd: commands.TaskStatusUpdate{ID: "index_kafka_wiki", Worker: "mm1:8091", Status: commands.TaskRunning, Location: &commands.TaskLocation{Host: "mm1", Port: 8100, TLSPort: -1}}},
		{cmd: commands.AcquireLock{TaskID: "index_kafka_wiki", Interval: "2024-01-01/2024-01-03"}},
		{cmd: taskPublish},
		{cmd: taskPublish, reject: true}, // its start offsets are stale now
		{cmd: commands.ReleaseLock{TaskID: "index_kafka_wiki", Interval: "2024-01-01/2024-01-03"}},
		{cmd: commands.TaskStatusUpdate{ID: "index_kafka_wiki", Worker: "mm1:8091", Status: commands.TaskSuccess, Report: json.RawMessage(`{"rows":2}`)}},
		{}, // a leader's no-op
		{cmd: publishCmd(logsSegs, "", "")},
		{cmd: commands.MarkSegments{DataSource: "logs", Used: false, Interval: "2024-01-01/2024-01-03"}},
		{cmd: commands.MarkSegments{DataSource: "logs", Used: false, IDs: []string{"nope"}, FailOnUnknown: true}, reject: true},
		{cmd: submitCmd("kill_logs", "logs", "2024-01-01/2024-01-03")},
		{cmd: commands.KillSegments{DataSource: "logs", Interval: "2024-01-01/2024-01-03", TaskID: "kill_logs"}},
		{cmd: commands.AckFileDeletions{LoadSpecs: []string{string(logsSegs[0].LoadSpec)}}},
		{cmd: commands.ShutdownTask{ID: "kill_logs", Reason: commands.ShutdownByUser}},
		{cmd: commands.ResetSupervisorOffsets{DataSource: "wiki", Offsets: kafkaOffsets("t", `{"0":40,"1":7}`)}},
		{cmd: commands.TerminateSupervisor{ID: "metrics"}},
		{cmd: commands.TerminateSupervisor{ID: "metrics"}, reject: true},
		{cmd: commands.SetSupervisorState{ID: "metrics", SpecIndex: 10, State: "STOPPING", DetailedState: "STOPPING"}}, // after its terminate
		{cmd: submitCmd("index_kafka_wiki_2", "wiki")},
		{cmd: commands.AssignTask{ID: "index_kafka_wiki_2", Worker: "mm2:8091"}, reject: true}, // disabled worker
		{cmd: commands.AssignTask{ID: "index_kafka_wiki_2", Worker: "mm1:8091"}},
		{cmd: commands.AcquireLock{TaskID: "index_kafka_wiki_2", Interval: "2024-01-03/2024-01-04"}},
		{cmd: commands.SubmitTask{ID: "bad/id"}, reject: true},
		// Security: the bootstrap, an analyst with a read-only role, a
		// password change, and what the FSM refuses.
		{cmd: commands.BootstrapSecurity{Admin: creds(1), InternalUser: "svc_system", Internal: creds(2)}},
		{cmd: commands.RecordAuthFailures{StartMs: 1000, EndMs: 61000, Missing: 2, Wrong: 3, ByAddress: map[string]int{"10.0.0.9": 4, "10.0.0.7": 1}}},
		{cmd: commands.RecordAuthFailures{StartMs: 61000, EndMs: 1000, Wrong: 1}, reject: true},
		{cmd: commands.CreateUser{Name: "analyst"}},
		{cmd: commands.CreateUser{Name: "analyst"}, reject: true},
		{cmd: commands.SetCredentials{Name: "analyst", Credentials: *creds(3)}},
		{cmd: commands.SetCredentials{Name: "nobody", Credentials: *creds(3)}, reject: true},
		{cmd: commands.SetCredentials{Name: "analyst", Credentials: commands.HashedCredentials{Salt: []byte("short"), Iterations: 1}}, reject: true},
		{cmd: commands.CreateAuthzUser{Name: "analyst"}},
		{cmd: commands.CreateRole{Name: "reader"}},
		{cmd: commands.SetRolePermissions{Role: "reader", Permissions: []auth.Permission{{Resource: auth.ResourcePattern{Type: auth.Datasource, Name: "wiki.*"}, Action: auth.Read}}}},
		{cmd: commands.SetRolePermissions{Role: "reader", Permissions: []auth.Permission{{Resource: auth.ResourcePattern{Type: auth.Datasource, Name: "("}, Action: auth.Read}}}, reject: true},
		{cmd: commands.AssignRole{User: "analyst", Role: "reader"}},
		{cmd: commands.AssignRole{User: "analyst", Role: "reader"}, reject: true},
		{cmd: commands.CreateRole{Name: "temp"}},
		{cmd: commands.AssignRole{User: "analyst", Role: "temp"}},
		{cmd: commands.UnassignRole{User: "analyst", Role: "temp"}},
		{cmd: commands.DeleteRole{Name: "temp"}},
		{cmd: commands.CreateUser{Name: "leaver"}},
		{cmd: commands.DeleteUser{Name: "leaver"}},
		{cmd: commands.CreateAuthzUser{Name: "leaver"}},
		{cmd: commands.DeleteAuthzUser{Name: "leaver"}},
		{cmd: commands.DeleteAuthzUser{Name: "leaver"}, reject: true},
		// Lookups: refused before the configuration is initialised, then
		// created, replaced by a higher version, deleted.
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("__default", "country", `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"US":"United States","FR":"France"}}}`)}, reject: true},
		{cmd: commands.UpdateLookups{}},
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("__default", "country", `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"US":"United States","FR":"France"}}}`)}},
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("__default", "country", `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"US":"USA"}}}`)}, reject: true}, // same version
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("hot", "site", `{"version":"v1","lookupExtractorFactory":{"type":"cachedNamespace"}}`)}, reject: true},
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("__default", "country", `{"version":"v2","lookupExtractorFactory":{"type":"map","map":{"US":"USA","DE":"Germany"},"isOneToOne":true}}`)}},
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("hot", "site", `{"version":"a","lookupExtractorFactory":{"type":"map","map":{"1":"one"}}}`)}},
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("hot", "gone", `{"version":"a","lookupExtractorFactory":{"type":"map","map":{}}}`)}},
		{cmd: commands.DeleteLookup{Tier: "hot", Lookup: "gone"}},
		{cmd: commands.DeleteLookup{Tier: "hot", Lookup: "gone"}, reject: true},
		{cmd: commands.UpdateLookups{Tiers: lookupTiers("cold", "x", `{"version":"a","lookupExtractorFactory":{"type":"map","map":{}}}`)}},
		{cmd: commands.DeleteLookupTier{Tier: "cold"}},
		{cmd: commands.DeleteLookupTier{Tier: "cold"}, reject: true},
	}
	out := make([]*raft.Log, 0, len(steps))
	probe := New(nil) // checks each step's outcome as the log is built
	for i, s := range steps {
		ix := uint64(i + 1)
		l := &raft.Log{Index: ix, Term: 1, Type: raft.LogNoop}
		if s.cmd != nil {
			// Times are not monotonic on purpose: the FSM keeps the largest.
			l = entry(t, ix, int64(ix)*1000+int64(i%3)*700, s.cmd, "ops")
		}
		res, _ := probe.Apply(l).(Result)
		if s.cmd != nil && (res.Err != nil) != s.reject {
			t.Fatalf("fullLog step %d (%s): error %v, want rejected=%v", i, s.cmd.CommandType(), res.Err, s.reject)
		}
		out = append(out, l)
	}
	return out
}

// lookupTiers is an UpdateLookups body holding one lookup.
func lookupTiers(tier, name, container string) map[string]map[string]json.RawMessage {
	return map[string]map[string]json.RawMessage{tier: {name: json.RawMessage(container)}}
}

// The log of TestDeterminism really holds every registered command type.
func TestFullLogCoversEveryCommandType(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range fullLog(t) {
		if l.Type != raft.LogCommand {
			continue
		}
		env, _, err := commands.Decode(l.Data)
		if err != nil {
			t.Fatal(err)
		}
		seen[env.Type] = true
	}
	for _, tag := range commands.Types() {
		if !seen[tag] {
			t.Errorf("fullLog has no %s command: add one in a meaningful place", tag)
		}
	}
}

// Every registered command tag has an apply function, and every apply
// function belongs to a registered tag.
func TestEveryCommandHasAnApplyFunction(t *testing.T) {
	registered := map[string]bool{}
	for _, tag := range commands.Types() {
		registered[tag] = true
		if appliers[tag] == nil {
			t.Errorf("command %s is registered but has no apply function (fsm: on(apply...))", tag)
		}
	}
	for tag := range appliers {
		if !registered[tag] {
			t.Errorf("apply function for %s, which package commands does not register", tag)
		}
	}
}

// stateTables names the snapshot tables that hold each field of State. A new
// field must be added here, with a table in `tables`, or this test fails: state
// missing from snapshots would be lost by every node restored from one.
var stateTables = map[string][]string{
	"coordinatorConfig": {"coordinator_config"},
	"workerConfig":      {"worker_config"},
	"audit":             {"audit"},
	"segments":          {"segments", "datasource_metadata", "pending_file_deletions"},
	"tasks":             {"tasks", "task_locks", "task_lock_clock", "workers"},
	"supervisors":       {"supervisors"},
	"supervisorStates":  {"supervisor_states"},
	"rules":             {"rules"},
	"servers":           {"servers"},
	"security":          {"security_users", "security_roles", "security_authz_users", "security_version"},
	"lookups":           {"lookups"},
}

// Fields of State that the snapshot header carries instead of a table.
var stateHeaderFields = map[string]bool{"index": true, "lastTimeMs": true}

func TestEveryStateTableHasASnapshotTable(t *testing.T) {
	inTables := map[string]bool{}
	for _, tb := range tables {
		if inTables[tb.name] {
			t.Errorf("snapshot table %s is registered twice", tb.name)
		}
		inTables[tb.name] = true
	}
	claimed := map[string]string{}
	st := reflect.TypeFor[State]()
	for i := range st.NumField() {
		f := st.Field(i).Name
		if stateHeaderFields[f] {
			continue
		}
		names, ok := stateTables[f]
		if !ok {
			t.Errorf("State.%s has no snapshot table listed in stateTables", f)
		}
		for _, n := range names {
			if !inTables[n] {
				t.Errorf("State.%s: snapshot table %s is not in fsm's tables", f, n)
			}
			claimed[n] = f
		}
	}
	for n := range inTables {
		if claimed[n] == "" {
			t.Errorf("snapshot table %s belongs to no State field in stateTables", n)
		}
	}
	// The full log leaves records in every table, so TestDeterminism's byte
	// comparisons exercise each table's encoding.
	f := New(nil)
	f.ApplyBatch(fullLog(t))
	for _, p := range f.state.freeze().parts {
		if p.records == 0 {
			t.Errorf("snapshot table %s is empty after fullLog: extend the log", p.name)
		}
	}
}

// creds is fixed, valid-looking credentials (the FSM stores what it is given;
// hashing happens on the leader before proposing).
func creds(seed byte) *commands.HashedCredentials {
	salt, hash := make([]byte, 32), make([]byte, 64)
	for i := range salt {
		salt[i] = seed + byte(i)
	}
	for i := range hash {
		hash[i] = seed * byte(i)
	}
	return &commands.HashedCredentials{Salt: salt, Hash: hash, Iterations: 10000}
}
