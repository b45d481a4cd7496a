package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The publisher runs in a synctest bubble: its ticker follows the bubble's
// clock, and synctest.Wait lets every due tick be handled before a count is
// checked, so "nothing was published" is exact rather than a guess after a
// sleep.
func TestPublishesChangesOnlyAndStops(t *testing.T) {
	synctest.Test(t, testPublishesChangesOnlyAndStops)
}

func testPublishesChangesOnlyAndStops(t *testing.T) {
	var progress atomic.Int64 // the "task"'s progress; the key follows it
	var mu sync.Mutex
	var sent []string
	snapshot := func() ([]byte, string) {
		n := progress.Load()
		if n == 0 {
			return nil, "" // nothing to show yet
		}
		k := fmt.Sprint(n)
		return []byte(`{"n":` + k + `}`), k
	}
	publish := func(_ context.Context, b []byte) error {
		mu.Lock()
		sent = append(sent, string(b))
		mu.Unlock()
		return nil
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(sent)
	}
	// periods lets n ticks happen and be handled.
	periods := func(n int) {
		time.Sleep(time.Duration(n) * 2 * time.Millisecond)
		synctest.Wait()
	}
	p := Start(context.Background(), 2*time.Millisecond, snapshot, publish, t.Logf)
	periods(10)
	if count() != 0 {
		t.Fatal("published before there was anything to show")
	}
	progress.Store(1)
	periods(1)
	if count() != 1 {
		t.Fatalf("%d publishes one period after progress, want 1", count())
	}
	periods(10)
	if count() != 1 {
		t.Fatalf("unchanged progress published %d times", count())
	}
	progress.Store(2)
	periods(1)
	if count() != 2 {
		t.Fatalf("%d publishes after more progress, want 2", count())
	}
	p.Stop()
	p.Stop() // idempotent
	progress.Store(3)
	periods(10)
	if count() != 2 || sent[1] != `{"n":2}` {
		t.Fatalf("after Stop: %v", sent)
	}
}

func TestFailedPublishIsRetriedAndLoggedOnce(t *testing.T) {
	synctest.Test(t, testFailedPublishIsRetriedAndLoggedOnce)
}

func testFailedPublishIsRetriedAndLoggedOnce(t *testing.T) {
	var calls atomic.Int64
	var logs atomic.Int64
	publish := func(context.Context, []byte) error {
		if calls.Add(1) <= 5 {
			return errors.New("overlord unreachable")
		}
		return nil
	}
	snapshot := func() ([]byte, string) { return []byte(`{}`), "k" }
	p := Start(context.Background(), time.Millisecond, snapshot, publish, func(string, ...any) { logs.Add(1) })
	// Six ticks, then ten more on the bubble's clock: a publish each period
	// until one succeeds, then none for the unchanged key.
	time.Sleep(16 * time.Millisecond)
	synctest.Wait()
	p.Stop()
	if calls.Load() != 6 {
		t.Errorf("%d publish calls, want 5 failures and 1 success, then none (same key)", calls.Load())
	}
	if logs.Load() != 1 {
		t.Errorf("the same error was logged %d times", logs.Load())
	}
}

func TestStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := Start(ctx, time.Millisecond, func() ([]byte, string) { return nil, "" }, nil, nil)
	cancel()
	done := make(chan struct{})
	go func() { p.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return after the context ended")
	}
}
