package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"strata/cluster/boltlog"
	"strata/fsm"
)

// Online backup and restore of the control plane. A backup is the state
// machine's snapshot as of an applied entry (fsm.FSM.Freeze: the format Raft
// snapshots persist), with that entry's index and term; the sha256 of its
// bytes is the state digest `strata audit verify` and
// /svc/coordinator/v1/audit/digest?at=<index> report for that index, so a
// backup can be checked against the live cluster. A restore writes it as
// the only Raft snapshot of a fresh node's store, with the new cluster's
// membership: started, the nodes load it and elect a leader as after any
// restart.

// Backup is a frozen copy of the state of the last applied entry.
type Backup struct {
	Index, Term uint64
	Snapshot    io.WriterTo // the snapshot bytes, written while the node goes on
}

// Backup freezes the applied state (cheap, under the state machine's lock)
// and finds the term of its last entry.
func (n *Node) Backup() (Backup, error) {
	index, snap := n.fsm.Freeze()
	if index == 0 {
		return Backup{}, errors.New("nothing is applied yet")
	}
	term, err := n.termAt(index)
	if err != nil {
		return Backup{}, err
	}
	return Backup{Index: index, Term: term, Snapshot: snap}, nil
}

// termAt is the term of entry index: from the log, or, once the log is
// trimmed past it, from the snapshot taken at it.
func (n *Node) termAt(index uint64) (uint64, error) {
	var l raft.Log
	if err := n.logs.GetLog(index, &l); err == nil {
		return l.Term, nil
	}
	metas, err := n.history.Snaps.List()
	if err != nil {
		return 0, err
	}
	for _, m := range metas {
		if m.Index == index {
			return m.Term, nil
		}
	}
	return 0, fmt.Errorf("the term of entry %d is neither in the log nor in a snapshot", index)
}

// RestoreOptions say where a backup is restored: a fresh node's data
// directory and the membership of the cluster it starts (Peers; empty: a
// single node with ID at RaftAddr).
type RestoreOptions struct {
	DataDir  string
	ID       string
	RaftAddr string
	Peers    []Peer
}

// Restore writes a backup's snapshot (index, term, its bytes in r and their
// sha256) as the Raft state of a fresh data directory. The bytes are
// checked first, against the checksum and by reading them as the state
// machine would: nothing is written from a damaged file. A directory that
// holds Raft state already is refused.
func Restore(o RestoreOptions, index, term uint64, sum string, r io.ReadSeeker) error {
	var servers []raft.Server
	found := false
	peers := o.Peers
	if len(peers) == 0 {
		if o.RaftAddr == "" {
			return errors.New("restore: a single node needs its raft address")
		}
		peers = []Peer{{ID: o.ID, RaftAddr: o.RaftAddr}}
	}
	for _, p := range peers {
		servers = append(servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr), Suffrage: raft.Voter})
		found = found || p.ID == o.ID
	}
	if !found {
		return fmt.Errorf("restore: this node's id %q is not in the peer list", o.ID)
	}
	if index == 0 || term == 0 {
		return fmt.Errorf("restore: the backup names index %d, term %d", index, term)
	}
	// Check the bytes before anything is written.
	h := sha256.New()
	f := fsm.New(nil)
	if err := f.Restore(io.NopCloser(io.TeeReader(r, h))); err != nil {
		return fmt.Errorf("restore: the backup does not read as a state snapshot: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("restore: the backup's bytes have sha256 %s, its header says %s: the file is damaged", got, sum)
	}
	if got := f.LastIndex(); got != index {
		return fmt.Errorf("restore: the snapshot is of index %d, its header says %d", got, index)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return err
	}

	raftDir := filepath.Join(o.DataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o755); err != nil {
		return err
	}
	store, err := boltlog.Open(filepath.Join(raftDir, logFileName), &bolt.Options{Timeout: 2 * time.Second}, false)
	if err != nil {
		return fmt.Errorf("restore: open %s (is a node running on this data dir?): %w", raftDir, err)
	}
	defer store.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(raftDir, 2, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	has, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return err
	}
	if has {
		return fmt.Errorf("restore: %s holds Raft state already: restore into an empty data directory", raftDir)
	}
	// The store encodes the membership through a transport; the in-memory
	// one encodes addresses as themselves, as the TCP transport does.
	_, trans := raft.NewInmemTransport("")
	defer trans.Close()
	sink, err := snaps.Create(raft.SnapshotVersionMax, index, term, raft.Configuration{Servers: servers}, index, trans)
	if err != nil {
		return err
	}
	if _, err := io.Copy(sink, r); err != nil {
		sink.Cancel()
		return err
	}
	if err := sink.Close(); err != nil {
		return err
	}
	// The node's term starts at the backup's, so that the terms of the
	// entries it appends follow the snapshot's (a later term is how Raft
	// tells which log is newer).
	return store.SetUint64(keyCurrentTerm, term)
}

// keyCurrentTerm is hashicorp/raft's stable-store key of the current term.
var keyCurrentTerm = []byte("CurrentTerm")
