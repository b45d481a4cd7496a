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
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

// Uploader stores a finished segment file in deep storage and returns its
// loadSpec (Druid's JSON object telling servers where to fetch it).
type Uploader interface {
	Put(ctx context.Context, key, localPath string) (json.RawMessage, error)
}

// Spec says how rows become segments.
type Spec struct {
	DataSource         string
	Fields             []segment.Field
	Dimensions         []segment.Dimension
	Metrics            []segment.Metric
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
	b   *segment.Builder
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
func (b *Builder) Add(row segment.Row) error {
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
		sp := segment.Spec{
			Fields:     b.spec.Fields,
			Dimensions: b.spec.Dimensions,
			Metrics:    b.spec.Metrics,
			Rollup:     b.spec.Rollup,
			Interval:   segment.Interval{Start: iv.Start, End: iv.End},
		}
		if q := b.spec.QueryGranularity; q != nil && !q.IsNone() {
			sp.Truncate = q.Bucket
		}
		sb, err := segment.NewBuilder(sp, b.spec.RowsPerSegment, segment.DirPaths(dir, "part"))
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
func (b *Builder) Finish(ctx context.Context, up Uploader) ([]*segmeta.DataSegment, error) {
	return FinishAll(ctx, up, []*Builder{b})
}

// FinishAll finishes builders that wrote the same datasource and version
// side by side (parallel readers of one job) as if they were one: per time
// chunk, in time order, it closes the chunk of each builder in slice order
// and numbers their partitions consecutively, so the chunk's segments are
// NumberedShard(0..n-1, n) with n the total over all builders, each uploaded
// under its final key. The result depends only on what each builder holds.
// Rows of one chunk are rolled up within each builder's partitions, not
// across builders (best-effort rollup, as with Druid's dynamic partitioning).
// Every temp dir is removed; on error all partial output is discarded, as by
// Abort (files already uploaded stay in deep storage, unpublished).
func FinishAll(ctx context.Context, up Uploader, bs []*Builder) (out []*segmeta.DataSegment, err error) {
	defer func() {
		for _, b := range bs {
			if b == nil {
				continue
			}
			if err != nil {
				b.Abort()
			} else {
				os.RemoveAll(b.spec.TempDir)
			}
		}
	}()
	if len(bs) == 0 {
		return nil, nil
	}
	if bs[0] == nil {
		return nil, fmt.Errorf("builder 0 to finish is nil")
	}
	spec := bs[0].spec
	var starts []int64
	for i, b := range bs {
		if b == nil || slices.Contains(bs[:i], b) {
			return nil, fmt.Errorf("builder %d to finish is nil or listed twice", i)
		}
		if b.spec.DataSource != spec.DataSource || b.spec.Version != spec.Version ||
			granularity.String(b.spec.SegmentGranularity) != granularity.String(spec.SegmentGranularity) {
			return nil, fmt.Errorf("builders finished together differ in datasource, version or segment granularity")
		}
		for s := range b.chunks {
			starts = append(starts, s)
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	dims := make([]string, len(spec.Dimensions))
	for i, d := range spec.Dimensions {
		dims[i] = d.Name
	}
	mets := make([]string, len(spec.Metrics))
	for i, m := range spec.Metrics {
		mets[i] = m.Name
	}
	var parts []segment.Info
	for _, s := range starts {
		// Close the chunk everywhere first: the shard specs need the total.
		parts = parts[:0]
		var iv interval.Interval
		for _, b := range bs {
			c := b.chunks[s]
			if c == nil {
				continue
			}
			iv = c.iv
			infos, err := c.b.Close()
			if err != nil {
				return nil, fmt.Errorf("chunk %s: %w", c.iv, err)
			}
			parts = append(parts, infos...)
		}
		for p, info := range parts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seg := &segmeta.DataSegment{
				DataSource: spec.DataSource,
				Interval:   iv,
				Version:    spec.Version,
				Dimensions: dims,
				Metrics:    mets,
				ShardSpec:  segmeta.NumberedShard(int32(p), int32(len(parts))),
				Size:       info.Bytes,
			}
			seg.BinaryVersion = segmeta.NullInt32{V: 9, Valid: true}
			key := deepStorageKey(seg)
			ls, err := up.Put(ctx, key, info.Path)
			if err != nil {
				return nil, fmt.Errorf("upload %s: %w", key, err)
			}
			seg.LoadSpec = segmeta.RawJSON(ls)
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
func deepStorageKey(s *segmeta.DataSegment) string {
	return deep.SegmentKey(s.DataSource, interval.FormatMillis(s.Interval.Start), interval.FormatMillis(s.Interval.End),
		s.Version, int(s.ShardSpec.PartitionNum))
}
