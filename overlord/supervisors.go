package overlord

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/commands"
	"strata/fsm"
	"strata/ingest/middlemanager"
	"strata/streaming"
)

// SupervisorAudit marks the changes the supervisor runtime makes (and the
// task stops of a supervisor reset).
var SupervisorAudit = commands.Audit{Author: "supervisor"}

// supervisorProposeTimeout bounds each change the supervisor runtime proposes.
const supervisorProposeTimeout = 10 * time.Second

// StartSupervisors attaches the supervisor runtime (streaming.Manager) to the
// overlord: it runs while the overlord leads, and stops when the overlord
// does. The supervisor endpoints read its status and Kick it after each change.
// Call it once per overlord: each call starts another runtime.
func (o *Overlord) StartSupervisors(states streaming.StateConfig, logger hclog.Logger) *streaming.Manager {
	// The node-to-node transport (TLS, internal credentials) of the overlord.
	m := streaming.NewManager(&supervisorControl{o: o, client: &http.Client{Timeout: 10 * time.Second, Transport: o.cfg.Client.Transport}}, logger)
	m.States = states
	go runSupervisors(o, m)
	return m
}

// supervisorControl is what the supervisor runtime needs of this control node:
// the replicated state, task submission and graceful task stops.
type supervisorControl struct {
	o      *Overlord
	client *http.Client
}

func (c *supervisorControl) ReadState(fn func(*fsm.State)) { c.o.node.FSM().Read(fn) }

// SubmitTask stores a task as POST /svc/indexer/v1/task does.
func (c *supervisorControl) SubmitTask(ctx context.Context, payload []byte) (string, error) {
	task, locks, err := middlemanager.ParseTask(payload, time.Now())
	if err != nil {
		return "", err
	}
	cmd := commands.SubmitTask{ID: task.ID, Type: task.Type, GroupID: task.GroupID, DataSource: task.DataSource, Payload: task.Payload}
	for _, iv := range locks {
		cmd.Locks = append(cmd.Locks, iv.String())
	}
	if _, err := c.o.node.Propose(cmd, SupervisorAudit, supervisorProposeTimeout); err != nil {
		return "", err
	}
	c.o.Submitted()
	return task.ID, nil
}

// UpdateSpec stores a new spec version of a running supervisor, unless it
// changed since the version stored at ifIndex (a suspend, an update, a
// terminate).
func (c *supervisorControl) UpdateSpec(ctx context.Context, id, dataSource string, ifIndex uint64, spec json.RawMessage, why string) error {
	audit := SupervisorAudit
	audit.Comment = why
	_, err := c.o.node.Propose(commands.SetSupervisor{ID: id, DataSource: dataSource, Spec: spec, IfIndex: ifIndex}, audit, supervisorProposeTimeout)
	return err
}

// RecordState stores a supervisor's new runtime state (supervisor.state).
func (c *supervisorControl) RecordState(ctx context.Context, id string, specIndex uint64, state, detailed string) error {
	_, err := c.o.node.Propose(commands.SetSupervisorState{ID: id, SpecIndex: specIndex, State: state, DetailedState: detailed}, SupervisorAudit, supervisorProposeTimeout)
	return err
}

// ShutdownTask stops a task gracefully: the worker running it cancels the task's
// context, and an index_kafka task then stops reading, publishes what it read and
// ends with SUCCESS. A task no worker runs yet is taken out of the queue.
func (c *supervisorControl) ShutdownTask(ctx context.Context, id string) error {
	var worker, scheme string
	var active bool
	c.o.node.FSM().Read(func(st *fsm.State) {
		if t, ok := st.Task(id); ok {
			active, worker = t.Active(), t.Worker
			if w, ok := st.Worker(worker); ok {
				scheme = w.Scheme
			}
		}
	})
	if !active {
		return nil
	}
	if worker == "" {
		_, err := c.o.Shutdown(id, SupervisorAudit)
		return err
	}
	if scheme == "" {
		scheme = "http"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+worker+"/svc/worker/v1/task/"+url.PathEscape(id)+"/shutdown", nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("worker %s answered %d to the shutdown of %s", worker, resp.StatusCode, id)
	}
	return nil
}

// runSupervisors runs the supervisor runtime while o leads, one term of
// leadership at a time, until o stops.
func runSupervisors(o *Overlord, m *streaming.Manager) {
	var term *runtimeTerm
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-o.Done():
			term.stop()
			return
		case <-t.C:
		}
		switch leading := o.Leading(); {
		case leading && term == nil:
			term = startTerm(m)
		case !leading && term != nil:
			term.stop()
			term = nil
		}
	}
}

// runtimeTerm is one run of the supervisor runtime: one term of leadership.
type runtimeTerm struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startTerm(m *streaming.Manager) *runtimeTerm {
	ctx, cancel := context.WithCancel(context.Background())
	t := &runtimeTerm{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		m.Run(ctx)
	}()
	return t
}

// stop ends the term and waits for the runtime to return (nil: nothing runs).
func (t *runtimeTerm) stop() {
	if t != nil {
		t.cancel()
		<-t.done
	}
}
