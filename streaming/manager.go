package streaming

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/fsm"
)

// Control is what the supervisor runtime needs from the overlord.
type Control interface {
	// ReadState runs fn under the FSM's read lock (cluster.Node.FSM().Read).
	ReadState(fn func(*fsm.State))
	// SubmitTask submits a task payload (as POST /svc/indexer/v1/task does) and returns its id.
	SubmitTask(ctx context.Context, payload []byte) (string, error)
	// ShutdownTask asks a running task to stop (for index_kafka: stop reading and publish).
	ShutdownTask(ctx context.Context, id string) error
	// UpdateSpec stores a new version of a running supervisor's spec (the
	// autoscaler's taskCount changes) if its current version is still the
	// one stored at Raft index ifIndex; why goes into the audit comment.
	UpdateSpec(ctx context.Context, id, dataSource string, ifIndex uint64, spec json.RawMessage, why string) error
	// RecordState stores a change of a supervisor's runtime state (the
	// supervisor.state command) for the spec version stored at Raft index
	// specIndex, so that the state timeline is part of the replicated log.
	RecordState(ctx context.Context, id string, specIndex uint64, state, detailed string) error
}

// Manager keeps one supervisor goroutine per active supervisor record of the
// FSM while Run runs (on the overlord leader).
type Manager struct {
	// States holds the state machine thresholds; set before Run.
	States StateConfig
	// PollInterval is how often the FSM is compared with the running
	// supervisors besides Kick (default 1s); set before Run.
	PollInterval time.Duration
	// LagMaxAge is how old the lag FreshStatus shows may be (default
	// DefaultLagMaxAge); set before Run.
	LagMaxAge time.Duration

	ctl  Control
	log  hclog.Logger
	kick chan struct{}

	mu      sync.Mutex
	sups    map[string]*supervisor // running supervisors by id; nil while Run is not running
	stopped map[string]bool        // tasks asked to stop gracefully (publishing)
	runMu   sync.Mutex             // one Run at a time

	// reconciles counts finished reconcile passes (and supervisor.runs each
	// supervisor's finished runs), so that tests can wait until the state
	// they set was acted on instead of sleeping.
	reconciles atomic.Int64
}

// NewManager returns a manager; nothing runs until Run.
func NewManager(c Control, logger hclog.Logger) *Manager {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Manager{
		States: DefaultStateConfig(), PollInterval: time.Second, LagMaxAge: DefaultLagMaxAge,
		ctl: c, log: logger.Named("supervisors"), kick: make(chan struct{}, 1),
	}
}

// Kick makes the manager compare the FSM with its supervisors now and the
// supervisors run now (after their start delay).
func (m *Manager) Kick() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Status returns the runtime status of a running supervisor, with the lag
// last measured.
func (m *Manager) Status(id string) (Status, bool) {
	s := m.supervisor(id)
	if s == nil {
		return Status{}, false
	}
	return s.status(time.Now()), true
}

// FreshStatus is Status with the lag measured anew first when it is older
// than LagMaxAge. The measurement waits for Kafka at most a couple of seconds
// (and no longer than ctx); when it fails, the status shows the last sample,
// whose offsetsLastUpdated tells its age.
func (m *Manager) FreshStatus(ctx context.Context, id string) (Status, bool) {
	s := m.supervisor(id)
	if s == nil {
		return Status{}, false
	}
	maxAge := m.LagMaxAge
	if maxAge <= 0 {
		maxAge = DefaultLagMaxAge
	}
	s.refreshLag(ctx, maxAge)
	return s.status(time.Now()), true
}

func (m *Manager) supervisor(id string) *supervisor {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sups[id]
}

var _ StatusSource = (*Manager)(nil)

// Run keeps the supervisors in step with the FSM until ctx ends (loss of
// leadership); then they stop without touching their tasks, which the next
// leader adopts.
func (m *Manager) Run(ctx context.Context) {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	m.mu.Lock()
	m.sups, m.stopped = map[string]*supervisor{}, map[string]bool{}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		sups := m.sups
		m.sups, m.stopped = nil, nil
		m.mu.Unlock()
		for _, s := range sups {
			<-s.done
		}
	}()
	poll := m.PollInterval
	if poll <= 0 {
		poll = time.Second
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for {
		m.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
			m.mu.Lock()
			for _, s := range m.sups {
				select {
				case s.kick <- struct{}{}:
				default:
				}
			}
			m.mu.Unlock()
		case <-ticker.C:
		}
	}
}

// reconcile starts, restarts and stops supervisors to match the FSM.
func (m *Manager) reconcile(ctx context.Context) {
	defer m.reconciles.Add(1)
	var recs []fsm.SupervisorRecord
	m.ctl.ReadState(func(s *fsm.State) {
		for _, r := range s.Supervisors() {
			recs = append(recs, *r)
		}
	})
	want := make(map[string]fsm.SupervisorRecord, len(recs))
	for _, r := range recs {
		want[r.ID] = r
	}
	m.mu.Lock()
	running := make(map[string]*supervisor, len(m.sups))
	for id, s := range m.sups {
		running[id] = s
	}
	m.mu.Unlock()

	for id, s := range running {
		if r, ok := want[id]; ok && r.Version == s.version && r.Index == s.index {
			continue
		}
		// Terminated or a new version: stop gracefully (its tasks publish),
		// then a new object starts from the stored offsets.
		s.stop(true)
		<-s.done
		m.mu.Lock()
		delete(m.sups, id)
		m.mu.Unlock()
		m.log.Info("supervisor stopped", "id", id, "version", s.version)
	}
	if ctx.Err() != nil {
		return
	}
	for _, r := range recs {
		m.mu.Lock()
		_, ok := m.sups[r.ID]
		m.mu.Unlock()
		if ok {
			continue
		}
		s := newSupervisor(m, r)
		sctx, cancel := context.WithCancel(ctx)
		s.cancel = cancel
		m.mu.Lock()
		m.sups[r.ID] = s
		m.mu.Unlock()
		go s.loop(sctx, ctx)
		m.log.Info("supervisor started", "id", r.ID, "version", r.Version, "suspended", r.Suspended)
	}
	m.kickOnTaskEnd()
}

// kickOnTaskEnd runs at once every supervisor one of whose tasks has ended,
// rather than at its next period: the next task then reads on from the offsets
// the last one published without waiting up to a whole period.
func (m *Manager) kickOnTaskEnd() {
	m.mu.Lock()
	sups := make([]*supervisor, 0, len(m.sups))
	for _, s := range m.sups {
		sups = append(sups, s)
	}
	m.mu.Unlock()
	for _, s := range sups {
		s.mu.Lock()
		ids := make([]string, 0, len(s.repTask))
		for _, t := range s.repTask {
			ids = append(ids, t.id)
		}
		s.mu.Unlock()
		ended := false
		m.ctl.ReadState(func(st *fsm.State) {
			for _, id := range ids {
				if t, ok := st.Task(id); ok && !t.Active() {
					ended = true
					return
				}
			}
		})
		if ended {
			select {
			case s.kick <- struct{}{}:
			default:
			}
		}
	}
}

// shutdownOnce asks a task to stop gracefully unless that was asked before.
func (m *Manager) shutdownOnce(ctx context.Context, id string, log hclog.Logger) {
	m.mu.Lock()
	if m.stopped == nil || m.stopped[id] {
		m.mu.Unlock()
		return
	}
	m.stopped[id] = true
	m.mu.Unlock()
	if err := m.ctl.ShutdownTask(ctx, id); err != nil {
		log.Warn("cannot stop task", "task", id, "error", err)
		m.forgetStopped(id) // try again next time
	}
}

func (m *Manager) forgetStopped(id string) {
	m.mu.Lock()
	delete(m.stopped, id)
	m.mu.Unlock()
}

func (m *Manager) isStopped(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopped[id]
}
