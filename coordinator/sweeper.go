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
	iv := s.Interval
	if iv <= 0 {
		iv = time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.Node.IsLeader() {
				s.SweepOnce(ctx)
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
