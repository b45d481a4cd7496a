// Package audit is the control plane's history: every committed Raft log
// entry, whether still in the live log or only in the archive that keeps
// what log compaction trims (archive.go), and the state machine rebuilt as it
// was at any past index or time (state.go), its tables as JSON and the
// differences between two moments (view.go).
//
// A History is one node's: its archive, its live bbolt log and its
// snapshots. Nodes agree on every committed entry, so any node's History
// answers for the cluster; `strata audit verify` compares them.
package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"strata/cluster/boltlog"
)

// Entry is one committed Raft log entry, whether it is still in the live log
// or only in the archive.
type Entry struct {
	Index, Term uint64
	Type        raft.LogType
	Data        []byte    // for raft.LogCommand: a commands envelope
	AppendedAt  time.Time // the leader's append time (zero when not recorded)
}

// Log reads committed entries from the archive and the live log store,
// oldest first.
type Log interface {
	// FirstIndex is the oldest index still readable (0: none).
	FirstIndex() (uint64, error)
	// LastIndex is the newest index (0: none).
	LastIndex() (uint64, error)
	// Scan calls fn with each entry from from to to (inclusive), in order;
	// an error from fn stops the scan and is returned.
	Scan(from, to uint64, fn func(Entry) error) error
}

// ErrBadAt is wrapped by the errors of a moment that cannot be resolved: a
// malformed index or time, or one outside the history this node holds.
var ErrBadAt = errors.New("bad moment")

// Scanner is a log store that reads a range of entries at once (package
// boltlog's: one read transaction and one decoder for the whole range),
// which replays use instead of one GetLog per entry.
type Scanner interface {
	Scan(from, to uint64, fn func(*raft.Log) error) error
}

// History is one node's history: its archive, its live log and its
// snapshots. Its methods are safe for concurrent use with the node's Raft,
// which trims the live log only through Archive.Trim.
type History struct {
	Archive *Archive           // nil: no archive (nothing was ever trimmed, or it is not kept)
	Live    raft.LogStore      // the node's log store; nil when only the archive is read
	Snaps   raft.SnapshotStore // the node's live snapshots; nil: none
	// Committed, when set, bounds the history to what the cluster has
	// committed: a running node's log may end in entries not yet committed
	// (which a new leader may replace). A stopped node's cannot tell.
	Committed func() uint64
}

// Log returns the archive and the live log as one log.
func (h *History) Log() Log { return &combinedLog{h: h} }

// ParseAt resolves a moment: a Raft index ("1234") or an ISO-8601 time
// ("2026-11-26T09:00:00Z", or a date), which means the last index stamped at
// or before it.
func (h *History) ParseAt(at string) (uint64, error) {
	at = strings.TrimSpace(at)
	if at == "" {
		return 0, fmt.Errorf("%w: empty (want a Raft index or an ISO-8601 time)", ErrBadAt)
	}
	if n, err := strconv.ParseUint(at, 10, 64); err == nil {
		last, err := h.Log().LastIndex()
		if err != nil {
			return 0, err
		}
		if n > last {
			return 0, fmt.Errorf("%w: index %d is after the last index %d", ErrBadAt, n, last)
		}
		return n, nil
	}
	t, err := parseTime(at)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is neither a Raft index nor an ISO-8601 time", ErrBadAt, at)
	}
	return h.IndexAt(t)
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not a time")
}

// combinedLog reads the archive first and then the live log. Reads hold the
// archive's lock so that a trim (archive, then delete) never falls between
// the two.
type combinedLog struct{ h *History }

func (l *combinedLog) lock() func() {
	if l.h.Archive == nil {
		return func() {}
	}
	l.h.Archive.mu.RLock()
	return l.h.Archive.mu.RUnlock
}

// bounds returns the archive's range and the live log's range (0, 0 when empty).
func (l *combinedLog) bounds() (aFirst, aLast, lFirst, lLast uint64, err error) {
	if l.h.Archive != nil {
		if m := l.h.Archive.manifest(); len(m.Chunks) > 0 {
			aFirst, aLast = m.Chunks[0].First, m.Chunks[len(m.Chunks)-1].Last
		}
	}
	if l.h.Live != nil {
		if lFirst, err = l.h.Live.FirstIndex(); err != nil {
			return 0, 0, 0, 0, fmt.Errorf("live log: %w", err)
		}
		if lLast, err = l.h.Live.LastIndex(); err != nil {
			return 0, 0, 0, 0, fmt.Errorf("live log: %w", err)
		}
		if l.h.Committed != nil {
			lLast = min(lLast, l.h.Committed())
		}
		if lLast == 0 || lLast < lFirst {
			lFirst, lLast = 0, 0
		}
	}
	return aFirst, aLast, lFirst, lLast, nil
}

func (l *combinedLog) FirstIndex() (uint64, error) {
	defer l.lock()()
	aFirst, _, lFirst, _, err := l.bounds()
	if aFirst > 0 {
		return aFirst, err
	}
	return lFirst, err
}

func (l *combinedLog) LastIndex() (uint64, error) {
	defer l.lock()()
	_, aLast, _, lLast, err := l.bounds()
	return max(aLast, lLast), err
}

func (l *combinedLog) Scan(from, to uint64, fn func(Entry) error) error {
	defer l.lock()()
	aFirst, aLast, lFirst, lLast, err := l.bounds()
	if err != nil {
		return err
	}
	if from == 0 {
		from = 1
	}
	next := from
	if aLast > 0 && next <= aLast {
		if next < aFirst {
			return fmt.Errorf("entries %d to %d are no longer kept (the archive starts at %d: svc.audit.archive.retention)", next, aFirst-1, aFirst)
		}
		err := l.h.Archive.scan(next, min(to, aLast), func(e Entry) error {
			next = e.Index + 1
			return fn(e)
		})
		if err != nil {
			return err
		}
	}
	if next > to {
		return nil
	}
	if lLast == 0 || next > lLast {
		return nil
	}
	if next < lFirst {
		return fmt.Errorf("entries %d to %d are in neither the archive nor the live log (the live log starts at %d)", next, lFirst-1, lFirst)
	}
	if sc, ok := l.h.Live.(Scanner); ok {
		return sc.Scan(next, min(to, lLast), func(rl *raft.Log) error {
			return fn(Entry{Index: rl.Index, Term: rl.Term, Type: rl.Type, Data: rl.Data, AppendedAt: rl.AppendedAt})
		})
	}
	for i := next; i <= min(to, lLast); i++ {
		var rl raft.Log // fresh: the store decodes into the slices it finds
		if err := l.h.Live.GetLog(i, &rl); err != nil {
			return fmt.Errorf("live log entry %d: %w", i, err)
		}
		if err := fn(Entry{Index: rl.Index, Term: rl.Term, Type: rl.Type, Data: rl.Data, AppendedAt: rl.AppendedAt}); err != nil {
			return err
		}
	}
	return nil
}

// ArchiveDir is where a node keeps its archive: in its data directory, next
// to the Raft store (deep storage is local there, so "in deep storage" and
// "in the data directory" are the same disk).
func ArchiveDir(dataDir string) string { return filepath.Join(dataDir, "audit-archive") }

// OpenDir opens the history of a stopped node's data directory, read-only.
// The returned function closes it.
func OpenDir(dataDir string) (*History, func() error, error) {
	raftDir := filepath.Join(dataDir, "raft")
	store, err := boltlog.Open(filepath.Join(raftDir, "raft.db"), &bolt.Options{Timeout: time.Second, ReadOnly: true}, false)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s (stop the node first, or ask it over HTTP with --url): %w", raftDir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(raftDir, 1, hclog.NewNullLogger())
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	h := &History{Live: store, Snaps: snaps}
	if _, err := os.Stat(filepath.Join(ArchiveDir(dataDir), manifestFile)); err == nil {
		a, err := OpenArchive(ArchiveDir(dataDir), 0, nil)
		if err != nil {
			store.Close()
			return nil, nil, err
		}
		h.Archive = a
	}
	return h, store.Close, nil
}
