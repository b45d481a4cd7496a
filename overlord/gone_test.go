package overlord

import (
	"strings"
	"testing"
	"time"

	"strata/commands"
	"strata/ingest/middlemanager"
	"strata/internal/eventually"
)

// A worker discovery says is gone has its running task failed at once, not
// after the heartbeat timeout; a worker that heartbeats again is live again.
func TestWorkerGoneFailsItsTasksAtOnce(t *testing.T) {
	n := startNode(t)
	mustPropose(t, n, commands.RegisterWorker{Host: "127.0.0.1:4", Capacity: 2})
	submit(t, n, "orphan")
	mustPropose(t, n, commands.AssignTask{ID: "orphan", Worker: "127.0.0.1:4"})
	mustPropose(t, n, commands.TaskStatusUpdate{ID: "orphan", Worker: "127.0.0.1:4", Status: "RUNNING"})
	o := Attach(n, Config{HeartbeatTimeout: time.Hour, AssignmentTimeout: time.Hour, Tick: 30 * time.Millisecond})
	hb := func() {
		if _, err := o.Heartbeat(middlemanager.Heartbeat{Host: "127.0.0.1:4", Running: []string{"orphan"}}); err != nil {
			t.Fatal(err)
		}
	}
	hb()
	eventually.True(t, "the overlord to lead", o.Leading)
	o.WorkerGone("127.0.0.1:4")
	eventually.True(t, "the gone worker's task to fail", func() bool { return record(n, "orphan").Status == "FAILED" },
		eventually.Within(5*time.Second))
	if r := record(n, "orphan"); !strings.Contains(r.ErrorMsg, "worker 127.0.0.1:4 disappeared") {
		t.Fatalf("orphan %+v", r)
	}
	hb() // it comes back
	infos, err := o.Workers()
	if err != nil || len(infos) != 1 || infos[0].Worker.Host != "127.0.0.1:4" {
		t.Fatalf("live workers after its return: %+v %v", infos, err)
	}
}
