package segcache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

type fixture struct {
	t     *testing.T
	store *deep.Local
}

func newFixture(t *testing.T) *fixture {
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: store}
}

// segment writes and stores a one-day segment of n rows and returns its
// metadata, as published.
func (f *fixture) segment(day int, n int) *segmeta.DataSegment {
	t := f.t
	t.Helper()
	iv, err := interval.Parse(fmt.Sprintf("2024-01-%02d/2024-01-%02d", day, day+1))
	if err != nil {
		t.Fatal(err)
	}
	w, err := stseg.NewWriter(stseg.Spec{
		Fields:     []stseg.Field{{Name: "page", Kind: stseg.KindString}},
		Dimensions: []stseg.Dimension{{Name: "page"}},
		Metrics:    []stseg.Metric{{Type: "count", Name: "count"}},
		Interval:   stseg.Interval{Start: iv.Start, End: iv.End},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Add(stseg.Row{Time: iv.Start + int64(i)*1000, Values: []stseg.Value{stseg.String(fmt.Sprint("p", i))}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "index.seg")
	info, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seg := &segmeta.DataSegment{DataSource: "wiki", Interval: iv, Version: "v1", ShardSpec: segmeta.NumberedShard(0, 1), Size: info.Bytes}
	spec, err := f.store.Put(context.Background(), deep.SegmentKey("wiki", interval.FormatMillis(iv.Start), interval.FormatMillis(iv.End), "v1", 0), path)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := json.Marshal(spec)
	seg.LoadSpec = segmeta.RawJSON(ls)
	return seg
}

func (f *fixture) cache(maxSize int64) *Cache {
	c, err := New(Config{Dir: filepath.Join(f.t.TempDir(), "cache"), MaxSize: maxSize, Storage: f.store})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

// diskBytes sums the sizes of the files under dir.
func diskBytes(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return n
}

func rows(t *testing.T, h *Handle) int {
	t.Helper()
	return h.Segment().NumRows()
}

func TestAcquireDownloadsVerifiesAndReuses(t *testing.T) {
	f := newFixture(t)
	s := f.segment(1, 5)
	c := f.cache(1 << 20)
	hs, err := c.Acquire(context.Background(), []*segmeta.DataSegment{s, s})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || rows(t, hs[0]) != 5 {
		t.Fatalf("got %d handles", len(hs))
	}
	hs[0].Release()
	hs[0].Release() // a second release must not unpin twice
	if c.Used() != s.Size {
		t.Fatalf("used %d, want %d", c.Used(), s.Size)
	}
	// The copy is reused: with deep storage's file gone it still reads.
	if err := f.store.Delete(context.Background(), mustSpec(t, s)); err != nil {
		t.Fatal(err)
	}
	hs, err = c.Acquire(context.Background(), []*segmeta.DataSegment{s})
	if err != nil {
		t.Fatal(err)
	}
	hs[0].Release()
}

func mustSpec(t *testing.T, s *segmeta.DataSegment) deep.LoadSpec {
	var spec deep.LoadSpec
	if err := json.Unmarshal([]byte(s.LoadSpec), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// A tiny budget: the cache holds at most MaxSize bytes on disk; idle copies
// go least recently used first; a read larger than the budget fails at once.
func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	f := newFixture(t)
	a, b, d := f.segment(1, 50), f.segment(2, 50), f.segment(3, 50)
	budget := a.Size + b.Size + d.Size/2 // two fit, not three
	c := f.cache(budget)
	dir := c.cfg.Dir
	acquire := func(segs ...*segmeta.DataSegment) {
		t.Helper()
		hs, err := c.Acquire(context.Background(), segs)
		if err != nil {
			t.Fatal(err)
		}
		if got := diskBytes(t, dir); got > budget {
			t.Fatalf("%d bytes on disk, budget %d", got, budget)
		}
		for _, h := range hs {
			h.Release()
		}
	}
	acquire(a)
	acquire(b)
	acquire(a) // a is now the most recently used: b goes first
	acquire(d)
	c.mu.Lock()
	_, hasA := c.entries[a.ID().String()]
	_, hasB := c.entries[b.ID().String()]
	_, hasD := c.entries[d.ID().String()]
	c.mu.Unlock()
	if !hasA || hasB || !hasD {
		t.Fatalf("cached a=%v b=%v d=%v; want a and d (b least recently used)", hasA, hasB, hasD)
	}
	if c.Used() > budget {
		t.Fatalf("used %d > budget %d", c.Used(), budget)
	}
	_, err := c.Acquire(context.Background(), []*segmeta.DataSegment{a, b, d})
	var be *BudgetError
	if !errors.As(err, &be) || be.Need != a.Size+b.Size+d.Size || be.Max != budget {
		t.Fatalf("three segments over a budget for two: %v", err)
	}
}

// A pinned segment is never evicted: a read that needs its space waits
// until it is released, then proceeds.
func TestPinnedSegmentsAreNotEvicted(t *testing.T) {
	f := newFixture(t)
	a, b := f.segment(1, 50), f.segment(2, 50)
	c := f.cache(max(a.Size, b.Size) + 10) // one at a time
	ha, err := c.Acquire(context.Background(), []*segmeta.DataSegment{a})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		hb, err := c.Acquire(context.Background(), []*segmeta.DataSegment{b})
		if err == nil {
			hb[0].Release()
		}
		got <- err
	}()
	eventually.True(t, "the second read to wait for room", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.waiting == 1
	})
	if rows(t, ha[0]) != 50 {
		t.Fatal("pinned segment unreadable while another read waits")
	}
	select {
	case err := <-got:
		t.Fatalf("the second read did not wait for the pinned segment: %v", err)
	default:
	}
	ha[0].Release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// A waiting read gives up when its context ends.
	ha, err = c.Acquire(context.Background(), []*segmeta.DataSegment{a})
	if err != nil {
		t.Fatal(err)
	}
	defer ha[0].Release()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Acquire(ctx, []*segmeta.DataSegment{b}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's end, got %v", err)
	}
}

// A segment whose deep-storage file is gone fails with GoneError naming it;
// a damaged one fails verification; neither stays in the cache.
func TestGoneAndDamagedFiles(t *testing.T) {
	f := newFixture(t)
	a, b := f.segment(1, 5), f.segment(2, 5)
	if err := f.store.Delete(context.Background(), mustSpec(t, a)); err != nil {
		t.Fatal(err)
	}
	c := f.cache(1 << 20)
	_, err := c.Acquire(context.Background(), []*segmeta.DataSegment{b, a})
	var gone *GoneError
	if !errors.As(err, &gone) || gone.ID != a.ID().String() {
		t.Fatalf("want GoneError for %s, got %v", a.ID(), err)
	}
	if c.Used() != b.Size {
		t.Fatalf("used %d after a failed read; want only b's %d", c.Used(), b.Size)
	}
	// Damage b's stored file (a byte in the middle): the copy is refused.
	spec := mustSpec(t, b)
	c2 := f.cache(1 << 20)
	raw, err := os.ReadFile(spec.Path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(spec.Path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Acquire(context.Background(), []*segmeta.DataSegment{b}); err == nil || errors.As(err, &gone) {
		t.Fatalf("a damaged file must fail verification, got %v", err)
	}
	if c2.Used() != 0 {
		t.Fatalf("used %d after a damaged download", c2.Used())
	}
}
