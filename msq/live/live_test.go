package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPublishesChangesOnlyAndStops(t *testing.T) {
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
	waitFor := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); count() < n; {
			if time.Now().After(deadline) {
				t.Fatalf("%d publishes, want %d", count(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	p := Start(context.Background(), 2*time.Millisecond, snapshot, publish, t.Logf)
	time.Sleep(20 * time.Millisecond)
	if count() != 0 {
		t.Fatal("published before there was anything to show")
	}
	progress.Store(1)
	waitFor(1)
	time.Sleep(20 * time.Millisecond) // ten periods without progress
	if count() != 1 {
		t.Fatalf("unchanged progress published %d times", count())
	}
	progress.Store(2)
	waitFor(2)
	p.Stop()
	p.Stop() // idempotent
	progress.Store(3)
	time.Sleep(20 * time.Millisecond)
	if count() != 2 || sent[1] != `{"n":2}` {
		t.Fatalf("after Stop: %v", sent)
	}
}

func TestFailedPublishIsRetriedAndLoggedOnce(t *testing.T) {
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
	for deadline := time.Now().Add(5 * time.Second); calls.Load() < 6; {
		if time.Now().After(deadline) {
			t.Fatal("a failed publish was not retried")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
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
