package streaming

import (
	"fmt"
	"strings"
	"testing"

	"strata/fsm"
	"strata/internal/eventually"
)

// recordedStates is the FSM's state timeline of id, oldest first, as
// "STATE/DETAILED".
func (c *supTestControl) recordedStates(id string) []fsm.SupervisorStateChange {
	var h []fsm.SupervisorStateChange
	c.f.Read(func(s *fsm.State) { h = s.SupervisorStates(id) })
	out := make([]fsm.SupervisorStateChange, len(h))
	for i, ch := range h {
		out[len(h)-1-i] = ch
	}
	return out
}

func lastRecorded(c *supTestControl, id string) string {
	h := c.recordedStates(id)
	if len(h) == 0 {
		return ""
	}
	return h[len(h)-1].State + "/" + h[len(h)-1].DetailedState
}

func supervisorIndex(c *supTestControl, id string) uint64 {
	var ix uint64
	c.f.Read(func(s *fsm.State) {
		if r, ok := s.Supervisor(id); ok {
			ix = r.Index
		}
	})
	return ix
}

// The runtime records every change of its state as a supervisor.state
// command, and only changes: RUNNING, suspended, resumed, then unhealthy
// once Kafka is gone, each version's states under its spec index.
func TestSupervisorStateTimelineIsRecorded(t *testing.T) {
	kc, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	m, _ := runManager(t, c)
	body := supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true})
	waitFor := func(want string) {
		t.Helper()
		eventually.True(t, "recorded "+want, func() bool { return lastRecorded(c, "wiki") == want },
			eventually.Showing(func() string { return lastRecorded(c, "wiki") }))
	}
	c.setSpec(t, body, false)
	v1 := supervisorIndex(c, "wiki")
	waitFor("RUNNING/RUNNING")
	c.setSpec(t, body, true)
	v2 := supervisorIndex(c, "wiki")
	m.Kick()
	waitFor("SUSPENDED/SUSPENDED")
	c.setSpec(t, body, false)
	v3 := supervisorIndex(c, "wiki")
	m.Kick()
	waitFor("RUNNING/RUNNING")
	kc.Close()
	waitFor("UNHEALTHY_SUPERVISOR/LOST_CONTACT_WITH_STREAM")

	var got []string
	h := c.recordedStates("wiki")
	for i, ch := range h {
		if i > 0 && ch.State == h[i-1].State && ch.DetailedState == h[i-1].DetailedState {
			t.Errorf("change %d repeats the state before it: %+v", i, ch)
		}
		version := map[uint64]string{v1: "v1", v2: "v2", v3: "v3"}[ch.SpecIndex]
		got = append(got, fmt.Sprintf("%s:%s", version, ch.DetailedState))
	}
	want := []string{
		"v1:PENDING", "v1:CONNECTING_TO_STREAM", "v1:DISCOVERING_INITIAL_TASKS", "v1:CREATING_TASKS", "v1:RUNNING", "v1:STOPPING",
		"v2:PENDING", "v2:CONNECTING_TO_STREAM", "v2:DISCOVERING_INITIAL_TASKS", "v2:SUSPENDED", "v2:STOPPING",
		"v3:PENDING", "v3:CONNECTING_TO_STREAM", "v3:DISCOVERING_INITIAL_TASKS", "v3:CREATING_TASKS", "v3:RUNNING",
		"v3:LOST_CONTACT_WITH_STREAM",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("timeline\n got %v\nwant %v", got, want)
	}
	// The runtime proposed changes only: the FSM never had to drop one.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unchanged != 0 {
		t.Fatalf("%d proposals repeated the recorded state", c.unchanged)
	}
}
