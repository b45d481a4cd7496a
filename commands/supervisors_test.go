package commands

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSupervisorCommandsRoundTrip(t *testing.T) {
	cmds := []Command{
		SetSupervisor{ID: "wiki", DataSource: "wiki", Spec: json.RawMessage(`{"type":"kafka","suspended":true}`), Suspended: true},
		TerminateSupervisor{ID: "wiki"},
		SetSupervisorState{ID: "wiki", SpecIndex: 12, State: "UNHEALTHY_SUPERVISOR", DetailedState: "LOST_CONTACT_WITH_STREAM"},
		ResetSupervisorOffsets{DataSource: "wiki"},
		ResetSupervisorOffsets{DataSource: "wiki", Offsets: json.RawMessage(`{"type":"kafka","partitions":{"type":"end","stream":"t","partitionOffsetMap":{"0":5}}}`)},
	}
	for _, c := range cmds {
		b, err := Encode(c, 1234, Audit{Author: "a"})
		if err != nil {
			t.Fatal(err)
		}
		env, got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if env.Type != c.CommandType() || env.TimeMs != 1234 {
			t.Fatalf("envelope %+v", env)
		}
		// Decode returns a pointer to the registered type.
		if v := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(v, c) {
			t.Fatalf("round trip of %s: got %#v, want %#v", c.CommandType(), v, c)
		}
	}
}

func TestSupervisorCommandsRegistered(t *testing.T) {
	for _, tag := range []string{"supervisor.set", "supervisor.terminate", "supervisor.offsets.reset", "supervisor.state"} {
		if _, ok := New(tag); !ok {
			t.Errorf("%s is not registered", tag)
		}
	}
}
