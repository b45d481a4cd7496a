package coordinator

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
	"strata/rules"
	"strata/segment"
)

// Retention is the leader duty that applies drop rules: every Period it marks
// unused the used segments whose first matching rule is a drop rule, as
// Druid's coordinator does. Marking goes through Raft like any change, so it
// is audited and a new leader simply carries on. pauseCoordination in the
// coordinator dynamic config stops it.
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

// RunOnce marks unused the used segments that drop rules match at now and
// returns how many it marked.
func (r *Retention) RunOnce(now time.Time) (int, error) {
	drops := map[string][]string{} // datasource → segment ids
	var order []string
	paused := false
	r.Node.FSM().Read(func(st *fsm.State) {
		if paused = st.CoordinatorConfig().PauseCoordination; paused {
			return
		}
		defaults := st.DefaultRules()
		for _, ds := range st.UsedIndex().DataSources() {
			tl := st.UsedIndex().Timeline(ds)
			if tl == nil {
				continue
			}
			own, _ := st.Rules(ds)
			tl.Segments(func(seg *segment.DataSegment) bool {
				if rule, ok := rules.Match(own, defaults, seg.Interval, now.UnixMilli()); ok && rule.Kind() == rules.Drop {
					if drops[ds] == nil {
						order = append(order, ds)
					}
					drops[ds] = append(drops[ds], seg.ID().String())
				}
				return true
			})
		}
	})
	if paused {
		return 0, nil
	}
	marked := 0
	for _, ds := range order {
		res, err := r.Node.Propose(commands.MarkSegments{DataSource: ds, Used: false, IDs: drops[ds]},
			commands.Audit{Author: "coordinator", Comment: "segments matched a drop rule"}, 10*time.Second)
		if err != nil {
			return marked, err
		}
		if mr, ok := res.(fsm.MarkResult); ok {
			marked += mr.Changed
			if r.Logger != nil && mr.Changed > 0 {
				r.Logger.Info("marked segments unused by drop rule", "dataSource", ds, "segments", mr.Changed)
			}
		}
	}
	return marked, nil
}
