// Package coordinator holds the coordinator's leader duties: background work that
// only the control-plane leader does, driven by FSM state and recording its
// progress back through Raft commands so that any leader can pick it up.
package coordinator

import (
	"context"
	"slices"
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
//
// A file is deleted only if, when the sweeper reads the queue, no segment in
// the FSM (used or unused) names it: a file shared with a segment that was not
// killed is left in place and taken off the queue. Publishing onto a file in
// the queue is refused (commands.PublishSegments.OwnFiles), so what the
// sweeper read stays true until it acknowledges.
//
// A file whose deletion fails is retried after Interval, then twice as long
// each time up to MaxBackoff, and the failure is logged once, not at every
// attempt: a load spec outside deep storage would otherwise fill the log
// every second forever.
type Sweeper struct {
	Node     *cluster.Node
	Storage  FileRemover
	Interval time.Duration
	Logger   hclog.Logger
	// MaxBackoff caps the wait between two attempts at one file (default
	// DefaultMaxBackoff).
	MaxBackoff time.Duration
	// Now is the clock that times retries (default time.Now).
	Now func() time.Time

	failing map[string]*failedDeletion // by loadSpec; only SweepOnce touches it
}

// DefaultMaxBackoff is the longest wait between two attempts at deleting one
// file.
const DefaultMaxBackoff = 10 * time.Minute

// failedDeletion is the retry state of one file whose deletion failed.
type failedDeletion struct {
	attempts int
	next     time.Time // no attempt before
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

// SweepOnce deletes the queued files that are due and that no segment names,
// and acknowledges those that are gone or kept. It returns how many it
// acknowledged. It must not run concurrently with itself.
func (s *Sweeper) SweepOnce(ctx context.Context) int {
	now := s.now()
	const batch = 1000
	var due, shared []string
	s.Node.FSM().Read(func(st *fsm.State) {
		pending := st.PendingFileDeletions()
		for ls := range s.failing {
			if _, found := slices.BinarySearch(pending, ls); !found {
				delete(s.failing, ls) // acknowledged elsewhere (another leader's sweep)
			}
		}
		for _, ls := range pending {
			if len(due)+len(shared) == batch {
				break
			}
			if f := s.failing[ls]; f != nil && now.Before(f.next) {
				continue
			}
			if st.FileInUse(ls) {
				shared = append(shared, ls)
			} else {
				due = append(due, ls)
			}
		}
	})
	done := shared
	for _, ls := range shared {
		s.logger().Warn("kept a killed segment's file: another segment still names it", "loadSpec", ls)
	}
	for _, ls := range due {
		if err := s.Storage.RemoveLoadSpec(ctx, ls); err != nil {
			s.failed(ls, now, err)
			continue
		}
		if f := s.failing[ls]; f != nil {
			s.logger().Info("deleted segment files after failed attempts", "loadSpec", ls, "attempts", f.attempts+1)
			delete(s.failing, ls)
		}
		done = append(done, ls)
	}
	if len(done) == 0 {
		return 0
	}
	if _, err := s.Node.Propose(commands.AckFileDeletions{LoadSpecs: done}, commands.Audit{Author: "coordinator", Comment: "deep storage sweep"}, 10*time.Second); err != nil {
		s.logger().Warn("cannot acknowledge deleted files; will retry", "error", err)
		return 0
	}
	return len(done)
}

// failed schedules the next attempt at ls, logging the first failure only.
func (s *Sweeper) failed(ls string, now time.Time, err error) {
	if s.failing == nil {
		s.failing = map[string]*failedDeletion{}
	}
	f := s.failing[ls]
	if f == nil {
		f = &failedDeletion{}
		s.failing[ls] = f
	}
	f.attempts++
	f.next = now.Add(s.backoff(f.attempts))
	if f.attempts == 1 {
		s.logger().Warn("cannot delete segment files; retrying with exponential backoff, without logging each attempt",
			"loadSpec", ls, "error", err, "maxBackoff", s.maxBackoff())
	}
}

// backoff is the wait after the n-th failed attempt: Interval doubled n-1
// times, at most MaxBackoff.
func (s *Sweeper) backoff(n int) time.Duration {
	d := s.Interval
	if d <= 0 {
		d = time.Second
	}
	limit := s.maxBackoff()
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

func (s *Sweeper) maxBackoff() time.Duration {
	if s.MaxBackoff > 0 {
		return s.MaxBackoff
	}
	return DefaultMaxBackoff
}

func (s *Sweeper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sweeper) logger() hclog.Logger {
	if s.Logger == nil {
		return hclog.NewNullLogger()
	}
	return s.Logger
}
