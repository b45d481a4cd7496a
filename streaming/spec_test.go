package streaming

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const specBody = `{"type":"kafka","spec":{
 "dataSchema":{"dataSource":"wiki","timestampSpec":{"column":"ts","format":"iso"},
   "dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[{"type":"count","name":"count"}],
   "granularitySpec":{"segmentGranularity":"day","queryGranularity":"none","rollup":false}},
 "ioConfig":{"topic":"t","consumerProperties":{"bootstrap.servers":"h:9092"},"inputFormat":{"type":"json"},"taskDuration":"PT10M"},
 "tuningConfig":{"type":"kafka","maxRowsPerSegment":1000}}}`

func TestParseSupervisorSpecDefaults(t *testing.T) {
	s, err := ParseSupervisorSpec([]byte(specBody))
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "wiki" || s.DataSource != "wiki" || s.Topic != "t" || s.Bootstrap != "h:9092" || s.TaskCount != 1 || s.Replicas != 1 ||
		s.TaskDuration != 10*time.Minute || s.StartDelay != 5*time.Second || s.Period != 30*time.Second ||
		s.CompletionTimeout != 30*time.Minute || s.UseEarliestOffset || s.Suspended {
		t.Fatalf("parsed %+v", s)
	}
	var n map[string]any
	if err := json.Unmarshal(s.Normalized, &n); err != nil {
		t.Fatal(err)
	}
	io := n["ioConfig"].(map[string]any)
	if io["taskDuration"] != "PT600S" || io["completionTimeout"] != "PT1800S" || io["stream"] != "t" || io["replicas"] != 1.0 {
		t.Fatalf("ioConfig %v", io)
	}
	tc := n["tuningConfig"].(map[string]any)
	if tc["maxRowsPerSegment"] != 1000.0 || tc["maxRowsInMemory"] != 150000.0 || tc["maxParseExceptions"] != 2147483647.0 || tc["offsetFetchPeriod"] != "PT30S" {
		t.Fatalf("tuningConfig %v", tc)
	}
	if n["id"] != "wiki" || n["suspended"] != false || n["spec"].(map[string]any)["ioConfig"] == nil {
		t.Fatalf("normalized %s", s.Normalized)
	}
	// Normalized parses back to itself; the legacy flattened form is accepted.
	again, err := ParseSupervisorSpec(s.Normalized)
	if err != nil || !bytes.Equal(again.Normalized, s.Normalized) {
		t.Fatalf("reparse: %v\n%s\n%s", err, again.Normalized, s.Normalized)
	}
	flat := `{"type":"kafka","dataSchema":` + string(s.DataSchema) + `,"ioConfig":{"stream":"t","consumerProperties":{"bootstrap.servers":"h:9092"},"inputFormat":{"type":"json"}}}`
	if f, err := ParseSupervisorSpec([]byte(flat)); err != nil || f.Topic != "t" || f.TaskDuration != time.Hour {
		t.Fatalf("flattened: %v %+v", err, f)
	}
	// A zero start delay is allowed: the first run starts at once.
	if z, err := ParseSupervisorSpec([]byte(strings.Replace(specBody, `"taskDuration":"PT10M"`, `"startDelay":"PT0S"`, 1))); err != nil || z.StartDelay != 0 {
		t.Fatalf("startDelay PT0S: %v", err)
	}
	sus := s.WithSuspended(true)
	if p, err := ParseSupervisorSpec(sus); err != nil || !p.Suspended || !bytes.Contains(sus, []byte(`"suspended":true`)) {
		t.Fatalf("suspended: %v %s", err, sus)
	}
}

func TestParseSupervisorSpecErrors(t *testing.T) {
	cases := map[string]string{
		`{"type":"kinesis","spec":{}}`: "unsupported type",
		`{"spec":{}}`:                  "missing type",
		`[]`:                           "invalid supervisor spec",
		strings.Replace(specBody, `"topic":"t",`, ``, 1):                                  "topic is required",
		strings.Replace(specBody, `"bootstrap.servers":"h:9092"`, `"x":"y"`, 1):           "bootstrap.servers",
		strings.Replace(specBody, `"taskDuration":"PT10M"`, `"taskDuration":"P1M"`, 1):    "taskDuration",
		strings.Replace(specBody, `"taskDuration":"PT10M"`, `"replicas":0`, 1):            "at least 1",
		strings.Replace(specBody, `"taskDuration":"PT10M"`, `"taskCount":0`, 1):           "taskCount",
		strings.Replace(specBody, `{"type":"json"}`, `{"type":"nope"}`, 1):                "inputFormat",
		strings.Replace(specBody, `"dataSource":"wiki",`, ``, 1):                          "dataSource",
		strings.Replace(specBody, `"maxRowsPerSegment":1000`, `"maxRowsPerSegment":0`, 1): "maxRowsPerSegment",
		strings.Replace(specBody, `"type":"count"`, `"type":"bogus"`, 1):                  "aggregator",
		strings.Replace(specBody, `"taskDuration":"PT10M"`, `"taskDuration":"PT0S"`, 1):   "taskDuration",
		strings.Replace(specBody, `"taskDuration":"PT10M"`, `"period":"PT0S"`, 1):         "period",
		strings.Replace(specBody, `"taskDuration":"PT10M"`, `"startDelay":"-PT1S"`, 1):    "startDelay",
	}
	for body, want := range cases {
		t.Run(want, func(t *testing.T) {
			if _, err := ParseSupervisorSpec([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: got %v, want %q", body, err, want)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "PT3600S", 1500 * time.Millisecond: "PT1.5S", 300 * time.Millisecond: "PT0.3S"} {
		t.Run(d.String(), func(t *testing.T) {
			if got := FormatDuration(d); got != want {
				t.Errorf("%s, want %s", got, want)
			}
			if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
				t.Errorf("round trip %v %v", back, err)
			}
		})
	}
}

func FuzzParseSupervisorSpec(f *testing.F) {
	f.Add([]byte(specBody))
	f.Add([]byte(`{"type":"kafka","dataSchema":{},"ioConfig":null}`))
	f.Add([]byte(`{"type":"kafka","spec":{"ioConfig":{"taskDuration":"PT-1S"}}}`))
	f.Add([]byte(`null`))
	f.Add(withIO(`"lateMessageRejectionStartDateTime":"2016-01-01T11:00Z","earlyMessageRejectionPeriod":"PT1H"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSupervisorSpec(b)
		if err != nil {
			return
		}
		again, err := ParseSupervisorSpec(s.Normalized)
		if err != nil || !bytes.Equal(again.Normalized, s.Normalized) {
			t.Fatalf("normalized form does not parse back: %v", err)
		}
		_ = s.WithSuspended(!s.Suspended)
	})
}

func TestOffsets(t *testing.T) {
	o, err := ParseOffsets(`{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"10":5,"2":7}}}`)
	if err != nil || o.Stream != "t" || o.Partitions[10] != 5 || o.Partitions[2] != 7 {
		t.Fatalf("%+v %v", o, err)
	}
	if got := string(o.MetadataJSON()); got != `{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"2":7,"10":5}}}` {
		t.Fatalf("MetadataJSON %s", got)
	}
	for _, empty := range []string{"", "null"} {
		if o, err := ParseOffsets(empty); err != nil || o.Stream != "" || len(o.Partitions) != 0 {
			t.Fatalf("%q: %+v %v", empty, o, err)
		}
	}
	for _, bad := range []string{`{"type":"kinesis","partitions":{}}`, `{"type":"kafka"}`, `{"type":"kafka","partitions":{"stream":"t","partitionOffsetMap":{"0":1.5}}}`, `{`} {
		if _, err := ParseOffsets(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	seq, err := parseSequenceNumbers(json.RawMessage(`{"type":"start","stream":"t","partitionSequenceNumberMap":{"0":5,"1":7}}`))
	if err != nil || seq.Partitions[1] != 7 || seq.Stream != "t" {
		t.Fatalf("sequence numbers: %+v %v", seq, err)
	}
	if _, err := parseSequenceNumbers(json.RawMessage(`1},"x":{`)); err == nil {
		t.Fatal("a broken startSequenceNumbers was accepted")
	}
}
