// Package msqtest provides an in-memory msq.Env for tests: deep storage is a
// real directory, published segments live in a segmeta.Index.
package msqtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"strata/ingest"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/segment"
)

// Env is an msq.Env backed by a directory and an in-memory segment index.
type Env struct {
	Dir string

	mu        sync.Mutex
	index     *segmeta.Index
	published [][]*segmeta.DataSegment // every Publish call, in order
	open      map[string]*openSeg
}

type openSeg struct {
	seg  *segment.Segment
	refs int
}

// New returns an Env storing segment files under dir.
func New(dir string) *Env {
	return &Env{Dir: dir, index: segmeta.NewIndex(), open: map[string]*openSeg{}}
}

// UsedSegments returns the used segments overlapping iv.
func (e *Env) UsedSegments(_ context.Context, dataSource string, iv interval.Interval) ([]*segmeta.DataSegment, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*segmeta.DataSegment
	if tl := e.index.Timeline(dataSource); tl != nil {
		tl.Segments(func(s *segmeta.DataSegment) bool {
			if s.Interval.Overlaps(iv) {
				out = append(out, s)
			}
			return true
		})
	}
	return out, nil
}

// Segments returns all used segments of a datasource.
func (e *Env) Segments(dataSource string) []*segmeta.DataSegment {
	out, _ := e.UsedSegments(context.Background(), dataSource, interval.Eternity)
	return out
}

// Visible returns the visible pieces of a datasource (segmeta.Timeline.Lookup).
func (e *Env) Visible(dataSource string) []segmeta.Holder {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.index.Lookup(dataSource, interval.Eternity)
}

// Publishes returns the segments of every Publish call so far.
func (e *Env) Publishes() [][]*segmeta.DataSegment {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.published)
}

type loadSpec struct {
	Type string `json:"type"`
	Path string `json:"path"`
}

// OpenSegment opens the file a segment's loadSpec points to.
func (e *Env) OpenSegment(_ context.Context, s *segmeta.DataSegment) (*segment.Segment, func(), error) {
	var ls loadSpec
	if err := json.Unmarshal([]byte(s.LoadSpec), &ls); err != nil {
		return nil, nil, fmt.Errorf("segment %s: bad loadSpec: %v", s.ID(), err)
	}
	if ls.Type != "local" {
		return nil, nil, fmt.Errorf("segment %s: cannot open loadSpec type %q", s.ID(), ls.Type)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.open[ls.Path]
	if o == nil {
		sg, err := segment.Open(ls.Path)
		if err != nil {
			return nil, nil, err
		}
		o = &openSeg{seg: sg}
		e.open[ls.Path] = o
	}
	o.refs++
	var once sync.Once
	return o.seg, func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			o.refs--
			if o.refs == 0 {
				o.seg.Close()
				delete(e.open, ls.Path)
			}
		})
	}, nil
}

// Uploader copies files into the directory.
func (e *Env) Uploader() ingest.Uploader { return uploader{dir: e.Dir} }

type uploader struct{ dir string }

func (u uploader) Put(ctx context.Context, key, localPath string) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := filepath.Join(u.dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("deep storage key %s exists", key)
	}
	in, err := os.Open(localPath)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	return json.Marshal(loadSpec{Type: "local", Path: dst})
}

// Publish adds the segments to the index, refusing ids that exist.
func (e *Env) Publish(ctx context.Context, dataSource string, segs []*segmeta.DataSegment, _ []interval.Interval) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range segs {
		if s.DataSource != dataSource {
			return fmt.Errorf("segment %s is not of datasource %s", s.ID(), dataSource)
		}
		if e.index.Get(s.ID()) != nil {
			return fmt.Errorf("segment %s already exists", s.ID())
		}
	}
	if _, err := e.index.Add(segs); err != nil {
		return err
	}
	e.published = append(e.published, segs)
	return nil
}

// WaitLoaded returns at once: published segments are readable immediately.
func (e *Env) WaitLoaded(ctx context.Context, _ []*segmeta.DataSegment) error { return ctx.Err() }
