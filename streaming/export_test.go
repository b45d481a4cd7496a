package streaming

import "time"

// SetProgressPeriod changes how often reading tasks report their position,
// for tests and benchmarks that wait for a task to have read everything; the
// returned func restores it.
func SetProgressPeriod(d time.Duration) (restore func()) {
	old := progressPeriod
	progressPeriod = d
	return func() { progressPeriod = old }
}
