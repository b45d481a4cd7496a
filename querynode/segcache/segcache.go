// Package segcache is a bounded on-disk cache of segment files fetched from
// deep storage on demand, for reads of segments that no data server holds:
// the broker's asOf queries (time travel) read old versions of the data
// through it. Files are verified as a historical verifies its cache (the
// published size, then every checksum) before any byte is read.
//
// The cache never holds more than MaxSize bytes, counting what is being
// downloaded. A read pins its segments; only unpinned ones are evicted, least
// recently used first. A read whose segments cannot fit next to the pinned
// ones of other reads waits for them (holding nothing, so reads never wait
// on each other in a cycle); one whose segments exceed MaxSize on their own
// fails at once.
package segcache

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"

	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// DeepStorage fetches the segment file a loadSpec names to localPath
// (deep.DeepStorage has this method).
type DeepStorage interface {
	Get(ctx context.Context, spec deep.LoadSpec, localPath string) error
}

// Config configures a Cache.
type Config struct {
	// Dir holds the cached files. It is emptied at start: the cache is a
	// query-path convenience, not state worth a restart's verification.
	Dir string
	// MaxSize bounds the bytes of the files cached and being downloaded.
	MaxSize int64
	Storage DeepStorage
	// LoadThreads bounds concurrent downloads (default 4).
	LoadThreads int
	Logger      hclog.Logger
}

// Cache is a running cache. It is safe for concurrent use.
type Cache struct {
	cfg    Config
	log    hclog.Logger
	sem    chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	entries map[string]*entry // by segment id: cached or loading
	idle    *list.List        // unpinned entries, least recently used first
	used    int64             // bytes cached or reserved for downloads
	freed   chan struct{}     // closed (and replaced) whenever space may have been freed
	waiting int               // reads waiting for space (tests)
	closed  bool
}

// entry is one segment in the cache. size, data, refs and elem are guarded by
// Cache.mu; err is written before done is closed.
type entry struct {
	seg  *segmeta.DataSegment
	id   string
	dir  string
	size int64            // reserved (while loading) or actual bytes
	data *segment.Segment // nil until loaded
	refs int
	done chan struct{} // closed when the download ends, either way
	err  error
	elem *list.Element // in idle while refs == 0
}

// GoneError is the failure to fetch a segment whose deep-storage file no
// longer exists: it was killed (permanently deleted) since.
type GoneError struct {
	ID  string
	Err error
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("segment %s: its deep-storage file no longer exists (the segment was killed): %v", e.ID, e.Err)
}

func (e *GoneError) Unwrap() error { return e.Err }

// BudgetError is the failure of a read whose segments exceed the cache's
// size on their own.
type BudgetError struct {
	Segments  int
	Need, Max int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("reading %d segments from deep storage needs %d bytes of cache, more than its %d", e.Segments, e.Need, e.Max)
}

// New empties cfg.Dir and returns the cache.
func New(cfg Config) (*Cache, error) {
	if cfg.Dir == "" {
		return nil, errors.New("segcache: no directory")
	}
	if cfg.MaxSize <= 0 {
		return nil, fmt.Errorf("segcache: size %d: must be positive", cfg.MaxSize)
	}
	if cfg.Storage == nil {
		return nil, errors.New("segcache: no deep storage")
	}
	if cfg.LoadThreads <= 0 {
		cfg.LoadThreads = 4
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if err := os.RemoveAll(cfg.Dir); err != nil {
		return nil, fmt.Errorf("segcache: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("segcache: %w", err)
	}
	c := &Cache{cfg: cfg, log: cfg.Logger, sem: make(chan struct{}, cfg.LoadThreads),
		entries: map[string]*entry{}, idle: list.New(), freed: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops downloads and unmaps every file once its readers are done.
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.idle.Front(); e != nil; e = e.Next() {
		c.evict(e.Value.(*entry))
	}
	c.idle.Init()
	return nil
}

// Used returns the bytes cached or reserved for downloads.
func (c *Cache) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Handle is a pinned, verified segment file; Release it when the read ends.
type Handle struct {
	c    *Cache
	e    *entry
	once sync.Once
}

// Segment returns the open segment file.
func (h *Handle) Segment() *segment.Segment { return h.e.data }

// ID returns the segment's id.
func (h *Handle) ID() string { return h.e.id }

// Release unpins the segment (once; later calls do nothing).
func (h *Handle) Release() { h.once.Do(func() { h.c.release([]*entry{h.e}) }) }

// Acquire brings every segment of segs (no tombstones) into the cache,
// downloading and verifying the ones it lacks, and pins them all. On error
// nothing stays pinned; a segment whose file is gone fails with *GoneError,
// segments larger than the cache with *BudgetError.
func (c *Cache) Acquire(ctx context.Context, segs []*segmeta.DataSegment) ([]*Handle, error) {
	byID := map[string]*segmeta.DataSegment{}
	var order []string
	var total int64
	for _, s := range segs {
		id := s.ID().String()
		if _, dup := byID[id]; dup {
			continue
		}
		byID[id] = s
		order = append(order, id)
		total += max(s.Size, 0)
	}
	if total > c.cfg.MaxSize {
		return nil, &BudgetError{Segments: len(order), Need: total, Max: c.cfg.MaxSize}
	}
	var pinned []*entry
	var started []*entry
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errors.New("segcache: closed")
		}
		pinned = pinned[:0]
		var missing []string
		var need int64
		for _, id := range order {
			if e := c.entries[id]; e != nil {
				c.pin(e)
				pinned = append(pinned, e)
			} else {
				missing = append(missing, id)
				need += max(byID[id].Size, 0)
			}
		}
		if c.makeRoom(need) {
			for _, id := range missing {
				seg := byID[id]
				e := &entry{seg: seg, id: id, dir: filepath.Join(c.cfg.Dir, dirName(id)), size: max(seg.Size, 0), refs: 1, done: make(chan struct{})}
				c.entries[id] = e
				c.used += e.size
				pinned = append(pinned, e)
				started = append(started, e)
			}
			c.wg.Add(len(started)) // under the lock: Close waits for these
			c.mu.Unlock()
			break
		}
		// Other reads pin the space: let go of ours and wait for a release.
		c.unpinLocked(pinned)
		freed := c.freed
		c.waiting++
		c.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
		}
		c.mu.Lock()
		c.waiting--
		c.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for _, e := range started {
		go c.load(e)
	}
	var failed error
	for _, e := range pinned {
		select {
		case <-e.done:
		case <-ctx.Done():
			c.release(pinned)
			return nil, ctx.Err()
		}
		var gone *GoneError
		if e.err != nil && (failed == nil || errors.As(e.err, &gone)) {
			failed = e.err
		}
	}
	if failed != nil {
		c.release(pinned)
		return nil, failed
	}
	out := make([]*Handle, len(pinned))
	for i, e := range pinned {
		out[i] = &Handle{c: c, e: e}
	}
	return out, nil
}

// pin marks e in use: it leaves the eviction order.
func (c *Cache) pin(e *entry) {
	if e.refs == 0 && e.elem != nil {
		c.idle.Remove(e.elem)
		e.elem = nil
	}
	e.refs++
}

func (c *Cache) release(es []*entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unpinLocked(es)
}

// unpinLocked unpins entries; an unpinned loaded entry becomes the most
// recently used idle one, and waiting reads are woken.
func (c *Cache) unpinLocked(es []*entry) {
	for _, e := range es {
		e.refs--
		if e.refs > 0 {
			continue
		}
		switch {
		case c.entries[e.id] != e: // failed: already out of the cache
		case c.closed:
			c.evict(e)
		case e.data != nil:
			e.elem = c.idle.PushBack(e)
		}
	}
	c.wake()
}

func (c *Cache) wake() {
	close(c.freed)
	c.freed = make(chan struct{})
}

// makeRoom evicts idle entries, least recently used first, until need more
// bytes fit, and reports whether they do.
func (c *Cache) makeRoom(need int64) bool {
	for c.used+need > c.cfg.MaxSize {
		front := c.idle.Front()
		if front == nil {
			return false
		}
		c.idle.Remove(front)
		e := front.Value.(*entry)
		e.elem = nil
		c.evict(e)
	}
	return true
}

// evict removes an unpinned entry and its file. The file goes while the lock
// is held, so the bytes on disk never exceed what the cache counts.
func (c *Cache) evict(e *entry) {
	delete(c.entries, e.id)
	c.used -= e.size
	if e.data != nil {
		e.data.Close()
	}
	os.RemoveAll(e.dir)
}

// load downloads, verifies and opens e's file, then wakes its readers.
func (c *Cache) load(e *entry) {
	defer c.wg.Done()
	data, size, err := c.fetch(e)
	c.mu.Lock()
	if err != nil {
		e.err = err
		delete(c.entries, e.id)
		c.used -= e.size
		os.RemoveAll(e.dir)
		c.wake()
	} else {
		c.used += size - e.size
		e.size, e.data = size, data
		if e.refs == 0 { // its readers gave up waiting: evictable at once
			e.elem = c.idle.PushBack(e)
			c.wake()
		}
	}
	close(e.done)
	c.mu.Unlock()
	if err != nil {
		c.log.Warn("cannot read a segment from deep storage", "segment", e.id, "error", err)
	} else {
		c.log.Debug("segment cached from deep storage", "segment", e.id, "bytes", size)
	}
}

func (c *Cache) fetch(e *entry) (*segment.Segment, int64, error) {
	select {
	case c.sem <- struct{}{}:
		defer func() { <-c.sem }()
	case <-c.ctx.Done():
		return nil, 0, c.ctx.Err()
	}
	ls := string(e.seg.LoadSpec)
	if ls == "" || ls == "null" {
		return nil, 0, fmt.Errorf("segment %s has no loadSpec", e.id)
	}
	var spec deep.LoadSpec
	if err := json.Unmarshal([]byte(ls), &spec); err != nil {
		return nil, 0, fmt.Errorf("segment %s: loadSpec %s: %w", e.id, ls, err)
	}
	path := filepath.Join(e.dir, deep.SegmentFile)
	if err := c.cfg.Storage.Get(c.ctx, spec, path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, &GoneError{ID: e.id, Err: err}
		}
		return nil, 0, fmt.Errorf("segment %s: download: %w", e.id, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if e.seg.Size > 0 && st.Size() != e.seg.Size {
		return nil, 0, fmt.Errorf("segment %s: %d bytes in deep storage, it was published with %d", e.id, st.Size(), e.seg.Size)
	}
	data, err := segment.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("segment %s: %w", e.id, err)
	}
	if err := data.Verify(); err != nil {
		data.Close()
		return nil, 0, fmt.Errorf("segment %s: %w", e.id, err)
	}
	return data, st.Size(), nil
}

// dirName is a segment's directory: a hash, since ids hold characters file
// systems refuse and the cache is emptied at start anyway.
func dirName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}
