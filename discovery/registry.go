package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
)

// RegistryConfig configures the leader's side.
type RegistryConfig struct {
	// LeaseTimeout: a member not heard from for this long is gone
	// (svc.discovery.leaseTimeout).
	LeaseTimeout time.Duration
	Version      string // this binary's, compared with the members'
	Logger       hclog.Logger
	// OnGone is called (on the leader) for each member that left or missed
	// its lease, after its LeaveServer command committed: its work goes
	// elsewhere now.
	OnGone func(Member)
}

// goneKept is how long /servers shows a departed member.
const goneKept = 10 * time.Minute

var discoveryAudit = commands.Audit{Author: "discovery"}

// Registry is the leader's view of the live processes: the Raft membership
// plus leases in memory.
type Registry struct {
	node *cluster.Node
	cfg  RegistryConfig

	mu     sync.Mutex
	term   time.Time        // the LeaderSince the leases belong to
	leases map[string]lease // by member id
	gone   map[string]Member
}

type lease struct {
	seen time.Time
	skew time.Duration
}

// NewRegistry returns the registry of a control node.
func NewRegistry(node *cluster.Node, cfg RegistryConfig) *Registry {
	if cfg.LeaseTimeout <= 0 {
		cfg.LeaseTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Registry{node: node, cfg: cfg, leases: map[string]lease{}, gone: map[string]Member{}}
}

// ErrNotLeader: announcements go to the leader.
var ErrNotLeader = errors.New("not the control-plane leader")

// syncTerm drops the leases of an earlier leadership: they say nothing about
// who is alive now. Callers hold r.mu.
func (r *Registry) syncTerm() time.Time {
	since := r.node.LeaderSince()
	if !since.Equal(r.term) {
		r.term = since
		r.leases = map[string]lease{}
	}
	return since
}

func validate(a Announcement) error {
	switch {
	case a.ID == "" || len(a.ID) > 512:
		return errors.New("id must be 1..512 bytes")
	case a.URL == "" || len(a.URL) > 2048:
		return errors.New("url must be 1..2048 bytes")
	case len(a.Roles) == 0 || len(a.Roles) > 16:
		return errors.New("1..16 roles")
	case a.Capacity < 0 || a.MaxSize < 0:
		return errors.New("negative capacity or maxSize")
	}
	return nil
}

// ValidationError is an announcement the registry refuses (HTTP 400).
type ValidationError struct{ error }

// Announce renews a's lease, records a join (or a change of what it
// announces) in Raft, and returns the membership.
func (r *Registry) Announce(a Announcement) (Reply, error) {
	if err := validate(a); err != nil {
		return Reply{}, ValidationError{err}
	}
	if !r.node.IsLeader() {
		return Reply{}, ErrNotLeader
	}
	now := time.Now()
	var skew time.Duration
	if a.SentMs > 0 {
		skew = time.UnixMilli(a.SentMs).Sub(now)
	}
	// The lease first: expire must not find the member in Raft without
	// one and remove it as silent the moment it joins.
	r.mu.Lock()
	r.syncTerm()
	r.leases[a.ID] = lease{seen: now, skew: skew}
	delete(r.gone, a.ID)
	r.mu.Unlock()
	join := commands.JoinServer{ID: a.ID, Roles: a.Roles, URL: a.URL, Tier: a.Tier, Priority: a.Priority,
		Capacity: a.Capacity, MaxSize: a.MaxSize, Version: a.Version, StartTimeMs: a.StartTimeMs}
	var rec *fsm.ServerRecord
	r.node.FSM().Read(func(s *fsm.State) { rec, _ = s.Server(a.ID) })
	if rec == nil || !sameJoin(rec.JoinServer, join) {
		if _, err := r.node.Propose(join, discoveryAudit, 5*time.Second); err != nil {
			if errors.Is(err, cluster.ErrNotLeader) {
				return Reply{}, ErrNotLeader
			}
			return Reply{}, fmt.Errorf("recording the join of %s: %w", a.ID, err)
		}
		if rec == nil {
			r.cfg.Logger.Info("server joined", "id", a.ID, "roles", strings.Join(a.Roles, ","), "url", a.URL, "version", a.Version)
		} else {
			r.cfg.Logger.Info("server changed", "id", a.ID, "roles", strings.Join(a.Roles, ","), "url", a.URL, "version", a.Version)
		}
	}
	return r.reply(now), nil
}

func sameJoin(a, b commands.JoinServer) bool {
	return a.ID == b.ID && slices.Equal(a.Roles, b.Roles) && a.URL == b.URL && a.Tier == b.Tier && a.Priority == b.Priority &&
		a.Capacity == b.Capacity && a.MaxSize == b.MaxSize && a.Version == b.Version && a.StartTimeMs == b.StartTimeMs
}

func (r *Registry) reply(now time.Time) Reply {
	return Reply{Leader: r.node.HTTPURL(), TimeMs: now.UnixMilli(), Version: r.cfg.Version,
		LeaseTimeoutMs: r.cfg.LeaseTimeout.Milliseconds(), Members: r.Members()}
}

// Leave removes a member that says goodbye.
func (r *Registry) Leave(id string) error {
	if !r.node.IsLeader() {
		return ErrNotLeader
	}
	var rec *fsm.ServerRecord
	r.node.FSM().Read(func(s *fsm.State) { rec, _ = s.Server(id) })
	if rec == nil {
		return nil
	}
	return r.remove(rec, "left", time.Now())
}

func (r *Registry) remove(rec *fsm.ServerRecord, reason string, now time.Time) error {
	if _, err := r.node.Propose(commands.LeaveServer{ID: rec.ID, Reason: reason}, discoveryAudit, 5*time.Second); err != nil {
		var fe *fsm.Error
		if errors.As(err, &fe) && fe.Kind == fsm.KindNotFound {
			return nil // another round removed it
		}
		return err
	}
	m := member(rec, StateGone)
	m.LastSeenMs = now.UnixMilli()
	r.mu.Lock()
	if l, ok := r.leases[rec.ID]; ok {
		m.LastSeenMs = l.seen.UnixMilli()
	}
	delete(r.leases, rec.ID)
	r.gone[rec.ID] = m
	r.mu.Unlock()
	r.cfg.Logger.Info("server gone", "id", rec.ID, "roles", strings.Join(rec.Roles, ","), "reason", reason)
	if r.cfg.OnGone != nil {
		r.cfg.OnGone(m)
	}
	return nil
}

func member(rec *fsm.ServerRecord, state string) Member {
	j := rec.JoinServer
	return Member{Announcement: Announcement{ID: j.ID, Roles: j.Roles, URL: j.URL, Tier: j.Tier, Priority: j.Priority,
		Capacity: j.Capacity, MaxSize: j.MaxSize, Version: j.Version, StartTimeMs: j.StartTimeMs}, State: state, JoinedMs: rec.JoinedMs}
}

// Members lists the membership by id: live and unconfirmed members, and
// those gone in the last ten minutes.
func (r *Registry) Members() []Member {
	var recs []*fsm.ServerRecord
	r.node.FSM().Read(func(s *fsm.State) { recs = s.Servers() })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncTerm()
	out := make([]Member, 0, len(recs)+len(r.gone))
	for _, rec := range recs {
		m := member(rec, StateUnconfirmed)
		if l, ok := r.leases[rec.ID]; ok {
			m.State, m.LastSeenMs, m.ClockSkewMs = StateLive, l.seen.UnixMilli(), l.skew.Milliseconds()
		}
		out = append(out, m)
	}
	for id, m := range r.gone {
		if time.Since(time.UnixMilli(m.LastSeenMs)) > goneKept {
			delete(r.gone, id)
			continue
		}
		if !slices.ContainsFunc(recs, func(rec *fsm.ServerRecord) bool { return rec.ID == id }) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Run expires leases while the node leads, until ctx ends.
func (r *Registry) Run(ctx context.Context) {
	tick := max(r.cfg.LeaseTimeout/5, 50*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.node.Done():
			return
		case <-t.C:
		}
		if r.node.IsLeader() {
			r.expire(time.Now())
		}
	}
}

// expire removes the members silent for longer than the lease timeout; a
// member of an earlier leadership counts from this leadership's start.
func (r *Registry) expire(now time.Time) {
	var recs []*fsm.ServerRecord
	r.node.FSM().Read(func(s *fsm.State) { recs = s.Servers() })
	var late []*fsm.ServerRecord
	var silent []time.Duration
	r.mu.Lock()
	since := r.syncTerm()
	for _, rec := range recs {
		last := since
		if l, ok := r.leases[rec.ID]; ok {
			last = l.seen
		}
		if d := now.Sub(last); d > r.cfg.LeaseTimeout {
			late = append(late, rec)
			silent = append(silent, d)
		}
	}
	r.mu.Unlock()
	for i, rec := range late {
		r.mu.Lock()
		l, renewed := r.leases[rec.ID]
		r.mu.Unlock()
		if renewed && now.Sub(l.seen) <= r.cfg.LeaseTimeout {
			continue // it announced itself meanwhile
		}
		if err := r.remove(rec, fmt.Sprintf("no heartbeat for %s (svc.discovery.leaseTimeout %s)", silent[i].Round(time.Millisecond), r.cfg.LeaseTimeout), now); err != nil {
			r.cfg.Logger.Warn("could not record a server leaving", "id", rec.ID, "error", err)
			return
		}
	}
}
