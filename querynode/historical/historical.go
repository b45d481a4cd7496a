// Package historical is the historical role: it keeps a local cache of the
// segments the cluster should serve (downloaded from deep storage and
// memory-mapped), announces what it serves to brokers, and answers their
// sub-queries over named segments with partial results.
//
// It polls the coordinator for the segments the retention rules assign it,
// loads what is missing and drops what is no longer assigned.
package historical

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/interval"
	"strata/metrics"
	"strata/protocol"
	"strata/segmeta"
	"strata/storage/deep"
)

// DeepStorage fetches the segment file a loadSpec names to localPath
// (deep.DeepStorage has this method).
type DeepStorage interface {
	Get(ctx context.Context, spec deep.LoadSpec, localPath string) error
}

// Config configures a Node.
type Config struct {
	// Name is the host:port brokers and clients know this server by.
	Name string
	// Locations are the segment cache directories.
	Locations []Location
	// Coordinators are base URLs of coordinator nodes (any node: followers
	// redirect to the leader).
	Coordinators []string
	Storage      DeepStorage
	// PollPeriod is the time between coordinator polls (default 250 ms; an
	// unchanged listing costs a 304).
	PollPeriod time.Duration
	// DropDelay keeps a dropped segment queryable (but unannounced) this
	// long, for brokers whose view is a poll behind (0: drop at once;
	// processes use 30 s, Druid's default).
	DropDelay time.Duration
	// LoadThreads bounds concurrent downloads and verifications (default 4).
	LoadThreads int
	// QueryThreads bounds the segments one sub-query reads at once
	// (default GOMAXPROCS).
	QueryThreads int
	// ScrubPeriod is the time between background re-verifications of every
	// cached segment file (default 1 h; negative: never). Reads never use
	// unverified bytes, but they answer from verified copies in memory
	// when they can; the scrub finds damage in the file behind them, so the
	// copy is dropped and downloaded again before a read needs the file.
	ScrubPeriod time.Duration
	// LocalOnly makes a node that serves only what ServeLocal hands it (a
	// middle manager's running tasks): no coordinator, cache or deep storage.
	LocalOnly bool
	Tier      string // default "_default_tier"
	Priority  int
	Client    *http.Client
	Logger    hclog.Logger
}

// Node is a running historical.
type Node struct {
	cfg      Config
	log      hclog.Logger
	metrics  atomic.Pointer[metrics.Queries] // nil: not recorded (metrics.go)
	qe       *queryEngine
	instance string

	mu       sync.Mutex
	served   map[string]*loaded // announced
	dropping map[string]*loaded // unannounced, still queryable until dropAt
	loading  map[string]bool
	retryAt  map[string]time.Time
	failures map[string]int
	want     map[string]*segmeta.DataSegment // the last coordinator listing
	keepOnly map[string]bool                 // of want: keep if held, never load (a handover)
	replaced map[string]replacement          // realtime ids a hand-off replaced (local.go)
	holds    map[string]chan struct{}        // owners publishing: their realtime reads wait (local.go)
	holdWait int                             // sub-queries waiting on a hold, for tests
	locs     []*location
	version  uint64
	lastList [32]byte
	listETag string // ETag of the last listing (its applied log index)
	pollErr  string
	synced   bool // an assignment was read once (syncLoop's goroutine only)

	ready   atomic.Bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	loadSem chan struct{}
	started atomic.Bool
}

// loaded is a segment in the cache. refs counts running sub-queries; a
// segment removed while read is closed by the last reader.
type loaded struct {
	seg    *segmeta.DataSegment
	dir    string
	loc    *location
	size   int64
	es     *engineSegment // nil for tombstones (no data)
	refs   int
	dropAt time.Time
	gone   bool
	owner  string // "" for coordinator-assigned segments; else its ServeLocal owner
	rt     bool   // realtime: rows not yet published
	seq    string // Served.Sequence of a local segment
	// offsets is Served.Offsets of a local realtime segment.
	offsets map[int32]int64
}

// New validates cfg and prepares the cache directories; Start begins work.
func New(cfg Config) (*Node, error) {
	if cfg.Name == "" {
		return nil, errors.New("historical: no server name")
	}
	if len(cfg.Locations) == 0 && !cfg.LocalOnly {
		return nil, errors.New("historical: no segment cache location")
	}
	if cfg.Storage == nil && !cfg.LocalOnly {
		return nil, errors.New("historical: no deep storage")
	}
	if cfg.PollPeriod <= 0 {
		cfg.PollPeriod = 250 * time.Millisecond
	}
	if cfg.DropDelay < 0 {
		cfg.DropDelay = 0
	}
	if cfg.LoadThreads <= 0 {
		cfg.LoadThreads = 4
	}
	if cfg.ScrubPeriod == 0 {
		cfg.ScrubPeriod = time.Hour
	}
	if cfg.Tier == "" {
		cfg.Tier = "_default_tier"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	var id [6]byte
	rand.Read(id[:])
	n := &Node{
		cfg:      cfg,
		log:      cfg.Logger,
		qe:       newQueryEngine(cfg.QueryThreads),
		instance: hex.EncodeToString(id[:]),
		served:   map[string]*loaded{},
		dropping: map[string]*loaded{},
		loading:  map[string]bool{},
		retryAt:  map[string]time.Time{},
		failures: map[string]int{},
		loadSem:  make(chan struct{}, cfg.LoadThreads),
	}
	for _, l := range cfg.Locations {
		if err := os.MkdirAll(l.Path, 0o755); err != nil {
			return nil, fmt.Errorf("historical: segment cache %s: %w", l.Path, err)
		}
		n.locs = append(n.locs, &location{Location: l})
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	return n, nil
}

// Start loads the segment cache in the background, then polls the
// coordinator until Close.
func (n *Node) Start() {
	if n.started.Swap(true) {
		return
	}
	if n.cfg.LocalOnly {
		n.ready.Store(true)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.loadCache()
		n.ready.Store(true)
		if n.cfg.ScrubPeriod > 0 {
			n.wg.Add(1)
			go n.scrubLoop()
		}
		n.syncLoop()
	}()
}

// Close stops polling and loading, waits for them, and unmaps every
// segment once its running queries have finished.
func (n *Node) Close() error {
	n.cancel()
	n.wg.Wait()
	n.cfg.Client.CloseIdleConnections()
	n.mu.Lock()
	var closeNow []*loaded
	for _, m := range []map[string]*loaded{n.served, n.dropping} {
		for id, l := range m {
			delete(m, id)
			l.gone = true
			if l.refs == 0 {
				closeNow = append(closeNow, l)
			}
		}
	}
	n.mu.Unlock()
	for _, l := range closeNow {
		if l.es != nil {
			l.es.Data.Close()
		}
	}
	return nil
}

// Ready reports whether the segments in the local cache at start-up are
// loaded (Druid's cacheInitialized).
func (n *Node) Ready() bool { return n.ready.Load() }

// Name returns the server name.
func (n *Node) Name() string { return n.cfg.Name }

// Metadata describes this server.
func (n *Node) Metadata() protocol.ServerMetadata {
	var maxSize int64
	for _, l := range n.cfg.Locations {
		maxSize += l.MaxSize
	}
	typ := "historical"
	if n.cfg.LocalOnly {
		typ = "indexer-executor" // Druid's server type of a process serving its tasks' rows
	}
	return protocol.ServerMetadata{Name: n.cfg.Name, Host: n.cfg.Name, MaxSize: maxSize, Type: typ, Tier: n.cfg.Tier, Priority: n.cfg.Priority}
}

// Announce returns the served segments, or just Unchanged when since is the
// current version.
func (n *Node) Announce(since string) protocol.Announcement {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := protocol.Announcement{Server: n.Metadata(), Version: n.instance + "-" + strconv.FormatUint(n.version, 10), Loading: !n.ready.Load()}
	for _, l := range n.served {
		a.CurrSize += l.size
	}
	if since == a.Version {
		a.Unchanged = true
		return a
	}
	a.Segments = make([]*segmeta.DataSegment, 0, len(n.served))
	for _, l := range n.served {
		if l.rt && l.seq != "" {
			if a.Sequences == nil {
				a.Sequences = map[string]string{}
			}
			a.Sequences[l.seg.Version] = l.seq
			if l.offsets != nil {
				if a.Offsets == nil {
					a.Offsets = map[string]map[int32]int64{}
				}
				a.Offsets[l.seg.Version] = l.offsets
			}
		}
		if l.rt {
			a.Realtime = append(a.Realtime, l.seg)
		} else {
			a.Segments = append(a.Segments, l.seg)
		}
	}
	byID := func(x, y *segmeta.DataSegment) int { return x.ID().Compare(y.ID()) }
	slices.SortFunc(a.Segments, byID)
	slices.SortFunc(a.Realtime, byID)
	return a
}

// Query answers a broker's sub-query: it runs the query over the requested
// segments it serves and lists the others as missing.
func (n *Node) Query(ctx context.Context, sq *protocol.SubQuery) (*protocol.SubQueryResult, error) {
	q, err := parseQuery(sq.Query)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := n.run(ctx, q, sq, n.segmentTimer(q))
	n.observe(q, time.Since(start), len(sq.Segments), err)
	return res, err
}

// run answers sq, whose query is q, telling timer (when not nil) of every
// segment read.
func (n *Node) run(ctx context.Context, q *nativeQuery, sq *protocol.SubQuery, timer segmentTimer) (*protocol.SubQueryResult, error) {
	var err error
	if sq.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(sq.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	clips := make([]interval.Interval, len(sq.Segments))
	for i, ref := range sq.Segments {
		iv, err := interval.Parse(ref.Interval)
		if err != nil {
			return nil, fmt.Errorf("sub-query segment %s: %w", ref.ID, err)
		}
		clips[i] = iv
	}
	var held []*loaded
	var specs []readSpec
	res := &protocol.SubQueryResult{}
	n.mu.Lock()
	if err := n.awaitHolds(ctx, sq.Segments); err != nil {
		n.mu.Unlock()
		return nil, err
	}
	for i, ref := range sq.Segments {
		l := n.served[ref.ID]
		if l == nil {
			l = n.dropping[ref.ID]
		}
		if l == nil {
			res.Missing = append(res.Missing, ref.ID)
			if rep, ok := n.replaced[ref.ID]; ok {
				if res.Replaced == nil {
					res.Replaced = map[string][]protocol.SegmentRef{}
				}
				res.Replaced[ref.ID] = rep.refs
			}
			continue
		}
		l.refs++
		held = append(held, l)
		if l.es != nil {
			specs = append(specs, readSpec{seg: l.es, clip: clips[i]})
		}
	}
	n.mu.Unlock()
	defer n.release(held)
	var part json.RawMessage
	for {
		final := sq.Finalize && len(res.Missing) == 0
		part, err = n.qe.run(ctx, q, specs, final, timer)
		var damaged *corruptError
		if !errors.As(err, &damaged) {
			if err == nil && final {
				res.Final = part
				return res, nil
			}
			break
		}
		// The damaged bytes were not used. Cached copies are dropped (and
		// downloaded again) and their segments reported missing, so that
		// the broker reads them from a replica; the rest is answered. A
		// task's own file has no other copy to fall back on (a broker takes
		// a realtime segment reported missing for one handed off), so the
		// sub-query fails, naming it.
		bad := map[string]bool{}
		for _, id := range damaged.Segments {
			bad[id] = true
		}
		var drop []*loaded
		for _, l := range held {
			if l.es != nil && bad[l.es.ID] {
				if l.owner != "" {
					n.dropDamaged(l, err)
					return nil, err
				}
				drop = append(drop, l)
			}
		}
		kept := slices.DeleteFunc(specs, func(sp readSpec) bool { return bad[sp.seg.ID] })
		if len(kept) == len(specs) { // not one of ours: cannot happen, but must not loop
			return nil, err
		}
		specs = kept
		for _, l := range drop {
			n.dropDamaged(l, err)
			res.Missing = append(res.Missing, l.es.ID)
		}
	}
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, timeoutError(fmt.Sprintf("sub-query on %s timed out", n.cfg.Name))
		case ctx.Err() != nil:
			return nil, cancelledError(fmt.Sprintf("sub-query on %s was cancelled", n.cfg.Name))
		}
		return nil, err
	}
	res.Partial = part
	return res, nil
}

func (n *Node) release(held []*loaded) {
	var closeNow []*loaded
	n.mu.Lock()
	for _, l := range held {
		l.refs--
		if l.gone && l.refs == 0 {
			closeNow = append(closeNow, l)
		}
	}
	n.mu.Unlock()
	for _, l := range closeNow {
		n.destroy(l)
	}
}

// destroy unmaps a removed segment and deletes its cache directory; it must
// not be reachable from the maps and have no readers.
func (n *Node) destroy(l *loaded) {
	if l.es != nil {
		l.es.Data.Close()
	}
	if l.dir != "" && n.ctx.Err() == nil {
		os.RemoveAll(l.dir)
	}
	if l.loc != nil {
		n.mu.Lock()
		l.loc.used -= l.size
		n.mu.Unlock()
	}
}

// loadCache opens the segments already in the cache locations (a restart),
// verifying each file; damaged ones are deleted and downloaded again later.
func (n *Node) loadCache() {
	type found struct {
		c   cached
		loc *location
	}
	var all []found
	seen := map[string]bool{}
	for _, loc := range n.locs {
		list, problems := scanLocation(loc.Path)
		for _, p := range problems {
			n.log.Warn("segment cache", "problem", p.Error())
		}
		for _, c := range list {
			id := c.seg.ID().String()
			if seen[id] {
				os.RemoveAll(c.dir)
				continue
			}
			seen[id] = true
			all = append(all, found{c, loc})
		}
	}
	var wg sync.WaitGroup
	for _, f := range all {
		n.loadSem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-n.loadSem }()
			l := &loaded{seg: f.c.seg, dir: f.c.dir, loc: f.loc}
			if !f.c.seg.IsTombstone() {
				data, size, err := openVerified(f.c.dir, f.c.seg)
				if err != nil {
					n.log.Warn("cached segment is damaged; it will be downloaded again", "segment", f.c.seg.ID().String(), "error", err)
					os.RemoveAll(f.c.dir)
					return
				}
				l.size = size
				l.es = newEngineSegment(f.c.seg.ID().String(), data)
			}
			n.mu.Lock()
			f.loc.used += l.size
			n.served[f.c.seg.ID().String()] = l
			n.version++
			n.mu.Unlock()
		}()
	}
	wg.Wait()
	if len(all) > 0 {
		n.log.Info("segment cache loaded", "segments", len(n.served))
	}
}
