package segmeta

import (
	"slices"
	"strings"

	"strata/interval"
)

// Index holds the timelines of all datasources. Like Timeline it is not safe
// for concurrent use.
type Index struct {
	timelines map[string]*Timeline
	size      int
	gen       uint64 // bumped by every Add or Remove that changes the index
}

// Generation changes whenever the index does, so that what is derived from
// it (the coordinator's placement) can be cached.
func (x *Index) Generation() uint64 { return x.gen }

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{timelines: map[string]*Timeline{}} }

// Len returns the number of segments in all timelines.
func (x *Index) Len() int { return x.size }

// Timeline returns the datasource's timeline, or nil when it has no segment.
func (x *Index) Timeline(dataSource string) *Timeline { return x.timelines[dataSource] }

// DataSources returns the names of datasources with segments, sorted.
func (x *Index) DataSources() []string {
	out := make([]string, 0, len(x.timelines))
	for ds := range x.timelines {
		out = append(out, ds)
	}
	slices.Sort(out)
	return out
}

// Add adds segments of any datasources and returns how many were new. If
// any segment is invalid nothing is added.
func (x *Index) Add(segs []*DataSegment) (int, error) {
	for _, s := range segs {
		probe := Timeline{}
		if s != nil {
			probe.dataSource = s.DataSource
		}
		if err := probe.check(s); err != nil {
			return 0, err
		}
	}
	batch := slices.Clone(segs)
	slices.SortStableFunc(batch, func(a, b *DataSegment) int { return strings.Compare(a.DataSource, b.DataSource) })
	added := 0
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].DataSource == batch[i].DataSource {
			j++
		}
		ds := batch[i].DataSource
		t := x.timelines[ds]
		if t == nil {
			t = NewTimeline(ds)
			x.timelines[ds] = t
		}
		n, err := t.Add(batch[i:j])
		if err != nil { // unreachable: validated above
			return added, err
		}
		added += n
		x.size += n
		i = j
	}
	if added > 0 {
		x.gen++
	}
	return added, nil
}

// Remove removes segments by id and returns how many were present.
func (x *Index) Remove(ids []ID) int {
	batch := slices.Clone(ids)
	slices.SortFunc(batch, ID.Compare)
	removed := 0
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].DataSource == batch[i].DataSource {
			j++
		}
		if t := x.timelines[batch[i].DataSource]; t != nil {
			removed += t.Remove(batch[i:j])
			if t.Len() == 0 {
				delete(x.timelines, t.dataSource)
			}
		}
		i = j
	}
	x.size -= removed
	if removed > 0 {
		x.gen++
	}
	return removed
}

// Get returns the segment with the given id, or nil.
func (x *Index) Get(id ID) *DataSegment {
	if t := x.timelines[id.DataSource]; t != nil {
		return t.Get(id)
	}
	return nil
}

// Lookup returns the visible pieces of a datasource over iv.
func (x *Index) Lookup(dataSource string, iv interval.Interval) []Holder {
	if t := x.timelines[dataSource]; t != nil {
		return t.Lookup(iv)
	}
	return nil
}

// IsOvershadowed reports whether seg is overshadowed by the segments of its
// datasource.
func (x *Index) IsOvershadowed(seg *DataSegment) bool {
	if t := x.timelines[seg.DataSource]; t != nil {
		return t.IsOvershadowed(seg)
	}
	return false
}

// Segments calls fn for every segment in id order (datasource first) until
// fn returns false.
func (x *Index) Segments(fn func(*DataSegment) bool) {
	for _, ds := range x.DataSources() {
		stop := false
		x.timelines[ds].Segments(func(s *DataSegment) bool {
			stop = !fn(s)
			return !stop
		})
		if stop {
			return
		}
	}
}
