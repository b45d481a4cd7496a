package fsm

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hashicorp/raft"

	"strata/commands"
)

// Joins and leaves build the membership the same on every node; snapshots
// carry it byte for byte; bad commands change nothing.
func TestServersSnapshotAndDeterminism(t *testing.T) {
	log := []*raft.Log{
		entry(t, 1, 1000, commands.JoinServer{ID: "h2", Roles: []string{"historical"}, URL: "http://h2:8083", Tier: "hot", MaxSize: 10}, "discovery"),
		entry(t, 2, 2000, commands.JoinServer{ID: "b1", Roles: []string{"broker"}, URL: "http://b1:8082", Version: "1"}, "discovery"),
		entry(t, 3, 3000, commands.JoinServer{ID: "h1", Roles: []string{"historical"}, URL: "http://h1:8083"}, "discovery"),
		entry(t, 4, 4000, commands.LeaveServer{ID: "h1", Reason: "lease expired"}, "discovery"),
		entry(t, 5, 5000, commands.JoinServer{ID: "b1", Roles: []string{"broker", "router"}, URL: "http://b1:9999", Version: "2"}, "discovery"),
	}
	var first []byte
	for i := 0; i < 5; i++ {
		f := New(nil)
		for _, l := range log {
			if res := f.Apply(l).(Result); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
		snap := snapshotBytes(t, f)
		if first == nil {
			first = snap
		} else if !bytes.Equal(first, snap) {
			t.Fatal("snapshot bytes vary between runs")
		}
		if got := snapshotBytes(t, restore(t, snap)); !bytes.Equal(got, snap) {
			t.Fatalf("round trip differs:\n%s\n%s", snap, got)
		}
	}
	restore(t, first).Read(func(s *State) {
		got := s.Servers()
		if len(got) != 2 || got[0].ID != "b1" || got[0].URL != "http://b1:9999" || got[0].JoinedMs != 5000 || got[1].ID != "h2" || got[1].Tier != "hot" {
			t.Fatalf("restored membership: %+v", got)
		}
	})

	f := New(nil)
	for _, l := range log {
		f.Apply(l)
	}
	members := func() string {
		var b []byte
		f.Read(func(s *State) { b, _ = json.Marshal(s.Servers()) })
		return string(b)
	}
	before := members()
	for i, bad := range []commands.Command{
		commands.LeaveServer{ID: "h1"}, // gone already
		commands.JoinServer{Roles: []string{"broker"}, URL: "http://x:1"},
		commands.JoinServer{ID: "x", URL: "http://x:1"},
		commands.JoinServer{ID: "x", Roles: []string{"broker"}},
		commands.JoinServer{ID: "x", Roles: []string{"broker"}, URL: "http://x:1", Capacity: -1},
	} {
		if res := f.Apply(entry(t, uint64(10+i), 9000, bad, "discovery")).(Result); res.Err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
	if after := members(); after != before {
		t.Fatalf("a rejected command changed the membership:\n%s\n%s", before, after)
	}
}
