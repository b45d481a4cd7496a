package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"strata/commands"
	"strata/fsm"
)

// StateAt rebuilds the state machine as it was after index: from the newest
// snapshot at or before index (the node's own, or an archived one), then the
// log up to index. It returns the state and the index it stands at. The
// state belongs to the caller alone (read it without the FSM's lock).
func (h *History) StateAt(index uint64) (*fsm.State, uint64, error) {
	st, _, err := h.Replay(index, false, nil)
	if err != nil {
		return nil, 0, err
	}
	return st, index, nil
}

// Replay is StateAt that also tells what it did: it returns the index of the
// snapshot it started from (0: the empty state) and calls each, when set,
// with every entry it applied after it and the state machine's result
// (fsm.Result; nil for Raft's own entries). fromStart ignores snapshots: the
// whole log is replayed from its first entry, archive included.
func (h *History) Replay(index uint64, fromStart bool, each func(Entry, any)) (*fsm.State, uint64, error) {
	log := h.Log()
	last, err := log.LastIndex()
	if err != nil {
		return nil, 0, err
	}
	if index > last {
		return nil, 0, fmt.Errorf("%w: index %d is after the last index %d", ErrBadAt, index, last)
	}
	f := fsm.New(hclog.NewNullLogger())
	var base uint64
	if !fromStart {
		if base, err = h.restoreBase(f, index); err != nil {
			return nil, 0, err
		}
	}
	if base < index {
		if err := applyRange(f, log, base+1, index, each); err != nil {
			return nil, 0, err
		}
	}
	var st *fsm.State
	f.Read(func(s *fsm.State) { st = s })
	return st, base, nil
}

// restoreBase restores into f the newest snapshot at or before index and
// returns its index (0 with no snapshot: replay starts from the first entry).
func (h *History) restoreBase(f *fsm.FSM, index uint64) (uint64, error) {
	var live *raft.SnapshotMeta
	if h.Snaps != nil {
		metas, err := h.Snaps.List()
		if err != nil {
			return 0, fmt.Errorf("list snapshots: %w", err)
		}
		for _, m := range metas {
			if m.Index <= index && (live == nil || m.Index > live.Index) {
				live = m
			}
		}
	}
	var arch snapshotMeta
	archived := false
	if h.Archive != nil {
		arch, archived = h.Archive.snapshotAt(index)
	}
	if live != nil && (!archived || live.Index >= arch.Index) {
		_, rc, err := h.Snaps.Open(live.ID)
		if err == nil {
			if err := f.Restore(rc); err != nil {
				return 0, fmt.Errorf("restore snapshot %s: %w", live.ID, err)
			}
			return live.Index, nil
		}
		// Reaped since List (a newer one was taken): the archive has it.
		if !archived || arch.Index != live.Index {
			return 0, fmt.Errorf("open snapshot %s: %w", live.ID, err)
		}
	}
	if archived {
		rc, err := h.Archive.openSnapshot(arch)
		if err != nil {
			return 0, err
		}
		if err := f.Restore(rc); err != nil {
			return 0, fmt.Errorf("restore archived snapshot %s: %w", arch.File, err)
		}
		return arch.Index, nil
	}
	if h.Archive != nil {
		if p := h.Archive.prunedThrough(); p > 0 && index <= p {
			return 0, fmt.Errorf("%w: index %d is before the kept history (entries up to %d were dropped by svc.audit.archive.retention)", ErrBadAt, index, p)
		}
	}
	return 0, nil
}

// applyRange applies the entries from..to of log to f. A command this binary
// cannot apply is an error, not the panic a live node's FSM raises.
func applyRange(f *fsm.FSM, log Log, from, to uint64, each func(Entry, any)) (err error) {
	var cur uint64
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("replay stopped at entry %d: %v", cur, r)
		}
	}()
	var l raft.Log
	return log.Scan(from, to, func(e Entry) error {
		cur = e.Index
		l = raft.Log{Index: e.Index, Term: e.Term, Type: e.Type, Data: e.Data, AppendedAt: e.AppendedAt}
		res := f.Apply(&l)
		if each != nil {
			each(e, res)
		}
		return nil
	})
}

// IndexAt returns the last index whose command the leader stamped at or
// before t. Raft's own entries, which carry no command stamp, count by the
// time the leader appended them (or with the command before them when that
// is unknown). 0 is the empty state before the first entry.
func (h *History) IndexAt(t time.Time) (uint64, error) {
	ms := t.UnixMilli()
	log := h.Log()
	from, err := log.FirstIndex()
	if err != nil {
		return 0, err
	}
	last, err := log.LastIndex()
	if err != nil {
		return 0, err
	}
	if h.Archive != nil {
		// Skip the chunks entirely before t.
		for _, c := range h.Archive.chunks() {
			if c.FirstTimeMs != 0 && c.FirstTimeMs <= ms {
				from = c.First
			}
		}
	}
	var best uint64
	stop := errors.New("stop")
	err = log.Scan(from, last, func(e Entry) error {
		if entryTimeMs(e) > ms {
			return stop
		}
		best = e.Index
		return nil
	})
	if err != nil && err != stop {
		return 0, err
	}
	if best == 0 && from > 1 {
		return 0, fmt.Errorf("%w: %s is before the history this node holds (it starts at index %d)", ErrBadAt, t.UTC().Format(time.RFC3339Nano), from)
	}
	return best, nil
}

// entryTimeMs is an entry's time: a command's leader stamp, else the time
// the leader appended it (0: unknown).
func entryTimeMs(e Entry) int64 {
	if e.Type == raft.LogCommand {
		env, _, _ := commands.Decode(e.Data)
		return env.TimeMs
	}
	if e.AppendedAt.IsZero() {
		return 0
	}
	return e.AppendedAt.UnixMilli()
}

// Digest is what two replicas compare: the SHA-256 of the state's snapshot
// bytes (what `strata log replay` prints) and of each table's part of them,
// so that a disagreement names the first table that differs.
type Digest struct {
	Index  uint64        `json:"index"`
	Bytes  int64         `json:"bytes"`
	SHA256 string        `json:"sha256"`
	Tables []TableDigest `json:"tables"`
}

// TableDigest is one table's part of a Digest.
type TableDigest struct {
	Table   string `json:"table"`
	Records int    `json:"records"`
	SHA256  string `json:"sha256"`
}

// DigestOf digests a state.
func DigestOf(s *fsm.State, index uint64) (Digest, error) {
	pr, pw := io.Pipe()
	go func() {
		_, err := s.WriteSnapshot(pw)
		pw.CloseWithError(err)
	}()
	d, err := digestStream(pr)
	pr.Close()
	d.Index = index
	return d, err
}

// digestStream reads snapshot frames (fsm/snapshot.go's format: uvarint
// length, bytes; a header, then per table a {"table","records"} frame and its
// records, then an end marker) hashing the whole and each table.
func digestStream(r io.Reader) (Digest, error) {
	var d Digest
	all := sha256.New()
	cr := &countingReader{r: io.TeeReader(r, all)}
	br := bufio.NewReaderSize(cr, 1<<16)
	var buf []byte
	frame := func(h hash.Hash) ([]byte, error) {
		n, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, err
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, err
		}
		if h != nil {
			var hdr [binary.MaxVarintLen64]byte
			h.Write(hdr[:binary.PutUvarint(hdr[:], n)])
			h.Write(buf)
		}
		return buf, nil
	}
	if _, err := frame(nil); err != nil {
		return d, fmt.Errorf("snapshot header: %w", err)
	}
	for {
		th := sha256.New()
		b, err := frame(th)
		if err != nil {
			return d, fmt.Errorf("snapshot table header: %w", err)
		}
		var hdr struct {
			Table   string `json:"table"`
			Records int    `json:"records"`
		}
		if err := json.Unmarshal(b, &hdr); err != nil {
			return d, fmt.Errorf("snapshot table header: %w", err)
		}
		if hdr.Table == "" {
			break
		}
		for i := 0; i < hdr.Records; i++ {
			if _, err := frame(th); err != nil {
				return d, fmt.Errorf("snapshot table %s: %w", hdr.Table, err)
			}
		}
		d.Tables = append(d.Tables, TableDigest{Table: hdr.Table, Records: hdr.Records, SHA256: hex.EncodeToString(th.Sum(nil))})
	}
	// The rest (none today) counts in the whole.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return d, err
	}
	d.Bytes = cr.n
	d.SHA256 = hex.EncodeToString(all.Sum(nil))
	return d, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FirstDifference names the first table whose digest differs between a and
// b ("" when they agree).
func FirstDifference(a, b Digest) string {
	for i := 0; i < max(len(a.Tables), len(b.Tables)); i++ {
		switch {
		case i >= len(a.Tables):
			return b.Tables[i].Table
		case i >= len(b.Tables):
			return a.Tables[i].Table
		case a.Tables[i] != b.Tables[i]:
			return a.Tables[i].Table
		}
	}
	if a.SHA256 != b.SHA256 {
		return "(snapshot header)"
	}
	return ""
}
