// Package eventually is the one poll loop of Strata's tests: wait until a
// condition holds, or fail the test naming what never happened.
//
// Use it for conditions that another goroutine or process makes true. To show
// that something does NOT happen, do not wait a fixed time: use testing/synctest
// or an explicit signal.
package eventually

import (
	"testing"
	"time"
)

// DefaultTimeout is how long True waits unless told otherwise: generous, since
// tests run with -race on a shared two-core machine.
const DefaultTimeout = 10 * time.Second

// interval is the pause between polls.
const interval = 10 * time.Millisecond

// Option changes how True waits.
type Option func(*config)

type config struct {
	timeout time.Duration
	last    func() string
}

// Within sets the timeout: longer for slow conditions (whole processes
// starting, segments handed off), shorter where the test's point is that
// the condition comes soon (a heartbeat timeout firing).
func Within(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// Showing adds what last returns (typically the last observation the
// condition made) to the failure message, so a timeout says what was seen.
func Showing(last func() string) Option { return func(c *config) { c.last = last } }

// True polls cond until it returns true, and fails the test with
// "timed out after D waiting for <what>" if it does not within the timeout.
// The first poll is immediate; the pause between polls is 10 ms.
// cond runs on the test's goroutine, so it may call t.Fatal itself.
func True(t testing.TB, what string, cond func() bool, opts ...Option) {
	t.Helper()
	c := config{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&c)
	}
	deadline := time.Now().Add(c.timeout)
	for !cond() {
		if time.Now().After(deadline) {
			if c.last != nil {
				t.Fatalf("timed out after %v waiting for %s; last seen: %s", c.timeout, what, c.last())
			}
			t.Fatalf("timed out after %v waiting for %s", c.timeout, what)
		}
		time.Sleep(interval)
	}
}
