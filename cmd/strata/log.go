package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"strata/audit"
	"strata/commands"
	"strata/fsm"
)

// runLog implements `strata log dump|replay`: the audit tooling that reads
// a node's Raft log, the archive of what compaction trimmed, and its
// snapshots. --data reads a stopped node's directory; replay --url asks a
// running control node for the digest of its own replay.
func runLog(args []string) error {
	const synopsis = "log dump|replay --data DIR | dump|replay --url URL"
	if len(args) > 0 && isHelp(args[0]) {
		return verbHelp("log", synopsis)
	}
	if len(args) == 0 {
		return usagef("usage: strata %s", synopsis)
	}
	if args[0] != "dump" && args[0] != "replay" {
		return unknownVerb("log", args[0], "dump", "replay")
	}
	fs := newFlagSet("log "+args[0], "log "+args[0]+" --data DIR")
	cacertFlag(fs)
	data := fs.String("data", "./var", "data directory of a (stopped) node")
	cfg := configFlag(fs)
	var u, at *string
	var fromStart *bool
	if args[0] == "dump" {
		u = fs.String("url", "", "a running control node's URL: list its commands, oldest first (the audit listing: Raft's own entries left out, secrets redacted)")
	}
	if args[0] == "replay" {
		u = fs.String("url", "", "a running control node's URL: print the digest of its replay instead")
		at = fs.String("at", "", "replay up to this Raft index or ISO-8601 time (default: the whole log)")
		fromStart = fs.Bool("from-start", false, "ignore snapshots: replay every entry from the first, archive included")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("log %s: unexpected argument %q", args[0], fs.Arg(0))
	}
	archiveConfig = *cfg
	if u != nil && *u != "" && args[0] == "dump" {
		return dumpOnline(strings.TrimRight(*u, "/"), stdout)
	}
	if u != nil && *u != "" {
		return replayOnline(strings.TrimRight(*u, "/"), *at, stdout)
	}
	// A damaged store is named, not handed to bbolt (which panics on some damage).
	h, closeFn, err := openHistory(*data)
	if err != nil {
		return err
	}
	defer closeFn()
	if args[0] == "dump" {
		return dumpLog(h.Log(), stdout)
	}
	return replayLog(h, *at, *fromStart, stdout)
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

func dumpLog(log audit.Log, out io.Writer) error {
	first, err := log.FirstIndex()
	if err != nil {
		return err
	}
	last, err := log.LastIndex()
	if err != nil {
		return err
	}
	if last == 0 {
		return nil
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // "<redacted>" reads as written
	return log.Scan(first, last, func(l audit.Entry) error {
		e := dumpedEntry{Index: l.Index, Term: l.Term, Kind: l.Type.String()}
		if l.Type == raft.LogCommand {
			env, _, err := commands.Decode(l.Data)
			// Redacted as the audit listing is: credentials (a password's
			// hash, a spec's keys) are not for whoever reads the dump.
			e.Type, e.Payload = env.Type, audit.Redact(env.Payload)
			e.Time = time.UnixMilli(env.TimeMs).UTC().Format("2006-01-02T15:04:05.000Z")
			a := env.Audit
			e.Audit = &a
			if err != nil {
				e.Error = err.Error()
			}
		}
		return enc.Encode(e)
	})
}

// replayLog rebuilds the state from the newest snapshot at or before the
// target (the node's own or an archived one; none with fromStart), applying
// every later entry, and prints the resulting snapshot's digest: two nodes
// that agree print the same digest.
func replayLog(h *audit.History, at string, fromStart bool, out io.Writer) error {
	last, err := h.Log().LastIndex()
	if err != nil {
		return err
	}
	if at != "" {
		if last, err = h.ParseAt(at); err != nil {
			return err
		}
	}
	// Only command entries change the state; Raft's own entries
	// (configuration changes, the no-op a new leader writes, barriers)
	// are read and skipped, so the state's index is the last command's.
	var cmds, rejected int
	other := map[raft.LogType]int{}
	st, base, err := h.Replay(last, fromStart, func(e audit.Entry, res any) {
		if e.Type != raft.LogCommand {
			other[e.Type]++
			return
		}
		cmds++
		if r, ok := res.(fsm.Result); ok && r.Err != nil {
			rejected++
		}
	})
	if err != nil {
		return err
	}
	if base > 0 {
		fmt.Fprintf(out, "restored snapshot at index %d\n", base)
	}
	d, err := audit.DigestOf(st, last)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, replaySummary(base+1, last, cmds, rejected, other, st.Index()))
	fmt.Fprintf(out, "state: %d bytes, sha256 %s\n", d.Bytes, d.SHA256)
	return nil
}

// dumpOnline prints a running node's commands oldest first: every page of
// the audit listing (GET /svc/coordinator/v1/audit, newest first), reversed.
func dumpOnline(base string, out io.Writer) error {
	var records []json.RawMessage
	var before uint64
	for {
		q := url.Values{"limit": {"1000"}}
		if before > 0 {
			q.Set("before", fmt.Sprint(before))
		}
		u := base + "/svc/coordinator/v1/audit?" + q.Encode()
		code, body, err := httpGet(u)
		if err != nil {
			return err
		}
		var page struct {
			Records []json.RawMessage `json:"records"`
			Next    uint64            `json:"next"`
			Error   string            `json:"error"`
		}
		if err := json.Unmarshal(body, &page); err != nil || code != 200 {
			return fmt.Errorf("%s: HTTP %d %s", u, code, strings.TrimSpace(string(body)))
		}
		records = append(records, page.Records...)
		if page.Next == 0 {
			break
		}
		before = page.Next
	}
	for i := len(records) - 1; i >= 0; i-- {
		if _, err := fmt.Fprintf(out, "%s\n", records[i]); err != nil {
			return err
		}
	}
	return nil
}

// replayOnline prints the digest a running control node computes by its own
// replay (GET .../audit/digest), in replayLog's words.
func replayOnline(base, at string, out io.Writer) error {
	q := url.Values{}
	if at != "" {
		q.Set("at", at)
	}
	var d nodeDigest
	if err := getAudit(base, "digest", q, &d); err != nil {
		return err
	}
	fmt.Fprintf(out, "node %s replayed its history to index %d\n", d.Node, d.Index)
	fmt.Fprintf(out, "state: %d bytes, sha256 %s\n", d.Bytes, d.SHA256)
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
