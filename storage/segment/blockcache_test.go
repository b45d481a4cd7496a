package segment

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func cachedBlocksOf(s *Segment) (n int) {
	blocks.mu.Lock()
	defer blocks.mu.Unlock()
	for k := range blocks.m {
		if k.s == s {
			n++
		}
	}
	return n
}

// A block read once answers from its verified copy, whatever happens to
// the file afterwards (the scrub finds that damage); Close drops the copies
// and the budget bounds them.
func TestBlockCache(t *testing.T) {
	SetBlockCacheBytes(DefaultBlockCacheBytes)
	spec := allKindsSpec(16)
	spec.ColumnCompression = map[string]Compression{"l": CompressNone}
	rng := rand.New(rand.NewPCG(7, 7))
	rows := make([]Row, 64)
	for i := range rows {
		rows[i] = randRow(rng, int64(i)*1000)
	}
	path, _ := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	col, err := seg.Numeric("l")
	if err != nil {
		t.Fatal(err)
	}
	want, err := col.Longs(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cachedBlocksOf(seg) != 1 {
		t.Fatalf("%d blocks cached after one read", cachedBlocksOf(seg))
	}
	// Damage every stored byte of the block.
	bl := col.c.blocks[1]
	data, _ := os.ReadFile(path)
	for i := bl.off; i < bl.off+bl.length; i++ {
		data[i] ^= 0xff
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data[bl.off:bl.off+bl.length], int64(bl.off)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, err := col.Longs(1, nil); err != nil || !slices.Equal(got, want) {
		t.Fatalf("cached block after damage: %v %v, want %v", got, err, want)
	}
	if err := seg.Verify(); err == nil {
		t.Fatal("Verify did not see the damage behind the cached copy")
	}
	if _, err := col.Longs(1, nil); err != nil {
		t.Fatal(err)
	}
	// Without a cache the damage is met at once.
	SetBlockCacheBytes(0)
	defer SetBlockCacheBytes(DefaultBlockCacheBytes)
	if cachedBlocksOf(seg) != 0 || blocks.used != 0 {
		t.Fatalf("a zero budget left %d blocks (%d bytes)", cachedBlocksOf(seg), blocks.used)
	}
	if _, err := col.Longs(1, nil); err == nil {
		t.Fatal("damaged block read without the cache: no error")
	}
	// A small budget is respected; Close drops the segment's blocks.
	SetBlockCacheBytes(int64(8 * bl.raw))
	for b := range col.NumBlocks() {
		if b != 1 {
			col.Longs(b, nil)
		}
	}
	if blocks.used > blocks.limit || cachedBlocksOf(seg) == 0 {
		t.Fatalf("budget %d: %d bytes in %d blocks", blocks.limit, blocks.used, cachedBlocksOf(seg))
	}
	seg.Close()
	if cachedBlocksOf(seg) != 0 {
		t.Fatalf("%d blocks of a closed segment still cached", cachedBlocksOf(seg))
	}
}
