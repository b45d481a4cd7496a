package coordinator

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/rules"
	"strata/segmeta"
)

// ErrSettling means the coordinator became leader too recently to know every
// historical: a plan now would pile the cluster's segments onto the few that
// have polled so far. Historicals keep serving what they hold meanwhile.
var ErrSettling = errors.New("the coordinator is taking stock of the historicals after a leader change (svc.coordinator.startDelay); keep serving what is loaded and poll again")

// Placement is the leader's current answer to "which historical serves
// which segment": the served view (used segments no other used segment
// overshadows), each segment's want under its first matching retention rule,
// and the assignment planned over the reachable historicals. It is rebuilt
// when the FSM or the inventory changes, and every few seconds for rules
// that follow the clock (load/drop by period).
type Placement struct {
	Node       *cluster.Node
	Inventory  *Inventory
	StartDelay time.Duration // after becoming leader, before planning
	// Period is the coordinator period (svc.coordinator.period), the unit of
	// replicantLifetime; LoadTimeout is how long a load may take before
	// replicateAfterLoadTimeout places another replica
	// (svc.coordinator.loadTimeout). Zero turns either off.
	Period, LoadTimeout time.Duration
	// HandoverDelay is how long the old version of a time chunk stays
	// loaded after its replacement is loaded somewhere, so that every broker
	// has seen the new chunk before the old one goes
	// (svc.coordinator.handoverDelay; see handover).
	HandoverDelay time.Duration
	Logger        hclog.Logger

	mu       sync.Mutex
	key      placementKey
	cur      *Current
	loads    loadTracker
	handover handover
	recheck  time.Time // recompute from then on even if the key is unchanged
}

// placementKey is what a placement is computed from: the FSM's segments,
// rules and config (not its log index, which every task heartbeat moves),
// the inventory, and the clock in planTick steps.
type placementKey struct {
	state fsm.PlacementVersion
	gen   uint64
	tick  int64
}

// planTick bounds how stale the clock of a cached plan may be.
const planTick = 5 * time.Second

// Current is one computed placement. Read it, do not change it.
type Current struct {
	NowMs    int64
	Segments map[string][]*segmeta.DataSegment // served view per datasource, in id order
	Wants    map[segmeta.ID]Want
	Servers  []Server // the inventory the plan was made from, by name
	Plan     Plan
}

// Current returns the placement for now, computing it if the cached one is
// out of date. It fails with ErrSettling within StartDelay of the node
// becoming leader.
func (p *Placement) Current(now time.Time) (*Current, error) {
	if since := p.Node.LeaderSince(); since.IsZero() || now.Sub(since) < p.StartDelay {
		return nil, ErrSettling
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var state fsm.PlacementVersion
	p.Node.FSM().Read(func(st *fsm.State) { state = st.PlacementVersion() })
	key := placementKey{state: state, gen: p.Inventory.Generation(), tick: now.UnixNano() / int64(planTick)}
	if p.cur != nil && key == p.key && (p.recheck.IsZero() || now.Before(p.recheck)) {
		return p.cur, nil
	}
	c := &Current{NowMs: now.UnixMilli(), Segments: map[string][]*segmeta.DataSegment{}, Wants: map[segmeta.ID]Want{}}
	var all []*segmeta.DataSegment
	var cfg commands.CoordinatorDynamicConfig
	p.Node.FSM().Read(func(st *fsm.State) {
		cfg = st.CoordinatorConfig()
		defaults := st.DefaultRules()
		for _, ds := range st.UsedIndex().DataSources() {
			segs := ServedSegments(st, ds)
			if len(segs) == 0 {
				continue
			}
			c.Segments[ds] = segs
			own, _ := st.Rules(ds)
			for _, seg := range segs {
				c.Wants[seg.ID()] = WantOf(own, defaults, seg, c.NowMs)
			}
			all = append(all, segs...)
		}
	})
	c.Servers = p.Inventory.Servers()
	var cands []Candidate
	for _, srv := range c.Servers {
		if srv.Reachable {
			cands = append(cands, Candidate{Name: srv.Meta.Name, Tier: srv.Meta.Tier, MaxSize: srv.Meta.MaxSize, Held: srv.Segments,
				Decommissioning: slices.Contains(cfg.DecommissioningNodes, srv.Meta.Name)})
		}
	}
	if cfg.PauseCoordination {
		c.Plan, p.recheck = frozen(cands), time.Time{}
	} else {
		want := func(seg *segmeta.DataSegment) Want { return c.Wants[seg.ID()] }
		c.Plan = Throttle(PlanAssignments(all, want, cands), cands, want, LimitsOf(cfg, len(all)))
		c.Plan = p.watchLoads(cfg, c.Plan, cands, now)
		c.Plan = p.keepForHandover(c, cands, now)
	}
	p.key, p.cur = key, c
	return c, nil
}

// keepForHandover adds to the plan the segments that left the served view
// but must stay loaded until what replaces them is (see handover).
func (p *Placement) keepForHandover(c *Current, cands []Candidate, now time.Time) Plan {
	inServed := func(id segmeta.ID) bool { _, ok := c.Wants[id]; return ok }
	if leader := p.Node.LeaderSince(); !p.handover.leader.Equal(leader) {
		p.handover = handover{leader: leader} // what another leadership asked for is not known
	}
	var plan Plan
	p.Node.FSM().Read(func(st *fsm.State) {
		defaults := st.DefaultRules()
		repl := func(seg *segmeta.DataSegment) ([]*segmeta.DataSegment, func(*segmeta.DataSegment) bool) {
			tl := st.UsedIndex().Timeline(seg.DataSource)
			if tl == nil {
				return nil, nil
			}
			own, _ := st.Rules(seg.DataSource)
			return tl.VisibleSegments(seg.Interval), func(t *segmeta.DataSegment) bool {
				if w, ok := c.Wants[t.ID()]; ok {
					return w.Wanted()
				}
				return WantOf(own, defaults, t, c.NowMs).Wanted()
			}
		}
		plan, p.recheck = p.handover.keep(c.Plan, cands, inServed, repl, p.HandoverDelay, now)
	})
	return plan
}

// watchLoads keeps track of the loads handed out: it warns once about each
// load waiting longer than replicantLifetime coordinator periods, and with
// replicateAfterLoadTimeout places one more replica of a segment whose load
// has waited past LoadTimeout, as Druid's coordinator does.
func (p *Placement) watchLoads(cfg commands.CoordinatorDynamicConfig, plan Plan, cands []Candidate, now time.Time) Plan {
	p.loads.update(p.Node.LeaderSince(), plan, cands, now)
	runs := int64(cfg.ReplicantLifetime)
	if cfg.SmartSegmentLoading {
		runs = 60 // Druid's computed value
	}
	if p.Period > 0 && runs > 0 && p.Logger != nil {
		for name, ids := range p.loads.newlyLate(time.Duration(runs)*p.Period, now) {
			p.Logger.Warn("segments are waiting in a historical's load queue longer than replicantLifetime coordinator periods; check the historical's log",
				"server", name, "segments", len(ids), "first", ids[0].String(), "periods", runs)
		}
	}
	if cfg.ReplicateAfterLoadTimeout && p.LoadTimeout > 0 {
		plan = replicateLate(plan, cands, p.loads.waiting(p.LoadTimeout, now))
	}
	return plan
}

// frozen is the plan while coordination is paused (pauseCoordination in the
// coordinator dynamic config): every historical keeps exactly what it holds,
// loading and dropping nothing.
func frozen(cands []Candidate) Plan {
	p := Plan{Hold: make(map[string][]*segmeta.DataSegment, len(cands)), Targets: map[segmeta.ID][]string{}}
	for _, c := range cands {
		hold := make([]*segmeta.DataSegment, 0, len(c.Held))
		for _, seg := range c.Held {
			hold = append(hold, seg)
		}
		slices.SortFunc(hold, func(a, b *segmeta.DataSegment) int { return a.ID().Compare(b.ID()) })
		p.Hold[c.Name] = hold
	}
	return p
}

// WantOf is what the first rule matching seg asks of the historicals: drop
// rules and segments no rule matches ask for nothing.
func WantOf(own, defaults []rules.Rule, seg *segmeta.DataSegment, nowMs int64) Want {
	r, ok := rules.Match(own, defaults, seg.Interval, nowMs)
	if !ok {
		return Want{}
	}
	switch r.Kind() {
	case rules.Load:
		return Want{Replicas: r.Replicants()}
	case rules.Broadcast:
		return Want{Broadcast: true}
	}
	return Want{}
}

// ServedSegments returns the used segments of ds that no other used segment
// overshadows, in id order: what the coordinator has historicals serve.
func ServedSegments(st *fsm.State, ds string) []*segmeta.DataSegment {
	tl := st.UsedIndex().Timeline(ds)
	if tl == nil {
		return nil
	}
	over := tl.Overshadowed()
	var skip map[*segmeta.DataSegment]bool
	if len(over) > 0 {
		skip = make(map[*segmeta.DataSegment]bool, len(over))
		for _, s := range over {
			skip[s] = true
		}
	}
	out := make([]*segmeta.DataSegment, 0, tl.Len()-len(over))
	tl.Segments(func(s *segmeta.DataSegment) bool {
		if !skip[s] {
			out = append(out, s)
		}
		return true
	})
	return out
}
