package commands

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type futureCmd struct{ X int }

func (futureCmd) CommandType() string { return "test.future" }

func TestEncodeDecodeRoundTrip(t *testing.T) {
	five := int32(5)
	cmd := SetCoordinatorConfig{Patch: CoordinatorConfigPatch{MaxSegmentsToMove: &five, DecommissioningNodes: &StringList{"h:1"}}}
	b, err := Encode(cmd, 1700000000123, Audit{Author: "a", Comment: "c", IP: "1.2.3.4"})
	if err != nil {
		t.Fatal(err)
	}
	env, got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if env.Version != EnvelopeVersion || env.TimeMs != 1700000000123 || env.Audit.Author != "a" || env.Audit.IP != "1.2.3.4" {
		t.Fatalf("envelope = %+v", env)
	}
	c, ok := got.(*SetCoordinatorConfig)
	if !ok || *c.Patch.MaxSegmentsToMove != 5 || (*c.Patch.DecommissioningNodes)[0] != "h:1" || c.Patch.MergeBytesLimit != nil {
		t.Fatalf("decoded %#v", got)
	}
}

func TestDecodeUnknownTag(t *testing.T) {
	raw, _ := json.Marshal(Envelope{Version: 1, Type: "nope.never", Payload: json.RawMessage(`{}`)})
	if _, _, err := Decode(raw); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("unknown tag: err = %v, want ErrUnknownCommand", err)
	}
	raw, _ = json.Marshal(Envelope{Version: 1, Type: "nope.never", Ignorable: true, Payload: json.RawMessage(`{}`)})
	env, cmd, err := Decode(raw)
	if err != nil || cmd != nil || env.Type != "nope.never" {
		t.Fatalf("ignorable unknown tag: %v %v %v", env, cmd, err)
	}
	if _, err := Encode(futureCmd{}, 1, Audit{}); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("encoding an unregistered command: %v", err)
	}
}

func TestDecodeBadEnvelope(t *testing.T) {
	for _, in := range []string{``, `{`, `[]`, `{"v":0,"type":"worker.config.set"}`, `{"v":99,"type":"worker.config.set"}`,
		`{"v":1,"type":"coordinator.config.set","payload":{"patch":{"maxSegmentsToMove":"x"}}}`} {
		if _, _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) succeeded", in)
		}
	}
}

func TestRegisteredTypes(t *testing.T) {
	got := strings.Join(Types(), ",")
	for _, want := range []string{"coordinator.config.set", "worker.config.set"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s not registered (have %s)", want, got)
		}
	}
}

func TestCoordinatorPatchParse(t *testing.T) {
	p, unknown, err := ParseCoordinatorConfigPatch([]byte(`{"killDataSourceWhitelist":"a, b ,,c","decommissioningNodes":["x:1"," "],"unknownField":1,"debugDimensions":{"k":"v"},"another":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(unknown, ",") != "another,unknownField" {
		t.Errorf("unknown fields %v", unknown)
	}
	c, err := p.Apply(DefaultCoordinatorConfig())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.KillDataSourceWhitelist, "|") != "a|b|c" || len(c.DecommissioningNodes) != 1 || c.DebugDimensions["k"] != "v" {
		t.Fatalf("merged = %+v", c)
	}
	bad := map[string]string{
		`[]`:                                "JSON object",
		`{"maxSegmentsToMove":"ten"}`:       "maxSegmentsToMove",
		`{"maxSegmentsToMove":99999999999}`: "maxSegmentsToMove",
		`{"pauseCoordination":"yes"}`:       "pauseCoordination",
		`{"maxSegmentsToMove":true}`:        "maxSegmentsToMove",
		`{"pauseCoordination":0.5}`:         "pauseCoordination",
		`{"debugDimensions":[1]}`:           "debugDimensions",
		`{"killDataSourceWhitelist":[1,2]}`: "killDataSourceWhitelist",
		// Druid reads these as the empty set or stores them; Strata refuses them.
		`{"decommissioningNodes":{"a":1}}`:       "decommissioningNodes",
		`{"decommissioningNodes":5}`:             "decommissioningNodes",
		`{"killPendingSegmentsSkipList":false}`:  "killPendingSegmentsSkipList",
		`{"maxSegmentsToMove":-3}`:               "maxSegmentsToMove must be greater than or equal to 0, got -3",
		`{"millisToWaitBeforeDeleting":-5}`:      "millisToWaitBeforeDeleting",
		`{"mergeBytesLimit":"-1"}`:               "mergeBytesLimit",
		`{"mergeSegmentsLimit":-1}`:              "mergeSegmentsLimit",
		`{"replicantLifetime":-1}`:               "replicantLifetime",
		`{"replicationThrottleLimit":-1}`:        "replicationThrottleLimit",
		`{"maxSegmentsInNodeLoadingQueue":-1.5}`: "maxSegmentsInNodeLoadingQueue",
		`{"maxSegmentsToMove":1`:                 "malformed",
	}
	for in, want := range bad {
		_, _, err := ParseCoordinatorConfigPatch([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parse %s: err = %v, want mention of %q", in, err, want)
		}
	}
}

// Druid reads these bodies through Jackson, which converts scalars of the
// wrong JSON type and reads the list fields as sets.
func TestCoordinatorPatchLenient(t *testing.T) {
	cases := []struct {
		in    string
		check func(c CoordinatorDynamicConfig) bool
	}{
		{`{"maxSegmentsToMove":"12"}`, func(c CoordinatorDynamicConfig) bool { return c.MaxSegmentsToMove == 12 }},
		{`{"maxSegmentsToMove":7.9}`, func(c CoordinatorDynamicConfig) bool { return c.MaxSegmentsToMove == 7 }},
		{`{"maxSegmentsToMove":1e2}`, func(c CoordinatorDynamicConfig) bool { return c.MaxSegmentsToMove == 100 }},
		{`{"maxSegmentsToMove":-0.5}`, func(c CoordinatorDynamicConfig) bool { return c.MaxSegmentsToMove == 0 }},
		{`{"maxSegmentsToMove":0}`, func(c CoordinatorDynamicConfig) bool { return c.MaxSegmentsToMove == 0 }},
		{`{"mergeBytesLimit":"1000"}`, func(c CoordinatorDynamicConfig) bool { return c.MergeBytesLimit == 1000 }},
		{`{"percentOfSegmentsToConsiderPerMove":"50"}`, func(c CoordinatorDynamicConfig) bool { return c.PercentOfSegmentsToConsiderPerMove == 50 }},
		{`{"pauseCoordination":"true"}`, func(c CoordinatorDynamicConfig) bool { return c.PauseCoordination }},
		{`{"pauseCoordination":1}`, func(c CoordinatorDynamicConfig) bool { return c.PauseCoordination }},
		{`{"smartSegmentLoading":0}`, func(c CoordinatorDynamicConfig) bool { return !c.SmartSegmentLoading }},
		{`{"killDataSourceWhitelist":["a","a","b"," b "]}`, func(c CoordinatorDynamicConfig) bool {
			return strings.Join(c.KillDataSourceWhitelist, "|") == "a|b"
		}},
		{`{"decommissioningNodes":"h:1, h:1,h:2"}`, func(c CoordinatorDynamicConfig) bool {
			return strings.Join(c.DecommissioningNodes, "|") == "h:1|h:2"
		}},
		{`{"decommissioningNodes":null}`, func(c CoordinatorDynamicConfig) bool { return strings.Join(c.DecommissioningNodes, "|") == "old:1" }},
		{`{"killPendingSegmentsSkipList":""}`, func(c CoordinatorDynamicConfig) bool { return len(c.KillPendingSegmentsSkipList) == 0 }},
		{`{"killDataSourceWhitelist":[null]}`, func(c CoordinatorDynamicConfig) bool { return len(c.KillDataSourceWhitelist) == 0 }},
	}
	cur := DefaultCoordinatorConfig()
	cur.DecommissioningNodes = StringList{"old:1"}
	cur.KillPendingSegmentsSkipList = StringList{"old"}
	cur.KillDataSourceWhitelist = StringList{"old"}
	for _, tc := range cases {
		p, _, err := ParseCoordinatorConfigPatch([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		c, err := p.Apply(cur)
		if err != nil || !tc.check(c) {
			t.Errorf("%s: got %+v, %v", tc.in, c, err)
		}
	}
}

func TestCoordinatorBounds(t *testing.T) {
	cases := map[string]string{
		`{"decommissioningMaxPercentOfMaxSegmentsToMove":101}`: "decommissioningMaxPercentOfMaxSegmentsToMove should be in range [0, 100]",
		`{"decommissioningMaxPercentOfMaxSegmentsToMove":-1}`:  "decommissioningMaxPercentOfMaxSegmentsToMove should be in range [0, 100]",
		`{"percentOfSegmentsToConsiderPerMove":0}`:             "percentOfSegmentsToConsiderPerMove should be between 1 and 100!",
		`{"percentOfSegmentsToConsiderPerMove":100.5}`:         "percentOfSegmentsToConsiderPerMove should be between 1 and 100!",
		`{"maxNonPrimaryReplicantsToLoad":-3}`:                 "maxNonPrimaryReplicantsToLoad must be greater than or equal to 0.",
	}
	for in, want := range cases {
		p, _, err := ParseCoordinatorConfigPatch([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if _, err := p.Apply(DefaultCoordinatorConfig()); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
	p, _, _ := ParseCoordinatorConfigPatch([]byte(`{"balancerComputeThreads":0,"decommissioningMaxPercentOfMaxSegmentsToMove":0}`))
	c, err := p.Apply(DefaultCoordinatorConfig())
	if err != nil || c.BalancerComputeThreads != 1 || c.DecommissioningMaxPercentOfMaxSegmentsToMove != 0 {
		t.Fatalf("edge values: %+v %v", c, err)
	}
}

func TestWorkerConfigParse(t *testing.T) {
	c, _, err := ParseWorkerBehaviorConfig([]byte(`{"selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":["h:8091"]},"strong":true}},"autoScaler":null}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	want := `{"type":"default","selectStrategy":{"type":"fillCapacity","affinityConfig":{"affinity":{"wiki":["h:8091"]},"strong":true}},"autoScaler":null}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	for _, in := range []string{
		`{"type":"weird"}`,
		`{"selectStrategy":{"type":"random"}}`,
		`{"selectStrategy":"fillCapacity"}`,
		`{"autoScaler":{"type":"ec2","minNumWorkers":3,"maxNumWorkers":1}}`,
		`{"autoScaler":{"type":"mars"}}`,
		`{"selectStrategy":{"type":"javascript","function":"function(){}"}}`,
		`"x"`,
	} {
		if _, _, err := ParseWorkerBehaviorConfig([]byte(in)); err == nil {
			t.Errorf("ParseWorkerBehaviorConfig(%s) accepted", in)
		}
	}
	if _, _, err := ParseWorkerBehaviorConfig([]byte(`{"autoScaler":{"type":"ec2","minNumWorkers":1,"maxNumWorkers":3,"envConfig":{}}}`)); err != nil {
		t.Errorf("ec2 autoscaler rejected: %v", err)
	}
	// Without a type Druid falls back to equalDistribution and the no-op autoscaler.
	c, _, err = ParseWorkerBehaviorConfig([]byte(`{"selectStrategy":{"affinityConfig":{"affinity":{"wiki":["h:8091"]}}},"autoScaler":{"minNumWorkers":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(c)
	want = `{"type":"default","selectStrategy":{"type":"equalDistribution","affinityConfig":{"affinity":{"wiki":["h:8091"]},"strong":false}},"autoScaler":null}`
	if string(b) != want {
		t.Fatalf("untyped: got %s\nwant %s", b, want)
	}
}

func FuzzParseCoordinatorConfigPatch(f *testing.F) {
	for _, s := range []string{`{}`, `{"maxSegmentsToMove":5}`, `{"killDataSourceWhitelist":"a,b"}`, `{"debugDimensions":null}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, _, err := ParseCoordinatorConfigPatch(b)
		if err != nil {
			return
		}
		p.Apply(DefaultCoordinatorConfig())
	})
}

func FuzzDecode(f *testing.F) {
	b, _ := Encode(SetWorkerConfig{Config: WorkerBehaviorConfig{Type: "default"}}, 5, Audit{})
	f.Add(b)
	f.Add([]byte(`{"v":1,"type":"x","ignorable":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		Decode(b)
	})
}
