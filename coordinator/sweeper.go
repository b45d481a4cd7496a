// Package coordinator holds the coordinator's leader duties: background work that
// only the control-plane leader does, driven by FSM state and recording its
// progress back through Raft commands so that any leader can pick it up.
package coordinator

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
)

// FileRemover deletes a segment's files from deep storage given its loadSpec.
// Deleting files that are already gone must succeed (deletion is retried).
type FileRemover interface {
	RemoveLoadSpec(ctx context.Context, loadSpec string) error
}

// Sweeper drains the FSM's pending-file-deletion queue: kill commands delete
// segment metadata first and queue the files; the leader deletes the files and
// acknowledges them. A crash or leader change in between leaves the queue for
// the next leader, so files are neither deleted while their metadata exists nor
// leaked.
type Sweeper struct {
	Node     *cluster.Node
	Storage  FileRemover
	Interval time.Duration
	Logger   hclog.Logger
}

// Run sweeps until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	asLeader(ctx, s.Node, s.Interval, time.Second, func(time.Time) { s.SweepOnce(ctx) })
}

// asLeader runs duty every period (def when period <= 0) while node leads,
// until ctx ends.
func asLeader(ctx context.Context, node *cluster.Node, period, def time.Duration, duty func(now time.Time)) {
	if period <= 0 {
		period = def
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if node.IsLeader() {
				duty(now)
			}
		}
	}
}

// SweepOnce deletes the queued files and acknowledges those that are gone.
func (s *Sweeper) SweepOnce(ctx context.Context) int {
	var pending []string
	s.Node.FSM().Read(func(st *fsm.State) { pending = st.PendingFileDeletions() })
	if len(pending) == 0 {
		return 0
	}
	const batch = 1000
	if len(pending) > batch {
		pending = pending[:batch]
	}
	var done []string
	for _, ls := range pending {
		if err := s.Storage.RemoveLoadSpec(ctx, ls); err != nil {
			if s.Logger != nil {
				s.Logger.Warn("cannot delete segment files; will retry", "loadSpec", ls, "error", err)
			}
			continue
		}
		done = append(done, ls)
	}
	if len(done) == 0 {
		return 0
	}
	if _, err := s.Node.Propose(commands.AckFileDeletions{LoadSpecs: done}, commands.Audit{Author: "coordinator", Comment: "deep storage sweep"}, 10*time.Second); err != nil {
		if s.Logger != nil {
			s.Logger.Warn("cannot acknowledge deleted files; will retry", "error", err)
		}
		return 0
	}
	return len(done)
}
