//go:build unix

package segment

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used, which on a
// shared machine measures the work better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
