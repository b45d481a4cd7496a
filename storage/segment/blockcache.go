package segment

import "sync"

// The block cache keeps verified, decompressed copies of recently read
// column blocks, shared by every open segment of the process, within a byte
// budget. A read that finds its block there uses the copy as it is: it was
// checked when it was made, and nothing can change it since (unlike the
// mapping, which follows the file). A read that misses copies the block out
// of the mapping, checks the copy and decompresses it, the cost a checksum
// on every read would add to every query; the cache keeps that cost to the
// blocks not read lately. Eviction is random, not least-recently-used, so a
// working set larger than the budget still hits in proportion rather than
// never (a scan evicting exactly what the next scan needs first).

// DefaultBlockCacheBytes is the block cache's budget until
// SetBlockCacheBytes changes it.
const DefaultBlockCacheBytes = 256 << 20

type blockKey struct {
	s *Segment
	c *columnMeta
	b int
}

type blockCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	m     map[blockKey][]byte
}

var blocks = &blockCache{limit: DefaultBlockCacheBytes, m: map[blockKey][]byte{}}

// SetBlockCacheBytes sets the block cache's budget in bytes; 0 turns the
// cache off (every read copies and checks its block).
func SetBlockCacheBytes(n int64) {
	blocks.mu.Lock()
	defer blocks.mu.Unlock()
	blocks.limit = max(n, 0)
	blocks.evict(0)
}

func (bc *blockCache) get(k blockKey) ([]byte, bool) {
	bc.mu.Lock()
	b, ok := bc.m[k]
	bc.mu.Unlock()
	return b, ok
}

// put caches b, a verified block that is never modified, unless it alone
// would take more than an eighth of the budget. Only blocks of mapped
// segments are cached: their Close drops them, while a segment opened from
// memory (OpenBytes) is often never closed and would stay pinned.
func (bc *blockCache) put(k blockKey, b []byte) {
	n := int64(cap(b))
	if k.s.unmap == nil {
		return
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if n > bc.limit/8 || k.s.closed.Load() {
		return
	}
	if old, ok := bc.m[k]; ok { // read twice at once
		bc.used -= int64(cap(old))
	}
	bc.evict(n)
	bc.m[k] = b
	bc.used += n
}

// evict removes entries until room more bytes fit (bc.mu held). Map
// iteration starts at a random entry.
func (bc *blockCache) evict(room int64) {
	for k, b := range bc.m {
		if bc.used+room <= bc.limit {
			return
		}
		delete(bc.m, k)
		bc.used -= int64(cap(b))
	}
}

// drop removes the blocks of a closed segment.
func (bc *blockCache) drop(s *Segment) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	for k, b := range bc.m {
		if k.s == s {
			delete(bc.m, k)
			bc.used -= int64(cap(b))
		}
	}
}
