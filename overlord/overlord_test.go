package overlord

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/internal/eventually"
)

func startNode(t *testing.T) *cluster.Node {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	n, err := cluster.Start(cluster.Config{ID: "solo", RaftAddr: addr, HTTPURL: "http://127.0.0.1:1", DataDir: t.TempDir(),
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown() })
	eventually.True(t, "a leader", n.IsLeader)
	return n
}

func mustPropose(t *testing.T, n *cluster.Node, cmd commands.Command) any {
	t.Helper()
	v, err := n.Propose(cmd, commands.Audit{}, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", cmd.CommandType(), err)
	}
	return v
}

func record(n *cluster.Node, id string) fsm.TaskRecord {
	var r fsm.TaskRecord
	n.FSM().Read(func(s *fsm.State) {
		if rec, ok := s.Task(id); ok {
			r = *rec
		}
	})
	return r
}

func submit(t *testing.T, n *cluster.Node, id string) {
	mustPropose(t, n, commands.SubmitTask{ID: id, Type: "noop", DataSource: "none", Payload: json.RawMessage(`{"type":"noop"}`)})
}

// A new leader adopts running tasks: it fails them only once their worker has
// been silent for the heartbeat timeout counted from its own start, and keeps
// those whose worker heartbeats.
func TestAdoptionAndLiveness(t *testing.T) {
	n := startNode(t)
	// State an earlier leader left: two workers, each running a started task.
	for _, h := range []string{"127.0.0.1:1", "127.0.0.1:2"} {
		mustPropose(t, n, commands.RegisterWorker{Host: h, Capacity: 2})
	}
	for i, id := range []string{"silent", "alive"} {
		submit(t, n, id)
		host := []string{"127.0.0.1:1", "127.0.0.1:2"}[i]
		mustPropose(t, n, commands.AssignTask{ID: id, Worker: host})
		mustPropose(t, n, commands.TaskStatusUpdate{ID: id, Worker: host, Status: "RUNNING"})
	}
	submit(t, n, "finished")
	mustPropose(t, n, commands.AssignTask{ID: "finished", Worker: "127.0.0.1:2"})

	start := time.Now()
	o := Attach(n, Config{HeartbeatTimeout: 600 * time.Millisecond, AssignmentTimeout: 5 * time.Second, Tick: 30 * time.Millisecond})
	if Attach(n, Config{}) != o || For(n) != o {
		t.Fatal("Attach must return the attached overlord")
	}
	hb := func() middlemanager.HeartbeatReply {
		reply, err := o.Heartbeat(middlemanager.Heartbeat{Host: "127.0.0.1:2", Running: []string{"alive", "stranger"},
			Completed: []middlemanager.StatusReport{{ID: "finished", Worker: "127.0.0.1:2", Status: "SUCCESS", Report: json.RawMessage(`{"r":{}}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	reply := hb()
	if !reply.Enabled || strings.Join(reply.Shutdown, ",") != "stranger" || strings.Join(reply.Ack, ",") != "finished" {
		t.Fatalf("heartbeat reply %+v", reply)
	}
	if r := record(n, "finished"); r.Status != "SUCCESS" || r.Report != `{"r":{}}` {
		t.Fatalf("completion from a heartbeat: %+v", r)
	}
	for time.Since(start) < 450*time.Millisecond {
		if r := record(n, "silent"); r.Status != "RUNNING" {
			t.Fatalf("adopted task failed after %s, before the timeout: %+v", time.Since(start), r)
		}
		hb()
		time.Sleep(50 * time.Millisecond)
	}
	// The alive worker keeps heartbeating while the silent one's task fails.
	eventually.True(t, "the silent worker's task to fail", func() bool {
		hb()
		return record(n, "silent").Status != "RUNNING"
	}, eventually.Within(3*time.Second))
	if r := record(n, "silent"); r.Status != "FAILED" || !strings.Contains(r.ErrorMsg, "worker 127.0.0.1:1 disappeared") {
		t.Fatalf("silent task %+v", r)
	}
	if r := record(n, "alive"); r.Status != "RUNNING" {
		t.Fatalf("the heartbeating worker's task %+v", r)
	}
	infos, err := o.Workers()
	if err != nil || len(infos) != 1 || infos[0].Worker.Host != "127.0.0.1:2" || len(infos[0].Running) != 1 {
		t.Fatalf("live workers %+v %v", infos, err)
	}
	if _, err := o.Heartbeat(middlemanager.Heartbeat{Host: "127.0.0.1:9"}); err != ErrUnknownWorker {
		t.Fatalf("unknown worker: %v", err)
	}
	// A worker that cannot be reached gets no task for long: assignment to a
	// live worker that refuses connections fails the task.
	submit(t, n, "unreachable")
	eventually.True(t, "the task handed to an unreachable worker to fail", func() bool {
		hb()
		return record(n, "unreachable").Status != "RUNNING"
	})
	if r := record(n, "unreachable"); r.Worker != "127.0.0.1:2" || !strings.Contains(r.ErrorMsg, "could not hand the task to middle manager 127.0.0.1:2") {
		t.Fatalf("unreachable %+v", r)
	}
	n.Shutdown()
	select {
	case <-o.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the overlord did not stop with its node")
	}
	if For(n) != nil {
		t.Fatal("a stopped overlord stays attached")
	}
}

// A live worker that never lists a task assigned to it (say, the hand-over was
// lost) gets the task failed after the assignment timeout.
func TestTaskMissingFromHeartbeatsFails(t *testing.T) {
	n := startNode(t)
	mustPropose(t, n, commands.RegisterWorker{Host: "127.0.0.1:3", Capacity: 1})
	submit(t, n, "lost")
	mustPropose(t, n, commands.AssignTask{ID: "lost", Worker: "127.0.0.1:3"})
	mustPropose(t, n, commands.TaskStatusUpdate{ID: "lost", Worker: "127.0.0.1:3", Status: "RUNNING"})
	o := Attach(n, Config{HeartbeatTimeout: 5 * time.Second, AssignmentTimeout: 300 * time.Millisecond, Tick: 30 * time.Millisecond})
	eventually.True(t, "the task missing from heartbeats to fail", func() bool {
		if _, err := o.Heartbeat(middlemanager.Heartbeat{Host: "127.0.0.1:3"}); err != nil && err != ErrNotReady {
			t.Fatal(err)
		}
		return record(n, "lost").Status != "RUNNING"
	})
	if r := record(n, "lost"); !strings.Contains(r.ErrorMsg, "task is not running on middle manager 127.0.0.1:3") {
		t.Fatalf("%+v", r)
	}
}
