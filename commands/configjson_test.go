package commands

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func checkConfigJSON(t *testing.T, c CoordinatorDynamicConfig) {
	t.Helper()
	want, werr := json.Marshal(c)
	got, gerr := c.AppendJSON(nil)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("errors differ: json.Marshal %v, AppendJSON %v", werr, gerr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON differs from json.Marshal:\n got %s\nwant %s", got, want)
	}
}

func TestCoordinatorConfigAppendJSON(t *testing.T) {
	checkConfigJSON(t, CoordinatorDynamicConfig{}) // nil lists and map
	checkConfigJSON(t, DefaultCoordinatorConfig())
	c := DefaultCoordinatorConfig()
	c.KillDataSourceWhitelist = StringList{"wiki", `a"b\c`, "<x>&y", "naïve", "\u2028", "tab\there", "\x00\x1f", "\xff"}
	c.DecommissioningNodes = StringList{"host1:8083", "host2:8083"}
	c.DebugDimensions = map[string]string{"z": "1", "a": "<2>", "m": "", "é": "\u2029"}
	c.MillisToWaitBeforeDeleting, c.MergeBytesLimit, c.MaxSegmentsToMove = math.MaxInt64, math.MinInt64, math.MinInt32
	checkConfigJSON(t, c)
	c.DebugDimensions = map[string]string{}
	for _, f := range []float64{0, -0.0, 1, 99.5, 1e-6, 1e-7, 123456789e-15, 1e20, 1e21, 1.5e300, -2.5e-8, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Inf(1), math.NaN()} {
		c.PercentOfSegmentsToConsiderPerMove = f
		checkConfigJSON(t, c)
	}
}

func FuzzCoordinatorConfigAppendJSON(f *testing.F) {
	f.Add("wiki", "k", "v", 100.0, int64(900000), true)
	f.Add(`a"<b>&\`, "\u2028", "\xff\x00", 1e-9, int64(-1), false)
	f.Fuzz(func(t *testing.T, s, k, v string, pct float64, n int64, flag bool) {
		c := DefaultCoordinatorConfig()
		c.KillDataSourceWhitelist = StringList{s, k}
		c.DebugDimensions = map[string]string{k: v, s: k}
		c.PercentOfSegmentsToConsiderPerMove = pct
		c.MergeBytesLimit, c.MaxSegmentsToMove = n, int32(n)
		c.PauseCoordination = flag
		checkConfigJSON(t, c)
	})
}

// optionalCmd is registered as ignorable.
type optionalCmd struct{ Y string }

func (optionalCmd) CommandType() string { return "test.optional" }

func init() { Register(optionalCmd{}, true) }

// Encode appends the envelope by hand; it must stay what json.Marshal gives.
func TestEncodeMatchesEnvelopeMarshal(t *testing.T) {
	five := int32(5)
	for _, tc := range []struct {
		cmd   Command
		audit Audit
	}{
		{SetCoordinatorConfig{Patch: CoordinatorConfigPatch{MaxSegmentsToMove: &five}}, Audit{Author: "a", Comment: "c", IP: "1.2.3.4"}},
		{SetCoordinatorConfig{}, Audit{Author: `<"x">`, Comment: "naïve & \n", IP: "::1"}},
		{optionalCmd{}, Audit{}},
	} {
		got, err := Encode(tc.cmd, -17, tc.audit)
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(tc.cmd)
		_, ignorable := tc.cmd.(optionalCmd)
		want, _ := json.Marshal(Envelope{Version: EnvelopeVersion, Type: tc.cmd.CommandType(), Ignorable: ignorable, TimeMs: -17, Audit: tc.audit, Payload: payload})
		if !bytes.Equal(got, want) {
			t.Errorf("Encode = %s\nwant     %s", got, want)
		}
	}
}
