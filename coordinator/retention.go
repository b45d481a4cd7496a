package coordinator

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/rules"
	"strata/segmeta"
)

// Retention is the leader duty that retires segments, as Druid's coordinator
// does: every Period it marks unused the used segments whose first matching
// rule is a drop rule, and, once the node has led for millisToWaitBeforeDeleting
// (coordinator dynamic config), the used segments newer ones overshadow
// entirely (a REPLACE or a re-index leaves them behind; unused, a kill task
// may delete them). Marking goes through Raft like any change, so it is
// audited and a new leader simply carries on. pauseCoordination stops it.
type Retention struct {
	Node   *cluster.Node
	Period time.Duration
	Logger hclog.Logger
}

// Run applies the drop rules every Period until ctx ends.
func (r *Retention) Run(ctx context.Context) {
	asLeader(ctx, r.Node, r.Period, time.Minute, func(now time.Time) {
		if _, err := r.RunOnce(now); err != nil && r.Logger != nil {
			r.Logger.Warn("cannot apply drop rules; will retry next period", "error", err)
		}
	})
}

// RunOnce marks unused the used segments that drop rules match at now, and
// the overshadowed ones when the node has led long enough, and returns how
// many it marked.
func (r *Retention) RunOnce(now time.Time) (int, error) {
	drops := map[string][]string{} // datasource → segment ids
	over := map[string][]string{}
	var order []string
	paused := false
	since := r.Node.LeaderSince()
	r.Node.FSM().Read(func(st *fsm.State) {
		cfg := st.CoordinatorConfig()
		if paused = cfg.PauseCoordination; paused {
			return
		}
		ledLongEnough := !since.IsZero() && now.Sub(since) >= time.Duration(cfg.MillisToWaitBeforeDeleting)*time.Millisecond
		defaults := st.DefaultRules()
		for _, ds := range st.UsedIndex().DataSources() {
			tl := st.UsedIndex().Timeline(ds)
			if tl == nil {
				continue
			}
			own, _ := st.Rules(ds)
			tl.Segments(func(seg *segmeta.DataSegment) bool {
				if rule, ok := rules.Match(own, defaults, seg.Interval, now.UnixMilli()); ok && rule.Kind() == rules.Drop {
					drops[ds] = append(drops[ds], seg.ID().String())
				}
				return true
			})
			if ledLongEnough {
				for _, seg := range tl.Overshadowed() {
					over[ds] = append(over[ds], seg.ID().String())
				}
			}
			if drops[ds] != nil || over[ds] != nil {
				order = append(order, ds)
			}
		}
	})
	if paused {
		return 0, nil
	}
	marked := 0
	for _, ds := range order {
		for _, batch := range []struct {
			ids    []string
			reason string
		}{{drops[ds], "segments matched a drop rule"}, {over[ds], "segments overshadowed by newer ones"}} {
			if len(batch.ids) == 0 {
				continue
			}
			res, err := r.Node.Propose(commands.MarkSegments{DataSource: ds, Used: false, IDs: batch.ids},
				commands.Audit{Author: "coordinator", Comment: batch.reason}, 10*time.Second)
			if err != nil {
				return marked, err
			}
			if mr, ok := res.(fsm.MarkResult); ok {
				marked += mr.Changed
				if r.Logger != nil && mr.Changed > 0 {
					r.Logger.Info("marked segments unused", "reason", batch.reason, "dataSource", ds, "segments", mr.Changed)
				}
			}
		}
	}
	return marked, nil
}
