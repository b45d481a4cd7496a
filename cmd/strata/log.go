package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	bolt "go.etcd.io/bbolt"

	"strata/cluster"
	"strata/commands"
	"strata/fsm"
)

// runLog implements `strata log dump|replay --data DIR`: the audit tooling that
// reads a node's Raft log (and its latest snapshot) offline.
func runLog(args []string) error {
	const synopsis = "log dump|replay --data DIR"
	if len(args) > 0 && isHelp(args[0]) {
		return verbHelp("log", synopsis)
	}
	if len(args) == 0 || (args[0] != "dump" && args[0] != "replay") {
		return usagef("usage: strata %s", synopsis)
	}
	fs := newFlagSet("log "+args[0], "log "+args[0]+" --data DIR")
	data := fs.String("data", "./var", "data directory of a (stopped) node")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("log %s: unexpected argument %q", args[0], fs.Arg(0))
	}
	// A damaged store is named, not handed to bbolt (which panics on some damage).
	if err := cluster.CheckStore(*data); err != nil {
		return err
	}
	dir := filepath.Join(*data, "raft")
	store, err := raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(dir, "raft.db"),
		BoltOptions: &bolt.Options{Timeout: time.Second, ReadOnly: true},
	})
	if err != nil {
		return fmt.Errorf("open %s (stop the node first; the log is locked while it runs): %w", dir, err)
	}
	defer store.Close()
	if args[0] == "dump" {
		return dumpLog(store, stdout)
	}
	return replayLog(store, dir, stdout)
}

type dumpedEntry struct {
	Index   uint64          `json:"index"`
	Term    uint64          `json:"term"`
	Kind    string          `json:"kind"`
	Type    string          `json:"type,omitempty"`
	Time    string          `json:"time,omitempty"`
	Audit   *commands.Audit `json:"audit,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   string          `json:"error,omitempty"`
}

func dumpLog(store *raftboltdb.BoltStore, out io.Writer) error {
	first, _ := store.FirstIndex()
	last, _ := store.LastIndex()
	enc := json.NewEncoder(out)
	for i := first; i <= last && last > 0; i++ {
		var l raft.Log
		if err := store.GetLog(i, &l); err != nil {
			return fmt.Errorf("read log %d: %w", i, err)
		}
		e := dumpedEntry{Index: l.Index, Term: l.Term, Kind: l.Type.String()}
		if l.Type == raft.LogCommand {
			env, _, err := commands.Decode(l.Data)
			e.Type, e.Payload = env.Type, env.Payload
			e.Time = time.UnixMilli(env.TimeMs).UTC().Format("2006-01-02T15:04:05.000Z")
			a := env.Audit
			e.Audit = &a
			if err != nil {
				e.Error = err.Error()
			}
		}
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// replayLog restores the newest snapshot (if any) into a fresh FSM, applies every
// later entry, and prints the resulting snapshot's digest: two nodes that agree
// print the same digest.
func replayLog(store *raftboltdb.BoltStore, dir string, out io.Writer) error {
	f := fsm.New(hclog.NewNullLogger())
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 1, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	metas, err := snaps.List()
	if err != nil {
		return err
	}
	from := uint64(1)
	if len(metas) > 0 {
		_, rc, err := snaps.Open(metas[0].ID)
		if err != nil {
			return fmt.Errorf("open snapshot %s: %w", metas[0].ID, err)
		}
		if err := f.Restore(rc); err != nil {
			return fmt.Errorf("restore snapshot %s: %w", metas[0].ID, err)
		}
		from = metas[0].Index + 1
		fmt.Fprintf(out, "restored snapshot %s (index %d)\n", metas[0].ID, metas[0].Index)
	}
	last, _ := store.LastIndex()
	// Only command entries change the state; Raft's own entries
	// (configuration changes, the no-op a new leader writes, barriers)
	// are read and skipped, so the state's index is the last command's.
	var cmds, rejected int
	other := map[raft.LogType]int{}
	for i := from; i <= last; i++ {
		var l raft.Log
		if err := store.GetLog(i, &l); err != nil {
			return fmt.Errorf("read log %d: %w", i, err)
		}
		res := f.Apply(&l)
		if l.Type != raft.LogCommand {
			other[l.Type]++
			continue
		}
		cmds++
		if r, ok := res.(fsm.Result); ok && r.Err != nil {
			rejected++
		}
	}
	snap, _ := f.Snapshot()
	h := sha256.New()
	n, err := snap.(interface {
		WriteTo(io.Writer) (int64, error)
	}).WriteTo(h)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, replaySummary(from, last, cmds, rejected, other, f.LastIndex()))
	fmt.Fprintf(out, "state: %d bytes, sha256 %x\n", n, h.Sum(nil))
	return nil
}

// replaySummary says what a replay read: the range of entries, how many were
// commands (and how many of those the state machine refused, as the live node
// did), which other entries were skipped, and the index of the resulting state.
func replaySummary(from, last uint64, commands, rejected int, other map[raft.LogType]int, stateIndex uint64) string {
	if last < from {
		return fmt.Sprintf("no log entries after index %d; state at index %d", from-1, stateIndex)
	}
	s := fmt.Sprintf("read entries %d to %d (%d): %d commands applied", from, last, last-from+1, commands)
	if rejected > 0 {
		s += fmt.Sprintf(" (%d of them refused, as when they were first applied)", rejected)
	}
	var types []raft.LogType
	for t := range other {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		s += fmt.Sprintf(", %d %s skipped", other[t], raftEntryName(t))
	}
	return s + fmt.Sprintf("; state at index %d (its last command)", stateIndex)
}

// raftEntryName names Raft's own entry types for people.
func raftEntryName(t raft.LogType) string {
	switch t {
	case raft.LogNoop:
		return "no-op (leader election)"
	case raft.LogConfiguration, raft.LogAddPeerDeprecated, raft.LogRemovePeerDeprecated:
		return "configuration"
	case raft.LogBarrier:
		return "barrier"
	}
	return t.String()
}
