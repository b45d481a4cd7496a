package segment

import (
	"fmt"
	"os"
	"path/filepath"
)

// Builder turns a stream of rows for one time chunk into one or more
// segment files (partitions 0, 1, ...): whenever the current partition
// reaches MaxRows rows (after rollup) it is written out and a new one is
// started, so at most one partition's rows are in memory. Rollup is perfect
// within a partition only; equal keys in different partitions stay separate
// rows, as with Druid's dynamic partitioning.
type Builder struct {
	w       *Writer
	maxRows int
	pathFor func(partition int) string
	done    []Info
	closed  bool
}

// DefaultMaxRows is Druid's default maxRowsPerSegment.
const DefaultMaxRows = 5_000_000

// NewBuilder returns a Builder for spec. maxRows <= 0 means DefaultMaxRows.
// pathFor names the file of each partition; its directory must exist.
func NewBuilder(spec Spec, maxRows int, pathFor func(partition int) string) (*Builder, error) {
	if pathFor == nil {
		return nil, fmt.Errorf("segment: Builder needs a path function")
	}
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	w, err := NewWriter(spec)
	if err != nil {
		return nil, err
	}
	return &Builder{w: w, maxRows: min(maxRows, maxRowsCap), pathFor: pathFor}, nil
}

// DirPaths returns a path function placing partition p at
// dir/<prefix>_<p>.seg.
func DirPaths(dir, prefix string) func(int) string {
	return func(p int) string { return filepath.Join(dir, fmt.Sprintf("%s_%d.seg", prefix, p)) }
}

// Add adds one row, writing out the current partition first if it is full.
func (b *Builder) Add(row Row) error {
	if b.closed {
		return fmt.Errorf("segment: Builder is closed")
	}
	if b.w.Len() >= b.maxRows {
		if err := b.flush(); err != nil {
			return err
		}
	}
	return b.w.Add(row)
}

func (b *Builder) flush() error {
	p := len(b.done)
	info, err := b.w.WriteFile(b.pathFor(p))
	if err != nil {
		return err
	}
	info.Partition = p
	b.done = append(b.done, info)
	return nil
}

// Close writes the last partition (if it has rows) and returns all the
// partitions written. A chunk that received no rows yields no files.
func (b *Builder) Close() ([]Info, error) {
	if b.closed {
		return b.done, nil
	}
	b.closed = true
	if b.w.Len() > 0 {
		if err := b.flush(); err != nil {
			return b.done, err
		}
	}
	return b.done, nil
}

// Abort discards buffered rows and removes the files written so far.
func (b *Builder) Abort() {
	b.closed = true
	b.w.Reset()
	for _, in := range b.done {
		os.Remove(in.Path)
	}
	b.done = nil
}

// Partitions returns the partitions written so far.
func (b *Builder) Partitions() []Info { return b.done }

// maxRowsCap keeps a partition's row numbers within int32.
const maxRowsCap = maxRows
