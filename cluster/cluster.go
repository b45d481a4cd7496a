// Package cluster runs a control node's Raft: a bbolt log and stable store
// (package boltlog, in raft-boltdb's layout), a file snapshot store and a TCP transport, around the FSM of
// package fsm. It proposes commands (stamping the leader's time), tracks who
// leads and where its HTTP API is, and knows when a fresh leader has caught up
// with everything committed before it (so its reads are linearizable).
package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"strata/audit"
	"strata/cluster/boltlog"
	"strata/commands"
	"strata/fsm"
	"strata/storage/deep"
)

// Peer is one control node of a static cluster.
type Peer struct {
	ID       string
	RaftAddr string
	HTTPURL  string
}

// ParsePeers parses `ID=RAFTHOST:PORT=HTTPURL,...`.
func ParsePeers(s string) ([]Peer, error) {
	var out []Peer
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.SplitN(part, "=", 3)
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("peer %q: want ID=RAFTHOST:PORT=HTTPURL, e.g. n1=127.0.0.1:8300=http://127.0.0.1:8081", part)
		}
		if _, _, err := net.SplitHostPort(f[1]); err != nil {
			return nil, fmt.Errorf("peer %q: raft address %q: %v", part, f[1], err)
		}
		if !strings.HasPrefix(f[2], "http://") && !strings.HasPrefix(f[2], "https://") {
			return nil, fmt.Errorf("peer %q: HTTP URL %q must start with http:// or https://", part, f[2])
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("peer id %q listed twice", f[0])
		}
		seen[f[0]] = true
		out = append(out, Peer{ID: f[0], RaftAddr: f[1], HTTPURL: strings.TrimRight(f[2], "/")})
	}
	return out, nil
}

// Config configures a node.
type Config struct {
	ID       string
	RaftAddr string // bind and advertise address of the Raft transport
	HTTPURL  string // this node's advertised HTTP base URL
	DataDir  string
	Peers    []Peer // empty: a single node that bootstraps itself

	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	MaxAppendEntries   int
	SnapshotThreshold  uint64
	SnapshotInterval   time.Duration
	TrailingLogs       uint64
	SnapshotRetain     int
	NoSync             bool // skip fsync of the log (benchmarks only)
	// ArchiveRetention is how long the audit archive keeps trimmed entries
	// (0: forever).
	ArchiveRetention time.Duration
	// ArchiveStorage, when set, holds the archive's chunks and snapshots
	// under ArchivePrefix (S3 deep storage); nil keeps them in the data
	// directory (local deep storage is a disk of the node's anyway).
	ArchiveStorage deep.DeepStorage
	ArchivePrefix  string
	// RaftTLS, when set, carries Raft over TLS (see tlsStream): peers
	// accepted only with a certificate RaftTLS.Server verifies, and
	// dialled with RaftTLS.Client.
	RaftTLS *RaftTLS

	// wrapLog, set by tests only, wraps the bbolt log store (fault injection).
	wrapLog func(raft.LogStore) raft.LogStore

	Logger hclog.Logger
}

// ErrNotLeader is returned by Propose on a node that is not the leader.
var ErrNotLeader = errors.New("not the leader")

// Node is a running control node.
type Node struct {
	cfg     Config
	raft    *raft.Raft
	fsm     *fsm.FSM
	trans   *raft.NetworkTransport
	logs    *boltlog.Store
	history *audit.History
	logger  hclog.Logger

	peersMu sync.RWMutex
	httpURL map[raft.ServerID]string

	ready    atomic.Bool  // leader and caught up
	readyAt  atomic.Int64 // unix nanos when ready last became true
	stopCh   chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// Start opens (or creates) the node's data dir and starts Raft. A fresh data dir
// is bootstrapped with the peer list (or the node alone); an existing one
// rejoins with the state it holds.
func Start(cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.ID == "" {
		return nil, errors.New("node id is empty: set --id or svc.node.id")
	}
	raftDir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = startupElectionQuiet{cfg.Logger.Named("raft")}
	setDur(&rc.HeartbeatTimeout, cfg.HeartbeatTimeout)
	setDur(&rc.ElectionTimeout, cfg.ElectionTimeout)
	setDur(&rc.LeaderLeaseTimeout, cfg.LeaderLeaseTimeout)
	setDur(&rc.CommitTimeout, cfg.CommitTimeout)
	setDur(&rc.SnapshotInterval, cfg.SnapshotInterval)
	if cfg.MaxAppendEntries > 0 {
		rc.MaxAppendEntries = cfg.MaxAppendEntries
	}
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	// Group concurrent proposals into one log append (and one fsync).
	rc.BatchApplyCh = true
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, fmt.Errorf("raft config: %w", err)
	}

	// A damaged store is refused here, by file, before bbolt or Raft read it
	// (both panic on some damage).
	if err := checkSnapshots(raftDir); err != nil {
		err.DataDir = cfg.DataDir
		return nil, err
	}
	store, err := openLogStore(filepath.Join(raftDir, logFileName), cfg.NoSync)
	var damaged *DamagedStoreError
	if errors.As(err, &damaged) {
		damaged.DataDir = cfg.DataDir
		return nil, damaged
	}
	if err != nil {
		return nil, fmt.Errorf("open raft log %s (is another strata using this --data dir?): %w", raftDir, err)
	}
	retain := cfg.SnapshotRetain
	if retain <= 0 {
		retain = 2
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(raftDir, retain, cfg.Logger.Named("snapshot"))
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("open snapshot store: %w", err)
	}
	addr, err := net.ResolveTCPAddr("tcp", cfg.RaftAddr)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("raft address %q: %w", cfg.RaftAddr, err)
	}
	trans, err := newTransport(cfg, addr)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("listen on raft address %s: %w", cfg.RaftAddr, err)
	}

	n := &Node{
		cfg:     cfg,
		fsm:     fsm.New(cfg.Logger.Named("fsm")),
		trans:   trans,
		logs:    store,
		logger:  cfg.Logger,
		httpURL: map[raft.ServerID]string{},
		stopCh:  make(chan struct{}),
	}
	peers := cfg.Peers
	if len(peers) == 0 {
		peers = []Peer{{ID: cfg.ID, RaftAddr: cfg.RaftAddr, HTTPURL: cfg.HTTPURL}}
	}
	for _, p := range peers {
		n.httpURL[raft.ServerID(p.ID)] = p.HTTPURL
	}
	n.httpURL[raft.ServerID(cfg.ID)] = cfg.HTTPURL

	has, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		trans.Close()
		store.Close()
		return nil, fmt.Errorf("inspect raft state: %w", err)
	}
	marker := filepath.Join(raftDir, rejoinMarker)
	_, rejoinErr := os.Stat(marker)
	rejoin := rejoinErr == nil
	switch {
	case rejoin && has:
		// The leader has reached the recovered node: it has a term now (and
		// soon a snapshot), so it never bootstraps; the marker has served.
		os.Remove(marker)
	case rejoin && len(peers) < 2:
		trans.Close()
		store.Close()
		return nil, fmt.Errorf("%s: this node's Raft store was moved aside by `strata recover`, but it has no peer to restore it from "+
			"(a single node's state lives only in its store: move the old store back or restore the data dir from a backup)", marker)
	case rejoin:
		// Still a member of the cluster's configuration: without bootstrapping
		// a configuration of its own the node never campaigns with its empty
		// log; it waits for the leader, which finds the log empty and sends
		// its snapshot (InstallSnapshot) and the entries after it.
		cfg.Logger.Info("recovered store: waiting for the leader to send its snapshot", "dir", raftDir)
	case !has:
		var servers []raft.Server
		found := false
		for _, p := range peers {
			servers = append(servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr), Suffrage: raft.Voter})
			found = found || p.ID == cfg.ID
		}
		if !found {
			trans.Close()
			store.Close()
			return nil, fmt.Errorf("this node's id %q is not in the peer list", cfg.ID)
		}
		if err := raft.BootstrapCluster(rc, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			trans.Close()
			store.Close()
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
		cfg.Logger.Info("bootstrapped new cluster", "servers", len(servers))
	default:
		cfg.Logger.Info("rejoining with existing state", "dir", raftDir)
	}
	// Entries Raft trims after a snapshot are archived first, never lost.
	archive, err := audit.OpenArchive(audit.ArchiveDir(cfg.DataDir), cfg.ArchiveRetention, cfg.Logger.Named("archive"))
	if err != nil {
		trans.Close()
		store.Close()
		return nil, err
	}
	if cfg.ArchiveStorage != nil {
		archive.InDeepStorage(cfg.ArchiveStorage, cfg.ArchivePrefix)
	}
	archiving := &archivingStore{LogStore: store, archive: archive, snaps: snaps, logger: cfg.Logger.Named("archive")}
	n.history = &audit.History{Archive: archive, Live: store, Snaps: snaps, Committed: archiving.applied}
	var logStore raft.LogStore = archiving
	if cfg.wrapLog != nil {
		logStore = cfg.wrapLog(store)
	}
	// Recent entries are served to replication from memory instead of bbolt reads.
	cached, err := raft.NewLogCache(4096, logStore)
	if err != nil {
		trans.Close()
		store.Close()
		return nil, err
	}
	r, err := raft.NewRaft(rc, n.fsm, newStagingStore(cached), store, snaps, trans)
	if err != nil {
		trans.Close()
		store.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.raft = r
	archiving.raft.Store(r)
	n.wg.Add(1)
	go n.watchLeadership()
	return n, nil
}

// openLogStore opens the bbolt file that is both the Raft log and stable store.
// A damaged file is a *DamagedStoreError, never a panic: it is checked first
// (bbolt's own checks on open panic or fault on it), and a panic that still
// comes out of bbolt on this goroutine is turned into that error too.
func openLogStore(path string, noSync bool) (store *boltlog.Store, err error) {
	if err := checkBoltFile(path); err != nil {
		return nil, &DamagedStoreError{File: path, Problem: err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			store, err = nil, &DamagedStoreError{File: path, Problem: fmt.Sprint("bbolt: ", r)}
		}
	}()
	// The freelist is rebuilt on open instead of written on every commit:
	// smaller writes per fsync on the hot path of every proposal.
	return boltlog.Open(path, &bolt.Options{Timeout: 2 * time.Second, NoSync: noSync, NoFreelistSync: true, FreelistType: bolt.FreelistMapType}, noSync)
}

func setDur(dst *time.Duration, v time.Duration) {
	if v > 0 {
		*dst = v
	}
}

// watchLeadership marks the node ready once, as leader, it has applied every
// entry committed by earlier leaders (a barrier). Until then leader-only reads
// would risk serving state older than an acknowledged write.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	ch := n.raft.LeaderCh()
	for {
		select {
		case <-n.stopCh:
			return
		case isLeader := <-ch:
			n.ready.Store(false)
			if !isLeader {
				n.logger.Info("lost leadership")
				continue
			}
			start := time.Now()
			if err := n.raft.Barrier(10 * time.Second).Error(); err != nil {
				n.logger.Warn("leadership barrier failed", "error", err)
				continue
			}
			if n.raft.State() == raft.Leader {
				n.readyAt.Store(time.Now().UnixNano())
				n.ready.Store(true)
				n.logger.Info("became leader", "catch_up", time.Since(start))
			}
		}
	}
}

// FSM returns the node's state machine (for reads).
func (n *Node) FSM() *fsm.FSM { return n.fsm }

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.ID }

// HTTPURL returns this node's advertised HTTP URL.
func (n *Node) HTTPURL() string { return n.cfg.HTTPURL }

// IsLeader reports whether this node is the leader and has caught up.
func (n *Node) IsLeader() bool { return n.ready.Load() && n.raft.State() == raft.Leader }

// LeaderSince returns when this node last became a caught-up leader (zero time
// if it never did). Leader duties that must first learn the cluster (the
// coordinator's view of the historicals) wait from it.
func (n *Node) LeaderSince() time.Time {
	ns := n.readyAt.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// RaftLeader reports whether Raft considers this node leader (ready or not).
func (n *Node) RaftLeader() bool { return n.raft.State() == raft.Leader }

// LeaderURL returns the HTTP URL of the current leader, or "" when unknown.
func (n *Node) LeaderURL() string {
	_, id := n.raft.LeaderWithID()
	if id == "" {
		return ""
	}
	n.peersMu.RLock()
	defer n.peersMu.RUnlock()
	return n.httpURL[id]
}

// Joined reports whether this node is part of a cluster with a known leader.
func (n *Node) Joined() bool {
	_, id := n.raft.LeaderWithID()
	return id != ""
}

// State returns the Raft state name (Leader, Follower, Candidate, Shutdown).
func (n *Node) State() string { return n.raft.State().String() }

// Stats returns Raft's statistics.
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

// VerifyRead confirms, by a round of heartbeats, that this node still leads, so
// that a read it serves reflects every acknowledged write.
func (n *Node) VerifyRead() error {
	if !n.IsLeader() {
		return ErrNotLeader
	}
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return ErrNotLeader
	}
	return nil
}

// Propose replicates cmd and returns the apply result. The leader stamps the time,
// never earlier than the last applied stamp, so audit times never go backwards.
func (n *Node) Propose(cmd commands.Command, audit commands.Audit, timeout time.Duration) (any, error) {
	if n.raft.State() != raft.Leader {
		return nil, ErrNotLeader
	}
	now := time.Now().UnixMilli()
	if last := n.fsm.LastTime(); now < last {
		now = last
	}
	data, err := commands.Encode(cmd, now, audit)
	if err != nil {
		return nil, err
	}
	f := n.raft.Apply(data, timeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return nil, ErrNotLeader
		}
		return nil, fmt.Errorf("replicate: %w", err)
	}
	res, _ := f.Response().(fsm.Result)
	return res.Value, res.Err
}

// Snapshot forces a snapshot (and log trim per TrailingLogs).
func (n *Node) Snapshot() error { return n.raft.Snapshot().Error() }

// TransferLeadership asks Raft to hand leadership to another voter.
func (n *Node) TransferLeadership() error { return n.raft.LeadershipTransfer().Error() }

// Done is closed when Shutdown begins: background work tied to the node stops.
func (n *Node) Done() <-chan struct{} { return n.stopCh }

// Shutdown stops Raft and closes the stores.
func (n *Node) Shutdown() error {
	var err error
	n.stopOnce.Do(func() {
		close(n.stopCh)
		err = n.raft.Shutdown().Error()
		n.wg.Wait()
		n.trans.Close()
		if cerr := n.logs.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// startupElectionQuiet logs hashicorp/raft's "heartbeat timeout reached"
// warning at info level when no leader was ever known: that is how every
// node's first election starts, not a failure. After a leader has been seen
// it stays a warning.
type startupElectionQuiet struct{ hclog.Logger }

func (l startupElectionQuiet) Warn(msg string, args ...interface{}) {
	if msg == "heartbeat timeout reached, starting election" && noLeaderKnown(args) {
		l.Logger.Info(msg, args...)
		return
	}
	l.Logger.Warn(msg, args...)
}

// noLeaderKnown reads raft's key/value arguments: last-leader-addr is empty
// before the first leader.
func noLeaderKnown(args []interface{}) bool {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == "last-leader-addr" {
			return fmt.Sprint(args[i+1]) == ""
		}
	}
	return false
}
