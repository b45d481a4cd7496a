// Package ingest turns input rows into published segments: rows are bucketed
// into time chunks by the segment granularity, each chunk is written by the
// storage writer into one or more partitions (capped by rows per segment), the
// files go to deep storage, and the resulting DataSegments are returned for one
// atomic publish. `strata segment build` uses it; SQL and stream ingestion reuse it.
package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"strata/granularity"
	"strata/interval"
	"strata/segment"
	"strata/storage/deep"
	stseg "strata/storage/segment"
)

// Uploader stores a finished segment file in deep storage and returns its
// loadSpec (Druid's JSON object telling servers where to fetch it).
type Uploader interface {
	Put(ctx context.Context, key, localPath string) (json.RawMessage, error)
}

// Spec says how rows become segments.
type Spec struct {
	DataSource         string
	Fields             []stseg.Field
	Dimensions         []stseg.Dimension
	Metrics            []stseg.Metric
	Rollup             bool
	SegmentGranularity granularity.Granularity
	QueryGranularity   granularity.Granularity // nil or none: keep times
	RowsPerSegment     int
	Version            string // segment version, usually the ISO time of the job
	TempDir            string
}

// Builder accepts rows in any time order and keeps one open partition builder
// per time chunk; time-ordered input therefore holds one chunk at a time.
type Builder struct {
	spec   Spec
	chunks map[int64]*chunk
	rows   int64
}

type chunk struct {
	iv  interval.Interval
	b   *stseg.Builder
	dir string
}

// NewBuilder validates spec and prepares a temp dir for segment files.
func NewBuilder(spec Spec) (*Builder, error) {
	if spec.DataSource == "" {
		return nil, fmt.Errorf("datasource is empty")
	}
	if spec.SegmentGranularity == nil {
		spec.SegmentGranularity = granularity.Day
	}
	if spec.QueryGranularity != nil && !spec.QueryGranularity.IsNone() && !granularity.Finer(spec.QueryGranularity, spec.SegmentGranularity) {
		return nil, fmt.Errorf("query granularity %s is coarser than segment granularity %s", granularity.String(spec.QueryGranularity), granularity.String(spec.SegmentGranularity))
	}
	if spec.Version == "" {
		return nil, fmt.Errorf("version is empty")
	}
	if spec.TempDir == "" {
		d, err := os.MkdirTemp("", "strata-build-")
		if err != nil {
			return nil, err
		}
		spec.TempDir = d
	}
	return &Builder{spec: spec, chunks: map[int64]*chunk{}}, nil
}

// Rows is the number of rows added so far.
func (b *Builder) Rows() int64 { return b.rows }

// Add adds one row.
func (b *Builder) Add(row stseg.Row) error {
	g := b.spec.SegmentGranularity
	start := g.Bucket(row.Time)
	c := b.chunks[start]
	if c == nil {
		iv := interval.Interval{Start: start, End: g.Next(start)}
		if g.IsAll() {
			iv = interval.Eternity
		}
		dir := filepath.Join(b.spec.TempDir, fmt.Sprintf("chunk_%d", len(b.chunks)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		sp := stseg.Spec{
			Fields:     b.spec.Fields,
			Dimensions: b.spec.Dimensions,
			Metrics:    b.spec.Metrics,
			Rollup:     b.spec.Rollup,
			Interval:   stseg.Interval{Start: iv.Start, End: iv.End},
		}
		if q := b.spec.QueryGranularity; q != nil && !q.IsNone() {
			sp.Truncate = q.Bucket
		}
		sb, err := stseg.NewBuilder(sp, b.spec.RowsPerSegment, stseg.DirPaths(dir, "part"))
		if err != nil {
			return err
		}
		c = &chunk{iv: iv, b: sb, dir: dir}
		b.chunks[start] = c
	}
	b.rows++
	return c.b.Add(row)
}

// Finish writes the last partitions, uploads every file and returns the
// segments to publish, sorted by id. The temp dir is removed.
func (b *Builder) Finish(ctx context.Context, up Uploader) ([]*segment.DataSegment, error) {
	defer os.RemoveAll(b.spec.TempDir)
	starts := make([]int64, 0, len(b.chunks))
	for s := range b.chunks {
		starts = append(starts, s)
	}
	slices.Sort(starts)
	dims := make([]string, len(b.spec.Dimensions))
	for i, d := range b.spec.Dimensions {
		dims[i] = d.Name
	}
	mets := make([]string, len(b.spec.Metrics))
	for i, m := range b.spec.Metrics {
		mets[i] = m.Name
	}
	var out []*segment.DataSegment
	for _, s := range starts {
		c := b.chunks[s]
		infos, err := c.b.Close()
		if err != nil {
			return nil, fmt.Errorf("chunk %s: %w", c.iv, err)
		}
		for _, info := range infos {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seg := &segment.DataSegment{
				DataSource: b.spec.DataSource,
				Interval:   c.iv,
				Version:    b.spec.Version,
				Dimensions: dims,
				Metrics:    mets,
				ShardSpec:  segment.NumberedShard(int32(info.Partition), int32(len(infos))),
				Size:       info.Bytes,
			}
			seg.BinaryVersion = segment.NullInt32{V: 9, Valid: true}
			key := deepStorageKey(seg)
			ls, err := up.Put(ctx, key, info.Path)
			if err != nil {
				return nil, fmt.Errorf("upload %s: %w", key, err)
			}
			seg.LoadSpec = segment.RawJSON(ls)
			seg.Intern()
			out = append(out, seg)
		}
	}
	return out, nil
}

// Abort discards partial output.
func (b *Builder) Abort() {
	for _, c := range b.chunks {
		c.b.Abort()
	}
	os.RemoveAll(b.spec.TempDir)
}

// deepStorageKey lays segments out as Druid does (deep.SegmentKey):
// <ds>/<start>_<end>/<version>/<partitionNum>.
func deepStorageKey(s *segment.DataSegment) string {
	return deep.SegmentKey(s.DataSource, interval.FormatMillis(s.Interval.Start), interval.FormatMillis(s.Interval.End),
		s.Version, int(s.ShardSpec.PartitionNum))
}
