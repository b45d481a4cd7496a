package audit

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkReplay rebuilds the state machine from the empty state through a
// log of 50,000 commands of the common kinds (segment publishes, config
// changes, task submissions and ends, marks): what /audit/state,
// /audit/diff and /audit/digest cost at worst. "archive" reads every entry
// back from the archive (decompressed and checked), where most of a long
// history is; "live" from a running node's bbolt log (the store its Raft
// writes, package boltlog, read range by range), which holds the newest
// entries; "stopped" from a stopped node's (OpenDir, the same reader).
// `make bench-audit` runs it on one core; the target is ≥ 100,000
// commands/s.
func BenchmarkReplay(b *testing.B) {
	const n = 50_000
	for _, where := range []string{"archive", "live", "stopped"} {
		b.Run(where, func(b *testing.B) {
			nd := newNode(b, n)
			h := &History{Live: nd.store}
			last, _ := h.Log().LastIndex()
			if where == "archive" {
				a, err := OpenArchive(ArchiveDir(nd.dir), 0, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := a.Trim(nd.store, nil, 1, last, last, func() error { return nd.store.DeleteRange(1, last) }); err != nil {
					b.Fatal(err)
				}
				h.Archive = a
			}
			if where == "stopped" {
				// A stopped node's log, read by OpenDir's own reader.
				nd.store.Close()
				stopped, closeDir, err := OpenDir(nd.dir)
				if err != nil {
					b.Fatal(err)
				}
				defer closeDir()
				h = stopped
			}
			cpu0 := cpuTime()
			for b.Loop() {
				if _, _, err := h.StateAt(last); err != nil {
					b.Fatal(err)
				}
			}
			cmds := float64(n) * float64(b.N)
			b.ReportMetric(cmds/b.Elapsed().Seconds(), "commands/s")
			// On a shared machine the wall clock counts other processes'
			// turns too: the process's own CPU time is the one-core figure.
			b.ReportMetric(cmds/(cpuTime()-cpu0).Seconds(), "commands/cpu-s")
		})
	}
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
