// Package live publishes a running task's report while the task runs (the
// live report of GET .../task/{id}/reports). Every publish is a replicated
// command, so a Publisher sends the latest snapshot at most once per period,
// and only when the task's progress moved since the last one it sent.
package live

import (
	"context"
	"sync"
	"time"
)

// Period is how often a task publishes its live report at most, as the
// streaming tasks do.
const Period = 2 * time.Second

// Snapshot returns the report as it stands (nil: nothing to show yet) and a
// key that changes exactly when the progress does; a report whose key equals
// the last published one is not sent again. Timings that grow by themselves
// (durations) belong in the report, not in the key.
type Snapshot func() (report []byte, key string)

// Publish sends a report (middlemanager.Env.PublishReport).
type Publish func(ctx context.Context, report []byte) error

// Publisher publishes snapshots on a timer until Stop.
type Publisher struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Start publishes snapshot() every period while ctx lasts. logf (may be nil)
// hears failed publishes, each distinct error once: a lost live report only
// delays the progress shown.
func Start(ctx context.Context, period time.Duration, snapshot Snapshot, publish Publish, logf func(string, ...any)) *Publisher {
	p := &Publisher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tk := time.NewTicker(period)
		defer tk.Stop()
		var sent, lastErr string
		for {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			report, key := snapshot()
			if report == nil || key == sent {
				continue
			}
			if err := publish(ctx, report); err != nil {
				if ctx.Err() == nil && logf != nil && err.Error() != lastErr {
					logf("Publishing the live report: %v", err)
				}
				lastErr = err.Error()
				continue
			}
			sent, lastErr = key, ""
		}
	}()
	return p
}

// Stop ends publishing and waits for a publish under way to finish, so that
// no live report can land after the final one. It may be called more than once.
func (p *Publisher) Stop() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}
