package engine

import (
	"encoding/base64"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"strata/interval"
	"strata/storage/segment"
)

// Segment is a queryable segment: the open segment file, its Druid
// segment id, and caches shared by all queries on it (materialized
// dictionaries). A Segment is safe for concurrent use.
type Segment struct {
	ID   string
	Data *segment.Segment
	// Clip, when non-empty, restricts the rows queried to this interval
	// (the part of the segment the timeline still serves).
	Clip interval.Interval

	mu      sync.Mutex
	dicts   map[string]*dictCache
	bitmaps map[bitmapKey]*roaring.Bitmap
}

type bitmapKey struct {
	col string
	id  int
}

// maxCachedBitmaps bounds the decoded bitmaps kept per segment.
const maxCachedBitmaps = 1 << 14

// bitmap returns the rows holding value id of a string column (id -1: the
// null rows), decoded once and cached: decoding validates the bitmap,
// which costs more than most queries. Cached bitmaps are never modified.
func (s *Segment) bitmap(name string, col *segment.StringColumn, id int) (*roaring.Bitmap, error) {
	k := bitmapKey{name, id}
	s.mu.Lock()
	bm, ok := s.bitmaps[k]
	s.mu.Unlock()
	if ok {
		return bm, nil
	}
	var err error
	if id < 0 {
		bm, err = col.NullBitmap()
	} else {
		bm, err = col.Bitmap(id)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.bitmaps) < maxCachedBitmaps {
		s.bitmaps[k] = bm
	}
	s.mu.Unlock()
	return bm, nil
}

type dictCache struct {
	once sync.Once
	vals []string
	err  error
}

// NewSegment wraps an open segment file.
func NewSegment(id string, data *segment.Segment) *Segment {
	return &Segment{ID: id, Data: data, dicts: map[string]*dictCache{}, bitmaps: map[bitmapKey]*roaring.Bitmap{}}
}

// dictValues returns the dictionary of a string column as strings, index =
// id ("" for the null id). It is loaded once per segment.
func (s *Segment) dictValues(name string, col *segment.StringColumn) ([]string, error) {
	s.mu.Lock()
	dc := s.dicts[name]
	if dc == nil {
		dc = &dictCache{}
		s.dicts[name] = dc
	}
	s.mu.Unlock()
	dc.once.Do(func() {
		d, err := col.Dictionary()
		if err != nil {
			dc.err = err
			return
		}
		vals := make([]string, d.Len())
		d.ForEach(func(id int, v []byte) bool {
			vals[id] = string(v)
			return true
		})
		dc.vals = vals
	})
	return dc.vals, dc.err
}

// dataInterval is the span of the segment that is queried: its interval,
// clipped.
func (s *Segment) dataInterval() interval.Interval {
	iv := s.Data.Interval()
	out := interval.Interval{Start: iv.Start, End: iv.End}
	if !s.Clip.IsEmpty() {
		if x, ok := out.Intersect(s.Clip); ok {
			return x
		}
		return interval.Interval{Start: out.Start, End: out.Start}
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
