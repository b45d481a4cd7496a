package eventually

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestTrueReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	True(t, "three increments", func() bool { return n.Load() == 3 })
}

// recorder captures a failure instead of ending the test.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

// Fatalf records the message and unwinds like t.Fatalf would (by panicking,
// which the test recovers).
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}

func TestTrueFailsNamingWhatAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		start := time.Now()
		func() {
			defer func() {
				if p := recover(); p != r {
					t.Fatalf("recovered %v", p)
				}
			}()
			True(r, "the impossible", func() bool { return false }, Within(3*time.Second), Showing(func() string { return "false" }))
		}()
		if got := time.Since(start); got < 3*time.Second || got > 3*time.Second+2*interval {
			t.Fatalf("gave up after %v", got)
		}
		if r.msg != "timed out after 3s waiting for the impossible; last seen: false" {
			t.Fatalf("message %q", r.msg)
		}
	})
}
