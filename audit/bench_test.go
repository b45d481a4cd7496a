package audit

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkReplay rebuilds the state machine from the empty state through a
// log of 50,000 commands of the common kinds (segment publishes, config
// changes, task submissions and ends, marks), half of it read back from the
// archive (decompressed and checked) and half from the live bbolt log: what
// /audit/state, /audit/diff and /audit/digest cost at worst. `make
// bench-audit` runs it on one core; the target is ≥ 100,000 commands/s.
func BenchmarkReplay(b *testing.B) {
	const n = 50_000
	nd := newNode(b, n)
	a, err := OpenArchive(ArchiveDir(nd.dir), 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	half := uint64(n / 2)
	if err := a.Trim(nd.store, nil, 1, half, func() error { return nd.store.DeleteRange(1, half) }); err != nil {
		b.Fatal(err)
	}
	h := &History{Archive: a, Live: nd.store}
	last, _ := h.Log().LastIndex()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, _, err := h.StateAt(last); err != nil {
			b.Fatal(err)
		}
	}
	cmds := float64(n) * float64(b.N)
	b.ReportMetric(cmds/b.Elapsed().Seconds(), "commands/s")
	// On a shared machine the wall clock counts other processes' turns
	// too: the process's own CPU time is the one-core figure.
	b.ReportMetric(cmds/(cpuTime()-cpu0).Seconds(), "commands/cpu-s")
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
